// The replay of a session file, run as a user runs it (`npm run replay`), and the check that its
// figures are the live extension's: the same requests and outputs in every layer, the same tokens
// read and written between the layers that ObservationPack and Online Context Compact separate,
// their same step accounts, the same provider reports and archive. Shared by the tests that replay
// a fresh recording and the demo's session.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";

import { repoRoot } from "./support.mjs";

/** `npm run replay -- <args>` in the checkout, with its exit code and output. */
export function npmReplay(...args) {
	const npm = process.platform === "win32" ? "npm.cmd" : "npm";
	return spawnSync(npm, ["run", "--silent", "replay", "--", ...args], { cwd: repoRoot, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
}

// Each mechanism's index in the persisted steps, and the two layers its row is the difference of.
const MECHANISMS = { observationPack: [1, 1, 2], onlineContextCompact: [3, 3, 4] };

/** Asserts that a replayed branch (`--json`'s `sessions[i].branches[j]`) has the live totals' figures. */
export function assertReplayedAsLive(branch, what) {
	const live = branch.recorded;
	assert.ok(live, `${what}, branch ${branch.leaf}: the live extension's totals`);
	const again = branch.solPi;
	for (let layer = 0; layer < 5; layer++) {
		assert.equal(again.layers[layer].requests, live.layers[layer].requests, `${what}: layer ${layer} requests`);
		assert.equal(again.layers[layer].output, live.layers[layer].output, `${what}: layer ${layer} output`);
	}
	for (const [name, [step, before, after]] of Object.entries(MECHANISMS)) {
		const delta = (savings, field) => savings.layers[before][field] - savings.layers[after][field];
		for (const field of ["cacheRead", "cacheWrite", "requests"]) assert.equal(delta(again, field), delta(live, field), `${what}: ${name}'s ${field}`);
		assert.deepEqual(again.steps[step], live.steps[step], `${what}: ${name}'s step accounts`);
	}
	assert.deepEqual(again.reported, live.reported, `${what}: the provider's reports`);
	assert.deepEqual(again.archive, live.archive, `${what}: ObservationPack's archive`);
}

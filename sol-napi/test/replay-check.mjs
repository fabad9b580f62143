// The replay of a session file, run as a user runs it (`npm run replay`), and the check that its
// figures are the live extension's: the same requests and outputs as sent, ObservationPack's and
// Online Context Compact's same step accounts (but for the summary's tokens, which the live book
// takes from Pi's report), the same provider reports and archive. Shared by the tests that replay
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
	// The requests as sent. The live book's plain side and the layers below each mechanism leave out
	// SoL-Pi's own turns, calls and prompt lines, and price a compaction summary from Pi's reported
	// usage (issue 26, items 1 and 2); replay does not book these yet, so the layers below 4 and the
	// rows' differences are compared again once it does.
	assert.equal(again.layers[4].requests, live.layers[4].requests, `${what}: layer 4 requests`);
	assert.equal(again.layers[4].output, live.layers[4].output, `${what}: layer 4 output`);
	for (const [name, [step]] of Object.entries(MECHANISMS)) {
		const { modelInputTokens: _in, modelOutputTokens: _out, ...replayed } = again.steps[step];
		const { modelInputTokens: _liveIn, modelOutputTokens: _liveOut, ...booked } = live.steps[step];
		assert.deepEqual(replayed, booked, `${what}: ${name}'s step accounts`);
	}
	assert.deepEqual(again.reported, live.reported, `${what}: the provider's reports`);
	assert.deepEqual(again.archive, live.archive, `${what}: ObservationPack's archive`);
}

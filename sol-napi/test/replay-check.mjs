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

/**
 * Asserts that a replayed branch (`--json --estimated`'s `sessions[i].branches[j]`, priced from Pi's
 * estimate as the live book is) has the live totals' figures. `systemPromptRecorded` is the
 * session's: where the file holds no system prompt (Pi 0.84.2), the live book's requests have one
 * that replay cannot know, so only the requests and outputs of the layers are compared.
 */
export function assertReplayedAsLive(branch, what, systemPromptRecorded) {
	assert.equal(typeof systemPromptRecorded, "boolean", "the session's systemPromptRecorded");
	const live = branch.recorded;
	assert.ok(live, `${what}, branch ${branch.leaf}: the live extension's totals`);
	const again = branch.solPi;
	// Every layer, plain Pi's included: both books leave SoL-Pi's own turns, calls and system prompt
	// lines out of the layers below their mechanism by the same Rust rules (`own_changes`,
	// `OwnPrompt::system_shares`), price a reducer log as Pi's bash tool sent it, and count the turn a
	// fused command saved with the edit's result as it was before the command's output.
	for (const layer of [0, 1, 2, 3, 4]) {
		assert.equal(again.layers[layer].requests, live.layers[layer].requests, `${what}: layer ${layer} requests`);
		assert.equal(again.layers[layer].output, live.layers[layer].output, `${what}: layer ${layer} output`);
		const input = (tokens) => tokens.cacheRead + tokens.cacheWrite;
		const [replayed, booked] = [input(again.layers[layer]), input(live.layers[layer])];
		if (!systemPromptRecorded) continue;
		// Pi's estimate of a receipt's log is rebuilt from its size: up to a token apart in each
		// request that carries one.
		const slack = Math.max(64, booked / 1000);
		assert.ok(Math.abs(replayed - booked) <= slack, `${what}: layer ${layer} input, replayed ${replayed} against live ${booked}`);
	}
	for (const [name, [step]] of Object.entries(MECHANISMS)) {
		const { modelInputTokens: _in, modelOutputTokens: _out, ...replayed } = again.steps[step];
		const { modelInputTokens: _liveIn, modelOutputTokens: _liveOut, ...booked } = live.steps[step];
		assert.deepEqual(replayed, booked, `${what}: ${name}'s step accounts`);
	}
	assert.deepEqual(again.reported, live.reported, `${what}: the provider's reports`);
	assert.deepEqual(again.archive, live.archive, `${what}: ObservationPack's archive`);
}

// The replay against the live extension, on the Pi under test: a fresh recording of a scenario
// with SoL-Pi (a real Pi AgentSession, the faux provider's scripted moves, Pi's own tools on a
// real project; scripts/record-session.mjs) holds the totals the live extension accounted after
// each turn, and `npm run replay -- --json` of that file gives the same ObservationPack and Online
// Context Compact figures (replay-check.mjs says which), without modifying the file.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import { assertReplayedAsLive, npmReplay } from "./replay-check.mjs";
import { piVersion } from "./support.mjs";
import { record } from "../../scripts/record/recorder.mjs";

for (const scenario of ["debugging", "plans"]) {
	test(`Pi ${piVersion}: the replay of a fresh "${scenario}" recording with SoL-Pi gives the live ObservationPack and OCC figures`, async (t) => {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-replay-live-"));
		t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
		const out = path.join(dir, `${scenario}.jsonl`);
		await record({ scenario, out, withSolPi: true });
		const before = fs.readFileSync(out);

		const result = npmReplay("--json", "--estimated", "--all-branches", out);
		assert.equal(result.status, 0, result.stderr);
		assert.deepEqual(fs.readFileSync(out), before, "the replay never modifies its input");
		const [session] = JSON.parse(result.stdout).sessions;
		const branches = session.branches;
		assert.ok(branches.length >= 1);
		for (const branch of branches) {
			assertReplayedAsLive(branch, `${scenario} on Pi ${piVersion}`, session.systemPromptRecorded);
			// The scenario exercises the mechanism under comparison.
			if (scenario === "plans") assert.ok(branch.solPi.steps[3].modelCalls > 0, "OCC compacted");
			if (scenario === "debugging") assert.ok(branch.solPi.steps[1].tokensRemoved > 0, "ObservationPack replaced outputs");
		}
	});
}

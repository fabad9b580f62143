// Action Fusion from Pi 1.x codemode scripts, in codemode.mode "on" and "only":
// scripts call tools.write / tools.edit with then_run; success resolves to the
// combined text, a failed or skipped follow-up rejects with that text.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { assertReplayedAsLive, npmReplay } from "./replay-check.mjs";
import { ai, makeWorkspace, pi, piVersion, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

const hasCodemode = typeof pi.createCodemodeExtension === "function";

const script = [
	'const ok = await tools.write({ path: "cm.txt", content: "from script\\n", then_run: { command: "cat cm.txt" } });',
	'console.log("OK>" + ok);',
	'try { await tools.write({ path: "cm2.txt", content: "x", then_run: { command: "echo boom; exit 5" } }); console.log("FAILED>resolved"); }',
	'catch (e) { console.log("FAILED>" + e.message); }',
	'try { await tools.edit({ path: "missing.txt", edits: [{ oldText: "a", newText: "b" }], then_run: { command: "touch never-ran" } }); console.log("SKIPPED>resolved"); }',
	'catch (e) { console.log("SKIPPED>" + e.message); }',
].join("\n");

for (const mode of ["on", "only"]) {
	test(`Pi ${piVersion}: codemode "${mode}": scripts call fused edit/write`, { skip: hasCodemode ? false : "Pi 0.84.2 has no codemode" }, async (t) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true });
		let declared = [];
		const run = await startSession({
			...ws,
			mode: "tui",
			settings: { defaultTools: ["+codemode"], codemode: { mode } },
			extensionFactories: [pi.createCodemodeExtension()],
			replies: [
				(context) => {
					declared = (context.messages ?? []).filter((m) => m.role === "system").flatMap((m) => (m.toolsAdded ?? []).map((tool) => tool.name));
					return ai.fauxAssistantMessage([ai.fauxToolCall("codemode", { code: script }, { id: "cm1" })], { stopReason: "toolUse" });
				},
				"done",
			],
		});
		t.after(() => run.close());
		await run.session.prompt("use a script");
		assert.deepEqual(run.errors, []);
		assert.ok(declared.includes("codemode"), JSON.stringify(declared));
		assert.equal(declared.includes("write"), mode === "on", `write declared to the model only in "on": ${JSON.stringify(declared)}`);

		const text = resultText(toolResults(run.session).get("cm1"));
		assert.match(text, /^Script completed/);
		assert.match(text, /OK>Successfully wrote[^\n]*\n\[then_run:succeeded\]\nfrom script/);
		assert.match(text, /FAILED>[\s\S]*\[then_run:failed\][\s\S]*boom[\s\S]*Command exited with code 5/);
		assert.match(text, /SKIPPED>[\s\S]*\[then_run:skipped\]/);
		assert.equal(fs.readFileSync(path.join(ws.cwd, "cm2.txt"), "utf8"), "x", "the failed command kept the file change");
		assert.equal(fs.existsSync(path.join(ws.cwd, "never-ran")), false);
		// Script calls are shown inside the script's own row: no Action Fusion savings notice.
		assert.deepEqual(run.notices().filter((n) => n.message.includes("Money saved")), []);
	});
}

// A fused call a script made avoids no model turn (the script could have run the command right
// after the mutation), and its result, which goes to the script, is never taken for a message of
// the same tool-call id: the provider chose that id, and here it chooses the script call's id again
// for a later bash call. The live totals are the replay's, which knows fused results by content.
test(`Pi ${piVersion}: a script's fused call avoids no turn and a reused tool-call id is not taken for it`, { skip: hasCodemode ? false : "Pi 0.84.2 has no codemode" }, async (t) => {
	const ws = makeWorkspace(t);
	// ObservationPack too: the replay's figures are those of both (it archives the long output).
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true, observationPack: true });
	const sessionDir = path.join(ws.root, "sessions");
	const sessionManager = pi.SessionManager.create(ws.cwd, sessionDir);
	const inScript = 'await tools.write({ path: "s.txt", content: "s\\n", then_run: { command: "cat s.txt" } }); console.log("ok");';
	const run = await startSession({
		...ws,
		sessionManager,
		settings: { defaultTools: ["+codemode"], codemode: { mode: "on" } },
		extensionFactories: [pi.createCodemodeExtension()],
		replies: [
			ai.fauxAssistantMessage([ai.fauxToolCall("codemode", { code: inScript }, { id: "cm1" })], { stopReason: "toolUse" }),
			// The script's write was `cm1/1`; the provider uses that id again, for a long bash output.
			toolCalls(["write", { path: "w.txt", content: "w\n", then_run: { command: "cat w.txt" } }, "w2"], ["bash", { command: 'seq -f "line %g of a long build log" 1 400' }, "cm1/1"]),
			"done",
		],
	});
	t.after(() => run.close());
	await run.session.prompt("write twice");
	assert.deepEqual(run.errors, []);
	assert.match(resultText(toolResults(run.session).get("cm1")), /^Script completed/);
	const totals = sessionManager
		.getBranch()
		.filter((entry) => entry.type === "custom" && entry.customType === "sol-pi-savings-totals")
		.at(-1)?.data;
	assert.equal(totals?.steps[0].requestsAvoided, 1, `only the model's own fused call: ${JSON.stringify(totals?.steps)}`);

	const result = npmReplay("--json", "--estimated", sessionManager.getSessionFile());
	assert.equal(result.status, 0, result.stderr);
	const [session] = JSON.parse(result.stdout).sessions;
	for (const branch of session.branches) assertReplayedAsLive(branch, `codemode on Pi ${piVersion}`, session.systemPromptRecorded);
});

// Action Fusion from Pi 1.x codemode scripts, in codemode.mode "on" and "only":
// scripts call tools.write / tools.edit with then_run; success resolves to the
// combined text, a failed or skipped follow-up rejects with that text.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { ai, makeWorkspace, pi, piVersion, resultText, startSession, toolResults, writeJson } from "./support.mjs";

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

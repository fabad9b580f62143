// Online Context Compact with Pi 1.x codemode, in codemode.mode "on" and "only":
// update_plan stays declared to the model, is not callable from scripts, and a plan
// boundary still compacts and continues.
import assert from "node:assert/strict";
import { test } from "node:test";

import { makeWorkspace, pi, piVersion } from "./support.mjs";
import { compactions, contextText, continuations, enableOcc, entries, lastState, plan, startOccSession, textOf, toolCall } from "./occ-support.mjs";

const hasCodemode = typeof pi.createCodemodeExtension === "function";
const LONG_PROMPT = `Please carry out the task.\n${"Some background context for the task. ".repeat(320)}`;
const script = [
	'try { await tools.update_plan({ steps: [{ id: "s", goal: "From a script", status: "completed" }] }); console.log("CALL>resolved"); }',
	'catch (e) { console.log("CALL>rejected " + e.message); }',
].join("\n");

for (const mode of ["on", "only"]) {
	test(`Pi ${piVersion}: codemode "${mode}": update_plan stays declared, is not callable from scripts, and still compacts`, { skip: hasCodemode ? false : "Pi 0.84.2 has no codemode" }, async (t) => {
		const ws = makeWorkspace(t);
		enableOcc(ws, 0);
		let declared = [];
		const run = await startOccSession({
			...ws,
			settings: { defaultTools: ["+codemode"], codemode: { mode }, compaction: { enabled: false, keepRecentTokens: 150 } },
			extensionFactories: [pi.createCodemodeExtension()],
			script: [
				(context) => {
					declared = (context.messages ?? []).filter((m) => m.role === "system").flatMap((m) => (m.toolsAdded ?? []).map((tool) => tool.name));
					return toolCall("codemode", { code: script }, "cm1");
				},
				toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"]), "p1"),
				toolCall("update_plan", plan(["a", "completed"], ["b", "in_progress"]), "p2"),
				(context) => (contextText(context).includes("[Online Context Compact] The conversation was compacted") ? "done after compaction" : "no continuation"),
			],
		});
		t.after(() => run.close());
		await run.session.prompt(LONG_PROMPT);
		assert.deepEqual(run.errors, []);
		assert.ok(declared.includes("codemode"), JSON.stringify(declared));
		assert.ok(declared.includes("update_plan"), `update_plan declared to the model in "${mode}": ${JSON.stringify(declared)}`);

		const result = entries(run).find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolCallId === "cm1");
		const text = textOf(result.message);
		assert.match(text, /^Script completed/, text);
		assert.match(text, /CALL>rejected [^\n]*update_plan does not exist/, text);
		assert.doesNotMatch(text, /CALL>resolved/, text);
		// The script's attempt changed nothing: the plan comes from the direct calls only.
		assert.deepEqual(lastState(run).plan.map((s) => s.id), ["a", "b"]);

		assert.equal(run.decisions.length, 1);
		assert.equal(run.decisions[0].abort, true);
		assert.equal(compactions(run).length, 1);
		assert.equal(continuations(run).length, 1);
		assert.equal(run.session.getLastAssistantText(), "done after compaction");
	});
}

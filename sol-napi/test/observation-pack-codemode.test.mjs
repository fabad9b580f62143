// ObservationPack with Pi 1.x codemode: a large `codemode` result is packed like any
// tool result (tool: codemode), calls made inside a script never are, and scripts
// can call tools.obs_recall.
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";

import { ai, makeWorkspace, pi, piVersion, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

const hasCodemode = typeof pi.createCodemodeExtension === "function";
const textOfMessage = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("\n"));
const placeholderId = (text) => /^id: (obs_[a-f0-9]{24})$/m.exec(text)?.[1];

const bigScript = [
	'// @options: {"max_output_tokens": 40000}',
	'let out = "";',
	'for (let i = 1; i <= 400; i++) out += "script line " + i + ": generated output for the packing test\\n";',
	"text(out);",
].join("\n");

for (const mode of ["on", "only"]) {
	test(`Pi ${piVersion}: codemode "${mode}": a large script result is packed and scripts can recall it`, { skip: hasCodemode ? false : "Pi 0.84.2 has no codemode" }, async (t) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
		const sent = [];
		const record = (reply) => (context) => {
			const r = context.messages.find((m) => m.role === "toolResult" && m.toolCallId === "cm1");
			sent.push(r ? textOfMessage(r) : null);
			return typeof reply === "function" ? reply(context) : reply;
		};
		const recallFromScript = (context) => {
			const id = placeholderId(textOfMessage(context.messages.find((m) => m.toolCallId === "cm1")));
			const code = `const page = await tools.obs_recall({ id: ${JSON.stringify(id)}, offset: 0 }); text(page.slice(0, 400));`;
			return toolCalls(["codemode", { code }, "cm2"]);
		};
		const run = await startSession({
			...ws,
			settings: { defaultTools: ["+codemode"], codemode: { mode } },
			extensionFactories: [pi.createCodemodeExtension()],
			replies: [
				record(toolCalls(["codemode", { code: bigScript }, "cm1"])),
				record(toolCalls(["codemode", { code: 'text("small");' }, "s1"])),
				record(toolCalls(["codemode", { code: 'text("small");' }, "s2"])),
				record(recallFromScript),
				record(ai.fauxAssistantMessage("done")),
			],
		});
		t.after(() => run.close());
		await run.session.prompt("go");
		assert.deepEqual(run.errors, []);
		const original = resultText(toolResults(run.session).get("cm1"));
		assert.ok(Buffer.byteLength(original) > 10_240, `codemode output is ${Buffer.byteLength(original)} bytes`);
		assert.equal(sent[1], original);
		assert.equal(sent[2], original);
		assert.match(sent[3], /^tool: codemode$/m);
		assert.equal(sent[4], sent[3]);
		const recall = resultText(toolResults(run.session).get("cm2"));
		assert.match(recall, /\[obs_recall id=obs_[a-f0-9]{24} offset=0 next_offset=\d+ eof=false\]/);
		assert.match(recall, /script line 1: generated output/);
	});
}

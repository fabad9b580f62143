// Several fused edits of one file in one assistant message run in the order the
// model issued them, as Pi's own edit does: Pi starts them in parallel and its
// mutation queue takes each call's place in line when the call starts. Fused and
// plain calls share the queue, and a file URL, an @ path, an absolute path and a
// path through a linked folder all name the same file.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

import { makeWorkspace, piVersion, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

const variants = {
	"with then_run": () => true,
	"without then_run": () => false,
	"mixed fused and plain": (i) => i % 2 === 0,
};

for (const [variant, fused] of Object.entries(variants)) {
	test(`Pi ${piVersion}: ten dependent edits of one file in one message run in order (${variant})`, async (t) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true });
		const file = path.join(ws.cwd, "order.txt");
		fs.writeFileSync(file, "<v0>\n");
		fs.symlinkSync(ws.cwd, path.join(ws.root, "linked"));
		const spellings = ["order.txt", "@order.txt", pathToFileURL(file).href, file, path.join(ws.root, "linked", "order.txt")];
		const calls = Array.from({ length: 10 }, (_, i) => {
			const args = { path: spellings[i % spellings.length], edits: [{ oldText: `<v${i}>`, newText: `<v${i + 1}>` }] };
			if (fused(i)) args.then_run = { command: "cat order.txt" };
			return ["edit", args, `e${i}`];
		});
		const run = await startSession({ ...ws, replies: [toolCalls(...calls), "done"] });
		t.after(() => run.close());
		await run.session.prompt("go");
		const results = toolResults(run.session);
		const failures = calls
			.map(([, , id]) => [id, results.get(id)])
			.filter(([, result]) => result?.isError !== false)
			.map(([id, result]) => `${id}: ${resultText(result).slice(0, 200)}`);
		assert.deepEqual(failures, [], "every edit succeeds");
		for (let i = 0; i < 10; i++) {
			// The command sees the file exactly as its own edit left it: it held the file's slot.
			if (fused(i)) assert.match(resultText(results.get(`e${i}`)), new RegExp(`\\[then_run:succeeded\\]\\n<v${i + 1}>\\n?$`), `e${i}`);
		}
		assert.equal(fs.readFileSync(file, "utf8"), "<v10>\n");
	});
}

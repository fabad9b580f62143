// Several fused edits of one file in one assistant message run in the order the
// model issued them, as Pi's own edit does: Pi starts them in parallel and its
// mutation queue takes each call's place in line when the call starts. Fused and
// plain calls share the queue, and a file URL, an @ path, an absolute path, a path
// through a linked folder and one through a chain of links all name the same file.
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

// Eight assistant messages of ten edits each: a queue that ordered calls by chance would
// have to win every one of them.
const rounds = 8;

for (const [variant, fused] of Object.entries(variants)) {
	test(`Pi ${piVersion}: ten dependent edits of one file in one message run in order (${variant})`, async (t) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true });
		const file = path.join(ws.cwd, "order.txt");
		fs.writeFileSync(file, "<v0>\n");
		fs.symlinkSync(ws.cwd, path.join(ws.root, "linked"));
		// A path through 30 links ("here" -> ".") takes longer to canonicalize than a plain one:
		// a queue that takes its place only after an asynchronous lookup would let the next call in first.
		fs.symlinkSync(".", path.join(ws.cwd, "here"));
		const throughLinks = `${"here/".repeat(30)}order.txt`;
		const spellings = ["order.txt", "@order.txt", pathToFileURL(file).href, file, path.join(ws.root, "linked", "order.txt")];
		const messages = Array.from({ length: rounds }, (_, round) =>
			Array.from({ length: 10 }, (_, i) => {
				const v = round * 10 + i;
				const args = { path: i % 2 === 0 ? throughLinks : spellings[(i - 1) / 2], edits: [{ oldText: `<v${v}>`, newText: `<v${v + 1}>` }] };
				if (fused(i)) args.then_run = { command: "cat order.txt" };
				return ["edit", args, `r${round}e${i}`, v];
			}),
		);
		const run = await startSession({ ...ws, replies: [...messages.map((calls) => toolCalls(...calls)), "done"] });
		t.after(() => run.close());
		await run.session.prompt("go");
		const results = toolResults(run.session);
		const calls = messages.flat();
		const failures = calls
			.map(([, , id]) => [id, results.get(id)])
			.filter(([, result]) => result?.isError !== false)
			.map(([id, result]) => `${id}: ${resultText(result).slice(0, 200)}`);
		assert.deepEqual(failures, [], "every edit succeeds");
		for (const [, args, id, v] of calls) {
			// The command sees the file exactly as its own edit left it: it held the file's slot.
			if (args.then_run) assert.match(resultText(results.get(id)), new RegExp(`\\[then_run:succeeded\\]\\n<v${v + 1}>\\n?$`), id);
		}
		assert.equal(fs.readFileSync(file, "utf8"), `<v${rounds * 10}>\n`);
		assert.equal(run.session.getLastAssistantText(), "done");
	});
}

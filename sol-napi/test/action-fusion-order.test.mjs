// Several fused edits of one file in one assistant message run in the order the
// model issued them, as Pi's own edit does: Pi starts them in parallel and its
// mutation queue takes each call's place in line when the call starts. Fused and
// plain calls share the queue, and a file URL, an @ path, an absolute path, a path
// through a linked folder and one through a chain of links all name the same file.
//
// The order must not depend on which file-system lookup finishes first: during each
// test, asynchronous realpath lookups started together finish in reverse order.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import * as path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

import { makeWorkspace, piVersion, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

const variants = {
	"with then_run": () => true,
	"without then_run": () => false,
	"mixed fused and plain": (i) => i % 2 === 0,
};

const rounds = 3;
const fsPromises = createRequire(import.meta.url)("node:fs/promises");

/**
 * Until the test ends, `fs.promises.realpath` calls started in the same turn of the event
 * loop run one after the other, last started first. Pi's own mutation queue looks up one
 * path at a time, so it is unaffected; a queue that waited for its lookup before taking
 * its place would let the last call of a message go first.
 */
function reverseRealpathOrder(t) {
	const original = fsPromises.realpath;
	let batch = [];
	fsPromises.realpath = (...args) =>
		new Promise((resolve, reject) => {
			batch.push(() => original(...args).then(resolve, reject));
			if (batch.length > 1) return;
			setImmediate(() => {
				const lookups = batch.reverse();
				batch = [];
				lookups.reduce((previous, lookup) => previous.then(lookup), Promise.resolve());
			});
		});
	syncBuiltinESMExports();
	t.after(() => {
		fsPromises.realpath = original;
		syncBuiltinESMExports();
	});
}

for (const [variant, fused] of Object.entries(variants)) {
	test(`Pi ${piVersion}: ten dependent edits of one file in one message run in order (${variant})`, async (t) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true });
		reverseRealpathOrder(t);
		const file = path.join(ws.cwd, "order.txt");
		fs.writeFileSync(file, "<v0>\n");
		fs.symlinkSync(ws.cwd, path.join(ws.root, "linked"));
		// Every other call goes through 30 links ("here" -> ".").
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

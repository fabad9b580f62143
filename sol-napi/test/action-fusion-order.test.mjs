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

// A file's name, a hard link to it and a symlink to it are one file: edits through any of
// them share one line, so appending edits neither overtake nor overwrite each other.
for (const [variant, fused] of Object.entries(variants)) {
	test(`Pi ${piVersion}: twenty appending edits of one file through its name, a hard link and a symlink land in order (${variant})`, async (t) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true });
		const file = path.join(ws.cwd, "log.txt");
		fs.writeFileSync(file, "<end>\n");
		fs.linkSync(file, path.join(ws.cwd, "hard.txt"));
		fs.symlinkSync("log.txt", path.join(ws.cwd, "soft.txt"));
		const names = ["log.txt", "hard.txt", "soft.txt"];
		const calls = Array.from({ length: 20 }, (_, i) => {
			const args = { path: names[i % 3], edits: [{ oldText: "<end>", newText: `line ${i}\n<end>` }] };
			if (fused(i)) args.then_run = { command: "cat log.txt" };
			return ["edit", args, `e${i}`, i];
		});
		const run = await startSession({ ...ws, replies: [toolCalls(...calls), "done"] });
		t.after(() => run.close());
		await run.session.prompt("go");
		const results = toolResults(run.session);
		const lines = (n) => Array.from({ length: n }, (_, i) => `line ${i}\n`).join("");
		for (const [, args, id, i] of calls) {
			const result = results.get(id);
			assert.equal(result?.isError, false, `${id}: ${resultText(result).slice(0, 200)}`);
			// The command sees the file exactly as its own edit left it.
			if (args.then_run) assert.ok(resultText(result).replace(/\n$/, "").endsWith(`[then_run:succeeded]\n${lines(i + 1)}<end>`), `${id}: ${resultText(result).slice(-400)}`);
		}
		assert.equal(fs.readFileSync(file, "utf8"), `${lines(20)}<end>\n`, "every edit landed, in the model's order");
		assert.equal(fs.readFileSync(path.join(ws.cwd, "hard.txt"), "utf8"), `${lines(20)}<end>\n`, "still one file");
		assert.equal(run.session.getLastAssistantText(), "done");
	});
}

test(`Pi ${piVersion}: a file created by a write in the same message is edited in order through a symlink made before it existed`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true });
	const file = path.join(ws.cwd, "new.txt");
	// A dangling link: its target is created by the first call of the message.
	fs.symlinkSync("new.txt", path.join(ws.cwd, "soon.txt"));
	const edits = Array.from({ length: 9 }, (_, i) => {
		const args = { path: i % 2 === 0 ? "soon.txt" : "new.txt", edits: [{ oldText: "<end>", newText: `line ${i}\n<end>` }] };
		if (i % 3 === 0) args.then_run = { command: "cat new.txt" };
		return ["edit", args, `e${i}`];
	});
	const run = await startSession({ ...ws, replies: [toolCalls(["write", { path: "new.txt", content: "<end>\n" }, "w"], ...edits), "done"] });
	t.after(() => run.close());
	await run.session.prompt("go");
	const results = toolResults(run.session);
	for (const [, , id] of [["write", {}, "w"], ...edits]) assert.equal(results.get(id)?.isError, false, `${id}: ${resultText(results.get(id)).slice(0, 200)}`);
	assert.equal(fs.readFileSync(file, "utf8"), `${Array.from({ length: 9 }, (_, i) => `line ${i}\n`).join("")}<end>\n`);
	assert.ok(fs.lstatSync(path.join(ws.cwd, "soon.txt")).isSymbolicLink(), "the link is still a link");
});

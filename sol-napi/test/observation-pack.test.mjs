// ObservationPack through a real Pi AgentSession (faux provider) on the Pi install
// under test: what the provider receives request by request, exact recall, storage
// on disk, restarts, forks, tree navigation, failures that must lose nothing.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import { ai, makeWorkspace, pi, piMajor, piVersion, repoRoot, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

// 600 numbered lines of about 64 bytes: about 38 KB, under Pi's 50 KB bash truncation.
const BIG = `seq -f "build step %g: compiling a module with a fairly long line of output" 1 600`;
const enable = (ws) => writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
const textOfMessage = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("\n"));

/** Wraps scripted replies so each request records the text the provider got for one tool result. */
function recorder(toolCallId) {
	const sent = [];
	const step = (reply) => (context) => {
		const result = context.messages.find((m) => m.role === "toolResult" && m.toolCallId === toolCallId);
		sent.push(result ? textOfMessage(result) : null);
		return typeof reply === "function" ? reply(context) : typeof reply === "string" ? ai.fauxAssistantMessage(reply) : reply;
	};
	return { sent, step };
}

/** A large bash result followed by `later` more requests (each a cheap tool call), then "done". */
function packScript(step, later, id = "big", command = BIG) {
	const replies = [step(toolCalls(["bash", { command }, id]))];
	for (let i = 0; i < later; i++) replies.push(step(toolCalls(["bash", { command: "true" }, `t${i}`])));
	replies.push(step("done"));
	return replies;
}

const placeholderId = (text) => /^id: (obs_[a-f0-9]{24})$/m.exec(text)?.[1];

test(`Pi ${piVersion}: a large result is sent in full twice, then replaced by one byte-identical placeholder`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { sent, step } = recorder("big");
	const run = await startSession({ ...ws, replies: packScript(step, 7) });
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.deepEqual(run.errors, []);
	const original = resultText(toolResults(run.session).get("big"));
	assert.ok(Buffer.byteLength(original) > 30_000, `original is ${Buffer.byteLength(original)} bytes`);
	assert.equal(sent[0], null, "the first request has no result yet");
	assert.equal(sent[1], original, "first send in full");
	assert.equal(sent[2], original, "second send in full");
	const placeholder = sent[3];
	assert.match(placeholder, /^\[large tool result replaced after its first 2 provider requests\]\n/);
	assert.match(placeholder, /^tool: bash$/m);
	assert.match(placeholder, new RegExp(`^original_bytes: ${Buffer.byteLength(original)}$`, "m"));
	assert.ok(placeholderId(placeholder));
	assert.ok(Buffer.byteLength(placeholder) < 3_000);
	for (const later of sent.slice(4)) assert.equal(later, placeholder, "stable on every later request");
	assert.equal(sent.length, 9);
	assert.equal(resultText(toolResults(run.session).get("big")), original, "stored history is never changed");
});

function recallSteps(id, pages, maxPages = 12, extra = {}) {
	let n = 0;
	const next = (context) => {
		const last = [...context.messages].reverse().find((m) => m.role === "toolResult");
		let offset = 0;
		if (last?.toolName === "obs_recall") {
			const text = textOfMessage(last);
			const header = /^\[obs_recall id=\S+ offset=(\d+) next_offset=(\d+) eof=(true|false)\]\n\[chunk_bytes=\d+ chunk_lines=\d+; use next_offset to continue\]\n/.exec(text);
			if (!header) return ai.fauxAssistantMessage(`unexpected recall text: ${text.slice(0, 200)}`);
			pages.push(text.slice(header[0].length));
			if (header[3] === "true") return ai.fauxAssistantMessage("recalled");
			offset = Number(header[2]);
		}
		return toolCalls(["obs_recall", { id: typeof id === "function" ? id(context) : id, offset, ...extra }, `r${n++}`]);
	};
	return Array.from({ length: maxPages + 1 }, () => next);
}

test(`Pi ${piVersion}: obs_recall pages concatenate to the original bytes exactly`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { sent, step } = recorder("big");
	const pages = [];
	const findId = (context) => {
		const r = context.messages.find((m) => m.role === "toolResult" && m.toolCallId === "big");
		return placeholderId(textOfMessage(r));
	};
	const run = await startSession({ ...ws, replies: [...packScript(step, 3).slice(0, -1), ...recallSteps(findId, pages)] });
	t.after(() => run.close());
	await run.session.prompt("go");
	const original = resultText(toolResults(run.session).get("big"));
	assert.ok(pages.length >= 3, `${pages.length} pages`);
	assert.equal(pages.join(""), original);
	for (const result of [...toolResults(run.session).values()].filter((r) => r.toolName === "obs_recall")) {
		assert.equal(result.isError, false);
		assert.ok(Buffer.byteLength(resultText(result)) <= 16_384);
		assert.ok(resultText(result).split("\n").length <= 400);
	}
	assert.equal(run.session.getLastAssistantText(), "recalled");
	assert.ok(sent.length >= 4);
});

test(`Pi ${piVersion}: obs_recall with a literal query returns matches with line numbers`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { step } = recorder("big");
	const search = (context) => {
		const r = context.messages.find((m) => m.role === "toolResult" && m.toolCallId === "big");
		return toolCalls(["obs_recall", { id: placeholderId(textOfMessage(r)), query: "build step 42:" }, "q1"]);
	};
	const run = await startSession({ ...ws, replies: [...packScript(step, 3).slice(0, -1), search, "done"] });
	t.after(() => run.close());
	await run.session.prompt("go");
	const result = toolResults(run.session).get("q1");
	assert.equal(result.isError, false, resultText(result));
	const text = resultText(result);
	assert.match(text, /query=/);
	assert.match(text, /line 42\b/);
	assert.match(text, /build step 42: compiling/);
	assert.doesNotMatch(text, /build step 420:/, "literal match of the whole query only");
	assert.equal(result.details.matches.length, 1);
	assert.equal(result.details.eof, true);
});

/** Runs the pack flow in a persistent session under `sessionDir`; returns the id, the original and the session file. */
async function packInPersistentSession(t, ws, sessionDir) {
	const { sent, step } = recorder("big");
	const sessionManager = pi.SessionManager.create(ws.cwd, sessionDir);
	const run = await startSession({ ...ws, sessionManager, replies: packScript(step, 3) });
	await run.session.prompt("go");
	const original = resultText(toolResults(run.session).get("big"));
	const file = sessionManager.getSessionFile();
	const sessionId = sessionManager.getSessionId();
	run.close();
	return { id: placeholderId(sent[3]), original, file, sessionId, sent };
}

async function recallAll(t, ws, sessionManager, id) {
	const pages = [];
	const run = await startSession({ ...ws, sessionManager, replies: recallSteps(id, pages) });
	t.after(() => run.close());
	await run.session.prompt("recall it");
	return { run, pages };
}

test(`Pi ${piVersion}: a restarted extension recalls from disk; objects and ledger live under the session directory`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const sessionDir = path.join(ws.root, "sessions");
	const packed = await packInPersistentSession(t, ws, sessionDir);
	assert.ok(packed.id);
	const storage = path.join(fs.realpathSync(sessionDir), "sol-pi", packed.sessionId, "observation-pack");
	const object = path.join(storage, "objects", `${packed.id}.txt`);
	assert.equal(fs.readFileSync(object, "utf8"), packed.original);
	assert.equal(fs.statSync(object).mode & 0o777, 0o600);
	assert.equal(fs.statSync(path.join(storage, "objects")).mode & 0o777, 0o700);
	const ledger = fs.readFileSync(path.join(storage, "ledger.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
	assert.deepEqual(ledger.filter((r) => r.id === packed.id).map((r) => r.event), ["full", "full", "placeholder"]);

	const { run, pages } = await recallAll(t, ws, pi.SessionManager.open(packed.file, sessionDir), packed.id);
	assert.equal(pages.join(""), packed.original);
	assert.equal(run.session.getLastAssistantText(), "recalled");
	const after = fs.readFileSync(path.join(storage, "ledger.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
	assert.equal(after.filter((r) => r.event === "recall").length, pages.length);
});

test(`Pi ${piVersion}: a forked session recalls an observation from its branch history`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const sessionDir = path.join(ws.root, "sessions");
	const packed = await packInPersistentSession(t, ws, sessionDir);
	const fork = pi.SessionManager.forkFrom(packed.file, ws.cwd, sessionDir);
	assert.notEqual(fork.getSessionId(), packed.sessionId);
	const { pages } = await recallAll(t, ws, fork, packed.id);
	assert.equal(pages.join(""), packed.original);
	const restored = path.join(fs.realpathSync(sessionDir), "sol-pi", fork.getSessionId(), "observation-pack", "objects", `${packed.id}.txt`);
	assert.equal(fs.readFileSync(restored, "utf8"), packed.original);
});

test(`Pi ${piVersion}: an id that is on no branch of this session is unknown`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const run = await startSession({
		...ws,
		replies: [
			toolCalls(["obs_recall", { id: "obs_0123456789abcdef01234567" }, "r1"]),
			toolCalls(["obs_recall", { id: "not-an-id" }, "r2"]),
			"done",
		],
	});
	t.after(() => run.close());
	await run.session.prompt("go");
	const results = toolResults(run.session);
	assert.equal(results.get("r1").isError, true);
	assert.match(resultText(results.get("r1")), /Unknown observation id: obs_0123456789abcdef01234567/);
	assert.equal(results.get("r2").isError, true);
	assert.match(resultText(results.get("r2")), /not-an-id/);
});

test(`Pi ${piVersion}: an in-memory session archives under a private temp folder`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { sent, step } = recorder("big");
	const sessionManager = pi.SessionManager.inMemory(ws.cwd);
	const run = await startSession({ ...ws, sessionManager, replies: packScript(step, 3) });
	t.after(() => run.close());
	await run.session.prompt("go");
	const id = placeholderId(sent[3]);
	assert.ok(id, "replaced even without a session directory");
	const roots = fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith(`sol-pi-${sessionManager.getSessionId()}-`));
	assert.equal(roots.length, 1);
	const root = path.join(os.tmpdir(), roots[0]);
	t.after(() => fs.rmSync(root, { recursive: true, force: true }));
	assert.equal(fs.statSync(root).mode & 0o777, 0o700);
	assert.equal(fs.readFileSync(path.join(root, "observation-pack", "objects", `${id}.txt`), "utf8"), resultText(toolResults(run.session).get("big")));
	assert.deepEqual(run.errors, []);
});

test(`Pi ${piVersion}: steps that throw are warned about once each and every request goes on unchanged`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true, evidencePreservingReducer: true });
	const { sent, step } = recorder("big");
	const extensionPath = path.join(repoRoot, "sol-napi", "test", "fixtures", "failing-step-extension.ts");
	const run = await startSession({ ...ws, extensionPath, mode: "tui", replies: packScript(step, 3) });
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.equal(run.session.getLastAssistantText(), "done");
	const full = resultText(toolResults(run.session).get("big"));
	assert.deepEqual(sent, [null, full, full, full, full], "every request carried the result in full");
	assert.deepEqual(run.errors, [], "Pi reported no extension error");
	const warnings = run.notices().filter((n) => n.level === "warning").map((n) => n.message);
	const notice = (mechanism) => `SoL-Pi ${mechanism}: internal error (deliberate step failure); nothing was changed this time and Pi keeps working.`;
	assert.deepEqual(warnings.sort(), [notice("Evidence-Preserving Reducer"), notice("ObservationPack")]);
});

test(`Pi ${piVersion}: error results pass untouched`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { sent, step } = recorder("bad");
	const run = await startSession({ ...ws, replies: packScript(step, 4, "bad", `${BIG}; exit 1`) });
	t.after(() => run.close());
	await run.session.prompt("go");
	const original = resultText(toolResults(run.session).get("bad"));
	assert.equal(toolResults(run.session).get("bad").isError, true);
	for (const later of sent.slice(1)) assert.equal(later, original);
});

test(`Pi ${piVersion}: a symlink planted in the storage path is refused; the result goes in full and nothing is written through it`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const sessionDir = path.join(ws.root, "sessions");
	const elsewhere = path.join(ws.root, "elsewhere");
	fs.mkdirSync(sessionDir, { recursive: true });
	fs.mkdirSync(elsewhere);
	fs.symlinkSync(elsewhere, path.join(sessionDir, "sol-pi"));
	const { sent, step } = recorder("big");
	const written = [];
	const original = process.stderr.write;
	process.stderr.write = function (chunk, ...rest) {
		written.push(String(chunk));
		return original.call(this, chunk, ...rest);
	};
	let run;
	try {
		run = await startSession({ ...ws, sessionManager: pi.SessionManager.create(ws.cwd, sessionDir), replies: packScript(step, 4) });
		await run.session.prompt("go");
	} finally {
		process.stderr.write = original;
		run?.close();
	}
	const full = resultText(toolResults(run.session).get("big"));
	for (const later of sent.slice(1)) assert.equal(later, full, "kept in full");
	assert.deepEqual(fs.readdirSync(elsewhere), [], "nothing written through the link");
	const warnings = written.filter((line) => line.includes("ObservationPack"));
	assert.equal(warnings.length, 1, written.join(""));
	assert.match(warnings[0], /symbolic link|symlink/, warnings[0]);
});

test(`Pi ${piVersion}: send counts follow the session tree, not an abandoned branch`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const first = recorder("big");
	const second = recorder("big");
	const sessionManager = pi.SessionManager.inMemory(ws.cwd);
	const run = await startSession({ ...ws, sessionManager, replies: [...packScript(first.step, 3), ...packScript(second.step, 3)] });
	t.after(() => run.close());
	await run.session.prompt("first try");
	assert.ok(placeholderId(first.sent[3]), "replaced on the first branch");
	const userEntry = sessionManager.getEntries().find((e) => e.type === "message" && e.message.role === "user");
	await run.session.navigateTree(userEntry.id, { summarize: false });
	await run.session.prompt("second try");
	const original = resultText([...run.session.messages].reverse().find((m) => m.role === "toolResult" && m.toolCallId === "big"));
	assert.equal(second.sent[1], original, "first send on the new branch is full");
	assert.equal(second.sent[2], original, "second send on the new branch is full");
	assert.equal(second.sent[3], first.sent[3], "then the same placeholder");
});

test(`Pi ${piVersion}: TUI mode announces the first replacement once`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { step } = recorder("big");
	const run = await startSession({ ...ws, mode: "tui", replies: packScript(step, 5) });
	t.after(() => run.close());
	await run.session.prompt("go");
	const savings = run.notices().filter((n) => n.message.includes("context tokens avoided"));
	assert.equal(savings.length, 1, JSON.stringify(run.notices()));
	assert.match(savings[0].message, /^⚡ SoL-Pi · Observation Pack\nMoney saved · [\d,]+ context tokens avoided$/);
});

test(`Pi ${piVersion}: mixed text-and-image results and evidence receipts pass untouched`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const fixture = path.join(path.dirname(new URL(import.meta.url).pathname), "fixtures", "result-shapes-extension.ts");
	const seen = [];
	const step = (reply) => (context) => {
		seen.push(context.messages.filter((m) => m.role === "toolResult" && (m.toolCallId === "m1" || m.toolCallId === "rc1")).map(textOfMessage));
		return typeof reply === "string" ? ai.fauxAssistantMessage(reply) : reply;
	};
	const run = await startSession({
		...ws,
		extraExtensionPaths: [fixture],
		replies: [step(toolCalls(["big_mixed", {}, "m1"], ["big_receipt", {}, "rc1"])), step(toolCalls(["bash", { command: "true" }, "x1"])), step(toolCalls(["bash", { command: "true" }, "x2"])), step(toolCalls(["bash", { command: "true" }, "x3"])), step("done")],
	});
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.equal(seen.length, 5);
	for (const texts of seen.slice(1)) {
		assert.equal(texts.length, 2);
		for (const text of texts) assert.doesNotMatch(text, /large tool result replaced/);
	}
});

test(`Pi ${piVersion}: an older placeholder stays as it was when a new large result arrives, which gets its own two full sends`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const first = recorder("big");
	const second = recorder("big2");
	const both = (reply) => first.step(second.step(reply));
	const replies = [both(toolCalls(["bash", { command: BIG }, "big"]))];
	for (let i = 0; i < 3; i++) replies.push(both(toolCalls(["bash", { command: "true" }, `a${i}`])));
	replies.push(both(toolCalls(["bash", { command: BIG.replace("build step", "test case") }, "big2"])));
	for (let i = 0; i < 3; i++) replies.push(both(toolCalls(["bash", { command: "true" }, `b${i}`])));
	replies.push(both("done"));
	const run = await startSession({ ...ws, replies });
	t.after(() => run.close());
	await run.session.prompt("go");
	const placeholder = first.sent[3];
	assert.ok(placeholderId(placeholder));
	for (const later of first.sent.slice(4)) assert.equal(later, placeholder);
	const original2 = resultText(toolResults(run.session).get("big2"));
	assert.equal(second.sent[5], original2);
	assert.equal(second.sent[6], original2);
	assert.ok(placeholderId(second.sent[7]));
	assert.notEqual(placeholderId(second.sent[7]), placeholderId(placeholder));
});

test(`Pi ${piVersion}: a fused write's large result keeps its details and error flag; its placeholder shows the head`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true, actionFusion: true });
	const { sent, step } = recorder("fw");
	const run = await startSession({ ...ws, replies: packScript(step, 3, "fw").map((r, i) => (i === 0 ? step(toolCalls(["write", { path: "f.txt", content: "x\n", then_run: { command: BIG } }, "fw"])) : r)) });
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.match(sent[1], /^Successfully wrote/);
	assert.match(sent[3], /^\[large tool result replaced/);
	assert.match(sent[3], /Successfully wrote[\s\S]*\[then_run:succeeded\]/, "the head excerpt keeps the mutation line and the marker");
	const stored = toolResults(run.session).get("fw");
	assert.equal(stored.isError, false);
});

test(`Pi ${piVersion}: recall rebuilds a tampered object from the branch's history, refuses a symlinked object and an offset past the end`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const sessionDir = path.join(ws.root, "sessions");
	const packed = await packInPersistentSession(t, ws, sessionDir);
	const objects = path.join(fs.realpathSync(sessionDir), "sol-pi", packed.sessionId, "observation-pack", "objects");
	const object = path.join(objects, `${packed.id}.txt`);
	const calls = (...list) => [toolCalls(...list), "done"];
	const recallWith = async (args) => {
		const run = await startSession({ ...ws, sessionManager: pi.SessionManager.open(packed.file, sessionDir), replies: calls(["obs_recall", args, "r1"]) });
		await run.session.prompt("recall");
		const result = toolResults(run.session).get("r1");
		run.close();
		return result;
	};
	const beyond = await recallWith({ id: packed.id, offset: 10_000_000 });
	assert.equal(beyond.isError, true);
	assert.match(resultText(beyond), /Offset 10000000 exceeds observation size \d+/);

	const bytes = fs.readFileSync(object);
	bytes[0] = bytes[0] === 0x41 ? 0x42 : 0x41;
	fs.writeFileSync(object, bytes);
	const tampered = await recallWith({ id: packed.id, offset: 0 });
	assert.equal(tampered.isError, false, resultText(tampered));
	assert.ok(packed.original.startsWith(resultText(tampered).split("\n").slice(2).join("\n")), "the first page is the original's");
	assert.equal(fs.readFileSync(object, "utf8"), packed.original, "rebuilt: the history original has the record's hash");

	const secret = path.join(ws.root, "secret.txt");
	fs.writeFileSync(secret, "not for the model");
	fs.rmSync(object);
	fs.symlinkSync(secret, object);
	const linked = await recallWith({ id: packed.id, offset: 0 });
	assert.equal(linked.isError, true);
	assert.match(resultText(linked), /symlink/);
	assert.doesNotMatch(resultText(linked), /not for the model/);
});

test(`Pi ${piVersion}: the recall row carries the Observation Pack badge`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const run = await startSession(ws);
	t.after(() => run.close());
	assert.deepEqual([...run.solPi.tools.keys()], ["obs_recall"]);
	// ObservationPack's handler, the session's lifecycle and the savings accounting's (Pi 1.x sees requests with their system message).
	const lifecycle = ["session_start", "session_tree", "session_compact", "model_select", "session_shutdown", "turn_end"];
	const savingsHandlers = ["message_end", ...(piMajor >= 1 ? ["context_with_system"] : [])];
	assert.deepEqual([...run.solPi.handlers.keys()].sort(), ["context", ...lifecycle, ...savingsHandlers].sort());
	assert.deepEqual([...run.solPi.commands.keys()], ["sol-pi"]);
	const theme = { fg: (_c, text) => text, bg: (_c, text) => text, bold: (text) => text };
	const tool = run.session.getToolDefinition("obs_recall");
	const lines = tool.renderCall({ id: "obs_0123456789abcdef01234567", offset: 0 }, theme, {}).render(120).map((l) => l.trimEnd());
	assert.deepEqual(lines, ["⚡ SoL-Pi · Observation Pack", "Money saved · full observation replay avoided", "Recall obs_0123456789abcdef01234567 from byte 0"]);
	const done = tool.renderResult({ content: [], details: { bytes: 15_872, lines: 248 } }, { isPartial: false, expanded: false }, theme, {}).render(120)[0].trimEnd();
	assert.equal(done, "Recalled 15872 bytes across 248 lines");
});

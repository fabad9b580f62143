// ObservationPack integrity through a real Pi AgentSession (faux provider): identity
// comes from the content (providers that reuse tool-call ids, or send none), recall
// reads refuse links in the storage path as writes do, a crash-damaged object heals
// from the branch's history, and text that is not well-formed UTF-16 is never replaced.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { ai, makeWorkspace, pi, piVersion, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

// Two commands whose outputs differ but have exactly the same length (600 lines each).
const BIG_A = `seq -f "build step %g: compiling a module with a fairly long line of output" 1 600`;
const BIG_B = `seq -f "build stop %g: compiling a module with a fairly long line of output" 1 600`;
const enable = (ws) => writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
const textOfMessage = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("\n"));
const placeholderId = (text) => /^id: (obs_[a-f0-9]{24})$/m.exec(text)?.[1];
const isPlaceholder = (text) => /^\[large tool result replaced/.test(text);
const reply = (r, context) => (typeof r === "function" ? r(context) : typeof r === "string" ? ai.fauxAssistantMessage(r) : r);
const bashResults = (messages) => messages.filter((m) => m.role === "toolResult" && m.toolName === "bash");
const recallHeader = /^\[obs_recall id=\S+ offset=(\d+) next_offset=(\d+) eof=(true|false)\]\n\[chunk_bytes=\d+ chunk_lines=\d+; use next_offset to continue\]\n/;

/** A phase of a script that pages through `id(context)` with obs_recall calls (all with `callId`) until eof. */
function pager(id, callId) {
	const state = { pages: [], started: false, id: undefined };
	state.step = (context) => {
		let offset = 0;
		if (state.started) {
			const last = [...context.messages].reverse().find((m) => m.role === "toolResult");
			const text = textOfMessage(last);
			const header = recallHeader.exec(text);
			if (!header) return ai.fauxAssistantMessage(`unexpected recall text: ${text.slice(0, 300)}`);
			state.pages.push(text.slice(header[0].length));
			if (header[3] === "true") return undefined;
			offset = Number(header[2]);
		}
		state.started = true;
		state.id ??= id(context);
		return toolCalls(["obs_recall", { id: state.id, offset }, callId]);
	};
	return state;
}

/** Faux replies that run `phases` in order: fixed replies, functions of the context, or pagers. */
function scripted(phases, before = () => {}) {
	let index = 0;
	const next = (context) => {
		before(context);
		while (index < phases.length) {
			const phase = phases[index];
			if (phase?.step) {
				const r = phase.step(context);
				if (r) return r;
				index++;
				continue;
			}
			index++;
			return reply(phase, context);
		}
		return ai.fauxAssistantMessage("script ended");
	};
	return Array.from({ length: 40 }, () => next);
}

const largeBash = (messages) => bashResults(messages).filter((m) => textOfMessage(m).length > 1_000);

for (const callId of ["call_0", ""]) {
	test(`Pi ${piVersion}: tool-call id ${JSON.stringify(callId)} on every turn: two equal-length results keep their own placeholder, id and recall`, async (t) => {
		const ws = makeWorkspace(t);
		enable(ws);
		const sent = [];
		const cheap = toolCalls(["bash", { command: "true" }, callId]);
		const recallA = pager((context) => placeholderId(textOfMessage(largeBash(context.messages)[0])), callId);
		const recallB = pager((context) => placeholderId(textOfMessage(largeBash(context.messages)[1])), callId);
		const phases = [toolCalls(["bash", { command: BIG_A }, callId]), cheap, cheap, toolCalls(["bash", { command: BIG_B }, callId]), cheap, cheap, recallA, recallB, "done"];
		const run = await startSession({ ...ws, replies: scripted(phases, (context) => sent.push(largeBash(context.messages).map(textOfMessage))) });
		t.after(() => run.close());
		await run.session.prompt("go");
		assert.deepEqual(run.errors, []);
		assert.equal(run.session.getLastAssistantText(), "done");
		const [a, b] = largeBash(run.session.messages).map(resultText);
		assert.equal(a.length, b.length, "the two originals have the same length");
		assert.notEqual(a, b);

		// B went in full on its own first two requests; request 7 carries both as placeholders.
		assert.equal(sent[4][1], b);
		assert.equal(sent[5][1], b);
		const [placeholderA, placeholderB] = sent[6];
		assert.ok(isPlaceholder(placeholderA), placeholderA.slice(0, 200));
		assert.ok(isPlaceholder(placeholderB), placeholderB.slice(0, 200));
		assert.notEqual(placeholderId(placeholderA), placeholderId(placeholderB), "each content has its own id");
		assert.match(placeholderA, /^build step 1: compiling/m);
		assert.doesNotMatch(placeholderA, /^build stop /m);
		assert.match(placeholderB, /^build stop 1: compiling/m, "B's placeholder shows B's head");
		assert.match(placeholderB, /^build stop 600: compiling/m, "and B's tail");
		assert.doesNotMatch(placeholderB, /^build step /m);

		assert.equal(recallA.id, placeholderId(placeholderA));
		assert.equal(recallB.id, placeholderId(placeholderB));
		assert.equal(recallA.pages.join(""), a, "recall of A's id returns A's bytes");
		assert.equal(recallB.pages.join(""), b, "recall of B's id returns B's bytes");
	});
}

/** Packs BIG_A in a persistent session under `sessionDir`; returns the id, the original and where it is stored. */
async function pack(t, ws, sessionDir) {
	const sent = [];
	const cheap = (i) => toolCalls(["bash", { command: "true" }, `t${i}`]);
	const phases = [toolCalls(["bash", { command: BIG_A }, "big"]), cheap(0), cheap(1), cheap(2), "packed"];
	const record = (context) => sent.push(largeBash(context.messages).map(textOfMessage)[0]);
	const sessionManager = pi.SessionManager.create(ws.cwd, sessionDir);
	const run = await startSession({ ...ws, sessionManager, replies: scripted(phases, record) });
	await run.session.prompt("go");
	const original = resultText(toolResults(run.session).get("big"));
	run.close();
	const id = placeholderId(sent[3]);
	assert.ok(id, "packed");
	const root = path.join(fs.realpathSync(sessionDir), "sol-pi");
	const objects = path.join(root, sessionManager.getSessionId(), "observation-pack", "objects");
	return {
		id,
		original,
		file: sessionManager.getSessionFile(),
		sessionId: sessionManager.getSessionId(),
		root,
		objects,
		object: path.join(objects, `${id}.txt`),
		record: path.join(objects, `${id}.json`),
	};
}

/** Reopens the packed session (or the given manager) and runs `phases`; returns its tool results and what each request carried for the big result. */
async function reopen(ws, sessionDir, packed, phases, sessionManager = pi.SessionManager.open(packed.file, sessionDir)) {
	const sent = [];
	const record = (context) => sent.push(largeBash(context.messages).map(textOfMessage)[0] ?? null);
	const run = await startSession({ ...ws, sessionManager, replies: scripted(phases, record) });
	try {
		await run.session.prompt("again");
		return { results: toolResults(run.session), sent, errors: run.errors, last: run.session.getLastAssistantText() };
	} finally {
		run.close();
	}
}

for (const where of ["sol-pi", "sol-pi/<sessionId>"]) {
	test(`Pi ${piVersion}: obs_recall refuses a symlink at ${where} with a clear error, as writes do`, async (t) => {
		const ws = makeWorkspace(t);
		enable(ws);
		const sessionDir = path.join(ws.root, "sessions");
		const packed = await pack(t, ws, sessionDir);
		// Move the real folder away and leave a link in its place: same bytes, behind a link.
		const linkPath = where === "sol-pi" ? packed.root : path.join(packed.root, packed.sessionId);
		const moved = path.join(ws.root, "moved");
		fs.renameSync(linkPath, moved);
		fs.symlinkSync(moved, linkPath);
		assert.equal(fs.readFileSync(packed.object, "utf8"), packed.original, "readable through the link");
		const out = await reopen(ws, sessionDir, packed, [toolCalls(["obs_recall", { id: packed.id, offset: 0 }, "r1"]), "done"]);
		const result = out.results.get("r1");
		assert.equal(result.isError, true, resultText(result).slice(0, 200));
		assert.match(resultText(result), /symbolic link/);
		assert.match(resultText(result), new RegExp(packed.id));
		assert.doesNotMatch(resultText(result), /build step 1:/, "no bytes read through the link");
	});
}

const damages = {
	empty: () => "",
	truncated: (original) => original.slice(0, 5_000),
};

for (const [name, damage] of Object.entries(damages)) {
	test(`Pi ${piVersion}: an object left ${name} by a crash, without its record, heals on the next request`, async (t) => {
		const ws = makeWorkspace(t);
		enable(ws);
		const sessionDir = path.join(ws.root, "sessions");
		const packed = await pack(t, ws, sessionDir);
		fs.rmSync(packed.record);
		fs.writeFileSync(packed.object, damage(packed.original), { mode: 0o600 });
		const out = await reopen(ws, sessionDir, packed, [toolCalls(["obs_recall", { id: packed.id, offset: 0, query: "build step 600:" }, "q1"]), "done"]);
		assert.equal(fs.readFileSync(packed.object, "utf8"), packed.original, "the object is rebuilt from history");
		assert.equal(fs.statSync(packed.object).mode & 0o777, 0o600);
		assert.equal(JSON.parse(fs.readFileSync(packed.record, "utf8")).id, packed.id, "and its record written");
		assert.equal(placeholderId(out.sent[0]), packed.id, "the request carries the placeholder again");
		assert.deepEqual(fs.readdirSync(packed.objects).sort(), [`${packed.id}.json`, `${packed.id}.txt`], "no temp file left behind");
		const ledger = fs.readFileSync(path.join(packed.objects, "..", "ledger.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
		const repaired = ledger.filter((r) => r.event === "repaired");
		assert.equal(repaired.length, 1, "the repair is recorded once");
		assert.equal(repaired[0].id, packed.id);
		assert.equal(repaired[0].damage, `its object has ${Buffer.byteLength(damage(packed.original))} bytes, the original has ${Buffer.byteLength(packed.original)}`);
		const q1 = out.results.get("q1");
		assert.equal(q1.isError, false, resultText(q1));
		assert.match(resultText(q1), /line 600\b/);
	});

	test(`Pi ${piVersion}: an object left ${name} by a crash, without its record, heals on recall, which returns the exact bytes`, async (t) => {
		const ws = makeWorkspace(t);
		enable(ws);
		const sessionDir = path.join(ws.root, "sessions");
		const packed = await pack(t, ws, sessionDir);
		const recall = pager(() => packed.id, "r");
		// The damage happens after this request's context event and before obs_recall runs.
		const crash = (context) => {
			fs.rmSync(packed.record);
			fs.writeFileSync(packed.object, damage(packed.original), { mode: 0o600 });
			return recall.step(context);
		};
		const out = await reopen(ws, sessionDir, packed, [crash, recall, "done"]);
		assert.equal(out.last, "done");
		assert.equal(recall.pages.join(""), packed.original);
		assert.equal(fs.readFileSync(packed.object, "utf8"), packed.original);
	});
}

test(`Pi ${piVersion}: a valid object is never rewritten; one whose bytes differ from its record is rebuilt from history`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const sessionDir = path.join(ws.root, "sessions");
	const packed = await pack(t, ws, sessionDir);
	const before = fs.statSync(packed.object);
	const first = pager(() => packed.id, "r");
	const out = await reopen(ws, sessionDir, packed, [first, "done"]);
	assert.equal(first.pages.join(""), packed.original);
	const after = fs.statSync(packed.object);
	assert.equal(after.ino, before.ino, "a valid object that matches its record is never rewritten");
	assert.equal(after.mtimeMs, before.mtimeMs);
	assert.deepEqual(out.errors, []);

	const second = pager(() => packed.id, "s");
	const tamper = (context) => {
		const bytes = fs.readFileSync(packed.object);
		bytes[0] ^= 1;
		fs.writeFileSync(packed.object, bytes);
		return second.step(context);
	};
	const out2 = await reopen(ws, sessionDir, packed, [tamper, second, "done"]);
	assert.equal(out2.last, "done");
	assert.equal(second.pages.join(""), packed.original);
	assert.equal(fs.readFileSync(packed.object, "utf8"), packed.original);
});

test(`Pi ${piVersion}: a damaged object that this branch's history does not hold is reported as damaged, not unknown`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const sessionDir = path.join(ws.root, "sessions");
	const packed = await pack(t, ws, sessionDir);
	// A new branch from the first user message: the big result is not on it.
	const manager = pi.SessionManager.open(packed.file, sessionDir);
	const userEntry = manager.getEntries().find((e) => e.type === "message" && e.message.role === "user");
	manager.branch(userEntry.id);
	fs.rmSync(packed.record);
	fs.writeFileSync(packed.object, packed.original.slice(0, 5_000), { mode: 0o600 });
	const out = await reopen(ws, sessionDir, packed, [toolCalls(["obs_recall", { id: packed.id, offset: 0 }, "r1"]), "done"], manager);
	const result = out.results.get("r1");
	assert.equal(result.isError, true);
	assert.match(resultText(result), new RegExp(`^Stored observation ${packed.id} is damaged \\(.+\\); it could not be rebuilt from this branch's history`));
	assert.doesNotMatch(resultText(result), /Unknown observation id/);
	assert.equal(fs.readFileSync(packed.object, "utf8"), packed.original.slice(0, 5_000), "left as found");
});

test(`Pi ${piVersion}: a result with a lone UTF-16 surrogate is never replaced, so the model sees it exactly`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const lone = `${Array.from({ length: 400 }, (_, i) => `line ${i}: output of an extension tool with padding`).join("\n")}\nbad: \uD800 end\n`;
	assert.equal(lone.isWellFormed(), false);
	const tool = (api) =>
		api.registerTool({
			name: "lone_surrogate",
			label: "lone surrogate",
			description: "Returns a large text with a lone surrogate.",
			parameters: { type: "object", properties: {} },
			async execute() {
				return { content: [{ type: "text", text: lone }], details: undefined };
			},
		});
	const sent = [];
	const record = (context) => {
		const result = context.messages.find((m) => m.role === "toolResult" && m.toolCallId === "ls1");
		sent.push(result ? textOfMessage(result) : null);
	};
	const cheap = (i) => toolCalls(["bash", { command: "true" }, `t${i}`]);
	const run = await startSession({ ...ws, extensionFactories: [tool], replies: scripted([toolCalls(["lone_surrogate", {}, "ls1"]), cheap(0), cheap(1), cheap(2), cheap(3), "done"], record) });
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.deepEqual(run.errors, []);
	assert.equal(sent.length, 6);
	for (const text of sent.slice(1)) assert.equal(text, lone, "sent in full, surrogate included");
});

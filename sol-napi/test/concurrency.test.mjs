// Concurrency through real Pi sessions: many fused edits of a few files in one assistant
// message (Pi starts them together; each file's edits keep the model's order and none is
// lost), two sessions in one process archiving and recalling at the same time, and recalls
// from one process while another keeps archiving into the same session's folder. Every
// assert is about outcomes (bytes, order), never about timing.
import assert from "node:assert/strict";
import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { ai, makeWorkspace, pi, piVersion, repoRoot, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

const sha256 = (text) => createHash("sha256").update(text).digest("hex");
const observationId = (tool, text) => `obs_${sha256(`${tool}\0${sha256(text)}`).slice(0, 24)}`;
const textOf = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("\n"));
const recallHeader = /^\[obs_recall id=\S+ offset=(\d+) next_offset=(\d+) eof=(true|false)\]\n\[chunk_bytes=\d+ chunk_lines=\d+; use next_offset to continue\]\n/;

test(`Pi ${piVersion}: 36 fused edits of 3 files in one message: each file's edits in order, none lost, each command sees its own edit`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true });
	const files = ["a.txt", "b.txt", "c.txt"];
	for (const file of files) fs.writeFileSync(path.join(ws.cwd, file), "<next>\n");
	const calls = Array.from({ length: 36 }, (_, k) => {
		const file = files[k % 3];
		return ["edit", { path: file, edits: [{ oldText: "<next>", newText: `edit ${k}\n<next>` }], then_run: { command: `cat ${file}` } }, `e${k}`];
	});
	const run = await startSession({ ...ws, replies: [toolCalls(...calls), "done"] });
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.deepEqual(run.errors, []);
	const results = toolResults(run.session);
	for (const [index, file] of files.entries()) {
		const own = Array.from({ length: 12 }, (_, i) => index + 3 * i);
		assert.equal(fs.readFileSync(path.join(ws.cwd, file), "utf8"), `${own.map((k) => `edit ${k}\n`).join("")}<next>\n`, `${file}: every edit, in order`);
		for (const [position, k] of own.entries()) {
			const result = results.get(`e${k}`);
			assert.equal(result?.isError, false, resultText(result));
			// The command ran right after its own edit: the file as it was then, no later edit.
			const seen = `${own.slice(0, position + 1).map((j) => `edit ${j}\n`).join("")}<next>`;
			assert.ok(resultText(result).includes(seen), `e${k} ran after its edit and before the next: ${resultText(result).slice(-400)}`);
			assert.ok(!resultText(result).includes(`edit ${k + 3}\n`), `e${k} ran before the next edit of ${file}`);
		}
	}
});

/** Scripted replies: large distinct bash outputs, cheap turns until they are placeholders, then each paged back with obs_recall. */
function archiveAndRecall(tag, count) {
	const commands = Array.from({ length: count }, (_, i) => `seq -f "${tag} output ${i} line %g: a fairly long line of build output" 1 500`);
	const pages = new Map();
	const state = { turn: 0, queue: [], current: undefined, offset: 0 };
	const next = (context) => {
		state.turn += 1;
		if (state.turn <= count) return toolCalls(["bash", { command: commands[state.turn - 1] }, `${tag}b${state.turn}`]);
		if (state.turn <= count + 3) return toolCalls(["bash", { command: "true" }, `${tag}t${state.turn}`]);
		if (state.turn === count + 4) {
			state.queue = context.messages
				.filter((m) => m.role === "toolResult" && m.toolName === "bash")
				.map((m) => /^id: (obs_[a-f0-9]{24})$/m.exec(textOf(m))?.[1])
				.filter(Boolean);
		} else {
			const last = context.messages.findLast((m) => m.role === "toolResult");
			const header = recallHeader.exec(textOf(last));
			if (!header) return ai.fauxAssistantMessage(`recall failed: ${textOf(last).slice(0, 300)}`);
			pages.set(state.current, (pages.get(state.current) ?? "") + textOf(last).slice(header[0].length));
			if (header[3] === "false") return toolCalls(["obs_recall", { id: state.current, offset: Number(header[2]) }, `${tag}r${state.turn}`]);
		}
		state.current = state.queue.shift();
		if (!state.current) return ai.fauxAssistantMessage(`${tag} done`);
		return toolCalls(["obs_recall", { id: state.current, offset: 0 }, `${tag}r${state.turn}`]);
	};
	return { replies: Array.from({ length: 200 }, () => next), pages };
}

test(`Pi ${piVersion}: two sessions in one process archive and recall at the same time; each gets its own bytes`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
	const sessionDir = path.join(ws.root, "sessions");
	const runs = [];
	for (const tag of ["left", "right"]) {
		const script = archiveAndRecall(tag, 4);
		const run = await startSession({ ...ws, sessionManager: pi.SessionManager.create(ws.cwd, sessionDir), replies: script.replies });
		t.after(() => run.close());
		runs.push({ tag, run, script });
	}
	await Promise.all(runs.map(({ run, tag }) => run.session.prompt(`go ${tag}`)));
	for (const { tag, run, script } of runs) {
		assert.deepEqual(run.errors, []);
		assert.equal(run.session.getLastAssistantText(), `${tag} done`);
		const originals = run.session.messages.filter((m) => m.role === "toolResult" && m.toolName === "bash" && textOf(m).length > 10_000);
		const bySession = new Map();
		for (const m of originals) bySession.set(observationId("bash", textOf(m)), textOf(m));
		assert.equal(script.pages.size, 4, `${tag}: four recalls`);
		for (const [id, text] of script.pages) {
			assert.equal(text, bySession.get(id), `${tag}: ${id} recalled as its own original`);
			assert.match(text, new RegExp(`^${tag} output`));
		}
	}
});

test(`Pi ${piVersion}: recalls from one process while another keeps archiving into the same session's folder return the original bytes`, { timeout: 120_000 }, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
	const sessionDir = path.join(ws.root, "sessions");
	// The writer: the kill loop's session, left running while this process reads.
	const writer = fork(path.join(repoRoot, "sol-napi", "test", "fixtures", "kill-loop-child.mjs"), [JSON.stringify({ cwd: ws.cwd, agentDir: ws.agentDir, sessionDir, run: 1 })], {
		stdio: ["ignore", "ignore", "pipe", "ipc"],
	});
	t.after(() => writer.kill("SIGKILL"));
	const started = await new Promise((resolve, reject) => {
		writer.on("message", (message) => message.started && resolve(message));
		writer.once("exit", (code, signal) => reject(new Error(`the writer ended (${code ?? signal})`)));
	});
	const objects = path.join(fs.realpathSync(sessionDir), "sol-pi", started.sessionId, "observation-pack", "objects");
	// Wait (by outcome, not by time) until the writer has archived a few results.
	while (!fs.existsSync(objects) || fs.readdirSync(objects).filter((name) => name.endsWith(".json")).length < 4) {
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	const history = new Map();
	for (const entry of pi.SessionManager.open(started.file, sessionDir).getEntries()) {
		const m = entry.type === "message" ? entry.message : undefined;
		if (m?.role === "toolResult" && textOf(m).length > 10_000) history.set(observationId(m.toolName, textOf(m)), textOf(m));
	}
	const ids = fs
		.readdirSync(objects)
		.filter((name) => name.endsWith(".json"))
		.map((name) => name.slice(0, -".json".length))
		.filter((id) => history.has(id))
		.slice(0, 4);
	assert.ok(ids.length > 0);
	// The reader resumes the same session (same id, same folder) and pages through each id
	// three times while the writer goes on archiving and appending the ledger.
	const queue = [...ids, ...ids, ...ids];
	const pages = [];
	let current;
	let text = "";
	const next = (context) => {
		if (current) {
			const last = context.messages.findLast((m) => m.role === "toolResult");
			const header = recallHeader.exec(textOf(last));
			if (!header) return ai.fauxAssistantMessage(`recall failed: ${textOf(last).slice(0, 300)}`);
			text += textOf(last).slice(header[0].length);
			if (header[3] === "false") return toolCalls(["obs_recall", { id: current, offset: Number(header[2]) }, `p${pages.length}-${header[2]}`]);
			pages.push([current, text]);
		}
		current = queue.shift();
		text = "";
		if (!current) return ai.fauxAssistantMessage("read");
		return toolCalls(["obs_recall", { id: current, offset: 0 }, `p${pages.length}`]);
	};
	const reader = await startSession({ ...ws, sessionManager: pi.SessionManager.open(started.file, sessionDir), replies: Array.from({ length: 100 }, () => next) });
	t.after(() => reader.close());
	await reader.session.prompt("read");
	assert.equal(reader.session.getLastAssistantText(), "read");
	assert.equal(pages.length, ids.length * 3);
	for (const [id, bytes] of pages) assert.equal(bytes, history.get(id), `${id}: the original's bytes`);
	writer.kill("SIGKILL");
	await new Promise((resolve) => writer.once("exit", resolve));
	const ledger = fs.readFileSync(path.join(objects, "..", "ledger.jsonl"), "utf8").split("\n");
	const last = ledger.pop();
	for (const line of ledger) JSON.parse(line);
	assert.ok(last === "" || ledger.length > 0, "every complete ledger line of both processes is JSON");
});

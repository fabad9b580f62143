// A kill loop: a real Pi session with ObservationPack on is killed with SIGKILL at
// pseudo-random moments while it archives large results, appends ObservationPack's ledger
// and Pi's session file (messages, SoL-Pi's savings totals), then resumed. After every
// kill: Pi reopens the session file; every ledger line but a torn one (each on a line of its own) is JSON; every
// archived observation is either intact or healed from the branch's history, and a recall
// through Pi returns exactly the original bytes. The moments differ from run to run; the
// asserts hold for any of them.
//
// SOL_PI_KILL_LOOP=<n> sets the number of kills (default 6).
import assert from "node:assert/strict";
import { fork } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { ai, makeWorkspace, pi, piVersion, repoRoot, startSession, toolCalls, writeJson } from "./support.mjs";

const child = path.join(repoRoot, "sol-napi", "test", "fixtures", "kill-loop-child.mjs");
const iterations = Number(process.env.SOL_PI_KILL_LOOP ?? 6);
const sha256 = (text) => createHash("sha256").update(text).digest("hex");
// ObservationPack's id: `obs_` and 24 hex digits of SHA-256 over the tool name, NUL and the content hash.
const observationId = (tool, text) => `obs_${sha256(`${tool}\0${sha256(text)}`).slice(0, 24)}`;
const recallHeader = /^\[obs_recall id=\S+ offset=(\d+) next_offset=(\d+) eof=(true|false)\]\n\[chunk_bytes=\d+ chunk_lines=\d+; use next_offset to continue\]\n/;
const textOf = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("\n"));

/** A small deterministic generator (mulberry32), so the delays repeat for a given seed. */
function random(seed) {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let x = state;
		x = Math.imul(x ^ (x >>> 15), x | 1);
		x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
		return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
	};
}

/** Starts the child session and kills it `delay` ms after it has started; resolves with what it reported. */
async function runAndKill(t, spec, delay) {
	const proc = fork(child, [JSON.stringify(spec)], { stdio: ["ignore", "ignore", "pipe", "ipc"] });
	t.after(() => proc.kill("SIGKILL"));
	let stderr = "";
	proc.stderr.on("data", (chunk) => (stderr += chunk));
	const exited = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
	const started = await new Promise((resolve, reject) => {
		proc.on("message", (message) => message.started && resolve(message));
		exited.then(({ code, signal }) => reject(new Error(`the session process ended (${code ?? signal}) before it started: ${stderr}`)));
	});
	await new Promise((resolve) => setTimeout(resolve, delay));
	proc.kill("SIGKILL");
	const { signal } = await exited;
	assert.equal(signal, "SIGKILL", `the session ran to its end instead of being killed: ${stderr}`);
	return started;
}

/**
 * Every ledger line is JSON, except a record that a kill cut short (the last line, or a line
 * of its own once a restarted session appended after it: an append starts on a fresh line),
 * which is skipped; a cut record is the start of a record, never two glued together.
 */
function readLedger(file) {
	if (!fs.existsSync(file)) return { records: [], torn: 0 };
	const lines = fs.readFileSync(file, "utf8").split("\n");
	if (lines.at(-1) === "") lines.pop();
	let torn = 0;
	const records = [];
	lines.forEach((line, index) => {
		try {
			records.push(JSON.parse(line));
		} catch (error) {
			torn += 1;
			assert.ok(line.startsWith("{") && line.indexOf('{"timestamp"', 1) === -1, `ledger line ${index + 1} is not JSON (${error.message}) nor one torn record: ${line.slice(0, 200)}`);
		}
	});
	return { records, torn };
}

/** The large tool results anywhere in the session file (recall pages too), by observation id. */
function originals(file, sessionDir) {
	const manager = pi.SessionManager.open(file, sessionDir);
	const byId = new Map();
	for (const entry of manager.getEntries()) {
		const m = entry.type === "message" ? entry.message : undefined;
		if (m?.role === "toolResult") {
			const text = textOf(m);
			if (Buffer.byteLength(text) > 10 * 1024) byId.set(observationId(m.toolName, text), { tool: m.toolName, text });
		}
	}
	return byId;
}

/** The state of each archived object: intact (bytes match their record and id) or damaged. */
function objectStates(objects) {
	const states = new Map();
	if (!fs.existsSync(objects)) return states;
	for (const name of fs.readdirSync(objects)) {
		const match = /^(obs_[a-f0-9]{24})\.(txt|json)$/.exec(name);
		assert.ok(match, `only objects and records in ${objects}: ${name}`);
		const id = match[1];
		if (states.has(id)) continue;
		const objectFile = path.join(objects, `${id}.txt`);
		const recordFile = path.join(objects, `${id}.json`);
		let intact = false;
		if (fs.existsSync(objectFile) && fs.existsSync(recordFile)) {
			assert.equal(fs.statSync(objectFile).mode & 0o777, 0o600);
			const bytes = fs.readFileSync(objectFile);
			try {
				const record = JSON.parse(fs.readFileSync(recordFile, "utf8"));
				intact = record.id === id && record.contentHash === createHash("sha256").update(bytes).digest("hex") && record.bytes === bytes.length;
			} catch {
				intact = false;
			}
		}
		states.set(id, intact ? "intact" : "damaged");
	}
	return states;
}

/** Resumes the session in this process and pages through `ids` with obs_recall; returns each id's pages or error. */
async function recallAll(ws, sessionDir, file, ids) {
	const queue = [...ids];
	const pages = new Map(ids.map((id) => [id, []]));
	const errors = new Map();
	let current;
	let offset = 0;
	let n = 0;
	const next = (context) => {
		if (current !== undefined) {
			const last = context.messages.findLast((m) => m.role === "toolResult");
			const text = textOf(last);
			const header = recallHeader.exec(text);
			if (!header || last.isError) {
				errors.set(current, text.slice(0, 300));
				current = undefined;
			} else {
				pages.get(current).push(text.slice(header[0].length));
				if (header[3] === "true") current = undefined;
				else offset = Number(header[2]);
			}
		}
		if (current === undefined) {
			if (queue.length === 0) return ai.fauxAssistantMessage("checked");
			current = queue.shift();
			offset = 0;
		}
		n += 1;
		return toolCalls(["obs_recall", { id: current, offset }, `check${n}`]);
	};
	const sessionManager = pi.SessionManager.open(file, sessionDir);
	// SoL-Pi's warnings go to stderr in print mode: a resumed session must have none (its
	// savings totals and state read back whatever their size).
	const warnings = [];
	const write = process.stderr.write;
	process.stderr.write = (chunk, ...rest) => {
		warnings.push(String(chunk));
		return write.call(process.stderr, chunk, ...rest);
	};
	const run = await startSession({ ...ws, sessionManager, replies: Array.from({ length: 50 + ids.length * 6 }, () => next) });
	try {
		await run.session.prompt("check the archive");
		assert.equal(run.session.getLastAssistantText(), "checked");
		assert.deepEqual(run.errors, []);
	} finally {
		process.stderr.write = write;
		run.close();
	}
	assert.deepEqual(warnings.filter((text) => text.includes("SoL-Pi")), [], "the resumed session warns about nothing");
	return { pages, errors };
}

test(`Pi ${piVersion}: ${iterations} SIGKILLs while archiving and appending; after each restart every recall is the original's bytes`, { timeout: 600_000 }, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
	const sessionDir = path.join(ws.root, "sessions");
	const next = random(20261201);
	let file;
	let sessionId;
	const checked = new Set();
	let archived = 0;
	const totals = { damaged: 0, torn: 0 };
	for (let run = 1; run <= iterations; run++) {
		const delay = Math.floor(200 + next() * 2_500);
		const started = await runAndKill(t, { cwd: ws.cwd, agentDir: ws.agentDir, sessionDir, file, run }, delay);
		file ??= started.file;
		sessionId ??= started.sessionId;
		assert.equal(started.file, file, "the same session resumed");
		if (!fs.existsSync(file)) continue;

		// Pi reads the session file back (a torn last line is its to skip).
		const history = originals(file, sessionDir);
		const store = path.join(fs.realpathSync(sessionDir), "sol-pi", sessionId, "observation-pack");
		const ledger = readLedger(path.join(store, "ledger.jsonl"));
		const states = objectStates(path.join(store, "objects"));
		for (const id of states.keys()) assert.ok(history.has(id), `archived ${id} is a result of the session's history`);
		// Every damaged object, and every new one of the loop's own bash results, is recalled
		// through Pi: exact bytes, healed if needed. (The checks' own recall pages are archived
		// too; they are checked on disk above, intact or damaged.)
		const damaged = [...states].filter(([, state]) => state === "damaged").map(([id]) => id);
		const toCheck = [...states]
			.filter(([id, state]) => state === "damaged" || (!checked.has(id) && history.get(id).tool === "bash"))
			.map(([id]) => id);
		if (toCheck.length > 0) {
			const { pages, errors } = await recallAll(ws, sessionDir, file, toCheck);
			for (const id of toCheck) {
				assert.equal(errors.get(id), undefined, `recall of ${id} failed`);
				assert.equal(pages.get(id).join(""), history.get(id).text, `recall of ${id} is the original's bytes`);
				checked.add(id);
			}
			const after = objectStates(path.join(store, "objects"));
			for (const id of toCheck) assert.equal(after.get(id), "intact", `${id} is intact after its recall`);
		}
		archived = states.size;
		totals.damaged += damaged.length;
		totals.torn += ledger.torn;
		t.diagnostic(
			`kill ${run} after ${delay} ms: ${history.size} large results, ${archived} archived (${damaged.length} damaged, healed), ${ledger.records.length} ledger lines${ledger.torn > 0 ? ` and ${ledger.torn} torn` : ""}, ${toCheck.length} recalled`,
		);
	}
	assert.ok(archived > 0, "the loop archived something");
	t.diagnostic(`${iterations} kills survived: ${totals.damaged} damaged objects healed, ${totals.torn} torn ledger lines skipped`);
});

// The append-only files SoL-Pi writes, through a real Pi AgentSession (faux provider): a
// crash that tears ObservationPack's ledger loses no record appended after the resume; a
// reducer archive object left half-written heals when the same log comes again; obs_recall
// refuses an offset that is not a whole number of bytes instead of rounding it.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { ai, makeWorkspace, pi, piVersion, repoRoot, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

const BIG_A = `seq -f "build step %g: compiling a module with a fairly long line of output" 1 600`;
const BIG_B = `seq -f "test case %g: checking a module with a fairly long line of output" 1 700`;
const sha256 = (text) => createHash("sha256").update(text, "utf8").digest("hex");
const cheap = (id) => toolCalls(["bash", { command: "true" }, id]);

/** Runs `replies` in a session (a new one under `sessionDir`, or the session file `file` resumed); returns its results and file. */
async function session(t, ws, sessionDir, replies, file) {
	const sessionManager = file ? pi.SessionManager.open(file, sessionDir) : pi.SessionManager.create(ws.cwd, sessionDir);
	const run = await startSession({ ...ws, sessionManager, replies });
	try {
		await run.session.prompt("go");
		assert.deepEqual(run.errors, []);
		return { results: toolResults(run.session), file: sessionManager.getSessionFile(), sessionId: sessionManager.getSessionId(), last: run.session.getLastAssistantText() };
	} finally {
		run.close();
	}
}

const tears = {
	// The write of the last record stopped just before its line feed.
	"its line feed lost": (text) => text.slice(0, -1),
	// The write stopped in the middle of the last record.
	"cut mid-record": (text) => text.slice(0, text.lastIndexOf("\n", text.length - 2) + 1 + 40),
};

for (const [tear, cut] of Object.entries(tears)) {
	test(`Pi ${piVersion}: a ledger whose last record has ${tear} keeps every record appended after the resume whole and readable`, async (t) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
		const sessionDir = path.join(ws.root, "sessions");
		const first = await session(t, ws, sessionDir, [toolCalls(["bash", { command: BIG_A }, "a"]), cheap("t1"), cheap("t2"), "packed"]);
		assert.equal(first.last, "packed");
		const ledger = path.join(fs.realpathSync(sessionDir), "sol-pi", first.sessionId, "observation-pack", "ledger.jsonl");
		const whole = fs.readFileSync(ledger, "utf8");
		const before = whole.split("\n").slice(0, -1);
		assert.ok(before.length >= 3, whole);
		const torn = cut(whole);
		fs.writeFileSync(ledger, torn);

		// The session resumes in Pi and archives another large result.
		const second = await session(t, ws, sessionDir, [toolCalls(["bash", { command: BIG_B }, "b"]), cheap("t3"), "done"], first.file);
		assert.equal(second.last, "done");
		const bHash = sha256(resultText(second.results.get("b")));

		const lines = fs.readFileSync(ledger, "utf8").split("\n");
		assert.equal(lines.pop(), "", "the ledger ends with a whole record");
		const tornLine = torn.slice(torn.lastIndexOf("\n") + 1);
		// Every line is the record it was, except the torn one, which stays on a line of its own.
		assert.deepEqual(lines.slice(0, before.length - 1), before.slice(0, -1), "the records before the tear are untouched");
		assert.equal(lines[before.length - 1], tornLine, "the torn record keeps a line of its own");
		const appended = lines.slice(before.length).map((line, index) => {
			try {
				return JSON.parse(line);
			} catch (error) {
				assert.fail(`record ${index + 1} appended after the resume is not JSON (${error.message}): ${line.slice(0, 300)}`);
			}
		});
		if (tear === "its line feed lost") assert.deepEqual(JSON.parse(tornLine), JSON.parse(before.at(-1)), "a record that only lost its line feed still reads");
		else assert.throws(() => JSON.parse(tornLine));
		// After the resume, A goes as the placeholder it already had (recorded once, before the
		// crash); B's two full sends are the records appended, the first one right after the tear.
		assert.deepEqual(
			appended.map((record) => [record.event, record.contentHash, record.sendNumber]),
			[
				["full", bHash, 1],
				["full", bHash, 2],
			],
			"every record appended after the resume reads, the first one included",
		);
		for (const record of appended) assert.match(record.timestamp, /^\d{4}-\d\d-\d\dT/);
	});
}

for (const offset of [1.5, 1e-300, 0.5]) {
	test(`Pi ${piVersion}: obs_recall refuses offset ${offset} with a clear error instead of rounding it`, async (t) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
		let id;
		const recall = (context) => {
			const placeholder = context.messages.map((m) => (m.role === "toolResult" ? resultText(m) : "")).find((text) => /^id: obs_/m.test(text));
			id = /^id: (obs_[a-f0-9]{24})$/m.exec(placeholder)[1];
			return toolCalls(["obs_recall", { id, offset }, "r1"], ["obs_recall", { id, offset: 0 }, "r0"]);
		};
		const run = await startSession({ ...ws, replies: [toolCalls(["bash", { command: BIG_A }, "a"]), cheap("t1"), cheap("t2"), recall, "done"] });
		t.after(() => run.close());
		await run.session.prompt("go");
		assert.equal(run.session.getLastAssistantText(), "done");
		const results = toolResults(run.session);
		const refused = results.get("r1");
		assert.equal(refused.isError, true, resultText(refused).slice(0, 300));
		const text = resultText(refused);
		assert.doesNotMatch(text, /build step/, "no page is returned");
		assert.equal(text, `Offset ${offset} is not a byte offset: give a whole number from 0 to 9007199254740991, such as 0 or a next_offset returned by obs_recall`);
		assert.equal(results.get("r0").isError, false, "a whole offset still pages");
		assert.match(resultText(results.get("r0")), /^\[obs_recall id=\S+ offset=0 /);
	});
}

/** A reducer model that quotes each failing test line of the log it is sent (and counts its calls). */
function honestReducer() {
	const calls = [];
	const faux = ai.fauxProvider({ provider: "reducer-faux", models: [{ id: "luna", contextWindow: 200000, maxTokens: 4096 }] });
	const step = (context) => {
		const user = context.messages.find((m) => m.role === "user");
		const text = typeof user.content === "string" ? user.content : user.content.map((b) => b.text).join("");
		const sha = /^source_sha256=([0-9a-f]{64})$/m.exec(text)[1];
		const log = text.slice(text.indexOf("<untrusted_log>\n") + 16, text.lastIndexOf("\n</untrusted_log>"));
		calls.push({ sha, log });
		const evidence = log
			.split("\n")
			.filter((line) => / \.\.\. FAILED$/.test(line))
			.slice(0, 12)
			.map((quote) => ({ kind: "failure", quote }));
		return ai.fauxAssistantMessage(JSON.stringify({ schema: "sol-pi-evidence-receipt/1", source_sha256: sha, status: "failure", uncertain: false, evidence }));
	};
	faux.setResponses(Array.from({ length: 8 }, () => step));
	return { provider: faux.provider, calls };
}

const halves = {
	"half-written": (log) => log.slice(0, Math.floor(log.length / 2)),
	empty: () => "",
	"of the right size with other bytes": (log) => log.replace("FAILED", "failed"),
};

for (const [damage, damaged] of Object.entries(halves)) {
	test(`Pi ${piVersion}: a reducer archive object left ${damage} before the run heals: the reduction succeeds and the object is whole`, async (t) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, evidencePreservingReducer: true, evidencePreservingReducerProvider: "reducer-faux", evidencePreservingReducerModel: "luna" });
		const fixture = path.join(repoRoot, "fixtures", "reducer", "cargo-test-failure", "output.txt");
		fs.writeFileSync(path.join(ws.cwd, "Makefile"), `test:\n\t@cat ${fixture}; exit 101\n`);
		const sessionDir = path.join(ws.root, "sessions");
		const journal = (manager) => manager.getEntries().filter((e) => e.type === "custom" && e.customType === "sol-pi-evidence-preserving-reducer-v1").map((e) => e.data);
		const reduce = async (id, file) => {
			const reducer = honestReducer();
			const sessionManager = file ? pi.SessionManager.open(file, sessionDir) : pi.SessionManager.create(ws.cwd, sessionDir);
			const run = await startSession({ ...ws, sessionManager, extraProviders: [reducer.provider], replies: [toolCalls(["bash", { command: "make test" }, id]), "done"] });
			try {
				await run.session.prompt("go");
				assert.deepEqual(run.errors, []);
				return { reducer, result: toolResults(run.session).get(id), file: sessionManager.getSessionFile(), journal: journal(sessionManager).filter((r) => r.toolCallId === id) };
			} finally {
				run.close();
			}
		};
		const first = await reduce("b1");
		const artifact = /^source_artifact=(.+)$/m.exec(resultText(first.result))[1];
		const log = fs.readFileSync(artifact, "utf8");
		assert.equal(sha256(log), first.reducer.calls[0].sha);
		// A crash of a writer that wrote the object in place left it damaged.
		fs.writeFileSync(artifact, damaged(log));

		const second = await reduce("b2", first.file);
		const text = resultText(second.result);
		assert.match(text, /^sol_pi_evidence_receipt_v1\nstatus=failure\n/, JSON.stringify(second.journal));
		assert.equal(/^source_artifact=(.+)$/m.exec(text)[1], artifact, "the receipt names the same object");
		assert.equal(fs.readFileSync(artifact, "utf8"), log, "the object is whole again");
		assert.equal(fs.statSync(artifact).mode & 0o777, 0o600);
		assert.deepEqual(fs.readdirSync(path.dirname(artifact)), [path.basename(artifact)], "no temporary file left behind");
		assert.deepEqual(second.journal.map((r) => r.kind), ["candidate", "provider_response", "applied"]);
		assert.equal(second.journal[0].sourceRepaired, true, "the candidate record says the object was written again");
		assert.equal(first.journal[0].sourceRepaired, undefined);
	});
}

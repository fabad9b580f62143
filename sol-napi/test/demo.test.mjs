// The demo (scripts/demo.mjs) on the Pi install under test, checked against its own
// session file and SoL-Pi's archives: what was archived is the real output, what was
// recalled is the original, every receipt quote is a line of the archived log, the
// requests the session recorded are the ones the faux provider answered, and the fix
// really landed. The checks themselves are demo-checks.mjs (each is shown failing on a
// tampered copy here); the session file is read with session-file.mjs. The --tui models
// also drive the real `pi` CLI (as `pi -p`) to the same end.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";

import { DEMO_CHECKS, checkDemo, observationId, sha256 } from "./demo-checks.mjs";
import { assertReplayedAsLive, npmReplay } from "./replay-check.mjs";
import { parseSession, readSessionFile, textOf } from "./session-file.mjs";
import { piVersion } from "./support.mjs";
import { FIXED_LINE } from "../../scripts/demo/project.mjs";
import { QUERY, REDUCER_ENTRY, SEARCH_COMMAND, TEST_COMMAND, cliDemo, placeholderId, runDemo, runLongDemo } from "../../scripts/demo.mjs";
import { FINAL_ANSWER, RECALL_HEADER } from "../../scripts/demo/script.mjs";


const addon = createRequire(import.meta.url)("../index.js");
let demo;
let lines;
let session;
let entries;
const toolResult = (id) => entries.find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolCallId === id)?.message;

before(async () => {
	lines = [];
	demo = await runDemo({ log: (line) => lines.push(line) });
	session = readSessionFile(demo.sessionFile);
	entries = session.branch;
});
after(() => {
	if (demo) fs.rmSync(demo.root, { recursive: true, force: true });
});

test(`Pi ${piVersion}: the demo runs every step in one session and prints one progress line per step`, () => {
	assert.deepEqual(demo.errors, []);
	assert.deepEqual(demo.missing, []);
	assert.equal(demo.ok, true);
	assert.ok(demo.sessionFile.startsWith(demo.sessionDir), demo.sessionFile);
	const expected = [
		/^SoL-Pi demo: Pi \S+, all four mechanisms, faux models, project \S+$/,
		/^plan: update_plan took 3 steps, "locate" in progress$/,
		/^reducer: [\d.]+ KB failing test log \(python3 -m unittest -v\) -> verified receipt \(12 quotes\); the log is archived at \S+$/,
		/^search: grep -rn discount_percent shop -> [\d.]+ KB of real output$/,
		/^observationpack: the [\d.]+ KB search output went in full on 2 requests, then as a \d+-byte placeholder on request 6 \(obs_[0-9a-f]{24}\)$/,
		/^obs_recall: query "def apply_discount" over the archived search -> 1 match$/,
		/^obs_recall: 2 pages, [\d.]+ KB, byte-identical to the original output$/,
		/^action fusion: edit shop\/pricing\.py with then_run "python3 -m unittest" in one call -> \[then_run:succeeded\] Ran 207 tests in [\d.]+s, OK$/,
		/^plan: steps locate, fix completed \(a boundary\)$/,
		/^occ: boundary compaction at the completed steps \(Pi summarized a context of \d+ tokens\)$/,
		/^occ: the run continued by itself after the compaction \(Online Context Compact's continuation\)$/,
		/^answer: Fixed `apply_discount` in shop\/pricing\.py: .* The whole suite passes now\.$/,
	];
	// Then the table `/sol-pi` showed, as the user would see it.
	assert.equal(lines.length, expected.length + 1, lines.join("\n"));
	expected.forEach((pattern, i) => assert.match(lines[i], pattern));
	assert.match(demo.savingsTable, /^SoL-Pi savings for this session: /);
	assert.equal(lines.at(-1), `\n/sol-pi\n${demo.savingsTable}\n`);
});

test(`Pi ${piVersion}: the failing test log is archived byte for byte and every receipt quote is a line of it`, () => {
	const result = toolResult("test-1");
	const receipt = textOf(result);
	assert.match(receipt, /^sol_pi_evidence_receipt_v1\nstatus=failure\n/);
	const artifact = /^source_artifact=(.+)$/m.exec(receipt)[1];
	assert.ok(artifact.startsWith(fs.realpathSync(demo.sessionDir)), artifact);
	const archived = fs.readFileSync(artifact, "utf8");
	// The tool's own output, before SoL-Pi saw it: the log plus Pi's exit-status line.
	const original = demo.raw.get("test-1");
	assert.ok(original.startsWith(archived), "the archive is the start of the original output");
	assert.match(original.slice(archived.length), /^\n*Command exited with code 1$/, "only Pi's status line is not archived");
	assert.match(archived, /^FAIL: test_ten_percent_off /m);
	assert.equal(/^source_sha256=([0-9a-f]{64})$/m.exec(receipt)[1], sha256(archived));
	assert.equal(Number(/^source_bytes=(\d+)$/m.exec(receipt)[1]), Buffer.byteLength(archived));
	const candidate = entries.find((e) => e.type === "custom" && e.customType === REDUCER_ENTRY && e.data.kind === "candidate");
	assert.equal(candidate.data.sourceSha256, sha256(archived));
	assert.deepEqual(
		entries.filter((e) => e.type === "custom" && e.customType === REDUCER_ENTRY).map((e) => e.data.kind),
		["candidate", "provider_response", "applied"],
	);

	const logLines = archived.split("\n");
	const quotes = [...receipt.matchAll(/^- kind=(\w+) line=(\d+) quote_sha256=([0-9a-f]{64}) quote=(".*")$/gm)];
	assert.equal(quotes.length, 12);
	for (const [, kind, line, quoteSha, quoted] of quotes) {
		const quote = JSON.parse(quoted);
		assert.equal(kind, "failure");
		assert.equal(logLines[Number(line) - 1], quote, `line ${line} of the archived log is the quote`);
		assert.ok(logLines.includes(quote));
		assert.equal(quoteSha, sha256(quote));
	}
	assert.deepEqual(quotes.map((q) => JSON.parse(q[4])), demo.reducerCalls[0].quotes, "the receipt keeps what the reducer model quoted");
	assert.equal(demo.reducerCalls.length, 1);
	assert.equal(demo.reducerCalls[0].log, archived, "the reducer model was sent the archived log");
	assert.ok(Buffer.byteLength(receipt) < Buffer.byteLength(archived) / 2);
});

test(`Pi ${piVersion}: the packed search output is archived as it was, and recalled exactly and by query`, () => {
	const stored = textOf(toolResult("search-1"));
	assert.equal(stored, demo.raw.get("search-1"), "the session keeps the search output unchanged");
	assert.ok(Buffer.byteLength(stored) > 10 * 1024);
	assert.deepEqual(demo.sends.slice(0, 3), ["full", "full", "placeholder"]);
	const id = placeholderId(demo.placeholder);
	const storage = path.join(fs.realpathSync(demo.sessionDir), "sol-pi", demo.sessionId, "observation-pack");
	assert.equal(fs.readFileSync(path.join(storage, "objects", `${id}.txt`), "utf8"), stored, "archived bytes equal the original output");
	const ledger = fs.readFileSync(path.join(storage, "ledger.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
	assert.deepEqual(ledger.filter((r) => r.id === id && r.event !== "recall").map((r) => r.event).slice(0, 3), ["full", "full", "placeholder"]);

	// The pages as the session file holds them, in order, join to the original.
	const pages = entries
		.filter((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolName === "obs_recall" && e.message.toolCallId !== "recall-query")
		.map((e) => textOf(e.message));
	assert.equal(pages.length, 2);
	let offset = 0;
	let recalled = "";
	for (const page of pages) {
		const header = RECALL_HEADER.exec(page);
		assert.ok(header, page.slice(0, 200));
		assert.equal(header[1], id);
		assert.equal(Number(header[2]), offset);
		const body = page.slice(header[0].length);
		recalled += body;
		offset = Number(header[3]);
	}
	assert.match(pages.at(-1), /eof=true/);
	assert.equal(recalled, stored, "recalled text equals the original");

	const query = toolResult("recall-query");
	assert.equal(query.isError, false);
	assert.equal(query.details.matches.length, 1);
	const line = stored.split("\n").find((l) => l.includes(QUERY));
	assert.ok(textOf(query).includes(line), `the match shows the original line ${line}`);
	assert.match(line, /^shop\/pricing\.py:\d+:def apply_discount\(/);
	assert.ok(SEARCH_COMMAND.startsWith("grep"));
});

test(`Pi ${piVersion}: the fused edit landed the fix and its then_run ran the real tests, which pass at the end`, () => {
	const fix = toolResult("fix-1");
	assert.equal(fix.isError, false, textOf(fix));
	assert.match(textOf(fix), /\[then_run:succeeded\]/);
	const pricing = fs.readFileSync(path.join(demo.cwd, "shop", "pricing.py"), "utf8");
	assert.ok(pricing.includes(FIXED_LINE));
	const rerun = spawnSync("python3", ["-m", "unittest"], { cwd: demo.cwd, encoding: "utf8" });
	assert.equal(rerun.status, 0, rerun.stderr);
	assert.match(rerun.stderr, /^Ran 207 tests in /m);
	assert.ok(TEST_COMMAND.startsWith("python3 -m unittest"));
});

test(`Pi ${piVersion}: the boundary compaction and its continuation are in the session file, and the request counts agree`, () => {
	const compaction = entries.findIndex((e) => e.type === "compaction");
	const continuation = entries.findIndex((e) => e.type === "custom_message" && e.customType === "sol-pi-online-context-compact");
	const final = entries.findLastIndex((e) => e.type === "message" && e.message.role === "assistant" && e.message.stopReason === "stop");
	assert.ok(compaction > 0 && continuation > compaction && final > continuation, `${compaction} < ${continuation} < ${final}`);
	assert.equal(entries.filter((e) => e.type === "compaction").length, 1);
	assert.equal(textOf(entries[final].message), demo.finalText);

	// Every request the faux provider answered is in the session: an agent reply, or the compaction's summary.
	const replies = entries.filter((e) => e.type === "message" && e.message.role === "assistant" && ["toolUse", "stop"].includes(e.message.stopReason));
	assert.equal(replies.length + 1, demo.fauxCallCount);
	assert.deepEqual(
		demo.requests.map((r) => r.kind).sort(),
		[...Array(replies.length).fill("agent"), "summary"].sort(),
	);
	const state = entries.filter((e) => e.type === "custom" && e.customType === "sol-pi-online-context-state-v1").at(-1).data;
	assert.equal(state.requestCount, replies.length, "Online Context Compact counted the requests the provider answered");
	assert.equal(state.nativeCompactionCount, 1);
});

test(`Pi ${piVersion}: the demo's session file checks out: archives, recalls, receipts and request counts`, () => {
	const results = checkDemo(session, demo);
	for (const [name, { problems }] of Object.entries(results)) assert.deepEqual(problems, [], name);
	// What the checks looked at: every archive, every recall, the receipt, the counts.
	const search = observationId("bash", textOf(toolResult("search-1")));
	assert.equal(placeholderId(demo.placeholder), search, "the placeholder names the search output's archive");
	assert.ok(results.observationArchives.checked.includes(search));
	const recallIds = entries.filter((e) => e.type === "message" && e.message.toolName === "obs_recall").map((e) => e.message.toolCallId);
	assert.deepEqual(recallIds, ["recall-query", "recall-0", "recall-1"]);
	assert.deepEqual(results.observationArchives.checked.sort(), [search, observationId("obs_recall", textOf(toolResult("recall-0")))].sort());
	assert.deepEqual(results.recalls.checked, recallIds);
	assert.deepEqual(results.reducerReceipts.checked, ["test-1"]);
	// Action Fusion and the reducer removed input tokens and saved money net of their own calls.
	// ObservationPack's three recall turns and Online Context Compact's two plan turns are requests
	// plain Pi never makes: in so short a session they cost more than they save, a loss shown as one.
	const rowOf = (label) => {
		const row = new RegExp(`^${label} +(-?\\d+) +(-?[\\d,]+) +-?\\$[\\d.]+ +\\$[\\d.]+ +(-?)\\$([\\d.]+)$`, "m").exec(demo.savingsTable);
		assert.ok(row, `${label} row: ${demo.savingsTable}`);
		return { line: row[0], requests: Number(row[1]), tokens: Number(row[2].replaceAll(",", "")), net: Number(`${row[3]}${row[4]}`) };
	};
	for (const label of ["Action Fusion", "Evidence-Preserving Reducer"]) {
		const row = rowOf(label);
		assert.ok(row.tokens > 0 && row.net > 0, `${label} saved: ${row.line}`);
	}
	assert.equal(rowOf("ObservationPack").requests, -3, "the three recall turns are ObservationPack's");
	assert.equal(rowOf("Online Context Compact").requests, -2, "the two plan turns are Online Context Compact's");
	assert.ok(rowOf("Online Context Compact").net < 0, "Online Context Compact's loss is shown");
	assert.match(demo.savingsTable, /^SoL-Pi savings for this session: \d+ provider requests sent, \d+ without SoL-Pi$/m);
	assert.match(demo.savingsTable, /^Action Fusion +1 /m);
	assert.equal(demo.agentRequests + demo.summaryRequests, demo.fauxCallCount);
	assert.equal(demo.summaryRequests, 1);
	assert.equal(demo.reducerCalls.length, 1);
	assert.deepEqual(results.requestCounts.checked, [`agent replies: ${demo.agentRequests}`, "compactions: 1", "reducer responses: 1"]);
	// The one assistant message no provider answered: Pi's record of the request Online
	// Context Compact aborted at the boundary before it was sent; the compaction follows it.
	const unanswered = entries.filter((e) => e.type === "message" && e.message.role === "assistant" && !["stop", "toolUse"].includes(e.message.stopReason));
	assert.equal(unanswered.length, 1, JSON.stringify(unanswered));
	assert.deepEqual(unanswered[0].message.content, []);
	assert.match(unanswered[0].message.errorMessage, /aborted/);
	const next = entries.slice(entries.indexOf(unanswered[0]) + 1).find((e) => e.customType !== "sol-pi-savings-totals");
	assert.equal(next.type, "compaction");
	assert.ok(demo.runtimeRoot.startsWith(fs.realpathSync(demo.sessionDir)), demo.runtimeRoot);
	assert.ok(demo.sessionFile.startsWith(demo.sessionDir));
});

test(`Pi ${piVersion}: \`npm run replay\` of the demo's session gives the figures the live extension showed`, () => {
	const before = fs.readFileSync(demo.sessionFile);
	const result = npmReplay("--json", "--estimated", demo.sessionFile);
	assert.equal(result.status, 0, result.stderr);
	assert.deepEqual(fs.readFileSync(demo.sessionFile), before, "the replay never modifies the session file");
	const [session] = JSON.parse(result.stdout).sessions;
	const [branch] = session.branches;
	assertReplayedAsLive(branch, "the demo", session.systemPromptRecorded);
	// Every mechanism acted in the demo, and the replay sees each one do so.
	assert.ok(branch.solPi.steps[1].tokensRemoved > 0 && branch.solPi.steps[3].modelCalls === 1, JSON.stringify(branch.solPi.steps));
	assert.ok(branch.fusion.fused >= 1 && branch.reducer.receipts === 1, JSON.stringify([branch.fusion, branch.reducer]));
	// The text form names the session and puts the policies side by side.
	const text = npmReplay(demo.sessionFile);
	assert.equal(text.status, 0, text.stderr);
	assert.match(text.stdout, /^Policies side by side:$/m);
	assert.match(text.stdout, /^Masking \(last 10 outputs\) /m);
});

/**
 * A scratch copy of the run: SoL-Pi's folder copied, the session file's text pointing at
 * the copy (receipts resealed, so only what a test alters differs), the originals copied.
 * `alter(text)` may change the session file's text first.
 */
function scratchCopy(t, alter = (text) => text) {
	const scratch = fs.mkdtempSync(path.join(demo.root, "scratch-"));
	t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
	const runtimeRoot = path.join(scratch, "sol-pi");
	fs.cpSync(demo.runtimeRoot, runtimeRoot, { recursive: true });
	const moved = parseSession(fs.readFileSync(demo.sessionFile, "utf8").replaceAll(JSON.stringify(demo.runtimeRoot).slice(1, -1), runtimeRoot));
	reseal(moved);
	const text = alter([moved.header, ...moved.entries].map((e) => JSON.stringify(e)).join("\n"));
	const copy = parseSession(text);
	const originals = new Map([...demo.originals].map(([id, o]) => [id, { ...o }]));
	const evidence = { ...demo, runtimeRoot, originals, reducerCalls: demo.reducerCalls.map((c) => ({ ...c })) };
	return { session: copy, evidence, runtimeRoot, reseal: () => reseal(copy) };
}

/** Sets each replaced result's receipt hash and size, in its details and journal, to its receipt text's. */
function reseal(copy) {
	for (const entry of copy.entries) {
		const summary = entry.message?.details?.evidencePreservingReducer;
		if (!summary) continue;
		const text = textOf(entry.message);
		const receipt = text.slice(text.indexOf("sol_pi_evidence_receipt_v1\n"), text.lastIndexOf("\n\nCommand exited with code"));
		summary.receiptSha256 = sha256(receipt);
		summary.receiptBytes = Buffer.byteLength(receipt);
		for (const record of copy.entries) {
			if (record.customType === REDUCER_ENTRY && record.data.kind === "applied" && record.data.toolCallId === entry.message.toolCallId) record.data.receiptSha256 = summary.receiptSha256;
		}
	}
}

const FIRST_QUOTE = /^- kind=failure line=(\d+) quote_sha256=[0-9a-f]{64} quote=(".*")$/m;
const problemsOf = (name, copy) => DEMO_CHECKS[name](copy.session, copy.evidence).problems;
const messageOf = (copy, id) => copy.session.branch.find((e) => e.message?.toolCallId === id).message;
const flipByte = (file, at) => {
	const bytes = fs.readFileSync(file);
	bytes[at] ^= 0x01;
	fs.writeFileSync(file, bytes);
};

test(`Pi ${piVersion}: each check fails on a tampered copy of the run, and passes on an untouched one`, (t) => {
	const untouched = scratchCopy(t);
	for (const name of Object.keys(DEMO_CHECKS)) assert.deepEqual(problemsOf(name, untouched), [], `${name} on the untouched copy`);

	// ObservationPack: one flipped byte in an archive; an archive whose result the session lost.
	const search = observationId("bash", textOf(toolResult("search-1")));
	const flipped = scratchCopy(t);
	flipByte(path.join(flipped.runtimeRoot, "observation-pack", "objects", `${search}.txt`), 5000);
	assert.deepEqual(problemsOf("observationArchives", flipped), [`${search}: the archive is not the bash result search-1 of the session (byte 5000 differs)`]);
	assert.deepEqual(problemsOf("observationArchives", { ...flipped, evidence: { ...flipped.evidence, runtimeRoot: path.join(flipped.runtimeRoot, "gone") } }), [
		`no SoL-Pi folder at ${path.join(flipped.runtimeRoot, "gone")}`,
	]);
	const lost = scratchCopy(t);
	messageOf(lost, "search-1").content[0].text += " ";
	assert.deepEqual(problemsOf("observationArchives", lost), [`${search}: no tool result on the branch has this id`]);

	// obs_recall: one byte of a page; a match's byte offset.
	const page = scratchCopy(t);
	const recalled = messageOf(page, "recall-1").content[0];
	recalled.text = `${recalled.text.slice(0, -2)}X${recalled.text.slice(-1)}`;
	const { offset, nextOffset, bytes } = messageOf(page, "recall-1").details;
	assert.deepEqual(problemsOf("recalls", page), [`recall-1: the page is not bytes ${offset}..${nextOffset} of the original (byte ${bytes - 2} differs)`]);
	const query = scratchCopy(t);
	const match = messageOf(query, "recall-query");
	const at = match.details.matches[0].byteOffset;
	match.details.matches[0].byteOffset = at + 1;
	match.content[0].text = match.content[0].text.replace(` byte ${at}: `, ` byte ${at + 1}: `);
	assert.deepEqual(problemsOf("recalls", query), [`recall-query: row 1: the query is not at byte ${at + 1} of the original`]);

	// Reducer: a quote that names the next line; a changed line in the archived log; an original that differs.
	const quote = scratchCopy(t, (text) => text.replace(/(\\n- kind=failure line=)(\d+)/, (_, head, line) => `${head}${Number(line) + 1}`));
	quote.reseal();
	const [, line, quoted] = FIRST_QUOTE.exec(textOf(messageOf(quote, "test-1")));
	assert.deepEqual(problemsOf("reducerReceipts", quote), [`test-1: the quote ${quoted} is not line ${line} of the archived log`]);
	const log = scratchCopy(t);
	const artifact = /^source_artifact=(.+)$/m.exec(textOf(messageOf(log, "test-1")))[1];
	assert.ok(artifact.startsWith(log.runtimeRoot), artifact);
	const logText = fs.readFileSync(artifact, "utf8");
	const [, logLine, logQuoted] = FIRST_QUOTE.exec(textOf(messageOf(log, "test-1")));
	const logLines = logText.split("\n");
	logLines[Number(logLine) - 1] += "?";
	fs.writeFileSync(artifact, logLines.join("\n"));
	const logProblems = problemsOf("reducerReceipts", log);
	assert.ok(logProblems.includes(`test-1: the quote ${logQuoted} is not line ${logLine} of the archived log`), logProblems.join("\n"));
	assert.ok(logProblems.some((p) => p.startsWith("test-1: the receipt has source_sha256=")), logProblems.join("\n"));
	const original = scratchCopy(t);
	const raw = original.evidence.originals.get("test-1");
	raw.text = raw.text.replace("FAIL: ", "FAIL:  ");
	assert.deepEqual(problemsOf("reducerReceipts", original), [`test-1: the archived log is not the command's output (byte ${Buffer.from(logText).indexOf("FAIL: ") + 6} differs)`]);

	// Requests: one agent request more than the branch shows; a reducer request the journal does not have.
	const more = scratchCopy(t);
	more.evidence.agentRequests += 1;
	assert.deepEqual(problemsOf("requestCounts", more), [
		`${demo.agentRequests} answered assistant messages on the branch, ${demo.agentRequests + 1} agent requests`,
		`${demo.agentRequests + 1} + 1 requests, but the faux provider counted ${demo.fauxCallCount}`,
	]);
	const extra = scratchCopy(t);
	extra.evidence.reducerCalls.push({ ...extra.evidence.reducerCalls[0] });
	assert.deepEqual(problemsOf("requestCounts", extra), ["1 reducer responses in the journal, 2 reducer requests"]);

	// Savings: a table that is not the session's totals; totals that count one request too many.
	const shown = scratchCopy(t);
	shown.evidence.savingsTable = shown.evidence.savingsTable.replace(/^(ObservationPack +-?\d+ +-?)(\d)/m, (_, head, digit) => `${head}${(Number(digit) + 1) % 10}`);
	assert.equal(problemsOf("savingsTable", shown).length, 2, problemsOf("savingsTable", shown).join("\n"));
	assert.match(problemsOf("savingsTable", shown)[0], /^\/sol-pi showed another table than the session's totals give/);
	assert.match(problemsOf("savingsTable", shown)[1], /^the rows save \d+ input tokens, the total \d+$/);
	const counted = scratchCopy(t);
	const totals = counted.session.branch.filter((e) => e.customType === "sol-pi-savings-totals").at(-1);
	totals.data.layers[4].requests += 1;
	assert.ok(problemsOf("savingsTable", counted).includes(`${demo.agentRequests + 1} requests counted as sent, ${demo.agentRequests} agent requests answered`), problemsOf("savingsTable", counted).join("\n"));
	const archived = scratchCopy(t);
	archived.session.branch.filter((e) => e.customType === "sol-pi-savings-totals").at(-1).data.archive.archivedBytes -= 1;
	assert.equal(problemsOf("savingsTable", archived).filter((p) => p.startsWith("the totals count")).length, 1);
});

test("the session file reader follows the parent links of the newest entry and names what it cannot read", () => {
	const header = JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" });
	const entry = (id, parentId) => JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: id } });
	// b and c are both children of a; c is newer, so the branch is a, c.
	const forked = parseSession([header, entry("a", null), entry("b", "a"), entry("c", "a"), ""].join("\n"));
	assert.equal(forked.header.id, "s");
	assert.deepEqual(forked.entries.map((e) => e.id), ["a", "b", "c"]);
	assert.deepEqual(forked.branch.map((e) => e.id), ["a", "c"]);
	assert.deepEqual(parseSession(header).branch, []);
	assert.throws(() => parseSession([header, "{not json"].join("\n"), "f.jsonl"), /^Error: f\.jsonl:2: not a JSON line/);
	assert.throws(() => parseSession(entry("a", null), "f.jsonl"), /^Error: f\.jsonl:1: not a session header$/);
	assert.throws(() => parseSession([header, entry("a", null), entry("a", null)].join("\n"), "f.jsonl"), /^Error: f\.jsonl:3: the id a is used twice$/);
	assert.throws(() => parseSession([header, entry("b", "x")].join("\n"), "f.jsonl"), /^Error: f\.jsonl: b names the parent x, which is not in the file$/);
	assert.throws(() => parseSession([header, entry("a", "b"), entry("b", "a")].join("\n"), "f.jsonl"), /^Error: f\.jsonl: the parent links loop at b$/);
});

test(`Pi ${piVersion}: the --tui models drive the real pi CLI through the same task (run as pi -p here), and its archives and recalls check out`, (t) => {
	const cli = cliDemo({ print: true });
	t.after(() => fs.rmSync(cli.root, { recursive: true, force: true }));
	const result = spawnSync(cli.command, cli.args, { cwd: cli.cwd, env: cli.env, encoding: "utf8", timeout: 120_000 });
	assert.equal(result.status, 0, result.stderr);
	assert.equal(result.stdout.trim(), FINAL_ANSWER, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
	assert.doesNotMatch(result.stderr, /Extension error|SoL-Pi/, result.stderr);
	const [file, ...more] = cli.sessionFiles();
	assert.deepEqual(more, []);
	const cliEntries = fs.readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line));
	const kinds = cliEntries.filter((e) => e.type === "custom" && e.customType === REDUCER_ENTRY).map((e) => e.data.kind);
	assert.deepEqual(kinds, ["candidate", "provider_response", "applied"]);
	assert.equal(cliEntries.filter((e) => e.type === "compaction").length, 1);
	const recalled = cliEntries.some((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolName === "obs_recall" && !e.message.isError);
	assert.ok(recalled, "obs_recall found the packed search output");
	// The CLI run's archives and recalls check out against its own session file too.
	const cliSession = readSessionFile(file);
	const where = addon.runtimeRoot({ sessionDir: cli.sessionDir, sessionId: cliSession.header.id, tempDir: os.tmpdir() });
	assert.equal(where.kind, "root", JSON.stringify(where));
	const archives = DEMO_CHECKS.observationArchives(cliSession, { runtimeRoot: where.root });
	assert.deepEqual(archives.problems, []);
	assert.equal(archives.checked.length, 2);
	const recalls = DEMO_CHECKS.recalls(cliSession);
	assert.deepEqual(recalls.problems, []);
	assert.deepEqual(recalls.checked, ["recall-query", "recall-0", "recall-1"]);
	assert.ok(fs.readFileSync(path.join(cli.cwd, "shop", "pricing.py"), "utf8").includes(FIXED_LINE));
	assert.equal(spawnSync("python3", ["-m", "unittest"], { cwd: cli.cwd }).status, 0);
});

// Pi's faux provider before 1.6 reports the uncached part of a prompt both as input and as
// cache write, and puts the tools after the messages, so no request's tools are read from
// its cache: its bill is not one a real provider sends, and the long demo is measured
// against the faux provider of Pi 1.6 and later only.
const billLikeProvider = (() => {
	const [major, minor] = piVersion.split(".").map(Number);
	return major > 1 || (major === 1 && minor >= 6);
})();

test(`Pi ${piVersion}: the long demo's /sol-pi net saving is within 5 % of the difference of the two provider bills`, { skip: !billLikeProvider && `Pi ${piVersion}'s faux provider counts uncached input twice` }, async () => {
	const shown = [];
	const long = await runLongDemo({ log: (line) => shown.push(line), keep: false });
	const text = shown.join("\n");
	// The bills, summed here from every usage the two files report.
	const dollars = (usage) => (usage.input * 3 + usage.cacheRead * 0.3 + usage.cacheWrite * 3.75 + usage.output * 15) / 1e6;
	const bill = (branch) => {
		let sum = 0;
		for (const entry of branch) {
			const usage = entry.type === "message" && entry.message.role === "assistant" ? entry.message.usage : entry.type === "compaction" ? entry.usage : entry.type === "custom" && entry.data?.kind === "provider_response" ? entry.data.usage : undefined;
			if (usage) sum += dollars(usage);
		}
		return sum;
	};
	const { comparison } = long;
	assert.ok(Math.abs(comparison.plain.dollars - bill(long.plainEntries)) < 1e-9, "the plain bill is the sum of its reports");
	assert.ok(Math.abs(comparison.solPi.dollars - bill(long.solPiEntries)) < 1e-9, "the SoL-Pi bill is the sum of its reports");
	assert.ok(!long.plainEntries.some((entry) => entry.type === "custom" && entry.customType?.startsWith("sol-pi")), "the plain recording ran without SoL-Pi");
	assert.match(text, /^SoL-Pi savings for this session/m);
	assert.match(text, new RegExp(`^/sol-pi net: +\\$${comparison.net.toFixed(4).replace(".", "\\.")} `, "m"));
	assert.ok(comparison.difference > 0, `SoL-Pi's bill is lower on the long task (${comparison.difference})`);
	assert.ok(Math.abs(comparison.off) <= 5, `the net saving $${comparison.net} is within 5 % of the bills' difference $${comparison.difference} (${comparison.off.toFixed(1)} %)`);
	assert.ok(!fs.existsSync(long.root), "the recordings' folder is removed");
});

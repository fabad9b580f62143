// The demo (scripts/demo.mjs) on the Pi install under test, checked against its own
// session file and SoL-Pi's archives: what was archived is the real output, what was
// recalled is the original, every receipt quote is a line of the archived log, the
// requests the session recorded are the ones the faux provider answered, and the fix
// really landed. The --tui models also drive the real `pi` CLI (as `pi -p`) to the same end.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, test } from "node:test";

import { piVersion } from "./support.mjs";
import { FIXED_LINE } from "../../scripts/demo/project.mjs";
import { QUERY, REDUCER_ENTRY, SEARCH_COMMAND, TEST_COMMAND, cliDemo, placeholderId, runDemo } from "../../scripts/demo.mjs";
import { FINAL_ANSWER } from "../../scripts/demo/script.mjs";

const sha256 = (text) => createHash("sha256").update(text).digest("hex");
const textOf = (m) => (typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join("\n"));
const RECALL_HEADER = /^\[obs_recall id=(\S+) offset=(\d+) next_offset=(\d+) eof=(true|false)\]\n\[chunk_bytes=\d+ chunk_lines=\d+; use next_offset to continue\]\n/;

let demo;
let lines;
let entries;
const toolResult = (id) => entries.find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolCallId === id)?.message;

before(async () => {
	lines = [];
	demo = await runDemo({ log: (line) => lines.push(line) });
	entries = fs.readFileSync(demo.sessionFile, "utf8").trim().split("\n").map((line) => JSON.parse(line));
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
	assert.equal(lines.length, expected.length, lines.join("\n"));
	expected.forEach((pattern, i) => assert.match(lines[i], pattern));
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

test(`Pi ${piVersion}: the --tui models drive the real pi CLI through the same task (run as pi -p here)`, (t) => {
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
	assert.ok(fs.readFileSync(path.join(cli.cwd, "shop", "pricing.py"), "utf8").includes(FIXED_LINE));
	assert.equal(spawnSync("python3", ["-m", "unittest"], { cwd: cli.cwd }).status, 0);
});

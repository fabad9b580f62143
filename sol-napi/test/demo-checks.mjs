// Checks of a demo run against its own session file (read with session-file.mjs) and
// SoL-Pi's files under the session's runtime root. Every check has the same form:
// `check(session, evidence)` returns `{ checked, problems }`, where `checked` names what it
// looked at and `problems` lists, one string each, everything that does not hold (empty
// when all holds). `evidence` is what the run knows besides the file:
//   runtimeRoot      SoL-Pi's folder of the session (`<sessionDir>/sol-pi/<sessionId>`)
//   originals        Map toolCallId -> { text, details }: each tool result as the tool
//                    returned it, before any SoL-Pi handler saw it
//   agentRequests    requests the agent's faux provider answered as the agent
//   summaryRequests  requests it answered as Pi's compaction summarizer
//   fauxCallCount    the faux provider's own count of the requests it received
//   reducerCalls     the requests the reducer's faux provider received ({ sha, log })
//   savingsTable     the table `/sol-pi` showed at the end of the run
// `DEMO_CHECKS` lists them; `checkDemo` runs them all.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";

import { customEntries, messagesOf, textOf } from "./session-file.mjs";

export const REDUCER_ENTRY = "sol-pi-evidence-preserving-reducer-v1";
const RECEIPT_MARKER = "sol_pi_evidence_receipt_v1\n";
const PAGE_HEADER = /^\[obs_recall id=(\S+) offset=(\d+) next_offset=(\d+) eof=(true|false)\]\n\[chunk_bytes=(\d+) chunk_lines=(\d+); use next_offset to continue\]\n/;
const QUERY_HEADER = /^\[obs_recall id=(\S+) query=("(?:[^"\\]|\\.)*") offset=(\d+) next_offset=(\d+) eof=(true|false) matches=(\d+)\]\n\[scanned_bytes=(\d+); [^\n]*\]\n?/;
const MATCH_ROW = /^line (\d+) byte (\d+): (".*")$/;
const STATUS_LINE = /^Command exited with code \d+$/;

export const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

/** Lines as SoL-Pi counts them: LF characters, plus one for a last line without an LF. */
export const countLines = (bytes) => {
	const feeds = bytes.reduce((n, byte) => n + (byte === 0x0a ? 1 : 0), 0);
	return bytes.length === 0 || bytes.at(-1) === 0x0a ? feeds : feeds + 1;
};

/** ObservationPack's id of a tool result: `obs_` and 24 hex digits of sha256(tool NUL sha256(text)). */
export const observationId = (toolName, text) => `obs_${sha256(`${toolName}\0${sha256(Buffer.from(text))}`).slice(0, 24)}`;

/** Where two byte strings first differ, for a problem's text. */
function firstDifference(a, b) {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) if (a[i] !== b[i]) return `byte ${i} differs`;
	return `${a.length} bytes against ${b.length}`;
}

/** The tool results on the branch, each with the observation id its text has. */
function observedResults(session) {
	const byId = new Map();
	for (const message of messagesOf(session.branch, "toolResult")) {
		const id = observationId(message.toolName, textOf(message));
		if (!byId.has(id)) byId.set(id, message);
	}
	return byId;
}

const readJsonLines = (file) =>
	fs
		.readFileSync(file, "utf8")
		.split("\n")
		.filter((line) => line.trim() !== "")
		.map((line) => JSON.parse(line));

/**
 * Every ObservationPack archive: its bytes equal the tool result on the branch whose text
 * has the archive's id, byte for byte; its record agrees with it; every id the ledger
 * placed a placeholder for has an archive.
 */
export function checkObservationArchives(session, { runtimeRoot }) {
	const problems = [];
	const checked = [];
	if (typeof runtimeRoot !== "string" || !fs.existsSync(runtimeRoot)) return { checked, problems: [`no SoL-Pi folder at ${runtimeRoot}`] };
	const storage = path.join(runtimeRoot, "observation-pack");
	const objects = path.join(storage, "objects");
	const names = fs.existsSync(objects) ? fs.readdirSync(objects).filter((name) => name.endsWith(".txt")).sort() : [];
	const results = observedResults(session);
	for (const name of names) {
		const id = name.slice(0, -".txt".length);
		checked.push(id);
		const archived = fs.readFileSync(path.join(objects, name));
		const result = results.get(id);
		if (!result) {
			problems.push(`${id}: no tool result on the branch has this id`);
			continue;
		}
		const original = Buffer.from(textOf(result));
		if (!archived.equals(original)) problems.push(`${id}: the archive is not the ${result.toolName} result ${result.toolCallId} of the session (${firstDifference(archived, original)})`);
		let record;
		try {
			record = JSON.parse(fs.readFileSync(path.join(objects, `${id}.json`), "utf8"));
		} catch (error) {
			problems.push(`${id}: no readable record (${error.message})`);
			continue;
		}
		const expected = { id, tool: result.toolName, contentHash: sha256(original), bytes: original.length, lines: countLines(original) };
		for (const [key, value] of Object.entries(expected)) {
			if (record[key] !== value) problems.push(`${id}: its record has ${key}=${JSON.stringify(record[key])}, the session's result ${JSON.stringify(value)}`);
		}
	}
	const ledger = path.join(storage, "ledger.jsonl");
	const placed = fs.existsSync(ledger) ? [...new Set(readJsonLines(ledger).filter((r) => r.event === "placeholder").map((r) => r.id))] : [];
	for (const id of placed) if (!checked.includes(id)) problems.push(`${id}: the ledger placed a placeholder for it, but it has no archive`);
	return { checked, problems };
}

/**
 * Every `obs_recall` result on the branch: a page is the original's bytes from `offset`
 * to `next_offset`; a query page's matches are at the bytes it names, on the lines it
 * names, and each context is a part of that line of the original.
 */
export function checkRecalls(session) {
	const problems = [];
	const checked = [];
	const results = observedResults(session);
	for (const message of messagesOf(session.branch, "toolResult")) {
		if (message.toolName !== "obs_recall" || message.isError) continue;
		const name = message.toolCallId;
		checked.push(name);
		const text = textOf(message);
		const details = message.details ?? {};
		const source = results.get(details.id);
		if (!source) {
			problems.push(`${name}: recalls ${details.id}, which no tool result on the branch has`);
			continue;
		}
		const original = Buffer.from(textOf(source));
		const fail = (what) => problems.push(`${name}: ${what}`);
		if (typeof details.query === "string") checkQueryPage(text, details, original, fail);
		else checkPage(text, details, original, fail);
	}
	return { checked, problems };
}

function checkPage(text, details, original, fail) {
	const header = PAGE_HEADER.exec(text);
	if (!header) return fail("not a recall page");
	const [, id, offset, next, eof, chunkBytes, chunkLines] = header;
	const [from, to] = [Number(offset), Number(next)];
	const body = Buffer.from(text.slice(header[0].length));
	const slice = original.subarray(from, to);
	if (id !== details.id) fail(`its header names ${id}, its details ${details.id}`);
	if (from !== details.offset || to !== details.nextOffset) fail(`its header has ${from}..${to}, its details ${details.offset}..${details.nextOffset}`);
	if (!body.equals(slice)) fail(`the page is not bytes ${from}..${to} of the original (${firstDifference(body, slice)})`);
	if (Number(chunkBytes) !== body.length || Number(chunkLines) !== countLines(body)) fail(`chunk_bytes=${chunkBytes} chunk_lines=${chunkLines} for a page of ${body.length} bytes, ${countLines(body)} lines`);
	if ((eof === "true") !== (to === original.length)) fail(`eof=${eof} with next_offset ${to} of ${original.length} bytes`);
}

function checkQueryPage(text, details, original, fail) {
	const header = QUERY_HEADER.exec(text);
	if (!header) return fail("not a query page");
	const [, id, quoted, , , , count] = header;
	if (id !== details.id) fail(`its header names ${id}, its details ${details.id}`);
	if (JSON.parse(quoted) !== details.query) fail(`its header's query ${quoted} is not the query of its details`);
	const rows = text.slice(header[0].length).split("\n").filter((row) => row !== "");
	const matches = details.matches ?? [];
	if (rows.length !== Number(count) || matches.length !== rows.length) fail(`matches=${count}, ${rows.length} rows, ${matches.length} in its details`);
	const query = Buffer.from(details.query);
	rows.forEach((row, i) => {
		const parsed = MATCH_ROW.exec(row);
		const match = matches[i];
		if (!parsed || !match) return fail(`row ${i + 1} is not a match: ${row}`);
		const [line, at, context] = [Number(parsed[1]), Number(parsed[2]), JSON.parse(parsed[3])];
		if (line !== match.line || at !== match.byteOffset || context !== match.context) fail(`row ${i + 1} is not its details' match`);
		if (!original.subarray(at, at + query.length).equals(query)) fail(`row ${i + 1}: the query is not at byte ${at} of the original`);
		const lineOf = original.subarray(0, at).reduce((n, byte) => n + (byte === 0x0a ? 1 : 0), 1);
		if (line !== lineOf) fail(`row ${i + 1}: byte ${at} is on line ${lineOf}, not ${line}`);
		// The context is the part of the match's own line(s) that the text names.
		const lineStart = at === 0 ? 0 : original.lastIndexOf(0x0a, at - 1) + 1;
		const lastLineEnd = original.indexOf(0x0a, at + Math.max(query.length, 1) - 1);
		const lineEnd = lastLineEnd === -1 ? original.length : lastLineEnd;
		const { contextStart: start, contextEnd: end } = match;
		if (!(lineStart <= start && start <= at && at + query.length <= end && end <= lineEnd)) fail(`row ${i + 1}: the context ${start}..${end} is not within its line ${lineStart}..${lineEnd}`);
		else if (!original.subarray(start, end).equals(Buffer.from(context))) fail(`row ${i + 1}: the context is not bytes ${start}..${end} of the original`);
	});
}

/** The receipt text inside a replaced result: from its first line to its `readback=` line. */
function receiptIn(text) {
	const start = text.indexOf(RECEIPT_MARKER);
	if (start === -1) return undefined;
	const readback = text.indexOf("\nreadback=", start);
	if (readback === -1) return undefined;
	const end = text.indexOf("\n", readback + 1);
	return text.slice(start, end === -1 ? text.length : end);
}

/** Pi's `Command exited with code N` line and the log before it, as the reducer splits them. */
export function splitStatusLine(text) {
	const trimmed = text.replace(/[\r\n]+$/, "");
	const lineStart = trimmed.lastIndexOf("\n") + 1;
	const line = trimmed.slice(lineStart).replace(/\r$/, "");
	const before = trimmed.slice(0, lineStart);
	const separator = ["\r\n\r\n", "\n\n", "\n\r\n"].find((s) => before.endsWith(s));
	if (!STATUS_LINE.test(line) || !separator) return { log: text, status: undefined };
	return { log: before.slice(0, -separator.length), status: line };
}

/**
 * Every result on the branch the reducer replaced: the receipt's figures are the archived
 * log's, every quote is the line of the archived log it names, the journal records agree,
 * and the archived log is the command's real output (the result text before SoL-Pi, less
 * Pi's status line, or Pi's full-output file when the reducer read that).
 */
export function checkReducerReceipts(session, { originals = new Map() } = {}) {
	const problems = [];
	const checked = [];
	const journal = customEntries(session.branch, REDUCER_ENTRY).map((e) => e.data);
	for (const message of messagesOf(session.branch, "toolResult")) {
		const summary = message.details?.evidencePreservingReducer;
		if (!summary) continue;
		const name = message.toolCallId;
		checked.push(name);
		const fail = (what) => problems.push(`${name}: ${what}`);
		const receipt = receiptIn(textOf(message));
		if (receipt === undefined) {
			fail("no receipt in the replaced result");
			continue;
		}
		const field = (key) => new RegExp(`^${key}=(.*)$`, "m").exec(receipt)?.[1];
		if (sha256(receipt) !== summary.receiptSha256 || Buffer.byteLength(receipt) !== summary.receiptBytes) fail("the receipt is not the one its details name");
		const artifact = field("source_artifact");
		let log;
		try {
			log = fs.readFileSync(artifact);
		} catch (error) {
			fail(`the archived log cannot be read (${error.message})`);
			continue;
		}
		const facts = { source_sha256: sha256(log), source_bytes: String(log.length), source_lines: String(countLines(log)) };
		for (const [key, value] of Object.entries(facts)) if (field(key) !== value) fail(`the receipt has ${key}=${field(key)}, the archived log ${value}`);
		if (summary.sourceSha256 !== facts.source_sha256) fail("its details name another log");

		const logLines = log.toString("utf8").split("\n");
		const quotes = [...receipt.matchAll(/^- kind=(\w+) line=(\d+) quote_sha256=([0-9a-f]{64}) quote=(".*")$/gm)];
		if (quotes.length !== summary.evidenceCount) fail(`${quotes.length} quotes, ${summary.evidenceCount} in its details`);
		for (const [, , line, quoteSha, quoted] of quotes) {
			const quote = JSON.parse(quoted);
			if (logLines[Number(line) - 1] !== quote) fail(`the quote ${quoted} is not line ${line} of the archived log`);
			if (sha256(quote) !== quoteSha) fail(`the quote ${quoted} does not have its quote_sha256`);
		}

		const records = journal.filter((r) => r.toolCallId === name);
		const candidate = records.find((r) => r.kind === "candidate");
		const applied = records.find((r) => r.kind === "applied");
		const response = records.find((r) => r.kind === "provider_response");
		if (!candidate || !applied) fail(`its journal has ${records.map((r) => r.kind).join(", ") || "no records"}`);
		else {
			if (candidate.sourceSha256 !== facts.source_sha256 || candidate.sourceBytes !== log.length || candidate.sourceLines !== countLines(log)) fail("the journal's candidate is not the archived log");
			if (candidate.sourcePath !== artifact) fail(`the journal's candidate names ${candidate.sourcePath}`);
			if (candidate.isError !== message.isError) fail("the journal's candidate has another error flag");
			if (applied.receiptSha256 !== summary.receiptSha256 || applied.evidenceCount !== quotes.length || applied.sourceSha256 !== facts.source_sha256) fail("the journal's applied record is not this receipt");
			if (!applied.cacheHit && (response?.provider !== field("reducer_provider") || response?.model !== field("reducer_model"))) fail("the journal's provider response is not from the receipt's reducer");
		}

		const original = originals.get(name);
		if (!original) {
			fail("the tool's original output is not known");
			continue;
		}
		const fullOutputPath = original.details?.fullOutputPath;
		if (candidate?.sourceOrigin === "fullOutputFile") {
			const full = typeof fullOutputPath === "string" && fs.existsSync(fullOutputPath) ? fs.readFileSync(fullOutputPath) : undefined;
			if (!full?.equals(log)) fail(`the archived log is not Pi's full-output file ${fullOutputPath}`);
			continue;
		}
		const { log: realLog, status } = message.toolName === "bash" ? splitStatusLine(original.text) : { log: original.text };
		const real = Buffer.from(realLog);
		if (!real.equals(log)) fail(`the archived log is not the command's output (${firstDifference(log, real)})`);
		if (status !== undefined && !textOf(message).endsWith(`\n\n${status}`)) fail(`the replaced result lost Pi's status line ${status}`);
	}
	return { checked, problems };
}

/** An assistant message a provider answered (not one Pi wrote for a request it never sent). */
const answered = (message) => ["stop", "toolUse", "length"].includes(message.stopReason);

/**
 * The requests: every agent request the faux provider answered is an assistant message on
 * the branch and every summarizer request a compaction; the provider counted both; every
 * request the reducer model received is a provider response in the journal, for the log
 * the journal's candidate names.
 */
export function checkRequestCounts(session, { agentRequests, summaryRequests, fauxCallCount, reducerCalls = [] }) {
	const problems = [];
	const replies = messagesOf(session.branch, "assistant").filter(answered).length;
	const compactions = session.branch.filter((e) => e.type === "compaction").length;
	if (replies !== agentRequests) problems.push(`${replies} answered assistant messages on the branch, ${agentRequests} agent requests`);
	if (compactions !== summaryRequests) problems.push(`${compactions} compactions on the branch, ${summaryRequests} summarizer requests`);
	if (agentRequests + summaryRequests !== fauxCallCount) problems.push(`${agentRequests} + ${summaryRequests} requests, but the faux provider counted ${fauxCallCount}`);
	const journal = customEntries(session.branch, REDUCER_ENTRY).map((e) => e.data);
	const responses = journal.filter((r) => r.kind === "provider_response");
	if (responses.length !== reducerCalls.length) problems.push(`${responses.length} reducer responses in the journal, ${reducerCalls.length} reducer requests`);
	responses.forEach((response, i) => {
		const candidate = journal.find((r) => r.kind === "candidate" && r.toolCallId === response.toolCallId);
		if (reducerCalls[i] && (reducerCalls[i].sha !== response.sourceSha256 || candidate?.sourceSha256 !== response.sourceSha256)) problems.push(`reducer request ${i + 1} was for another log than the journal's ${response.toolCallId}`);
	});
	return { checked: [`agent replies: ${replies}`, `compactions: ${compactions}`, `reducer responses: ${responses.length}`], problems };
}

export const SAVINGS_ENTRY = "sol-pi-savings-totals";
const addon = () => createRequire(import.meta.url)("../index.js");
const ROW = /^(Action Fusion|ObservationPack|Evidence-Preserving Reducer|Online Context Compact|Total) +(-?[\d,]+) +(-?[\d,]+) +(-?\$[\d.]+) +(-?\$[\d.]+) +(-?\$[\d.]+)$/;
const count = (text) => Number(text.replaceAll(",", ""));
const dollars = (text) => Number(text.replace("$", ""));

/**
 * The savings: the table `/sol-pi` showed is the one the branch's newest totals entry gives
 * (the live figures are the persisted ones); it counts the requests the provider answered;
 * its rows add up to its total; its tokens are plain Pi's less those sent; its archive
 * figures are the archives on disk and the recalls on the branch.
 */
export function checkSavingsTable(session, { savingsTable, agentRequests, runtimeRoot }) {
	const problems = [];
	const data = customEntries(session.branch, SAVINGS_ENTRY).at(-1)?.data;
	if (!data) return { checked: [], problems: ["no savings totals entry on the branch"] };
	const { table } = addon().savingsViewOfEntry(data);
	if (table !== savingsTable) problems.push(`/sol-pi showed another table than the session's totals give:\n${savingsTable}\n---\n${table}`);
	const [plain, , , , sent] = data.layers;
	if (sent.requests !== agentRequests) problems.push(`${sent.requests} requests counted as sent, ${agentRequests} agent requests answered`);
	const header = /^SoL-Pi savings for this session: ([\d,]+) provider requests sent, ([\d,]+) without SoL-Pi$/m.exec(savingsTable ?? "");
	if (!header || count(header[1]) !== agentRequests) problems.push(`the table does not say ${agentRequests} provider requests sent`);
	const rows = (savingsTable ?? "").split("\n").flatMap((line) => {
		const m = ROW.exec(line);
		return m ? [{ label: m[1], requests: count(m[2]), tokens: count(m[3]), gross: dollars(m[4]), own: dollars(m[5]), net: dollars(m[6]) }] : [];
	});
	const total = rows.find((row) => row.label === "Total");
	const mechanisms = rows.filter((row) => row.label !== "Total");
	if (mechanisms.length !== 4 || !total) problems.push(`the table has ${mechanisms.length} mechanism rows and ${total ? "a" : "no"} total`);
	else {
		const sum = (key) => mechanisms.reduce((n, row) => n + row[key], 0);
		if (sum("tokens") !== total.tokens) problems.push(`the rows save ${sum("tokens")} input tokens, the total ${total.tokens}`);
		if (sum("requests") !== total.requests) problems.push(`the rows save ${sum("requests")} requests, the total ${total.requests}`);
		const inputOf = (layer) => layer.cacheRead + layer.cacheWrite;
		if (total.tokens !== inputOf(plain) - inputOf(sent)) problems.push(`the total saves ${total.tokens} input tokens, plain Pi less sent is ${inputOf(plain) - inputOf(sent)}`);
		if (total.requests !== plain.requests - sent.requests) problems.push(`the total saves ${total.requests} requests, plain Pi less sent is ${plain.requests - sent.requests}`);
		// Each shown amount is rounded to its last digit ($0.0001 below a dollar).
		for (const key of ["gross", "own", "net"]) if (Math.abs(sum(key) - total[key]) > 0.00026) problems.push(`the rows' ${key} adds up to ${sum(key).toFixed(4)}, the total is ${total[key]}`);
		if (Math.abs(total.gross - total.own - total.net) > 0.00016) problems.push(`the total's net ${total.net} is not its saving ${total.gross} less its cost ${total.own}`);
		const bill = /^Priced bill: \$([\d.]+) instead of \$([\d.]+)/m.exec(savingsTable);
		if (!bill || Math.abs(Number(bill[2]) - Number(bill[1]) - total.net) > 0.00016) problems.push(`the priced bill does not fall by the total net ${total.net}`);
	}
	const objects = path.join(runtimeRoot ?? "", "observation-pack", "objects");
	const archives = fs.existsSync(objects) ? fs.readdirSync(objects).filter((name) => name.endsWith(".txt")) : [];
	const archivedBytes = archives.reduce((n, name) => n + fs.statSync(path.join(objects, name)).size, 0);
	if (data.archive.archived !== archives.length || data.archive.archivedBytes !== archivedBytes) {
		problems.push(`the totals count ${data.archive.archived} archives of ${data.archive.archivedBytes} bytes, the disk holds ${archives.length} of ${archivedBytes}`);
	}
	const recalls = messagesOf(session.branch, "toolResult").filter((m) => m.toolName === "obs_recall" && m.isError !== true);
	const recalledBytes = recalls.reduce((n, m) => n + Buffer.byteLength(textOf(m)), 0);
	if (data.archive.recalls !== recalls.length || data.archive.recalledBytes !== recalledBytes) {
		problems.push(`the totals count ${data.archive.recalls} recalls of ${data.archive.recalledBytes} bytes, the branch has ${recalls.length} of ${recalledBytes}`);
	}
	return { checked: [`savings rows: ${rows.length}`, `archives: ${archives.length}`, `recalls: ${recalls.length}`], problems };
}

export const DEMO_CHECKS = {
	observationArchives: checkObservationArchives,
	recalls: checkRecalls,
	reducerReceipts: checkReducerReceipts,
	requestCounts: checkRequestCounts,
	savingsTable: checkSavingsTable,
};

/** Runs every check of `checks`; the result maps each name to its `{ checked, problems }`. */
export function checkDemo(session, evidence, checks = DEMO_CHECKS) {
	return Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, check(session, evidence)]));
}

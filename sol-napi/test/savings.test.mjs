// The savings accounting through a real Pi AgentSession (faux provider): the totals entry
// each turn appends, checked against an independent count of what the provider received;
// the totals kept across a restart; nothing of it reaching the model.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { createRequire } from "node:module";
import { test } from "node:test";

import { messageTokens } from "../sol-pi/request-frame.ts";
import { ai, makeWorkspace, pi, piCliPath, piVersion, repoRoot, startSession, toolCalls, writeJson } from "./support.mjs";

const addon = createRequire(import.meta.url)(path.join(repoRoot, "sol-napi", "index.js"));
const ENTRY = "sol-pi-savings-totals";
// About 38 KB of real bash output.
const BIG = `seq -f "build step %g: compiling a module with a fairly long line of output" 1 600`;

/** Replies that record every request's messages as the provider got them. */
function recording(replies) {
	const requests = [];
	const wrap = (reply) => (context) => {
		// Pi 0.84.2 sends the system prompt apart from the messages; 1.x as the first message.
		const system = context.messages[0]?.role === "system" ? [] : [{ role: "system", content: context.systemPrompt }];
		requests.push(structuredClone([...system, ...context.messages]));
		return typeof reply === "string" ? ai.fauxAssistantMessage(reply) : reply;
	};
	return { requests, replies: replies.map(wrap) };
}

const script = (later) => [toolCalls(["bash", { command: BIG }, "big"]), ...Array.from({ length: later }, (_, i) => toolCalls(["bash", { command: "true" }, `t${i}`])), "done"];

/** The newest totals entry of the session's branch. */
const totals = (session) =>
	session.sessionManager
		.getBranch()
		.filter((entry) => entry.type === "custom" && entry.customType === ENTRY)
		.at(-1)?.data;

/**
 * The provider's bill for `requests` (lists of messages) as the ledger prices it, counted here
 * independently: the messages a request shares from the start with the previous one are a
 * cache read, the rest a cache write; tokens are Pi's estimate of each message.
 */
function layerOf(requests) {
	let previous = [];
	const layer = { requests: 0, cacheRead: 0, cacheWrite: 0 };
	for (const messages of requests) {
		const keys = messages.map((message) => JSON.stringify(message));
		let shared = 0;
		while (shared < keys.length && keys[shared] === previous[shared]) shared++;
		const tokens = messages.map(messageTokens);
		layer.requests++;
		layer.cacheRead += tokens.slice(0, shared).reduce((a, b) => a + b, 0);
		layer.cacheWrite += tokens.slice(shared).reduce((a, b) => a + b, 0);
		previous = keys;
	}
	return layer;
}

const withoutOutput = ({ requests, cacheRead, cacheWrite }) => ({ requests, cacheRead, cacheWrite });

/** The request with these lines taken out of its system message (its content and, on Pi 1.x, its sections), and these tools out of its declarations. */
function withoutPromptLines(messages, lines, tools = []) {
	if (lines.length === 0 && tools.length === 0) return messages;
	const strip = (text) => (typeof text === "string" ? text.split("\n").filter((line) => !lines.includes(line)).join("\n") : text);
	return messages.map((m) => {
		if (m.role !== "system") return m;
		const content = Array.isArray(m.content) ? m.content.map((block) => (block.type === "text" ? { ...block, text: strip(block.text) } : block)) : strip(m.content);
		const sections = m.sections && Object.fromEntries(Object.entries(m.sections).map(([key, text]) => [key, strip(text)]));
		const toolsAdded = Array.isArray(m.toolsAdded) ? m.toolsAdded.filter((tool) => !tools.includes(tool.name)) : undefined;
		return { ...m, content, ...(sections ? { sections } : {}), ...(toolsAdded ? { toolsAdded } : {}) };
	});
}

/** Whether `counted` (a layer of the totals) is `plain`'s requests, each token figure within `slack`. */
function assertPlain(counted, plain, slack, what) {
	assert.equal(counted.requests, plain.requests, `${what}: requests`);
	assert.ok(Math.abs(counted.cacheRead - plain.cacheRead) <= slack, `${what}: cache read ${counted.cacheRead}, plain Pi ${plain.cacheRead}`);
	assert.ok(Math.abs(counted.cacheWrite - plain.cacheWrite) <= slack, `${what}: cache write ${counted.cacheWrite}, plain Pi ${plain.cacheWrite}`);
}

// With Online Context Compact on, the book takes each message's size from its walk of the same request.
for (const [what, config] of [["ObservationPack", { observationPack: true }], ["ObservationPack and Online Context Compact", { observationPack: true, onlineContextCompact: true }]]) test(`Pi ${piVersion}: the totals entry matches an independent count of what the provider received, with and without placeholders (${what} on)`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, ...config });
	const { requests, replies } = recording(script(5));
	const run = await startSession({ ...ws, replies });
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.deepEqual(run.errors, []);
	const data = totals(run.session);
	assert.ok(data, "a totals entry was appended");
	assert.equal(data.version, 1);

	// What plain Pi would have sent: the same requests with every placeholder put back to the original,
	// and without the lines SoL-Pi's tools add to the system prompt (ObservationPack's below its layer, OCC's below its own).
	const original = requests[1].find((m) => m.role === "toolResult" && m.toolCallId === "big");
	const withOriginal = requests.map((messages) => messages.map((m) => (m.role === "toolResult" && m.toolCallId === "big" ? original : m)));
	assert.notDeepEqual(withOriginal, requests, "placeholders were sent");
	const [obs, occ] = [addon.obsTexts(), addon.occTexts()];
	const obsLines = [`- ${obs.toolName}: ${obs.promptSnippet}`];
	const occLines = config.onlineContextCompact ? [`- ${occ.toolName}: ${occ.promptSnippet}`, ...occ.promptGuidelines.map((line) => `- ${line}`)] : [];
	const sentLayer = layerOf(requests);
	const occTools = config.onlineContextCompact ? [occ.toolName] : [];
	const plainLayer = layerOf(withOriginal.map((messages) => withoutPromptLines(messages, [...obsLines, ...occLines], [obs.toolName, ...occTools])));
	const packedLayer = layerOf(requests.map((messages) => withoutPromptLines(messages, occLines, occTools)));
	assert.equal(sentLayer.requests, requests.length);
	assert.ok(plainLayer.cacheWrite < layerOf(withOriginal).cacheWrite, "SoL-Pi's prompt lines were sent");
	// Each mechanism's share of the prompt rounds to whole tokens: up to one per mechanism and request.
	for (const layer of [0, 1]) assertPlain(data.layers[layer], plainLayer, 2 * requests.length, `layer ${layer} is plain Pi`);
	for (const layer of [2, 3]) assertPlain(data.layers[layer], packedLayer, requests.length, `layer ${layer} is as sent but for OCC's prompt lines`);
	assert.deepEqual(withoutOutput(data.layers[4]), sentLayer, "layer 4 is as sent");
	assert.ok(plainLayer.cacheRead + plainLayer.cacheWrite > sentLayer.cacheRead + sentLayer.cacheWrite);
	// The placeholder made the provider write its suffix again: the sent layer has more cache writes than the text alone explains.
	assert.ok(sentLayer.cacheWrite > 0);
	assert.deepEqual(
		data.layers.map((layer) => layer.output),
		Array(5).fill(data.layers[0].output),
		"the output is the same in every layer",
	);
	// The faux provider reports a simulated prompt cache: its figures are kept beside Pi's estimate.
	assert.equal(data.reported.requests, requests.length);
	assert.equal(data.archive.archived, 1);
	assert.equal(data.archive.archivedBytes, Buffer.byteLength(original.content.map((b) => b.text).join("\n")));

	// The table shows the figures of the entry; no mechanism row is missing.
	const view = addon.savingsViewOfEntry(data);
	const input = (layer) => layer.cacheRead + layer.cacheWrite;
	const grouped = (n) => n.toLocaleString("en-US");
	assert.match(view.table, new RegExp(`^ObservationPack +0 +${grouped(input(data.layers[1]) - input(data.layers[2]))} `, "m"));
	for (const label of ["Action Fusion", "Evidence-Preserving Reducer"]) assert.match(view.table, new RegExp(`^${label} +0 +0 +\\$0\\.00`, "m"));
	assert.match(view.table, new RegExp(`^SoL-Pi savings for this session: ${requests.length} provider requests sent, ${requests.length} without SoL-Pi$`, "m"));
	assert.match(view.statusLine, /^SoL-Pi saved \$\d+\.\d+ \(-\d+\.\d % cost, -\d+\.\d % tokens\)$/);

	// The faux provider's simulated cache is rewritten after the placeholder: a break put down to it,
	// found here independently from the usage on the branch.
	const usages = run.session.messages.filter((m) => m.role === "assistant").map((m) => m.usage);
	let expected = 0;
	for (let i = 1; i < usages.length; i++) {
		const previous = usages[i - 1].input + usages[i - 1].cacheRead + usages[i - 1].cacheWrite;
		if (usages[i].cacheRead + Math.max(Math.floor(previous / 20), 64) < previous) expected++;
	}
	assert.ok(expected >= 1, JSON.stringify(usages));
	assert.equal(data.breaks?.breaks, expected, JSON.stringify(data.breaks));
	assert.ok(data.breaks.causes.placement?.breaks >= 1, JSON.stringify(data.breaks));
	assert.match(view.table, /^Cache rewrites the provider billed: \d+ \(\d+ full\), [\d,]+ tokens written again, \$[\d.]+ more than reading them; causes: .*\d+ a SoL-Pi placement/m);

	// Never part of the model's context.
	for (const messages of requests) assert.ok(!JSON.stringify(messages).includes(ENTRY));
});

/** The same steps in a session without SoL-Pi's mechanisms (plain Pi): what the provider received. */
async function plainRun(t, replies) {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1 });
	const recorded = recording(replies);
	const run = await startSession({ ...ws, replies: recorded.replies });
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.deepEqual(run.errors, []);
	return layerOf(recorded.requests);
}

test(`Pi ${piVersion}: the plain side is what plain Pi sent for the same steps: without SoL-Pi's prompt texts and tools, its plan-only turns, and its plan calls beside other work`, async (t) => {
	const steps = (status) => ({ steps: [{ id: "a", goal: "Goal a", status }, { id: "b", goal: "Goal b", status: "pending" }] });
	const work = [toolCalls(["bash", { command: "echo one" }, "b1"]), toolCalls(["bash", { command: "echo two" }, "b2"]), "done"];
	const plain = await plainRun(t, work);

	// Every mechanism that adds to the prompt or tools on, and no work of theirs: only their texts leave.
	const quiet = makeWorkspace(t);
	writeJson(path.join(quiet.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true, observationPack: true, onlineContextCompact: true });
	const alone = recording(work);
	const aloneRun = await startSession({ ...quiet, replies: alone.replies });
	t.after(() => aloneRun.close());
	await aloneRun.session.prompt("go");
	assert.deepEqual(aloneRun.errors, []);
	const aloneData = totals(aloneRun.session);
	assert.deepEqual(withoutOutput(aloneData.layers[4]), layerOf(alone.requests));
	assert.ok(aloneData.layers[4].cacheWrite > plain.cacheWrite + 100, "SoL-Pi's prompt texts were sent");
	// Each mechanism's share of the prompt rounds to whole tokens: up to three per request.
	assertPlain(aloneData.layers[0], plain, 3 * plain.requests, "prompt only");

	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, onlineContextCompact: true });
	const { requests, replies } = recording([
		// A turn plain Pi never makes: the response only calls update_plan.
		toolCalls(["update_plan", steps("in_progress"), "p1"]),
		// Other work in the same response: the request stays, the plan call and its result leave it.
		toolCalls(["bash", { command: "echo one" }, "b1"], ["update_plan", steps("in_progress"), "p2"]),
		...work.slice(1),
	]);
	const run = await startSession({ ...ws, replies });
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.deepEqual(run.errors, []);
	const data = totals(run.session);
	assert.equal(requests.length, 4);
	assert.equal(data.layers[4].requests, 4);
	assert.deepEqual(withoutOutput(data.layers[4]), layerOf(requests));
	// The plan call's message is sized without the call, and the prompt without SoL-Pi's texts: each may round by a token.
	for (const layer of [0, 1, 2, 3]) assertPlain(data.layers[layer], plain, 2 * plain.requests, `layer ${layer}`);
	assert.ok(data.layers[0].output < data.layers[4].output, "the plan turn's output is not plain Pi's");
	const view = addon.savingsViewOfEntry(data);
	assert.match(view.table, /^SoL-Pi savings for this session: 4 provider requests sent, 3 without SoL-Pi$/m);
	assert.match(view.table, /^Online Context Compact +-1 +-\d/m);
});

test(`Pi ${piVersion}: each request is priced at the prices of the model that answered it, from Pi's model registry`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
	const cost = { input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 };
	const faux = ai.fauxProvider({ provider: "sol-faux", models: [{ id: "faux-1", contextWindow: 100000, cost }] });
	const { replies } = recording(script(3));
	faux.setResponses(replies);
	const run = await startSession({ ...ws, faux });
	t.after(() => run.close());
	await run.session.prompt("go");
	assert.deepEqual(run.errors, []);
	const data = totals(run.session);
	assert.deepEqual(Object.keys(data.models), ["sol-faux/faux-1"]);
	const view = addon.savingsViewOfEntry(data);
	assert.match(view.table, /^ {2}sol-faux\/faux-1: input \$10\.00, cache read \$1\.00, cache write \$12\.50, output \$50\.00$/m);
	// Plain Pi's bill, priced here at the model's prices: the table's second figure.
	const [plain] = data.layers;
	const dollars = (plain.cacheRead * cost.cacheRead + plain.cacheWrite * cost.cacheWrite + plain.output * cost.output) / 1e6;
	const bill = /^Priced bill: \$[\d.]+ instead of \$([\d.]+) /m.exec(view.table);
	assert.ok(bill, view.table);
	assert.equal(bill[1], dollars < 1 ? dollars.toFixed(4) : dollars.toFixed(2));
	// Prices given (sol-pi.json's `prices`, replay's) price every model alike.
	const flat = addon.savingsViewOfEntry(data, { input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 });
	assert.doesNotMatch(flat.table, /faux-1/);
	assert.match(flat.table, /^Prices per million tokens: input \$3\.00, cache read \$0\.30, cache write \$3\.75, output \$15\.00;/m);
});

test(`Pi ${piVersion}: a restarted session goes on from its own totals`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
	const sessionDir = path.join(ws.agentDir, "sessions");
	const first = recording(script(3));
	const run = await startSession({ ...ws, replies: first.replies, sessionManager: pi.SessionManager.create(ws.cwd, sessionDir) });
	await run.session.prompt("go");
	const file = run.session.sessionManager.getSessionFile();
	const before = totals(run.session);
	run.close();
	assert.equal(before.layers[4].requests, first.requests.length);

	const second = recording(["again"]);
	const resumed = await startSession({ ...ws, replies: second.replies, sessionManager: pi.SessionManager.open(file, sessionDir) });
	t.after(() => resumed.close());
	await resumed.session.prompt("once more");
	assert.deepEqual(resumed.errors, []);
	const after = totals(resumed.session);
	assert.equal(after.layers[4].requests, first.requests.length + second.requests.length);
	assert.equal(after.layers[0].requests, first.requests.length + second.requests.length);
	assert.ok(after.layers[0].cacheWrite >= before.layers[0].cacheWrite);
	assert.equal(after.archive.archived, before.archive.archived);
	const lines = fs.readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line));
	assert.ok(lines.filter((entry) => entry.customType === ENTRY).length >= 2, "one totals entry per turn that changed them");
});

/** The causes of the cache breaks in the `/sol-pi` table of totals `data`. */
const breakCauses = (data) => /^Cache rewrites the provider billed: .*causes: (.*)$/m.exec(addon.savingsViewOfEntry(data).table)?.[1] ?? "";

test(`Pi ${piVersion}: a prompt 20 minutes after the last message is after the cache lifetime, unless the request asked for long retention`, async (t) => {
	const causes = [];
	for (const retention of [undefined, "long"]) {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
		const run = await startSession({ ...ws, replies: ["first answer", "second answer"] });
		await run.session.prompt("a first question");
		// The conversation so far happened 20 minutes ago, and the provider has lost its cache
		// (the faux provider keys its cache by the session id the agent sends).
		for (const message of run.session.agent.state.messages) {
			if (typeof message.timestamp === "number") message.timestamp -= 20 * 60 * 1000;
		}
		run.session.agent.sessionId = `${run.session.agent.sessionId}-later`;
		const saved = process.env.PI_CACHE_RETENTION;
		if (retention) process.env.PI_CACHE_RETENTION = retention;
		else delete process.env.PI_CACHE_RETENTION;
		try {
			await run.session.prompt("a second question");
		} finally {
			if (saved === undefined) delete process.env.PI_CACHE_RETENTION;
			else process.env.PI_CACHE_RETENTION = saved;
			run.close();
		}
		assert.deepEqual(run.errors, []);
		causes.push(breakCauses(totals(run.session)));
	}
	assert.match(causes[0], /^1 a new prompt after the cache lifetime/);
	assert.match(causes[1], /^1 a new prompt within the cache lifetime/);
});

test(`Pi ${piVersion}: a damaged totals entry is named once and the session goes on from the last good one`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
	const sessionDir = path.join(ws.agentDir, "sessions");
	const first = recording(["hello"]);
	const run = await startSession({ ...ws, replies: first.replies, sessionManager: pi.SessionManager.create(ws.cwd, sessionDir) });
	await run.session.prompt("go");
	const file = run.session.sessionManager.getSessionFile();
	run.session.sessionManager.appendCustomEntry(ENTRY, { version: 99 });
	run.close();

	const stderr = [];
	const write = process.stderr.write;
	process.stderr.write = (chunk, ...rest) => (String(chunk).includes("SoL-Pi") ? (stderr.push(String(chunk)), true) : write.call(process.stderr, chunk, ...rest));
	t.after(() => (process.stderr.write = write));
	const resumed = await startSession({ ...ws, replies: ["again"], sessionManager: pi.SessionManager.open(file, sessionDir) });
	t.after(() => resumed.close());
	await resumed.session.prompt("once more");
	process.stderr.write = write;
	assert.deepEqual(resumed.errors, []);
	assert.deepEqual(stderr, ["SoL-Pi: savings totals not restored from one entry: unsupported SoL-Pi savings entry version 99\n"]);
	assert.equal(totals(resumed.session).layers[4].requests, 2, "the good entry's one request and the new one");
});

test(`Pi ${piVersion}: the real pi CLI in print and JSON modes: /sol-pi shows the table on stderr, stdout has only Pi's own output`, (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.agentDir, "sol-pi.json"), { version: 1, observationPack: true });
	const cli = (prompt, extra = []) =>
		spawnSync(process.execPath, [piCliPath(), "--provider", "sol-faux", "--model", "faux-1", "--no-session", "-e", path.join(repoRoot, "sol-napi", "test", "faux-provider-extension.ts"), "-e", repoRoot, ...extra, "-p", prompt], {
			cwd: ws.cwd,
			env: { ...process.env, PI_CODING_AGENT_DIR: ws.agentDir },
			encoding: "utf8",
			timeout: 120_000,
		});
	const table = cli("/sol-pi");
	assert.equal(table.status, 0, table.stderr);
	assert.equal(table.stdout, "");
	assert.match(table.stderr, /^SoL-Pi savings for this session: 0 provider requests sent, 0 without SoL-Pi$/m);
	for (const label of ["Action Fusion", "ObservationPack", "Evidence-Preserving Reducer", "Online Context Compact", "Total"]) assert.match(table.stderr, new RegExp(`^${label} +0 +0 +\\$0\\.0000`, "m"));
	const answer = cli("hello");
	assert.equal(answer.status, 0, answer.stderr);
	assert.equal(answer.stdout, "faux answer from the CLI\n");
	assert.doesNotMatch(answer.stderr, /SoL-Pi (saved|savings)/);
	// JSON mode: stdout is Pi's event stream, one JSON object a line, with nothing of SoL-Pi's.
	for (const prompt of ["hello", "/sol-pi"]) {
		const json = cli(prompt, ["--mode", "json"]);
		assert.equal(json.status, 0, json.stderr);
		for (const line of json.stdout.split("\n").filter(Boolean)) assert.doesNotThrow(() => JSON.parse(line), line);
		assert.doesNotMatch(json.stdout, /SoL-Pi (saved|savings|: no requests)/);
	}
});

test(`Pi ${piVersion}: an accounting failure is named once and changes nothing else`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
	const { requests, replies } = recording(script(4));
	const stderr = [];
	const write = process.stderr.write;
	process.stderr.write = (chunk, ...rest) => (String(chunk).includes("SoL-Pi") ? (stderr.push(String(chunk)), true) : write.call(process.stderr, chunk, ...rest));
	t.after(() => (process.stderr.write = write));
	const run = await startSession({ ...ws, replies, extensionPath: path.join(repoRoot, "sol-napi", "test", "fixtures", "failing-savings-extension.ts") });
	t.after(() => run.close());
	await run.session.prompt("go");
	process.stderr.write = write;
	assert.deepEqual(run.errors, []);
	assert.equal(run.session.getLastAssistantText(), "done");
	assert.deepEqual(stderr, ["SoL-Pi savings accounting: internal error (deliberate accounting failure); nothing was changed this time and Pi keeps working.\n"]);
	// ObservationPack still placed its placeholder; no totals were written.
	assert.match(JSON.stringify(requests.at(-1)), /large tool result replaced after its first 2 provider requests/);
	assert.equal(totals(run.session), undefined);
});

test(`Pi ${piVersion}: after /tree the totals are those of the branch navigated to`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true });
	const first = recording(script(3));
	const second = recording(["second answer"]);
	const third = recording(["third answer"]);
	const sessionManager = pi.SessionManager.inMemory(ws.cwd);
	const run = await startSession({ ...ws, sessionManager, replies: [...first.replies, ...second.replies, ...third.replies] });
	t.after(() => run.close());
	await run.session.prompt("first");
	const afterFirst = totals(run.session);
	await run.session.prompt("second");
	assert.equal(totals(run.session).layers[4].requests, first.requests.length + second.requests.length);
	// Back to the second prompt's user message: its branch ends with the first prompt's totals.
	const secondUser = sessionManager.getEntries().filter((e) => e.type === "message" && e.message.role === "user")[1];
	await run.session.navigateTree(secondUser.id, { summarize: false });
	assert.deepEqual(totals(run.session), afterFirst);
	await run.session.prompt("third");
	assert.deepEqual(run.errors, []);
	const now = totals(run.session);
	assert.equal(now.layers[4].requests, first.requests.length + third.requests.length, "the abandoned branch's request is not counted");
	assert.equal(now.archive.archived, afterFirst.archive.archived);
});

// Action Fusion through a real Pi AgentSession (faux provider) on the Pi install
// under test: real files, real shells, real concurrent tool calls.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";

import { makeWorkspace, piMajor, piVersion, repoRoot, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

const fixture = (name) => path.join(repoRoot, "sol-napi", "test", "fixtures", name);

function enable(ws, extra = {}) {
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true, ...extra });
}

/** Runs one prompt whose scripted model makes the given tool calls, then answers "done". */
async function runCalls(t, ws, turns, options = {}) {
	const run = await startSession({ ...ws, replies: [...turns, "done"], ...options });
	t.after(() => run.close());
	await run.session.prompt("go");
	return { run, results: toolResults(run.session) };
}

test(`Pi ${piVersion}: edit and write keep Pi's schema and gain an optional then_run`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const run = await startSession(ws);
	t.after(() => run.close());
	assert.deepEqual(run.errors, []);
	assert.deepEqual([...run.solPi.tools.keys()].sort(), ["edit", "write"]);
	for (const name of ["edit", "write"]) {
		const tool = run.session.getToolDefinition(name);
		const props = tool.parameters.properties;
		assert.ok(props.then_run, `${name} has then_run`);
		assert.deepEqual(props.then_run.required, ["command"]);
		assert.equal(props.then_run.properties.timeout.type, "number");
		assert.ok(!tool.parameters.required.includes("then_run"));
		assert.match(props.then_run.description, /then_run|command|bash/i);
	}
	assert.deepEqual(run.session.getToolDefinition("write").parameters.required, ["path", "content"]);
	assert.deepEqual(run.session.getToolDefinition("edit").parameters.required, ["path", "edits"]);
	assert.ok(run.session.getActiveToolNames().includes("edit"));
});

test(`Pi ${piVersion}: a fused write runs its command and returns one combined result`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { run, results } = await runCalls(t, ws, [
		toolCalls(["write", { path: "result.txt", content: "fused hello\n", then_run: { command: "cat result.txt" } }, "w1"]),
	]);
	assert.deepEqual(run.errors, []);
	const result = results.get("w1");
	assert.equal(result.isError, false);
	assert.match(resultText(result), /\[then_run:succeeded\]\nfused hello/);
	assert.equal(fs.readFileSync(path.join(ws.cwd, "result.txt"), "utf8"), "fused hello\n");
	assert.equal(run.session.getLastAssistantText(), "done");
});

test(`Pi ${piVersion}: a failing command keeps the edit and reports [then_run:failed] the way this Pi reports errors`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	fs.writeFileSync(path.join(ws.cwd, "app.txt"), "version = 1\n");
	const { run, results } = await runCalls(t, ws, [
		toolCalls([
			"edit",
			{ path: "app.txt", edits: [{ oldText: "version = 1", newText: "version = 2" }], then_run: { command: "echo checking; exit 3" } },
			"e1",
		]),
	]);
	const result = results.get("e1");
	assert.equal(result.isError, true);
	assert.equal(fs.readFileSync(path.join(ws.cwd, "app.txt"), "utf8"), "version = 2\n", "the mutation is never rolled back");
	const text = resultText(result);
	assert.match(text, /Successfully replaced/);
	assert.match(text, /\[then_run:failed\]/);
	assert.match(text, /checking/);
	assert.match(text, /Command exited with code 3/);
	if (piMajor >= 1) {
		// 1.x keeps the mutation's own blocks and details (the diff) and appends the failure.
		assert.ok(result.content.length >= 2);
		assert.doesNotMatch(result.content[0].text, /then_run/);
		assert.match(result.content.at(-1).text, /^\[then_run:failed\]\n/);
		assert.match(result.details?.diff ?? "", /version = 2/);
	}
	// The failed command still saved the model's turn that would have run it, and the book has it
	// on every Pi (on 0.84.2 the call ends in a thrown error, whose account the book takes too).
	const totals = run.session.sessionManager
		.getBranch()
		.filter((entry) => entry.type === "custom" && entry.customType === "sol-pi-savings-totals")
		.at(-1)?.data;
	assert.equal(totals?.steps[0].requestsAvoided, 1, JSON.stringify(totals?.steps));
});

test(`Pi ${piVersion}: a failed mutation skips the command`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	fs.writeFileSync(path.join(ws.cwd, "app.txt"), "unchanged\n");
	const marker = path.join(ws.cwd, "command-ran");
	const { results } = await runCalls(t, ws, [
		toolCalls(["edit", { path: "app.txt", edits: [{ oldText: "not there", newText: "x" }], then_run: { command: `touch ${marker}` } }, "e1"]),
	]);
	const result = results.get("e1");
	assert.equal(result.isError, true);
	assert.match(resultText(result), /Could not find/);
	assert.match(resultText(result), /\[then_run:skipped\]/);
	assert.equal(fs.existsSync(marker), false, "the command must not run");
	assert.equal(fs.readFileSync(path.join(ws.cwd, "app.txt"), "utf8"), "unchanged\n");
});

test(`Pi ${piVersion}: an empty or blank then_run command is refused before anything is written`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { results } = await runCalls(t, ws, [
		toolCalls(
			["write", { path: "a.txt", content: "x", then_run: { command: "   " } }, "w1"],
			["write", { path: "b.txt", content: "x", then_run: { command: "" } }, "w2"],
		),
	]);
	for (const id of ["w1", "w2"]) {
		assert.equal(results.get(id).isError, true);
		assert.match(resultText(results.get(id)), /then_run\.command.*not modified/s);
	}
	assert.equal(fs.existsSync(path.join(ws.cwd, "a.txt")), false);
	assert.equal(fs.existsSync(path.join(ws.cwd, "b.txt")), false);
});

test(`Pi ${piVersion}: a file URL with an encoded separator is rejected before anything runs`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const marker = path.join(ws.cwd, "command-ran");
	const url = `${pathToFileURL(ws.cwd).href}/sub%2Fa.txt`;
	const { results } = await runCalls(t, ws, [toolCalls(["write", { path: url, content: "x", then_run: { command: `touch ${marker}` } }, "w1"])]);
	assert.equal(results.get("w1").isError, true);
	assert.match(resultText(results.get("w1")), /encoded/);
	assert.equal(fs.existsSync(marker), false);
	assert.deepEqual(fs.readdirSync(ws.cwd).filter((f) => f !== ".pi"), []);
});

test(`Pi ${piVersion}: a percent-encoded file URL and an @ path reach the file the mutation wrote`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const url = pathToFileURL(path.join(ws.cwd, "naïve file.txt")).href;
	const { results } = await runCalls(t, ws, [
		toolCalls(["write", { path: url, content: "from url\n", then_run: { command: "cat 'naïve file.txt'" } }, "w1"]),
		toolCalls(["write", { path: "@at.txt", content: "from at\n", then_run: { command: "cat at.txt" } }, "w2"]),
	]);
	assert.match(resultText(results.get("w1")), /\[then_run:succeeded\]\nfrom url/);
	assert.match(resultText(results.get("w2")), /\[then_run:succeeded\]\nfrom at/);
});

/** Each command appends "<tag> start <ms>" and "<tag> end <ms>" to a log; returns [start, end] per tag. */
function spans(logFile) {
	const spans = {};
	for (const line of fs.readFileSync(logFile, "utf8").trim().split("\n")) {
		const [tag, what, ms] = line.split(" ");
		(spans[tag] ??= {})[what] = Number(ms);
	}
	return spans;
}
const timed = (log, tag) => `echo "${tag} start $(date +%s%3N)" >> ${log}; sleep 0.4; echo "${tag} end $(date +%s%3N)" >> ${log}`;

test(`Pi ${piVersion}: fused calls on one file run one after the other, also across a file URL and a plain path`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const log = path.join(ws.root, "log.txt");
	const url = pathToFileURL(path.join(ws.cwd, "same.txt")).href;
	const { results } = await runCalls(t, ws, [
		toolCalls(
			["write", { path: "same.txt", content: "a\n", then_run: { command: timed(log, "a") } }, "w1"],
			["write", { path: url, content: "b\n", then_run: { command: timed(log, "b") } }, "w2"],
		),
	]);
	assert.equal(results.get("w1").isError, false, resultText(results.get("w1")));
	assert.equal(results.get("w2").isError, false, resultText(results.get("w2")));
	const s = spans(log);
	const [first, second] = s.a.start < s.b.start ? [s.a, s.b] : [s.b, s.a];
	assert.ok(second.start >= first.end, `serialized: ${JSON.stringify(s)}`);
});

/**
 * A command that marks its own start, then waits for `other` to have started: it succeeds only
 * if the two commands run at the same time (a serialized pair times out after 60 s).
 */
const meet = (dir, mine, other) =>
	`touch ${dir}/${mine}.started; i=0; while [ ! -e ${dir}/${other}.started ]; do i=$((i+1)); [ $i -gt 600 ] && exit 7; sleep 0.1; done`;

test(`Pi ${piVersion}: fused calls on different files run in parallel`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { results } = await runCalls(t, ws, [
		toolCalls(
			["write", { path: "one.txt", content: "1\n", then_run: { command: meet(ws.root, "a", "b") } }, "w1"],
			["write", { path: "two.txt", content: "2\n", then_run: { command: meet(ws.root, "b", "a") } }, "w2"],
		),
	]);
	// Each command finished only after seeing the other one's start: they overlapped.
	assert.equal(results.get("w1").isError, false, resultText(results.get("w1")));
	assert.equal(results.get("w2").isError, false, resultText(results.get("w2")));
});

test(`Pi ${piVersion}: a change to the target between mutation and command skips the command`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const marker = path.join(ws.cwd, "command-ran");
	const { results } = await runCalls(
		t,
		ws,
		[toolCalls(["write", { path: "raced.txt", content: "mine\n", then_run: { command: `touch ${marker}` } }, "w1"])],
		{ extensionPath: fixture("racing-writer-extension.ts") },
	);
	const result = results.get("w1");
	assert.equal(result.isError, true);
	assert.match(resultText(result), /\[then_run:skipped\] target content changed after the fused mutation/);
	assert.match(resultText(result), /Successfully wrote/, "the mutation's own output is kept");
	assert.equal(fs.existsSync(marker), false);
});

test(`Pi ${piVersion}: a timeout fails the call and keeps the mutation output`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { results } = await runCalls(t, ws, [toolCalls(["write", { path: "slow.txt", content: "x\n", then_run: { command: "sleep 5", timeout: 1 } }, "w1"])]);
	const result = results.get("w1");
	assert.equal(result.isError, true);
	assert.match(resultText(result), /Successfully wrote/);
	assert.match(resultText(result), /\[then_run:failed\]/);
	assert.match(resultText(result), /timed out after 1 second/);
	assert.equal(fs.readFileSync(path.join(ws.cwd, "slow.txt"), "utf8"), "x\n");
});

test(`Pi ${piVersion}: the timeout reaches Pi's bash as the exact number the model wrote`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	// 1.0000000001 s is 1 s as a whole number of nanoseconds: only the model's own number
	// shows up in Pi's message. The command never ends by itself, so only the timeout ends it.
	const timeout = 1.0000000001;
	const { results } = await runCalls(t, ws, [toolCalls(["write", { path: "exact.txt", content: "x\n", then_run: { command: "sleep 600", timeout } }, "w1"])]);
	const result = results.get("w1");
	assert.equal(result.isError, true);
	assert.match(resultText(result), /\[then_run:failed\]/);
	assert.ok(resultText(result).includes(`timed out after ${timeout} seconds`), resultText(result));
});

test(`Pi ${piVersion}: a command killed by a signal is reported as this Pi's bash reports it`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { results } = await runCalls(t, ws, [toolCalls(["write", { path: "sig.txt", content: "x\n", then_run: { command: "echo before; kill -9 $$" } }, "w1"])]);
	const result = results.get("w1");
	if (piMajor >= 1) {
		assert.equal(result.isError, true, resultText(result));
		assert.match(resultText(result), /\[then_run:failed\]/);
	} else {
		// 0.84.2's bash gets no exit code for a signal and reports success.
		assert.equal(result.isError, false, resultText(result));
		assert.match(resultText(result), /\[then_run:succeeded\]\nbefore/);
	}
});

test(`Pi ${piVersion}: then_run uses Pi's shell command prefix from a trusted project's settings`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	writeJson(path.join(ws.cwd, ".pi", "settings.json"), { shellCommandPrefix: "export SOL_PI_PREFIX=from-settings" });
	const { results } = await runCalls(t, ws, [toolCalls(["write", { path: "p.txt", content: "x", then_run: { command: "echo prefix=$SOL_PI_PREFIX" } }, "w1"])]);
	assert.match(resultText(results.get("w1")), /prefix=from-settings/);
});

test(`Pi ${piVersion}: malformed Pi settings turn Action Fusion off with one message; Pi still answers`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	fs.writeFileSync(path.join(ws.agentDir, "settings.json"), "{ not json");
	const run = await startSession(ws);
	t.after(() => run.close());
	assert.equal(run.errors.length, 1);
	assert.match(String(run.errors[0].error), /Action Fusion is off: Pi's settings could not be read/);
	assert.equal(run.solPi.tools.size, 0);
	await run.session.prompt("go");
	assert.equal(run.session.getLastAssistantText(), "done");
});

test(`Pi ${piVersion}: plain edit and write calls behave like Pi's own`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	fs.writeFileSync(path.join(ws.cwd, "p.txt"), "one\n");
	const { results } = await runCalls(t, ws, [
		toolCalls(["edit", { path: "p.txt", edits: [{ oldText: "one", newText: "two" }] }, "e1"]),
		toolCalls(["edit", { path: "p.txt", edits: [{ oldText: "missing", newText: "x" }] }, "e2"]),
	]);
	assert.equal(results.get("e1").isError, false);
	assert.doesNotMatch(resultText(results.get("e1")), /then_run/);
	assert.match(results.get("e1").details.diff, /two/);
	assert.equal(results.get("e2").isError, true);
	assert.doesNotMatch(resultText(results.get("e2")), /then_run/);
	assert.equal(fs.readFileSync(path.join(ws.cwd, "p.txt"), "utf8"), "two\n");
});

test(`Pi ${piVersion}: TUI mode shows the savings notice only after a fused call succeeded`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { run } = await runCalls(
		t,
		ws,
		[
			toolCalls(["write", { path: "ok.txt", content: "x", then_run: { command: "true" } }, "w1"]),
			toolCalls(["write", { path: "bad.txt", content: "x", then_run: { command: "false" } }, "w2"]),
			toolCalls(["write", { path: "plain.txt", content: "x" }, "w3"]),
		],
		{ mode: "tui" },
	);
	const savings = run.notices().filter((n) => n.message.includes("Money saved"));
	assert.equal(savings.length, 1, JSON.stringify(run.notices()));
	assert.equal(savings[0].message, "⚡ SoL-Pi · Action Fusion\nMoney saved · 1 model round-trip avoided");
	// The mechanism's passing status; the running total has a key of its own.
	const status = run.uiCalls.filter((c) => c.method === "setStatus" && c.args[0] === "sol-pi-savings");
	assert.deepEqual(status[0].args, ["sol-pi-savings", "⚡ Action Fusion · 1 model round-trip avoided"]);
});

test(`Pi ${piVersion}: a call the model issued with a "/" in its provider-chosen id still shows the savings notice`, async (t) => {
	// Script calls are told apart by Pi's parentToolCallId, never by the shape of an id a provider chose.
	const ws = makeWorkspace(t);
	enable(ws);
	const { run, results } = await runCalls(t, ws, [toolCalls(["write", { path: "ok.txt", content: "x", then_run: { command: "true" } }, "call/1"])], { mode: "tui" });
	assert.equal(results.get("call/1").isError, false, resultText(results.get("call/1")));
	const savings = run.notices().filter((n) => n.message.includes("Money saved"));
	assert.equal(savings.length, 1, JSON.stringify(run.notices()));
});

test(`Pi ${piVersion}: the savings status clears itself later without touching a session that has ended`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const run = await startSession({ ...ws, mode: "tui", replies: [toolCalls(["write", { path: "ok.txt", content: "x", then_run: { command: "true" } }, "w1"]), "done"] });
	await run.session.prompt("go");
	assert.equal(run.uiCalls.filter((c) => c.method === "setStatus" && c.args[0] === "sol-pi-savings").length, 1);
	// End the session while the status is still shown; its context goes stale and refuses calls.
	run.close();
	// Node runs timers in deadline order: the status clear was due before this one.
	const { statusClearMs } = createRequire(import.meta.url)("../index.js").fusionTexts();
	await new Promise((resolve) => setTimeout(resolve, statusClearMs + 100));
	// An error thrown from the clear would have failed this test as an uncaught exception.
	assert.deepEqual(run.errors, []);
});

test(`Pi ${piVersion}: print mode shows no savings notice`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const { run, results } = await runCalls(t, ws, [toolCalls(["write", { path: "ok.txt", content: "x", then_run: { command: "true" } }, "w1"])]);
	assert.equal(results.get("w1").isError, false);
	assert.deepEqual(run.uiCalls, []);
});

function renderLines(component) {
	return component ? component.render(120).map((line) => line.trimEnd()) : [];
}
const plainTheme = { fg: (_color, text) => text, bg: (_color, text) => text, bold: (text) => text, italic: (text) => text, underline: (text) => text, strikethrough: (text) => text, inverse: (text) => text };

test(`Pi ${piVersion}: the lightning badge marks fused rows, not plain or failed ones`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const run = await startSession(ws);
	t.after(() => run.close());
	const tool = run.session.getToolDefinition("write");
	const builtin = (await import("./support.mjs")).pi.createWriteToolDefinition(ws.cwd);
	const context = (args, extra = {}) => ({
		args,
		toolCallId: "w1",
		invalidate() {},
		lastComponent: undefined,
		state: {},
		cwd: ws.cwd,
		executionStarted: true,
		argsComplete: true,
		isPartial: false,
		expanded: false,
		showImages: false,
		isError: false,
		...extra,
	});
	const plainArgs = { path: "a.txt", content: "x" };
	assert.deepEqual(
		renderLines(tool.renderCall(plainArgs, plainTheme, context(plainArgs))),
		renderLines(builtin.renderCall(plainArgs, plainTheme, context(plainArgs))),
		"a plain call renders exactly like the built-in",
	);
	const fusedArgs = { ...plainArgs, then_run: { command: "true" } };
	const fused = renderLines(tool.renderCall(fusedArgs, plainTheme, context(fusedArgs)));
	assert.equal(fused[0], "⚡ SoL-Pi · Action Fusion");
	assert.equal(fused[1], "Money saved · 1 model round-trip avoided");
	const failed = renderLines(tool.renderCall(fusedArgs, plainTheme, context(fusedArgs, { isError: true })));
	assert.ok(!failed.some((line) => line.includes("SoL-Pi")), failed.join("\n"));
});

test(`Pi ${piVersion}: when another extension replaces edit without then_run, SoL-Pi says so once`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const run = await startSession({ ...ws, earlierExtensionPaths: [fixture("replace-edit-extension.ts")], replies: ["one", "two"] });
	t.after(() => run.close());
	await run.session.prompt("first");
	await run.session.prompt("second");
	const warnings = run.errors.filter((e) => String(e.error).includes("then_run"));
	assert.equal(warnings.length, 1, JSON.stringify(run.errors.map((e) => String(e.error))));
	assert.match(String(warnings[0].error), /edit/);
	assert.doesNotMatch(String(warnings[0].error), /write/);
	assert.equal(run.session.getLastAssistantText(), "two");
});

test(`Pi ${piVersion}: explicit bash options from the programmatic factory win over Pi's settings`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	writeJson(path.join(ws.cwd, ".pi", "settings.json"), { shellCommandPrefix: "export SOL_PI_PREFIX=from-settings" });
	const { results } = await runCalls(
		t,
		ws,
		[toolCalls(["write", { path: "p.txt", content: "x", then_run: { command: "echo prefix=$SOL_PI_PREFIX" } }, "w1"])],
		{ extensionPath: fixture("embedded-bash-options-extension.ts") },
	);
	assert.match(resultText(results.get("w1")), /prefix=from-factory/);
});

test(`Pi ${piVersion}: aborting the run during then_run fails the call and keeps the mutation`, { timeout: 120_000 }, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const started = path.join(ws.root, "command-started");
	const run = await startSession({
		...ws,
		// Ten minutes: if the abort did not stop the command, prompt() would outlast the test's timeout.
		replies: [toolCalls(["write", { path: "kept.txt", content: "kept\n", then_run: { command: `touch ${started}; sleep 600` } }, "w1"]), "done"],
	});
	t.after(() => run.close());
	// Abort once the command is running (its own marker says so), however long that takes.
	const watcher = setInterval(() => {
		if (fs.existsSync(started)) {
			clearInterval(watcher);
			run.session.abort();
		}
	}, 20);
	t.after(() => clearInterval(watcher));
	await run.session.prompt("go");
	const result = toolResults(run.session).get("w1");
	assert.equal(result.isError, true);
	assert.match(resultText(result), /Successfully wrote/);
	assert.match(resultText(result), /\[then_run:failed\]/);
	assert.match(resultText(result), /aborted/i);
	assert.equal(fs.readFileSync(path.join(ws.cwd, "kept.txt"), "utf8"), "kept\n");
});

// Action Fusion's hash guard and then_run validation through a real Pi session:
// targets that are not regular files (a drained FIFO, a link to /dev/zero) or are
// too large to hash still run their command, with one line saying why the guard
// was not applied; a then_run that Pi's bash would refuse is refused before the
// file is touched.
import assert from "node:assert/strict";
import { execFileSync, fork, spawn } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { test } from "node:test";

import { testHooks } from "./hooks.mjs";
import { makeWorkspace, piVersion, repoRoot, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

const childRunner = path.join(repoRoot, "sol-napi", "test", "fixtures", "fusion-session-child.mjs");
// The hash guard's size cap (MAX_DIGEST_BYTES in sol-napi/src/fusion.rs).
const digestCap = 64 * 1024 * 1024;

function enable(ws) {
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, actionFusion: true });
}

/**
 * Runs the scripted calls in a Pi session in a child process and resolves with its
 * tool results. A session whose JavaScript thread blocks cannot be timed out from
 * inside, so the test's own timeout fails it and `t.after` kills the child.
 */
function runInChild(t, ws, calls) {
	const child = fork(childRunner, [JSON.stringify({ cwd: ws.cwd, agentDir: ws.agentDir, calls })], {
		stdio: ["ignore", "ignore", "pipe", "ipc"],
	});
	t.after(() => child.kill("SIGKILL"));
	let stderr = "";
	child.stderr.on("data", (chunk) => (stderr += chunk));
	return new Promise((resolve, reject) => {
		child.once("message", resolve);
		child.once("exit", (code, signal) => reject(new Error(`session process ended (${code ?? signal}) without a result: ${stderr}`)));
	});
}

/** A process that keeps reading the FIFO, as a repository's log reader would; killed with its group. */
function drain(t, fifo) {
	const drainer = spawn("bash", ["-c", 'while :; do cat < "$1" > /dev/null; done', "drain", fifo], { detached: true, stdio: "ignore" });
	t.after(() => {
		try {
			process.kill(-drainer.pid, "SIGKILL");
		} catch {
			// already gone
		}
	});
}

test(`Pi ${piVersion}: a fused write to a FIFO that is kept drained completes and runs its command without the hash guard`, { timeout: 60_000 }, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const fifo = path.join(ws.cwd, "events.pipe");
	execFileSync("mkfifo", [fifo]);
	drain(t, fifo);
	const marker = path.join(ws.cwd, "command-ran");
	const { errors, results, last } = await runInChild(t, ws, [
		["write", { path: "events.pipe", content: "one event\n", then_run: { command: `touch ${marker}; echo after the pipe` } }, "w1"],
	]);
	assert.deepEqual(errors, []);
	const result = results.w1;
	assert.equal(result.isError, false, result.text);
	assert.match(result.text, /Successfully wrote/);
	assert.match(result.text, /^Hash guard not applied \(fifo\): .*$/m);
	assert.match(result.text, /\[then_run:succeeded\]\nafter the pipe/);
	assert.ok(fs.existsSync(marker), "the command ran");
	assert.ok(fs.lstatSync(fifo).isFIFO(), "the FIFO is still a FIFO");
	assert.equal(last, "done");
});

test(`Pi ${piVersion}: a fused write through a link to /dev/zero completes; the guard names a device`, { timeout: 60_000 }, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	fs.symlinkSync("/dev/zero", path.join(ws.cwd, "zero"));
	const { errors, results } = await runInChild(t, ws, [
		["write", { path: "zero", content: "into the void\n", then_run: { command: "echo still here" } }, "w1"],
	]);
	assert.deepEqual(errors, []);
	const result = results.w1;
	assert.equal(result.isError, false, result.text);
	assert.match(result.text, /^Hash guard not applied \(device\): .*$/m);
	assert.match(result.text, /\[then_run:succeeded\]\nstill here/);
});

test(`Pi ${piVersion}: a fused edit of a file over the hash guard's size cap runs its command; the guard says too large`, { timeout: 120_000 }, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	const big = path.join(ws.cwd, "big.dat");
	fs.writeFileSync(big, "version = 1\n");
	fs.truncateSync(big, digestCap + 1024 * 1024);
	const run = await startSession({
		...ws,
		replies: [
			toolCalls(["edit", { path: "big.dat", edits: [{ oldText: "version = 1", newText: "version = 2" }], then_run: { command: "head -c 11 big.dat" } }, "e1"]),
			"done",
		],
	});
	t.after(() => run.close());
	await run.session.prompt("go");
	const result = toolResults(run.session).get("e1");
	const text = resultText(result);
	assert.equal(result.isError, false, text.slice(0, 2000));
	assert.match(text, /^Hash guard not applied \(too large\): .*$/m);
	assert.match(text, /\[then_run:succeeded\]\nversion = 2/);
});

test(`Pi ${piVersion}: a then_run that Pi's bash could not run is refused before the file is touched`, async (t) => {
	const ws = makeWorkspace(t);
	enable(ws);
	fs.writeFileSync(path.join(ws.cwd, "kept.txt"), "original\n");
	const marker = path.join(ws.cwd, "command-ran");
	const cases = [
		["w1", "write", { path: "huge-timeout.txt", content: "x\n", then_run: { command: `touch ${marker}`, timeout: 1e308 } }, /then_run\.timeout/],
		["w2", "write", { path: "over-max.txt", content: "x\n", then_run: { command: `touch ${marker}`, timeout: 2_147_484 } }, /then_run\.timeout/],
		["w3", "write", { path: "nul.txt", content: "x\n", then_run: { command: `touch ${marker}\u0000; echo` } }, /then_run\.command.*NUL/],
		["w4", "write", { path: "long.txt", content: "x\n", then_run: { command: `touch ${marker}; : ${"x".repeat(2 * 1024 * 1024)}` } }, /then_run\.command.*bytes/],
		["e1", "edit", { path: "kept.txt", edits: [{ oldText: "original", newText: "changed" }], then_run: { command: "true\u0000" } }, /then_run\.command.*NUL/],
		["e2", "edit", { path: "kept.txt", edits: [{ oldText: "original", newText: "changed" }], then_run: { command: "true", timeout: 1e308 } }, /then_run\.timeout/],
	];
	const run = await startSession({ ...ws, replies: [toolCalls(...cases.map(([id, name, args]) => [name, args, id])), "done"] });
	t.after(() => run.close());
	await run.session.prompt("go");
	const results = toolResults(run.session);
	for (const [id, , , pattern] of cases) {
		const text = resultText(results.get(id));
		assert.equal(results.get(id).isError, true, `${id}: ${text.slice(0, 300)}`);
		assert.match(text.slice(0, 1000), pattern, id);
		assert.match(text.slice(0, 1000), /the file was not modified/, id);
	}
	for (const name of ["huge-timeout.txt", "over-max.txt", "nul.txt", "long.txt"]) assert.equal(fs.existsSync(path.join(ws.cwd, name)), false, name);
	assert.equal(fs.readFileSync(path.join(ws.cwd, "kept.txt"), "utf8"), "original\n");
	assert.equal(fs.existsSync(marker), false, "no command ran");
});

test("every shared then_run case is planned through the addon as the Rust tests expect", () => {
	const cases = JSON.parse(fs.readFileSync(path.join(repoRoot, "fixtures", "fusion", "then_run.json"), "utf8"));
	assert.ok(cases.length >= 20);
	for (const c of cases) {
		const thenRun = c.command_bytes === undefined ? c.then_run : { command: "x".repeat(c.command_bytes) };
		const plan = testHooks().fusionPlanCall({ path: "a.txt", thenRunJson: JSON.stringify(thenRun), cwd: "/work", home: "/home/u", windows: false });
		const label = JSON.stringify(c).slice(0, 120);
		assert.equal(plan.ok, c.error_code === null, `${label}: ${plan.error}`);
		assert.equal(plan.errorCode, c.error_code ?? undefined, label);
		if (!plan.ok) assert.match(plan.error, /the file was not modified$/, label);
	}
});

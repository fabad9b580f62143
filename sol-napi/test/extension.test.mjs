// The SoL-Pi package loaded into a real Pi AgentSession (faux provider) on the
// Pi install under test: configuration search, the one TUI notice, quiet
// print mode, and every way SoL-Pi can stop itself while Pi keeps answering.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { ask, makeWorkspace, piCliPath, piVersion, repoRoot, startSession, writeJson } from "./support.mjs";

const projectConfig = (cwd) => path.join(cwd, ".pi", "sol-pi.json");
const agentConfig = (agentDir) => path.join(agentDir, "sol-pi.json");

function solPiHandlers(run) {
	return [...run.solPi.handlers.keys()].sort();
}

test(`Pi ${piVersion}: without a config SoL-Pi registers nothing and says so once`, async (t) => {
	const ws = makeWorkspace(t);
	const run = await startSession({ ...ws, mode: "tui" });
	t.after(() => run.close());
	assert.deepEqual(run.loaded.errors, []);
	assert.ok(run.solPi, "the SoL-Pi extension is loaded from the package root");
	assert.deepEqual(solPiHandlers(run), ["session_start"]);
	assert.equal(run.solPi.tools.size, 0);
	assert.deepEqual(run.errors, []);
	const notices = run.notices();
	assert.equal(notices.length, 1);
	assert.match(notices[0].message, /^SoL-Pi: no mechanism enabled/);
	assert.ok(notices[0].message.includes(path.join(ws.cwd, ".pi")), notices[0].message);
	assert.equal(await ask(run.session), "done");
});

test(`Pi ${piVersion}: a trusted project's config wins and is never merged with the agent config`, async (t) => {
	const ws = makeWorkspace(t);
	const project = writeJson(projectConfig(ws.cwd), { version: 1, actionFusion: true, observationPack: true });
	writeJson(agentConfig(ws.agentDir), { version: 1, onlineContextCompact: true });
	const run = await startSession({ ...ws, mode: "tui" });
	t.after(() => run.close());
	assert.deepEqual(run.errors, []);
	const notices = run.notices();
	assert.equal(notices.length, 1);
	assert.equal(notices[0].level, "info");
	assert.match(notices[0].message, /Action Fusion, ObservationPack/);
	assert.doesNotMatch(notices[0].message, /Online Context Compact/);
	assert.ok(notices[0].message.includes(project), notices[0].message);
	assert.equal(await ask(run.session), "done");
});

test(`Pi ${piVersion}: an untrusted project's config is ignored in favour of the agent config`, async (t) => {
	const ws = makeWorkspace(t);
	const project = writeJson(projectConfig(ws.cwd), { version: 1, actionFusion: true });
	const agent = writeJson(agentConfig(ws.agentDir), { version: 1, onlineContextCompact: true });
	const run = await startSession({ ...ws, trusted: false, mode: "tui" });
	t.after(() => run.close());
	assert.deepEqual(run.errors, []);
	const [notice, ...rest] = run.notices();
	assert.deepEqual(rest, []);
	assert.match(notice.message, /Online Context Compact/);
	assert.doesNotMatch(notice.message, /Action Fusion/);
	assert.ok(notice.message.includes(agent), notice.message);
	assert.ok(notice.message.includes(`${project} ignored`), notice.message);
});

test(`Pi ${piVersion}: an untrusted project's broken config cannot stop SoL-Pi`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(projectConfig(ws.cwd), "{ this is not json");
	const run = await startSession({ ...ws, trusted: false, mode: "tui" });
	t.after(() => run.close());
	assert.deepEqual(run.errors, []);
	assert.equal(run.notices().length, 1);
});

test(`Pi ${piVersion}: the agent-dir config is used when the project has none`, async (t) => {
	const ws = makeWorkspace(t);
	const agent = writeJson(agentConfig(ws.agentDir), {
		version: 1,
		evidencePreservingReducer: true,
		evidencePreservingReducerProvider: "sol-faux",
		evidencePreservingReducerModel: "faux-1",
	});
	const run = await startSession({ ...ws, mode: "tui" });
	t.after(() => run.close());
	assert.deepEqual(run.errors, []);
	const [notice] = run.notices();
	assert.match(notice.message, /Evidence-Preserving Reducer/);
	assert.ok(notice.message.includes(agent), notice.message);
});

test(`Pi ${piVersion}: print mode writes nothing to stdout`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(projectConfig(ws.cwd), { version: 1, actionFusion: true, observationPack: true });
	const written = [];
	const original = process.stdout.write;
	process.stdout.write = function (chunk, ...rest) {
		written.push(String(chunk));
		return original.call(this, chunk, ...rest);
	};
	let run;
	try {
		run = await startSession({ ...ws, mode: "print" });
		await ask(run.session);
	} finally {
		process.stdout.write = original;
		run?.close();
	}
	assert.deepEqual(run.errors, []);
	assert.deepEqual(run.uiCalls, []);
	assert.deepEqual(written.filter((line) => line.includes("SoL-Pi")), []);
});

test(`Pi ${piVersion}: a broken config stops SoL-Pi with one message naming the file and the key; Pi still answers`, async (t) => {
	const ws = makeWorkspace(t);
	const file = writeJson(projectConfig(ws.cwd), { version: 1, actionFussion: true });
	const run = await startSession({ ...ws, mode: "tui" });
	t.after(() => run.close());
	assert.equal(run.errors.length, 1);
	const message = String(run.errors[0].error);
	assert.ok(message.includes(file), message);
	assert.match(message, /Unknown SoL-Pi config key: actionFussion/);
	assert.match(message, /Pi itself keeps working/);
	assert.equal(run.errors[0].event, "session_start");
	assert.deepEqual(run.notices(), []);
	assert.equal(await ask(run.session), "done");
	assert.equal(run.errors.length, 1, "reported once, not on every request");
});

test(`Pi ${piVersion}: a wrong value type names the key`, async (t) => {
	const ws = makeWorkspace(t);
	const file = writeJson(agentConfig(ws.agentDir), { version: 1, cacheWriteReadRatio: -1 });
	const run = await startSession({ ...ws });
	t.after(() => run.close());
	assert.equal(run.errors.length, 1);
	const message = String(run.errors[0].error);
	assert.ok(message.includes(file) && message.includes("cacheWriteReadRatio"), message);
	assert.equal(await ask(run.session), "done");
});

test(`Pi ${piVersion}: a config saved with a UTF-8 byte-order mark loads`, async (t) => {
	const ws = makeWorkspace(t);
	const file = projectConfig(ws.cwd);
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, `\uFEFF${JSON.stringify({ version: 1, actionFusion: true }, null, 2)}\r\n`);
	assert.deepEqual([...fs.readFileSync(file).subarray(0, 3)], [0xef, 0xbb, 0xbf]);
	const run = await startSession({ ...ws, mode: "tui" });
	t.after(() => run.close());
	assert.deepEqual(run.errors, []);
	const [notice, ...rest] = run.notices();
	assert.deepEqual(rest, []);
	assert.match(notice.message, /^SoL-Pi: Action Fusion enabled/);
	assert.ok(notice.message.includes(file), notice.message);
	assert.ok(run.solPi.tools.has("edit"), "Action Fusion is on");
	assert.equal(await ask(run.session), "done");
});

test(`Pi ${piVersion}: a key written twice stops SoL-Pi with one message naming the key and the file; Pi still answers`, async (t) => {
	const ws = makeWorkspace(t);
	// Last-wins would read version 1 and turn Action Fusion on.
	const file = writeJson(agentConfig(ws.agentDir), '{"version": 2, "actionFusion": true, "version": 1}\n');
	const run = await startSession({ ...ws, mode: "tui" });
	t.after(() => run.close());
	assert.equal(run.errors.length, 1, JSON.stringify(run.errors.map((e) => String(e.error))));
	const message = String(run.errors[0].error);
	assert.ok(message.includes(`Duplicate SoL-Pi config key: version (in ${file})`), message);
	assert.match(message, /Pi itself keeps working/);
	assert.deepEqual(run.notices(), []);
	assert.equal(run.solPi.tools.size, 0, "nothing registered");
	assert.equal(await ask(run.session), "done");
	assert.equal(run.errors.length, 1, "reported once");
});

// A FIFO without a writer, or a link to /dev/zero, would block or never end a plain read. The
// timeout turns a regression into a failure instead of a hung suite.
for (const [what, place, make] of [
	["a FIFO with no writer", "the project's .pi/sol-pi.json", (ws) => mkfifo(projectConfig(ws.cwd))],
	["a link to /dev/zero", "the project's .pi/sol-pi.json", (ws) => link("/dev/zero", projectConfig(ws.cwd))],
	["a FIFO with no writer", "the agent dir's sol-pi.json", (ws) => mkfifo(agentConfig(ws.agentDir))],
	["a link to /dev/zero", "the agent dir's sol-pi.json", (ws) => link("/dev/zero", agentConfig(ws.agentDir))],
	["a link to a FIFO", "the agent dir's sol-pi.json", (ws) => link(mkfifo(path.join(ws.root, "fifo")), agentConfig(ws.agentDir))],
]) {
	test(`Pi ${piVersion}: ${what} at ${place} turns SoL-Pi off with one message and never hangs Pi`, { timeout: 60_000 }, async (t) => {
		const ws = makeWorkspace(t);
		const file = make(ws);
		const run = await startSession({ ...ws, mode: "tui" });
		t.after(() => run.close());
		assert.equal(run.errors.length, 1, JSON.stringify(run.errors.map((e) => String(e.error))));
		const message = String(run.errors[0].error);
		assert.ok(message.includes(`Unable to read SoL-Pi config ${file}: `), message);
		assert.match(message, /not a regular file/);
		assert.equal(await ask(run.session), "done");
	});
}

function mkfifo(file) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	const made = spawnSync("mkfifo", [file], { encoding: "utf8" });
	assert.equal(made.status, 0, made.stderr);
	return file;
}

function link(target, file) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.symlinkSync(target, file);
	return file;
}

/** Copies the package without its built addon, as a checkout that was never built. */
function copyPackage(t, { withAddon = false, version } = {}) {
	const ws = makeWorkspace(t);
	const root = path.join(ws.root, "sol-pi-copy");
	const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"));
	if (version) pkg.version = version;
	writeJson(path.join(root, "package.json"), pkg);
	fs.cpSync(path.join(repoRoot, "sol-napi", "sol-pi"), path.join(root, "sol-napi", "sol-pi"), { recursive: true });
	for (const file of fs.readdirSync(path.join(repoRoot, "sol-napi"))) {
		const keep = ["index.js", "index.d.ts", "package.json"].includes(file) || (withAddon && file.endsWith(".node"));
		if (keep) fs.copyFileSync(path.join(repoRoot, "sol-napi", file), path.join(root, "sol-napi", file));
	}
	return { ...ws, packageRoot: root };
}

test(`Pi ${piVersion}: a missing addon disables SoL-Pi with one message saying how to fix it`, async (t) => {
	const copy = copyPackage(t);
	const run = await startSession({ cwd: copy.cwd, agentDir: copy.agentDir, extensionPath: copy.packageRoot, mode: "tui" });
	t.after(() => run.close());
	assert.deepEqual(run.loaded.errors, []);
	assert.equal(run.errors.length, 1);
	const message = String(run.errors[0].error);
	assert.match(message, /native addon could not be loaded on \w+-\w+/);
	assert.match(message, /npm run setup/);
	assert.match(message, /Pi itself keeps working/);
	assert.equal(await ask(run.session), "done");
	assert.equal(run.errors.length, 1);
});

test(`Pi ${piVersion}: a stale addon build is refused with a rebuild hint`, async (t) => {
	const copy = copyPackage(t, { withAddon: true, version: "9.9.9" });
	const run = await startSession({ cwd: copy.cwd, agentDir: copy.agentDir, extensionPath: copy.packageRoot });
	t.after(() => run.close());
	assert.equal(run.errors.length, 1);
	assert.match(String(run.errors[0].error), /native addon is version \S+ but the extension is 9\.9\.9.*npm run build/);
	assert.equal(await ask(run.session), "done");
});

function cliEnv(ws) {
	return { ...process.env, PI_CODING_AGENT_DIR: ws.agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" };
}

/** `pi -p hello` with the faux provider; SoL-Pi comes from `-e <checkout>` unless `withE` is false. */
function runCli(ws, { withE = true } = {}) {
	const fauxExtension = path.join(repoRoot, "sol-napi", "test", "faux-provider-extension.ts");
	const args = [piCliPath(), "--provider", "sol-faux", "--model", "faux-1", "--no-session", "-e", fauxExtension];
	if (withE) args.push("-e", repoRoot);
	args.push("-p", "hello");
	return spawnSync(process.execPath, args, { cwd: ws.cwd, env: cliEnv(ws), encoding: "utf8", timeout: 120_000 });
}

function solPiLines(stderr) {
	return stderr.split("\n").filter((line) => line.includes("SoL-Pi"));
}

test(`Pi ${piVersion}: the real CLI loads the package with -e and keeps stdout to the answer`, (t) => {
	const ws = makeWorkspace(t);
	writeJson(agentConfig(ws.agentDir), { version: 1, actionFusion: true, onlineContextCompact: true });
	const result = runCli(ws);
	assert.equal(result.status, 0, result.stderr);
	assert.equal(result.stdout.trim(), "faux answer from the CLI");
	assert.doesNotMatch(result.stderr, /SoL-Pi|Extension error/, result.stderr);
});

test(`Pi ${piVersion}: the real CLI reports a broken config once on stderr and still answers`, (t) => {
	const ws = makeWorkspace(t);
	const file = writeJson(agentConfig(ws.agentDir), { version: 1, observationPack: "yes" });
	const result = runCli(ws);
	assert.equal(result.status, 0, result.stderr);
	assert.equal(result.stdout.trim(), "faux answer from the CLI");
	const lines = solPiLines(result.stderr);
	assert.equal(lines.length, 1, result.stderr);
	assert.ok(lines[0].includes(file) && lines[0].includes("observationPack must be boolean"), lines[0]);
});

test(`Pi ${piVersion}: the real CLI names a key written twice once on stderr and still answers`, (t) => {
	const ws = makeWorkspace(t);
	const file = writeJson(agentConfig(ws.agentDir), '{"version": 1, "observationPack": false, "observationPack": true}');
	const result = runCli(ws);
	assert.equal(result.status, 0, result.stderr);
	assert.equal(result.stdout.trim(), "faux answer from the CLI");
	const lines = solPiLines(result.stderr);
	assert.equal(lines.length, 1, result.stderr);
	assert.ok(lines[0].includes(`Duplicate SoL-Pi config key: observationPack (in ${file})`), lines[0]);
});

test(`Pi ${piVersion}: \`pi install <checkout>\` makes the real CLI load SoL-Pi`, (t) => {
	const ws = makeWorkspace(t);
	const file = writeJson(agentConfig(ws.agentDir), { version: 1, onlineContextCompact: 1 });
	const before = runCli(ws, { withE: false });
	assert.equal(before.status, 0, before.stderr);
	assert.deepEqual(solPiLines(before.stderr), [], "not installed yet: SoL-Pi must not run");

	const install = spawnSync(process.execPath, [piCliPath(), "install", repoRoot], { cwd: ws.cwd, env: cliEnv(ws), encoding: "utf8", timeout: 120_000 });
	assert.equal(install.status, 0, install.stderr + install.stdout);
	const after = runCli(ws, { withE: false });
	assert.equal(after.status, 0, after.stderr);
	assert.equal(after.stdout.trim(), "faux answer from the CLI");
	const lines = solPiLines(after.stderr);
	assert.equal(lines.length, 1, after.stderr);
	assert.ok(lines[0].includes(file) && lines[0].includes("onlineContextCompact must be boolean"), lines[0]);
});

// The native addon on its own: config validation agrees with the shared
// fixture cases the Rust tests use, and a Rust panic reaches JavaScript as an
// ordinary error without taking the process down.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { testHooks, testHooksFile } from "./hooks.mjs";
import { makeWorkspace, repoRoot } from "./support.mjs";

const addon = createRequire(import.meta.url)("../index.js");
const fixtures = path.join(repoRoot, "fixtures", "config");

test("every shared config fixture loads through the addon exactly as the Rust tests expect", (t) => {
	const cases = fs.readdirSync(fixtures).filter((name) => fs.statSync(path.join(fixtures, name)).isDirectory()).sort();
	assert.ok(cases.length >= 20, `expected at least 20 fixture cases, found ${cases.length}`);
	for (const name of cases) {
		const ws = makeWorkspace(t);
		const file = path.join(ws.agentDir, "sol-pi.json");
		fs.copyFileSync(path.join(fixtures, name, "sol-pi.json"), file);
		const expected = JSON.parse(fs.readFileSync(path.join(fixtures, name, "expected.json"), "utf8"));
		const outcome = addon.loadConfig({ cwd: ws.cwd, agentDir: ws.agentDir, projectTrusted: true });
		assert.equal(outcome.kind, expected.ok ? "loaded" : "invalid", `${name}: ${JSON.stringify(outcome)}`);
		if (expected.ok) {
			assert.deepEqual(outcome.config, expected.config, name);
			assert.equal(outcome.source, "agentDir", name);
			assert.equal(outcome.sourcePath, file, name);
		} else {
			assert.equal(outcome.error.code, expected.code, name);
			assert.equal(outcome.error.key ?? null, expected.key, name);
			assert.equal(outcome.error.path, file, name);
			assert.ok(outcome.error.message.includes(file), `${name}: ${outcome.error.message}`);
		}
	}
});

test("a missing config gives the defaults and a notice naming both searched places", (t) => {
	const ws = makeWorkspace(t);
	const outcome = addon.loadConfig({ cwd: ws.cwd, agentDir: ws.agentDir, projectTrusted: true });
	assert.equal(outcome.kind, "defaults");
	assert.equal(outcome.source, undefined);
	assert.equal(outcome.sourcePath, undefined);
	assert.deepEqual(outcome.enabled, []);
	assert.deepEqual(outcome.config, {
		version: 1,
		actionFusion: false,
		observationPack: false,
		evidencePreservingReducer: false,
		evidencePreservingReducerProvider: "openai-codex",
		evidencePreservingReducerModel: "gpt-5.6-luna",
		onlineContextCompact: false,
		cacheWriteReadRatio: 12.5,
		cacheAware: false,
	});
	assert.ok(outcome.notice.includes(path.join(ws.cwd, ".pi")) && outcome.notice.includes(ws.agentDir), outcome.notice);
});

test("enabled mechanisms come back in registration order", (t) => {
	const ws = makeWorkspace(t);
	fs.mkdirSync(path.join(ws.cwd, ".pi"));
	fs.writeFileSync(
		path.join(ws.cwd, ".pi", "sol-pi.json"),
		JSON.stringify({ version: 1, onlineContextCompact: true, evidencePreservingReducer: true, observationPack: true, actionFusion: true }),
	);
	const outcome = addon.loadConfig({ cwd: ws.cwd, agentDir: ws.agentDir, projectTrusted: true });
	assert.deepEqual(outcome.enabled, ["actionFusion", "observationPack", "evidencePreservingReducer", "onlineContextCompact"]);
	assert.equal(outcome.source, "project");
});

test("a symlinked config is read through the link; a directory in its place is a clear error", (t) => {
	const ws = makeWorkspace(t);
	const real = path.join(ws.root, "real.json");
	fs.writeFileSync(real, JSON.stringify({ version: 1, observationPack: true }));
	fs.symlinkSync(real, path.join(ws.agentDir, "sol-pi.json"));
	assert.deepEqual(addon.loadConfig({ cwd: ws.cwd, agentDir: ws.agentDir, projectTrusted: true }).enabled, ["observationPack"]);

	fs.mkdirSync(path.join(ws.cwd, ".pi", "sol-pi.json"), { recursive: true });
	const outcome = addon.loadConfig({ cwd: ws.cwd, agentDir: ws.agentDir, projectTrusted: true });
	assert.equal(outcome.kind, "invalid");
	assert.equal(outcome.error.code, "unreadable");
	assert.ok(outcome.error.message.includes(path.join(ws.cwd, ".pi", "sol-pi.json")), outcome.error.message);
});

test("the addon the packages ship has no test-only export, and its typings declare none", () => {
	const hooks = ["__panicForTests", "fusionPlanCall", "occSizeMessages", "occObservedMessages", "frameInPlace"];
	for (const name of hooks) assert.ok(typeof testHooks()[name] === "function", `the test-hooks build has ${name}`);
	for (const name of hooks) assert.equal(addon[name], undefined, name);
	const typings = fs.readFileSync(path.join(repoRoot, "sol-napi", "index.d.ts"), "utf8");
	for (const name of hooks) assert.ok(!typings.includes(name), name);
	// Everything else the test-hooks build exports is the shipped addon's (whose generated
	// loader adds its own `__napiBindingTarget`).
	const shipped = Object.keys(addon).filter((name) => name !== "__napiBindingTarget");
	assert.deepEqual(Object.keys(testHooks()).filter((name) => !hooks.includes(name)).sort(), shipped.sort());
});

test("a Rust panic becomes a JavaScript error and the addon keeps working", () => {
	const addon = testHooks();
	assert.throws(() => addon.__panicForTests("deliberate test panic"), (error) => {
		assert.ok(error instanceof Error);
		assert.match(error.message, /deliberate test panic/);
		return true;
	});
	assert.equal(typeof addon.addonVersion(), "string");
	assert.equal(addon.loadConfig({ cwd: "/nonexistent-sol-pi", agentDir: "/nonexistent-sol-pi-agent", projectTrusted: true }).kind, "defaults");
});

test("a caught panic prints nothing to stderr, which would corrupt Pi's terminal UI", () => {
	const script = `const m = { exports: {} }; process.dlopen(m, ${JSON.stringify(testHooksFile())}); const a = m.exports;
try { a.__panicForTests("quiet panic"); } catch (error) { process.stdout.write("caught: " + error.message); }`;
	const child = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: { ...process.env, RUST_BACKTRACE: "1" } });
	assert.equal(child.status, 0);
	assert.equal(child.stdout, "caught: quiet panic");
	assert.equal(child.stderr, "");
});

test("wrong argument types are rejected with an error, not a crash", () => {
	assert.throws(() => addon.loadConfig({ cwd: 42 }), Error);
	assert.throws(() => addon.loadConfig(), Error);
});

const pathCases = JSON.parse(fs.readFileSync(path.join(repoRoot, "fixtures", "fusion", "paths.json"), "utf8"));
const planPath = (c) =>
	testHooks().fusionPlanCall({ path: c.input, thenRunJson: JSON.stringify({ command: "true" }), cwd: c.cwd, home: c.home, windows: c.platform === "windows" });

test("every shared path case resolves through the addon as the Rust tests expect", () => {
	assert.ok(pathCases.length >= 40);
	for (const c of pathCases) {
		const plan = planPath(c);
		if (c.expected !== null) assert.equal(plan.target, c.expected, JSON.stringify(c));
		else {
			assert.equal(plan.ok, false, JSON.stringify(c));
			assert.equal(plan.errorCode, c.error_code, JSON.stringify(c));
		}
	}
});

test("POSIX file URLs resolve exactly as Node's fileURLToPath does", () => {
	const spaces = /[\u00a0\u2000-\u200a\u202f\u205f\u3000]/g;
	let compared = 0;
	for (const c of pathCases.filter((c) => c.platform === "posix")) {
		const input = c.input.replace(spaces, " ").replace(/^@/, "");
		if (!input.startsWith("file://")) continue;
		let node;
		try {
			node = path.posix.resolve(c.cwd, fileURLToPath(input));
		} catch {
			node = null;
		}
		if (node === null) assert.equal(planPath(c).ok, false, `Node rejects ${c.input}, so must we`);
		else assert.equal(planPath(c).target, node, c.input);
		compared++;
	}
	assert.ok(compared >= 10, `compared ${compared} file URLs`);
});

test("a plain call with an unresolvable path runs unqueued; a fused one is refused", () => {
	const request = { path: "file:///a%2Fb", cwd: "/work", home: "/home/u", windows: false };
	const plain = testHooks().fusionPlanCall(request);
	assert.equal(plain.ok, true);
	assert.equal(plain.target, undefined);
	const fused = testHooks().fusionPlanCall({ ...request, thenRunJson: JSON.stringify({ command: "make" }) });
	assert.equal(fused.ok, false);
	assert.equal(fused.errorCode, "encoded_separator");
	assert.match(fused.error, /file:\/\/\/a%2Fb/);
});

test("then_run arguments are checked before anything runs", () => {
	const base = { path: "a.txt", cwd: "/work", home: "/home/u", windows: false };
	const plan = (thenRun) => testHooks().fusionPlanCall({ ...base, thenRunJson: JSON.stringify(thenRun) });
	assert.deepEqual(plan({ command: "make test", timeout: 30 }).thenRun, { command: "make test", timeout: 30 });
	assert.equal(plan(null).thenRun, undefined);
	for (const [bad, code] of [
		[{ command: "" }, "empty_command"],
		[{ command: 7 }, "command_not_string"],
		[{}, "missing_command"],
		[{ command: "x", timeout: -1 }, "invalid_timeout"],
		[{ command: "x", shell: "zsh" }, "unknown_key"],
		["make", "not_an_object"],
	]) {
		const result = plan(bad);
		assert.equal(result.ok, false, JSON.stringify(bad));
		assert.equal(result.errorCode, code, JSON.stringify(bad));
		assert.match(result.error, /not modified/, result.error);
	}
});

test("the file digest is SHA-256 of the bytes and reports unreadable files", async (t) => {
	const ws = makeWorkspace(t);
	const file = path.join(ws.root, "digest.txt");
	fs.writeFileSync(file, "abc");
	assert.equal((await addon.fileDigest(file)).digest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const missing = await addon.fileDigest(path.join(ws.root, "missing"));
	assert.equal(missing.digest, undefined);
	assert.match(missing.error, /No such file/);
	assert.deepEqual(await addon.fileDigest(ws.root), { unguarded: "directory" });
});

test("savings totals past u32::MAX tokens are restored after Pi stored them (JavaScript numbers read back as integers)", () => {
	// A recorded totals entry, its cache reads raised past 2^32 as a long session's are.
	const corpus = path.join(repoRoot, "fixtures", "sessions", "corpus", "debugging-1.6.0-sol-pi.jsonl");
	const line = fs
		.readFileSync(corpus, "utf8")
		.split("\n")
		.findLast((text) => text.includes('"customType":"sol-pi-savings-totals"'));
	const entry = JSON.parse(line);
	entry.data.layers[0].cacheRead = 4_303_655_164;
	entry.data.layers[1].cacheRead = 9_007_199_254_740_991;
	// The engine's session start restores the book from the branch: a refused entry is a warning.
	const warnings = (branch) => new addon.Engine().sessionStart(branch, 0).effects.filter((effect) => effect.kind === "warn");
	assert.deepEqual(warnings([entry]), [], "no entry refused");
	const view = addon.savingsViewOfEntry(entry.data);
	assert.equal(typeof view.table, "string");
	// A fraction is still refused, as before.
	entry.data.layers[0].cacheRead = 4_303_655_164.5;
	assert.equal(warnings([entry]).length, 1);
});

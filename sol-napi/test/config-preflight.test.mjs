// scripts/check-sol-pi-config.mjs, run as a child process: argument errors, every validation
// message, the all-enabled gate, and agreement with the extension's loader (the addon's
// `loadConfig`) and with `expected.json` on every shared fixture in fixtures/config/.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createRequire } from "node:module";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const script = path.join(repoRoot, "scripts", "check-sol-pi-config.mjs");
const fixturesDir = path.join(repoRoot, "fixtures", "config");
const addon = createRequire(import.meta.url)("../index.js");
const PREFIX = "SoL-Pi configuration preflight failed: ";
const FLAGS = ["actionFusion", "observationPack", "evidencePreservingReducer", "onlineContextCompact"];

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-preflight-test-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let counter = 0;

function configFile(value) {
	const file = path.join(tmp, `config-${counter++}.json`);
	fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
	return file;
}

function preflight(...args) {
	const r = spawnSync(process.execPath, [script, ...args], { encoding: "utf8", cwd: tmp });
	return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function assertFails(r, message) {
	assert.equal(r.code, 1, r.stdout);
	assert.equal(r.stdout, "");
	assert.equal(r.stderr, `${PREFIX}${message}\n`);
}

const allEnabled = { version: 1, actionFusion: true, observationPack: true, evidencePreservingReducer: true, onlineContextCompact: true };

test("an all-enabled config passes the gate and prints the effective config", () => {
	const file = configFile(allEnabled);
	const r = preflight("--config", file, "--require-all-enabled");
	assert.equal(r.code, 0, r.stderr);
	assert.equal(r.stderr, "");
	const out = JSON.parse(r.stdout);
	assert.deepEqual(out, {
		ok: true,
		all_enabled: true,
		effective_config: {
			version: 1,
			actionFusion: true,
			observationPack: true,
			evidencePreservingReducer: true,
			onlineContextCompact: true,
			cacheWriteReadRatio: 12.5,
			cacheAware: false,
			evidencePreservingReducerModel: "gpt-5.6-luna",
			evidencePreservingReducerProvider: "openai-codex",
		},
		config: file,
	});
	assert.equal(r.stdout, `${JSON.stringify(out, null, 2)}\n`, "pretty-printed with two spaces");
});

test("a relative --config is reported as an absolute path", () => {
	const file = configFile({ version: 1 });
	const r = preflight("--config", path.basename(file));
	assert.equal(r.code, 0, r.stderr);
	assert.equal(JSON.parse(r.stdout).config, file);
});

test("a partial config passes without the gate, with all_enabled false", () => {
	const r = preflight("--config", configFile({ version: 1, actionFusion: true, cacheWriteReadRatio: 0, evidencePreservingReducerModel: " m " }));
	assert.equal(r.code, 0, r.stderr);
	const out = JSON.parse(r.stdout);
	assert.equal(out.all_enabled, false);
	assert.equal(out.effective_config.cacheWriteReadRatio, 0);
	assert.equal(out.effective_config.evidencePreservingReducerModel, "m");
});

test("--require-all-enabled names every flag that is not true", () => {
	for (const flag of FLAGS) {
		assertFails(preflight("--config", configFile({ ...allEnabled, [flag]: false }), "--require-all-enabled"), `${flag} must be true`);
		const { [flag]: _, ...missing } = allEnabled;
		assertFails(preflight("--require-all-enabled", "--config", configFile(missing)), `${flag} must be true`);
	}
	assertFails(
		preflight("--config", configFile({ version: 1, observationPack: true }), "--require-all-enabled"),
		"actionFusion must be true; evidencePreservingReducer must be true; onlineContextCompact must be true",
	);
});

test("argument errors", () => {
	const file = configFile({ version: 1 });
	assertFails(preflight(), "--config is required");
	assertFails(preflight("--require-all-enabled"), "--config is required");
	assertFails(preflight("--config"), "missing value for --config");
	assertFails(preflight("--config", "--require-all-enabled"), "missing value for --config");
	assertFails(preflight("--config", file, "--config", file), "duplicate option: --config");
	assertFails(preflight("--config", file, "--require-all-enabled", "--require-all-enabled"), "duplicate option: --require-all-enabled");
	assertFails(preflight("--config", file, "--verbose"), "unknown option: --verbose");
	assertFails(preflight("extra", "--config", file), "unknown option: extra");
});

test("every validation message, in the lower-case form", () => {
	const cases = [
		[null, "config must be a JSON object"],
		[[], "config must be a JSON object"],
		["\"text\"", "config must be a JSON object"],
		[{ version: 1, provider: "x" }, "unknown key: provider"],
		[{ provider: "x" }, "unknown key: provider"],
		[{}, "version must be 1"],
		[{ version: 2 }, "version must be 1"],
		[{ version: "1" }, "version must be 1"],
		...FLAGS.map((flag) => [{ version: 1, [flag]: "yes" }, `${flag} must be boolean`]),
		[{ version: 1, onlineContextCompact: null }, "onlineContextCompact must be boolean"],
		[{ version: 1, cacheWriteReadRatio: null }, "cacheWriteReadRatio must be a finite non-negative number"],
		[{ version: 1, cacheWriteReadRatio: "12.5" }, "cacheWriteReadRatio must be a finite non-negative number"],
		[{ version: 1, cacheWriteReadRatio: -1 }, "cacheWriteReadRatio must be a finite non-negative number"],
		...["evidencePreservingReducerProvider", "evidencePreservingReducerModel"].flatMap((key) => [
			[{ version: 1, [key]: "" }, `${key} must be a non-empty string`],
			[{ version: 1, [key]: "  " }, `${key} must be a non-empty string`],
			[{ version: 1, [key]: null }, `${key} must be a non-empty string`],
			[{ version: 1, [key]: 12 }, `${key} must be a non-empty string`],
		]),
	];
	for (const [value, message] of cases) {
		const text = typeof value === "string" ? value : JSON.stringify(value);
		assertFails(preflight("--config", configFile(text)), message);
	}
});

test("unreadable files", () => {
	const missing = path.join(tmp, "no-such.json");
	assertFails(preflight("--config", missing), "unable to read config: no such file");
	const r = preflight("--config", tmp);
	assert.equal(r.code, 1);
	assert.equal(r.stderr, `${PREFIX}unable to read config: is a directory\n`);
	const bad = preflight("--config", configFile("{ not json"));
	assert.equal(bad.code, 1);
	assert.match(bad.stderr, /^SoL-Pi configuration preflight failed: unable to read config: invalid JSON: .+\n$/);
	assert.equal(bad.stderr.split("\n").length, 2, "one line");
});

test("a byte-order mark is accepted and a key written twice is named", () => {
	const bom = preflight("--config", configFile(`\uFEFF${JSON.stringify({ version: 1, onlineContextCompact: true })}`));
	assert.equal(bom.code, 0, bom.stderr);
	assert.equal(JSON.parse(bom.stdout).effective_config.onlineContextCompact, true);
	assertFails(preflight("--config", configFile('{"version": 2, "actionFusion": true, "version": 1}')), "duplicate key: version");
	assertFails(preflight("--config", configFile('{"version": 1, "cacheWriteReadRatio": 1, "cacheWriteReadRatio": 2}')), "duplicate key: cacheWriteReadRatio");
});

// spawnSync's timeout kills a hung child, whose status is then null: a hang fails the test.
test("a FIFO, a link to a FIFO and a link to /dev/zero are refused without waiting", { timeout: 60_000 }, () => {
	const fifo = path.join(tmp, "config.fifo");
	const made = spawnSync("mkfifo", [fifo], { encoding: "utf8" });
	assert.equal(made.status, 0, made.stderr);
	const toFifo = path.join(tmp, "to-fifo.json");
	fs.symlinkSync(fifo, toFifo);
	const toZero = path.join(tmp, "to-zero.json");
	fs.symlinkSync("/dev/zero", toZero);
	for (const [file, reason] of [
		[fifo, "unable to read config: is not a regular file"],
		[toFifo, "unable to read config: not a regular file"],
		[toZero, "unable to read config: not a regular file"],
	]) {
		const r = spawnSync(process.execPath, [script, "--config", file], { encoding: "utf8", cwd: tmp, timeout: 30_000 });
		assert.equal(r.error, undefined, `${file}: ${r.error}`);
		assert.equal(r.status, 1, `${file}: ${r.stdout}`);
		assert.equal(r.stderr, `${PREFIX}${reason}\n`, file);
	}
});

test("the preflight, the extension's loader and expected.json agree on every fixture", () => {
	const cases = fs.readdirSync(fixturesDir).filter((name) => fs.existsSync(path.join(fixturesDir, name, "expected.json")));
	assert.ok(cases.length >= 40, `found ${cases.length} fixtures`);
	for (const name of cases) {
		const file = path.join(fixturesDir, name, "sol-pi.json");
		const expected = JSON.parse(fs.readFileSync(path.join(fixturesDir, name, "expected.json"), "utf8"));

		// The extension's loader, reading the same bytes as the agent directory's sol-pi.json.
		const agentDir = path.join(tmp, `agent-${name}`);
		fs.mkdirSync(agentDir, { recursive: true });
		fs.copyFileSync(file, path.join(agentDir, "sol-pi.json"));
		const loaded = addon.loadConfig({ cwd: path.join(tmp, "no-project"), agentDir, projectTrusted: false });
		const validated = addon.validateConfigFile(file);
		const r = preflight("--config", file);

		assert.equal(loaded.kind, expected.ok ? "loaded" : "invalid", `${name}: loader`);
		assert.equal(validated.ok, expected.ok, `${name}: validateConfigFile`);
		if (expected.ok) {
			assert.deepEqual(loaded.config, expected.config, `${name}: loader config`);
			assert.deepEqual(validated.config, expected.config, `${name}: validated config`);
			assert.equal(r.code, 0, `${name}: ${r.stderr}`);
			const out = JSON.parse(r.stdout);
			// `assert.deepEqual` is loose on 0 and -0 (JSON prints -0 as 0).
			assert.deepEqual({ ...out.effective_config }, { ...expected.config }, `${name}: preflight config`);
			assert.equal(out.all_enabled, FLAGS.every((flag) => expected.config[flag] === true), `${name}: all_enabled`);
			assert.equal(out.config, file);
		} else {
			assert.equal(loaded.error.code, expected.code, `${name}: loader code`);
			assert.equal(loaded.error.key ?? null, expected.key, `${name}: loader key`);
			assert.equal(validated.error.code, expected.code, `${name}: validated code`);
			assert.equal(validated.error.key ?? null, expected.key, `${name}: validated key`);
			// The loader's message holds the same fact, naming the file.
			assert.ok(loaded.error.message.includes(validated.error.message.replace(file, path.join(agentDir, "sol-pi.json"))), `${name}: ${loaded.error.message}`);
			assertFails(r, validated.error.detail);
			if (expected.key !== null && expected.code !== "unreadable") assert.ok(r.stderr.includes(expected.key), `${name}: names ${expected.key}`);
		}
	}
});

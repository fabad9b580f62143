// The session corpus (fixtures/sessions/corpus/) and the long sessions
// (fixtures/sessions/long/): every file is a session that the Pi install under test opens
// itself, with the entries, branch messages and leaves its manifest row says; and the
// recorder (scripts/record-session.mjs) still records the same shape: a fresh recording of
// the "resume" scenario on this Pi has the entry types, message roles and tool names, in
// order, of the committed file of that scenario and version.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import { parseSession } from "./session-file.mjs";
import { pi, piRoot, piVersion, repoRoot } from "./support.mjs";
import { countsOf, shapeOf } from "../../scripts/record/manifest.mjs";
import { SCENARIOS, record } from "../../scripts/record/recorder.mjs";

const corpus = path.join(repoRoot, "fixtures", "sessions", "corpus");
const manifest = JSON.parse(fs.readFileSync(path.join(corpus, "manifest.json"), "utf8"));
const readme = fs.readFileSync(path.join(corpus, "README.md"), "utf8");
const textOf = (name) => fs.readFileSync(path.join(corpus, name), "utf8");
const long = path.join(repoRoot, "fixtures", "sessions", "long");
const longManifest = JSON.parse(fs.readFileSync(path.join(long, "manifest.json"), "utf8"));
const longReadme = fs.readFileSync(path.join(long, "README.md"), "utf8");
const LONG_SCENARIOS = ["long-fnv", "long-strsim", "long-textwrap"];
const MB = 1024 * 1024;

function tempDir(t) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-corpus-"));
	t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
	return dir;
}

test("the manifest has one row per corpus file, with what the file holds, and the README's table says the same", () => {
	const files = fs.readdirSync(corpus).filter((name) => name.endsWith(".jsonl")).sort();
	assert.deepEqual(manifest.files.map((row) => row.file), files);
	let total = 0;
	for (const row of manifest.files) {
		const text = textOf(row.file);
		total += Buffer.byteLength(text);
		assert.ok(Buffer.byteLength(text) < 1.5 * MB, `${row.file} is under 1.5 MB`);
		const { file, piVersion: version, scenario, solPi, ...counts } = row;
		assert.deepEqual(countsOf(text, file), counts, file);
		assert.ok(SCENARIOS[scenario], `${file}: a scenario of the recorder`);
		assert.equal(typeof solPi, "boolean");
		// The README's table row of the file says the same.
		const cells = readme.split("\n").find((line) => line.startsWith(`| \`${file}\` |`))?.split("|").map((cell) => cell.trim());
		assert.ok(cells, `the README has a row for ${file}`);
		assert.deepEqual(cells.slice(2, 9), [version, scenario, solPi ? "on" : "off", ...[counts.entries, counts.branchMessages, counts.leaves, counts.compactions].map(String)], `the README's row of ${file}`);
		// A SoL-Pi recording holds SoL-Pi's totals entries; a plain one none of SoL-Pi's entries.
		const own = parseSession(text, file).entries.filter((e) => /^sol-pi-/.test(e.customType ?? ""));
		if (solPi) assert.ok(own.some((e) => e.type === "custom" && e.customType === "sol-pi-savings-totals"), `${file} has savings totals`);
		else assert.deepEqual(own, [], `${file} has no SoL-Pi entry`);
	}
	assert.ok(total < 6 * MB, `the corpus is ${total} bytes`);
	// What the corpus must cover: every scenario, Pi 0.84.2 and 1.6.0, with and without SoL-Pi.
	assert.ok(manifest.files.length >= 6);
	assert.deepEqual([...new Set(manifest.files.map((row) => row.scenario))].sort(), Object.keys(SCENARIOS).filter((name) => !LONG_SCENARIOS.includes(name)).sort());
	for (const version of ["0.84.2", "1.6.0"]) assert.ok(manifest.files.some((row) => row.piVersion === version), version);
	assert.deepEqual([...new Set(manifest.files.map((row) => row.solPi))].sort(), [false, true]);
	const rows = (scenario) => manifest.files.filter((row) => row.scenario === scenario);
	assert.ok(rows("fork").every((row) => row.leaves >= 2), "a fork has two leaves");
	assert.ok(rows("compaction").every((row) => row.compactions >= 1), "Pi compacted by itself");
});

test("the long sessions' manifest has one row per file, the README's table says the same, and each scenario is recorded plain, with SoL-Pi and cache-aware", () => {
	const files = fs.readdirSync(long).filter((name) => name.endsWith(".jsonl")).sort();
	assert.deepEqual(longManifest.files.map((row) => row.file), files);
	let total = 0;
	for (const row of longManifest.files) {
		const text = fs.readFileSync(path.join(long, row.file), "utf8");
		total += Buffer.byteLength(text);
		const { file, piVersion: version, scenario, solPi, cacheAware = false, ...counts } = row;
		assert.deepEqual(countsOf(text, file), counts, file);
		assert.ok(LONG_SCENARIOS.includes(scenario) && SCENARIOS[scenario], `${file}: a long scenario of the recorder`);
		assert.ok(solPi || !cacheAware, `${file}: cacheAware only with SoL-Pi`);
		const cells = longReadme.split("\n").find((line) => line.startsWith(`| \`${file}\` |`))?.split("|").map((cell) => cell.trim());
		assert.ok(cells, `the README has a row for ${file}`);
		assert.deepEqual(cells.slice(2, 10), [version, scenario, solPi ? "on" : "off", cacheAware ? "on" : "-", ...[counts.entries, counts.branchMessages, counts.leaves, counts.compactions].map(String)], `the README's row of ${file}`);
		const own = parseSession(text, file).entries.filter((e) => /^sol-pi-/.test(e.customType ?? ""));
		if (solPi) assert.ok(own.some((e) => e.type === "custom" && e.customType === "sol-pi-savings-totals"), `${file} has savings totals`);
		else assert.deepEqual(own, [], `${file} has no SoL-Pi entry`);
	}
	assert.ok(total < 4 * MB, `the long sessions are ${total} bytes`);
	for (const scenario of LONG_SCENARIOS) {
		const ways = longManifest.files.filter((row) => row.scenario === scenario).map((row) => `${row.solPi}/${row.cacheAware ?? false}`).sort();
		assert.deepEqual(ways, ["false/false", "true/false", "true/true"], scenario);
	}
});

for (const [folder, row] of [...manifest.files.map((row) => [corpus, row]), ...longManifest.files.map((row) => [long, row])]) {
	test(`Pi ${piVersion} opens ${row.file} (recorded with Pi ${row.piVersion}) and finds the manifest's entries, branch and leaves`, (t) => {
		// Opened from a copy, so the committed file is never written to.
		const dir = tempDir(t);
		const copy = path.join(dir, row.file);
		fs.copyFileSync(path.join(folder, row.file), copy);
		const before = fs.readFileSync(copy, "utf8");
		const manager = pi.SessionManager.open(copy, dir);
		const entries = manager.getEntries();
		const branch = manager.getBranch();
		const parents = new Set(entries.map((e) => e.parentId).filter(Boolean));
		assert.equal(entries.length, row.entries, "entries");
		assert.equal(branch.length, row.branchEntries, "entries on the active branch");
		assert.equal(branch.filter((e) => e.type === "message").length, row.branchMessages, "messages on the active branch");
		assert.equal(entries.filter((e) => !parents.has(e.id)).length, row.leaves, "leaves");
		assert.equal(manager.getLeafId(), parseSession(before, row.file).entries.at(-1).id, "the active leaf is the newest entry");
		assert.equal(manager.getHeader().id, JSON.parse(before.slice(0, before.indexOf("\n"))).id, "the header's session id");
		assert.equal(fs.readFileSync(copy, "utf8"), before, "opening changed nothing");
	});
}

test(`Pi ${piVersion}: a fresh recording of "resume" has the shape of the committed one of this Pi version`, async (t) => {
	const row = manifest.files.find((r) => r.scenario === "resume" && r.piVersion === piVersion && !r.solPi);
	assert.ok(row, `the corpus has a plain "resume" recording of Pi ${piVersion}`);
	const out = path.join(tempDir(t), "resume.jsonl");
	const result = await record({ scenario: "resume", out, withSolPi: false });
	assert.equal(result.piVersion, piVersion);
	const fresh = fs.readFileSync(out, "utf8");
	const committed = textOf(row.file);
	assert.deepEqual(shapeOf(fresh, "fresh"), shapeOf(committed, row.file));
	const { file, piVersion: version, scenario, solPi, ...counts } = row;
	assert.deepEqual(countsOf(fresh, "fresh"), counts);
	// The same scripted choices on the same project: the same final answers.
	const answers = (text) => parseSession(text).entries.filter((e) => e.message?.role === "assistant" && e.message.stopReason === "stop").map((e) => e.message.content.map((b) => b.text).join(""));
	assert.deepEqual(answers(fresh), answers(committed));
	// The comparison tells scenarios apart: another scenario of the corpus has another shape.
	const other = manifest.files.find((r) => r.scenario !== "resume");
	assert.notDeepEqual(shapeOf(fresh, "fresh"), shapeOf(textOf(other.file), other.file));
});

test("the recorder's command line: usage on bad arguments, and a scenario or option that needs SoL-Pi refuses to run without it", (t) => {
	const dir = tempDir(t);
	const script = path.join(repoRoot, "scripts", "record-session.mjs");
	const env = { ...process.env, SOL_PI_TEST_PI_ROOT: piRoot };
	const run = (...args) => spawnSync(process.execPath, [script, ...args], { encoding: "utf8", env });
	for (const args of [[], ["resume"], ["nonsense", path.join(dir, "x.jsonl")], ["resume", path.join(dir, "x.jsonl"), "--with-sol-py"]]) {
		const result = run(...args);
		assert.equal(result.status, 2, args.join(" "));
		assert.match(result.stderr, /^(unknown option: --with-sol-py\n)?usage: node scripts\/record-session\.mjs <scenario> <out\.jsonl> \[--with-sol-pi \[--cache-aware\]\]\nscenarios: debugging, plans, fork, resume, compaction, long-fnv, long-strsim, long-textwrap\n$/);
	}
	const aware = run("resume", path.join(dir, "x.jsonl"), "--cache-aware");
	assert.equal(aware.status, 2);
	assert.match(aware.stderr, /^--cache-aware needs --with-sol-pi\nusage: /);
	const plans = run("plans", path.join(dir, "plans.jsonl"));
	assert.equal(plans.status, 1);
	assert.equal(plans.stderr, 'record-session: the scenario "plans" uses SoL-Pi\'s plans: record it with --with-sol-pi\n');
	assert.deepEqual(fs.readdirSync(dir), [], "nothing written");
});

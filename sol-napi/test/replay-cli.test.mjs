// `npm run replay` against the `sol-pi` binary: the script runs the command's own code in the
// addon (`replayMain`), so for the same arguments its stdout, stderr and exit code are the
// binary's. The binary is cargo's debug build (in CARGO_TARGET_DIR when set), brought up to date
// here (the test command builds it before the JS suites start, so that is a no-op there).
// Neither depends on the Pi install under test.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import { repoRoot } from "./support.mjs";

const targetDir = path.resolve(repoRoot, process.env.CARGO_TARGET_DIR ?? "target");
const binary = path.join(targetDir, "debug", process.platform === "win32" ? "sol-pi.exe" : "sol-pi");
const corpus = (name) => path.join("fixtures", "sessions", "corpus", name);
const reader = (name) => path.join("fixtures", "sessions", "reader", name);

/** The binary as the sources are now: cargo's build is a no-op when it is current, and a stale one would not be the addon's code. */
let built = false;
function ensureBinary() {
	if (built) return;
	built = true;
	const build = spawnSync("cargo", ["build", "-q", "-p", "sol-pi-cli"], { cwd: repoRoot, encoding: "utf8", timeout: 600_000 });
	assert.equal(build.status, 0, `cargo build -p sol-pi-cli failed:\n${build.stderr}`);
	assert.ok(fs.existsSync(binary), `${binary} is missing after the build`);
}

const run = (command, args, cwd) => {
	const result = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
	assert.equal(result.error, undefined, `${command}: ${result.error}`);
	return { status: result.status, stdout: result.stdout, stderr: result.stderr };
};

/** `sol-pi replay <args>` and `npm run --silent replay -- <args>`, both from `cwd`. */
function both(args, cwd = repoRoot) {
	ensureBinary();
	const cli = run(binary, ["replay", ...args], cwd);
	// --silent: without it npm prints its "> sol-pi-rs replay" banner on stdout.
	const npm = run("npm", ["run", "--silent", "replay", "--", ...args], cwd);
	return { cli, npm };
}

function assertSame({ cli, npm }) {
	assert.equal(npm.stdout, cli.stdout, "stdout differs from the binary's");
	assert.equal(npm.stderr, cli.stderr, "stderr differs from the binary's");
	assert.equal(npm.status, cli.status, "exit code differs from the binary's");
}

test("npm run replay prints the binary's text report of a corpus session", () => {
	const runs = both([corpus("fork-0.84.2.jsonl")]);
	assertSame(runs);
	assert.equal(runs.npm.status, 0, runs.npm.stderr);
	assert.equal(runs.npm.stderr, "");
	assert.match(runs.npm.stdout, /^fixtures\/sessions\/corpus\/fork-0\.84\.2\.jsonl\n=+\n/);
	assert.match(runs.npm.stdout, /Policies side by side:/);
});

test("npm run replay -- --json prints the binary's JSON document", () => {
	const runs = both(["--json", "--all-branches", corpus("fork-0.84.2.jsonl"), corpus("resume-1.6.0.jsonl")]);
	assertSame(runs);
	assert.equal(runs.npm.status, 0, runs.npm.stderr);
	const report = JSON.parse(runs.npm.stdout);
	assert.equal(report.sessions.length, 2);
	assert.equal(report.sessions[0].branches.length, 2);
	assert.equal(report.totals.sessions, 2);
	assert.equal(report.options.allBranches, true);
});

test("npm run replay passes a report larger than a pipe's buffer whole", () => {
	const files = fs.readdirSync(path.join(repoRoot, "fixtures", "sessions", "corpus")).filter((name) => name.endsWith(".jsonl")).sort().map(corpus);
	const runs = both(["--json", "--all-branches", ...files]);
	assertSame(runs);
	assert.equal(runs.npm.status, 0, runs.npm.stderr);
	assert.ok(runs.npm.stdout.length > 64 * 1024, `${runs.npm.stdout.length} bytes`);
	assert.equal(JSON.parse(runs.npm.stdout).sessions.length, files.length);
});

test("npm run replay exits 1 on a broken file and still prints the others", () => {
	const runs = both([corpus("resume-1.6.0.jsonl"), reader("missing-id.jsonl")]);
	assertSame(runs);
	assert.equal(runs.npm.status, 1);
	assert.match(runs.npm.stderr, /^sol-pi: fixtures\/sessions\/reader\/missing-id\.jsonl:12: /);
	assert.match(runs.npm.stdout, /^fixtures\/sessions\/corpus\/resume-1\.6\.0\.jsonl\n/);
	const alone = both([reader("foreign.json")]);
	assertSame(alone);
	assert.equal(alone.npm.status, 1);
	assert.equal(alone.npm.stdout, "");
});

test("npm run replay refuses a FIFO and a link to /dev/zero at once, as the binary does", { skip: process.platform === "win32" }, (t) => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-replay-"));
	t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
	const fifo = path.join(dir, "session.jsonl");
	assert.equal(spawnSync("mkfifo", [fifo]).status, 0);
	const zero = path.join(dir, "zero.jsonl");
	fs.symlinkSync("/dev/zero", zero);
	// No writer ever opens the FIFO: a blocking open would wait until run()'s timeout.
	const runs = both([fifo, zero, corpus("resume-1.6.0.jsonl")]);
	assertSame(runs);
	assert.equal(runs.npm.status, 1);
	assert.equal(
		runs.npm.stderr,
		`sol-pi: ${fifo}: cannot be read: a FIFO (named pipe), not a regular file (a Pi session is a file)\n` +
			`sol-pi: ${zero}: cannot be read: a character device, not a regular file (a Pi session is a file)\n`,
	);
	assert.match(runs.npm.stdout, /^fixtures\/sessions\/corpus\/resume-1\.6\.0\.jsonl\n/);
});

test("npm run replay reads a session torn by a crash and resumed by Pi, with one warning", () => {
	const runs = both([reader("torn-resumed-0.84.2.jsonl")]);
	assertSame(runs);
	assert.equal(runs.npm.status, 0, runs.npm.stderr);
	assert.match(runs.npm.stderr, /^sol-pi: warning: fixtures\/sessions\/reader\/torn-resumed-0\.84\.2\.jsonl:12: a line cut short/);
	assert.match(runs.npm.stdout, /Policies side by side:/);
});

test("npm run replay exits 2 on a usage error, with the binary's message", () => {
	for (const args of [["--json", "--md", corpus("fork-0.84.2.jsonl")], ["--price-input", "-1", corpus("fork-0.84.2.jsonl")], []]) {
		const runs = both(args);
		assertSame(runs);
		assert.equal(runs.npm.status, 2, args.join(" "));
		assert.equal(runs.npm.stdout, "");
	}
	const help = both(["--help"]);
	assertSame(help);
	assert.equal(help.npm.status, 0);
	assert.match(help.npm.stdout, /^Usage: sol-pi replay \[OPTIONS\] <FILES>\.\.\.$/m);
});

test("npm run replay reads files relative to the folder it is run from", () => {
	const cwd = path.join(repoRoot, "fixtures", "sessions", "corpus");
	const runs = both(["resume-1.6.0.jsonl"], cwd);
	assertSame(runs);
	assert.equal(runs.npm.status, 0, runs.npm.stderr);
	assert.match(runs.npm.stdout, /^resume-1\.6\.0\.jsonl\n/);
});

// The benchmarks bench/RESULTS.md cites still run against the extension as it is: each at its
// smallest conversation (100 messages), in a child process on this Pi, with the release addon
// the other tests load. They print figures and assert nothing themselves; here a run must end
// cleanly with a row of finite figures. (bench-obspack.mjs once kept calling ObservationPack's
// registration with the arguments it took before the session engine, and failed unnoticed.)
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import test from "node:test";

import { piVersion, repoRoot } from "./support.mjs";

/** Runs `script` with `args`; its stdout, after asserting that it ended cleanly. */
function run(script, args) {
	const child = spawnSync(process.execPath, [path.join(repoRoot, "scripts", script), ...args], {
		cwd: repoRoot,
		encoding: "utf8",
		env: { ...process.env, SOL_PI_BENCH_START_RUNS: "0" },
		timeout: 300_000,
	});
	assert.equal(child.status, 0, `${script} failed:\n${child.stderr}`);
	return child.stdout;
}

/** The figures of the row that starts with `label`, as numbers. */
function row(output, label) {
	const line = output.split("\n").find((text) => text.trim().split(/\s+/)[0] === label);
	assert.ok(line, `no row ${label} in:\n${output}`);
	const figures = line.trim().split(/\s+/).slice(1).map(Number);
	assert.ok(figures.length > 5 && figures.every(Number.isFinite), line);
	return figures;
}

test(`Pi ${piVersion}: bench-handlers.mjs runs every handler at 100 messages, also after warming`, () => {
	const output = run("bench-handlers.mjs", ["2", "--sizes", "100", "--steady", "3"]);
	for (const label of ["100", "100@3"]) {
		const [, , , context] = row(output, label);
		assert.ok(context > 0, `${label}: context ${context} ms`);
	}
	assert.ok(!output.includes("1000"), output);
});

test(`Pi ${piVersion}: bench-obspack.mjs runs ObservationPack's step at 100 messages`, () => {
	const output = run("bench-obspack.mjs", ["1", "--sizes", "100"]);
	const [, large, , , , steady] = row(output, "100");
	assert.ok(large > 0 && steady > 0, output);
});

// The recorder's scenarios. Each has a `project(cwd)` (a real project written into the
// recording's folder), `steps(ai, state)` (the model's choices, each a function of the
// real context Pi sends: see models.mjs `script`), and `run(rec)` (what the user does:
// prompts, `/tree`, closing and resuming). Searches run the real grep through Pi's bash tool:
// Pi's own grep tool needs ripgrep, which it downloads when missing, and a recording machine
// may have neither ripgrep nor a network. `state.withSolPi` tells whether SoL-Pi is
// loaded, and with it `update_plan` and the edit tool's `then_run`.
// A choice that does not find what it expects answers with `state.fail(text)`: the recorder
// then writes nothing. Optional: `summary(context)` (the text the model writes when Pi compacts),
// `compaction` (Pi's compaction settings), `needsSolPi`.
import { callsOf, lastResult, resultOf, textOf } from "./models.mjs";
import { COLORSYS_BUG, FNV_PRIME, STRSIM_BUG, TEXTWRAP_BUG, colorsysProject, fnvProject, repoSourcesProject, strsimProject, textwrapProject, textwrapSuiteProject } from "./projects.mjs";

const textOfResult = (context, id) => textOf(resultOf(context, id) ?? { content: "" });
/**
 * An edit, fused with a test run when SoL-Pi's Action Fusion is on (then the run is not a
 * separate call). Pi 1.x sends the faux provider no tool list, so the recording's
 * `state.withSolPi` tells whether `then_run` (and `update_plan`) exist.
 */
function editThenTest(ai, state, edit, command, id) {
	if (state.withSolPi) return callsOf(ai, ["edit", { ...edit, then_run: { command } }, id]);
	return callsOf(ai, ["edit", edit, id]);
}
/** The separate test run after an edit, only when the edit did not run it. */
const testUnlessFused = (ai, command, editId, id) => (context) => (/\[then_run:/.test(textOfResult(context, editId)) ? undefined : callsOf(ai, ["bash", { command }, id]));
/** What the newest test run said: the text of the newest tool result that ran the suite. */
const newestRun = (context) => textOf(lastResult(context) ?? { content: "" });

// a. A long debugging session with many large outputs: the fnv crate from the cargo registry,
// with a wrong FNV prime; builds, test logs with backtraces, greps and reads of its sources.
const debugging = {
	description: "long debugging session on the fnv crate: builds, failing test logs, greps, big reads, a fix",
	project: fnvProject,
	steps: (ai, state) => {
		// What the model has read so far: the constant the hasher multiplies by, once a result
		// showed it (by the time of the fix, SoL-Pi may have packed that result into a placeholder).
		let wrong;
		const look = (context) => {
			for (const message of context.messages ?? []) {
				const found = /wrapping_mul\((0x[0-9a-f]+)\)/.exec(textOf(message));
				if (found && found[1] !== FNV_PRIME) wrong ??= found[1];
			}
		};
		const wrongPrime = () => wrong;
		const steps = [
			() => callsOf(ai, ["bash", { command: "cargo build --offline -v 2>&1" }, "build-1"]),
			() => callsOf(ai, ["bash", { command: "RUST_BACKTRACE=full cargo test --offline 2>&1" }, "test-1"]),
			() => callsOf(ai, ["bash", { command: "grep -rn -C 6 -E 'wrapping_mul|0x[0-9a-f]{8,}' --include='*.rs' --exclude-dir=target ." }, "grep-1"]),
			() => callsOf(ai, ["read", { path: "lib.rs" }, "read-1"], ["read", { path: "README.md" }, "read-2"]),
			() => callsOf(ai, ["bash", { command: "RUST_BACKTRACE=full cargo test --offline -- --nocapture --test-threads=1 2>&1" }, "test-2"]),
			() => callsOf(ai, ["bash", { command: "grep -rn 'fn \\|impl ' lib.rs" }, "grep-2"]),
			// Check the hypothesis: FNV-1a of "a" with the real prime and with the one in the code.
			(context) => {
				const wrong = wrongPrime(context);
				if (!wrong) return state.fail("I could not find the multiplication by the FNV prime.");
				const fnv = "f=lambda d,p: functools.reduce(lambda h,b: ((h^b)*p) % 2**64, d, 0xcbf29ce484222325)";
				return callsOf(ai, ["bash", { command: `python3 -c "import functools; ${fnv}; print(hex(f(b'a', ${FNV_PRIME})), hex(f(b'a', ${wrong})))"` }, "check-1"]);
			},
			() => callsOf(ai, ["read", { path: "lib.rs", offset: 150, limit: 120 }, "read-3"]),
			(context) => {
				const wrong = wrongPrime(context);
				if (!wrong) return state.fail("I could not find the multiplication by the FNV prime.");
				return editThenTest(ai, state, { path: "lib.rs", edits: [{ oldText: `hash.wrapping_mul(${wrong})`, newText: `hash.wrapping_mul(${FNV_PRIME})` }] }, "cargo test --offline 2>&1", "fix-1");
			},
			testUnlessFused(ai, "cargo test --offline 2>&1", "fix-1", "test-3"),
			() => callsOf(ai, ["bash", { command: "cargo build --offline --release -v 2>&1" }, "build-2"]),
			(context) =>
				/test result: ok/.test(textOfResult(context, "fix-1") + textOfResult(context, "test-3"))
					? `FnvHasher::write multiplied by a wrong prime; it uses the 64-bit FNV prime ${FNV_PRIME} again and the tests pass.`
					: state.fail("The fix did not make the tests pass."),
			// Second prompt. With SoL-Pi the big grep output is a placeholder by now: look the
			// multiplication up in the archived output (ObservationPack's recall).
			(context) => {
				if (!state.withSolPi) return undefined;
				const id = (context.messages ?? []).filter((m) => m.role === "toolResult").map((m) => /^id: (obs_[a-f0-9]{24})$/m.exec(textOf(m))?.[1]).find(Boolean);
				return id ? callsOf(ai, ["obs_recall", { id, query: "wrapping_mul" }, "recall-1"]) : undefined;
			},
			// The documentation tests and the whole suite once more.
			() => callsOf(ai, ["bash", { command: "cargo test --offline --doc -v 2>&1" }, "doc-1"]),
			() => callsOf(ai, ["read", { path: "lib.rs", offset: 1, limit: 120 }, "read-4"]),
			() => callsOf(ai, ["bash", { command: "RUST_BACKTRACE=1 cargo test --offline -- --test-threads=1 2>&1" }, "test-4"]),
			(context) => {
				const results = [...newestRun(context).matchAll(/^test result: (\w+)\. (\d+) passed; (\d+) failed/gm)].map((m) => `${m[2]} passed, ${m[3]} failed`);
				return `Every test target ran: ${results.join("; ") || "no summary line"}.`;
			},
			// Third prompt: the documentation build and the lints.
			() => callsOf(ai, ["bash", { command: "cargo doc --offline --no-deps -v 2>&1" }, "doc-2"], ["bash", { command: "cargo clippy --offline --all-targets 2>&1" }, "lint-1"]),
			() => callsOf(ai, ["read", { path: "Cargo.toml" }, "read-5"]),
			(context) => {
				const warnings = (textOfResult(context, "lint-1").match(/^warning: /gm) ?? []).length;
				const documented = /Finished|Generated/.test(textOfResult(context, "doc-2"));
				const first = /^warning: (.*)$/m.exec(textOfResult(context, "lint-1"))?.[1];
				return `The docs ${documented ? "build" : "do not build"}; clippy printed ${warnings} warning line${warnings === 1 ? "" : "s"}${first ? `, the first: ${first}` : ""}.`;
			},
		];
		return steps.map((step) => (context) => (look(context), step(context)));
	},
	async run(rec) {
		await rec.prompt("The fnv crate's tests fail since a refactor of the hasher. Find out why and fix it.");
		await rec.prompt("Run the documentation tests and the whole suite once more and tell me the result.");
		await rec.prompt("Last: do the docs build, and what does clippy say?");
	},
};

const plan = (steps) => ({ steps: steps.map(([id, goal, status]) => ({ id, goal, status })) });

// b. A multi-task session with plans: colorsys of the Python standard library with a wrong
// coefficient; the first task fixes it, the second adds a test; each task has its own plan.
const plans = {
	description: "two tasks with update_plan on the standard library's colorsys: fix a bug, then add a test",
	needsSolPi: true,
	project: colorsysProject,
	summary: () =>
		"## Goal\nFix the failing colorsys round-trip tests.\n\n## Progress\nrgb_to_yiq used 0.47 instead of 0.74 for the I coefficient; fixed, `python3 -m unittest` passes.\n\n## Next\nReport.",
	steps: (ai, state) => {
		const first = (a, b, c) =>
			plan([
				["locate", "Run the tests and find the failing conversion", a],
				["fix", "Fix the conversion", b],
				["verify", "Run the whole suite and report", c],
			]);
		const second = (a, b) =>
			plan([
				["test", "Add a test for pure green in YIQ", a],
				["run", "Run the suite and report", b],
			]);
		let fixed = false;
		let passed = false;
		const ran = (text) => /^Ran \d+ tests? in [\d.]+s$/m.exec(text)?.[0] ?? "the suite ran";
		const greenTest = `    def test_pure_green_in_yiq(self):
        y, i, q = colorsys.rgb_to_yiq(0.0, 1.0, 0.0)
        self.assertAlmostEqual(y, 0.59, places=2)
        self.assertAlmostEqual(q, -0.525, places=3)

`;
		return [
			() => callsOf(ai, ["update_plan", first("in_progress", "pending", "pending"), "plan-1"]),
			() => callsOf(ai, ["bash", { command: "python3 -m unittest -v 2>&1" }, "test-1"]),
			() => callsOf(ai, ["read", { path: "colorpkg/colorsys.py" }, "read-1"], ["bash", { command: "grep -n 'yiq\\|0\\.[0-9][0-9]\\*' colorpkg/colorsys.py" }, "grep-1"]),
			(context) => {
				if (!textOfResult(context, "read-1").includes(COLORSYS_BUG[1])) return state.fail("The wrong coefficient is not in colorsys.py.");
				return editThenTest(ai, state, { path: "colorpkg/colorsys.py", edits: [{ oldText: COLORSYS_BUG[1], newText: COLORSYS_BUG[0] }] }, "python3 -m unittest 2>&1", "fix-1");
			},
			testUnlessFused(ai, "python3 -m unittest 2>&1", "fix-1", "test-2"),
			(context) => {
				const text = textOfResult(context, "fix-1") + textOfResult(context, "test-2");
				fixed = /^OK$/m.test(text);
				const progress = { files_changed: ["colorpkg/colorsys.py"], verification: [`python3 -m unittest: ${ran(text)}, ${fixed ? "OK" : "FAILED"}`], decisions: ["rgb_to_yiq's I coefficient of R is 0.74, as yiq_to_rgb inverts it"] };
				return callsOf(ai, ["update_plan", { ...first("completed", "completed", "in_progress"), progress }, "plan-2"]);
			},
			// Possibly after Online Context Compact's boundary compaction, as below.
			() => (fixed ? "rgb_to_yiq used 0.47 instead of 0.74 for the I coefficient of red; fixed in colorpkg/colorsys.py, and the suite passes." : state.fail("The fix did not make the suite pass.")),
			// The second task.
			() => callsOf(ai, ["update_plan", second("in_progress", "pending"), "plan-3"]),
			() => callsOf(ai, ["read", { path: "tests/test_colorsys.py" }, "read-2"]),
			(context) => {
				const anchor = "    def test_pure_red_in_yiq(self):\n";
				if (!textOfResult(context, "read-2").includes(anchor)) return state.fail("The test file has no pure red test to add beside.");
				return editThenTest(ai, state, { path: "tests/test_colorsys.py", edits: [{ oldText: anchor, newText: greenTest + anchor }] }, "python3 -m unittest -v 2>&1", "edit-1");
			},
			testUnlessFused(ai, "python3 -m unittest -v 2>&1", "edit-1", "test-3"),
			(context) => {
				const text = textOfResult(context, "edit-1") + textOfResult(context, "test-3");
				passed = /^OK$/m.test(text);
				return callsOf(ai, ["update_plan", { ...second("completed", "completed"), progress: { files_changed: ["tests/test_colorsys.py"], verification: [`python3 -m unittest -v: ${ran(text)}, ${passed ? "OK" : "FAILED"}`] } }, "plan-4"]);
			},
			// Possibly after Online Context Compact's boundary compaction: the run's result is in the summary now.
			() => (passed ? "Added test_pure_green_in_yiq to tests/test_colorsys.py; the suite passes." : state.fail("The new test does not pass.")),
		];
	},
	async run(rec) {
		await rec.prompt("The colorsys round-trip tests fail. Plan the work, find the bug and fix it.");
		await rec.prompt("Next task: add a test that pure green has the expected YIQ values, and run the suite.");
	},
};

const REPO_FILES = ["sol-core/src/savings.rs", "sol-core/src/savings/book.rs", "sol-core/src/savings/ledger.rs", "sol-core/src/savings/report.rs", "sol-core/src/session.rs", "sol-core/src/tui.rs"];

// c. A session with a fork: questions about this repository's own sources; after the first
// answer the user goes back (`/tree`) to before the first question and asks another one, then
// returns to the first answer and goes on there.
const fork = {
	description: "questions on this repository's sol-core sources with /tree: a second branch, then back to the first",
	project: (cwd) => repoSourcesProject(cwd, REPO_FILES),
	steps: (ai, state) => [
		() => callsOf(ai, ["bash", { command: "grep -rn 'impl fmt::Display for Report' sol-core" }, "grep-1"]),
		(context) => {
			const hit = /^([^\s:]+\.rs):(\d+):/m.exec(textOfResult(context, "grep-1"));
			if (!hit) return state.fail("The Display impl of Report was not found.");
			return callsOf(ai, ["read", { path: hit[1], offset: Math.max(1, Number(hit[2]) - 20), limit: 80 }, "read-1"]);
		},
		(context) => (textOfResult(context, "read-1").includes("fmt::Display for Report") ? "The table is written by `impl fmt::Display for Report` in sol-core/src/savings/report.rs." : state.fail("The read did not show the Display impl.")),
		// The second branch.
		() => callsOf(ai, ["bash", { command: "wc -l $(find sol-core -name '*.rs' | sort)" }, "wc-1"]),
		(context) => `sol-core has ${/^\s*(\d+) total$/m.exec(textOfResult(context, "wc-1"))?.[1] ?? "an unknown number of"} lines of Rust in these files.`,
		// Back on the first branch.
		() => callsOf(ai, ["bash", { command: "grep -rn -A 12 'fn status_line' sol-core" }, "grep-2"]),
		(context) => (textOfResult(context, "grep-2").includes("status_line") ? "`Report::status_line` prints the running total: money saved, the cost and token percentages." : state.fail("status_line was not found.")),
	],
	async run(rec) {
		await rec.prompt("Where is the /sol-pi savings table formatted?");
		const firstAnswer = rec.sessionManager.getLeafId();
		await rec.navigate((entries) => entries.find((e) => e.type === "message" && e.message.role === "user"), "the first question");
		await rec.prompt("Forget that. How many lines of Rust are in sol-core?");
		await rec.navigate((entries) => entries.find((e) => e.id === firstAnswer), "the first answer");
		await rec.prompt("And what does the status line show?");
	},
};

// d. A resumed session: textwrap of the Python standard library; the session is closed after
// the first prompt, opened again from its file, and goes on.
const resume = {
	description: "textwrap of the standard library: tests run, the session closed and resumed, a test added",
	project: textwrapProject,
	steps: (ai, state) => [
		() => callsOf(ai, ["bash", { command: "python3 -m unittest -v 2>&1" }, "test-1"]),
		() => callsOf(ai, ["bash", { command: "grep -n '^def ' wrappkg/textwrap.py" }, "defs-1"]),
		(context) => {
			const functions = [...textOfResult(context, "defs-1").matchAll(/^\d+:def (\w+)\(/gm)].map((m) => m[1]);
			const tested = functions.filter((name) => textOfResult(context, "test-1").includes(`test_${name}`));
			return `The suite tests ${tested.join(", ") || "none"} of ${functions.join(", ")}.`;
		},
		// After the resume.
		() => callsOf(ai, ["read", { path: "tests/test_textwrap.py" }, "read-1"]),
		(context) => {
			const anchor = '\n\nif __name__ == "__main__":';
			if (!textOfResult(context, "read-1").includes(anchor)) return state.fail("The test file has no main guard.");
			const test = '\n\n    def test_fill_joins_the_lines(self):\n        self.assertEqual(textwrap.fill("a b c d", 3), "a b\\nc d")';
			return editThenTest(ai, state, { path: "tests/test_textwrap.py", edits: [{ oldText: anchor, newText: test + anchor }] }, "python3 -m unittest -v 2>&1", "edit-1");
		},
		testUnlessFused(ai, "python3 -m unittest -v 2>&1", "edit-1", "test-2"),
		(context) => (/^OK$/m.test(newestRun(context)) ? "Added test_fill_joins_the_lines; all four tests pass." : state.fail("The new test does not pass.")),
	],
	async run(rec) {
		await rec.prompt("Run the textwrap tests and tell me which functions they cover.");
		await rec.resume();
		await rec.prompt("Add a test for fill() and run the suite.");
	},
};

// e. Pi's own threshold compaction: reads of this repository's large sources fill a context
// over the threshold that small compaction settings give, so Pi compacts by itself.
const compaction = {
	description: "reads of this repository's sources until Pi's own threshold compaction runs",
	project: (cwd) => repoSourcesProject(cwd, REPO_FILES),
	// Compact once the context passes 100,000 - 92,000 = 8,000 tokens.
	compaction: { enabled: true, reserveTokens: 92_000, keepRecentTokens: 150 },
	summary: () => "## Goal\nUnderstand sol-core's savings accounting.\n\n## Progress\nRead the savings modules: Book feeds the Ledger, Report prints the table.\n\n## Next\nAnswer the user's questions.",
	steps: (ai, state) => [
		() => callsOf(ai, ["read", { path: "sol-core/src/session.rs" }, "read-1"]),
		() => "sol-core/src/session.rs walks a session's branch and restores the newest readable entry.",
		() => callsOf(ai, ["read", { path: "sol-core/src/savings/book.rs" }, "read-2"], ["read", { path: "sol-core/src/savings/ledger.rs" }, "read-3"]),
		() => "Book records each request as sent; Ledger rebuilds the layers and prices them.",
		() => callsOf(ai, ["read", { path: "sol-core/src/savings/report.rs" }, "read-4"]),
		() => callsOf(ai, ["bash", { command: "grep -rn 'pub fn' sol-core/src/savings" }, "grep-1"]),
		(context) => `The public functions of the savings modules: ${(textOfResult(context, "grep-1").match(/pub fn \w+/g) ?? []).length} found.`,
	],
	async run(rec) {
		await rec.prompt("Read sol-core/src/session.rs and tell me what it does.");
		await rec.prompt("Now read the savings book and ledger and explain how they fit together.");
		await rec.prompt("Last: read the report module and list the public functions of the savings modules.");
	},
};

// The long sessions (fixtures/sessions/long/): several tasks each, with many large real
// outputs. With SoL-Pi each task has its update_plan plan (so Online Context Compact has
// boundaries); plain Pi has no update_plan, so those moves are skipped there, and the other
// moves are the same.

/** An update_plan call, only when SoL-Pi is loaded (plain Pi has no such tool). */
const planned = (ai, state, args, id) => () => (state.withSolPi ? callsOf(ai, ["update_plan", args, id]) : undefined);
/** A write or an edit, fused with `command` when SoL-Pi's Action Fusion is on. */
function changeThenRun(ai, state, tool, args, command, id) {
	return callsOf(ai, [tool, state.withSolPi ? { ...args, then_run: { command } } : args, id]);
}
// A run's lines are found anywhere in its result: with SoL-Pi the reducer may have replaced
// the log by a receipt, whose evidence quotes them (`quote="test result: ok. ..."`).
/** The `test result:` lines of a cargo run. */
const cargoResults = (text) => [...text.matchAll(/test result: (\w+)\. (\d+) passed; (\d+) failed/g)].map((m) => `${m[2]} passed, ${m[3]} failed`);
/** Whether a cargo test run passed: summary lines and no failing one. */
const cargoPassed = (text) => /test result: ok\./.test(text) && !/test result: FAILED/.test(text);
/** Whether a unittest run passed: its `OK` line, as printed or as a receipt quotes it. */
const unittestPassed = (text) => /(^|quote=")OK( \(.*\))?"?$/m.test(text) && !/FAILED \(/.test(text);

// f. A long session on the fnv crate: fix the wrong prime, pin more known answers, then the
// release build, the docs and clippy's pedantic lints, and a last check.
const longFnv = {
	description: "long session on the fnv crate: a fix, new tests, release build, docs, clippy pedantic and a lint fix",
	project: fnvProject,
	summary: () => "## Goal\nThe user's current task on the fnv crate.\n\n## Progress\nThe completed plan steps: the failing runs, the cause found in lib.rs, the changes made and the runs after them.\n\n## Next\nThe plan's next step.",
	steps: (ai, state) => {
		let wrong;
		const look = (context) => {
			for (const message of context.messages ?? []) {
				const found = /wrapping_mul\((0x[0-9a-f]+)\)/.exec(textOf(message));
				if (found && found[1] !== FNV_PRIME) wrong ??= found[1];
			}
		};
		const first = (a, b, c) => plan([["locate", "Reproduce the failure and find its cause", a], ["fix", "Fix the hasher", b], ["verify", "Run the whole suite", c]]);
		const second = (a, b) => plan([["tests", "Pin known answers of with_key and FnvHashMap", a], ["run", "Run every test target, no_std too", b]]);
		const third = (a, b, c) => plan([["builds", "Release build and docs", a], ["lint", "Clippy with the pedantic lints, fix the hasher's", b], ["verify", "Run the suite again", c]]);
		const said = {};
		const fnv = "f=lambda d,p,h=0xcbf29ce484222325: functools.reduce(lambda h,b: ((h^b)*p) % 2**64, d, h)";
		const assign = "            hash = hash ^ (*byte as u64);\n";
		// The crate is edition 2015 (no edition in its Cargo.toml): an example names it with extern crate.
		const vectors = `extern crate fnv;

use fnv::FnvHasher;
use std::hash::Hasher;

fn main() {
    for n in 0..400u32 {
        let input = format!("key-{}", n * 7919);
        let mut hasher = FnvHasher::default();
        hasher.write(input.as_bytes());
        println!("{} {:#018x}", input, hasher.finish());
    }
}
`;
		const tests = `
    #[test]
    fn with_key_continues_a_hash() {
        let mut hasher = FnvHasher::with_key(fnv1a(b"foo"));
        hasher.write(b"bar");
        assert_eq!(hasher.finish(), fnv1a(b"foobar"));
    }

    #[cfg(feature = "std")]
    #[test]
    fn fnv_map_and_set_hash_with_fnv() {
        let mut map: FnvHashMap<&str, u32> = FnvHashMap::default();
        map.insert("foo", 1);
        map.insert("bar", 2);
        assert_eq!(map.get("foo"), Some(&1));
        let set: FnvHashSet<u8> = (0..10).collect();
        assert_eq!(set.len(), 10);
    }
`;
		const steps = [
			planned(ai, state, first("in_progress", "pending", "pending"), "plan-1"),
			() => callsOf(ai, ["bash", { command: "cargo build --offline -v 2>&1" }, "build-1"]),
			() => callsOf(ai, ["bash", { command: "RUST_BACKTRACE=full cargo test --offline 2>&1" }, "test-1"]),
			() => callsOf(ai, ["bash", { command: "grep -rn -C 6 -E 'wrapping_mul|0x[0-9a-f]{8,}' --include='*.rs' --exclude-dir=target ." }, "grep-1"]),
			() => callsOf(ai, ["read", { path: "lib.rs" }, "read-1"], ["read", { path: "README.md" }, "read-2"]),
			() => callsOf(ai, ["bash", { command: "RUST_BACKTRACE=full cargo test --offline -v -- --nocapture --test-threads=1 2>&1" }, "test-2"]),
			() => callsOf(ai, ["bash", { command: "grep -rn 'fn \\|impl \\|type ' lib.rs" }, "grep-2"]),
			() => (wrong ? callsOf(ai, ["bash", { command: `python3 -c "import functools; ${fnv}; print(hex(f(b'a', ${FNV_PRIME})), hex(f(b'a', ${wrong})))"` }, "check-1"]) : state.fail("I could not find the multiplication by the FNV prime.")),
			() => callsOf(ai, ["read", { path: "lib.rs", offset: 100, limit: 40 }, "read-3"], ["read", { path: "Cargo.toml" }, "read-4"]),
			planned(ai, state, first("completed", "in_progress", "pending"), "plan-2"),
			() => (wrong ? editThenTest(ai, state, { path: "lib.rs", edits: [{ oldText: `hash.wrapping_mul(${wrong})`, newText: `hash.wrapping_mul(${FNV_PRIME})` }] }, "cargo test --offline 2>&1", "fix-1") : state.fail("I could not find the multiplication by the FNV prime.")),
			testUnlessFused(ai, "cargo test --offline 2>&1", "fix-1", "test-3"),
			() => callsOf(ai, ["bash", { command: "cargo test --offline -v -- --test-threads=1 2>&1" }, "test-4"]),
			(context) => (cargoPassed(textOfResult(context, "test-4")) ? planned(ai, state, first("completed", "completed", "completed"), "plan-3")() : state.fail("The fix did not make the suite pass.")),
			() => `FnvHasher::write multiplied by ${wrong} instead of the 64-bit FNV prime ${FNV_PRIME}; fixed in lib.rs, and every test passes.`,
			// Second task.
			planned(ai, state, second("in_progress", "pending"), "plan-4"),
			() => callsOf(ai, ["read", { path: "lib.rs", offset: 136 }, "read-5"]),
			// What the read showed is remembered: by the edit, ObservationPack may have replaced it by a placeholder.
			(context) => {
				said.anchor = textOfResult(context, "read-5").includes("    #[test]\n    fn basic_tests() {\n");
				return callsOf(ai, ["bash", { command: "grep -rn -C 3 'with_key\\|FnvHashMap\\|FnvHashSet\\|FnvBuildHasher' lib.rs README.md" }, "grep-3"]);
			},
			() => callsOf(ai, ["bash", { command: `python3 -c "import functools; ${fnv}; print(hex(f(b'bar', ${FNV_PRIME}, f(b'foo', ${FNV_PRIME}))), hex(f(b'foobar', ${FNV_PRIME})))"` }, "check-2"]),
			(context) => {
				const anchor = "    #[test]\n    fn basic_tests() {\n";
				if (!said.anchor) return state.fail("The test module has no basic_tests to add beside.");
				const [chained, whole] = textOfResult(context, "check-2").trim().split(/\s+/);
				if (!chained || chained !== whole) return state.fail("with_key does not continue a hash in the Python model.");
				return editThenTest(ai, state, { path: "lib.rs", edits: [{ oldText: anchor, newText: tests.slice(1) + "\n" + anchor }] }, "cargo test --offline 2>&1", "edit-1");
			},
			testUnlessFused(ai, "cargo test --offline 2>&1", "edit-1", "test-5"),
			() => callsOf(ai, ["bash", { command: "cargo test --offline --doc -v 2>&1" }, "doc-1"]),
			() => callsOf(ai, ["bash", { command: "cargo test --offline --no-default-features -v 2>&1" }, "test-6"]),
			(context) => {
				if (!cargoPassed(textOfResult(context, "test-6"))) return state.fail("The no_std tests do not pass.");
				said.noStd = cargoResults(textOfResult(context, "test-6")).join("; ");
				return planned(ai, state, second("completed", "completed"), "plan-5")();
			},
			// Possibly after Online Context Compact's boundary compaction: what the runs said is remembered.
			() => `Added with_key_continues_a_hash and fnv_map_and_set_hash_with_fnv; without std: ${said.noStd}.`,
			// Third task.
			planned(ai, state, third("in_progress", "pending", "pending"), "plan-6"),
			() => callsOf(ai, ["bash", { command: "cargo build --offline --release -v 2>&1" }, "build-2"]),
			() => callsOf(ai, ["bash", { command: "cargo doc --offline --no-deps -v 2>&1" }, "doc-2"]),
			planned(ai, state, third("completed", "in_progress", "pending"), "plan-7"),
			() => callsOf(ai, ["bash", { command: "cargo clippy --offline --all-targets -- -W clippy::pedantic 2>&1" }, "lint-1"]),
			// The pedantic output is long (Pi keeps its tail): the default lints of the library alone.
			() => callsOf(ai, ["bash", { command: "cargo clippy --offline --lib 2>&1" }, "lint-2"]),
			(context) => (/manual implementation of an assign operation/.test(textOfResult(context, "lint-2")) ? callsOf(ai, ["bash", { command: "grep -n -B 4 -A 4 'hash = hash' lib.rs" }, "grep-4"]) : state.fail("clippy did not flag the assignment in write.")),
			(context) => {
				if (!textOfResult(context, "grep-4").includes(assign.trim())) return state.fail("The assignment clippy flagged is not in lib.rs.");
				return editThenTest(ai, state, { path: "lib.rs", edits: [{ oldText: assign, newText: "            hash ^= u64::from(*byte);\n" }] }, "cargo clippy --offline --all-targets 2>&1", "lint-fix-1");
			},
			testUnlessFused(ai, "cargo clippy --offline --all-targets 2>&1", "lint-fix-1", "lint-3"),
			// The pedantic lints again without the long-literal noise of the known-answer tests.
			() => callsOf(ai, ["bash", { command: "cargo clippy --offline --all-targets -- -W clippy::pedantic -A clippy::unreadable_literal 2>&1" }, "lint-4"]),
			planned(ai, state, third("completed", "completed", "in_progress"), "plan-8"),
			() => callsOf(ai, ["bash", { command: "RUST_BACKTRACE=1 cargo test --offline -v 2>&1" }, "test-7"]),
			(context) => {
				if (!cargoPassed(textOfResult(context, "test-7"))) return state.fail("The suite fails after the lint fix.");
				said.lints = (textOfResult(context, "lint-1").match(/^warning: /gm) ?? []).length;
				said.suite = cargoResults(textOfResult(context, "test-7")).join("; ");
				return planned(ai, state, third("completed", "completed", "completed"), "plan-9")();
			},
			() => `Release build and docs are fine. Clippy with the pedantic lints printed ${said.lints} warning lines, most of them long literals in the known-answer tests; I fixed the manual assign operation and the u8 cast in write. The suite passes: ${said.suite}.`,
			// Fourth prompt: a last look.
			() => callsOf(ai, ["bash", { command: "grep -n -C 2 'wrapping_mul\\|\\^=\\|0xcbf29ce484222325' lib.rs" }, "grep-5"]),
			() => callsOf(ai, ["bash", { command: "cargo test --offline --release 2>&1" }, "test-8"]),
			(context) => (textOfResult(context, "grep-5").includes(`wrapping_mul(${FNV_PRIME})`) && cargoPassed(textOfResult(context, "test-8")) ? `write uses the offset basis 0xcbf29ce484222325 and the prime ${FNV_PRIME}; the release tests pass too.` : state.fail("The final check failed.")),
			// Fifth prompt: the hasher against the Python model on many inputs.
			() => changeThenRun(ai, state, "write", { path: "examples/vectors.rs", content: vectors }, "cargo run --offline --example vectors 2>&1", "write-1"),
			(context) => (/\[then_run:/.test(textOfResult(context, "write-1")) ? undefined : callsOf(ai, ["bash", { command: "cargo run --offline --example vectors 2>&1" }, "run-1"])),
			() => callsOf(ai, ["bash", { command: `cargo run -q --offline --example vectors > vectors.txt && wc -l vectors.txt && python3 -c "import functools; ${fnv}; rows=[l.split() for l in open('vectors.txt')]; print(sum(int(h, 16) != f(k.encode(), ${FNV_PRIME}) for k, h in rows), 'mismatches')"` }, "check-3"]),
			() => callsOf(ai, ["read", { path: "vectors.txt" }, "read-6"]),
			() => callsOf(ai, ["bash", { command: "cargo build --offline --examples -v 2>&1" }, "build-3"]),
			() => callsOf(ai, ["bash", { command: "cargo test --offline --all-targets -v 2>&1" }, "test-9"]),
			(context) => {
				const found = /^(\d+) mismatches$/m.exec(textOfResult(context, "check-3"));
				return found ? `FnvHasher and the Python FNV-1a model agree on ${/^(\d+) vectors\.txt$/m.exec(textOfResult(context, "check-3"))?.[1] ?? "all"} inputs: ${found[1]} mismatches.` : state.fail("The comparison printed no count.");
			},
		];
		return steps.map((step) => (context) => (look(context), step(context)));
	},
	async run(rec) {
		await rec.prompt("The fnv crate's tests fail since a refactor of the hasher. Plan the work, find out why and fix it.");
		await rec.prompt("Pin more known answers: a test that with_key continues a hash, and one for FnvHashMap and FnvHashSet. Run every test target, without std too.");
		await rec.prompt("Check the release build and the docs, run clippy with the pedantic lints and fix what it says about the hasher itself.");
		await rec.prompt("Show me the constants the hasher uses now and run the release tests.");
		await rec.prompt("Last: does FnvHasher agree with a reference FNV-1a on a few hundred inputs? Write an example that prints them and compare.");
	},
};

// g. A long session on the strsim crate: a doubled Jaro-Winkler prefix boost, a new test,
// clippy's pedantic lints, and a small example program.
const longStrsim = {
	description: "long session on the strsim crate: a Jaro-Winkler fix, a new test, clippy pedantic, docs, an example program",
	project: strsimProject,
	summary: () => "## Goal\nThe user's current task on the strsim crate.\n\n## Progress\nThe completed plan steps: the failing runs, the cause found in src/lib.rs, the changes made and the runs after them.\n\n## Next\nThe plan's next step.",
	steps: (ai, state) => {
		const first = (a, b, c) => plan([["locate", "Reproduce the jaro_winkler failures and find the cause", a], ["fix", "Fix the prefix boost", b], ["verify", "Run every test target", c]]);
		const second = (a, b) => plan([["test", "Add a bounds and symmetry test for jaro_winkler", a], ["run", "Run the suite and the doc tests", b]]);
		const third = (a, b) => plan([["lint", "Clippy pedantic and the docs", a], ["example", "An example program comparing the metrics", b]]);
		const said = {};
		const anchor = "    #[test]\n    fn jaro_winkler_diff_short() {\n";
		const bounds = `    #[test]
    fn jaro_winkler_is_bounded_and_symmetric() {
        let words = ["dixon", "dicksonx", "martha", "marhta", "cheeseburger", "cheese fries", ""];
        for a in words.iter() {
            for b in words.iter() {
                let score = jaro_winkler(a, b);
                assert!((0.0..=1.0).contains(&score), "{} / {}: {}", a, b, score);
                assert_delta!(score, jaro_winkler(b, a), 1e-12);
            }
        }
    }

`;
		// The crate is edition 2015 (no edition in its Cargo.toml): an example names it with extern crate.
		const example = `extern crate strsim;

use strsim::{damerau_levenshtein, jaro, jaro_winkler, levenshtein, osa_distance, sorensen_dice};

fn main() {
    let pairs = [("kitten", "sitting"), ("martha", "marhta"), ("dixon", "dicksonx"), ("cheeseburger", "cheese fries"), ("ca", "abc")];
    println!("{:<28} {:>5} {:>5} {:>5} {:>7} {:>7} {:>7}", "pair", "lev", "osa", "dl", "jaro", "jw", "dice");
    for (a, b) in pairs.iter() {
        println!(
            "{:<28} {:>5} {:>5} {:>5} {:>7.4} {:>7.4} {:>7.4}",
            format!("{} / {}", a, b),
            levenshtein(a, b),
            osa_distance(a, b),
            damerau_levenshtein(a, b),
            jaro(a, b),
            jaro_winkler(a, b),
            sorensen_dice(a, b)
        );
    }
}
`;
		return [
			planned(ai, state, first("in_progress", "pending", "pending"), "plan-1"),
			() => callsOf(ai, ["bash", { command: "cargo build --offline -v 2>&1" }, "build-1"]),
			() => callsOf(ai, ["bash", { command: "RUST_BACKTRACE=1 cargo test --offline 2>&1" }, "test-1"]),
			(context) => (/jaro_winkler\w* \.\.\. FAILED/.test(textOfResult(context, "test-1")) ? callsOf(ai, ["bash", { command: "RUST_BACKTRACE=full cargo test --offline --lib -- --nocapture --test-threads=1 jaro 2>&1" }, "test-2"]) : state.fail("No jaro_winkler test failed.")),
			() => callsOf(ai, ["bash", { command: "cargo test --offline --test lib -v -- --test-threads=1 2>&1" }, "test-2b"]),
			() => callsOf(ai, ["bash", { command: "grep -rn -C 5 'jaro_winkler\\|prefix_length' --include='*.rs' src tests" }, "grep-1"]),
			() => callsOf(ai, ["read", { path: "src/lib.rs" }, "read-1"]),
			() => callsOf(ai, ["read", { path: "src/lib.rs", offset: 86, limit: 140 }, "read-2"], ["read", { path: "tests/lib.rs" }, "read-3"]),
			() => callsOf(ai, ["bash", { command: "grep -n -A 5 'fn jaro_winkler_' src/lib.rs" }, "grep-2"]),
			// What the reads showed is remembered: after Online Context Compact's boundary
			// compaction at the completed step they are in the summary only.
			(context) => {
				said.cause = textOfResult(context, "read-2").includes(STRSIM_BUG[1]);
				return planned(ai, state, first("completed", "in_progress", "pending"), "plan-2")();
			},
			() => (said.cause ? editThenTest(ai, state, { path: "src/lib.rs", edits: [{ oldText: STRSIM_BUG[1], newText: STRSIM_BUG[0] }] }, "cargo test --offline 2>&1", "fix-1") : state.fail("The prefix boost is not in the lines read.")),
			testUnlessFused(ai, "cargo test --offline 2>&1", "fix-1", "test-3"),
			() => callsOf(ai, ["bash", { command: "cargo test --offline -v -- --test-threads=1 2>&1" }, "test-4"]),
			(context) => {
				if (!cargoPassed(textOfResult(context, "test-4"))) return state.fail("The fix did not make the suite pass.");
				said.suite = cargoResults(textOfResult(context, "test-4")).join("; ");
				return planned(ai, state, first("completed", "completed", "completed"), "plan-3")();
			},
			// Possibly after Online Context Compact's boundary compaction: what the runs said is remembered.
			() => `generic_jaro_winkler scaled the common prefix by 0.2 instead of Winkler's 0.1; fixed in src/lib.rs. ${said.suite}.`,
			// Second task.
			planned(ai, state, second("in_progress", "pending"), "plan-4"),
			() => callsOf(ai, ["read", { path: "src/lib.rs", offset: 755, limit: 200 }, "read-4"]),
			(context) => (textOfResult(context, "read-4").includes(anchor) ? editThenTest(ai, state, { path: "src/lib.rs", edits: [{ oldText: anchor, newText: bounds + anchor }] }, "cargo test --offline 2>&1", "edit-1") : state.fail("The test module has no jaro_winkler_diff_short test.")),
			testUnlessFused(ai, "cargo test --offline 2>&1", "edit-1", "test-5"),
			() => callsOf(ai, ["bash", { command: "cargo test --offline --doc -v 2>&1" }, "doc-1"]),
			() => callsOf(ai, ["bash", { command: "cargo test --offline --release -- --test-threads=1 2>&1" }, "test-6"]),
			(context) => (cargoPassed(textOfResult(context, "test-6")) ? planned(ai, state, second("completed", "completed"), "plan-5")() : state.fail("The new test does not pass.")),
			() => "Added jaro_winkler_is_bounded_and_symmetric; the unit, integration and doc tests pass, in release too.",
			// Third task.
			planned(ai, state, third("in_progress", "pending"), "plan-6"),
			() => callsOf(ai, ["bash", { command: "cargo clippy --offline --lib --tests -- -W clippy::pedantic 2>&1" }, "lint-1"]),
			() => callsOf(ai, ["bash", { command: "cargo doc --offline --no-deps -v 2>&1" }, "doc-2"]),
			() => callsOf(ai, ["bash", { command: "grep -n -C 4 'as f64' src/lib.rs" }, "grep-3"]),
			() => callsOf(ai, ["bash", { command: "cargo clippy --offline --lib --tests -- -W clippy::pedantic -A clippy::float_cmp 2>&1" }, "lint-2"]),
			planned(ai, state, third("completed", "in_progress"), "plan-7"),
			() => changeThenRun(ai, state, "write", { path: "examples/compare.rs", content: example }, "cargo run --offline --example compare 2>&1", "write-1"),
			(context) => (/\[then_run:/.test(textOfResult(context, "write-1")) ? undefined : callsOf(ai, ["bash", { command: "cargo run --offline --example compare 2>&1" }, "run-1"])),
			() => callsOf(ai, ["bash", { command: "cargo build --offline --examples --release -v 2>&1" }, "build-2"]),
			(context) => {
				said.lints = (textOfResult(context, "lint-1").match(/^warning: /gm) ?? []).length;
				said.row = /^martha \/ marhta.*$/m.exec(textOfResult(context, "write-1") + textOfResult(context, "run-1"))?.[0]?.replace(/\s+/g, " ");
				if (!said.row) return state.fail("The example printed no row for martha / marhta.");
				return planned(ai, state, third("completed", "completed"), "plan-8")();
			},
			() => `Clippy pedantic printed ${said.lints} warning lines, mostly float comparisons in the tests; the docs build. examples/compare.rs prints: ${said.row}`,
			// Fourth prompt.
			() => callsOf(ai, ["bash", { command: "cargo test --offline -v 2>&1" }, "test-7a"]),
			() => callsOf(ai, ["bash", { command: "cargo test --offline --release -v 2>&1" }, "test-7"]),
			(context) => (cargoPassed(textOfResult(context, "test-7")) ? `Everything passes: ${cargoResults(textOfResult(context, "test-7")).join("; ")}.` : state.fail("The final run failed.")),
			// Fifth prompt: a documentation example.
			() => callsOf(ai, ["bash", { command: "grep -n -B 2 -A 12 '/// Like Jaro but gives a boost' src/lib.rs" }, "grep-4"]),
			(context) => {
				const doc = '/// assert!((0.866 - jaro_winkler("cheeseburger", "cheese fries")).abs() <\n///         0.001);\n';
				if (!textOfResult(context, "grep-4").includes('jaro_winkler("cheeseburger", "cheese fries")')) return state.fail("jaro_winkler's doc example was not found.");
				return editThenTest(ai, state, { path: "src/lib.rs", edits: [{ oldText: doc, newText: `${doc}/// assert!((0.961 - jaro_winkler("martha", "marhta")).abs() < 0.001);\n` }] }, "cargo test --offline --doc 2>&1", "edit-2");
			},
			testUnlessFused(ai, "cargo test --offline --doc 2>&1", "edit-2", "doc-3"),
			() => callsOf(ai, ["read", { path: "README.md" }, "read-5"]),
			() => callsOf(ai, ["bash", { command: "cargo doc --offline --no-deps 2>&1" }, "doc-4"]),
			() => callsOf(ai, ["bash", { command: "cargo test --offline 2>&1" }, "test-8"]),
			(context) => (cargoPassed(textOfResult(context, "test-8")) ? "jaro_winkler's documentation now shows martha / marhta too, and every test passes." : state.fail("The doc example does not pass.")),
		];
	},
	async run(rec) {
		await rec.prompt("strsim's jaro_winkler tests fail. Plan the work, find the cause and fix it.");
		await rec.prompt("Add a test that jaro_winkler stays within 0..=1 and is symmetric on a few word pairs; run the suite and the doc tests.");
		await rec.prompt("Run clippy with the pedantic lints and build the docs, then write an example program that compares the metrics on a few pairs.");
		await rec.prompt("Run the whole suite once more.");
		await rec.prompt("Last: add martha / marhta to jaro_winkler's documentation example and check the docs.");
	},
};

// h. A long session on the standard library's textwrap with its own test suite: one space
// after a sentence end instead of two, new tests for shorten and indent, and a look with
// Python's own tools (trace, pydoc, warnings as errors).
const longTextwrap = {
	description: "long session on textwrap with the standard library's test suite: a fix, new tests, trace and pydoc",
	project: textwrapSuiteProject,
	summary: () => "## Goal\nThe user's current task on wrappkg/textwrap.py.\n\n## Progress\nThe completed plan steps: the failing tests, the cause found, the changes made and the runs after them.\n\n## Next\nThe plan's next step.",
	steps: (ai, state) => {
		const first = (a, b, c) => plan([["locate", "Run the suite and find the failing behaviour", a], ["fix", "Fix it in wrappkg/textwrap.py", b], ["verify", "Run the whole suite", c]]);
		const second = (a, b) => plan([["tests", "Tests for shorten's placeholder and indent's predicate", a], ["run", "Run the suite", b]]);
		const third = (a, b) => plan([["trace", "Coverage of the suite with trace", a], ["docs", "pydoc and warnings as errors", b]]);
		const said = {};
		const anchor = "    def test_first_word_too_long_but_placeholder_fits(self):\n";
		const ok = unittestPassed;
		return [
			planned(ai, state, first("in_progress", "pending", "pending"), "plan-1"),
			() => callsOf(ai, ["bash", { command: "python3 -m unittest -v 2>&1" }, "test-1"]),
			(context) => (/FAIL: (\w+) \(tests\.test_textwrap\.(\w+)/.exec(textOfResult(context, "test-1")) ? callsOf(ai, ["bash", { command: "python3 -m unittest -v tests.test_textwrap.WrapTestCase 2>&1" }, "test-2"]) : state.fail("No test failed.")),
			() => callsOf(ai, ["bash", { command: "python3 -m unittest -v -k sentence -k Indent 2>&1" }, "test-2b"]),
			() => callsOf(ai, ["bash", { command: "grep -rn -C 6 'fix_sentence_endings\\|sentence_end_re' wrappkg tests" }, "grep-1"]),
			() => callsOf(ai, ["read", { path: "wrappkg/textwrap.py" }, "read-1"]),
			() => callsOf(ai, ["read", { path: "tests/test_textwrap.py", offset: 80, limit: 90 }, "read-2"]),
			() => callsOf(ai, ["bash", { command: `python3 -c "from wrappkg.textwrap import TextWrapper; print(repr(TextWrapper(60, fix_sentence_endings=True).fill('Hello there. How are you? I am fine.')))"` }, "check-1"]),
			() => callsOf(ai, ["read", { path: "wrappkg/textwrap.py", offset: 170, limit: 30 }, "read-3"]),
			// What the reads showed is remembered: after Online Context Compact's boundary
			// compaction at the completed step they are in the summary only.
			(context) => {
				said.cause = textOfResult(context, "read-3").includes(TEXTWRAP_BUG[1]);
				return planned(ai, state, first("completed", "in_progress", "pending"), "plan-2")();
			},
			() => (said.cause ? editThenTest(ai, state, { path: "wrappkg/textwrap.py", edits: [{ oldText: TEXTWRAP_BUG[1], newText: TEXTWRAP_BUG[0] }] }, "python3 -m unittest 2>&1", "fix-1") : state.fail("The sentence ending is not in the lines read.")),
			testUnlessFused(ai, "python3 -m unittest 2>&1", "fix-1", "test-3"),
			() => callsOf(ai, ["bash", { command: "python3 -m unittest -v 2>&1" }, "test-4"]),
			(context) => (ok(textOfResult(context, "test-4")) ? planned(ai, state, first("completed", "completed", "completed"), "plan-3")() : state.fail("The fix did not make the suite pass.")),
			() => "_fix_sentence_endings put one space after a sentence end instead of two; fixed in wrappkg/textwrap.py, and the whole standard-library suite passes.",
			// Second task.
			planned(ai, state, second("in_progress", "pending"), "plan-4"),
			() => callsOf(ai, ["bash", { command: "grep -n 'class \\|def test_' tests/test_textwrap.py" }, "grep-2"]),
			() => callsOf(ai, ["read", { path: "tests/test_textwrap.py", offset: 700 }, "read-4"]),
			// What the read showed is remembered: by the edit, ObservationPack may have replaced it by a placeholder.
			(context) => {
				said.anchor = textOfResult(context, "read-4").includes(anchor);
				return callsOf(ai, ["read", { path: "wrappkg/textwrap.py", offset: 395, limit: 100 }, "read-5"]);
			},
			() => callsOf(ai, ["bash", { command: `python3 -c "from wrappkg.textwrap import shorten, indent; print(repr(shorten('Hello  world, how are you', 15, placeholder=' ~'))); print(repr(indent('a\\n\\nb\\n', '> ', lambda line: True)))"` }, "check-2"]),
			(context) => {
				const [shortened, indented] = textOfResult(context, "check-2").trim().split("\n");
				if (!shortened || !indented || !said.anchor) return state.fail("The values or the anchor test are missing.");
				const test = `    def test_custom_placeholder(self):\n        self.assertEqual(shorten("Hello  world, how are you", 15, placeholder=" ~"), ${shortened})\n\n    def test_indent_every_line_with_a_predicate(self):\n        self.assertEqual(indent("a\\n\\nb\\n", "> ", lambda line: True), ${indented})\n\n`;
				return editThenTest(ai, state, { path: "tests/test_textwrap.py", edits: [{ oldText: anchor, newText: test + anchor }] }, "python3 -m unittest -v 2>&1", "edit-1");
			},
			testUnlessFused(ai, "python3 -m unittest -v 2>&1", "edit-1", "test-5"),
			() => callsOf(ai, ["bash", { command: "python3 -m unittest -v tests.test_textwrap.ShortenTestCase tests.test_textwrap.IndentTestCase 2>&1" }, "test-6"]),
			(context) => {
				if (!ok(textOfResult(context, "test-6"))) return state.fail("The new tests do not pass.");
				said.ran = /Ran \d+ tests?/.exec(textOfResult(context, "test-6"))?.[0] ?? "the suite ran";
				return planned(ai, state, second("completed", "completed"), "plan-5")();
			},
			// Possibly after Online Context Compact's boundary compaction: what the runs said is remembered.
			() => `Added test_custom_placeholder and test_indent_every_line_with_a_predicate; ${said.ran}, OK.`,
			// Third task.
			planned(ai, state, third("in_progress", "pending"), "plan-6"),
			() => callsOf(ai, ["bash", { command: "python3 -m trace --count --summary --missing --coverdir .cover -m unittest 2>&1" }, "trace-1"]),
			() => callsOf(ai, ["bash", { command: "grep -n '>>>>>>' .cover/wrappkg.textwrap.cover" }, "grep-3"]),
			() => callsOf(ai, ["read", { path: ".cover/wrappkg.textwrap.cover", offset: 190, limit: 120 }, "read-6"]),
			planned(ai, state, third("completed", "in_progress"), "plan-7"),
			() => callsOf(ai, ["bash", { command: "python3 -m pydoc wrappkg.textwrap 2>&1" }, "pydoc-1"]),
			() => callsOf(ai, ["bash", { command: "python3 -m py_compile wrappkg/textwrap.py tests/test_textwrap.py && python3 -m unittest -v tests.test_textwrap.DedentTestCase tests.test_textwrap.LongWordTestCase 2>&1" }, "test-6b"]),
			() => callsOf(ai, ["bash", { command: "python3 -W error -X dev -m unittest -v 2>&1" }, "test-7"]),
			(context) => {
				if (!ok(textOfResult(context, "test-7"))) return state.fail("The suite fails with warnings as errors.");
				said.missing = (textOfResult(context, "grep-3").match(/>>>>>>/g) ?? []).length;
				return planned(ai, state, third("completed", "completed"), "plan-8")();
			},
			() => `The suite leaves ${said.missing} lines of wrappkg/textwrap.py unexecuted; pydoc renders the module, and the suite passes with warnings as errors.`,
			// Fourth prompt.
			() => callsOf(ai, ["bash", { command: "grep -n -C 3 'chunks\\[i+1\\]' wrappkg/textwrap.py" }, "grep-4"]),
			() => callsOf(ai, ["bash", { command: "python3 -m unittest 2>&1" }, "test-8"]),
			(context) => (ok(textOfResult(context, "test-8")) && textOfResult(context, "grep-4").includes(TEXTWRAP_BUG[0]) ? "The fix is in place and the suite passes." : state.fail("The final check failed.")),
			// Fifth prompt: where fill spends its time.
			() => callsOf(ai, ["bash", { command: `python3 -c "import cProfile, wrappkg.textwrap as t; text = open('wrappkg/textwrap.py').read(); cProfile.run('for _ in range(20): t.fill(text, 60)', sort='cumulative')" 2>&1 | head -40` }, "profile-1"]),
			() => callsOf(ai, ["bash", { command: `python3 -m timeit -s "import wrappkg.textwrap as t; text = open('wrappkg/textwrap.py').read()" "t.fill(text, 60)" 2>&1` }, "timeit-1"]),
			() => callsOf(ai, ["read", { path: "wrappkg/textwrap.py", offset: 238, limit: 105 }, "read-7"]),
			() => callsOf(ai, ["bash", { command: "grep -n -C 4 'wordsep_re\\|wordsep_simple_re\\|_split(' wrappkg/textwrap.py" }, "grep-5"]),
			(context) => {
				// The textwrap function with the most time of its own (tottime).
				const rows = [...textOfResult(context, "profile-1").matchAll(/^\s*\d+\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+textwrap\.py:\d+\((\w+)\)$/gm)];
				const top = rows.sort((x, y) => Number(y[1]) - Number(x[1]))[0]?.[2];
				return top ? `fill spends most of its own time in ${top}; the rest is the regular expression split of the text (wordsep_re in _split).` : state.fail("The profile names no textwrap function.");
			},
		];
	},
	async run(rec) {
		await rec.prompt("The textwrap tests fail after a cleanup of wrappkg/textwrap.py. Plan the work, find the bug and fix it.");
		await rec.prompt("Add tests for shorten() with a custom placeholder and indent() with a predicate, then run the suite.");
		await rec.prompt("How much of textwrap does the suite cover? Check with trace, render the docs with pydoc and run the suite with warnings as errors.");
		await rec.prompt("Show me the fixed line and run the suite once more.");
		await rec.prompt("Last: where does fill() spend its time on a long text?");
	},
};

export const SCENARIOS = { debugging, plans, fork, resume, compaction, "long-fnv": longFnv, "long-strsim": longStrsim, "long-textwrap": longTextwrap };

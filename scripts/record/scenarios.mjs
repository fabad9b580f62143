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
import { COLORSYS_BUG, FNV_PRIME, colorsysProject, fnvProject, repoSourcesProject, textwrapProject } from "./projects.mjs";

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

export const SCENARIOS = { debugging, plans, fork, resume, compaction };

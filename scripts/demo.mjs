// The demo: a real Pi AgentSession with all four SoL-Pi mechanisms on, working on a
// real small Python project it creates (a discount bug and a failing unittest suite).
// Pi's faux provider plays the model: only its choices are scripted (each reply is a
// function of the real context it is sent); files, commands and outputs are real.
// A second faux model plays the reducer and quotes real lines of the real log.
//   node scripts/demo.mjs            one progress line per step, then the session file; then
//                                    the long task below
//   node scripts/demo.mjs --short    the short task only
//   node scripts/demo.mjs --tui      the short task in Pi's interactive terminal
// The core is `runDemo()`, which the test suite runs and checks against the session file.
// On a task this short SoL-Pi's own turns cost more than it saves, and `/sol-pi` says so.
// `runLongDemo()` shows what SoL-Pi is for: a long task (the recorder's long-fnv scenario:
// four prompts of real cargo builds, tests, greps and reads on the fnv crate) recorded once
// with plain Pi and once with SoL-Pi, both bills as the provider's reports add them up, and
// `/sol-pi`'s net saving beside their difference.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

import { ai, pi, piCliPath, piMajor, piVersion, repoRoot, startSession, writeJson } from "../sol-napi/test/support.mjs";
import { readSessionFile } from "../sol-napi/test/session-file.mjs";
import { createProject } from "./demo/project.mjs";
import {
	AGENT_MODEL,
	AGENT_PROVIDER,
	FINAL_ANSWER,
	PLAN_STEPS,
	PROMPT,
	QUERY,
	QUIET_TEST_COMMAND,
	RECALL_HEADER,
	SEARCH_COMMAND,
	TEST_COMMAND,
	agentProvider,
	agentScript,
	demoConfig,
	placeholderId,
	reducerProvider,
	resultIn,
	textOf,
} from "./demo/script.mjs";
import { KEEP_RECENT_TOKENS } from "./demo/settings.mjs";
import { compareBills, comparisonLines } from "./record/bill.mjs";
import { record } from "./record/recorder.mjs";

export { QUERY, SEARCH_COMMAND, TEST_COMMAND, placeholderId };
export { REDUCER_ENTRY } from "../sol-napi/test/demo-checks.mjs";
const demoDir = path.join(repoRoot, "scripts", "demo");
const RAW_SINK = Symbol.for("sol-pi-demo.raw-results");
// SoL-Pi's addon, which the extension has loaded by the time the demo asks it.
const addon = () => createRequire(import.meta.url)("../sol-napi/index.js");
const kb = (text) => `${(Buffer.byteLength(text) / 1024).toFixed(1)} KB`;

/** A fresh temp folder with the project (`shop`), an agent folder and a session folder. */
function demoFolders() {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-demo-"));
	const folders = { root, cwd: path.join(root, "shop"), agentDir: path.join(root, "agent"), sessionDir: path.join(root, "sessions") };
	for (const dir of [folders.cwd, folders.agentDir, folders.sessionDir]) fs.mkdirSync(dir, { recursive: true });
	createProject(folders.cwd);
	return folders;
}

/**
 * Runs the demo. `log(line)` gets one progress line per step. Returns what happened, for
 * the caller to check: `ok` is true only if every step happened; `sessionFile`, SoL-Pi's
 * `runtimeRoot` of the session (where its archives are), `originals` (each tool result as
 * the tool returned it, before SoL-Pi: toolCallId -> { text, details }), the faux agent
 * provider's `fauxCallCount` with the `agentRequests` and `summaryRequests` it answered,
 * and the `reducerCalls` the reducer model received are what demo-checks.mjs reads.
 */
export async function runDemo({ log = console.log, keep = true } = {}) {
	const { root, cwd, agentDir, sessionDir } = demoFolders();
	writeJson(path.join(cwd, ".pi", "sol-pi.json"), demoConfig);

	const steps = {}; // step name -> true once it happened
	const demo = { root, cwd, sessionDir, steps, raw: new Map(), originals: new Map(), reducerCalls: [], requests: [], sends: [], compactions: [] };
	const sessionManager = pi.SessionManager.create(cwd, sessionDir);

	const script = agentScript(ai);
	demo.recallPages = script.state.recallPages;
	// What the provider was sent for the search result, request by request.
	const watchSends = (context) => {
		const result = resultIn(context, "search-1");
		if (!result) return;
		const text = textOf(result);
		const original = demo.raw.get("search-1");
		demo.sends.push(text === original ? "full" : placeholderId(text) ? "placeholder" : "other");
		const request = demo.requests.filter((r) => r.kind === "agent").length;
		if (demo.sends.length === 3 && demo.sends.join() === "full,full,placeholder") {
			steps.packed = true;
			demo.placeholder = text;
			log(`observationpack: the ${kb(original)} search output went in full on 2 requests, then as a ${Buffer.byteLength(text)}-byte placeholder on request ${request} (${placeholderId(text)})`);
		}
	};
	const agent = agentProvider(ai, {
		requests: demo.requests,
		newest: () => Math.max(0, ...sessionManager.getEntries().map((e) => Date.parse(e.timestamp) || 0)),
		next: (context) => {
			watchSends(context);
			const reply = script.next(context);
			if (script.state.continued && !steps.continued) {
				steps.continued = true;
				log("occ: the run continued by itself after the compaction (Online Context Compact's continuation)");
			}
			return reply;
		},
	});
	const reducer = reducerProvider(ai, demo.reducerCalls);

	const observer = (api) => {
		api.on("session_compact", (event) => {
			demo.compactions.push(event);
			steps.compacted = true;
			const tokens = event.compactionEntry?.tokensBefore;
			log(`occ: boundary compaction at the completed steps${tokens ? ` (Pi summarized a context of ${tokens} tokens)` : ""}`);
		});
	};
	globalThis[RAW_SINK] = (event) => {
		const text = (event.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
		demo.raw.set(event.toolCallId, text);
		demo.originals.set(event.toolCallId, { text, details: event.details });
	};

	log(`SoL-Pi demo: Pi ${piVersion}, all four mechanisms, faux models, project ${cwd}`);
	const run = await startSession({
		cwd,
		agentDir,
		mode: "tui",
		sessionManager,
		faux: agent,
		extraProviders: [reducer.provider],
		settings: { compaction: { enabled: false, keepRecentTokens: KEEP_RECENT_TOKENS } },
		earlierExtensionPaths: [path.join(demoDir, "raw-results-extension.ts")],
		extensionPath: piMajor === 0 ? path.join(demoDir, "keep-recent-extension.ts") : repoRoot,
		extensionFactories: [observer],
	});
	demo.run = run;
	const unsubscribe = run.session.subscribe((event) => {
		if (event.type !== "message_end" || event.message?.role !== "toolResult") return;
		try {
			describe(event.message, demo, log);
		} catch (error) {
			log(`(could not describe ${event.message.toolCallId}: ${error.message})`);
		}
	});
	try {
		await run.session.prompt(PROMPT);
	} finally {
		unsubscribe();
		delete globalThis[RAW_SINK];
	}
	demo.finalText = run.session.getLastAssistantText();
	if (steps.continued && demo.finalText === FINAL_ANSWER) {
		steps.answered = true;
		log(`answer: ${demo.finalText}`);
	}
	demo.errors = run.errors;
	demo.fauxCallCount = agent.state.callCount;
	demo.sessionFile = sessionManager.getSessionFile();
	demo.sessionId = sessionManager.getSessionId();
	demo.agentRequests = demo.requests.filter((r) => r.kind === "agent").length;
	demo.summaryRequests = demo.requests.filter((r) => r.kind === "summary").length;
	// Where SoL-Pi keeps this session's files, as the extension asks for it.
	const where = addon().runtimeRoot({ sessionDir: sessionManager.getSessionDir(), sessionId: demo.sessionId, tempDir: os.tmpdir() });
	demo.runtimeRoot = where.kind === "root" ? where.root : undefined;
	await printSavingsTable(demo, log);
	run.close();
	const expected = ["planned", "reduced", "searched", "packed", "queried", "recalled", "fused", "boundary", "compacted", "continued", "answered"];
	demo.missing = expected.filter((name) => !steps[name]);
	demo.ok = demo.missing.length === 0 && run.errors.length === 0;
	if (!keep) fs.rmSync(root, { recursive: true, force: true });
	return demo;
}

/** One progress line for a tool result as the session stored it. */
function describe(message, demo, log) {
	const text = textOf(message);
	const details = message.details ?? {};
	const { steps } = demo;
	switch (message.toolCallId) {
		case "plan-1":
			if (!message.isError) steps.planned = true;
			log(`plan: update_plan took ${PLAN_STEPS} steps, "locate" in progress${message.isError ? ` (error: ${text})` : ""}`);
			break;
		case "test-1": {
			const original = demo.raw.get("test-1") ?? "";
			const artifact = /^source_artifact=(.+)$/m.exec(text)?.[1];
			const call = demo.reducerCalls.at(-1);
			if (text.startsWith("sol_pi_evidence_receipt_v1\n") && artifact && call) {
				steps.reduced = true;
				demo.receipt = { text, artifact, quotes: call.quotes };
				log(`reducer: ${kb(original)} failing test log (${TEST_COMMAND}) -> verified receipt (${call.quotes.length} quotes); the log is archived at ${artifact}`);
			} else log(`reducer: the ${kb(original)} test log was kept in full`);
			break;
		}
		case "search-1":
			if (!message.isError && Buffer.byteLength(text) > 10 * 1024) steps.searched = true;
			log(`search: ${SEARCH_COMMAND} -> ${kb(text)} of real output`);
			break;
		case "recall-query": {
			const matches = details.matches?.length ?? 0;
			if (!message.isError && matches > 0) {
				steps.queried = true;
				demo.queryResult = text;
			}
			log(`obs_recall: query "${QUERY}" over the archived search -> ${matches} match${matches === 1 ? "" : "es"}`);
			break;
		}
		case "fix-1": {
			const passed = !message.isError && /\[then_run:succeeded\]/.test(text) && /^OK$/m.test(text);
			if (passed) steps.fused = true;
			const ran = /^Ran \d+ tests? in [\d.]+s$/m.exec(text)?.[0] ?? "no test run";
			log(`action fusion: edit shop/pricing.py with then_run "${QUIET_TEST_COMMAND}" in one call -> ${passed ? `[then_run:succeeded] ${ran}, OK` : "the tests did not pass"}`);
			break;
		}
		case "plan-2":
			if (details.boundary === true) steps.boundary = true;
			log(`plan: steps ${(details.completed_step_ids ?? []).join(", ") || "none"} completed${details.boundary ? " (a boundary)" : ""}`);
			break;
		default:
			if (message.toolName === "obs_recall") {
				const header = RECALL_HEADER.exec(text);
				if (header?.[4] === "true") {
					const recalled = demo.recallPages.join("") + text.slice(header[0].length);
					const exact = recalled === demo.raw.get("search-1");
					if (exact) steps.recalled = true;
					log(`obs_recall: ${demo.recallPages.length + 1} pages, ${kb(recalled)}, ${exact ? "byte-identical to the original output" : "NOT equal to the original output"}`);
				}
			}
	}
}

/**
 * Runs `/sol-pi` in the demo's session, as a user types it, and prints the table it shows
 * (every figure computed once, in Rust, from the same decisions that changed the requests).
 * `demo.savingsTable` keeps it for the caller to check against the session file.
 */
export async function printSavingsTable(demo, log) {
	const before = demo.run.notices().length;
	await demo.run.session.prompt("/sol-pi");
	const shown = demo.run.notices().slice(before).filter((notice) => notice.message.startsWith("SoL-Pi savings"));
	demo.savingsTable = shown.at(-1)?.message;
	if (demo.savingsTable) log(`\n/sol-pi\n${demo.savingsTable}\n`);
	else log("/sol-pi showed no table");
}

/**
 * The real `pi` CLI on a fresh copy of the project with SoL-Pi and the scripted models
 * (scripts/demo/tui-extension.ts) loaded: the command, its cwd and environment, and the
 * session folder. `print` runs it as `pi -p` (no terminal); otherwise it is interactive.
 */
export function cliDemo({ print = false } = {}) {
	const { root, cwd, agentDir, sessionDir } = demoFolders();
	// In the agent dir, so no project trust is asked for.
	writeJson(path.join(agentDir, "sol-pi.json"), demoConfig);
	writeJson(path.join(agentDir, "settings.json"), { compaction: { enabled: false, keepRecentTokens: KEEP_RECENT_TOKENS } });
	const solPi = piMajor === 0 ? path.join(demoDir, "keep-recent-extension.ts") : repoRoot;
	const args = [piCliPath(), "--provider", AGENT_PROVIDER, "--model", AGENT_MODEL, "--session-dir", sessionDir];
	args.push("-e", path.join(demoDir, "tui-extension.ts"), "-e", solPi, ...(print ? ["-p"] : []), PROMPT);
	const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" };
	const sessionFiles = () => fs.readdirSync(sessionDir).filter((name) => name.endsWith(".jsonl")).map((name) => path.join(sessionDir, name));
	return { root, cwd, sessionDir, command: process.execPath, args, env, sessionFiles };
}

/** The long task of the demo: the recorder's scenario that `runLongDemo` runs. */
export const LONG_SCENARIO = "long-fnv";

/**
 * The long task, recorded twice in real Pi sessions (plain Pi, then SoL-Pi with all four
 * mechanisms) into a temp folder: prints the SoL-Pi session's `/sol-pi` table, both bills
 * from the usage the provider reported, and how far `/sol-pi`'s net saving is from their
 * difference. Returns the comparison (compareBills), the two files with their branches'
 * entries and the folder, which it removes unless `keep`.
 */
export async function runLongDemo({ log = console.log, keep = true } = {}) {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-demo-long-"));
	const plainFile = path.join(root, "plain.jsonl");
	const solPiFile = path.join(root, "sol-pi.jsonl");
	log(`\nThe long task (Pi ${piVersion}): four prompts on the fnv crate with real cargo builds, tests, greps and reads, once with plain Pi and once with SoL-Pi`);
	try {
		const plain = await record({ scenario: LONG_SCENARIO, out: plainFile });
		log(`plain Pi: ${plain.requests} provider requests`);
		const solPi = await record({ scenario: LONG_SCENARIO, out: solPiFile, withSolPi: true });
		log(`SoL-Pi: ${solPi.requests} provider requests (${solPi.summaries} compaction summaries), ${solPi.reducerCalls} reducer calls`);
		const comparison = compareBills(plainFile, solPiFile, addon());
		const branchOf = (file) => readSessionFile(file).branch;
		log(`\n/sol-pi of the SoL-Pi session\n${comparison.table}\n`);
		log("The two bills as the provider reported them, at the same prices:");
		for (const line of comparisonLines(comparison)) log(line);
		return { comparison, plainFile, solPiFile, plainEntries: branchOf(plainFile), solPiEntries: branchOf(solPiFile), root };
	} finally {
		if (!keep) fs.rmSync(root, { recursive: true, force: true });
	}
}

/** `--tui`: the same script in Pi's interactive terminal, under the user's terminal; the user leaves Pi as usual. */
export function runTuiDemo() {
	const cli = cliDemo();
	console.log(`SoL-Pi demo in Pi ${piVersion}'s terminal, project ${cli.cwd}; leave Pi as usual when the task is done.`);
	const result = spawnSync(cli.command, cli.args, { cwd: cli.cwd, env: cli.env, stdio: "inherit" });
	for (const file of cli.sessionFiles()) console.log(`session file: ${file}`);
	return result.status ?? 1;
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (isMain) {
	const flags = process.argv.slice(2);
	const unknown = flags.filter((flag) => flag !== "--tui" && flag !== "--short");
	if (unknown.length > 0) {
		console.error(`unknown argument: ${unknown.join(" ")} (usage: node scripts/demo.mjs [--short | --tui])`);
		process.exitCode = 2;
	} else if (flags.includes("--tui")) {
		process.exitCode = runTuiDemo();
	} else {
		const demo = await runDemo();
		for (const error of demo.errors) console.log(`SoL-Pi stopped: ${error.error}`);
		if (demo.missing.length > 0) console.log(`steps that did not happen: ${demo.missing.join(", ")}`);
		console.log(`session file: ${demo.sessionFile}`);
		process.exitCode = demo.ok ? 0 : 1;
		if (demo.ok && !flags.includes("--short")) {
			const long = await runLongDemo();
			console.log(`session files: ${long.plainFile}, ${long.solPiFile}`);
		}
	}
}

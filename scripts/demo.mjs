// The demo: a real Pi AgentSession with all four SoL-Pi mechanisms on, working on a
// real small Python project it creates (a discount bug and a failing unittest suite).
// Pi's faux provider plays the model: only its choices are scripted (each reply is a
// function of the real context it is sent); files, commands and outputs are real.
// A second faux model plays the reducer and quotes real lines of the real log.
//   node scripts/demo.mjs            one progress line per step, then the session file
// The core is `runDemo()`, which the test suite runs and checks against the session file.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

import { CONTINUATION_TYPE, DECISION_EVENT, isSummarization } from "../sol-napi/test/occ-support.mjs";
import { ai, pi, piMajor, piVersion, repoRoot, resultText, startSession, toolCalls, writeJson } from "../sol-napi/test/support.mjs";
import { BUGGY_LINE, FIXED_LINE, createProject } from "./demo/project.mjs";
import { KEEP_RECENT_TOKENS } from "./demo/settings.mjs";

const demoDir = path.join(repoRoot, "scripts", "demo");
export const REDUCER_PROVIDER = "sol-faux-reducer";
export const REDUCER_MODEL = "reducer-1";
export const REDUCER_ENTRY = "sol-pi-evidence-preserving-reducer-v1";
export const TEST_COMMAND = "python3 -m unittest -v";
export const QUIET_TEST_COMMAND = "python3 -m unittest";
export const SEARCH_COMMAND = "grep -rn discount_percent shop";
export const QUERY = "def apply_discount";
const RAW_SINK = Symbol.for("sol-pi-demo.raw-results");

const textOf = (m) => (typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join("\n"));
const kb = (text) => `${(Buffer.byteLength(text) / 1024).toFixed(1)} KB`;
const resultIn = (context, id) => (context.messages ?? []).find((m) => m.role === "toolResult" && m.toolCallId === id);
export const placeholderId = (text) => /^id: (obs_[a-f0-9]{24})$/m.exec(text ?? "")?.[1];
const RECALL_HEADER = /^\[obs_recall id=\S+ offset=(\d+) next_offset=(\d+) eof=(true|false)\]\n\[chunk_bytes=\d+ chunk_lines=\d+; use next_offset to continue\]\n/;

/** The SoL-Pi config the demo writes: every mechanism on, the reducer routed to the second faux model. */
export const demoConfig = {
	version: 1,
	actionFusion: true,
	observationPack: true,
	evidencePreservingReducer: true,
	evidencePreservingReducerProvider: REDUCER_PROVIDER,
	evidencePreservingReducerModel: REDUCER_MODEL,
	onlineContextCompact: true,
	// The faux provider charges nothing for cache writes.
	cacheWriteReadRatio: 0,
};

/** Reads a reducer request the extension sent: the source hash, the error flag, the log. */
function reducerRequest(context) {
	const user = context.messages.find((m) => m.role === "user");
	const text = textOf(user);
	return {
		sha: /^source_sha256=([0-9a-f]{64})$/m.exec(text)?.[1],
		isError: /^is_error=true$/m.test(text),
		log: text.slice(text.indexOf("<untrusted_log>\n") + 16, text.lastIndexOf("\n</untrusted_log>")),
	};
}

/** The reducer model: a receipt quoting the real lines that name each failure (or the summary). */
function reducerModel(calls) {
	const faux = ai.fauxProvider({ provider: REDUCER_PROVIDER, models: [{ id: REDUCER_MODEL, contextWindow: 200000, maxTokens: 4096 }] });
	const reply = (context) => {
		const request = reducerRequest(context);
		const lines = request.log.split("\n");
		const evidence = request.isError
			? lines
					// Per failing test: its FAIL line, the assertion that failed and the values.
					.filter((line) => line.startsWith("FAIL: ") || line.startsWith("ERROR: ") || /^\s+self\.assert/.test(line) || line.startsWith("AssertionError: "))
					.slice(0, 12)
					.map((quote) => ({ kind: "failure", quote }))
			: lines.filter((line) => /^Ran \d+ tests? in /.test(line) || line === "OK").map((quote) => ({ kind: "summary", quote }));
		calls.push({ ...request, quotes: evidence.map((e) => e.quote) });
		return ai.fauxAssistantMessage(
			JSON.stringify({ schema: "sol-pi-evidence-receipt/1", source_sha256: request.sha, status: request.isError ? "failure" : "success", uncertain: false, evidence }),
		);
	};
	faux.setResponses(Array.from({ length: 16 }, () => reply));
	return faux;
}

/**
 * The agent's faux provider. Its stream calls `options.onPayload` first, as Pi's HTTP
 * providers do, so `before_provider_request` fires; Pi's compaction summarizer gets a
 * summary, every other request the next scripted choice.
 */
function agentModel({ next, summary, sessionManager, requests }) {
	const core = ai.createFauxCore({ provider: "sol-faux", models: [{ id: "faux-1", contextWindow: 200000 }] });
	const withPayload = (fn) => (model, context, options) => {
		if (options?.onPayload) void Promise.resolve(options.onPayload({ soLPiDemo: true }, model));
		return fn(model, context, options);
	};
	const provider = ai.createProvider({
		id: core.provider,
		auth: { apiKey: { name: "Faux", resolve: async () => ({ auth: {} }) } },
		models: core.models,
		api: { stream: withPayload(core.stream), streamSimple: withPayload(core.streamSimple), fetchDeferred: core.fetchDeferred, cancelDeferred: core.cancelDeferred },
	});
	// A reply is stamped after every entry already in the session, as a real round trip is.
	let lastStamp = 0;
	const stamp = (message) => {
		const newest = Math.max(0, ...sessionManager.getEntries().map((e) => Date.parse(e.timestamp) || 0));
		lastStamp = Math.max(Date.now(), newest + 1, lastStamp + 1);
		return { ...message, timestamp: lastStamp };
	};
	const asMessage = (value) => stamp(typeof value === "string" ? ai.fauxAssistantMessage(value) : value);
	const router = (context) => {
		if (isSummarization(context)) {
			requests.push({ kind: "summary" });
			return asMessage(summary(context));
		}
		requests.push({ kind: "agent" });
		return asMessage(next(context));
	};
	core.setResponses(Array.from({ length: 64 }, () => router));
	return { provider, getModel: () => core.getModel(), state: core.state };
}

const plan = (locate, fix, verify) => ({
	steps: [
		{ id: "locate", goal: "Reproduce the failing tests and find the bug", status: locate },
		{ id: "fix", goal: "Fix the discount arithmetic", status: fix },
		{ id: "verify", goal: "Confirm the whole suite passes and report", status: verify },
	],
});

/**
 * Runs the demo. `log(line)` gets one progress line per step. Returns what happened, for
 * the caller to check: `ok` is true only if every step happened.
 */
export async function runDemo({ log = console.log, keep = true } = {}) {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-demo-"));
	const cwd = path.join(root, "shop");
	const agentDir = path.join(root, "agent");
	const sessionDir = path.join(root, "sessions");
	for (const dir of [cwd, agentDir, sessionDir]) fs.mkdirSync(dir, { recursive: true });
	createProject(cwd);
	writeJson(path.join(cwd, ".pi", "sol-pi.json"), demoConfig);

	const steps = {}; // step name -> true once it happened
	const demo = { root, cwd, sessionDir, steps, raw: new Map(), reducerCalls: [], requests: [], sends: [], recallPages: [], decisions: [], compactions: [] };
	const sessionManager = pi.SessionManager.create(cwd, sessionDir);

	// The scripted choices, in order; each is a function of the real context it is sent.
	let recallId;
	let recallOffset = 0;
	const script = [
		() => toolCalls(["update_plan", plan("in_progress", "pending", "pending"), "plan-1"]),
		() => toolCalls(["bash", { command: TEST_COMMAND }, "test-1"]),
		() => toolCalls(["bash", { command: SEARCH_COMMAND }, "search-1"]),
		() => toolCalls(["read", { path: "shop/pricing.py" }, "read-1"]),
		() => toolCalls(["read", { path: "shop/cart.py" }, "read-2"]),
		(context) => {
			recallId = placeholderId(textOf(resultIn(context, "search-1") ?? { content: "" }));
			if (!recallId) return "The search result was not replaced by a placeholder.";
			return toolCalls(["obs_recall", { id: recallId, query: QUERY }, "recall-query"]);
		},
		// Pages through the whole search output; this choice repeats until the last page.
		function page(context) {
			const last = [...context.messages].reverse().find((m) => m.role === "toolResult");
			if (last?.toolName === "obs_recall" && last.toolCallId !== "recall-query") {
				const text = textOf(last);
				const header = RECALL_HEADER.exec(text);
				if (!header) return `Unexpected recall text: ${text.slice(0, 200)}`;
				demo.recallPages.push(text.slice(header[0].length));
				if (header[3] === "true") return undefined; // the next choice
				recallOffset = Number(header[2]);
			}
			script.unshift(page);
			return toolCalls(["obs_recall", { id: recallId, offset: recallOffset }, `recall-${demo.recallPages.length}`]);
		},
		() => toolCalls(["edit", { path: "shop/pricing.py", edits: [{ oldText: BUGGY_LINE, newText: FIXED_LINE }], then_run: { command: QUIET_TEST_COMMAND } }, "fix-1"]),
		(context) => {
			const ran = /^Ran \d+ tests? in [\d.]+s$/m.exec(textOf(resultIn(context, "fix-1") ?? { content: "" }))?.[0] ?? "python3 -m unittest ran";
			return toolCalls([
				"update_plan",
				{
					...plan("completed", "completed", "in_progress"),
					progress: {
						files_changed: ["shop/pricing.py"],
						verification: [`${QUIET_TEST_COMMAND}: ${ran}, OK`],
						decisions: ["apply_discount takes the discount off the price instead of returning the discount itself"],
					},
				},
				"plan-2",
			]);
		},
		(context) => {
			if (!context.messages.some((m) => textOf(m).includes("[Online Context Compact]"))) return "The continuation after the compaction was not seen.";
			steps.continued = true;
			log("occ: the run continued by itself after the compaction (Online Context Compact's continuation)");
			return "Fixed `apply_discount` in shop/pricing.py: it returned the discount instead of the discounted price. The whole suite passes now.";
		},
	];
	const next = (context) => {
		while (script.length > 0) {
			const choice = script.shift();
			const reply = choice(context);
			if (reply !== undefined) return reply;
		}
		return "The demo script has no more choices.";
	};

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
	const agent = agentModel({
		sessionManager,
		requests: demo.requests,
		next: (context) => {
			watchSends(context);
			return next(context);
		},
		summary: () =>
			"## Goal\nFix the failing discount tests of the shop project.\n\n## Progress\napply_discount in shop/pricing.py returned the discount itself; it now returns the discounted price and `python3 -m unittest` passes.\n\n## Next\nConfirm and report.",
	});
	const reducer = reducerModel(demo.reducerCalls);

	const observer = (api) => {
		api.events.on(DECISION_EVENT, (evaluation) => demo.decisions.push(evaluation));
		api.on("session_compact", (event) => {
			demo.compactions.push(event);
			steps.compacted = true;
			const tokens = event.compactionEntry?.tokensBefore;
			log(`occ: boundary compaction at the completed steps${tokens ? ` (Pi summarized a context of ${tokens} tokens)` : ""}`);
		});
	};
	globalThis[RAW_SINK] = (event) => {
		demo.raw.set(event.toolCallId, (event.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n"));
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
		await run.session.prompt("The tests of this shop project fail. Find the bug and fix it.");
	} finally {
		unsubscribe();
		delete globalThis[RAW_SINK];
	}
	demo.finalText = run.session.getLastAssistantText();
	if (steps.continued && /whole suite passes/.test(demo.finalText ?? "")) {
		steps.answered = true;
		log(`answer: ${demo.finalText}`);
	}
	demo.errors = run.errors;
	demo.fauxCallCount = agent.state.callCount;
	demo.sessionFile = sessionManager.getSessionFile();
	demo.sessionId = sessionManager.getSessionId();
	printSavingsTable(demo);
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
			log(`plan: update_plan took ${plan().steps.length} steps, "locate" in progress${message.isError ? ` (error: ${text})` : ""}`);
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
				if (header?.[3] === "true") {
					const recalled = demo.recallPages.join("") + text.slice(header[0].length);
					const exact = recalled === demo.raw.get("search-1");
					if (exact) steps.recalled = true;
					log(`obs_recall: ${demo.recallPages.length + 1} pages, ${kb(recalled)}, ${exact ? "byte-identical to the original output" : "NOT equal to the original output"}`);
				}
			}
	}
}

/**
 * Where the `/sol-pi` savings table will be printed once the Rust ledger is wired into
 * the extension. Every figure is computed once, in Rust; until then this prints nothing.
 */
export function printSavingsTable(_demo) {}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (isMain) {
	const demo = await runDemo();
	for (const error of demo.errors) console.log(`SoL-Pi stopped: ${error.error}`);
	if (demo.missing.length > 0) console.log(`steps that did not happen: ${demo.missing.join(", ")}`);
	console.log(`session file: ${demo.sessionFile}`);
	process.exitCode = demo.ok ? 0 : 1;
}

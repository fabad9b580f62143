// The demo's scripted models, shared by the in-process run (scripts/demo.mjs) and the
// interactive one (tui-extension.ts). Only the model's choices are scripted: every
// choice is a function of the real context Pi sends, so a reply reads real results
// (a placeholder's id, a recall page's offset, the real test run) before it chooses.
// `ai` is the Pi AI module of the install that runs the demo.
import { BUGGY_LINE, FIXED_LINE } from "./project.mjs";
import { isSummarization, textOf } from "../../sol-napi/test/summarizer.mjs";

export { isSummarization, textOf };

export const AGENT_PROVIDER = "sol-faux";
export const AGENT_MODEL = "faux-1";
export const REDUCER_PROVIDER = "sol-faux-reducer";
export const REDUCER_MODEL = "reducer-1";
export const TEST_COMMAND = "python3 -m unittest -v";
export const QUIET_TEST_COMMAND = "python3 -m unittest";
export const SEARCH_COMMAND = "grep -rn discount_percent shop";
export const QUERY = "def apply_discount";
export const PROMPT = "The tests of this shop project fail. Find the bug and fix it.";
export const FINAL_ANSWER =
	"Fixed `apply_discount` in shop/pricing.py: it returned the discount instead of the discounted price. The whole suite passes now.";
const CONTINUATION_MARK = "[Online Context Compact]";

/** The SoL-Pi config of the demo: every mechanism on, the reducer routed to the second faux model. */
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

export const resultIn = (context, id) => (context.messages ?? []).find((m) => m.role === "toolResult" && m.toolCallId === id);
export const placeholderId = (text) => /^id: (obs_[a-f0-9]{24})$/m.exec(text ?? "")?.[1];
export const RECALL_HEADER = /^\[obs_recall id=(\S+) offset=(\d+) next_offset=(\d+) eof=(true|false)\]\n\[chunk_bytes=\d+ chunk_lines=\d+; use next_offset to continue\]\n/;


const plan = (locate, fix, verify) => ({
	steps: [
		{ id: "locate", goal: "Reproduce the failing tests and find the bug", status: locate },
		{ id: "fix", goal: "Fix the discount arithmetic", status: fix },
		{ id: "verify", goal: "Confirm the whole suite passes and report", status: verify },
	],
});
export const PLAN_STEPS = plan().steps.length;

/**
 * The agent model's choices. `next(context)` answers one agent request; `state` shows
 * what the choices read (the recall id and the pages, whether the continuation came).
 */
export function agentScript(ai) {
	const state = { recallId: undefined, recallPages: [], continued: false };
	const call = (name, args, id) => ai.fauxAssistantMessage([ai.fauxToolCall(name, args, { id })], { stopReason: "toolUse" });
	let offset = 0;
	const choices = [
		() => call("update_plan", plan("in_progress", "pending", "pending"), "plan-1"),
		() => call("bash", { command: TEST_COMMAND }, "test-1"),
		() => call("bash", { command: SEARCH_COMMAND }, "search-1"),
		() => call("read", { path: "shop/pricing.py" }, "read-1"),
		() => call("read", { path: "shop/cart.py" }, "read-2"),
		// By now the search output is a placeholder: look up the definition in it.
		(context) => {
			state.recallId = placeholderId(textOf(resultIn(context, "search-1") ?? { content: "" }));
			if (!state.recallId) return "The search result was not replaced by a placeholder.";
			return call("obs_recall", { id: state.recallId, query: QUERY }, "recall-query");
		},
		// Then page through the whole output; this choice repeats until the last page.
		function page(context) {
			const last = [...context.messages].reverse().find((m) => m.role === "toolResult");
			if (last?.toolName === "obs_recall" && last.toolCallId !== "recall-query") {
				const text = textOf(last);
				const header = RECALL_HEADER.exec(text);
				if (!header) return `Unexpected recall text: ${text.slice(0, 200)}`;
				state.recallPages.push(text.slice(header[0].length));
				if (header[4] === "true") return undefined; // the next choice
				offset = Number(header[3]);
			}
			choices.unshift(page);
			return call("obs_recall", { id: state.recallId, offset }, `recall-${state.recallPages.length}`);
		},
		() => call("edit", { path: "shop/pricing.py", edits: [{ oldText: BUGGY_LINE, newText: FIXED_LINE }], then_run: { command: QUIET_TEST_COMMAND } }, "fix-1"),
		(context) => {
			const ran = /^Ran \d+ tests? in [\d.]+s$/m.exec(textOf(resultIn(context, "fix-1") ?? { content: "" }))?.[0] ?? "the suite ran";
			const progress = {
				files_changed: ["shop/pricing.py"],
				verification: [`${QUIET_TEST_COMMAND}: ${ran}, OK`],
				decisions: ["apply_discount takes the discount off the price instead of returning the discount itself"],
			};
			return call("update_plan", { ...plan("completed", "completed", "in_progress"), progress }, "plan-2");
		},
		// Only after the compaction, from its continuation.
		(context) => {
			if (!(context.messages ?? []).some((m) => textOf(m).includes(CONTINUATION_MARK))) return "The continuation after the compaction was not seen.";
			state.continued = true;
			return FINAL_ANSWER;
		},
	];
	const next = (context) => {
		while (choices.length > 0) {
			const reply = choices.shift()(context);
			if (reply !== undefined) return typeof reply === "string" ? ai.fauxAssistantMessage(reply) : reply;
		}
		return ai.fauxAssistantMessage("The demo script has no more choices.");
	};
	return { state, next };
}

/** The summary the agent model writes when Pi compacts. */
export const summary = (ai) =>
	ai.fauxAssistantMessage(
		"## Goal\nFix the failing discount tests of the shop project.\n\n## Progress\napply_discount in shop/pricing.py returned the discount itself; it now returns the discounted price and `python3 -m unittest` passes.\n\n## Next\nConfirm and report.",
	);

/** Reads a reducer request: the source hash, the error flag, the log. */
export function reducerRequest(context) {
	const text = textOf(context.messages.find((m) => m.role === "user"));
	return {
		sha: /^source_sha256=([0-9a-f]{64})$/m.exec(text)?.[1],
		isError: /^is_error=true$/m.test(text),
		log: text.slice(text.indexOf("<untrusted_log>\n") + 16, text.lastIndexOf("\n</untrusted_log>")),
	};
}

/** The reducer model: registers its provider's replies; each request is recorded in `calls`. */
export function reducerProvider(ai, calls = []) {
	const faux = ai.fauxProvider({ provider: REDUCER_PROVIDER, models: [{ id: REDUCER_MODEL, contextWindow: 200000, maxTokens: 4096 }] });
	const reply = (context) => {
		const request = reducerRequest(context);
		const lines = request.log.split("\n");
		// A careful reducer: per failing test, its FAIL line, the assertion that failed and
		// the values; for a passing run, the summary lines.
		const evidence = request.isError
			? lines
					.filter((line) => line.startsWith("FAIL: ") || line.startsWith("ERROR: ") || /^\s+self\.assert/.test(line) || line.startsWith("AssertionError: "))
					.slice(0, 12)
					.map((quote) => ({ kind: "failure", quote }))
			: lines.filter((line) => /^Ran \d+ tests? in /.test(line) || line === "OK").map((quote) => ({ kind: "summary", quote }));
		calls.push({ ...request, quotes: evidence.map((e) => e.quote) });
		const receipt = { schema: "sol-pi-evidence-receipt/1", source_sha256: request.sha, status: request.isError ? "failure" : "success", uncertain: false, evidence };
		return ai.fauxAssistantMessage(JSON.stringify(receipt));
	};
	faux.setResponses(Array.from({ length: 16 }, () => reply));
	return { provider: faux.provider, calls };
}

/**
 * The agent's faux provider. Its stream calls `options.onPayload` first, as Pi's HTTP
 * providers do, so `before_provider_request` fires. Pi's compaction summarizer gets the
 * summary, every other request `next(context)`. Each reply is stamped after `newest()`
 * (the newest session entry's time, when known) and after the previous reply, as a real
 * round trip is. `requests` records the kind of every request.
 */
export function agentProvider(ai, { next, newest = () => 0, requests = [] }) {
	const core = ai.createFauxCore({ provider: AGENT_PROVIDER, models: [{ id: AGENT_MODEL, contextWindow: 200000 }] });
	const withPayload = (fn) => (model, context, options) => {
		if (options?.onPayload) void Promise.resolve(options.onPayload({ solPiDemo: true }, model));
		return fn(model, context, options);
	};
	const provider = ai.createProvider({
		id: core.provider,
		auth: { apiKey: { name: "Faux", resolve: async () => ({ auth: {} }) } },
		models: core.models,
		api: { stream: withPayload(core.stream), streamSimple: withPayload(core.streamSimple), fetchDeferred: core.fetchDeferred, cancelDeferred: core.cancelDeferred },
	});
	let lastStamp = 0;
	const stamp = (message) => {
		lastStamp = Math.max(Date.now(), newest() + 1, lastStamp + 1);
		return { ...message, timestamp: lastStamp };
	};
	const router = (context) => {
		const kind = isSummarization(context) ? "summary" : "agent";
		requests.push({ kind });
		return stamp(kind === "summary" ? summary(ai) : next(context));
	};
	core.setResponses(Array.from({ length: 64 }, () => router));
	return { provider, getModel: () => core.getModel(), state: core.state, requests };
}

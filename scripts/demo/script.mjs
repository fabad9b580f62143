// The demo's scripted models, shared by the in-process run (scripts/demo.mjs) and the
// interactive one (tui-extension.ts). Only the model's choices are scripted: every
// choice is a function of the real context Pi sends, so a reply reads real results
// (a placeholder's id, a recall page's offset, the real test run) before it chooses.
// `ai` is the Pi AI module of the install that runs the demo.
import { BUGGY_LINE, FIXED_LINE } from "./project.mjs";
import { ALL_FOUR_CONFIG, receiptReducerProvider, scriptedAgentProvider } from "../faux-models.mjs";
import { isSummarization, textOf } from "../../sol-napi/test/summarizer.mjs";

export { isSummarization, textOf };
export { AGENT_MODEL, AGENT_PROVIDER, REDUCER_MODEL, REDUCER_PROVIDER, reducerRequest } from "../faux-models.mjs";
export const TEST_COMMAND = "python3 -m unittest -v";
export const QUIET_TEST_COMMAND = "python3 -m unittest";
export const SEARCH_COMMAND = "grep -rn discount_percent shop";
export const QUERY = "def apply_discount";
export const PROMPT = "The tests of this shop project fail. Find the bug and fix it.";
export const FINAL_ANSWER =
	"Fixed `apply_discount` in shop/pricing.py: it returned the discount instead of the discounted price. The whole suite passes now.";
const CONTINUATION_MARK = "[Online Context Compact]";

/** The SoL-Pi config of the demo: every mechanism on, the reducer routed to the second faux model. */
export const demoConfig = ALL_FOUR_CONFIG;

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

/** The reducer model: a careful reducer quotes, per failing test, its FAIL line, the assertion that failed and the values; for a passing run, the summary lines. */
export const reducerProvider = (ai, calls = []) =>
	receiptReducerProvider(ai, {
		calls,
		replies: 16,
		evidence: (request, lines) =>
			request.isError
				? lines
						.filter((line) => line.startsWith("FAIL: ") || line.startsWith("ERROR: ") || /^\s+self\.assert/.test(line) || line.startsWith("AssertionError: "))
						.slice(0, 12)
						.map((quote) => ({ kind: "failure", quote }))
				: lines.filter((line) => /^Ran \d+ tests? in /.test(line) || line === "OK").map((quote) => ({ kind: "summary", quote })),
	});

/** The agent's faux provider (see `scriptedAgentProvider`), answering Pi's summarizer with the demo's summary. */
export const agentProvider = (ai, { next, newest, requests }) =>
	scriptedAgentProvider(ai, { next, newest, requests, summary: () => summary(ai), payload: { solPiDemo: true }, replies: 64 });

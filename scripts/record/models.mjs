// The scripted models of the recorder. Only the model's choices are scripted: a choice is
// a function of the real context Pi sends (it reads real tool results before it chooses).
// `ai` is the Pi AI module of the install that records.
import { ALL_FOUR_CONFIG, receiptReducerProvider, scriptedAgentProvider } from "../faux-models.mjs";
import { isSummarization, textOf } from "../../sol-napi/test/summarizer.mjs";

export { isSummarization, textOf };
export { AGENT_MODEL, AGENT_PROVIDER, REDUCER_MODEL, REDUCER_PROVIDER } from "../faux-models.mjs";
/** The agent model's context window: small enough that a threshold compaction can be provoked by settings. */
export const CONTEXT_WINDOW = 100000;

/** The SoL-Pi config of a `--with-sol-pi` recording: every mechanism on, the reducer routed to the second faux model. */
export const solPiConfig = ALL_FOUR_CONFIG;
/**
 * The config of a `--with-sol-pi --cache-aware` recording: the same, with ObservationPack's
 * cache-aware placement on and the cache write priced at 12.5 reads (Anthropic's 1.25x input
 * against 0.1x), the ratio Online Context Compact then decides at too.
 */
export const cacheAwareConfig = { ...ALL_FOUR_CONFIG, cacheAware: true, cacheWriteReadRatio: 12.5 };

/** The newest tool result of a context, if any. */
export const lastResult = (context) => [...(context.messages ?? [])].reverse().find((m) => m.role === "toolResult");
/** The tool result of one tool call id in a context. */
export const resultOf = (context, id) => (context.messages ?? []).find((m) => m.role === "toolResult" && m.toolCallId === id);

/**
 * A scenario's script: `steps` are tried in order, each `(context) => reply | undefined`;
 * a reply is a string (the final text of a turn) or an assistant message; `undefined`
 * skips to the next step. Helpers make tool calls and texts for the running Pi's `ai`.
 */
export function script(ai, steps) {
	const queue = [...steps];
	const next = (context) => {
		while (queue.length > 0) {
			const reply = queue.shift()(context);
			if (reply !== undefined) return typeof reply === "string" ? ai.fauxAssistantMessage(reply) : reply;
		}
		return ai.fauxAssistantMessage("The recorded scenario has no more choices.");
	};
	return { next, remaining: () => queue.length };
}

/** One assistant turn that calls tools: `[name, args, id]` triples. */
export const callsOf = (ai, ...calls) =>
	ai.fauxAssistantMessage(
		calls.map(([name, args, id]) => ai.fauxToolCall(name, args, { id })),
		{ stopReason: "toolUse" },
	);

/** The agent's faux provider (see `scriptedAgentProvider`): Pi's summarizer gets `summary(context)` as text. */
export const agentProvider = (ai, { next, summary, newest }) =>
	scriptedAgentProvider(ai, { next, newest, summary: (context) => ai.fauxAssistantMessage(summary(context)), contextWindow: CONTEXT_WINDOW, payload: { solPiRecorder: true } });

// Lines a careful reducer quotes as the evidence of a failure: test failures, panics,
// assertion messages and compiler errors of cargo, unittest and the shell.
const FAILURE_LINE = /^(FAIL: |ERROR: |AssertionError|error(\[E\d+\])?: |test \S+ \.\.\. FAILED$|thread '.*' panicked at |\s+(left|right): |assertion )/;
const SUMMARY_LINE = /^(Ran \d+ tests? in |OK$|test result: )/;

/** The reducer model: quotes real failure lines of a failed run, the summary lines of a passing one; uncertain when it finds none. */
export const reducerProvider = (ai, calls = []) =>
	receiptReducerProvider(ai, {
		calls,
		uncertainWhenEmpty: true,
		evidence: (request, lines) => {
			const failures = lines.filter((line) => FAILURE_LINE.test(line)).slice(0, 12);
			return request.isError && failures.length > 0
				? failures.map((quote) => ({ kind: "failure", quote }))
				: lines.filter((line) => SUMMARY_LINE.test(line)).slice(0, 12).map((quote) => ({ kind: "summary", quote }));
		},
	});

// The scripted models of the recorder. Only the model's choices are scripted: a choice is
// a function of the real context Pi sends (it reads real tool results before it chooses).
// `ai` is the Pi AI module of the install that records.
import { isSummarization, textOf } from "../../sol-napi/test/summarizer.mjs";

export { isSummarization, textOf };

export const AGENT_PROVIDER = "sol-faux";
export const AGENT_MODEL = "faux-1";
export const REDUCER_PROVIDER = "sol-faux-reducer";
export const REDUCER_MODEL = "reducer-1";
/** The agent model's context window: small enough that a threshold compaction can be provoked by settings. */
export const CONTEXT_WINDOW = 100000;

/** The SoL-Pi config of a `--with-sol-pi` recording: every mechanism on, the reducer routed to the second faux model. */
export const solPiConfig = {
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

/**
 * The agent's faux provider. Its stream calls `options.onPayload` first, as Pi's HTTP
 * providers do, so `before_provider_request` fires. Pi's compaction summarizer gets
 * `summary(context)`, every other request `next(context)`. Each reply is stamped after
 * `newest()` (the newest session entry's time) and after the previous reply, as a real
 * round trip is. `requests` records the kind of every request.
 */
export function agentProvider(ai, { next, summary, newest = () => 0 }) {
	const requests = [];
	const core = ai.createFauxCore({ provider: AGENT_PROVIDER, models: [{ id: AGENT_MODEL, contextWindow: CONTEXT_WINDOW }] });
	const withPayload = (fn) => (model, context, options) => {
		if (options?.onPayload) void Promise.resolve(options.onPayload({ solPiRecorder: true }, model));
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
		requests.push(kind);
		return stamp(kind === "summary" ? ai.fauxAssistantMessage(summary(context)) : next(context));
	};
	core.setResponses(Array.from({ length: 512 }, () => router));
	return { provider, getModel: () => core.getModel(), requests };
}

/** Reads a reducer request: the source hash, the error flag, the log. */
function reducerRequest(context) {
	const text = textOf(context.messages.find((m) => m.role === "user"));
	return {
		sha: /^source_sha256=([0-9a-f]{64})$/m.exec(text)?.[1],
		isError: /^is_error=true$/m.test(text),
		log: text.slice(text.indexOf("<untrusted_log>\n") + 16, text.lastIndexOf("\n</untrusted_log>")),
	};
}

// Lines a careful reducer quotes as the evidence of a failure: test failures, panics,
// assertion messages and compiler errors of cargo, unittest and the shell.
const FAILURE_LINE = /^(FAIL: |ERROR: |AssertionError|error(\[E\d+\])?: |test \S+ \.\.\. FAILED$|thread '.*' panicked at |\s+(left|right): |assertion )/;
const SUMMARY_LINE = /^(Ran \d+ tests? in |OK$|test result: )/;

/** The reducer model: quotes real lines of the real log it is sent; counts its requests in `calls`. */
export function reducerProvider(ai, calls = []) {
	const faux = ai.fauxProvider({ provider: REDUCER_PROVIDER, models: [{ id: REDUCER_MODEL, contextWindow: 200000, maxTokens: 4096 }] });
	const reply = (context) => {
		const request = reducerRequest(context);
		const lines = request.log.split("\n");
		const failures = lines.filter((line) => FAILURE_LINE.test(line)).slice(0, 12);
		const evidence =
			request.isError && failures.length > 0
				? failures.map((quote) => ({ kind: "failure", quote }))
				: lines.filter((line) => SUMMARY_LINE.test(line)).slice(0, 12).map((quote) => ({ kind: "summary", quote }));
		calls.push({ sha: request.sha, quotes: evidence.length });
		const status = request.isError ? "failure" : "success";
		return ai.fauxAssistantMessage(JSON.stringify({ schema: "sol-pi-evidence-receipt/1", source_sha256: request.sha, status, uncertain: evidence.length === 0, evidence }));
	};
	faux.setResponses(Array.from({ length: 64 }, () => reply));
	return { provider: faux.provider, calls };
}

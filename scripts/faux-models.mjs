// The scripted faux models the demo and the session recorder share: the agent's provider,
// whose choices a script makes from the real context it is sent, and the reducer's, which
// quotes real lines of the real log it is sent.
import { payloadProvider } from "../sol-napi/test/faux-provider.mjs";
import { isSummarization, textOf } from "../sol-napi/test/summarizer.mjs";

export const AGENT_PROVIDER = "sol-faux";
export const AGENT_MODEL = "faux-1";
export const REDUCER_PROVIDER = "sol-faux-reducer";
export const REDUCER_MODEL = "reducer-1";

/** A `sol-pi.json` with every mechanism on and the reducer routed to the second faux model. */
export const ALL_FOUR_CONFIG = {
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

/**
 * The agent's faux provider. Its stream calls `options.onPayload` first, as Pi's HTTP
 * providers do, so `before_provider_request` fires (`payload` is what it hands over). Pi's
 * compaction summarizer gets `summary(context)`, every other request `next(context)`. Each
 * reply is stamped after `newest()` (the newest session entry's time, when known) and after
 * the previous reply, as a real round trip is. `requests` records `{ kind }` of every request.
 */
export function scriptedAgentProvider(ai, { next, summary, newest = () => 0, requests = [], contextWindow = 200000, payload = {}, replies = 512 }) {
	const core = ai.createFauxCore({ provider: AGENT_PROVIDER, models: [{ id: AGENT_MODEL, contextWindow }] });
	const provider = payloadProvider(ai, core, payload);
	let lastStamp = 0;
	const stamp = (message) => {
		lastStamp = Math.max(Date.now(), newest() + 1, lastStamp + 1);
		return { ...message, timestamp: lastStamp };
	};
	const router = (context) => {
		const kind = isSummarization(context) ? "summary" : "agent";
		requests.push({ kind });
		return stamp(kind === "summary" ? summary(context) : next(context));
	};
	core.setResponses(Array.from({ length: replies }, () => router));
	return { provider, getModel: () => core.getModel(), state: core.state, requests };
}

/** Reads a reducer request: the source hash, the error flag, the log. */
export function reducerRequest(context) {
	const text = textOf(context.messages.find((m) => m.role === "user"));
	return {
		sha: /^source_sha256=([0-9a-f]{64})$/m.exec(text)?.[1],
		isError: /^is_error=true$/m.test(text),
		log: text.slice(text.indexOf("<untrusted_log>\n") + 16, text.lastIndexOf("\n</untrusted_log>")),
	};
}

/**
 * The reducer model: for each request, `evidence(request, lines)` picks the lines it quotes
 * (`[{ kind, quote }]`); the receipt is uncertain when it picks none and `uncertainWhenEmpty`.
 * Each request is recorded in `calls` with its quotes.
 */
export function receiptReducerProvider(ai, { evidence, calls = [], uncertainWhenEmpty = false, replies = 64 }) {
	const faux = ai.fauxProvider({ provider: REDUCER_PROVIDER, models: [{ id: REDUCER_MODEL, contextWindow: 200000, maxTokens: 4096 }] });
	const reply = (context) => {
		const request = reducerRequest(context);
		const picked = evidence(request, request.log.split("\n"));
		calls.push({ ...request, quotes: picked.map((e) => e.quote) });
		const status = request.isError ? "failure" : "success";
		const receipt = { schema: "sol-pi-evidence-receipt/1", source_sha256: request.sha, status, uncertain: uncertainWhenEmpty && picked.length === 0, evidence: picked };
		return ai.fauxAssistantMessage(JSON.stringify(receipt));
	};
	faux.setResponses(Array.from({ length: replies }, () => reply));
	return { provider: faux.provider, calls };
}

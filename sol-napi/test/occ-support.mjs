// Online Context Compact test support: a real AgentSession like support.mjs, but
// with a faux provider whose stream functions call `options.onPayload` first (as
// real HTTP providers do), so `before_provider_request` fires; a router that
// answers Pi's compaction summarization requests apart from the scripted agent
// turns; and readers for the session entries OCC writes.
import * as path from "node:path";

import { ai, pi, repoRoot, startSession, writeJson } from "./support.mjs";
import { isSummarization, textOf } from "./summarizer.mjs";

export const STATE_TYPE = "sol-pi-online-context-state-v1";
export const CONTINUATION_TYPE = "sol-pi-online-context-compact";
export const SKIP_TYPE = "sol-pi-online-context-compact-skipped";
export const DECISION_EVENT = "sol-pi:online-context-compact:decision";
const KEEP_RECENT_FIXTURE = path.join(repoRoot, "sol-napi", "test", "fixtures", "occ-keep-recent-extension.ts");


export const piMajor = Number(pi.VERSION.split(".")[0]);

export function enableOcc(ws, ratio = 0, extra = {}) {
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, onlineContextCompact: true, cacheWriteReadRatio: ratio, ...extra });
}



/** The full text of every message of a provider context. */
export const contextText = (context) => (context.messages ?? []).map(textOf).join("\n");

export function toolCall(name, args, id) {
	return ai.fauxAssistantMessage([ai.fauxToolCall(name, args, { id })], { stopReason: "toolUse" });
}

export const plan = (...steps) => ({ steps: steps.map(([id, status, goal]) => ({ id, goal: goal ?? `Goal ${id}`, status })) });

/**
 * Starts a session with SoL-Pi (OCC enabled by the caller's sol-pi.json), the
 * payload-calling faux provider, and a router: summarization requests get
 * `summary(context)` (a string or an AssistantMessage), agent requests the next of
 * `script` (strings, messages, or functions of the context).
 */
export async function startOccSession({
	cwd,
	agentDir,
	script,
	summary = () => "## Goal\nThe compacted task.\n\n## Progress\nStep a is done.",
	settings = { compaction: { enabled: false, keepRecentTokens: 150 } },
	extensionFactories = [],
	mode = "print",
	sessionManager = pi.SessionManager.inMemory(cwd),
	// OCC's explicit retained tail (the fixture extension); Pi 0.84.2 has no getSettings().
	explicitKeepRecent = piMajor === 0,
	earlierExtensionPaths = [],
	// The faux model's context window.
	contextWindow = 100000,
	// Call onPayload twice per provider request: the second call is a before_provider_request
	// without a context event, like a Pi 1.x cache-warming replay.
	replayPayloads = false,
	// Reply timestamps. "provider": each reply is stamped after every entry already in the
	// session, as a real provider's round trip guarantees (Pi compares timestamps in
	// milliseconds: a reply stamped in the millisecond of a compaction counts as older than
	// it). "same-ms": every reply carries the first reply's timestamp, like a provider fast
	// enough to answer a whole run within one millisecond.
	replyTimestamps = "provider",
}) {
	const core = ai.createFauxCore({ provider: "sol-faux", models: [{ id: "faux-1", contextWindow }] });
	const payloads = [];
	const withPayloadHook = (fn) => (model, context, options) => {
		if (options?.onPayload) {
			for (let i = 0; i < (replayPayloads ? 2 : 1); i++) {
				const payload = { occTestPayload: true, n: payloads.length, replay: i > 0 };
				const record = { payload: structuredClone(payload), result: undefined };
				payloads.push(record);
				record.done = Promise.resolve(options.onPayload(payload, model)).then((result) => (record.result = result));
			}
		}
		return fn(model, context, options);
	};
	const provider = ai.createProvider({
		id: core.provider,
		auth: { apiKey: { name: "Faux", resolve: async () => ({ auth: {} }) } },
		models: core.models,
		api: {
			stream: withPayloadHook(core.stream),
			streamSimple: withPayloadHook(core.streamSimple),
			fetchDeferred: core.fetchDeferred,
			cancelDeferred: core.cancelDeferred,
		},
	});
	const queue = [...script];
	const calls = []; // {kind: "agent" | "summary", context}
	let firstReplyAt;
	let lastStamp = 0;
	const stamp = (message) => {
		if (replyTimestamps === "same-ms") {
			firstReplyAt ??= Date.now();
			return { ...message, timestamp: firstReplyAt };
		}
		// Script messages are built before the session starts; a real reply is made now.
		const newestEntry = Math.max(0, ...sessionManager.getEntries().map((e) => Date.parse(e.timestamp) || 0));
		lastStamp = Math.max(Date.now(), newestEntry + 1, lastStamp + 1);
		return { ...message, timestamp: lastStamp };
	};
	const asMessage = (reply, context) => {
		const value = typeof reply === "function" ? reply(context) : reply;
		return stamp(typeof value === "string" ? ai.fauxAssistantMessage(value) : value);
	};
	const router = (context) => {
		if (isSummarization(context)) {
			calls.push({ kind: "summary", context });
			return asMessage(summary, context);
		}
		calls.push({ kind: "agent", context });
		if (queue.length === 0) return ai.fauxAssistantMessage("script exhausted");
		return asMessage(queue.shift(), context);
	};
	core.setResponses(Array.from({ length: 64 }, () => router));

	const decisions = [];
	const events = [];
	const observer = (api) => {
		api.events.on(DECISION_EVENT, (evaluation) => decisions.push(evaluation));
		api.on("agent_settled", () => events.push("agent_settled"));
		api.on("session_before_compact", (event) => {
			events.push(`before_compact:${event.reason}`);
		});
		api.on("session_compact", (event) => events.push(`compact:${event.reason ?? "?"}`));
	};
	const run = await startSession({
		cwd,
		agentDir,
		settings,
		mode,
		sessionManager,
		earlierExtensionPaths,
		extensionPath: explicitKeepRecent ? KEEP_RECENT_FIXTURE : repoRoot,
		extensionFactories: [observer, ...extensionFactories],
		faux: { provider, getModel: () => core.getModel() },
	});
	return {
		...run,
		sessionManager,
		calls,
		payloads,
		decisions,
		events,
		agentCalls: () => calls.filter((c) => c.kind === "agent"),
		summaryCalls: () => calls.filter((c) => c.kind === "summary"),
	};
}

/** The SoL-Pi extension as loaded (the one that registered `update_plan`). */
export function solPiExtension(run) {
	const ext = run.loaded.extensions.find((e) => e.tools?.has?.("update_plan"));
	if (!ext) throw new Error("SoL-Pi's extension (update_plan) is not loaded");
	return ext;
}

/** SoL-Pi's only handler for `event` (Online Context Compact registers the lifecycle handlers). */
export function solPiHandler(run, event) {
	const handlers = solPiExtension(run).handlers.get(event) ?? [];
	if (handlers.length !== 1) throw new Error(`expected one SoL-Pi ${event} handler, found ${handlers.length}`);
	return handlers[0];
}

/** The entries of the session, root first. */
export const entries = (run) => run.sessionManager.getEntries();
export const compactions = (run) => entries(run).filter((e) => e.type === "compaction");
export const continuations = (run) => entries(run).filter((e) => e.type === "custom_message" && e.customType === CONTINUATION_TYPE);
export const skips = (run) => entries(run).filter((e) => e.type === "custom" && e.customType === SKIP_TYPE);
export const states = (run) => entries(run).filter((e) => e.type === "custom" && e.customType === STATE_TYPE);
export const lastState = (run) => states(run).at(-1)?.data;
export const indexOf = (run, entry) => entries(run).findIndex((e) => e.id === entry.id);
/** The last assistant message entry with text. */
export const lastAssistantEntry = (run) =>
	entries(run).filter((e) => e.type === "message" && e.message.role === "assistant" && textOf(e.message).trim() !== "").at(-1);
export { textOf };

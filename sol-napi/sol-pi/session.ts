// The session's lifecycle in Pi: one handler per Pi event the session engine (`addon.Engine`,
// `sol-napi/src/engine.rs`) takes, each handing the event to one engine step and carrying out
// the effects it returns, in order (`apply`), with Pi's APIs: entries (Online Context
// Compact's snapshots and skip records, the savings totals) through `pi.appendEntry`, the
// status line, notices, `ctx.abort()` at a selected boundary, `ctx.compact()` from the
// `agent_settled` that follows, the hidden continuation through `pi.sendMessage()`, and the
// decision on `pi.events`. A failing Pi call is reported once and ends its step (fail safe: no
// compaction); the session never breaks. The provider payload is never changed.
//
// The handlers of Online Context Compact's own events are registered only when it is on; a
// later `session_start` comes from the extension's one handler of it (index.ts), which starts
// SoL-Pi on the first.
//
// Settlement: after sending the continuation the shell reports whether Pi is still idle, and
// Rust says whether to wait. Pi 0.84.2 starts the continuation turn synchronously inside
// `agent_settled` (`waitForContinuation`: the dispatch stays open until the continuation's own
// `agent_settled` releases it); Pi 0.87+ defers the turn until every settled handler returned
// (nothing to wait for). The waiting is a promise released on the next macrotask.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

import type { NativeAddon } from "./native.ts";
import type { ContextStep } from "./observation-pack.ts";
import { frameOf, observedMessages, type RequestFrame } from "./request-frame.ts";
import type { SavingsTracker } from "./savings.ts";
import { messageOf, OnceWarnings } from "./tui.ts";

type Addon = typeof NativeAddon;
type Step = { effects: NativeAddon.EngineEffect[] } | undefined;

/** Emitted on `pi.events` with every boundary evaluation (diagnostics and tests). */
export const OCC_DECISION_EVENT = "sol-pi:online-context-compact:decision";

type SessionManagerRuntime = {
	getBranch(): unknown[];
	buildSessionProjection?: () => { messages?: unknown[] };
	buildSessionContext?: () => { messages?: unknown[] };
};

type Waiter = { promise: Promise<void>; release: () => void };

function waiter(): Waiter {
	let resolve!: () => void;
	const promise = new Promise<void>((r) => (resolve = r));
	// Released on the next macrotask, after Pi finished the dispatch that released it.
	return { promise, release: () => setImmediate(resolve) };
}

/** One `agent_settled` dispatch: the continuation it found waiting, and the one it sent. */
type Dispatch = { held?: Waiter; sent?: Waiter };

/**
 * The session's handlers as the rest of the extension calls them: a later `session_start`
 * (the extension's one handler of it starts SoL-Pi on the first), and for the plan tool Rust
 * brought up to date before its call (`prepare`) and its step carried out.
 */
export interface SessionDriver {
	sessionStart(ctx: ExtensionContext): void;
	prepare(ctx: ExtensionContext): void;
	apply(ctx: ExtensionContext, step: Step): void;
}

/**
 * Registers the session's handlers with `engine` (made with Online Context Compact when `occ`)
 * and takes the current session's start; call after every mechanism registered its own. The
 * one `context` handler runs ObservationPack's step (`pack`, when it is on), then Online Context
 * Compact's observation, then the savings book's (Pi 0.84.2's request as sent). The savings
 * `tracker` learns the summaries and continuations Online Context Compact adds.
 */
export function registerSession(
	pi: ExtensionAPI,
	ctx: ExtensionContext,
	addon: Addon,
	engine: NativeAddon.Engine,
	tracker: SavingsTracker,
	occ: boolean,
	pack?: ContextStep,
): SessionDriver {
	const anyPi = pi as unknown as { getSettings?: () => unknown };
	const warnings = new OnceWarnings();
	const savings = tracker.status();
	// Handler bodies and the Pi calls of effects run under `warnings.guard`: a failure is
	// reported once and changes nothing in Pi; a failed Pi call gives `false`, which ends its step.
	const internalError = (detail: string): string => addon.occInternalError(detail);
	// The continuation a settled handler (Pi 0.84.2) is waiting for.
	let parent: Waiter | undefined;
	// Ends a running ctx.compact() wait when the session shuts down.
	let abandonCompaction: (() => void) | undefined;
	// A `context` event crosses with the next step rather than on its own: `beforeProviderRequest`
	// and `turnEnd` take it (`seen()`) and Rust applies it first; any other step hands it over
	// (`Engine.context`) before it runs. Rust sees Pi's events in their order, one crossing fewer.
	let pending: NativeAddon.OccContextSeen | undefined;
	const seen = () => {
		const carried = pending;
		pending = undefined;
		return carried;
	};
	const handOver = () => {
		const carried = seen();
		if (carried) engine.context(carried.aborted, carried.observedTokens);
	};
	// The frame of the latest observation; Rust holds only its total and gets the list with a boundary measurement.
	let observed: RequestFrame = frameOf([]);
	/** Keeps an observation's frame for the next boundary, and returns its total (0 without Online Context Compact, which alone observes). */
	const observe = (messages: () => readonly unknown[]): number => {
		if (!occ) return 0;
		observed = frameOf(messages());
		return observed.total;
	};

	const sessionManager = (c: ExtensionContext) => c.sessionManager as unknown as SessionManagerRuntime;
	// What the engine restores from: the branch's custom entries (the book's totals, Online Context
	// Compact's snapshots); the messages, most of a long branch, need not cross.
	const saved = (c: ExtensionContext) => sessionManager(c).getBranch().filter((entry) => (entry as { type?: unknown } | null)?.type === "custom");
	/** What the model sees of the session: the 1.x projection, else 0.84.2's session context. */
	const sessionMessages = (c: ExtensionContext) => (): unknown[] => {
		const sm = sessionManager(c);
		if (typeof sm.buildSessionProjection === "function") return sm.buildSessionProjection().messages ?? [];
		if (typeof sm.buildSessionContext === "function") return sm.buildSessionContext().messages ?? [];
		return [];
	};

	// Rust's restored flag only goes from false to true: once it is known to be set, it is not asked again.
	let restoredKnown = !occ;
	function ensureRestored(c: ExtensionContext) {
		if (restoredKnown) return;
		handOver();
		if (engine.needsRestore()) apply(c, engine.restoreState(saved(c)));
		restoredKnown = true;
	}

	/** The measurements of a boundary decision. */
	function measure(c: ExtensionContext): NativeAddon.OccMeasurement {
		const sm = sessionManager(c);
		const usage = c.getContextUsage();
		return {
			reportedTokens: usage?.tokens ?? undefined,
			usageContextWindow: usage?.contextWindow,
			modelContextWindow: c.model?.contextWindow,
			systemPrompt: c.getSystemPrompt(),
			branch: sm.getBranch(),
			projection: typeof sm.buildSessionProjection === "function" ? sm.buildSessionProjection() : undefined,
			settings: typeof anyPi.getSettings === "function" ? anyPi.getSettings() : undefined,
			modelProvider: c.model?.provider,
			modelId: c.model?.id,
			observed: observedMessages(observed),
		};
	}

	/** `ctx.compact()` until exactly one of its callbacks (or a shutdown) ends it. */
	function compact(c: ExtensionContext, customInstructions: string): Promise<NativeAddon.OccCompactionResult> {
		return new Promise((resolve) => {
			let done = false;
			const finish = (result: NativeAddon.OccCompactionResult) => {
				if (done) return;
				done = true;
				abandonCompaction = undefined;
				resolve(result);
			};
			const failed = (error: unknown): NativeAddon.OccCompactionResult => ({
				kind: "failed",
				name: error instanceof Error ? error.name : undefined,
				message: messageOf(error),
			});
			abandonCompaction = () => finish({ kind: "abandoned" });
			try {
				c.compact({
					customInstructions,
					// The usage Pi reports for the summary's model call, where it reports one (Rust reads it).
					onComplete: (result) => {
						finish({ kind: "completed", summary: result.summary, usage: (result as { usage?: unknown }).usage });
					},
					onError: (error) => finish(failed(error)),
				});
			} catch (error) {
				finish(failed(error));
			}
		});
	}

	/**
	 * Runs one engine call after handing over a `context` event waiting to cross; a failure (a
	 * panic in Rust) is reported once and gives `fallback`.
	 */
	function step<T>(c: ExtensionContext, run: () => T, fallback?: Awaited<T>): T {
		return warnings.guard(c, internalError, fallback as Awaited<T>, () => {
			handOver();
			return run();
		});
	}
	/** Runs a step that takes the waiting `context` event with it. */
	const carrying = (c: ExtensionContext, run: (context: NativeAddon.OccContextSeen | undefined) => Step): Step => warnings.guard<Step>(c, internalError, undefined, () => run(seen()));

	/** Sends the continuation and carries out what Rust answers to Pi's state right after. */
	async function send(c: ExtensionContext, continuation: NativeAddon.OccContinuation, watch: number, dispatch: Dispatch): Promise<void> {
		const next = waiter();
		// Set before sending: the continuation's own agent_settled takes it.
		parent = next;
		dispatch.sent = next;
		tracker.continuation(continuation.customType, watch);
		try {
			pi.sendMessage({ customType: continuation.customType, content: continuation.content, display: continuation.display }, { triggerTurn: continuation.triggerTurn });
			await apply(c, step(c, () => engine.continuationSent(c.isIdle())), dispatch);
		} finally {
			// Still untaken: Pi deferred the turn (0.87+) or the send failed.
			if (parent === next) parent = undefined;
		}
	}

	/** A Pi call of an effect: `true` when done, `false` when it failed (reported once). */
	const call = (c: ExtensionContext, body: () => void): boolean =>
		warnings.guard(c, internalError, false, () => {
			body();
			return true;
		});

	/** One effect with Pi's APIs: `true` when done, `false` when its Pi call failed (reported), or a promise for an effect that waits. */
	function perform(c: ExtensionContext, effect: NativeAddon.EngineEffect, dispatch: Dispatch): boolean | Promise<void> {
		switch (effect.kind) {
			case "appendEntry":
				return call(c, () => pi.appendEntry(effect.customType, effect.data));
			case "decision":
				return call(c, () => pi.events.emit(OCC_DECISION_EVENT, effect.evaluation));
			case "abort":
				return call(c, () => c.abort());
			case "measure":
				return apply(c, step(c, () => engine.decideBoundary(measure(c))), dispatch) ?? true;
			case "warn":
				return call(c, () => (effect.everywhere ? warnings.warn(c, effect.text) : c.mode === "tui" && c.ui.notify(effect.text, "warning")));
			case "status":
				return call(c, () => c.mode === "tui" && c.ui.setStatus(effect.key, effect.text));
			case "savingsNotice":
				return call(c, () => savings.showNotice(c, effect.notice));
			case "compact":
				return compact(c, effect.customInstructions).then((result) => apply(c, step(c, () => engine.compactionFinished(result)), dispatch));
			case "sendMessage":
				return send(c, effect.continuation, effect.watch, dispatch);
			case "watchSummary":
				return call(c, () => tracker.summary(effect.summary, effect.id));
			case "waitForContinuation":
				return dispatch.sent?.promise ?? true;
			case "keepWaiting":
				// Not this dispatch's to release: it goes back for the continuation's own settlement.
				parent = dispatch.held;
				dispatch.held = undefined;
				return true;
			case "fail":
				throw new Error(effect.error);
		}
	}

	/** Carries out a step's effects in order; a promise when one of them waits. */
	function apply(c: ExtensionContext, done: Step, dispatch: Dispatch = {}): Promise<void> | undefined {
		const effects = done?.effects ?? [];
		for (const [index, effect] of effects.entries()) {
			const result = perform(c, effect, dispatch);
			// A failed Pi call was reported: the rest of the step does not happen.
			if (result === false) return undefined;
			// An effect that waits: the rest follows when it is done.
			if (result !== true) return result.then(() => apply(c, { effects: effects.slice(index + 1) }, dispatch));
		}
		return undefined;
	}

	/** Rust brought up to date for a step: Online Context Compact's state restored, a waiting `context` event handed over. */
	const prepare = (c: ExtensionContext) => {
		ensureRestored(c);
		handOver();
	};
	/** A step of an event that Online Context Compact may not have restored its state for yet. */
	const restoredStep = (c: ExtensionContext, run: () => Step) =>
		warnings.guard(c, internalError, undefined, () => {
			ensureRestored(c);
			apply(c, step(c, run));
		});

	const start = (c: ExtensionContext, run: (messages: () => readonly unknown[]) => Step) => {
		tracker.reset();
		apply(c, step(c, () => run(sessionMessages(c))));
	};
	const sessionStart = (c: ExtensionContext) => start(c, (messages) => engine.sessionStart(saved(c), observe(messages)));
	sessionStart(ctx);
	pi.on("session_tree", (_event, c) => start(c, (messages) => engine.sessionTree(saved(c), observe(messages))));
	pi.on("session_compact", (event, c) => restoredStep(c, () => engine.sessionCompact(event.fromExtension === true, observe(sessionMessages(c)))));
	// Another model's provider holds none of the session's prefix in its cache.
	pi.on("model_select", (_event, c) => step(c, () => engine.modelSelect()));
	pi.on("session_shutdown", (_event, c) => {
		step(c, () => engine.sessionShutdown());
		// Every mechanism's status line clear that is still pending.
		tracker.clearStatuses();
		abandonCompaction?.();
		const held = parent;
		parent = undefined;
		held?.release();
	});
	pi.on("turn_end", (event, c) => {
		const message = event.message as { stopReason?: string };
		const results = (event.toolResults ?? []) as Array<{ toolCallId: string; toolName: string; isError?: boolean }>;
		const turn = {
			stopReason: message?.stopReason,
			aborted: c.signal?.aborted === true,
			toolResults: occ ? results.map((result) => ({ toolCallId: result.toolCallId, toolName: result.toolName, isError: result.isError === true })) : [],
		};
		// A boundary to evaluate asks for the measurements; a selected one saves the state, then aborts; the totals entry last.
		apply(c, carrying(c, (context) => engine.turnEnd(turn, context)));
	});
	pi.on("context", (event, c) => {
		const messages = event.messages as unknown[];
		pack?.(messages, c);
		// Online Context Compact observes only: the messages are never changed.
		if (occ)
			warnings.guard(c, internalError, undefined, () => {
				ensureRestored(c);
				pending = { aborted: c.signal?.aborted === true, observedTokens: observe(() => messages) };
			});
		tracker.context(messages, c);
	});
	if (!occ) return { sessionStart, prepare, apply };

	pi.on("input", (event, c) => restoredStep(c, () => engine.input(event.text, event.streamingBehavior)));
	pi.on("before_provider_request", (_event, c) =>
		// The payload is never changed.
		void warnings.guard(c, internalError, undefined, () => {
			ensureRestored(c);
			apply(c, carrying(c, (context) => engine.beforeProviderRequest(c.getContextUsage()?.tokens ?? undefined, c.getSystemPrompt(), context)));
		}),
	);
	// Only Pi's threshold compaction, and only while a boundary compaction is selected.
	pi.on("session_before_compact", (event, c) => (step(c, () => engine.shouldCancelCompaction(event.reason), false) ? { cancel: true } : undefined));
	// Pi 0.84.2 reports idle during an extension-requested compaction; 1.x refuses navigation itself.
	pi.on("session_before_tree", (_event, c) => (step(c, () => engine.shouldCancelTreeNavigation(), false) ? { cancel: true } : undefined));
	pi.on("agent_settled", async (_event, c) => {
		// The continuation waiting for this settlement, if any; released when the dispatch ends.
		const dispatch: Dispatch = { held: parent };
		parent = undefined;
		try {
			await apply(c, step(c, () => engine.agentSettled(c.isIdle())), dispatch);
		} finally {
			dispatch.held?.release();
		}
	});
	return { sessionStart, prepare, apply };
}

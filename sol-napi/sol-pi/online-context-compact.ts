// Online Context Compact in Pi: the `update_plan` tool and the lifecycle handlers.
//
// Every decision comes from the Rust state machine (`sol-occ`'s OccSession behind
// `addon.Occ`): each handler hands Pi's event to one step and carries out the effects
// the step returns, in order, with Pi's APIs (`apply`): state snapshots and skip records
// as custom entries, `ctx.abort()` at a selected boundary, `ctx.compact()` from the
// `agent_settled` that follows, the hidden continuation through `pi.sendMessage()`,
// notices, and the decision on `pi.events`. A failing Pi call is reported once and ends
// its step (fail safe: no compaction); the session never breaks. The provider payload is
// never changed.
//
// Settlement: after sending the continuation the shell reports whether Pi is still idle,
// and Rust says whether to wait. Pi 0.84.2 starts the continuation turn synchronously
// inside `agent_settled` (`waitForContinuation`: the dispatch stays open until the
// continuation's own `agent_settled` releases it); Pi 0.87+ defers the turn until every
// settled handler returned (nothing to wait for). The waiting is a promise released on
// the next macrotask.
import { VERSION } from "@earendil-works/pi-coding-agent";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import type { TSchema } from "typebox";

import type { NativeAddon } from "./native.ts";
import { frameOf, observedMessages, type RequestFrame } from "./request-frame.ts";
import type { SavingsTracker } from "./savings.ts";
import { badge, messageOf, OnceWarnings, SavingsStatus } from "./tui.ts";

type Addon = typeof NativeAddon;

export interface OnlineContextCompactOptions {
	cacheWriteReadRatio: number;
	keepRecentTokens?: number;
	savings?: SavingsTracker;
}

/** Emitted on `pi.events` with every boundary evaluation (diagnostics and tests). */
export const OCC_DECISION_EVENT = "sol-pi:online-context-compact:decision";

/** Pi 1.x: tool exposure, settings, projections, and Pi refuses tree navigation during a compaction itself. */
const piMajor = Number(VERSION.split(".")[0]);

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

type Step = { effects: NativeAddon.OccEffect[]; totals?: NativeAddon.SavingsEntry };

export function registerOnlineContextCompact(
	pi: ExtensionAPI,
	ctx: ExtensionContext,
	addon: Addon,
	options: OnlineContextCompactOptions,
): void {
	// Made with the session's savings book: every step records its account there.
	const session = new addon.Occ(
		{
			cacheWriteReadRatio: options.cacheWriteReadRatio,
			keepRecentTokens: options.keepRecentTokens,
			piRefusesTreeNavigationDuringCompaction: piMajor >= 1,
		},
		options.savings?.book,
	);
	// A `context` event crosses with the next step rather than on its own: `beforeProviderRequest`
	// and `turnEnd` take it (`seen()`) and Rust applies it first; any other step hands it over
	// (`Occ.context`) before it runs. Rust sees Pi's events in their order, one crossing fewer.
	let pending: NativeAddon.OccContextSeen | undefined;
	const seen = () => {
		const carried = pending;
		pending = undefined;
		return carried;
	};
	// Each method is wrapped once, not on every call.
	const methods = new Map<PropertyKey, unknown>();
	const occ = new Proxy(session, {
		get(target, name) {
			const value = Reflect.get(target, name) as unknown;
			if (typeof value !== "function") return value;
			let method = methods.get(name);
			if (!method) {
				const carries = name === "beforeProviderRequest" || name === "turnEnd";
				method = carries
					? value.bind(target)
					: (...args: unknown[]) => {
							const carried = seen();
							if (carried) target.context(carried.aborted, carried.observedTokens);
							return value.apply(target, args);
						};
				methods.set(name, method);
			}
			return method;
		},
	});
	const texts = addon.occTexts();
	const anyPi = pi as unknown as { getSettings?: () => unknown };
	const warnings = new OnceWarnings();
	const savings = new SavingsStatus();
	// The continuation a settled handler (Pi 0.84.2) is waiting for.
	let parent: Waiter | undefined;
	// Ends a running ctx.compact() wait when the session shuts down.
	let abandonCompaction: (() => void) | undefined;
	// The frame of the latest observation; Rust holds only its total and gets the list with a
	// boundary measurement.
	let observed: RequestFrame = frameOf([]);
	/** Keeps an observation's frame for the next boundary, and returns its total. */
	const observe = (messages: readonly unknown[]): number => {
		observed = frameOf(messages);
		return observed.total;
	};

	const sessionManager = (c: ExtensionContext) => c.sessionManager as unknown as SessionManagerRuntime;
	const branch = (c: ExtensionContext) => sessionManager(c).getBranch();
	/** What the model sees of the session: the 1.x projection, else 0.84.2's session context. */
	function sessionMessages(c: ExtensionContext): unknown[] {
		const sm = sessionManager(c);
		if (typeof sm.buildSessionProjection === "function") return sm.buildSessionProjection().messages ?? [];
		if (typeof sm.buildSessionContext === "function") return sm.buildSessionContext().messages ?? [];
		return [];
	}

	// Handler bodies and the Pi calls of effects run under `warnings.guard`: a failure is
	// reported once and changes nothing in Pi (fail safe: no compaction); a failed Pi call
	// gives `false`, which ends its step.
	const internalError = (detail: string): string => addon.occInternalError(detail);

	/**
	 * The step of a restore: saved state that could not be read is a warning, shown once
	 * (a notice in the terminal, else stderr); the session keeps going and its file is unchanged.
	 */
	function restored(c: ExtensionContext, step: Step | undefined) {
		for (const effect of step?.effects ?? []) if (effect.kind === "warn") warnings.warn(c, effect.text);
	}

	// Rust's restored flag only goes from false to true: once it is known to be set, it is not asked again.
	let restoredKnown = false;
	function ensureRestored(c: ExtensionContext) {
		if (restoredKnown) return;
		if (occ.needsRestore()) restored(c, occ.restore(branch(c)));
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
					onComplete: (result) => {
						options.savings?.summary(result.summary);
						// The usage Pi reports for the summary's model call, where it reports one (Rust reads it).
						finish({ kind: "completed", summary: result.summary, usage: (result as { usage?: unknown }).usage });
					},
					onError: (error) => finish(failed(error)),
				});
			} catch (error) {
				finish(failed(error));
			}
		});
	}

	/** Sends the continuation and carries out what Rust answers to Pi's state right after. */
	async function send(c: ExtensionContext, continuation: NativeAddon.OccContinuation, dispatch: Dispatch): Promise<void> {
		const next = waiter();
		// Set before sending: the continuation's own agent_settled takes it.
		parent = next;
		dispatch.sent = next;
		options.savings?.continuation(continuation.customType);
		try {
			pi.sendMessage(
				{ customType: continuation.customType, content: continuation.content, display: continuation.display },
				{ triggerTurn: continuation.triggerTurn },
			);
			await apply(c, warnings.guard<Step | undefined>(c, internalError, undefined, () => occ.continuationSent(c.isIdle())), dispatch);
		} finally {
			// Still untaken: Pi deferred the turn (0.87+) or the send failed.
			if (parent === next) parent = undefined;
		}
	}

	/**
	 * One effect with Pi's APIs: `true` when done, `false` when its Pi call failed (reported),
	 * or a promise for an effect that waits.
	 */
	function perform(c: ExtensionContext, effect: NativeAddon.OccEffect, dispatch: Dispatch): boolean | Promise<void> {
		switch (effect.kind) {
			case "appendEntry":
				return warnings.guard(c, internalError, false, () => {
					pi.appendEntry(effect.customType, effect.data);
					return true;
				});
			case "decision":
				return warnings.guard(c, internalError, false, () => {
					pi.events.emit(OCC_DECISION_EVENT, effect.evaluation);
					return true;
				});
			case "abort":
				return warnings.guard(c, internalError, false, () => {
					c.abort();
					return true;
				});
			case "measure": {
				const decided = warnings.guard<Step | undefined>(c, internalError, undefined, () => occ.decideBoundary(measure(c)));
				// The decision's own account may have changed the totals again since `turnEnd`.
				if (decided?.totals) options.savings?.handTotals(decided.totals);
				return apply(c, decided, dispatch) ?? true;
			}
			case "warn":
				// Terminal only, like the savings notice.
				return warnings.guard(c, internalError, false, () => {
					if (c.mode === "tui") c.ui.notify(effect.text, "warning");
					return true;
				});
			case "savingsNotice":
				return warnings.guard(c, internalError, false, () => {
					savings.showNotice(c, effect.notice);
					return true;
				});
			case "compact":
				return compact(c, effect.customInstructions).then((result) =>
					apply(c, warnings.guard<Step | undefined>(c, internalError, undefined, () => occ.compactionFinished(result)), dispatch),
				);
			case "sendMessage":
				return send(c, effect.continuation, dispatch);
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
	function apply(c: ExtensionContext, step: Step | undefined, dispatch: Dispatch = {}): Promise<void> | undefined {
		const effects = step?.effects ?? [];
		for (const [index, effect] of effects.entries()) {
			const done = perform(c, effect, dispatch);
			// A failed Pi call was reported: the rest of the step does not happen.
			if (done === false) return undefined;
			// An effect that waits: the rest follows when it is done.
			if (done !== true) return done.then(() => apply(c, { effects: effects.slice(index + 1) }, dispatch));
		}
		return undefined;
	}

	restored(ctx, occ.sessionStart(branch(ctx), observe(sessionMessages(ctx))));

	options.savings?.ownTool(texts.toolName, "onlineContextCompact", texts.promptSnippet, texts.promptGuidelines);
	pi.registerTool({
		name: texts.toolName,
		label: texts.toolLabel,
		description: texts.toolDescription,
		promptSnippet: texts.promptSnippet,
		promptGuidelines: texts.promptGuidelines,
		// The JSON Schema carries sol-occ's bounds; TypeBox checks lengths in code points, as sol-occ does.
		parameters: texts.parametersSchema as TSchema,
		// Who may call it, as Rust says (Pi 1.x only: 0.84.2 ignores it and its types lack it).
		...(piMajor >= 1 ? ({ exposure: texts.toolExposure } as object) : {}),
		async execute(toolCallId, params, signal, _onUpdate, c) {
			let result: NativeAddon.OccPlanResult;
			try {
				ensureRestored(c);
				result = occ.updatePlan(toolCallId, params, signal?.aborted === true);
			} catch (error) {
				throw new Error(addon.occInternalError(messageOf(error)));
			}
			// The state snapshot, valid call or not.
			apply(c, result);
			if (!result.ok) throw new Error(result.error ?? texts.toolName);
			return { content: [{ type: "text", text: result.text ?? "" }], details: result.details };
		},
		renderCall(args, theme) {
			return badge(theme, texts.badgeTitle, texts.badgeSaving, addon.occRenderCall(args ?? {}));
		},
		renderResult(result, renderOptions, theme) {
			const boundary = (result.details as { boundary?: boolean } | undefined)?.boundary === true;
			const label = renderOptions.isPartial ? texts.renderPartial : boundary ? texts.renderBoundary : texts.renderPlan;
			return new Text(theme.fg("muted", label), 0, 0);
		},
	});

	pi.on("session_start", (_event, c) => {
		warnings.guard(c, internalError, undefined, () => restored(c, occ.sessionStart(branch(c), observe(sessionMessages(c)))));
	});

	pi.on("session_tree", (_event, c) => {
		warnings.guard(c, internalError, undefined, () => restored(c, occ.sessionTree(branch(c), observe(sessionMessages(c)))));
	});

	pi.on("session_shutdown", (_event, c) => {
		warnings.guard(c, internalError, undefined, () => occ.sessionShutdown());
		savings.clear();
		abandonCompaction?.();
		const held = parent;
		parent = undefined;
		held?.release();
	});

	pi.on("input", (event, c) => {
		warnings.guard(c, internalError, undefined, () => {
			ensureRestored(c);
			apply(c, occ.input(event.text, event.streamingBehavior));
		});
		return undefined;
	});

	pi.on("context", (event, c) => {
		// Observes only: the messages are never changed.
		warnings.guard(c, internalError, undefined, () => {
			ensureRestored(c);
			pending = { aborted: c.signal?.aborted === true, observedTokens: observe(event.messages as unknown[]) };
		});
		return undefined;
	});

	pi.on("before_provider_request", (_event, c) => {
		warnings.guard(c, internalError, undefined, () => {
			ensureRestored(c);
			apply(c, occ.beforeProviderRequest(c.getContextUsage()?.tokens ?? undefined, c.getSystemPrompt(), seen()));
		});
		// The payload is never changed.
		return undefined;
	});

	pi.on("turn_end", (event, c) => {
		warnings.guard(c, internalError, undefined, () => {
			const message = event.message as { stopReason?: string };
			const results = (event.toolResults ?? []) as Array<{ toolCallId: string; toolName: string; isError?: boolean }>;
			const step = occ.turnEnd(
				{
					stopReason: message?.stopReason,
					aborted: c.signal?.aborted === true,
					toolResults: results.map((result) => ({ toolCallId: result.toolCallId, toolName: result.toolName, isError: result.isError === true })),
				},
				seen(),
			);
			// The totals entry, or none when they did not change: the savings book's `turn_end` need not ask.
			options.savings?.handTotals(step.totals);
			// A boundary to evaluate asks for the measurements; a selected one saves the state, then aborts.
			apply(c, step);
		});
		return undefined;
	});

	pi.on("session_before_compact", (event, c) => {
		// Only Pi's threshold compaction, and only while a boundary compaction is selected.
		return warnings.guard(c, internalError, false, () => occ.shouldCancelCompaction(event.reason)) ? { cancel: true } : undefined;
	});

	pi.on("session_before_tree", (_event, c) => {
		// Pi 0.84.2 reports idle during an extension-requested compaction; 1.x refuses navigation itself.
		return warnings.guard(c, internalError, false, () => occ.shouldCancelTreeNavigation()) ? { cancel: true } : undefined;
	});

	pi.on("session_compact", (event, c) => {
		warnings.guard(c, internalError, undefined, () => {
			ensureRestored(c);
			apply(c, occ.sessionCompact(event.fromExtension === true, observe(sessionMessages(c))));
		});
	});

	pi.on("agent_settled", async (_event, c) => {
		// The continuation waiting for this settlement, if any; released when the dispatch ends.
		const dispatch: Dispatch = { held: parent };
		parent = undefined;
		try {
			await apply(c, warnings.guard<Step | undefined>(c, internalError, undefined, () => occ.agentSettled(c.isIdle())), dispatch);
		} finally {
			dispatch.held?.release();
		}
	});
}

// Online Context Compact in Pi: the `update_plan` tool and the lifecycle handlers.
//
// Every decision comes from the Rust state machine (`sol-occ`'s OccSession behind
// `addon.Occ`); this file feeds it Pi's events and carries out what it returns:
// state snapshots as custom entries, `ctx.abort()` at a selected boundary,
// `ctx.compact()` from the `agent_settled` that follows, and the hidden
// continuation through `pi.sendMessage()`. A failure in here never breaks the
// session: it is reported once and Online Context Compact stands still (no
// compaction). The provider payload is never changed.
//
// Settlement: Pi 0.84.2 starts the continuation turn synchronously inside
// `agent_settled`, so the handler keeps that dispatch open until the continuation
// settles (a barrier released by the continuation's own `agent_settled`). Pi
// 0.87+ defers the turn until every settled handler returned and awaits it
// itself: the session is still idle after `sendMessage()`, and the handler returns.
import { VERSION } from "@earendil-works/pi-coding-agent";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import type { TSchema } from "typebox";

import type { NativeAddon } from "./native.ts";
import { type ObservedSizes, observedMessages, observeSizes } from "./online-context-compact-sizes.ts";
import { badge, SavingsStatus } from "./tui.ts";

type Addon = typeof NativeAddon;

export interface OnlineContextCompactOptions {
	cacheWriteReadRatio: number;
	keepRecentTokens?: number;
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

function messageOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

export function registerOnlineContextCompact(
	pi: ExtensionAPI,
	ctx: ExtensionContext,
	addon: Addon,
	options: OnlineContextCompactOptions,
): void {
	const occ = new addon.Occ({ cacheWriteReadRatio: options.cacheWriteReadRatio, keepRecentTokens: options.keepRecentTokens });
	const texts = addon.occTexts();
	const anyPi = pi as unknown as { getSettings?: () => unknown };
	const reported = new Set<string>();
	const savings = new SavingsStatus();
	// The continuation a settled handler (Pi 0.84.2) is waiting for.
	let parent: Waiter | undefined;
	// Ends a running ctx.compact() wait when the session shuts down.
	let abandonCompaction: (() => void) | undefined;
	// The sized messages of the latest observation; Rust holds only their total and gets
	// the list with a boundary measurement.
	let observed: ObservedSizes = observeSizes([]);
	/** Sizes an observation, keeps it for the next boundary, and returns its total. */
	const observe = (messages: readonly unknown[]): number => {
		observed = observeSizes(messages);
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

	function report(c: ExtensionContext | undefined, message: string) {
		if (reported.has(message)) return;
		reported.add(message);
		if (c?.mode === "tui") c.ui.notify(message, "warning");
		else process.stderr.write(`${message}\n`);
	}

	/** Runs a handler body; a failure is reported once and changes nothing in Pi (fail safe: no compaction). */
	function guard<T>(c: ExtensionContext | undefined, body: () => T): T | undefined {
		try {
			return body();
		} catch (error) {
			report(c, addon.occInternalError(messageOf(error)));
			return undefined;
		}
	}

	function persist() {
		const state = occ.takeStateEntry();
		if (state !== undefined && state !== null) pi.appendEntry(texts.stateEntryType, state);
	}

	function ensureRestored(c: ExtensionContext) {
		if (occ.needsRestore()) occ.restore(branch(c));
	}

	function announce(c: ExtensionContext, followUp: NativeAddon.OccFollowUp) {
		if (c.mode !== "tui") return;
		if (followUp.warning) c.ui.notify(followUp.warning, "warning");
		const notice = followUp.savingsNotice;
		if (!notice) return;
		savings.show(c, notice.notice, notice.statusKey, notice.statusText, texts.statusClearMs);
	}

	/** `ctx.compact()` until exactly one of its callbacks (or a shutdown) ends it. */
	function compact(c: ExtensionContext, customInstructions: string | undefined): Promise<NativeAddon.OccCompactionResult> {
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
					onComplete: (result) => finish({ kind: "completed", summary: result.summary }),
					onError: (error) => finish(failed(error)),
				});
			} catch (error) {
				finish(failed(error));
			}
		});
	}

	occ.sessionStart(branch(ctx), observe(sessionMessages(ctx)));

	pi.registerTool({
		name: texts.toolName,
		label: texts.toolLabel,
		description: texts.toolDescription,
		promptSnippet: texts.promptSnippet,
		promptGuidelines: texts.promptGuidelines,
		// The JSON Schema carries sol-occ's bounds; TypeBox checks lengths in code points, as sol-occ does.
		parameters: texts.parametersSchema as TSchema,
		// Pi 1.x only (0.84.2 ignores it and its types lack it): declared to the model, never callable
		// from codemode scripts, whose nested calls no turn reports and so could never compact.
		...(piMajor >= 1 ? ({ exposure: "model-only" } as object) : {}),
		async execute(toolCallId, params, signal, _onUpdate, c) {
			let result: NativeAddon.OccPlanResult;
			try {
				ensureRestored(c);
				result = occ.updatePlan(toolCallId, params, signal?.aborted === true);
				persist();
			} catch (error) {
				throw new Error(addon.occInternalError(messageOf(error)));
			}
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
		guard(c, () => occ.sessionStart(branch(c), observe(sessionMessages(c))));
	});

	pi.on("session_tree", (_event, c) => {
		guard(c, () => occ.sessionTree(branch(c), observe(sessionMessages(c))));
	});

	pi.on("session_shutdown", (_event, c) => {
		guard(c, () => occ.sessionShutdown());
		savings.clear();
		abandonCompaction?.();
		const held = parent;
		parent = undefined;
		held?.release();
	});

	pi.on("input", (event, c) => {
		guard(c, () => {
			ensureRestored(c);
			occ.input(event.text, event.streamingBehavior);
			persist();
		});
		return undefined;
	});

	pi.on("context", (event, c) => {
		// Observes only: the messages are never changed.
		guard(c, () => {
			ensureRestored(c);
			occ.context(c.signal?.aborted === true, observe(event.messages as unknown[]));
		});
		return undefined;
	});

	pi.on("before_provider_request", (_event, c) => {
		guard(c, () => {
			ensureRestored(c);
			const outcome = occ.beforeProviderRequest(c.getContextUsage()?.tokens ?? undefined, c.getSystemPrompt());
			if (outcome.counted) persist();
		});
		// The payload is never changed.
		return undefined;
	});

	pi.on("message_end", (event, c) => {
		guard(c, () => occ.messageEnd(String((event.message as { role?: unknown }).role ?? "")));
		return undefined;
	});

	pi.on("turn_end", (event, c) => {
		guard(c, () => {
			const message = event.message as { stopReason?: string };
			const results = (event.toolResults ?? []) as Array<{ toolCallId: string; toolName: string; isError?: boolean }>;
			const outcome = occ.turnEnd({
				stopReason: message?.stopReason,
				aborted: c.signal?.aborted === true,
				toolResults: results.map((result) => ({ toolCallId: result.toolCallId, toolName: result.toolName, isError: result.isError === true })),
			});
			if (outcome.kind !== "evaluate") return;
			const sm = sessionManager(c);
			const usage = c.getContextUsage();
			const evaluation = occ.decideBoundary({
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
			});
			if (!evaluation) return;
			pi.events.emit(OCC_DECISION_EVENT, evaluation);
			if (!evaluation.abort) return;
			// Save the plan and progress first; the compaction runs from the agent_settled this stop produces.
			persist();
			c.abort();
		});
		return undefined;
	});

	pi.on("session_before_compact", (event, c) => {
		// Only Pi's threshold compaction, and only while a boundary compaction is selected.
		if (guard(c, () => occ.shouldCancelCompaction(event.reason)) === true) return { cancel: true };
		return undefined;
	});

	pi.on("session_before_tree", (_event, c) => {
		// Pi 0.84.2 reports idle during an extension-requested compaction; 1.x refuses navigation itself.
		if (guard(c, () => occ.shouldCancelTreeNavigation(piMajor >= 1)) === true) return { cancel: true };
		return undefined;
	});

	pi.on("session_compact", (event, c) => {
		guard(c, () => {
			ensureRestored(c);
			occ.sessionCompact(event.fromExtension === true, observe(sessionMessages(c)));
			persist();
		});
	});

	pi.on("agent_settled", async (_event, c) => {
		const held = parent;
		parent = undefined;
		const action = guard(c, () => occ.agentSettled(c.isIdle()));
		if (action?.kind === "wait") {
			parent = held;
			return;
		}
		if (action?.kind === "dropped") {
			// Pi was not idle at the settlement of the run the boundary stopped: the selection
			// is dropped (recorded), never kept for a later, unrelated settlement.
			guard(c, () => {
				pi.appendEntry(action.skipEntry.customType, action.skipEntry.data);
			});
		}
		if (action?.kind !== "compact") {
			held?.release();
			return;
		}
		let error: string | undefined;
		try {
			const result = await compact(c, action.customInstructions);
			const followUp = guard(c, () => {
				const followUp = occ.compactionFinished(result);
				if (followUp.skipEntry) pi.appendEntry(followUp.skipEntry.customType, followUp.skipEntry.data);
				persist();
				announce(c, followUp);
				return followUp;
			});
			error = followUp?.error ?? undefined;
			const continuation = followUp?.continuation;
			if (continuation) {
				const next = waiter();
				parent = next;
				try {
					pi.sendMessage(
						{ customType: continuation.customType, content: continuation.content, display: continuation.display },
						{ triggerTurn: continuation.triggerTurn },
					);
				} catch (sendError) {
					if (parent === next) parent = undefined;
					throw sendError;
				}
				if (c.isIdle()) {
					// Pi 0.87+ deferred the turn and awaits it after this handler returns.
					if (parent === next) parent = undefined;
				} else {
					// Pi 0.84.2 started the turn: keep this dispatch open until it settles.
					await next.promise;
				}
			}
		} finally {
			held?.release();
		}
		if (error) throw new Error(error);
	});
}

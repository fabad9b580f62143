// The Evidence-Preserving Reducer in Pi: one `tool_result` handler over Rust's step API.
// `begin` returns the decision or a model request, sent through `ctx.modelRegistry.complete()`;
// `finish` takes what came of it. The journal records Rust gives go in as custom entries
// (never seen by the model). Any doubt leaves the original result untouched.
import * as os from "node:os";

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

import type { NativeAddon } from "./native.ts";
import type { SavingsTracker } from "./savings.ts";
import { runtimeRoot } from "./storage.ts";
import { messageOf, now, OnceWarnings } from "./tui.ts";

type Answer = NativeAddon.ReducerModelAnswer;

/** Sends Rust's request through Pi's model registry, with its timeout and the run's abort signal; never throws. */
async function callModel(ctx: ExtensionContext, addon: typeof NativeAddon, request: NativeAddon.ReducerModelRequest): Promise<Answer> {
	const registry = ctx.modelRegistry as unknown as {
		find(provider: string, id: string): { maxTokens?: number } | undefined;
		complete(model: unknown, context: unknown, options?: unknown): Promise<unknown>;
	};
	const model = registry.find(request.provider, request.model);
	if (!model) return { kind: "unavailable" };
	const controller = new AbortController();
	const relay = () => controller.abort();
	let timedOut = false;
	const timer = setTimeout(() => ((timedOut = true), relay()), request.timeoutMs);
	ctx.signal?.addEventListener("abort", relay, { once: true });
	// A timeout or an abort wins over whatever the call gave.
	const ended = (): Answer | undefined => (timedOut ? { kind: "timeout" } : ctx.signal?.aborted ? { kind: "aborted" } : undefined);
	try {
		const context = { systemPrompt: request.systemPrompt, messages: [{ role: "user", content: request.userText, timestamp: Date.now() }] };
		const maxTokens = addon.reducerOutputCap(request.maxOutputTokens, model.maxTokens);
		const message = await registry.complete(model, context, { maxTokens, signal: controller.signal, cacheRetention: "none" });
		return ended() ?? { kind: "reply", message };
	} catch (error) {
		return ended() ?? { kind: "exception", message: messageOf(error) };
	} finally {
		clearTimeout(timer);
		ctx.signal?.removeEventListener("abort", relay);
	}
}

/** The assistant messages on the branch: the session's age in requests, the horizon's input. */
function carriedRequests(ctx: ExtensionContext): number {
	const branch = ctx.sessionManager.getBranch() as Array<{ type?: string; message?: { role?: string } }>;
	return branch.reduce((count, entry) => count + (entry.type === "message" && entry.message?.role === "assistant" ? 1 : 0), 0);
}

/** Registers the reducer with the model route of `sol-pi.json`; with `economy` (when `cacheAware` is on) Rust weighs each reduction against its model call. */
export function registerReducer(
	pi: ExtensionAPI,
	addon: typeof NativeAddon,
	route: { provider: string; model: string },
	engine: NativeAddon.Engine,
	tracker: SavingsTracker,
	economy?: NativeAddon.ReducerEconomy,
): void {
	// Made with the session engine: each finished reduction records its account in its book.
	const reducer = new addon.Reducer(economy, engine);
	const tools = new Set(addon.reducerToolNames());
	const tempDir = addon.realTempDir(os.tmpdir());
	const savings = tracker.status();
	const warnings = new OnceWarnings();
	const failure = (detail: string) => addon.internalErrorNotice("Evidence-Preserving Reducer", detail);
	const journal = (step: { entryType: string; journal: Array<Record<string, unknown>> }) => step.journal.forEach((r) => pi.appendEntry(step.entryType, r));

	pi.on("tool_result", (event, ctx) =>
		warnings.guard(ctx, failure, undefined, async () => {
			// Only Rust's tools can carry a build/test log: every other result is skipped without serializing it.
			const root = tools.has(event.toolName) ? runtimeRoot(ctx, addon) : undefined;
			if (root?.kind !== "root") return undefined;
			const e = event as typeof event & { parentToolCallId?: string; structuredContent?: unknown };
			const begun = reducer.begin({
				toolCallId: e.toolCallId,
				toolName: e.toolName,
				inputJson: JSON.stringify(e.input ?? {}),
				contentJson: JSON.stringify(e.content ?? []),
				detailsJson: JSON.stringify(e.details),
				isError: e.isError === true,
				parentToolCallId: e.parentToolCallId,
				structuredContent: e.structuredContent,
				runtimeRoot: root.root,
				osTempDir: tempDir,
				timestamp: now(),
				carriedRequests: economy ? carriedRequests(ctx) : undefined,
				...route,
			});
			// The candidate record goes in before the call.
			if (begun.kind === "askModel") journal(begun);
			const done = begun.kind === "done" ? begun.done : begun.reduction.finish(await callModel(ctx, addon, begun.request), now());
			journal(done);
			if (done.kind !== "replaced") return undefined;
			tracker.receipt(done.content, done.watch);
			savings.showNotice(ctx, done.notice);
			return { content: done.content, details: done.details };
		}),
	);
}

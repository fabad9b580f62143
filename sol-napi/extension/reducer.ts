// The Evidence-Preserving Reducer in Pi: one `tool_result` handler that drives
// Rust's step API. `begin` (candidate, Pi's full-output file when trusted, secret
// gate, archive, receipt cache) returns the decision or a model request; this file
// sends the request through `ctx.modelRegistry.complete()`, hands what came of it
// to `finish`, appends the journal records it is given through `pi.appendEntry`
// (custom entries never reach the model) and returns the replacement. Any doubt
// leaves the original result untouched.
import * as os from "node:os";

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

import type { NativeAddon } from "./native.ts";
import { runtimeRoot } from "./storage.ts";
import { SavingsStatus } from "./tui.ts";

type Addon = typeof NativeAddon;

export interface ReducerOptions {
	provider: string;
	model: string;
}

/** Sends Rust's request through Pi's model registry, with a timeout and the run's abort signal; never throws. */
async function callModel(ctx: ExtensionContext, request: NativeAddon.ReducerModelRequest): Promise<NativeAddon.ReducerModelAnswer> {
	const registry = ctx.modelRegistry as unknown as {
		find(provider: string, id: string): { maxTokens?: number } | undefined;
		complete(model: unknown, context: unknown, options?: unknown): Promise<any>;
	};
	const model = registry.find(request.provider, request.model);
	if (!model) return { kind: "unavailable" };
	const controller = new AbortController();
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		controller.abort();
	}, request.timeoutMs);
	const relay = () => controller.abort();
	ctx.signal?.addEventListener("abort", relay, { once: true });
	try {
		const reply = await registry.complete(
			model,
			{ systemPrompt: request.systemPrompt, messages: [{ role: "user", content: request.userText, timestamp: Date.now() }] },
			{ maxTokens: Math.min(request.maxOutputTokens, model.maxTokens ?? request.maxOutputTokens), signal: controller.signal, cacheRetention: "none" },
		);
		if (timedOut) return { kind: "timeout" };
		if (ctx.signal?.aborted) return { kind: "aborted" };
		const text = (reply?.content ?? [])
			.filter((block: { type: string }) => block.type === "text")
			.map((block: { text: string }) => block.text)
			.join("");
		const usage = reply?.usage ?? {};
		return {
			kind: "reply",
			text,
			provider: reply?.provider,
			model: reply?.model,
			stopReason: reply?.stopReason,
			errorMessage: reply?.errorMessage,
			inputTokens: usage.input,
			outputTokens: usage.output,
			cacheReadTokens: usage.cacheRead,
			cacheWriteTokens: usage.cacheWrite,
			totalTokens: usage.totalTokens,
		};
	} catch (error) {
		if (timedOut) return { kind: "timeout" };
		if (ctx.signal?.aborted) return { kind: "aborted" };
		return { kind: "exception", message: error instanceof Error ? error.message : String(error) };
	} finally {
		clearTimeout(timer);
		ctx.signal?.removeEventListener("abort", relay);
	}
}

export function registerReducer(pi: ExtensionAPI, addon: Addon, options: ReducerOptions): void {
	const reducer = new addon.Reducer();
	const tempDir = addon.realTempDir(os.tmpdir()) ?? os.tmpdir();
	const savings = new SavingsStatus();

	function journal(step: { entryType: string; journal: Array<Record<string, unknown>> }) {
		for (const record of step.journal) pi.appendEntry(step.entryType, record);
	}

	pi.on("session_shutdown", () => savings.clear());

	pi.on("tool_result", async (event, ctx) => {
		const e = event as typeof event & { parentToolCallId?: string; structuredContent?: { exit_code?: unknown } };
		// Only these tools can carry a build/test log; skip the JSON work for every other result.
		if (e.toolName !== "bash" && e.toolName !== "edit" && e.toolName !== "write") return;
		const root = runtimeRoot(ctx, addon);
		if (!root.ok) return;
		const exitCode = e.structuredContent?.exit_code;
		const begun = reducer.begin({
			toolCallId: e.toolCallId,
			toolName: e.toolName,
			inputJson: JSON.stringify(e.input ?? {}),
			contentJson: JSON.stringify(e.content ?? []),
			detailsJson: e.details === undefined ? undefined : JSON.stringify(e.details),
			isError: e.isError === true,
			parentToolCallId: e.parentToolCallId,
			exitCode: typeof exitCode === "number" ? exitCode : undefined,
			runtimeRoot: root.root,
			osTempDir: tempDir,
			timestamp: new Date().toISOString(),
			provider: options.provider,
			model: options.model,
		});
		let done: NativeAddon.ReducerDone;
		if (begun.kind === "askModel") {
			// The candidate record goes in before the call.
			journal(begun);
			done = begun.reduction.finish(await callModel(ctx, begun.request), new Date().toISOString());
		} else done = begun.done;
		journal(done);
		if (done.kind !== "replaced") return undefined;
		savings.showNotice(ctx, done.notice);
		return { content: done.content, details: done.details };
	});
}

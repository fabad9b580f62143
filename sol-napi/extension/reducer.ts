// The Evidence-Preserving Reducer in Pi: one `tool_result` handler. Rust picks
// the candidate, reads Pi's full-output file when trusted, gates secrets,
// archives the log before any model call, checks the model's receipt quote by
// quote against the archive and builds the replacement; this file makes the
// model call through `ctx.modelRegistry.complete()` and writes the journal
// through `pi.appendEntry` (custom entries never reach the model). Any doubt
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

/** Calls the reducer model with a timeout and the run's abort signal; never throws. */
async function callModel(ctx: ExtensionContext, options: ReducerOptions, request: NativeAddon.ReducerModelRequest): Promise<NativeAddon.ReducerReplyInput> {
	const registry = ctx.modelRegistry as unknown as {
		find(provider: string, id: string): { maxTokens?: number } | undefined;
		complete(model: unknown, context: unknown, options?: unknown): Promise<any>;
	};
	const model = registry.find(options.provider, options.model);
	if (!model) return { failure: "unavailable" };
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
		if (timedOut) return { failure: "timeout" };
		if (ctx.signal?.aborted) return { failure: "aborted" };
		const text = (reply?.content ?? [])
			.filter((block: { type: string }) => block.type === "text")
			.map((block: { text: string }) => block.text)
			.join("");
		const usage = reply?.usage ?? {};
		return {
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
		if (timedOut) return { failure: "timeout" };
		if (ctx.signal?.aborted) return { failure: "aborted" };
		return { failure: "exception", failureMessage: error instanceof Error ? error.message : String(error) };
	} finally {
		clearTimeout(timer);
		ctx.signal?.removeEventListener("abort", relay);
	}
}

export function registerReducer(pi: ExtensionAPI, addon: Addon, options: ReducerOptions): void {
	const reducer = new addon.Reducer();
	const tempDir = addon.realTempDir(os.tmpdir()) ?? os.tmpdir();
	const savings = new SavingsStatus();

	function journal(step: NativeAddon.ReducerStep) {
		for (const record of step.journal) pi.appendEntry(step.entryType, record);
	}

	function applied(step: NativeAddon.ReducerStep, ctx: ExtensionContext) {
		if (step.notice) savings.show(ctx, step.notice.notice, step.notice.statusKey, step.notice.status, step.notice.statusClearMs);
		return { content: step.content as never, details: step.details };
	}

	pi.on("session_shutdown", () => savings.clear());

	pi.on("tool_result", async (event, ctx) => {
		const e = event as typeof event & { parentToolCallId?: string; structuredContent?: { exit_code?: unknown } };
		// Only these tools can carry a build/test log; skip the JSON work for every other result.
		if (e.toolName !== "bash" && e.toolName !== "edit" && e.toolName !== "write") return;
		const root = runtimeRoot(ctx, addon);
		if (!root.ok) return;
		const exitCode = e.structuredContent?.exit_code;
		const input: NativeAddon.ReducerInput = {
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
		};
		const first = reducer.prepare(input);
		journal(first);
		if (first.kind === "replaced") return applied(first, ctx);
		if (first.kind !== "model" || !first.modelRequest) return;
		const reply = await callModel(ctx, options, first.modelRequest);
		const second = reducer.finish({ ...input, timestamp: new Date().toISOString() }, reply);
		journal(second);
		if (second.kind === "replaced") return applied(second, ctx);
		return undefined;
	});
}

// Action Fusion in Pi: `edit` and `write` rebuilt from Pi's own definitions
// with an optional `then_run` follow-up command, run through Pi's own bash tool
// in the same call. Every decision comes from Rust (`sol_fusion::fused`, the
// `FusedCall` step machine): this file carries out its effects with Pi's APIs (the
// per-file queue, the built-in mutation, the digests, Pi's bash) and reports each
// result back.
import * as os from "node:os";

import {
	createBashToolDefinition,
	createEditToolDefinition,
	createWriteToolDefinition,
	SettingsManager,
} from "@earendil-works/pi-coding-agent";
import type { BashToolOptions, ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

import type { NativeAddon } from "./native.ts";
import { badge, SavingsStatus } from "./tui.ts";

type Addon = typeof NativeAddon;
type Kind = "edit" | "write";
// Pi's definitions are generic over their schemas; the fused tool handles them uniformly.
type AnyDefinition = ToolDefinition<any, any, any>;
type ToolResult = { content: Array<{ type: string; text?: string }>; details?: unknown; isError?: boolean; structuredContent?: any };

export interface ActionFusionOptions {
	/** Pi's agent directory, for reading its settings. */
	agentDir: string;
	/** Explicit bash options (shell path, command prefix); replaces Pi's settings when given. */
	bashOptions?: BashToolOptions;
}

/** The `text` of each text block of a tool result, in order. */
function textsOf(result: { content?: Array<{ type: string; text?: string }> } | undefined): string[] {
	return (result?.content ?? []).filter((block) => block.type === "text" && typeof block.text === "string").map((block) => block.text as string);
}

function messageOf(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** Bash options from Pi's file-backed settings, respecting project trust. */
function bashOptionsFromSettings(ctx: ExtensionContext, agentDir: string, addon: Addon): BashToolOptions {
	const settings = SettingsManager.create(ctx.cwd, agentDir, { projectTrusted: ctx.isProjectTrusted() });
	const errors = settings.drainErrors();
	if (errors.length > 0) {
		const details = errors
			.map((e) => `${e.scope} settings${(e as { path?: string }).path ? ` ${(e as { path?: string }).path}` : ""}: ${messageOf(e.error)}`)
			.join("; ");
		throw new Error(addon.fusionSettingsUnreadable(details));
	}
	const options: BashToolOptions = {};
	const shellPath = settings.getShellPath();
	const commandPrefix = settings.getShellCommandPrefix();
	if (shellPath) options.shellPath = shellPath;
	if (commandPrefix) options.commandPrefix = commandPrefix;
	return options;
}

/**
 * One promise chain per canonical file: calls on a file run one at a time, in the order
 * they called `run`. The place in line is taken synchronously, inside that call, so the
 * order is the order in which Pi started the tool calls (the model's order).
 */
class FileQueue {
	private readonly tails = new Map<string, Promise<void>>();

	/** Runs `operation` in `key`'s line, or at once without a key. */
	run<T>(key: string | undefined, operation: () => Promise<T>): Promise<T> {
		if (key === undefined) return operation();
		const previous = this.tails.get(key) ?? Promise.resolve();
		let release!: () => void;
		const done = new Promise<void>((resolve) => (release = resolve));
		const tail = previous.then(() => done);
		this.tails.set(key, tail);
		return (async () => {
			await previous;
			try {
				return await operation();
			} finally {
				release();
				if (this.tails.get(key) === tail) this.tails.delete(key);
			}
		})();
	}
}

export function registerActionFusion(pi: ExtensionAPI, ctx: ExtensionContext, addon: Addon, options: ActionFusionOptions): void {
	const bashOptions = options.bashOptions ?? bashOptionsFromSettings(ctx, options.agentDir, addon);
	const texts = addon.fusionTexts();
	const queue = new FileQueue();
	const definitions = new Map<string, { edit: AnyDefinition; write: AnyDefinition; bash: AnyDefinition }>();
	const savings = new SavingsStatus();

	// Pi 0.84.2's definitions resolve paths against their construction cwd: one set per cwd.
	function definitionsFor(cwd: string) {
		let set = definitions.get(cwd);
		if (!set) {
			set = {
				edit: createEditToolDefinition(cwd) as AnyDefinition,
				write: createWriteToolDefinition(cwd) as AnyDefinition,
				bash: createBashToolDefinition(cwd, bashOptions) as AnyDefinition,
			};
			definitions.set(cwd, set);
		}
		return set;
	}

	// Feature detection: Pi 1.x tools return structured results (bash declares an output
	// schema) and Pi keeps a returned `isError`; 0.84.2 declares none and marks every
	// returned result as a success. Rust decides from this what a failure becomes.
	const errorResultsKept = "outputSchema" in definitionsFor(ctx.cwd).bash;
	// Script calls carry `parentToolCallId` on their `tool_call` event; `execute` gets only the id.
	const parents = new Map<string, string | undefined>();
	pi.on("tool_call", (event) => {
		if (event.toolName === "edit" || event.toolName === "write") parents.set(event.toolCallId, (event as { parentToolCallId?: string }).parentToolCallId);
	});

	type Call = [string, Record<string, unknown>, AbortSignal | undefined, unknown, ExtensionContext];

	/** The mutation's result with Rust's text blocks after its own. */
	const appended = (mutation: ToolResult, append: string[]): ToolResult => ({
		...mutation,
		content: [...mutation.content, ...append.map((text) => ({ type: "text", text }))],
	});

	/** Carries out the effects of one `FusedCall` until it finishes. */
	async function drive(kind: Kind, machine: NativeAddon.FusedCall, first: NativeAddon.FusedEffect, call: Call): Promise<ToolResult> {
		const [toolCallId, mutationParams, signal, onUpdate, c] = call;
		const set = definitionsFor(c.cwd);
		let mutation: ToolResult = { content: [] };
		let mutationError: unknown;
		let effect = first;
		for (;;) {
			switch (effect.kind) {
				case "reject":
					throw new Error(effect.message);
				case "runMutation":
					try {
						mutation = (await set[kind].execute(toolCallId, mutationParams, signal, onUpdate as never, c as never)) as ToolResult;
						effect = machine.step({ kind: "mutationReturned", texts: textsOf(mutation), isError: mutation.isError === true });
					} catch (error) {
						mutationError = error;
						effect = machine.step({ kind: "mutationThrew", message: messageOf(error) });
					}
					break;
				case "digest": {
					// Runs on the thread pool; a rejected look (a panic in Rust) counts as an unreadable target.
					const look = await addon.fileDigest(effect.path).catch((error: unknown) => ({ error: messageOf(error) }));
					effect = machine.step({ kind: "digest", look });
					break;
				}
				case "yieldTurn":
					await new Promise<void>((resolve) => setImmediate(resolve));
					effect = machine.step({ kind: "turnYielded" });
					break;
				case "runCommand":
					try {
						const args = { command: effect.command, timeout: effect.timeout };
						const command = (await set.bash.execute(`${toolCallId}:then_run`, args, signal, undefined, c as never)) as ToolResult;
						const exitCode = command.structuredContent?.exit_code;
						effect = machine.step({
							kind: "commandReturned",
							texts: textsOf(command),
							isError: command.isError === true,
							exitCode: typeof exitCode === "number" ? exitCode : undefined,
						});
					} catch (error) {
						effect = machine.step({ kind: "commandThrew", message: messageOf(error) });
					}
					break;
				case "returnMutation":
					return mutation;
				case "rethrowMutationError":
					throw mutationError;
				case "return":
					if (effect.notice) savings.showNotice(c, effect.notice);
					return appended(mutation, effect.append);
				case "returnError":
					return { ...appended(mutation, effect.append), isError: true };
				case "throw":
					throw new Error(effect.message);
			}
		}
	}

	function fuse(kind: Kind, base: AnyDefinition): AnyDefinition {
		const thenRunSchema = Type.Optional(
			Type.Object(
				{
					command: Type.String({ description: texts.command }),
					timeout: Type.Optional(Type.Number({ description: texts.timeout })),
				},
				{ description: kind === "edit" ? texts.thenRunEdit : texts.thenRunWrite },
			),
		);
		// Keep Pi's own schema object (its required list, options and symbols); add one property.
		const parameters = { ...base.parameters, properties: { ...base.parameters.properties, then_run: thenRunSchema } };
		const basePrepare = base.prepareArguments;
		return {
			...base,
			parameters,
			prepareArguments: basePrepare
				? (args: unknown) => {
						if (!args || typeof args !== "object" || !("then_run" in args)) return basePrepare(args);
						const { then_run, ...rest } = args as Record<string, unknown>;
						return { ...(basePrepare(rest) as object), then_run };
					}
				: undefined,
			async execute(toolCallId: string, params: Record<string, unknown>, signal: AbortSignal | undefined, onUpdate: unknown, c: ExtensionContext) {
				const { then_run, ...mutationParams } = params;
				const parentToolCallId = parents.get(toolCallId);
				parents.delete(toolCallId);
				const machine = new addon.FusedCall({
					path: typeof params.path === "string" ? params.path : "",
					thenRunJson: then_run === undefined ? undefined : JSON.stringify(then_run),
					cwd: c.cwd,
					home: os.homedir(),
					windows: process.platform === "win32",
					errorResultsKept,
					parentToolCallId,
				});
				const first = machine.start();
				const call: Call = [toolCallId, mutationParams, signal, onUpdate, c];
				// No await before this line: the call takes its place in the file's line now.
				return queue.run(first.kind === "runMutation" ? first.queueKey : undefined, () => drive(kind, machine, first, call));
			},
			renderCall(args: any, theme: any, context: any) {
				const inner = definitionsFor(context?.cwd ?? ctx.cwd)[kind].renderCall?.(args, theme, context);
				if (!args?.then_run || context?.isError) return inner;
				return badge(theme, texts.badgeTitle, texts.badgeSaving, inner);
			},
			renderResult(result: any, renderOptions: any, theme: any, context: any) {
				return definitionsFor(context?.cwd ?? ctx.cwd)[kind].renderResult?.(result, renderOptions, theme, context);
			},
		} as AnyDefinition;
	}

	const template = definitionsFor(ctx.cwd);
	const fused = { edit: fuse("edit", template.edit), write: fuse("write", template.write) };
	pi.registerTool(fused.edit);
	pi.registerTool(fused.write);

	// Another extension or a later registration can replace edit/write and drop then_run; say so once.
	const warned = new Set<Kind>();
	pi.on("agent_start", (_event, c) => {
		const active = new Set(pi.getActiveTools());
		const inert: string[] = [];
		for (const kind of ["edit", "write"] as const) {
			if (warned.has(kind) || !active.has(kind)) continue;
			const info = pi.getAllTools().find((tool) => tool.name === kind);
			const properties = (info?.parameters as { properties?: Record<string, unknown> } | undefined)?.properties;
			if (properties && "then_run" in properties) continue;
			warned.add(kind);
			inert.push(addon.fusionInertWarning(kind));
		}
		if (inert.length === 0) return;
		if (c.mode === "tui") for (const warning of inert) c.ui.notify(warning, "warning");
		else throw new Error(inert.join("\n"));
	});
}

// Action Fusion in Pi: `edit` and `write` rebuilt from Pi's own definitions
// with an optional `then_run` follow-up command, run through Pi's own bash tool
// in the same call. Texts and decisions come from Rust (`sol-fusion`); this file
// does the I/O: the per-file queue, the mutation, the hash guard, the command.
import * as os from "node:os";

import {
	createBashToolDefinition,
	createEditToolDefinition,
	createWriteToolDefinition,
	SettingsManager,
	VERSION,
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

/** Pi 1.x keeps a returned `isError` result; 0.84.2 ignores it, so failures must throw there. */
const returnsErrorResults = Number(VERSION.split(".")[0]) >= 1;

function textOf(result: { content?: Array<{ type: string; text?: string }> } | undefined): string {
	return (result?.content ?? [])
		.filter((block) => block.type === "text" && typeof block.text === "string")
		.map((block) => block.text)
		.join("\n");
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

	run<T>(key: string, operation: () => Promise<T>): Promise<T> {
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

	/** The command failed or was skipped after the mutation was applied: keep the mutation's result. */
	function failAfterMutation(mutation: ToolResult, block: string, thrownText: string): ToolResult {
		if (returnsErrorResults) {
			return { ...mutation, content: [...mutation.content, { type: "text", text: block }], isError: true };
		}
		throw new Error(thrownText);
	}

	function announceSavings(toolCallId: string, c: ExtensionContext) {
		// Script calls (codemode, id "<parent>/<n>") are shown inside the script's own row.
		if (toolCallId.includes("/")) return;
		savings.show(c, texts.savingsNotice, texts.statusKey, texts.statusText, texts.statusClearMs);
	}

	async function runFused(
		kind: Kind,
		target: string,
		thenRun: { command: string; timeout?: number } | undefined,
		call: [string, Record<string, unknown>, AbortSignal | undefined, unknown, ExtensionContext],
	): Promise<ToolResult> {
		const [toolCallId, mutationParams, signal, onUpdate, c] = call;
		const set = definitionsFor(c.cwd);
		let mutation: ToolResult;
		try {
			mutation = (await set[kind].execute(toolCallId, mutationParams, signal, onUpdate as never, c as never)) as ToolResult;
		} catch (error) {
			if (!thenRun) throw error;
			throw new Error(addon.fusionSkippedAfterMutationFailure(messageOf(error)));
		}
		if (!thenRun) return mutation;
		if (mutation.isError) throw new Error(addon.fusionSkippedAfterMutationFailure(textOf(mutation)));

		// Hash guard: the target must not change between the mutation and the command. Each
		// look runs on the thread pool; Rust reads only a bounded regular file and decides.
		// A rejected look (a panic in Rust) counts as an unreadable target: the command is skipped.
		const look = (file: string) => addon.fileDigest(file).catch((error: unknown) => ({ error: messageOf(error) }));
		const before = await look(target);
		await new Promise<void>((resolve) => setImmediate(resolve));
		const after = await look(target);
		const guard = addon.fusionGuard(before, after);
		if (!guard.run) {
			const skipped = guard.skipped ?? "";
			return failAfterMutation(mutation, skipped, addon.fusionAfterMutation(textOf(mutation), skipped));
		}
		// A target that could not be guarded: its one-line note follows the mutation's blocks.
		if (guard.note !== undefined) mutation = { ...mutation, content: [...mutation.content, { type: "text", text: guard.note }] };

		let command: ToolResult;
		try {
			command = (await set.bash.execute(`${toolCallId}:then_run`, thenRun, signal, undefined, c as never)) as ToolResult;
		} catch (error) {
			// 0.84.2 throws on a non-zero exit; every version throws on a timeout or an abort.
			throw new Error(addon.fusionFailedText(textOf(mutation), messageOf(error)));
		}
		const output = textOf(command);
		if (addon.fusionCommandFailed(command.isError === true, command.structuredContent?.exit_code)) {
			return failAfterMutation(mutation, addon.fusionFailedBlock(output), addon.fusionFailedText(textOf(mutation), output));
		}
		announceSavings(toolCallId, c);
		return { ...mutation, content: [...mutation.content, { type: "text", text: addon.fusionSucceededBlock(output) }] };
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
				const plan = addon.fusionPlanCall({
					path: typeof params.path === "string" ? params.path : "",
					thenRunJson: then_run === undefined ? undefined : JSON.stringify(then_run),
					cwd: c.cwd,
					home: os.homedir(),
					windows: process.platform === "win32",
				});
				if (!plan.ok) throw new Error(plan.error);
				const call: [string, Record<string, unknown>, AbortSignal | undefined, unknown, ExtensionContext] = [
					toolCallId,
					mutationParams,
					signal,
					onUpdate,
					c,
				];
				if (plan.target === undefined) return runFused(kind, "", undefined, call);
				const target = plan.target;
				// No await before this line: the call takes its place in the file's line now.
				return queue.run(addon.fusionQueueKey(target), () => runFused(kind, target, plan.thenRun, call));
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

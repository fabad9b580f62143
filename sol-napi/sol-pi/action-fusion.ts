// Action Fusion in Pi: `edit` and `write` rebuilt from Pi's own definitions with an optional
// `then_run` command run through Pi's bash in the same call. Rust's `FusedCall` decides; this
// file carries out its effects (the per-file queue, Pi's edit/write, the digests, Pi's bash)
// and reports each result back.
import * as os from "node:os";

import { createBashToolDefinition, createEditToolDefinition, createWriteToolDefinition, SettingsManager } from "@earendil-works/pi-coding-agent";
import type { BashToolOptions, ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import type { Component } from "@earendil-works/pi-tui";
import { type TSchema, Type } from "typebox";

import type { NativeAddon } from "./native.ts";
import type { SavingsTracker } from "./savings.ts";
import { badge, messageOf, OnceWarnings } from "./tui.ts";

type Addon = typeof NativeAddon;
type Kind = "edit" | "write";
type Tools = Record<Kind | "bash", ToolDefinition>;
type Execute = ToolDefinition["execute"];
type Result = Awaited<ReturnType<Execute>> & { isError?: boolean };
type Call = [string, Record<string, unknown>, AbortSignal | undefined, Parameters<Execute>[3], Parameters<Execute>[4]];

/** Bash options from Pi's file-backed settings, respecting project trust. */
function bashOptionsFromSettings(ctx: ExtensionContext, agentDir: string, addon: Addon): BashToolOptions {
	const settings = SettingsManager.create(ctx.cwd, agentDir, { projectTrusted: ctx.isProjectTrusted() });
	const errors = settings.drainErrors().map((e) => ({ scope: e.scope, path: (e as { path?: string }).path, message: messageOf(e.error) }));
	if (errors.length > 0) throw new Error(addon.fusionSettingsUnreadable(errors));
	return { shellPath: settings.getShellPath(), commandPrefix: settings.getShellCommandPrefix() };
}

// One promise chain per key: a call waits for the calls before it that share any of its keys
// (Rust gives the file's resolved path and, once it exists, its device and inode, so a name,
// a symlink and a hard link of one file share a line), then runs; at once without a key. The
// place in line is taken synchronously, inside that call, so the order is the order in which
// Pi started the tool calls (the model's order).
const settled = () => {};

class FileQueue {
	private readonly tails = new Map<string, Promise<void>>();

	run<T>(keys: string[], operation: () => Promise<T>): Promise<T> {
		if (keys.length === 0) return operation();
		const before = keys.map((key) => this.tails.get(key)).filter((tail) => tail !== undefined);
		const result = (before.length === 0 ? Promise.resolve() : Promise.all(before)).then(operation);
		const tail = result.then(settled, settled);
		for (const key of keys) this.tails.set(key, tail);
		void tail.then(() => {
			for (const key of keys) if (this.tails.get(key) === tail) this.tails.delete(key);
		});
		return result;
	}
}

/** Registers the fused tools; `bashOptions`, when given, replace the shell settings read from Pi's files under `agentDir`. */
export function registerActionFusion(
	pi: ExtensionAPI,
	ctx: ExtensionContext,
	addon: Addon,
	options: { agentDir: string; bashOptions?: BashToolOptions; engine: NativeAddon.Engine; savings: SavingsTracker },
): void {
	const bashOptions = options.bashOptions ?? bashOptionsFromSettings(ctx, options.agentDir, addon);
	const texts = addon.fusionTexts();
	const queue = new FileQueue();
	const savings = options.savings.status();
	const sets = new Map<string, Tools>();
	// Pi 0.84.2's definitions resolve paths against their construction cwd: one set per cwd.
	const made = (cwd: string) => ({ edit: createEditToolDefinition(cwd), write: createWriteToolDefinition(cwd), bash: createBashToolDefinition(cwd, bashOptions) });
	const toolsFor = (cwd: string): Tools => sets.get(cwd) ?? sets.set(cwd, made(cwd) as unknown as Tools).get(cwd)!;

	// Capability probe, once: Pi 1.x tools return structured results (bash declares an output
	// schema) and Pi keeps a returned `isError`; 0.84.2 does neither. Rust decides from it.
	const errorResultsKept = "outputSchema" in toolsFor(ctx.cwd).bash;
	// Script calls carry `parentToolCallId` on their `tool_call` event; `execute` gets only the id.
	const parents = new Map<string, string | undefined>();
	pi.on("tool_call", (event) => {
		if (event.toolName === "edit" || event.toolName === "write") parents.set(event.toolCallId, (event as { parentToolCallId?: string }).parentToolCallId);
	});

	/** The mutation's result with Rust's text blocks after its own. */
	const appended = (mutation: Result, append: string[]): Result => ({ ...mutation, content: [...mutation.content, ...append.map((text) => ({ type: "text" as const, text }))] });

	/**
	 * Carries out the effects of one `FusedCall` until it finishes. The book looks for the result
	 * in later requests under the id Rust gave it (none for a script's call, codemode: its result
	 * goes to the script, and no message carries it).
	 */
	async function drive(kind: Kind, machine: NativeAddon.FusedCall, effect: NativeAddon.FusedEffect, [toolCallId, params, signal, onUpdate, c]: Call): Promise<Result> {
		const tools = toolsFor(c.cwd);
		let mutation: Result = { content: [], details: undefined };
		let mutationError: unknown;
		let input: NativeAddon.FusedInput;
		for (;;) {
			switch (effect.kind) {
				case "reject":
				case "throw":
					throw new Error(effect.message);
				case "runMutation":
					try {
						mutation = await tools[kind].execute(toolCallId, params, signal, onUpdate, c);
						input = { kind: "mutationReturned", result: mutation };
					} catch (error) {
						mutationError = error;
						input = { kind: "mutationThrew", message: messageOf(error) };
					}
					break;
				case "digest":
					// Runs on the thread pool; a rejected look (a panic in Rust) counts as an unreadable target.
					input = { kind: "digest", look: await addon.fileDigest(effect.path).catch((error: unknown) => ({ error: messageOf(error) })) };
					break;
				case "yieldTurn":
					await new Promise<void>((resolve) => setImmediate(resolve));
					input = { kind: "turnYielded" };
					break;
				case "runCommand":
					try {
						const args = { command: effect.command, timeout: effect.timeout };
						input = { kind: "commandReturned", result: await tools.bash.execute(`${toolCallId}:then_run`, args, signal, undefined, c) };
					} catch (error) {
						input = { kind: "commandThrew", message: messageOf(error) };
					}
					break;
				case "returnMutation":
					return mutation;
				case "rethrowMutationError":
					throw mutationError;
				case "return":
					options.savings.fusedResult(mutation, effect.append, effect.watch);
					savings.showNotice(c, effect.notice);
					return appended(mutation, effect.append);
				case "returnError":
					options.savings.fusedResult(mutation, effect.append, effect.watch);
					return { ...appended(mutation, effect.append), isError: true };
			}
			effect = machine.step(input);
		}
	}

	function fuse(kind: Kind, base: ToolDefinition): ToolDefinition {
		const [command, timeout] = [Type.String({ description: texts.command }), Type.Optional(Type.Number({ description: texts.timeout }))];
		const thenRun = Type.Optional(Type.Object({ command, timeout }, { description: texts.thenRun[kind] }));
		// Keep Pi's own schema object (its required list, options and symbols); add one property.
		const schema = base.parameters as TSchema & { properties: Record<string, TSchema> };
		const prepare = base.prepareArguments;
		return {
			...base,
			parameters: { ...schema, properties: { ...schema.properties, then_run: thenRun } },
			prepareArguments:
				prepare &&
				((args: unknown) => {
					const { then_run, ...rest } = (args ?? {}) as Record<string, unknown>;
					return then_run === undefined ? prepare(args) : { ...(prepare(rest) as object), then_run };
				}),
			async execute(toolCallId, params: Record<string, unknown>, signal, onUpdate, c) {
				const { then_run, ...mutationParams } = params;
				const parentToolCallId = parents.get(toolCallId);
				parents.delete(toolCallId);
				const { platform } = process;
				// Made with the session engine: the finishing step records the call's account in its book.
				const machine = new addon.FusedCall({ params: { path: params.path, then_run }, cwd: c.cwd, home: os.homedir(), platform, errorResultsKept, parentToolCallId }, options.engine);
				const first = machine.start();
				// No await before this line: the call takes its place in the file's line now.
				const call: Call = [toolCallId, mutationParams, signal, onUpdate, c];
				return queue.run(first.kind === "runMutation" ? first.queueKeys : [], () => drive(kind, machine, first, call));
			},
			renderCall(args, theme, context) {
				const inner = toolsFor(context?.cwd ?? ctx.cwd)[kind].renderCall?.(args, theme, context);
				const fused = addon.fusionShowsBadge((args as { then_run?: unknown } | undefined)?.then_run, context?.isError);
				return fused ? badge(theme, texts.badgeTitle, texts.badgeSaving, inner) : (inner as Component);
			},
			renderResult: (result, renderOptions, theme, context) =>
				toolsFor(context?.cwd ?? ctx.cwd)[kind].renderResult?.(result, renderOptions, theme, context) as Component,
		};
	}

	for (const kind of ["edit", "write"] as const) pi.registerTool(fuse(kind, toolsFor(ctx.cwd)[kind]));

	// Another extension or a later registration can replace edit/write and drop then_run; say so once per tool.
	const warnings = new OnceWarnings();
	pi.on("agent_start", (_event, c) => {
		const active = new Set(pi.getActiveTools());
		const declared = (kind: string) => (pi.getAllTools().find((tool) => tool.name === kind)?.parameters as { properties?: object })?.properties ?? {};
		const inert = ["edit", "write"].filter((kind) => active.has(kind) && !("then_run" in declared(kind)));
		warnings.raise(c, inert.map((kind) => addon.fusionInertWarning(kind)));
	});
}

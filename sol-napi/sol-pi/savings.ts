// The savings accounting in Pi: the `/sol-pi` command, the keyed running total in the TUI
// status line after each response, and the facts the session engine's book needs. Every
// figure is computed in Rust (`sol_core::savings::Book`); this file only reports what happened:
// - each provider request as sent (the request frame's roles, Pi's token estimates and
//   timestamps: no text crosses), from Pi 1.x's `context_with_system` (after every `context`
//   handler, with the system message; on 0.84.2 a `context` handler registered after every
//   mechanism's, with the system prompt as a first part), with the messages whose content is
//   content a step registered with the book (a receipt, a compaction summary, a continuation,
//   a fused call's result: found by content, reported by the id Rust gave it; what each stands
//   for is Rust's) and ObservationPack's placeholders; it is kept until its reply and crosses
//   with it;
// - each response's usage, model and tool calls, and the bytes the model recalled.
// The totals entry after every turn that changed them and the restore from the branch are the
// engine's lifecycle steps (session.ts). The mechanisms' steps need nothing from here: they
// record their accounts in the engine's book inside Rust.
// Nothing here can touch the session: a failure is reported once and the figures stop.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

import type { NativeAddon } from "./native.ts";
import { frameAt, frameOf, messageTokens, roleCode, textStamp, toolCallTokens } from "./request-frame.ts";
import { OnceWarnings, piMajor, SavingsStatus, usageOf } from "./tui.ts";

/** Pi 1.x shows each request with its system message after every `context` handler (`context_with_system`). */
const withSystem = piMajor >= 1;

/** A mechanism's `sol-pi.json` key, as Rust names it. */
export type MechanismKey = "actionFusion" | "observationPack" | "evidencePreservingReducer" | "onlineContextCompact";

/** ObservationPack's placeholder in this request's copy: the message's tokens before it, and the id of the content it replaced (a receipt). */
type Placeholder = { beforeTokens: number; under?: number };
type Message = { role?: unknown; timestamp?: unknown; content?: unknown; summary?: unknown; customType?: unknown; usage?: Record<string, unknown>; stopReason?: unknown };

/** The first text block of a message's content, if it has one. */
function firstText(content: unknown): string | undefined {
	if (!Array.isArray(content)) return undefined;
	const block = content[0] as { type?: unknown; text?: unknown } | undefined;
	return block?.type === "text" && typeof block.text === "string" ? block.text : undefined;
}

/** Texts remembered by length, found by `===` among those of the same length. */
class TextSet<T> {
	private readonly buckets = new Map<number, Array<[string, T]>>();
	add(text: string, value: T): void {
		const bucket = this.buckets.get(text.length) ?? this.buckets.set(text.length, []).get(text.length)!;
		bucket.push([text, value]);
	}
	get(text: string | undefined): T | undefined {
		if (text === undefined) return undefined;
		return this.buckets.get(text.length)?.find(([known]) => known === text)?.[1];
	}
	/** Removes and returns the first value of `text` that `accept` takes. */
	take(text: string, accept: (value: T) => boolean): T | undefined {
		const bucket = this.buckets.get(text.length);
		const at = bucket?.findIndex(([known, value]) => known === text && accept(value)) ?? -1;
		if (!bucket || at < 0) return undefined;
		const [[, value]] = bucket.splice(at, 1);
		if (bucket.length === 0) this.buckets.delete(text.length);
		return value;
	}
	get empty(): boolean {
		return this.buckets.size === 0;
	}
}

type ToolCallBlock = { type?: unknown; name?: unknown; arguments?: unknown };

/** The tool-call blocks of an assistant message's content. */
const toolCallsOf = (content: unknown): ToolCallBlock[] => (Array.isArray(content) ? (content as ToolCallBlock[]).filter((block) => block?.type === "toolCall") : []);

export class SavingsTracker {
	/** The session engine, whose book the mechanisms' steps record their accounts in themselves. */
	private readonly engine: NativeAddon.Engine;
	private readonly warnings = new OnceWarnings();
	/** ObservationPack's placeholders in the request being built (this request's copies only). */
	private marks = new WeakMap<object, Placeholder>();
	/** Whether `marks` holds anything (most requests change nothing). */
	private marked = false;
	/** The role codes the request walk tells apart, from the addon's list (known once it is loaded). */
	private codes: { system: number; toolResult: number; assistant: number; summary: number; custom: number } | undefined;
	// The content steps registered with the book, each with the id Rust gave it; which change it
	// stands for is Rust's. Reducer receipts, by the receipt's first text:
	private readonly receipts = new TextSet<number>();
	/** Online Context Compact's summaries. */
	private readonly summaries = new TextSet<number>();
	/** The custom message types of Online Context Compact's continuations. */
	private readonly continuations = new Map<string, number>();
	/**
	 * Fused calls' results not yet seen in a request, known by their whole content (found by the
	 * last block, the command's output, then every other text block); each is reported once.
	 */
	private fusedResults = new TextSet<{ texts: string[]; id: number }>();
	/** The names of SoL-Pi's own tools (`update_plan`, `obs_recall`): messages with their calls or results are reported (whose tool each is, is the book's). */
	private readonly ownTools = new Set<string>();
	/** The request as sent, kept until its reply: the book takes the two in one crossing. */
	private sent: NativeAddon.SavingsRequest | undefined;
	private broken = false;
	/** The mechanisms' savings notices and status lines, whose pending clears stop when the session shuts down. */
	private readonly statuses: SavingsStatus[] = [];

	private readonly addon: typeof NativeAddon;

	/** The reducer's model (`provider/model`) when `sol-pi.json` names one; else it is the session's. */
	private readonly reducerModel: string | undefined;
	/** The model that answered the last response (`provider/model`), for its cache lifetimes. */
	private lastModel: string | undefined;
	/** Pi's model registry, for each model's `cost`. */
	private registry: { find?(provider: string, id: string): { cost?: Record<string, unknown>; promptCache?: Record<string, unknown> } | undefined } | undefined;

	constructor(addon: typeof NativeAddon, engine: NativeAddon.Engine, reducer?: { provider?: string; model?: string }) {
		this.addon = addon;
		this.reducerModel = reducer?.provider && reducer.model ? `${reducer.provider}/${reducer.model}` : undefined;
		this.engine = engine;
	}

	/** A mechanism's savings notice and self-clearing status line. */
	status(): SavingsStatus {
		const status = new SavingsStatus();
		this.statuses.push(status);
		return status;
	}

	/** The session shuts down: no status line clear is left pending. */
	clearStatuses(): void {
		for (const status of this.statuses) status.clear();
	}

	/** Runs one accounting step; a failure stops the accounting with one warning and never reaches Pi. */
	private guard(ctx: ExtensionContext | undefined, step: () => void): void {
		if (this.broken) return;
		try {
			step();
		} catch (error) {
			this.broken = true;
			// No more totals entries: the figures are incomplete from here on.
			try {
				this.engine.stopAccounting();
			} catch {}
			this.warnings.warn(ctx, this.addon.internalErrorNotice("savings accounting", error instanceof Error ? error.message : String(error)));
		}
	}

	/** ObservationPack is about to replace `message` of `beforeTokens` with its placeholder in this request's copy. */
	replacing(message: object, beforeTokens: number): void {
		this.guard(undefined, () => {
			if (this.marks.has(message)) return;
			this.marks.set(message, { beforeTokens, under: this.receiptId(message as Message) });
			this.marked = true;
		});
	}

	/** The reducer replaced a tool result's content with `content`, which the book registered as `id`. */
	receipt(content: ReadonlyArray<{ type: string; text?: string }>, id: number | undefined): void {
		this.guard(undefined, () => {
			const text = firstText(content);
			if (text !== undefined && id !== undefined) this.receipts.add(text, id);
		});
	}

	/** Online Context Compact's compaction wrote `summary`, which the book registered as `id`. */
	summary(summary: string, id: number): void {
		this.summaries.add(summary, id);
	}

	/** The entry of `model` (`provider/model`) in Pi's model registry, if it has one. */
	private registered(model: string | undefined) {
		const slash = model?.indexOf("/") ?? -1;
		return model && slash > 0 ? this.registry?.find?.(model.slice(0, slash), model.slice(slash + 1)) : undefined;
	}

	/** A model's `promptCache` (its cache lifetimes) in Pi's model registry, as the registry has it (Rust reads it). */
	private promptCacheOf(model: string | undefined): unknown {
		return this.registered(model)?.promptCache;
	}

	/** A model's `cost` in Pi's model registry, as the registry has it (Rust reads it). */
	private costOf(model: string | undefined): unknown {
		return this.registered(model)?.cost;
	}

	/**
	 * Action Fusion returns `mutation` (the edit or write's own result) with `append` after it,
	 * which the book registered as `id`. Rust registers only a result whose blocks all have a
	 * text, with an output after them; without an id there is nothing to look for.
	 */
	fusedResult(mutation: unknown, append: readonly string[], id: number | undefined): void {
		if (id === undefined) return;
		this.guard(undefined, () => {
			const content = (mutation as { content?: unknown } | undefined)?.content;
			const texts = [...(Array.isArray(content) ? content : []).map((block) => (block as { text: string }).text), ...append];
			this.fusedResults.add(append[append.length - 1], { texts, id });
		});
	}

	/** The id of a fused result with exactly this content, taken from the ones waiting. */
	private takeFused(message: Message): number | undefined {
		const content = Array.isArray(message.content) ? (message.content as Array<{ text?: unknown }>) : [];
		const last = content[content.length - 1]?.text;
		if (typeof last !== "string") return undefined;
		const same = ({ texts }: { texts: string[] }) => texts.length === content.length && texts.every((text, i) => content[i]?.text === text);
		return this.fusedResults.take(last, same)?.id;
	}

	/**
	 * `mechanism` registered a tool of this name: its calls and results are SoL-Pi's, not plain Pi's,
	 * and so are the lines it adds to the system prompt: its snippet in Pi's tool list (`- name: snippet`)
	 * and each of its guidelines (`- guideline`).
	 */
	ownTool(name: string, mechanism: MechanismKey, snippet?: string, guidelines: readonly string[] = []): void {
		this.ownTools.add(name);
		this.engine.ownTool(name, mechanism, snippet, [...guidelines]);
	}

	/** An assistant message's tool calls with their sizes, when one calls SoL-Pi's tools (its other calls, which plain Pi has too, come along); undefined otherwise. */
	private toolUse(index: number, message: Message): NativeAddon.SavingsToolUse | undefined {
		if (this.ownTools.size === 0 || !Array.isArray(message.content)) return undefined;
		let own = false;
		for (const block of message.content as ToolCallBlock[]) own ||= block?.type === "toolCall" && this.ownTools.has(String(block.name));
		if (!own) return undefined;
		return { index, calls: toolCallsOf(message.content).map((call) => ({ name: String(call.name), tokens: toolCallTokens(call) })), result: false };
	}

	/** Online Context Compact sent a continuation of this custom type, which the book registered as `id`. */
	continuation(customType: string, id: number): void {
		this.continuations.set(customType, id);
	}

	/** The model recalled `bytes` from the archive. */
	recalled(bytes: number): void {
		this.guard(undefined, () => this.engine.recordRecall(bytes));
	}

	/** The id of the receipt a tool result holds, if it holds one. */
	private receiptId(message: Message): number | undefined {
		return this.receipts.empty ? undefined : this.receipts.get(firstText(message.content));
	}

	/**
	 * The request as sent: the messages after every mechanism's `context` handler, with the system
	 * prompt where Pi keeps it apart. One walk, led by the frame's role codes: each message is asked
	 * only what its role can be (a tool result: a receipt, a fused result, SoL-Pi's own tool's; an
	 * assistant message: calls of SoL-Pi's tools; a summary or a custom message: registered
	 * content), and nothing is allocated for a message that is none of these.
	 */
	private request(listed: readonly unknown[], systemPrompt?: string): void {
		const messages = systemPrompt === undefined ? listed : [{ role: "system", content: systemPrompt }, ...listed];
		// The request's frame, taken by the mechanisms a moment ago (1.x: all but the system message).
		const shift = messages.length - listed.length || (listed.length > 0 && (listed[0] as Message).role === "system" ? 1 : 0);
		const frame = frameAt(messages, shift) ?? frameOf(messages.slice(shift));
		const count = messages.length;
		const [roles, tokens, stamps] = [new Uint8Array(count), new Float64Array(count), new Float64Array(count)];
		roles.set(frame.roles, shift);
		tokens.set(frame.tokens, shift);
		stamps.set(frame.stamps, shift);
		const code = (this.codes ??= { system: roleCode("system"), toolResult: roleCode("toolResult"), assistant: roleCode("assistant"), summary: roleCode("compactionSummary"), custom: roleCode("custom") });
		const marked = this.marked;
		let unstamped: unknown[] | undefined;
		let seen: NativeAddon.SavingsSeen[] | undefined;
		let placeholders: NativeAddon.SavingsPlaceholder[] | undefined;
		let toolUses: NativeAddon.SavingsToolUse[] | undefined;
		const saw = (index: number, id: number | undefined | false) => id && (seen ??= []).push({ index, id });
		for (let index = 0; index < count; index++) {
			const message = (messages[index] ?? {}) as Message;
			if (index < shift) {
				roles[index] = roleCode(message.role);
				// Pi 0.84.2's estimate knows no system role: the prompt it keeps apart is sized as Pi
				// sizes a system message's text (and any text), by its length.
				tokens[index] = messageTokens(systemPrompt === undefined ? message : { role: "user", content: systemPrompt });
			}
			const role = roles[index];
			if (role === code.system) {
				// Sent whole: the book knows it by what it tells the model, and finds SoL-Pi's lines and tools in it.
				(unstamped ??= new Array<unknown>(count).fill(null))[index] = message;
				continue;
			}
			// Any other message without a timestamp is known by its string timestamp, else its content.
			if (Number.isNaN(stamps[index])) (unstamped ??= new Array<unknown>(count).fill(null))[index] = textStamp(message) ?? message;
			// ObservationPack's placeholder in this request's copy (its content is no longer what was registered).
			const placeholder = marked ? this.marks.get(message) : undefined;
			if (placeholder) (placeholders ??= []).push({ index, ...placeholder });
			if (role === code.toolResult) {
				if (!placeholder) saw(index, this.receiptId(message) ?? (!this.fusedResults.empty && this.takeFused(message)));
				const name = String((message as { toolName?: unknown }).toolName);
				if (this.ownTools.has(name)) (toolUses ??= []).push({ index, calls: [{ name, tokens: 0 }], result: true });
			} else if (role === code.assistant) {
				const used = this.toolUse(index, message);
				if (used) (toolUses ??= []).push(used);
			} else if (role === code.summary) {
				saw(index, typeof message.summary === "string" && this.summaries.get(message.summary));
			} else if (role === code.custom) {
				saw(index, typeof message.customType === "string" && this.continuations.get(message.customType));
			}
		}
		if (marked) [this.marks, this.marked] = [new WeakMap(), false];
		this.sent = { roles, tokens, stamps, unstamped, seen, placeholders, toolUses, cacheRetention: process.env.PI_CACHE_RETENTION, promptCache: this.promptCacheOf(this.lastModel) };
	}

	/** Shows the running total in the TUI's status line (nowhere else). */
	private showStatus(ctx: ExtensionContext): void {
		if (ctx.mode === "tui") ctx.ui.setStatus(this.engine.statusKey, this.engine.view().statusLine);
	}

	/** Another session or branch: nothing waits for a reply or a request any more (the engine restores the totals). */
	reset(): void {
		[this.sent, this.fusedResults] = [undefined, new TextSet()];
	}

	/** The `/sol-pi` table. */
	table(): string {
		return this.engine.view().table;
	}

	/**
	 * The `context` event's messages after every mechanism's change: the request as sent on Pi
	 * 0.84.2, with the system prompt (the session's `context` handler calls it last). Pi 1.x
	 * shows the request with its system message in `context_with_system` instead.
	 */
	context(messages: readonly unknown[], c: ExtensionContext): void {
		if (!withSystem) this.guard(c, () => this.request(messages, c.getSystemPrompt()));
	}

	/** Registers the handlers and the command; call after every mechanism registered its own. */
	register(pi: ExtensionAPI, ctx: ExtensionContext): void {
		this.registry = (ctx as { modelRegistry?: SavingsTracker["registry"] }).modelRegistry;
		if (this.reducerModel) {
			const model = this.reducerModel;
			this.guard(ctx, () => this.engine.reducerModel(model, this.costOf(model)));
		}
		if (withSystem) {
			(pi as unknown as { on(event: string, handler: (event: { messages: unknown[] }, c: ExtensionContext) => undefined): void }).on("context_with_system", (event, c) => {
				this.guard(c, () => this.request(event.messages));
				return undefined;
			});
		}
		pi.on("message_end", (event, c) => {
			const message = event.message as Message;
			if (message.role !== "assistant") return undefined;
			this.guard(c, () => {
				const calls = toolCallsOf(message.content);
				const answered = message as { provider?: unknown; model?: unknown };
				const model = typeof answered.provider === "string" && typeof answered.model === "string" ? `${answered.provider}/${answered.model}` : undefined;
				if (model) this.lastModel = model;
				const sent = this.sent;
				this.sent = undefined;
				this.engine.recordResponse(
					{
						model,
						cost: this.costOf(model),
						toolCalls: calls.length > 0 ? calls.map((call) => String(call.name)) : undefined,
						estimatedOutput: messageTokens(message),
						usage: usageOf(message),
						stopReason: typeof message.stopReason === "string" ? message.stopReason : undefined,
					},
					sent,
				);
				this.showStatus(c);
			});
			return undefined;
		});
		pi.registerCommand("sol-pi", {
			description: "Show what SoL-Pi saved in this session, per mechanism, in tokens and dollars",
			handler: async (_args, c) => {
				const table = this.broken ? "SoL-Pi: the savings accounting stopped after an internal error; see the warning above." : this.table();
				// The TUI and RPC clients get it as a notice; print and JSON runs on stderr, since Pi
				// keeps stdout for the answer and its event stream (and sends an extension's stdout there too).
				if (c.hasUI) c.ui.notify(table, "info");
				else process.stderr.write(`${table}\n`);
			},
		});
	}
}

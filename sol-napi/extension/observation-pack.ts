// ObservationPack in Pi: the `context` handler and the `obs_recall` tool.
//
// The handler walks the messages Pi passes (a copy per request) and edits them
// in place; it returns nothing, so Pi 0.87+ keeps its system messages where they
// are. Each large text result crosses into Rust once in its life (`ObsPack.admit`:
// eligibility, archive, placeholder, a handle). Which content was admitted under
// which handle is remembered by content, never by the provider's tool-call id
// (providers reuse ids, or send none): a bucket per text length holds the exact
// block texts, and a hit needs the same tool and `===` texts. On every request the
// handles and how many requests already carried each (the assistant messages after
// it on the current branch, so counts follow the session tree) go to Rust as two
// typed arrays; Rust's step says which to replace, writes the ledger and returns the
// saving. This file decides nothing about what is sent.
// A text that is not well-formed UTF-16 (a lone surrogate) is never replaced: it
// would reach Rust as U+FFFD, so the model always gets such a result exactly.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import { Type } from "typebox";

import type { NativeAddon } from "./native.ts";
import { runtimeRoot } from "./storage.ts";
import { badge, OnceWarnings, SavingsStatus } from "./tui.ts";

type Addon = typeof NativeAddon;
type Block = { type: string; text?: string };
type Message = { role: string; toolCallId?: string; toolName?: string; isError?: boolean; content?: unknown };

/** The text of a result whose every block is text, joined as Rust joins it; undefined otherwise. */
function textOnly(content: unknown): { blocks: Block[]; length: number } | undefined {
	if (!Array.isArray(content) || content.length === 0) return undefined;
	let length = content.length - 1;
	for (const block of content as Block[]) {
		if (block?.type !== "text" || typeof block.text !== "string") return undefined;
		length += block.text.length;
	}
	return { blocks: content as Block[], length };
}

const joined = (blocks: Block[]) => blocks.map((block) => block.text).join("\n");

// String.prototype.isWellFormed is ES2024 (Node 20+); the extension's TypeScript lib is ES2022.
const wellFormed = (blocks: Block[]) => blocks.every((block) => (block.text as string & { isWellFormed(): boolean }).isWellFormed());

/** What Rust made of exactly these blocks of this tool: packed under a handle, or kept in full. */
type Known = { toolName: string; texts: string[]; packed: { handle: number; placeholder: string } | undefined };

/** The admission of exactly these blocks of this tool, if any. */
function lookup(bucket: Known[] | undefined, toolName: string, blocks: Block[]): Known | undefined {
	if (!bucket) return undefined;
	next: for (const known of bucket) {
		if (known.toolName !== toolName || known.texts.length !== blocks.length) continue;
		// Same-length flat strings: V8 compares them with memcmp, stopping at the first difference.
		for (let i = 0; i < blocks.length; i++) if (known.texts[i] !== blocks[i].text) continue next;
		return known;
	}
	return undefined;
}

/** One storage directory: Rust's pack, and which content it admitted (joined length -> admissions). */
type Storage = { pack: NativeAddon.ObsPack; known: Map<number, Known[]> };

export function registerObservationPack(pi: ExtensionAPI, addon: Addon): void {
	const policy = addon.obsPolicy();
	const texts = addon.obsTexts();
	const storages = new Map<string, Storage>();
	const savings = new SavingsStatus();
	// One message per distinct problem: ObservationPack fails open, the message goes in full.
	const warnings = new OnceWarnings();
	const reportOnce = (ctx: ExtensionContext, message: string) => warnings.warn(ctx, message);

	function storageDir(ctx: ExtensionContext): string | undefined {
		const root = runtimeRoot(ctx, addon);
		if (!root.ok) {
			reportOnce(ctx, addon.obsUnavailable(root.error));
			return undefined;
		}
		return `${root.root}/observation-pack`;
	}

	pi.on("context", (event, ctx) => {
		const messages = event.messages as unknown as Message[];
		const dir = storageDir(ctx);
		if (!dir) return;
		let storage = storages.get(dir);
		if (!storage) storages.set(dir, (storage = { pack: new addon.ObsPack(dir), known: new Map() }));
		const { pack, known } = storage;

		// Packed results in this request, each with the requests that already carried it.
		const seen: Array<[Message, Known, number]> = [];
		const pending: Array<[Message, Block[], string, number, number]> = [];
		let assistantsAfter = 0;
		for (let i = messages.length - 1; i >= 0; i--) {
			const message = messages[i];
			if (message.role === "assistant") {
				assistantsAfter++;
				continue;
			}
			// The tool-call id is never needed: identity is the content (an id may be reused, empty or absent).
			if (message.role !== "toolResult" || message.isError) continue;
			const text = textOnly(message.content);
			// A UTF-16 unit is at most 3 UTF-8 bytes: shorter texts cannot pass Rust's threshold.
			if (!text || text.length * 3 <= policy.thresholdBytes) continue;
			const toolName = message.toolName ?? "unknown";
			const found = lookup(known.get(text.length), toolName, text.blocks);
			if (found) {
				if (found.packed) seen.push([message, found, assistantsAfter]);
				continue;
			}
			pending.push([message, text.blocks, toolName, text.length, assistantsAfter]);
		}
		if (pending.length > 0) {
			// Remembers an admission unless one exists for the same content (it can occur twice in one request).
			const remember = (blocks: Block[], toolName: string, length: number, packed: Known["packed"]): Known => {
				const bucket = known.get(length);
				const existing = lookup(bucket, toolName, blocks);
				if (existing) return existing;
				const entry = { toolName, texts: blocks.map((block) => block.text!), packed };
				if (bucket) bucket.push(entry);
				else known.set(length, [entry]);
				return entry;
			};
			const candidates: typeof pending = [];
			for (const entry of pending) {
				const [, blocks, toolName, length] = entry;
				if (wellFormed(blocks)) candidates.push(entry);
				// Not well-formed UTF-16: it would reach Rust as U+FFFD, so it always goes in full.
				else remember(blocks, toolName, length, undefined);
			}
			const admissions = candidates.length === 0 ? [] : pack.admit(
				candidates.map(([message, blocks, toolName]) => ({ toolCallId: message.toolCallId ?? "", toolName, text: joined(blocks) })),
				new Date().toISOString(),
			);
			admissions.forEach((admission, index) => {
				const [message, blocks, toolName, length, after] = candidates[index];
				// A failed archive keeps this message in full and is retried on the next request.
				if (admission.kind === "failed") return reportOnce(ctx, admission.error);
				const packed = admission.kind === "packed" ? { handle: admission.handle, placeholder: admission.placeholder } : undefined;
				const entry = remember(blocks, toolName, length, packed);
				if (entry.packed) seen.push([message, entry, after]);
			});
		}
		if (seen.length === 0) return;

		// The walk above ended at the first message: it counted every assistant message.
		const step = pack.onContext(
			assistantsAfter + 1,
			Uint32Array.from(seen, ([, entry]) => entry.packed!.handle),
			Uint32Array.from(seen, ([, , after]) => after),
			new Date().toISOString(),
		);
		seen.forEach(([message, entry], index) => {
			if (step.replace[index] === 1) message.content = [{ type: "text", text: entry.packed!.placeholder }];
		});
		if (step.error) reportOnce(ctx, step.error);
		if (step.notice) savings.showNotice(ctx, step.notice);
	});

	/** Large well-formed text results on the current branch, for rebuilding an object that is missing (a fork, a resume) or damaged. */
	function branchCandidates(ctx: ExtensionContext): NativeAddon.ObsCandidate[] {
		const candidates: NativeAddon.ObsCandidate[] = [];
		for (const entry of ctx.sessionManager.getBranch() as Array<{ type: string; message?: Message }>) {
			const message = entry.type === "message" ? entry.message : undefined;
			if (!message || message.role !== "toolResult" || message.isError) continue;
			const text = textOnly(message.content);
			if (!text || text.length * 3 <= policy.thresholdBytes || !wellFormed(text.blocks)) continue;
			candidates.push({ toolCallId: message.toolCallId ?? "", toolName: message.toolName ?? "unknown", text: joined(text.blocks) });
		}
		return candidates;
	}

	pi.registerTool({
		name: "obs_recall",
		label: texts.toolLabel,
		description: texts.toolDescription,
		promptSnippet: texts.promptSnippet,
		parameters: Type.Object({
			id: Type.String({ description: texts.idDescription }),
			offset: Type.Optional(Type.Integer({ minimum: 0, description: texts.offsetDescription })),
			query: Type.Optional(Type.String({ description: texts.queryDescription })),
		}),
		async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
			const dir = storageDir(ctx);
			if (!dir) throw new Error(addon.obsUnavailable("no storage directory for this session"));
			const recall = (history?: NativeAddon.ObsCandidate[]) =>
				addon.obsRecall({ dir, id: params.id, offset: params.offset ?? 0, query: params.query, timestamp: new Date().toISOString(), history });
			let outcome = recall();
			// Nothing or something damaged is stored under the id: Rust rebuilds it from this branch if it can.
			if (outcome.kind === "needsHistory") outcome = recall(branchCandidates(ctx));
			if (outcome.kind === "page") return { content: [{ type: "text", text: outcome.text }], details: outcome.details };
			throw new Error(outcome.kind === "refused" ? outcome.error : `Unknown observation id: ${params.id}`);
		},
		renderCall(args, theme) {
			return badge(theme, texts.badgeTitle, texts.badgeSaving, addon.obsRecallCallLabel(String(args?.id ?? ""), Number(args?.offset ?? 0)));
		},
		renderResult(result, options, theme) {
			const details = result.details as { bytes?: number; lines?: number } | undefined;
			const label = options.isPartial ? texts.recallPartial : addon.obsRecallResultLabel(details?.bytes ?? 0, details?.lines ?? 0);
			return new Text(theme.fg("muted", label), 0, 0);
		},
	});
}

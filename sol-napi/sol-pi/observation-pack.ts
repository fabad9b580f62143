// ObservationPack in Pi: its `context` step (the session's `context` handler calls it first)
// and the `obs_recall` tool. The step edits Pi's copy of the messages in place.
// It looks only at the text results of the request's frame (request-frame.ts, the one walk every
// mechanism shares). Each such result crosses into Rust once (`Engine.obsAdmit` decides), and is
// remembered by content, never by tool-call id: a bucket per joined length, a hit needs the same
// tool, error flag and `===` texts. Every request sends the frame and the index and handle of each
// packed result to Rust's step, which counts where each sits (the requests that already carried
// it, the tokens and tool outputs after it) and says which to replace. Under the recent-outputs
// placement (`keepRecentOutputs`) the step also gets the newest reply (Rust takes each reply once:
// the lines it quotes and the usage its provider reported). A text that is not well-formed UTF-16
// would reach Rust as U+FFFD: it never goes there, so the model always gets it exactly.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import { Type } from "typebox";

import type { NativeAddon } from "./native.ts";
import { frameOf, resized, roleCode } from "./request-frame.ts";
import type { SavingsTracker } from "./savings.ts";
import { runtimeRoot } from "./storage.ts";
import { badge, now, OnceWarnings, usageOf } from "./tui.ts";

type Candidate = NativeAddon.ObsCandidate;
type Message = { role: string; toolCallId?: string; toolName?: string; isError?: boolean; content?: unknown; timestamp?: unknown; stopReason?: unknown; usage?: Record<string, unknown> };
type Block = { type: string; text: string };
/** What Rust made of exactly this candidate: packed under a handle, or kept in full. */
type Known = { candidate: Candidate; packed?: { handle: number; placeholder: string } };

// String.prototype.isWellFormed is ES2024 (Node 20+); the extension's TypeScript lib is ES2022.
const wellFormed = (blocks: Block[]) => blocks.every((block) => (block.text as string & { isWellFormed(): boolean }).isWellFormed());

/** A tool result whose every block is text, with its joined length; at least `minUnits` long. */
function textResult(message: Message | undefined, minUnits: number): { blocks: Block[]; units: number } | undefined {
	const content = message?.content;
	if (message?.role !== "toolResult" || !Array.isArray(content) || content.length === 0) return undefined;
	let units = content.length - 1;
	for (const block of content) {
		if (block?.type !== "text" || typeof block.text !== "string") return undefined;
		units += block.text.length;
	}
	return units < minUnits ? undefined : { blocks: content as Block[], units };
}

/** Rust's candidate for a text result. */
const candidateOf = (message: Message, blocks: Block[]): Candidate => ({
	toolCallId: message.toolCallId,
	toolName: message.toolName,
	isError: message.isError === true,
	texts: blocks.map((block) => block.text),
});

/** The entry for exactly this result (tool, error flag, texts) in its length's bucket, if any. */
function lookup(bucket: Known[] | undefined, message: Message, blocks: Block[]): Known | undefined {
	if (!bucket) return undefined;
	const isError = message.isError === true;
	next: for (const known of bucket) {
		const k = known.candidate;
		if (k.toolName !== message.toolName || k.isError !== isError || k.texts.length !== blocks.length) continue;
		// Same-length flat strings: V8 compares them with memcmp, stopping at the first difference.
		for (let i = 0; i < blocks.length; i++) if (k.texts[i] !== blocks[i].text) continue next;
		return known;
	}
	return undefined;
}

/** A mechanism's part of the `context` event: the request's messages, edited in place. */
export type ContextStep = (messages: unknown[], ctx: ExtensionContext) => void;

/**
 * Registers ObservationPack's tool and returns its `context` step, which the session's one
 * `context` handler calls first; both run over `engine`, made with ObservationPack's placement
 * (which says how short a result it skips, and whether it reads the replies).
 */
export function registerObservationPack(pi: ExtensionAPI, addon: typeof NativeAddon, engine: NativeAddon.Engine, tracker: SavingsTracker): ContextStep {
	// Fixed for the session, read once.
	const [minCandidateUnits, replies, sized] = [engine.obsMinCandidateUnits, engine.obsReadsReplies, engine.obsPlacesBySize];
	const texts = addon.obsTexts();
	const [toolResultCode, assistantCode] = [roleCode("toolResult"), roleCode("assistant")];
	// What Rust made of each result, per runtime root (Rust keeps a pack per root).
	const packs = new Map<string, Map<number, Known[]>>();
	const savings = tracker.status();
	// ObservationPack fails open: the request goes unchanged, the problem is reported once.
	const warnings = new OnceWarnings();
	const failure = (detail: string) => addon.internalErrorNotice("ObservationPack", detail);
	/** The step of one request: its messages are edited in place (returning nothing keeps Pi 0.87+'s system messages in place). */
	const context = (messages: Message[], ctx: ExtensionContext): void =>
		warnings.guard(ctx, failure, undefined, () => {
			const root = runtimeRoot(ctx, addon);
			if (root.kind === "unavailable") return warnings.warn(ctx, addon.obsUnavailable(root.error));
			const created = !packs.has(root.root);
			const known = packs.get(root.root) ?? packs.set(root.root, new Map()).get(root.root)!;
			// Remembers what Rust made of a result unless it is known (it can occur twice in one request).
			const remember = (units: number, message: Message, blocks: Block[], packed?: Known["packed"]): Known => {
				const found = lookup(known.get(units), message, blocks);
				if (found) return found;
				const entry = { candidate: candidateOf(message, blocks), packed };
				return known.set(units, [...(known.get(units) ?? []), entry]) && entry;
			};

			// One walk sizes the request for every mechanism; this one only looks at its text results.
			const frame = frameOf(messages);
			const seen: Array<[number, Known]> = [];
			const fresh: Array<[number, Block[], number]> = [];
			for (let i = 0; i < messages.length; i++) {
				const result = frame.roles[i] === toolResultCode ? textResult(messages[i], minCandidateUnits) : undefined;
				if (!result) continue;
				const found = lookup(known.get(result.units), messages[i], result.blocks);
				if (found?.packed) seen.push([i, found]);
				else if (!found && wellFormed(result.blocks)) fresh.push([i, result.blocks, result.units]);
				else if (!found) remember(result.units, messages[i], result.blocks);
			}
			if (fresh.length > 0) {
				engine.obsAdmit(root.root, fresh.map(([i, blocks]) => candidateOf(messages[i], blocks)), now()).forEach((admission, index) => {
					const [i, blocks, units] = fresh[index];
					// A failed archive keeps this message in full and is retried on the next request.
					if (admission.kind === "failed") return warnings.warn(ctx, admission.error);
					const entry = remember(units, messages[i], blocks, admission.kind === "packed" ? admission : undefined);
					if (entry.packed) seen.push([i, entry]);
				});
				seen.sort((a, b) => a[0] - b[0]);
			}
			// Rust counts where each sits; under the recent-outputs placement it also reads the newest reply.
			const newest = replies ? messages[frame.roles.lastIndexOf(assistantCode)] : undefined;
			const reply = newest && { content: newest.content, stopReason: typeof newest.stopReason === "string" ? newest.stopReason : undefined, usage: usageOf(newest) };
			// For a pack made after a resume or a fork, every earlier reply's quotes too.
			const earlierReplies = replies && created ? messages.filter((message) => message.role === "assistant" && message !== newest).map((message) => message.content) : undefined;
			const facts = sized ? { cacheRetention: process.env.PI_CACHE_RETENTION, promptCache: (ctx.model as { promptCache?: unknown } | undefined)?.promptCache, reply, earlierReplies } : undefined;
			const step = engine.obsContext(root.root, frame, Uint32Array.from(seen, ([i]) => i), Uint32Array.from(seen, ([, entry]) => entry.packed!.handle), now(), facts);
			seen.forEach(([i, entry], index) => {
				if (step.replace[index] !== 1) return;
				tracker.replacing(messages[i], frame.tokens[i]);
				messages[i].content = [{ type: "text", text: entry.packed!.placeholder }];
				resized(frame, i, messages[i]);
			});
			if (step.error) warnings.warn(ctx, step.error);
			savings.showNotice(ctx, step.notice);
		});

	/** The current branch's candidates, for rebuilding an object that is missing (a fork, a resume) or damaged. */
	const branchCandidates = (ctx: ExtensionContext): Candidate[] =>
		(ctx.sessionManager.getBranch() as Array<{ type: string; message?: Message }>).flatMap((entry) => {
			const result = entry.type === "message" ? textResult(entry.message, minCandidateUnits) : undefined;
			return result && wellFormed(result.blocks) ? [candidateOf(entry.message!, result.blocks)] : [];
		});

	tracker.ownTool(texts.toolName, "observationPack", texts.promptSnippet);
	pi.registerTool({
		name: texts.toolName,
		label: texts.toolLabel,
		description: texts.toolDescription,
		promptSnippet: texts.promptSnippet,
		parameters: Type.Object({
			id: Type.String({ description: texts.idDescription }),
			// A number, not an integer: Pi would round 1.5 to 1 before the call; Rust refuses it instead.
			offset: Type.Optional(Type.Number({ minimum: 0, description: texts.offsetDescription })),
			query: Type.Optional(Type.String({ description: texts.queryDescription })),
		}),
		async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
			const root = runtimeRoot(ctx, addon);
			if (root.kind === "unavailable") throw new Error(addon.obsUnavailable(root.error));
			const recall = (history?: Candidate[]) => addon.obsRecall({ root: root.root, ...params, timestamp: now(), history });
			let outcome = recall();
			// Nothing or something damaged is stored under the id: Rust rebuilds it from this branch if it can.
			if (outcome.kind === "needsHistory") outcome = recall(branchCandidates(ctx));
			if (outcome.kind !== "page") throw new Error(outcome.error);
			tracker.recalled(outcome.bytes);
			return { content: [{ type: "text", text: outcome.text }], details: outcome.details };
		},
		renderCall: (args, theme) => badge(theme, texts.badgeTitle, texts.badgeSaving, addon.obsRecallCallLabel(args)),
		renderResult: (result, options, theme) => new Text(theme.fg("muted", addon.obsRecallResultLabel(options.isPartial, result.details)), 0, 0),
	});
	return context as ContextStep;
}

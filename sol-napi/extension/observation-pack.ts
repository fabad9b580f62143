// ObservationPack in Pi: the `context` handler and the `obs_recall` tool. The handler walks
// Pi's copy of the messages and edits it in place (returning nothing keeps Pi 0.87+'s system
// messages in place). Each text result crosses into Rust once (`ObsPack.admit` decides), and is
// remembered by content, never by tool-call id: a bucket per joined length, a hit needs the same
// tool, error flag and `===` texts. Every request sends the handles and how many requests
// already carried each (the assistant messages after it on this branch) to Rust's step, which
// says which to replace. A text that is not well-formed UTF-16 would reach Rust as U+FFFD: it
// never goes there, so the model always gets it exactly.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import { Type } from "typebox";

import type { NativeAddon } from "./native.ts";
import { runtimeRoot } from "./storage.ts";
import { badge, now, OnceWarnings, SavingsStatus } from "./tui.ts";

type Candidate = NativeAddon.ObsCandidate;
type Message = { role: string; toolCallId?: string; toolName?: string; isError?: boolean; content?: unknown };
/** What Rust made of exactly this candidate: packed under a handle, or kept in full. */
type Known = { candidate: Candidate; packed?: { handle: number; placeholder: string } };

// String.prototype.isWellFormed is ES2024 (Node 20+); the extension's TypeScript lib is ES2022.
const wellFormed = (texts: string[]) => texts.every((text) => (text as string & { isWellFormed(): boolean }).isWellFormed());

/** A tool result whose every block is text, as Rust's candidate, with its joined length; at least `minUnits` long. */
function candidateOf(message: Message | undefined, minUnits: number): [Candidate, number] | undefined {
	const content = message?.content;
	if (message?.role !== "toolResult" || !Array.isArray(content) || content.length === 0) return undefined;
	let units = content.length - 1;
	for (const block of content) {
		if (block?.type !== "text" || typeof block.text !== "string") return undefined;
		units += block.text.length;
	}
	if (units < minUnits) return undefined;
	const texts = content.map((block: { text: string }) => block.text);
	return [{ toolCallId: message.toolCallId, toolName: message.toolName, isError: message.isError === true, texts }, units];
}

/** The entry for exactly this candidate in its length's bucket, if any. */
function lookup(bucket: Known[] | undefined, c: Candidate): Known | undefined {
	// Same-length flat strings: V8 compares them with memcmp, stopping at the first difference.
	const same = (k: Candidate) => k.toolName === c.toolName && k.isError === c.isError && k.texts.length === c.texts.length && k.texts.every((t, i) => t === c.texts[i]);
	return bucket?.find(({ candidate }) => same(candidate));
}

export function registerObservationPack(pi: ExtensionAPI, addon: typeof NativeAddon): void {
	const { minCandidateUnits } = addon.obsPolicy();
	const texts = addon.obsTexts();
	const packs = new Map<string, { pack: NativeAddon.ObsPack; known: Map<number, Known[]> }>();
	const savings = new SavingsStatus();
	// ObservationPack fails open: the request goes unchanged, the problem is reported once.
	const warnings = new OnceWarnings();
	const failure = (detail: string) => addon.internalErrorNotice("ObservationPack", detail);

	pi.on("context", (event, ctx) =>
		warnings.guard(ctx, failure, undefined, () => {
			const root = runtimeRoot(ctx, addon);
			if (root.kind === "unavailable") return warnings.warn(ctx, addon.obsUnavailable(root.error));
			const { pack, known } = packs.get(root.root) ?? packs.set(root.root, { pack: new addon.ObsPack(root.root), known: new Map() }).get(root.root)!;
			// Remembers what Rust made of a candidate unless it is known (it can occur twice in one request).
			const remember = (units: number, candidate: Candidate, packed?: Known["packed"]): Known => {
				const found = lookup(known.get(units), candidate);
				if (found) return found;
				const entry = { candidate, packed };
				return known.set(units, [...(known.get(units) ?? []), entry]) && entry;
			};

			// Packed results in this request, each with the requests that already carried it.
			const seen: Array<[Message, Known, number]> = [];
			const fresh: Array<[Message, Candidate, number, number]> = [];
			const messages = event.messages as unknown as Message[];
			let assistants = 0;
			for (let i = messages.length - 1; i >= 0; i--) {
				if (messages[i].role === "assistant") assistants++;
				const [candidate, units] = candidateOf(messages[i], minCandidateUnits) ?? [];
				if (!candidate || units === undefined) continue;
				const found = lookup(known.get(units), candidate);
				if (found?.packed) seen.push([messages[i], found, assistants]);
				else if (!found && wellFormed(candidate.texts)) fresh.push([messages[i], candidate, units, assistants]);
				else if (!found) remember(units, candidate);
			}
			pack.admit(fresh.map(([, candidate]) => candidate), now()).forEach((admission, index) => {
				const [message, candidate, units, after] = fresh[index];
				// A failed archive keeps this message in full and is retried on the next request.
				if (admission.kind === "failed") return warnings.warn(ctx, admission.error);
				const entry = remember(units, candidate, admission.kind === "packed" ? admission : undefined);
				if (entry.packed) seen.push([message, entry, after]);
			});
			// The walk ended at the first message: it counted every assistant message.
			const handles = Uint32Array.from(seen, ([, entry]) => entry.packed!.handle);
			const step = pack.onContext(assistants + 1, handles, Uint32Array.from(seen, ([, , after]) => after), now());
			seen.forEach(([message, entry], index) => {
				if (step.replace[index] === 1) message.content = [{ type: "text", text: entry.packed!.placeholder }];
			});
			if (step.error) warnings.warn(ctx, step.error);
			savings.showNotice(ctx, step.notice);
		}),
	);

	/** The current branch's candidates, for rebuilding an object that is missing (a fork, a resume) or damaged. */
	const branchCandidates = (ctx: ExtensionContext): Candidate[] =>
		(ctx.sessionManager.getBranch() as Array<{ type: string; message?: Message }>).flatMap((entry) => {
			const [candidate] = candidateOf(entry.type === "message" ? entry.message : undefined, minCandidateUnits) ?? [];
			return candidate && wellFormed(candidate.texts) ? [candidate] : [];
		});

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
			const root = runtimeRoot(ctx, addon);
			if (root.kind === "unavailable") throw new Error(addon.obsUnavailable(root.error));
			const recall = (history?: Candidate[]) => addon.obsRecall({ root: root.root, ...params, timestamp: now(), history });
			let outcome = recall();
			// Nothing or something damaged is stored under the id: Rust rebuilds it from this branch if it can.
			if (outcome.kind === "needsHistory") outcome = recall(branchCandidates(ctx));
			if (outcome.kind !== "page") throw new Error(outcome.error);
			return { content: [{ type: "text", text: outcome.text }], details: outcome.details };
		},
		renderCall: (args, theme) => badge(theme, texts.badgeTitle, texts.badgeSaving, addon.obsRecallCallLabel(args)),
		renderResult: (result, options, theme) => new Text(theme.fg("muted", addon.obsRecallResultLabel(options.isPartial, result.details)), 0, 0),
	});
}

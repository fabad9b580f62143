// The size of each message the model sees, measured in JavaScript so that Pi's messages never
// cross into Rust on a provider request: Online Context Compact's total and its list at a
// boundary, ObservationPack's tokens after a result, the savings book's parts.
//
// The size is Pi's own estimate, from Pi's own `estimateTokens`: the figure Pi's compaction
// cuts by, so the cut Online Context Compact predicts is Pi's on every Pi version, and no
// estimate is written here. Rust has the same rule for what runs without Pi (replay, and the
// messages that do cross: `sol_core::message::AgentMessage::estimated_tokens`), and the tests
// hold the two equal on every message Pi writes (`online-context-compact-sizes.test.mjs`). A
// message Pi cannot size (its estimate throws or is not a number: a malformed message some
// other extension added, which Pi's own compaction could not size either) is sized by Rust's
// rule instead (`messageTokens` of the addon: it crosses alone, and only such a message does;
// one Rust cannot read either counts 0).
// The one difference left: a lone surrogate in a tool call's arguments or tool declarations,
// which Pi counts as `JSON.stringify` escapes it (6 units) and Rust, which receives U+FFFD in
// its place, as 1.
//
// The identity of a message (role and timestamp) is formatted by Rust, from the raw fields
// handed over with a boundary measurement; a message without a timestamp crosses whole then,
// and Rust digests its content.
import { estimateTokens } from "@earendil-works/pi-coding-agent";

/** The sized messages of one observation, in context order. */
export interface ObservedSizes {
	roles: string[];
	tokens: number[];
	timestamps: Array<number | string | undefined>;
	/**
	 * The messages without such a timestamp (their identity comes from their content), at
	 * their index; undefined when every message has one (the usual case: nothing is allocated).
	 */
	unstamped: Array<unknown> | undefined;
	total: number;
}

/** One sized message as it crosses with a boundary measurement. */
export interface ObservedMessage {
	role: string;
	tokens: number;
	timestamp?: number | string;
	message?: unknown;
}

/** Rust's estimate of a message, for one Pi cannot size; set once the addon is loaded. */
let rustTokens: ((message: unknown) => number) | undefined;

/** Sizes the messages Pi's estimate cannot size with `estimate` (the addon's `messageTokens`). */
export function sizeMalformedWith(estimate: (message: unknown) => number): void {
	rustTokens = estimate;
}

/** Pi's estimate of one message (`estimateTokens`), or Rust's when Pi cannot size it. */
export function messageTokens(message: unknown): number {
	if (message === null || typeof message !== "object") return 0;
	let tokens = Number.NaN;
	try {
		tokens = estimateTokens(message as Parameters<typeof estimateTokens>[0]);
	} catch {
		// a malformed message: Rust sizes it below
	}
	if (Number.isFinite(tokens)) return tokens;
	try {
		return rustTokens?.(message) ?? 0;
	} catch {
		// Rust could not read it either (a property that throws when read): nothing can size it.
		return 0;
	}
}

/** Pi's estimate of one tool call block: what its message loses without it (its name and arguments). */
export function toolCallTokens(call: unknown): number {
	return messageTokens({ role: "assistant", content: [call] });
}

/**
 * The latest observation, with the array it measured: the savings book reuses its sizes. The
 * array is held weakly: Pi's copy of a request's messages must not outlive the request here.
 */
let latest: { messages: WeakRef<readonly unknown[]>; sizes: ObservedSizes } | undefined;

/**
 * Pi's estimate of each of `messages` after the first `offset`, from the latest observation, if
 * it measured exactly those message objects (the same request, seen again by a later handler);
 * undefined otherwise.
 */
export function observedTokensOf(messages: readonly unknown[], offset: number): readonly number[] | undefined {
	const seen = latest?.messages.deref();
	if (!seen || seen.length !== messages.length - offset) return undefined;
	for (let i = 0; i < seen.length; i++) if (seen[i] !== messages[i + offset]) return undefined;
	return latest?.sizes.tokens;
}

/** Sizes every message of an observation. */
export function observeSizes(messages: readonly unknown[]): ObservedSizes {
	const count = messages.length;
	const roles = new Array<string>(count);
	const tokens = new Array<number>(count);
	const timestamps = new Array<number | string | undefined>(count);
	let unstamped: Array<unknown> | undefined;
	let total = 0;
	for (let i = 0; i < count; i++) {
		const message = messages[i];
		const fields = message !== null && typeof message === "object" ? (message as { role?: unknown; timestamp?: unknown }) : {};
		const size = messageTokens(message);
		roles[i] = typeof fields.role === "string" ? fields.role : "";
		tokens[i] = size;
		const timestamp = fields.timestamp;
		const stamped = (typeof timestamp === "number" && Number.isFinite(timestamp)) || typeof timestamp === "string";
		timestamps[i] = stamped ? timestamp : undefined;
		if (!stamped) (unstamped ??= new Array<unknown>(count))[i] = message;
		total += size;
	}
	const sizes = { roles, tokens, timestamps, unstamped, total };
	latest = { messages: new WeakRef(messages), sizes };
	return sizes;
}

/** The sized messages as they cross with a boundary measurement. */
export function observedMessages(sizes: ObservedSizes): ObservedMessage[] {
	return sizes.roles.map((role, i) => {
		const timestamp = sizes.timestamps[i];
		return timestamp === undefined ? { role, tokens: sizes.tokens[i], message: sizes.unstamped?.[i] } : { role, tokens: sizes.tokens[i], timestamp };
	});
}

// The request frame: one walk over the messages of a provider request, taken once and shared
// by every mechanism that reads the request (ObservationPack's step, Online Context Compact's
// observation, the savings book's record), so that Pi's messages never cross into Rust on a
// request. Per message: its role (an index into the addon's `messageRoles()`), its size, and its
// timestamp, as typed arrays Rust reads as they are.
//
// The size is Pi's own estimate, from Pi's own `estimateTokens`: the figure Pi's compaction
// cuts by, so the cut Online Context Compact predicts is Pi's on every Pi version, and no
// estimate is written here. Rust has the same rule for what runs without Pi (replay, and the
// messages that do cross: `sol_core::message::AgentMessage::estimated_tokens`), and the tests
// hold the two equal on every message Pi writes (`request-frame.test.mjs`). A message Pi cannot
// size (its estimate throws or is not a number: a malformed message some other extension added,
// which Pi's own compaction could not size either) is sized by Rust's rule instead (the addon's
// `messageTokens`: it crosses alone, and only such a message does; one Rust cannot read either
// counts 0). The one difference left: a lone surrogate in a tool call's arguments or tool
// declarations, which Pi counts as `JSON.stringify` escapes it (6 units) and Rust, which
// receives U+FFFD in its place, as 1.
//
// A message without a numeric timestamp is kept with the frame: its identity comes from its
// string timestamp or, without one, from its content, which Rust digests when it needs it.
import { estimateTokens } from "@earendil-works/pi-coding-agent";

/** One request's messages, in order, as the mechanisms read them. */
export interface RequestFrame {
	/** Each message's role, an index into the addon's `messageRoles()` (0: a role not in it). */
	roles: Uint8Array;
	/** Pi's estimate of each message's tokens, as it is now (after ObservationPack's replacements). */
	tokens: Float64Array;
	/** Each message's numeric timestamp, NaN without one. */
	stamps: Float64Array;
	/** The messages without a numeric timestamp, at their index; undefined when every message has one (the usual case). */
	unstamped: unknown[] | undefined;
	/** The role of each message whose role is not in the list, at its index (rare). */
	otherRoles: string[] | undefined;
	total: number;
}

/** One sized message as it crosses with a boundary measurement. */
export interface ObservedMessage {
	role: string;
	tokens: number;
	timestamp?: number | string;
	message?: unknown;
}

type Addon = { messageTokens(message: unknown): number; messageRoles(): string[] };

/** Rust's estimate of a message, for one Pi cannot size; set once the addon is loaded. */
let rustTokens: ((message: unknown) => number) | undefined;
let roleNames: readonly string[] = [""];
let roleCodes = new Map<string, number>();

/** Takes the role list and the estimate of malformed messages from the addon; call once it is loaded. */
export function frameWith(addon: Addon): void {
	rustTokens = addon.messageTokens;
	roleNames = addon.messageRoles();
	roleCodes = new Map(roleNames.map((role, index) => [role, index]));
}

/** A role's index in the addon's list, 0 when it has none. */
export const roleCode = (role: unknown): number => (typeof role === "string" && roleCodes.get(role)) || 0;

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

/** The latest frame, with the array it walked, held weakly: Pi's copy of a request must not outlive the request here. */
let latest: { messages: WeakRef<readonly unknown[]>; frame: RequestFrame } | undefined;

/**
 * The latest frame, if it walked exactly the message objects of `messages` after the first
 * `offset` (the same request, seen again by a later handler); undefined otherwise.
 */
export function frameAt(messages: readonly unknown[], offset: number): RequestFrame | undefined {
	const seen = latest?.messages.deref();
	if (!seen || seen.length !== messages.length - offset) return undefined;
	for (let i = 0; i < seen.length; i++) if (seen[i] !== messages[i + offset]) return undefined;
	return latest?.frame;
}

/** The frame of `messages`: the one already taken of these very messages, else one walk. */
export function frameOf(messages: readonly unknown[]): RequestFrame {
	const known = frameAt(messages, 0);
	if (known) return known;
	const count = messages.length;
	const frame: RequestFrame = { roles: new Uint8Array(count), tokens: new Float64Array(count), stamps: new Float64Array(count), unstamped: undefined, otherRoles: undefined, total: 0 };
	for (let i = 0; i < count; i++) {
		const message = messages[i];
		const fields = message !== null && typeof message === "object" ? (message as { role?: unknown; timestamp?: unknown }) : {};
		const code = roleCode(fields.role);
		frame.roles[i] = code;
		if (code === 0 && typeof fields.role === "string" && fields.role !== "") (frame.otherRoles ??= [])[i] = fields.role;
		const size = messageTokens(message);
		frame.tokens[i] = size;
		frame.total += size;
		const stamp = fields.timestamp;
		const stamped = typeof stamp === "number" && Number.isFinite(stamp);
		frame.stamps[i] = stamped ? stamp : Number.NaN;
		if (!stamped) (frame.unstamped ??= [])[i] = message;
	}
	latest = { messages: new WeakRef(messages), frame };
	return frame;
}

/** The message at `index` changed (ObservationPack replaced its content): the frame sizes it again. */
export function resized(frame: RequestFrame, index: number, message: unknown): void {
	const tokens = messageTokens(message);
	frame.total += tokens - frame.tokens[index];
	frame.tokens[index] = tokens;
}

/** The role of the frame's message at `index`. */
export const roleAt = (frame: RequestFrame, index: number): string => frame.otherRoles?.[index] ?? roleNames[frame.roles[index]] ?? "";

/** A message's string timestamp, if it has one. */
export const textStamp = (message: unknown): string | undefined => {
	const stamp = (message as { timestamp?: unknown } | null | undefined)?.timestamp;
	return typeof stamp === "string" ? stamp : undefined;
};

/** The frame's messages as they cross with a boundary measurement. */
export function observedMessages(frame: RequestFrame): ObservedMessage[] {
	return Array.from(frame.roles, (_code, i) => {
		const [role, tokens] = [roleAt(frame, i), frame.tokens[i]];
		if (!Number.isNaN(frame.stamps[i])) return { role, tokens, timestamp: frame.stamps[i] };
		const message = frame.unstamped?.[i];
		const text = textStamp(message);
		return text === undefined ? { role, tokens, message } : { role, tokens, timestamp: text };
	});
}

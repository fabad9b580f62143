// Online Context Compact: the size of each message the model sees, measured in
// JavaScript so that Pi's messages never cross into Rust on a provider request.
//
// This is Pi's estimate, which `sol_core::message` computes from a whole message
// (`AgentMessage::estimated_tokens`): `ceil(chars / 4)`, where `chars` counts
// UTF-16 units of the text, thinking and tool-call parts, 4,800 per image, and
// a tool call's arguments count as `JSON.stringify` writes them
// (`sol_core::message::js_json_length` in Rust). Only lengths are read; no
// string is built. The identity of a message (role and timestamp) is formatted
// by Rust, from the raw fields handed over with a boundary measurement; a
// message without a timestamp crosses whole then, and Rust digests its content.
//
// No imports: the size check test loads this file on its own.

/** Characters Pi counts for one image block. */
const IMAGE_CHARS = 4800;

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

const stringUnits = (value: unknown): number => (typeof value === "string" ? value.length : 0);

const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;
const SURROGATE = /[\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The fields of an object as the addon converts it: a key with a lone surrogate
 * arrives in Rust repaired (U+FFFD), finds no property under that name and is dropped.
 */
function isConvertedKey(key: string): boolean {
	return !SURROGATE.test(key) || !LONE_SURROGATE.test(key);
}

/** UTF-16 units of a JSON string literal: quotes plus escapes. */
function jsonStringUnits(text: string): number {
	let units = text.length + 2;
	if (!NEEDS_ESCAPE.test(text)) return units;
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		if (code === 0x22 || code === 0x5c || code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) units += 1;
		else if (code < 0x20) units += 5;
	}
	return units;
}

/**
 * UTF-16 units of `JSON.stringify(value)` for a value as the addon converts it: a lone surrogate
 * counts as the one unit of the U+FFFD Rust receives, and an object key holding one is dropped.
 */
export function jsonUnits(value: unknown): number {
	switch (typeof value) {
		case "string":
			return jsonStringUnits(value);
		case "number":
			// As JavaScript writes it (`-0` as `0`); not finite: `null`.
			return Number.isFinite(value) ? String(value).length : 4;
		case "boolean":
			return value ? 4 : 5;
		case "bigint":
			return String(value).length;
		case "object": {
			if (value === null) return 4;
			if (Array.isArray(value)) {
				let units = 2 + Math.max(0, value.length - 1);
				for (const item of value) units += jsonUnits(item);
				return units;
			}
			let units = 2;
			let fields = 0;
			const record = value as Record<string, unknown>;
			for (const key in record) {
				if (!Object.hasOwn(record, key) || !isConvertedKey(key)) continue;
				const field = record[key];
				if (field === undefined || typeof field === "function" || typeof field === "symbol") continue;
				units += jsonStringUnits(key) + 1 + jsonUnits(field);
				fields++;
			}
			return units + Math.max(0, fields - 1);
		}
		default:
			return 4;
	}
}

function contentChars(content: unknown): number {
	if (typeof content === "string") return content.length;
	if (!Array.isArray(content)) return 0;
	let chars = 0;
	for (const block of content) {
		if (block === null || typeof block !== "object") continue;
		const type = (block as { type?: unknown }).type;
		if (type === "text") chars += stringUnits((block as { text?: unknown }).text);
		else if (type === "image") chars += IMAGE_CHARS;
	}
	return chars;
}

function assistantChars(content: unknown): number {
	if (!Array.isArray(content)) return 0;
	let chars = 0;
	for (const block of content) {
		if (block === null || typeof block !== "object") continue;
		const part = block as { type?: unknown; text?: unknown; thinking?: unknown; name?: unknown; arguments?: unknown };
		if (part.type === "text") chars += stringUnits(part.text);
		else if (part.type === "thinking") chars += stringUnits(part.thinking);
		else if (part.type === "toolCall") chars += stringUnits(part.name) + jsonUnits(part.arguments ?? null);
	}
	return chars;
}

function systemChars(message: { content?: unknown; sections?: unknown; toolsAdded?: unknown }): number {
	let chars = contentChars(message.content);
	const sections = message.sections;
	if (sections !== null && typeof sections === "object" && !Array.isArray(sections)) {
		const record = sections as Record<string, unknown>;
		for (const key in record) if (Object.hasOwn(record, key) && isConvertedKey(key)) chars += stringUnits(record[key]);
	}
	if (message.toolsAdded !== undefined && message.toolsAdded !== null) chars += jsonUnits(message.toolsAdded);
	return chars;
}

/** Characters Pi counts for one message; 0 for unknown roles. */
function messageChars(message: unknown): number {
	if (message === null || typeof message !== "object") return 0;
	const m = message as Record<string, unknown>;
	switch (m.role) {
		case "user":
		case "custom":
		case "toolResult":
			return contentChars(m.content);
		case "assistant":
			return assistantChars(m.content);
		case "system":
			return systemChars(m);
		case "bashExecution":
			return stringUnits(m.command) + stringUnits(m.output);
		case "branchSummary":
		case "compactionSummary":
			return stringUnits(m.summary);
		default:
			return 0;
	}
}

/** Pi's estimate of one message, `ceil(chars / 4)`. */
export function messageTokens(message: unknown): number {
	return Math.ceil(messageChars(message) / 4);
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

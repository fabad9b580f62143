// Online Context Compact hot path: the `context` and `before_provider_request`
// handlers per provider request. Prints figures and ratios, asserts nothing.
//
// Synthetic conversations in Pi's message shapes (a user message every 10th
// message, then assistant tool calls alternating with tool results; about 10 % of
// texts non-ASCII) at 100, 1,000 and 5,000 messages. Per request, on a fresh
// structuredClone of the messages as Pi passes them (the copy is not timed):
//   walk      a bare loop reading the text length of every message part
//   context   the real `context` handler (sizes every message in JavaScript,
//             hands Rust the total)
//   crossing  what the handler did before: the whole array converted into Rust
//             and sized there (`occSizeMessages`, the same conversion and sizing; a
//             test-only export, from a release build with the `test-hooks` feature that
//             the script makes with cargo)
//   request   the real `before_provider_request` handler after a `context`
// Median of the timed iterations. With --expose-gc a collection runs before each timed
// call, so that a collection of the previous copy does not land in a short call.
//   npm run build && node --expose-gc scripts/bench-occ-hot-path.mjs [iterations]
import { createRequire } from "node:module";

import { frameWith } from "../sol-napi/sol-pi/request-frame.ts";
import { SavingsTracker } from "../sol-napi/sol-pi/savings.ts";
import { registerSession } from "../sol-napi/sol-pi/session.ts";
import { testHooks } from "../sol-napi/test/hooks.mjs";

const addon = createRequire(import.meta.url)("../sol-napi/index.js");
frameWith(addon);
const hooks = testHooks({ release: true });
const iterations = Number(process.argv[2] ?? 15);

function rng(seed) {
	let x = seed;
	return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
}

function conversation(count, seed) {
	const random = rng(seed);
	const messages = [];
	for (let i = 0; messages.length < count; i++) {
		const timestamp = 1733000000000 + i;
		if (i % 10 === 0) {
			messages.push({ role: "user", content: [{ type: "text", text: `task step ${i}` }], timestamp });
			continue;
		}
		const id = `call_${seed}_${i}`;
		messages.push({ role: "assistant", content: [{ type: "toolCall", id, name: "bash", arguments: { command: `cmd ${i}`, timeout: 120 } }], stopReason: "toolUse", timestamp });
		const large = random() < 0.18;
		const size = large ? 10_500 + Math.floor(random() * 60_000) : 200 + Math.floor(random() * 4_000);
		const unit = random() < 0.1 ? "résumé ✓ données " : "line of build output ok ";
		let text = "";
		while (text.length < size) text += `${unit}${text.length}\n`;
		messages.push({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp });
	}
	return messages.slice(0, count);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function time(fn) {
	globalThis.gc?.();
	const start = process.hrtime.bigint();
	fn();
	return Number(process.hrtime.bigint() - start) / 1e6;
}

function walk(messages) {
	let length = 0;
	for (const m of messages) {
		if (typeof m.content === "string") length += m.content.length;
		else if (Array.isArray(m.content)) for (const block of m.content) length += typeof block.text === "string" ? block.text.length : 0;
	}
	return length;
}

/** The extension registered against a minimal Pi: its handlers by event name. */
function register() {
	const handlers = new Map();
	const pi = {
		on: (event, handler) => handlers.set(event, handler),
		registerTool: () => {},
		appendEntry: () => {},
		sendMessage: () => {},
		events: { emit: () => {} },
	};
	const ctx = {
		mode: "print",
		sessionManager: { getBranch: () => [], buildSessionContext: () => ({ messages: [] }) },
		getContextUsage: () => ({ tokens: null, contextWindow: 200000 }),
		getSystemPrompt: () => "You are a coding agent. ".repeat(400),
		signal: undefined,
		ui: { notify: () => {}, setStatus: () => {} },
	};
	// The session engine with Online Context Compact only, and the session's handlers over it.
	const engine = new addon.Engine({ occ: { cacheWriteReadRatio: 12.5 } });
	registerSession(pi, ctx, addon, engine, new SavingsTracker(addon, engine), true);
	return { handlers, ctx };
}

console.log("| messages | text MB | walk | context | crossing (before) | request | context/walk | crossing/walk |");
console.log("|---|---|---|---|---|---|---|---|");
for (const count of [100, 1000, 5000]) {
	const base = conversation(count, count);
	const mb = walk(base) / 1e6;
	const { handlers, ctx } = register();
	const times = { walk: [], context: [], crossing: [], request: [] };
	for (let i = 0; i < iterations + 2; i++) {
		const warm = i < 2;
		let copy = structuredClone(base);
		const w = time(() => walk(copy));
		copy = structuredClone(base);
		const c = time(() => handlers.get("context")({ type: "context", messages: copy }, ctx));
		const r = time(() => handlers.get("before_provider_request")({ type: "before_provider_request", payload: {} }, ctx));
		// The turn's end closes the counted request (Online Context Compact takes no message_end).
		handlers.get("turn_end")({ type: "turn_end", message: { role: "assistant", stopReason: "stop" }, toolResults: [] }, ctx);
		copy = structuredClone(base);
		const x = time(() => hooks.occSizeMessages(copy));
		if (warm) continue;
		times.walk.push(w);
		times.context.push(c);
		times.request.push(r);
		times.crossing.push(x);
	}
	const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
	const f = (v) => v.toFixed(3);
	console.log(`| ${count.toLocaleString("en")} | ${mb.toFixed(2)} | ${f(m.walk)} | ${f(m.context)} | ${f(m.crossing)} | ${f(m.request)} | ${(m.context / m.walk).toFixed(2)} | ${(m.crossing / m.walk).toFixed(1)} |`);
}

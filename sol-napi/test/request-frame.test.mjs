// The extension sizes Pi's messages in JavaScript on every provider request
// (sol-pi/request-frame.ts: Pi's own `estimateTokens`, Rust's rule for a
// message Pi cannot size) and hands Rust only the sizes. These tests check that the sizes
// and identities Rust then uses are exactly the ones Rust computes from the whole messages:
// on every shape of message, on seeded random messages with the numbers and escapes where
// JSON writers differ, and on the messages of a real Pi session with real tools, files and
// shells; and where the two differ, that the extension's is Pi's.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { createRequire } from "node:module";

import { estimateTokens } from "@earendil-works/pi-coding-agent";

import { frameOf, frameWith, messageTokens, observedMessages } from "../sol-pi/request-frame.ts";
import { testHooks } from "./hooks.mjs";
import { ai, makeWorkspace, piVersion, repoRoot } from "./support.mjs";
import { DECISION_EVENT, enableOcc, plan, startOccSession, toolCall } from "./occ-support.mjs";


frameWith(createRequire(import.meta.url)("../index.js"));

/** What Rust uses at a boundary from the JavaScript sizes, next to what it computes from the messages. */
function compare(messages, label) {
	const sizes = frameOf(messages);
	const fromParts = testHooks().occObservedMessages(observedMessages(sizes));
	const fromMessages = testHooks().occSizeMessages(messages);
	assert.equal(fromParts.length, messages.length);
	for (let i = 0; i < messages.length; i++) {
		assert.deepEqual(fromParts[i], fromMessages[i], `${label}: message ${i}: ${JSON.stringify(messages[i])?.slice(0, 300)}`);
	}
	assert.equal(
		sizes.total,
		fromMessages.reduce((sum, m) => sum + m.tokens, 0),
		`${label}: total`,
	);
}

test("every message shape of the shared fixture is sized and identified as sol-occ does", () => {
	const file = path.join(repoRoot, "fixtures", "occ", "message-shapes.json");
	const messages = JSON.parse(fs.readFileSync(file, "utf8"));
	assert.ok(messages.length >= 20);
	compare(messages, "fixture");
});

test("numbers where JSON writers differ count as JavaScript writes them, in JavaScript and in Rust", () => {
	const numbers = [0, -0, 1, -1, 4294967295, 4294967296, -2147483648, -2147483649, 5e9, 1e15, 1e16, 1.5e16, 123456789012345680, 1e21, 1e22, 1.2345e25, 0.1, 0.001, 1e-5, 1.5e-5, 1e-6, 1e-7, 1.234e-10, 2.5, -2.5, 1e300, -1e-300, Number.MAX_SAFE_INTEGER, 5e-324];
	const messages = numbers.map((n, i) => ({ role: "assistant", timestamp: i, content: [{ type: "toolCall", id: `c${i}`, name: "t", arguments: { n, list: [n, -n] } }] }));
	compare(messages, "numbers");
	// The shared cases Rust's own test counts (sol-core, numbers_count_as_javascript_writes_them)
	// are what JavaScript writes, which is what Pi's estimate counts.
	const { cases } = JSON.parse(fs.readFileSync(path.join(repoRoot, "fixtures", "js-numbers.json"), "utf8"));
	for (const { number, written } of cases) assert.equal(JSON.stringify(number), written);
});

function rng(seed) {
	let x = seed >>> 0;
	return () => {
		x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
		return x / 4294967296;
	};
}

const ALPHABET = ["a", "Z", " ", "\n", "\t", '"', "\\", "\u0000", "\u001f", "\u007f", "é", "✓", "日本", "😀", "\ud800", "\udfff", "/", "\r", "\b", "\f"];
/** Without lone surrogates: for what Pi counts as JSON (tool-call arguments, tool declarations) and for keys. */
const JSON_ALPHABET = ALPHABET.filter((letter) => !/^[\ud800-\udfff]$/.test(letter));

function randomText(random, max = 40, alphabet = ALPHABET) {
	let text = "";
	const length = Math.floor(random() * max);
	for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
	return text;
}

function randomNumber(random) {
	const pick = random();
	if (pick < 0.3) return Math.floor(random() * 1000);
	if (pick < 0.5) return Math.floor((random() - 0.5) * 2 ** (random() * 60));
	if (pick < 0.8) return (random() - 0.5) * 10 ** Math.floor(random() * 50 - 25);
	return random();
}

function randomJson(random, depth = 0) {
	const pick = random();
	if (depth > 3 || pick < 0.3) return randomText(random, 40, JSON_ALPHABET);
	if (pick < 0.5) return randomNumber(random);
	if (pick < 0.55) return random() < 0.5;
	if (pick < 0.6) return null;
	if (pick < 0.8) return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(random, depth + 1));
	const object = {};
	for (let i = Math.floor(random() * 4); i > 0; i--) object[randomText(random, 8, JSON_ALPHABET)] = random() < 0.1 ? undefined : randomJson(random, depth + 1);
	return object;
}

function randomBlocks(random, kinds) {
	return Array.from({ length: Math.floor(random() * 4) }, () => {
		const kind = kinds[Math.floor(random() * kinds.length)];
		if (kind === "text") return { type: "text", text: randomText(random) };
		if (kind === "image") return { type: "image", data: "aGVsbG8=", mimeType: "image/png" };
		if (kind === "thinking") return { type: "thinking", thinking: randomText(random) };
		if (kind === "toolCall") return { type: "toolCall", id: randomText(random, 6), name: randomText(random, 10), arguments: randomJson(random) };
		return { type: kind, text: randomText(random) };
	});
}

function randomMessage(random, i) {
	const timestamp = [i, 1733000000000 + i, String(i), undefined, null, 1.5 + i][Math.floor(random() * 6)];
	const role = ["user", "assistant", "toolResult", "custom", "system", "bashExecution", "branchSummary", "compactionSummary", "unknown"][Math.floor(random() * 9)];
	const message = { role, timestamp };
	if (role === "assistant") message.content = randomBlocks(random, ["text", "thinking", "toolCall", "image", "other"]);
	else if (role === "bashExecution") Object.assign(message, { command: randomText(random), output: randomText(random, 200) });
	else if (role === "branchSummary" || role === "compactionSummary") message.summary = randomText(random, 200);
	else message.content = random() < 0.3 ? randomText(random, 200) : randomBlocks(random, ["text", "image", "other"]);
	if (role === "system") {
		if (random() < 0.7) message.sections = { tools: randomText(random), [randomText(random, 4, JSON_ALPHABET)]: randomText(random), n: 3 };
		if (random() < 0.7) message.toolsAdded = randomJson(random);
	}
	return message;
}

test("the benchmark's walk from Rust takes the frame the extension takes of the benchmark's conversation", async () => {
	const { conversation } = await import("../../scripts/bench-conversation.mjs");
	const messages = conversation(300, 11);
	const [ours, fromRust] = [frameOf(structuredClone(messages)), testHooks().frameInPlace(structuredClone(messages))];
	assert.deepEqual([...fromRust.roles], [...ours.roles]);
	assert.deepEqual([...fromRust.tokens], [...ours.tokens]);
	assert.deepEqual([...fromRust.stamps], [...ours.stamps]);
});

test("a lone surrogate in a tool call's arguments counts as Pi counts it, the one place Rust differs", () => {
	const call = (text) => ({ role: "assistant", timestamp: 1, content: [{ type: "toolCall", id: "c1", name: "bash", arguments: { command: text } }] });
	const lone = call(`echo ${"\ud800".repeat(8)}`);
	assert.equal(messageTokens(lone), estimateTokens(lone));
	// JSON.stringify writes each as a six-unit escape; Rust receives U+FFFD, one unit.
	assert.equal(messageTokens(lone), Math.ceil(("bash".length + JSON.stringify(lone.content[0].arguments).length) / 4));
	const [rust] = testHooks().occSizeMessages([lone]);
	assert.equal(rust.tokens, Math.ceil(("bash".length + JSON.stringify({ command: `echo ${"\ufffd".repeat(8)}` }).length) / 4));
	assert.ok(rust.tokens < messageTokens(lone));
	// In text, where Pi counts the length, both count one unit each.
	const text = { role: "user", timestamp: 2, content: [{ type: "text", text: "\ud800".repeat(8) }] };
	assert.equal(messageTokens(text), testHooks().occSizeMessages([text])[0].tokens);
});

test("a message Pi's estimate cannot size is sized by Rust's rule, and nothing throws", () => {
	const malformed = [
		{ role: "assistant", timestamp: 1, content: [{ type: "toolCall", id: "c1", name: "noargs" }, { type: "text", text: "abcdefgh" }] },
		{ role: "user", timestamp: 2, content: 42 },
		{ role: "bashExecution", timestamp: 3, command: "ls" },
		{ role: "system", timestamp: 4, content: "prompt", sections: { tools: "list", n: 3 } },
	];
	for (const message of malformed) {
		assert.ok(!Number.isFinite((() => { try { return estimateTokens(message); } catch { return Number.NaN; } })()), JSON.stringify(message));
		assert.equal(messageTokens(message), testHooks().occSizeMessages([message])[0].tokens, JSON.stringify(message));
	}
	assert.ok(messageTokens(malformed[0]) > 0);
	// A message neither side can read (its content throws when read) counts 0, and nothing throws.
	const unreadable = { role: "user", timestamp: 5 };
	Object.defineProperty(unreadable, "content", { enumerable: true, get: () => { throw new Error("unreadable"); } });
	assert.throws(() => estimateTokens(unreadable));
	assert.throws(() => testHooks().occSizeMessages([unreadable]));
	assert.equal(messageTokens(unreadable), 0);
});

test("seeded random messages of every role are sized and identified as sol-occ does", () => {
	for (let seed = 1; seed <= 300; seed++) {
		const random = rng(seed);
		const messages = Array.from({ length: 60 }, (_, i) => randomMessage(random, i));
		compare(messages, `seed ${seed}`);
	}
});

test(`Pi ${piVersion}: the messages of a real session's context events are sized as sol-occ sizes them, and a boundary is decided`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	fs.writeFileSync(path.join(ws.cwd, "notes.md"), "# Notes\nrésumé ✓ 日本 😀\n\"quoted\"\ttab\n".repeat(40));
	const seen = [];
	const run = await startOccSession({
		...ws,
		script: [
			toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"]), "p1"),
			ai.fauxAssistantMessage([ai.fauxThinking("Reading the notes first."), ai.fauxToolCall("read", { path: "notes.md" }, { id: "r1" })], { stopReason: "toolUse" }),
			toolCall("bash", { command: "printf 'done: %s\\n' \"$(wc -l < notes.md)\"; printf 'tab\\there \\u00e9\\n'", timeout: 5000000000 }, "b1"),
			toolCall("no_such_tool", { big: 123456789012345680, small: 1.5e-7, list: [4294967296, -1] }, "x1"),
			toolCall("update_plan", plan(["a", "completed"], ["b", "in_progress"]), "p2"),
			"finished",
		],
		extensionFactories: [(api) => api.on("context", (event) => void seen.push(structuredClone(event.messages)))],
	});
	t.after(() => run.close());
	await run.session.prompt(`Please read the notes.\n${"Background for the task. ".repeat(400)}`);
	assert.deepEqual(run.errors, []);
	assert.ok(seen.length >= 5, `${seen.length} context events`);
	for (const [i, messages] of seen.entries()) compare(messages, `context ${i}`);
	const roles = new Set(seen.flat().flatMap((m) => (m.role === "assistant" ? m.content.map((b) => `assistant:${b.type}`) : [m.role])));
	for (const role of ["user", "toolResult", "assistant:toolCall", "assistant:thinking"]) assert.ok(roles.has(role), `${role} seen`);
	assert.equal(run.decisions.length, 1, DECISION_EVENT);
	assert.ok(run.decisions[0].estimate.pricedMessages > 0, JSON.stringify(run.decisions[0].estimate));
});

// Synthetic conversations in Pi's message shapes, shared by the benchmarks: a user message
// every 10th message, then assistant tool calls alternating with tool results; about 18 % of
// the results are large (10.5 to 70 KB) and about 10 % of texts are non-ASCII. Seeded, so a
// size always gives the same conversation.

function rng(seed) {
	let x = seed;
	return () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
}

/** `count` messages; `reuseIds` gives every tool call the id `call_0` (a provider that reuses ids). */
export function conversation(count, seed, reuseIds = false) {
	const random = rng(seed);
	const messages = [];
	let call = 0;
	for (let i = 0; messages.length < count; i++) {
		if (i % 10 === 0) {
			messages.push({ role: "user", content: [{ type: "text", text: `task step ${i}` }], timestamp: i });
			continue;
		}
		const id = reuseIds ? "call_0" : `call_${seed}_${call++}`;
		messages.push({ role: "assistant", content: [{ type: "toolCall", id, name: "bash", arguments: { command: `cmd ${i}` } }], stopReason: "toolUse", timestamp: i });
		const large = random() < 0.18;
		const size = large ? 10_500 + Math.floor(random() * 60_000) : 200 + Math.floor(random() * 4_000);
		const unit = random() < 0.1 ? "résumé ✓ données " : "line of build output ok ";
		let text = "";
		while (text.length < size) text += `${unit}${text.length}\n`;
		messages.push({ role: "toolResult", toolCallId: id, toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: i });
	}
	return messages.slice(0, count);
}

/** One assistant turn as a real run appends it after a request: a short text reply. */
export function assistantTurn(n, timestamp) {
	return {
		role: "assistant",
		content: [{ type: "text", text: `step ${n} done; next I will look at the failing test` }],
		stopReason: "stop",
		usage: { input: 1000 + n, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 1020 + n, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		timestamp,
	};
}

/** What any `context` handler pays to visit the array: every message's text lengths, nothing else. */
export function bareWalk(messages) {
	let units = 0;
	for (let i = messages.length - 1; i >= 0; i--) {
		const content = messages[i].content;
		if (!Array.isArray(content)) continue;
		for (const block of content) if (block.type === "text") units += block.text.length;
	}
	return units;
}

export function median(values) {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor(sorted.length / 2)];
}

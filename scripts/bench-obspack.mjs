// ObservationPack `context` handler benchmark: prints figures and ratios, asserts nothing.
//
// Synthetic conversations (scripts/bench-conversation.mjs) at 100, 1,000 and 5,000
// messages. For each size it times, per request, on a fresh deep copy of the messages as Pi
// passes them (the copy itself is not timed):
//   walk        the same walk with no work (what any handler pays; it reads lengths only)
//   exact       the walk plus one `===` of every large text against the texts kept from an
//               earlier copy: the floor for any exact content check (Pi's copy is new on
//               every request, so the bytes must be read; V8 compares them with memcmp)
//   first       the real handler, first request (every large result crosses into Rust once)
//   steady      the real handler, later requests (cache by content: bucket by text length,
//               a hit needs the same tool and === block texts)
//   reused      steady, with every tool-call id "call_0" (a provider that reuses ids)
//   rehash      a handler that SHA-256-hashes every large result on every request, as the
//               original did at the least (it also re-verified objects and wrote the ledger)
// Median of the timed iterations; peak RSS at the end.
//   node scripts/bench-obspack.mjs [iterations] [--sizes 100,1000]
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";

import { observationPackPlacement } from "../sol-napi/sol-pi/index.ts";
import { registerObservationPack } from "../sol-napi/sol-pi/observation-pack.ts";
import { frameWith } from "../sol-napi/sol-pi/request-frame.ts";
import { SavingsTracker } from "../sol-napi/sol-pi/savings.ts";
import { conversation, median } from "./bench-conversation.mjs";

const addon = createRequire(import.meta.url)("../sol-napi/index.js");
frameWith(addon);
const iterations = Number(process.argv[2] ?? 15);
// `--sizes 100,1000`: only these conversation sizes (a quick run; the tests use it).
const sizesAt = process.argv.indexOf("--sizes");
const only = sizesAt > 0 ? process.argv[sizesAt + 1].split(",").map(Number) : undefined;

function time(fn) {
	const start = process.hrtime.bigint();
	fn();
	return Number(process.hrtime.bigint() - start) / 1e6;
}

function walkOnly(messages) {
	let found = 0;
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m.role !== "toolResult" || m.isError || !Array.isArray(m.content)) continue;
		let length = 0;
		for (const block of m.content) length += block.type === "text" ? block.text.length : 0;
		if (length * 3 > 10_240) found++;
	}
	return found;
}

/** The large texts of `messages`, in walk order, for `exactWalk`. */
function largeTexts(messages) {
	const texts = [];
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m.role !== "toolResult" || m.isError || !Array.isArray(m.content)) continue;
		let length = 0;
		for (const block of m.content) length += block.type === "text" ? block.text.length : 0;
		if (length * 3 > 10_240) texts.push(m.content[0].text);
	}
	return texts;
}

function exactWalk(messages, kept) {
	let same = 0;
	let k = 0;
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m.role !== "toolResult" || m.isError || !Array.isArray(m.content)) continue;
		let length = 0;
		for (const block of m.content) length += block.type === "text" ? block.text.length : 0;
		if (length * 3 > 10_240 && m.content[0].text === kept[k++]) same++;
	}
	return same;
}

function rehashEveryRequest(messages) {
	let hashed = 0;
	for (const m of messages) {
		if (m.role !== "toolResult" || m.isError) continue;
		const text = m.content.map((b) => b.text).join("\n");
		if (Buffer.byteLength(text) <= 10_240) continue;
		createHash("sha256").update(text).digest("hex");
		hashed++;
	}
	return hashed;
}

/** The default configuration, as the extension reads it from an agent folder without `sol-pi.json`. */
const defaults = (() => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-bench-config-"));
	const outcome = addon.loadConfig({ cwd: dir, agentDir: dir, projectTrusted: false });
	fs.rmSync(dir, { recursive: true, force: true });
	if (outcome.kind === "invalid") throw new Error(outcome.error.message);
	return outcome.config;
})();

/** ObservationPack's `context` step over a session engine of its own, with the default placement as the extension makes it. */
function handlerFor(sessionDir) {
	const pi = { on() {}, registerTool() {} };
	const engine = new addon.Engine({ observationPack: observationPackPlacement(defaults) });
	const step = registerObservationPack(pi, addon, engine, new SavingsTracker(addon, engine));
	const ctx = {
		mode: "print",
		ui: { notify() {}, setStatus() {} },
		sessionManager: { getSessionId: () => "bench-session", getSessionDir: () => sessionDir, getBranch: () => [] },
	};
	return (messages) => step(messages, ctx);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-bench-"));
console.log(`ObservationPack context handler, median of ${iterations} requests per figure (ms)`);
console.log("messages  text MB  large  walk    exact   first   steady  reused  rehash  steady/walk  steady/exact  rehash/steady");
let peak = 0;
for (const [count, seed] of [[100, 1], [1_000, 2], [5_000, 3]].filter(([size]) => !only || only.includes(size))) {
	const base = conversation(count, seed);
	const reusedBase = conversation(count, seed, true);
	const kept = largeTexts(structuredClone(base));
	const megabytes = base.reduce((sum, m) => sum + (m.role === "toolResult" ? m.content[0].text.length : 0), 0) / 1e6;
	const large = walkOnly(base);
	const walk = [], exact = [], first = [], steady = [], reused = [], rehash = [];
	for (let i = 0; i < iterations; i++) {
		const handler = handlerFor(path.join(work, `s${count}-${i}`));
		let copy = structuredClone(base);
		first.push(time(() => handler(copy)));
		for (let r = 0; r < 3; r++) {
			copy = structuredClone(base);
			steady.push(time(() => handler(copy)));
		}
		const reusedHandler = handlerFor(path.join(work, `r${count}-${i}`));
		reusedHandler(structuredClone(reusedBase));
		for (let r = 0; r < 3; r++) {
			copy = structuredClone(reusedBase);
			reused.push(time(() => reusedHandler(copy)));
		}
		copy = structuredClone(base);
		walk.push(time(() => walkOnly(copy)));
		copy = structuredClone(base);
		exact.push(time(() => exactWalk(copy, kept)));
		copy = structuredClone(base);
		rehash.push(time(() => rehashEveryRequest(copy)));
		peak = Math.max(peak, process.memoryUsage().rss);
	}
	const [w, e, f, s, u, h] = [median(walk), median(exact), median(first), median(steady), median(reused), median(rehash)];
	console.log(
		`${String(count).padStart(8)}  ${megabytes.toFixed(2).padStart(7)}  ${String(large).padStart(5)}  ${w.toFixed(2).padStart(6)}  ${e.toFixed(2).padStart(6)}  ${f.toFixed(1).padStart(6)}  ${s.toFixed(2).padStart(6)}  ${u.toFixed(2).padStart(6)}  ${h.toFixed(2).padStart(6)}  ${(s / w).toFixed(2).padStart(11)}  ${(s / e).toFixed(2).padStart(12)}  ${(h / s).toFixed(1).padStart(13)}`,
	);
}
console.log(`peak RSS ${(peak / 1024 / 1024).toFixed(0)} MiB (includes the synthetic conversations and their copies)`);
fs.rmSync(work, { recursive: true, force: true });

// Every SoL-Pi handler, all four mechanisms on, dispatched directly inside a real Pi
// AgentSession: prints figures and ratios, asserts nothing.
//
//   SOL_PI_TEST_PI_ROOT="$(pi_root_for 1.6.0)" node scripts/bench-handlers.mjs [requests] [--sizes 100,1000] [--steady N]
//
// SoL-Pi is loaded by Pi's own resource loader from this checkout (the release addon:
// `npm run build` first), with a sol-pi.json that enables all four mechanisms. The session is
// a real one (faux provider, in-memory session manager) holding the synthetic conversation of
// scripts/bench-conversation.mjs (100, 1,000 and 5,000 messages) as its branch and as the
// agent's messages. Per size, after one warm-up request (the first sight of every large
// result archives it), each timed request appends one assistant turn, as a real run does,
// and then dispatches, with Pi's own extension context:
//   context       every SoL-Pi `context` handler in registration order, on a fresh
//                 structuredClone of the messages (Pi clones them per request; the clone is
//                 not timed), then (Pi 1.x) its `context_with_system` handler on the same
//                 messages behind a system message: the savings book's record of the request
//                 as sent (`w/system`, included in `context`; on 0.84.2 the book's handler is
//                 the last `context` handler); `walk` is a bare walk of another clone of the
//                 same array (every text length read, nothing else): what any handler pays to
//                 visit it
//   before_provider_request, message_end and turn_end of that turn, and tool_result of a
//   small bash result (not a reducer candidate); `Pi usage` is Pi's own ctx.getContextUsage()
//   alone, which the Online Context Compact handler calls on every counted request; `own` is
//   the handler given that same answer at once; before_req is their sum; `Pi prompt` is Pi's
//   ctx.getSystemPrompt() alone, which `own` includes (the handler reads it on every request)
// `--sizes 100` runs only the sizes listed. With `--steady N`, a fourth line (`100@N`): the
// same 100 messages reached over N untimed requests (the session starts N - 1 messages short,
// and each of those requests brings the next message of the conversation), so the handlers
// have run N times, as V8 has optimized them by then, and the results have aged request by
// request; the lines above run them only a few times each, as at the start of a session.
// Then the start cost: a fresh process per run, alternating with and without SoL-Pi, times
// loading the extensions and creating and binding the session (the factory and the first
// `session_start`); without SoL-Pi, an empty extension takes its place. One untimed pair of
// runs goes first. Medians throughout.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { makeWorkspace, piVersion, repoRoot, startSession, writeJson } from "../sol-napi/test/support.mjs";
import { assistantTurn, bareWalk, conversation, median } from "./bench-conversation.mjs";

const ALL_FOUR = {
	version: 1,
	actionFusion: true,
	observationPack: true,
	evidencePreservingReducer: true,
	onlineContextCompact: true,
};

const now = () => process.hrtime.bigint();
const ms = (start, end) => Number(end - start) / 1e6;

/** Starts a session with SoL-Pi (all four on) or with an empty extension; the time it took. */
async function timedStart(withSolPi) {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-bench-start-"));
	const cwd = path.join(root, "project");
	const agentDir = path.join(root, "agent");
	fs.mkdirSync(cwd, { recursive: true });
	writeJson(path.join(agentDir, "sol-pi.json"), ALL_FOUR);
	let extensionPath = repoRoot;
	if (!withSolPi) {
		// A fixed path, so Pi's loader can reuse its compile cache as it does for SoL-Pi's files.
		const dir = path.join(os.tmpdir(), "sol-pi-bench-empty-extension");
		fs.mkdirSync(dir, { recursive: true });
		extensionPath = path.join(dir, "index.ts");
		if (!fs.existsSync(extensionPath)) fs.writeFileSync(extensionPath, "export default function emptyExtension() {}\n");
	}
	const start = now();
	const cpuStart = process.cpuUsage();
	const run = await startSession({ cwd, agentDir, extensionPath });
	const elapsed = ms(start, now());
	const used = process.cpuUsage(cpuStart);
	// CPU time of this process over the same span: less disturbed by other work on the machine.
	const cpu = (used.user + used.system) / 1000;
	const errors = run.errors.length;
	run.close();
	fs.rmSync(root, { recursive: true, force: true });
	return { elapsed, cpu, errors };
}

if (process.argv[2] === "--start") {
	console.log(JSON.stringify(await timedStart(process.argv[3] === "with")));
	process.exit(0);
}

const requests = Number(process.argv[2] ?? 9);
const steadyAt = process.argv.indexOf("--steady");
const steady = steadyAt > 0 ? Number(process.argv[steadyAt + 1]) : 0;
// `--sizes 100,1000`: only these conversation sizes (a quick run; the tests use it).
const sizesAt = process.argv.indexOf("--sizes");
const only = sizesAt > 0 ? process.argv[sizesAt + 1].split(",").map(Number) : undefined;

/** SoL-Pi's handlers by event, in registration order, as Pi would dispatch them. */
function handlersOf(solPi) {
	const byEvent = new Map();
	for (const [event, list] of solPi.handlers) byEvent.set(event, [...list]);
	return byEvent;
}

/** Runs `handlers` in order; the total time, and each handler's in `each` (when given). */
async function dispatch(handlers, event, ctx, each) {
	const start = now();
	let previous = start;
	for (const [index, handler] of (handlers ?? []).entries()) {
		const result = handler(event, ctx);
		if (result && typeof result.then === "function") await result;
		if (each) {
			const at = now();
			(each[index] ??= []).push(ms(previous, at));
			previous = at;
		}
	}
	return ms(start, now());
}

/** The figures of `count` messages, reached over `warm` untimed requests. */
async function measure(count, seed, warm = 1) {
	const workspace = makeWorkspace();
	writeJson(path.join(workspace.agentDir, "sol-pi.json"), ALL_FOUR);
	const run = await startSession({ cwd: workspace.cwd, agentDir: workspace.agentDir });
	if (run.errors.length > 0) throw new Error(`SoL-Pi reported: ${JSON.stringify(run.errors)}`);
	const { session, solPi } = run;
	const whole = conversation(count, seed);
	// The messages the warm-up requests bring, one each.
	const upcoming = whole.splice(count - (warm - 1));
	const messages = whole;
	for (const message of messages) session.sessionManager.appendMessage(message);
	session.agent.state.messages = messages;
	const handlers = handlersOf(solPi);
	const ctx = session.extensionRunner.createContext();
	const system = { role: "system", content: [{ type: "text", text: ctx.getSystemPrompt() }], timestamp: 0 };
	const figures = { walk: [], context: [], withSystem: [], before: [], usage: [], own: [], prompt: [], messageEnd: [], turnEnd: [], toolResult: [] };
	const contextEach = [];

	let timestamp = 1_000_000;
	const request = async (timed) => {
		const forHandlers = structuredClone(messages);
		const forWalk = structuredClone(messages);
		const walk = (() => {
			const start = now();
			bareWalk(forWalk);
			return ms(start, now());
		})();
		const visible = await dispatch(handlers.get("context"), { type: "context", messages: forHandlers }, ctx, timed ? contextEach : undefined);
		const withSystem = await dispatch(handlers.get("context_with_system"), { type: "context_with_system", messages: [system, ...forHandlers] }, ctx);
		const context = visible + withSystem;
		// Pi's own price of the context usage the OCC handler asks for on every counted request,
		// then the handler with that answer handed back at once: SoL-Pi's own part of the event.
		const usageStart = now();
		const usageValue = ctx.getContextUsage();
		const usage = ms(usageStart, now());
		const answered = Object.create(ctx, { getContextUsage: { value: () => usageValue } });
		const own = await dispatch(handlers.get("before_provider_request"), { type: "before_provider_request", payload: { model: "faux-1", messages: [] } }, answered);
		const before = own + usage;
		// Pi's own price of the system prompt the handler reads on every counted request (part of `own`).
		const promptStart = now();
		ctx.getSystemPrompt();
		const prompt = ms(promptStart, now());
		const turn = (!timed && upcoming.shift()) || assistantTurn(messages.length, timestamp++);
		messages.push(turn);
		session.sessionManager.appendMessage(turn);
		session.agent.state.messages = messages;
		const messageEnd = await dispatch(handlers.get("message_end"), { type: "message_end", message: turn }, ctx);
		const turnEnd = await dispatch(handlers.get("turn_end"), { type: "turn_end", turnIndex: 0, message: turn, toolResults: [] }, ctx);
		const toolResult = await dispatch(
			handlers.get("tool_result"),
			{
				type: "tool_result",
				toolCallId: `bench_${timestamp}`,
				toolName: "bash",
				input: { command: "git status --short" },
				content: [{ type: "text", text: " M src/lib.rs\n" }],
				details: undefined,
				isError: false,
			},
			ctx,
		);
		if (!timed) return;
		figures.walk.push(walk);
		figures.context.push(context);
		figures.withSystem.push(withSystem);
		figures.before.push(before);
		figures.usage.push(usage);
		figures.own.push(own);
		figures.prompt.push(prompt);
		figures.messageEnd.push(messageEnd);
		figures.turnEnd.push(turnEnd);
		figures.toolResult.push(toolResult);
	};
	const first = now();
	await request(false);
	const firstMs = ms(first, now());
	for (let i = 1; i < warm; i++) await request(false);
	for (let i = 0; i < requests; i++) await request(true);
	const rss = process.memoryUsage().rss;
	const megabytes = messages.reduce((sum, m) => sum + bareWalk([m]), 0) / 1e6;
	if (run.errors.length > 0) throw new Error(`SoL-Pi reported: ${JSON.stringify(run.errors)}`);
	run.close();
	fs.rmSync(workspace.root, { recursive: true, force: true });
	const m = Object.fromEntries(Object.entries(figures).map(([key, values]) => [key, median(values)]));
	return { count, megabytes, firstMs, rss, ...m, contextEach: contextEach.map(median) };
}

const pad = (value, width, digits = 3) => (typeof value === "number" ? value.toFixed(digits) : String(value)).padStart(width);

console.log(`SoL-Pi handlers, all four mechanisms on, Pi ${piVersion}; median of ${requests} requests (ms)`);
console.log("messages  text M  first req  walk     context  (w/system)  ctx/walk  before_req  (Pi usage)  (own)  (Pi prompt)  message_end  turn_end  tool_result");
let peak = 0;
const breakdown = [];
const sizes = [[100, 1, "100"], [1_000, 2, "1000"], [5_000, 3, "5000"]].filter(([count]) => !only || only.includes(count));
if (steady > 0) sizes.push([100, 1, `100@${steady}`, steady]);
for (const [count, seed, label, warm] of sizes) {
	const r = await measure(count, seed, warm);
	peak = Math.max(peak, r.rss);
	console.log(
		`${pad(label, 8)}  ${pad(r.megabytes, 6, 2)}  ${pad(r.firstMs, 9, 1)}  ${pad(r.walk, 7)}  ${pad(r.context, 7)}  ${pad(r.withSystem, 10)}  ${pad(r.context / r.walk, 8, 2)}  ${pad(r.before, 10)}  ${pad(r.usage, 10)}  ${pad(r.own, 5)}  ${pad(r.prompt, 11)}  ${pad(r.messageEnd, 11)}  ${pad(r.turnEnd, 8)}  ${pad(r.toolResult, 11)}`,
	);
	breakdown.push(`${label}: ${r.contextEach.map((value) => value.toFixed(3)).join(" + ")}`);
}
console.log(`context by handler, in registration order (ms): ${breakdown.join("; ")}`);
console.log(`peak RSS ${(peak / 1024 / 1024).toFixed(0)} MiB (includes the synthetic conversations and their copies)`);

const runs = Number(process.env.SOL_PI_BENCH_START_RUNS ?? 7);
const starts = { with: [], without: [] };
const cpus = { with: [], without: [] };
// One untimed pair first: the disk cache and the loader's compile cache are warm for both.
for (let i = -1; i < runs; i++) {
	for (const variant of i % 2 === 0 ? ["without", "with"] : ["with", "without"]) {
		const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, "--start", variant], { encoding: "utf8", env: process.env });
		if (child.status !== 0) throw new Error(`start run failed: ${child.stderr}`);
		const result = JSON.parse(child.stdout.trim().split("\n").pop());
		if (result.errors > 0) throw new Error(`start run (${variant}) reported ${result.errors} errors`);
		if (i >= 0) {
			starts[variant].push(result.elapsed);
			cpus[variant].push(result.cpu);
		}
	}
}
for (const [label, figures] of runs > 0 ? [["wall", starts], ["cpu", cpus]] : []) {
	const [withSolPi, without] = [median(figures.with), median(figures.without)];
	console.log(`start ${label} time (load extensions, create and bind the session), median of ${runs} processes each: ` +
		`without SoL-Pi ${without.toFixed(1)} ms, with ${withSolPi.toFixed(1)} ms, SoL-Pi adds ${(withSolPi - without).toFixed(1)} ms`);
}

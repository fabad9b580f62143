// How many times SoL-Pi crosses into Rust per provider request, all four mechanisms on, in a
// real Pi AgentSession (faux provider): prints figures, asserts nothing.
//
//   SOL_PI_TEST_PI_ROOT="$(pi_root_for 1.6.0)" node scripts/count-crossings.mjs [requests]
//
// SoL-Pi is loaded by Pi's resource loader through sol-napi/test/fixtures/counting-extension.ts:
// the real extension over the real addon, every call into Rust written down (an export called,
// an object made, a method or getter of such an object). The scripted model answers each
// request with one small bash call (`printf`, not a reducer candidate, too small to pack)
// until the last, which answers "done": the steady state of a run of tool calls. A request's
// crossings are those from the provider's previous answer to this request (message_end, the
// tool call and its result, turn_end, then context and before_provider_request of the
// request). The first two requests are left out of the steady state (the first sight of the
// session, the first turn's entries).
import * as fs from "node:fs";
import * as path from "node:path";

import { ALL_FOUR_MECHANISMS, ai, makeWorkspace, piVersion, repoRoot, startSession, toolCalls, writeJson } from "../sol-napi/test/support.mjs";

const requests = Number(process.argv[2] ?? 12);
const log = (globalThis.__solPiCrossings ??= []);
const cuts = [];

const ws = makeWorkspace();
writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), ALL_FOUR_MECHANISMS);
const replies = Array.from({ length: requests }, (_, index) => () => {
	cuts.push(log.length);
	return index === requests - 1 ? ai.fauxAssistantMessage("done") : toolCalls(["bash", { command: `printf 'step ${index}\\n'` }, `call-${index}`]);
});
const extensionPath = path.join(repoRoot, "sol-napi", "test", "fixtures", "counting-extension.ts");
const start = log.length;
const run = await startSession({ ...ws, extensionPath, replies });
const started = log.length - start;
await run.session.prompt("run the steps");
const answered = run.session.getLastAssistantText();
const errors = run.errors.length;
run.close();
fs.rmSync(ws.root, { recursive: true, force: true });
if (answered !== "done" || errors > 0 || cuts.length !== requests) {
	console.error(`the scripted run did not finish as scripted (answer ${JSON.stringify(answered)}, ${errors} extension errors, ${cuts.length} requests)`);
	process.exit(1);
}

const perRequest = cuts.map((cut, index) => log.slice(index === 0 ? start + started : cuts[index - 1], cut));
const steady = perRequest.slice(2);
const counts = steady.map((names) => names.length);
const byName = new Map();
for (const names of steady) for (const name of names) byName.set(name, (byName.get(name) ?? 0) + 1);

console.log(`Pi ${piVersion}: ${requests} requests, all four mechanisms on`);
console.log(`session start: ${started} crossings`);
console.log(`crossings per request, each request: ${perRequest.map((names) => names.length).join(", ")}`);
console.log(`steady state (requests 3 to ${requests}): min ${Math.min(...counts)}, max ${Math.max(...counts)}, mean ${(counts.reduce((a, b) => a + b, 0) / counts.length).toFixed(1)}`);
console.log("");
console.log("| crossing | per steady request |");
console.log("|---|---:|");
for (const [name, count] of [...byName].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) console.log(`| \`${name}\` | ${(count / steady.length).toFixed(2)} |`);

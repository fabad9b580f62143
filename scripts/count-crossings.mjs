// How many times SoL-Pi crosses into Rust per provider request, all four mechanisms on, in a
// real Pi AgentSession (faux provider; `--payload`: one that calls `onPayload` as Pi's HTTP
// providers do): prints figures (sol-napi/test/crossings.mjs measures; crossings.test.mjs holds
// the bounds).
//
//   SOL_PI_TEST_PI_ROOT="$(pi_root_for 1.6.0)" node scripts/count-crossings.mjs [requests] [--payload]
import { countCrossings } from "../sol-napi/test/crossings.mjs";
import { piVersion } from "../sol-napi/test/support.mjs";

const payload = process.argv.includes("--payload");
const requests = Number(process.argv.slice(2).find((arg) => arg !== "--payload") ?? 12);
let counted;
try {
	counted = await countCrossings(requests, { payload });
} catch (error) {
	console.error(error instanceof Error ? error.message : String(error));
	process.exit(1);
}
const { started, perRequest, steady } = counted;
const counts = steady.map((names) => names.length);
const byName = new Map();
for (const names of steady) for (const name of names) byName.set(name, (byName.get(name) ?? 0) + 1);

console.log(`Pi ${piVersion}: ${requests} requests, all four mechanisms on, ${payload ? "a provider that calls onPayload" : "Pi's faux provider"}`);
console.log(`session start: ${started} crossings`);
console.log(`crossings per request, each request: ${perRequest.map((names) => names.length).join(", ")}`);
console.log(`steady state (requests 3 to ${requests}): min ${Math.min(...counts)}, max ${Math.max(...counts)}, mean ${(counts.reduce((a, b) => a + b, 0) / counts.length).toFixed(1)}`);
console.log("");
console.log("| crossing | per steady request |");
console.log("|---|---:|");
for (const [name, count] of [...byName].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) console.log(`| \`${name}\` | ${(count / steady.length).toFixed(2)} |`);

// Records a real Pi session file from a scripted scenario, for the session corpus
// (fixtures/sessions/corpus/, see its README.md).
//
//   SOL_PI_TEST_PI_ROOT=<Pi install root> node scripts/record-session.mjs <scenario> <out.jsonl> [--with-sol-pi [--cache-aware]]
//
// A real Pi AgentSession of the Pi install named by SOL_PI_TEST_PI_ROOT (else the checkout's
// development dependency; `source scripts/env.sh; pi_root_for <version>` gives a matrix root),
// persisted by Pi's own SessionManager.create(cwd, sessionDir) in a temp folder, runs the
// scenario: Pi's faux provider scripts only the model's choices (each a function of the real
// context it is sent), the tools (bash, read, edit; searches are the real grep run by bash)
// are Pi's own, on a real project written into the temp folder. When the scenario ends, the session file Pi wrote is copied
// to <out.jsonl> and the temp folder is removed.
//
//   --with-sol-pi   load SoL-Pi with all four mechanisms on (the reducer is a second faux
//                   model quoting real lines of the real log); the file then also holds
//                   SoL-Pi's own entries (sol-pi-savings-totals, ...). Without it, plain Pi.
//   --cache-aware   with --with-sol-pi: ObservationPack's cache-aware placement on
//                   ("cacheAware": true, "cacheWriteReadRatio": 12.5 in .pi/sol-pi.json, the
//                   ratio Online Context Compact decides at too)
//
// Scenarios (scripts/record/scenarios.mjs):
//   debugging   the fnv crate from the local cargo registry with a wrong FNV prime: builds,
//               failing test logs, greps, reads of its sources, the fix (two prompts)
//   plans       colorsys of the Python standard library with a wrong coefficient: two tasks,
//               each with update_plan (needs --with-sol-pi)
//   fork        questions on this repository's sol-core sources; /tree back to the first
//               question, a second branch, then back to the first answer
//   resume      textwrap of the Python standard library: a prompt, the session closed and
//               opened again from its file (SessionManager.open), a second prompt
//   compaction  reads of large sources with small compaction settings, so Pi compacts by
//               itself (the faux model answers the summary requests)
//   long-fnv, long-strsim, long-textwrap
//               long sessions of four prompts each (fixtures/sessions/long/): the fnv and
//               strsim crates from the local cargo registry and the standard library's
//               textwrap with its own test suite; plans with SoL-Pi
// When the output's folder has a manifest.json (the corpus has), the file's row in it is added
// or replaced: its Pi version, scenario, SoL-Pi on/off and the counts of what it holds.
// Prints one line per step on stderr and the output file's path on stdout; exits 2 on bad
// arguments, 1 when the scenario did not run to its end (then nothing is written).
import * as path from "node:path";

import { updateManifest } from "./record/manifest.mjs";
import { SCENARIOS, piVersion, record } from "./record/recorder.mjs";

const usage = `usage: node scripts/record-session.mjs <scenario> <out.jsonl> [--with-sol-pi [--cache-aware]]\nscenarios: ${Object.keys(SCENARIOS).join(", ")}`;
const args = process.argv.slice(2);
const withSolPi = args.includes("--with-sol-pi");
const cacheAware = args.includes("--cache-aware");
const positional = args.filter((arg) => arg !== "--with-sol-pi" && arg !== "--cache-aware");
const unknownFlags = positional.filter((arg) => arg.startsWith("--"));
if (positional.length !== 2 || unknownFlags.length > 0 || !SCENARIOS[positional[0]] || (cacheAware && !withSolPi)) {
	console.error(unknownFlags.length > 0 ? `unknown option: ${unknownFlags.join(" ")}\n${usage}` : cacheAware && !withSolPi ? `--cache-aware needs --with-sol-pi\n${usage}` : usage);
	process.exit(2);
}
const [scenario, out] = positional;
try {
	const result = await record({ scenario, out: path.resolve(out), withSolPi, cacheAware, log: (line) => console.error(line) });
	console.error(`Pi ${piVersion}: ${result.requests} provider requests (${result.summaries} compaction summaries), ${result.reducerCalls} reducer calls`);
	const row = updateManifest(result.out, { scenario, piVersion, withSolPi, cacheAware });
	if (row) console.error(`manifest.json: ${JSON.stringify(row)}`);
	console.log(result.out);
} catch (error) {
	console.error(`record-session: ${error.message}`);
	process.exitCode = 1;
}

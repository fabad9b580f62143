// The demo: a scripted Pi session (Pi's faux provider, no network, no
// credentials) with SoL-Pi loaded from this checkout as a Pi package. It writes
// a project config enabling every mechanism, starts a real AgentSession in TUI
// mode with a recording UI, and prints what SoL-Pi reported.
//   node scripts/demo.mjs [path/to/sol-pi.json]
import * as fs from "node:fs";
import * as path from "node:path";

import { ask, makeWorkspace, piVersion, repoRoot, startSession, writeJson } from "../sol-napi/test/support.mjs";

const ws = makeWorkspace();
const configFile = path.join(ws.cwd, ".pi", "sol-pi.json");
const given = process.argv[2];
if (given) fs.mkdirSync(path.dirname(configFile), { recursive: true }), fs.copyFileSync(path.resolve(given), configFile);
else
	writeJson(configFile, {
		version: 1,
		actionFusion: true,
		observationPack: true,
		evidencePreservingReducer: true,
		evidencePreservingReducerProvider: "sol-faux",
		evidencePreservingReducerModel: "faux-1",
		onlineContextCompact: true,
	});

console.log(`SoL-Pi demo: Pi ${piVersion}, faux provider, package loaded from ${repoRoot}`);
console.log(`project config: ${configFile}`);
const run = await startSession({ ...ws, mode: "tui", replies: ["Hello from the faux model; SoL-Pi is loaded."] });
try {
	for (const notice of run.notices()) console.log(`notice (${notice.level}): ${notice.message}`);
	for (const error of run.errors) console.log(`SoL-Pi stopped: ${error.error}`);
	console.log(`SoL-Pi handlers: ${[...(run.solPi?.handlers.keys() ?? [])].join(", ") || "none"}`);
	console.log(`assistant: ${await ask(run.session, "Say hello")}`);
} finally {
	run.close();
	fs.rmSync(ws.root, { recursive: true, force: true });
}
process.exitCode = run.errors.length === 0 ? 0 : 1;

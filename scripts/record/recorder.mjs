// The recorder's core: runs one scenario in a real Pi AgentSession of the Pi install under
// test (SOL_PI_TEST_PI_ROOT), persisted by Pi's own SessionManager in a temp folder, with
// the scripted faux models of models.mjs, and copies the session file Pi wrote to `out`.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { ai, pi, piMajor, piVersion, repoRoot, startSession, writeJson } from "../../sol-napi/test/support.mjs";
import { agentProvider, cacheAwareConfig, reducerProvider, script, solPiConfig } from "./models.mjs";
import { SCENARIOS } from "./scenarios.mjs";

export { SCENARIOS, piVersion };

const recordDir = path.dirname(new URL(import.meta.url).pathname);
const demoDir = path.join(repoRoot, "scripts", "demo");
/** Pi's compaction tail in every recording: small, so a compaction has earlier history to summarize. */
export const KEEP_RECENT_TOKENS = 150;

/**
 * Records `scenario` into `out`. `withSolPi` loads SoL-Pi (all four mechanisms on) instead
 * of a plain Pi; with it, `cacheAware` also turns on ObservationPack's cache-aware placement
 * (`cacheAwareConfig`). `log(line)` gets one line per step. Returns `out`, the Pi version, the
 * number of agent provider requests (`requests`, of which `summaries` were Pi's compaction
 * summaries) and of reducer calls. Throws, writing nothing, when the scenario did not run to
 * its end: an extension error, a choice that did not find what it expected, choices left over.
 */
export async function record({ scenario: name, out, withSolPi = false, cacheAware = false, log = () => {} }) {
	const scenario = SCENARIOS[name];
	if (!scenario) throw new Error(`unknown scenario "${name}" (one of: ${Object.keys(SCENARIOS).join(", ")})`);
	if (cacheAware && !withSolPi) throw new Error("the cache-aware placement is SoL-Pi's: record with --with-sol-pi");
	if (scenario.needsSolPi && !withSolPi) throw new Error(`the scenario "${name}" uses SoL-Pi's plans: record it with --with-sol-pi`);
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-record-"));
	// The recorded commands run in the project; a target folder set for this checkout must not leak into them.
	const savedTarget = process.env.CARGO_TARGET_DIR;
	let stopOnError = () => {};
	delete process.env.CARGO_TARGET_DIR;
	try {
		const cwd = path.join(root, "project");
		const agentDir = path.join(root, "agent");
		const sessionDir = path.join(root, "sessions");
		for (const dir of [cwd, agentDir, sessionDir]) fs.mkdirSync(dir, { recursive: true });
		scenario.project(cwd);
		if (withSolPi) writeJson(path.join(cwd, ".pi", "sol-pi.json"), cacheAware ? cacheAwareConfig : solPiConfig);

		const failures = [];
		const state = { withSolPi, piMajor, fail: (text) => (failures.push(text), text) };
		let sessionManager = pi.SessionManager.create(cwd, sessionDir);
		const steps = script(ai, scenario.steps(ai, state));
		const agent = agentProvider(ai, {
			next: steps.next,
			summary: scenario.summary ?? (() => "## Goal\nThe task of this session.\n\n## Progress\nWork so far summarized."),
			newest: () => Math.max(0, ...sessionManager.getEntries().map((e) => Date.parse(e.timestamp) || 0)),
		});
		const reducer = reducerProvider(ai);
		const compaction = { enabled: false, keepRecentTokens: KEEP_RECENT_TOKENS, ...(scenario.compaction ?? {}) };
		// On Pi 0.84.2 Online Context Compact gets the retained tail through its factory option (no pi.getSettings()).
		const solPiPath = piMajor === 0 ? path.join(demoDir, "keep-recent-extension.ts") : repoRoot;
		const errors = [];
		let run;
		const start = async () => {
			run = await startSession({
				cwd,
				agentDir,
				sessionManager,
				faux: agent,
				extraProviders: [reducer.provider],
				settings: { compaction },
				extensionPath: withSolPi ? solPiPath : path.join(recordDir, "plain-extension.ts"),
			});
		};
		const stop = () => {
			const closing = run;
			run = undefined;
			errors.push(...closing.errors);
			closing.close();
		};
		stopOnError = () => run && stop();
		await start();
		const rec = {
			ai,
			state,
			get session() {
				return run.session;
			},
			get sessionManager() {
				return sessionManager;
			},
			async prompt(text) {
				log(`prompt: ${text}`);
				await run.session.prompt(text);
			},
			/** `/tree`: moves the leaf to the entry `pick(entries)` chooses, without a summary. */
			async navigate(pick, label) {
				const target = pick(sessionManager.getEntries());
				if (!target) throw new Error(`no entry to navigate to (${label})`);
				log(`tree: back to ${label}`);
				await run.session.navigateTree(target.id, { summarize: false });
			},
			/** Closes the session and opens its file again, as `pi --resume` does. */
			async resume() {
				const file = sessionManager.getSessionFile();
				stop();
				log("resume: the session is closed and opened again from its file");
				sessionManager = pi.SessionManager.open(file, sessionDir);
				await start();
			},
		};
		log(`recording "${name}" on Pi ${piVersion}${withSolPi ? ` with SoL-Pi (all four mechanisms${cacheAware ? ", cache-aware placement" : ""})` : " (plain Pi)"} in ${cwd}`);
		await scenario.run(rec);
		const file = sessionManager.getSessionFile();
		stop();
		if (errors.length > 0) throw new Error(`the extension reported errors: ${errors.map((e) => e.error ?? String(e)).join("; ")}`);
		if (failures.length > 0) throw new Error(`the scenario "${name}" did not find what it expected: ${failures.join(" ")}`);
		if (steps.remaining() > 0) throw new Error(`the scenario "${name}" ended with ${steps.remaining()} choices unused`);
		if (!file || !fs.existsSync(file)) throw new Error("Pi wrote no session file");
		fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
		fs.copyFileSync(file, out);
		const summaries = agent.requests.filter((request) => request.kind === "summary").length;
		return { out, piVersion, requests: agent.requests.length, summaries, reducerCalls: reducer.calls.length };
	} finally {
		stopOnError();
		if (savedTarget !== undefined) process.env.CARGO_TARGET_DIR = savedTarget;
		fs.rmSync(root, { recursive: true, force: true });
	}
}

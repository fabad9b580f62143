// Counts every call into Rust per provider request, all four mechanisms on, in a real Pi
// AgentSession (faux provider; with `payload`, one that calls `onPayload` as Pi's HTTP providers
// do, so that `before_provider_request` fires), for scripts/count-crossings.mjs and
// crossings.test.mjs.
//
// SoL-Pi is loaded by Pi's resource loader through fixtures/counting-extension.ts: the real
// extension over the real addon, every call into Rust written down (an export called, an object
// made, a method or getter of such an object). The scripted model answers each request with one
// small bash call (`printf`, not a reducer candidate, too small to pack) until the last, which
// answers "done": the steady state of a run of tool calls. A request's crossings are those from
// the provider's previous answer to this request (message_end, the tool call and its result,
// turn_end, then context and before_provider_request of the request). The first two requests
// are left out of the steady state (the first sight of the session, the first turn's entries).
import * as fs from "node:fs";
import * as path from "node:path";

import { scriptedAgentProvider } from "../../scripts/faux-models.mjs";
import { ALL_FOUR_MECHANISMS, ai, makeWorkspace, repoRoot, startSession, toolCalls, writeJson } from "./support.mjs";

/**
 * Runs `requests` scripted requests; returns the crossings of the session start, of each
 * request (names, in order), and of the steady requests (the third on).
 */
export async function countCrossings(requests, { payload = false } = {}) {
	const log = (globalThis.__solPiCrossings ??= []);
	const cuts = [];
	const ws = makeWorkspace();
	try {
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), ALL_FOUR_MECHANISMS);
		const reply = (index) => {
			cuts.push(log.length);
			return index === requests - 1 ? ai.fauxAssistantMessage("done") : toolCalls(["bash", { command: `printf 'step ${index}\\n'` }, `call-${index}`]);
		};
		const replies = Array.from({ length: requests }, (_, index) => () => reply(index));
		let next = 0;
		const faux = payload ? scriptedAgentProvider(ai, { next: () => reply(next++), summary: () => ai.fauxAssistantMessage("summary"), replies: requests }) : undefined;
		const extensionPath = path.join(repoRoot, "sol-napi", "test", "fixtures", "counting-extension.ts");
		const start = log.length;
		const run = await startSession({ ...ws, extensionPath, replies, faux });
		const started = log.length - start;
		await run.session.prompt("run the steps");
		const answered = run.session.getLastAssistantText();
		const errors = run.errors.length;
		run.close();
		if (answered !== "done" || errors > 0 || cuts.length !== requests) {
			throw new Error(`the scripted run did not finish as scripted (answer ${JSON.stringify(answered)}, ${errors} extension errors, ${cuts.length} requests)`);
		}
		const perRequest = cuts.map((cut, index) => log.slice(index === 0 ? start + started : cuts[index - 1], cut));
		return { started, perRequest, steady: perRequest.slice(2) };
	} finally {
		fs.rmSync(ws.root, { recursive: true, force: true });
	}
}

// One handler per Pi event, in a real Pi AgentSession (faux provider): with every mechanism on,
// SoL-Pi registers each event it takes with Pi once.
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";

import { ALL_FOUR_MECHANISMS, makeWorkspace, piVersion, startSession, writeJson } from "./support.mjs";

test(`Pi ${piVersion}: with all four mechanisms on, SoL-Pi registers each event it takes with Pi once`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), ALL_FOUR_MECHANISMS);
	const run = await startSession(ws);
	t.after(() => run.close());
	await run.session.prompt("hello");
	assert.equal(run.session.getLastAssistantText(), "done");
	assert.deepEqual(run.errors, []);
	const events = [...run.solPi.handlers.keys()];
	// Each mechanism's events, the savings book's included (Pi 1.x gives it `context_with_system`).
	for (const event of ["session_start", "context", "message_end", "turn_end", "tool_call", "tool_result", "before_provider_request", "agent_settled"]) {
		assert.ok(events.includes(event), `${event} is registered`);
	}
	for (const [event, handlers] of run.solPi.handlers) assert.equal(handlers.length, 1, `${event}: one registration`);
});

// SoL-Pi's one door for Pi's events (`sol-pi/events.ts`), in a real Pi AgentSession (faux
// provider): one `pi.on` registration per event, the handlers behind it called as Pi calls an
// extension's handlers.
import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";

import { ALL_FOUR_MECHANISMS, ai, makeWorkspace, piVersion, repoRoot, startSession, writeJson } from "./support.mjs";

const routedEntries = (run) =>
	run.session.sessionManager
		.getEntries()
		.filter((entry) => entry.type === "custom" && entry.customType === "routed-events")
		.map((entry) => entry.data);

test(`Pi ${piVersion}: handlers behind one registration: a throwing one does not stop the next, answers carry on, a late one waits, a cancel wins, a second tool_result is refused`, async (t) => {
	const ws = makeWorkspace(t);
	const lastUserTexts = [];
	const reply = (context) => {
		const last = context.messages.filter((m) => m.role === "user").at(-1);
		lastUserTexts.push(typeof last.content === "string" ? last.content : last.content.map((part) => part.text).join(""));
		return ai.fauxAssistantMessage("done");
	};
	const extensionPath = path.join(repoRoot, "sol-napi", "test", "fixtures", "routed-events-extension.ts");
	const run = await startSession({ ...ws, extensionPath, replies: [reply] });
	t.after(() => run.close());
	// One registration per event with Pi, whatever the number of handlers behind it.
	assert.deepEqual([...run.solPi.handlers.keys()].sort(), ["context", "message_end", "session_before_compact", "session_start", "tool_result"]);
	for (const [event, handlers] of run.solPi.handlers) assert.equal(handlers.length, 1, event);

	await run.session.prompt("hello");
	assert.deepEqual(lastUserTexts, ["edited in place"], "the second context handler's edit reached the provider");
	assert.equal(run.session.getLastAssistantText(), "changed by the first message_end", "Pi kept the first message_end handler's answer");
	assert.deepEqual(
		run.errors.map((error) => [error.event, error.error]),
		[["context", "first context handler fails"]],
		"Pi reported the failure once",
	);
	const entries = routedEntries(run);
	assert.deepEqual(
		entries.map((entry) => entry.handler),
		["first session_start", "second context", "third context", "second message_end"],
		"the handler added during the first session_start was not called by it",
	);
	assert.equal(entries[0].refused, 'SoL-Pi: a second "tool_result" handler, whose answers cannot be combined');
	assert.equal(entries[2].saw, "edited in place", "the third context handler saw the second one's edit");
	assert.equal(entries[3].saw, "changed by the first message_end", "the second message_end handler saw the first one's answer");

	// The next session_start calls the handler added during the first one.
	const ctx = {};
	await run.solPi.handlers.get("session_start")[0]({ type: "session_start" }, ctx);
	assert.deepEqual(routedEntries(run).at(-1), { handler: "late session_start", starts: 2 });
	// The first cancel wins over an earlier answer that did not cancel.
	const answer = await run.solPi.handlers.get("session_before_compact")[0]({ type: "session_before_compact", reason: "manual" }, ctx);
	assert.deepEqual(answer, { cancel: true });
});

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

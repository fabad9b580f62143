// ObservationPack's recent-outputs placement (`"keepRecentOutputs": 2`) through a real Pi
// AgentSession (faux provider) on the Pi under test: medium results (under 10 KiB) are packed with
// the compact placeholder; the newest two tool outputs stay in full, and an older one the model
// quoted stays too; a prompt sent after the cache lifetime replaces what waits (the rewrite is
// free then); the ledger names each reason; the placeholder stays byte-identical; and obs_recall
// gives the original back exactly.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { assertReplayedAsLive, npmReplay } from "./replay-check.mjs";
import { ai, makeWorkspace, pi, piVersion, repoRoot, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

// About 3.4 KB each: medium outputs, under ObservationPack's 10 KiB threshold.
const medium = (word) => `seq -f "${word} step %g: compiling a module with a fairly long line of output" 1 50`;
const quotedLine = "beta step 7: compiling a module with a fairly long line of output";
const textOfMessage = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("\n"));

/** Scripted replies that record, per request, the text the provider got for each tool result id. */
function script() {
	const sent = [];
	const record = (context) => sent.push(new Map(context.messages.filter((m) => m.role === "toolResult").map((m) => [m.toolCallId, textOfMessage(m)])));
	const step = (reply) => (context) => {
		record(context);
		return reply;
	};
	const replies = [
		// Prompt "go": four medium outputs, then a reply that quotes a line of the second.
		step(toolCalls(["bash", { command: medium("alpha") }, "a"])),
		step(toolCalls(["bash", { command: medium("beta") }, "b"])),
		step(toolCalls(["bash", { command: medium("gamma") }, "c"])),
		step(toolCalls(["bash", { command: medium("delta") }, "d"])),
		step(ai.fauxAssistantMessage(`The second run printed:\n${quotedLine}\nso the build is fine.`)),
		// Prompt "later", after the cache lifetime: recall the first output by the id its placeholder names.
		(context) => {
			record(context);
			const placeholder = context.messages.find((m) => m.toolCallId === "a");
			const id = /"id":"(obs_[^"]+)"/.exec(textOfMessage(placeholder))?.[1];
			return toolCalls(["obs_recall", { id: id ?? "missing" }, "r"]);
		},
		step(ai.fauxAssistantMessage("done")),
	];
	return { sent, replies };
}

test(`Pi ${piVersion}: with keepRecentOutputs, the newest and the quoted outputs stay and the rest ride a prompt after the cache lifetime`, async (t) => {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true, keepRecentOutputs: 2 });
	const sessionDir = path.join(ws.root, "sessions");
	const sessionManager = pi.SessionManager.create(ws.cwd, sessionDir);
	const { sent, replies } = script();
	const latePrompt = path.join(repoRoot, "sol-napi", "test", "fixtures", "late-prompt-extension.ts");
	const session = await startSession({ ...ws, sessionManager, replies, earlierExtensionPaths: [latePrompt] });
	t.after(() => session.close());
	await session.session.prompt("go");
	// The replay below reads a prompt stamped even one millisecond after the answer before it as
	// late: make sure the clock has moved past that answer's stamp.
	const answered = session.session.messages.at(-1).timestamp;
	while (Date.now() <= answered) await new Promise((resolve) => setImmediate(resolve));
	await session.session.prompt("later");
	assert.deepEqual(session.errors, []);

	const results = toolResults(session.session);
	const original = Object.fromEntries(["a", "b", "c", "d"].map((id) => [id, resultText(results.get(id))]));
	for (const text of Object.values(original)) assert.ok(Buffer.byteLength(text) > 3_000 && Buffer.byteLength(text) < 10_240);
	assert.ok(original.b.includes(quotedLine));

	// Requests 1-5 answer "go", 6-7 answer "later". Every result went in full through the first prompt: the
	// two newest are kept, and replacing an older one would rewrite more than it saves in so short a session.
	const forms = (request) => Object.fromEntries(["a", "b", "c", "d"].map((id) => [id, sent[request - 1].get(id) === original[id] ? "full" : sent[request - 1].get(id)]));
	for (let request = 2; request <= 5; request++) assert.ok(Object.values(forms(request)).every((form) => form === "full" || form === undefined), `request ${request}`);
	// Request 6 starts a prompt after the cache lifetime: a rides along as its compact placeholder; b
	// (quoted, 2 newer outputs < 2 × 3) and c, d (the newest two) stay in full.
	const at6 = forms(6);
	assert.deepEqual([at6.b, at6.c, at6.d], ["full", "full", "full"]);
	assert.match(at6.a, /^\[tool output archived: 50 lines, \d+ bytes, ~\d+ tokens\]\nfirst line: alpha step 1: compiling/);
	assert.ok(at6.a.length < 300);
	// Request 7 sends the same placeholder byte for byte, and the recall gave the original exactly.
	assert.equal(forms(7).a, at6.a);
	assert.equal(resultText(results.get("r")).includes(original.a), true);

	const storage = path.join(fs.realpathSync(sessionDir), "sol-pi", sessionManager.getSessionId(), "observation-pack");
	const ledger = fs.readFileSync(path.join(storage, "ledger.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
	// Output a first went with request 2, b with 3, c with 4, d with 5.
	const first = { [original.a]: 2, [original.b]: 3, [original.c]: 4, [original.d]: 5 };
	const idOf = (text) => ledger.find((record) => record.event === "full" && record.sendNumber === 1 && record.request === first[text])?.id;
	const events = (text) => ledger.filter((record) => record.id === idOf(text) && record.event !== "recall").map((record) => [record.event, record.request, record.placement]);
	assert.deepEqual(events(original.a), [
		["full", 2, undefined],
		["full", 3, undefined],
		// Request 4: two outputs are newer, so it is no longer recent, and replacing it alone would not pay.
		["held", 4, "deferred_economic"],
		["placeholder", 6, "rides_rewrite"],
	]);
	assert.deepEqual(events(original.c), [
		["full", 4, undefined],
		["full", 5, undefined],
		["held", 6, "recent"],
	]);
	assert.deepEqual(events(original.d), [
		["full", 5, undefined],
		["full", 6, undefined],
		["held", 7, "recent"],
	]);
	assert.ok(ledger.some((record) => record.event === "recall" && record.id === idOf(original.a)));

	// The replay of this file, told the session ran with keepRecentOutputs 2, books what the extension
	// booked. The session file keeps the prompt's own time (the fixture moved it only in what the
	// request carried), so the replay is told the cache lasts no time at all: the prompt came after it.
	const asLive = npmReplay("--json", "--estimated", "--recent-outputs", "--keep-recent-outputs", "2", "--cache-lifetime", "0", sessionManager.getSessionFile());
	assert.equal(asLive.status, 0, asLive.stderr);
	const [replayed] = JSON.parse(asLive.stdout).sessions;
	assertReplayedAsLive(replayed.branches[0], `recent-outputs session on Pi ${piVersion}`, replayed.systemPromptRecorded);
	assert.ok(replayed.branches[0].solPi.steps[1].tokensRemoved > 0);
});

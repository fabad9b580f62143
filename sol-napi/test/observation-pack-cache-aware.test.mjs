// ObservationPack's cache-aware placement (`"cacheAware": true`) through a real Pi AgentSession
// (faux provider) on the Pi under test: two large results in consecutive turns are not replaced
// one request after the other (each replacement rewriting the cached suffix), but together, once
// the saving over the expected remaining requests beats the rewrite; the ledger says why; the
// placeholder stays byte-identical once shown; and the replay of the session file with
// `--cache-aware` gives the live figures. When another model answers, its provider has none of
// the prefix cached: a result held back goes as its placeholder with that request.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { assertReplayedAsLive, npmReplay } from "./replay-check.mjs";
import { ai, makeWorkspace, pi, piVersion, resultText, startSession, toolCalls, toolResults, writeJson } from "./support.mjs";

// About 38 KB each (under Pi's 50 KB bash truncation), different content.
const big = (word) => `seq -f "${word} step %g: compiling a module with a fairly long line of output" 1 600`;
const textOfMessage = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("\n"));

/** Scripted replies that record, per request, the text the provider got for each tool result id; `afterwards` more answers for later prompts. */
function script(later, afterwards = 0) {
	const sent = [];
	const step = (reply) => (context) => {
		sent.push(new Map(context.messages.filter((m) => m.role === "toolResult").map((m) => [m.toolCallId, textOfMessage(m)])));
		return reply;
	};
	const replies = [step(toolCalls(["bash", { command: big("build") }, "a"])), step(toolCalls(["bash", { command: big("check") }, "b"]))];
	for (let i = 0; i < later; i++) replies.push(step(toolCalls(["bash", { command: "true" }, `t${i}`])));
	replies.push(step(ai.fauxAssistantMessage("done")));
	for (let i = 0; i < afterwards; i++) replies.push(step(ai.fauxAssistantMessage(`done again ${i}`)));
	return { sent, replies };
}

async function run(t, cacheAware) {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true, cacheAware });
	const sessionDir = path.join(ws.root, "sessions");
	const sessionManager = pi.SessionManager.create(ws.cwd, sessionDir);
	const { sent, replies } = script(5);
	const session = await startSession({ ...ws, sessionManager, replies });
	t.after(() => session.close());
	await session.session.prompt("go");
	assert.deepEqual(session.errors, []);
	const results = toolResults(session.session);
	const original = { a: resultText(results.get("a")), b: resultText(results.get("b")) };
	const storage = path.join(fs.realpathSync(sessionDir), "sol-pi", sessionManager.getSessionId(), "observation-pack");
	const ledger = fs.readFileSync(path.join(storage, "ledger.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
	return { sent, original, ledger, file: sessionManager.getSessionFile() };
}

/** For each request from the first that carries `id`: "full", or "placeholder" (checked byte-stable). */
function forms(sent, id, original) {
	let placeholder;
	return sent
		.filter((request) => request.has(id))
		.map((request) => {
			const text = request.get(id);
			if (text === original) return "full";
			assert.match(text, /^\[large tool result replaced/);
			placeholder ??= text;
			assert.equal(text, placeholder, "a shown placeholder is sent again byte for byte");
			return "placeholder";
		});
}

test(`Pi ${piVersion}: with cacheAware, two large results are replaced together once the saving beats the rewrite`, async (t) => {
	const { sent, original, ledger, file } = await run(t, true);
	assert.ok(Buffer.byteLength(original.a) > 30_000 && original.a !== original.b);
	// a: full on its first two requests, held on its third (b, still in full after it, would be rewritten), replaced with b on its fourth.
	assert.deepEqual(forms(sent, "a", original.a), ["full", "full", "full", "placeholder", "placeholder", "placeholder", "placeholder"]);
	assert.deepEqual(forms(sent, "b", original.b), ["full", "full", "placeholder", "placeholder", "placeholder", "placeholder"]);
	const events = (index) => ledger.filter((record) => record.id === ledger.find((r) => r.event === "full" && r.sendNumber === 1 && r.request === index)?.id);
	const [a, b] = [events(2), events(3)];
	assert.deepEqual(
		a.map((r) => [r.event, r.request, r.placement]),
		[
			["full", 2, undefined],
			["full", 3, undefined],
			["held", 4, "deferred_economic"],
			["placeholder", 5, "economic"],
		],
	);
	assert.deepEqual(
		b.map((r) => [r.event, r.request, r.placement]),
		[
			["full", 3, undefined],
			["full", 4, undefined],
			["placeholder", 5, "economic"],
		],
	);

	// The replay of this file, told the session was cache-aware, books what the extension booked.
	const replayed = npmReplay("--json", "--cache-aware", file);
	assert.equal(replayed.status, 0, replayed.stderr);
	const [branch] = JSON.parse(replayed.stdout).sessions[0].branches;
	// Priced from Pi's estimate as the live book is, every layer is the live book's.
	const asLive = npmReplay("--json", "--estimated", "--cache-aware", file);
	assert.equal(asLive.status, 0, asLive.stderr);
	const [session] = JSON.parse(asLive.stdout).sessions;
	assertReplayedAsLive(session.branches[0], `cache-aware session on Pi ${piVersion}`, session.systemPromptRecorded);
	assert.ok(branch.solPi.steps[1].tokensRemoved > 0);
	const row = (policy) => branch.policies.find((r) => r.policy === policy);
	// Its cache-aware row is SoL-Pi's own here, and it costs less than the fixed rule's.
	assert.equal(row("cacheAwarePack").cost, row("observationPack").cost);
	// The two placements compared on Pi's estimate: priced from the reports, the replay takes its
	// own SoL-Pi rows as what was sent, which only the run's placement is.
	const estimated = (...args) => JSON.parse(npmReplay("--json", "--estimated", ...args, file).stdout).sessions[0].branches[0];
	const awareRow = estimated("--cache-aware").policies.find((r) => r.policy === "cacheAwarePack");
	const fixedRow = estimated().policies.find((r) => r.policy === "observationPack");
	assert.ok(awareRow.cost < fixedRow.cost, `cache-aware ${awareRow.cost} against fixed ${fixedRow.cost}`);
});

test(`Pi ${piVersion}: without cacheAware the fixed rule replaces each result on its third request`, async (t) => {
	const { sent, original, ledger } = await run(t, false);
	assert.deepEqual(forms(sent, "a", original.a), ["full", "full", "placeholder", "placeholder", "placeholder", "placeholder", "placeholder"]);
	assert.deepEqual(forms(sent, "b", original.b), ["full", "full", "placeholder", "placeholder", "placeholder", "placeholder"]);
	assert.ok(ledger.every((record) => record.event !== "held" && record.placement === undefined));
});

test(`Pi ${piVersion}: with cacheAware, a held result goes with the first request another model answers`, async (t) => {
	const forSession = async (switched) => {
		const ws = makeWorkspace(t);
		writeJson(path.join(ws.cwd, ".pi", "sol-pi.json"), { version: 1, observationPack: true, cacheAware: true });
		const faux = ai.fauxProvider({ provider: "sol-faux", models: [{ id: "faux-1", contextWindow: 100000 }, { id: "faux-2", contextWindow: 100000 }] });
		const { sent, replies } = script(0, 1);
		faux.setResponses(replies);
		const run = await startSession({ ...ws, faux });
		t.after(() => run.close());
		await run.session.prompt("go");
		if (switched) await run.session.setModel(faux.getModel("faux-2"));
		await run.session.prompt("and again");
		assert.deepEqual(run.errors, []);
		assert.equal(run.session.getLastAssistantText(), "done again 0");
		return forms(sent, "a", resultText(toolResults(run.session).get("a")));
	};
	// The same model: the result is held in full on its third request (replacing it would rewrite the cached b after it).
	assert.deepEqual(await forSession(false), ["full", "full", "full"]);
	// Another model answers the third: nothing of the prefix is cached for it, so the result goes as its placeholder.
	assert.deepEqual(await forSession(true), ["full", "full", "placeholder"]);
});

// Online Context Compact through a real Pi AgentSession (faux provider that calls
// onPayload, so before_provider_request fires) on the Pi install under test:
// update_plan, request counting, boundary compactions that continue before the
// original prompt() returns, deferred decisions, native refusals, failures,
// cancellation and Pi's threshold compaction while a boundary is selected.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { ai, makeWorkspace, pi, piVersion } from "./support.mjs";
import {
	DECISION_EVENT,
	STATE_TYPE,
	compactions,
	contextText,
	continuations,
	enableOcc,
	entries,
	indexOf,
	lastAssistantEntry,
	lastState,
	piMajor,
	plan,
	skips,
	solPiExtension,
	solPiHandler,
	startOccSession,
	states,
	textOf,
	toolCall,
} from "./occ-support.mjs";

// About 3,000 tokens of history that a compaction can remove.
const LONG_PROMPT = `Please carry out the task.\n${"Some background context for the task. ".repeat(320)}`;
const PROGRESS = { files_changed: ["src/a.rs"], verification: ["cargo test: 3 passed"], decisions: ["keep the API"] };

const toolResultText = (run, id) => {
	const entry = entries(run).find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolCallId === id);
	return entry ? { text: textOf(entry.message), isError: entry.message.isError, details: entry.message.details } : undefined;
};

/** Register a, complete it (a boundary), then `after` replies. */
function oneBoundary(after) {
	return [
		toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"]), "p1"),
		toolCall("update_plan", { ...plan(["a", "completed"], ["b", "in_progress"]), progress: PROGRESS }, "p2"),
		...after,
	];
}

const seesContinuation = (context) => contextText(context).includes("[Online Context Compact]");

test(`Pi ${piVersion}: update_plan validates its bounds in code points and returns the plan snapshot with advice`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 1000);
	const emojiId = "😀".repeat(16_384); // 16,384 code points, 32,768 UTF-16 units, 65,536 bytes
	const run = await startOccSession({
		...ws,
		script: [
			toolCall("update_plan", plan([emojiId, "pending", "Long id"]), "ok-emoji"),
			toolCall("update_plan", plan([`${emojiId}😀`, "pending", "Too long"]), "too-long"),
			toolCall("update_plan", { steps: [] }, "empty"),
			toolCall("update_plan", plan(["a", "in_progress"], ["b", "in_progress"]), "two-in-progress"),
			toolCall("update_plan", { ...plan(["a", "completed"], ["b", "in_progress"]), progress: PROGRESS }, "boundary"),
			toolCall("update_plan", plan(["a", "completed"], ["b", "in_progress"], ["c", "completed"]), "history"),
			"done",
		],
	});
	t.after(() => run.close());
	await run.session.prompt("plan it");
	assert.deepEqual(run.errors, []);

	const ok = toolResultText(run, "ok-emoji");
	assert.equal(ok.isError, false, ok.text.slice(0, 200));
	assert.ok(ok.text.startsWith('<sol-pi-plan task_status="active">{"steps":[{"id":"😀'), ok.text.slice(0, 80));
	const tooLong = toolResultText(run, "too-long");
	assert.equal(tooLong.isError, true);
	assert.ok(!tooLong.text.startsWith("<sol-pi-plan"), tooLong.text.slice(0, 200));
	const empty = toolResultText(run, "empty");
	assert.equal(empty.isError, true);

	const two = toolResultText(run, "two-in-progress");
	assert.equal(two.isError, false);
	assert.equal(two.text.split("\n")[0], '<sol-pi-plan task_status="active">{"steps":[{"id":"a","goal":"Goal a","status":"in_progress"},{"id":"b","goal":"Goal b","status":"in_progress"}]}</sol-pi-plan>');
	assert.ok(two.text.split("\n").length >= 2, `an advice line about one in_progress step: ${two.text}`);

	const boundary = toolResultText(run, "boundary");
	assert.equal(boundary.details.boundary, true);
	assert.deepEqual(boundary.details.completed_step_ids, ["a"]);
	assert.equal(boundary.details.progress_recorded, true);
	assert.equal(boundary.details.task_status, "active");

	const history = toolResultText(run, "history");
	assert.equal(history.details.boundary, false, "a step that first appears completed is history");
	assert.deepEqual(history.details.completed_step_ids, []);

	// The ratio is high: the boundary was evaluated and deferred.
	assert.equal(run.decisions.length, 1);
	assert.equal(run.decisions[0].abort, false);
	assert.deepEqual(compactions(run), []);
	assert.equal(run.session.getLastAssistantText(), "done");
});

test(`Pi ${piVersion}: a state save that fails while update_plan runs is reported once, the tool still returns the plan, and the next save holds it`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 12.5);
	const sessionManager = pi.SessionManager.inMemory(ws.cwd);
	const append = sessionManager.appendCustomEntry.bind(sessionManager);
	const failed = [];
	sessionManager.appendCustomEntry = (customType, data) => {
		// The first snapshot that holds a plan cannot be written.
		if (customType === STATE_TYPE && data?.plan?.length > 0 && failed.length === 0) {
			failed.push(data);
			throw new Error("the session file is not writable");
		}
		return append(customType, data);
	};
	const run = await startOccSession({
		...ws,
		sessionManager,
		script: [toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"]), "p1"), "done"],
	});
	t.after(() => run.close());
	const stderr = [];
	const write = process.stderr.write;
	process.stderr.write = (chunk, ...rest) => {
		stderr.push(String(chunk));
		return write.call(process.stderr, chunk, ...rest);
	};
	try {
		await run.session.prompt("plan it");
	} finally {
		process.stderr.write = write;
	}
	assert.deepEqual(run.errors, []);
	assert.equal(failed.length, 1, "the plan's snapshot was attempted once");
	const result = toolResultText(run, "p1");
	assert.equal(result.isError, false, `the model gets the plan, not an internal error: ${result.text}`);
	assert.ok(result.text.startsWith('<sol-pi-plan task_status="active">'), result.text);
	const reports = stderr.filter((line) => line.includes("Online Context Compact") && line.includes("the session file is not writable"));
	assert.equal(reports.length, 1, `reported once: ${stderr.join("")}`);
	// Nothing is lost: the next snapshot (the next counted request) holds the plan.
	assert.deepEqual(lastState(run).plan.map((step) => step.id), ["a", "b"]);
	assert.equal(lastState(run).requestCount, 2);
});

test(`Pi ${piVersion}: requests are counted once per agent request, the payload is never changed`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 12.5);
	const run = await startOccSession({
		...ws,
		script: [toolCall("update_plan", plan(["a", "in_progress"]), "p1"), toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"]), "p2"), "done"],
	});
	t.after(() => run.close());
	await run.session.prompt("count");
	await Promise.all(run.payloads.map((p) => p.done));
	assert.deepEqual(run.errors, []);
	assert.equal(run.agentCalls().length, 3);
	assert.equal(run.payloads.length, 3, "before_provider_request fired once per agent request");
	for (const p of run.payloads) assert.deepEqual(p.result ?? p.payload, p.payload, "the payload is unchanged");
	const state = lastState(run);
	assert.equal(state.requestCount, 3);
	assert.equal(state.version, 1);
	// Each counted request persisted a snapshot, and the plan updates did too.
	assert.ok(states(run).length >= 3, `${states(run).length} snapshots`);
	assert.deepEqual(state.plan.map((s) => s.id), ["a", "b"]);

	// A second prompt continues the count; a steering CORRECTION: drops the plan.
	run.calls.length = 0;
	await run.session.prompt("CORRECTION: start over");
	assert.equal(lastState(run).requestCount, 4);
	assert.deepEqual(lastState(run).plan, []);
});

test(`Pi ${piVersion}: a boundary compacts natively and the task continues before prompt() returns`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	let instructions;
	const run = await startOccSession({
		...ws,
		script: oneBoundary([(context) => (seesContinuation(context) ? "all done after compaction" : "no continuation seen")]),
		extensionFactories: [
			(api) =>
				api.on("session_before_compact", (event) => {
					instructions = event.customInstructions;
				}),
		],
	});
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);

	assert.equal(run.decisions.length, 1);
	assert.equal(run.decisions[0].abort, true, JSON.stringify(run.decisions[0].decision));
	assert.equal(run.decisions[0].reason, "economic");
	const [compaction, ...more] = compactions(run);
	assert.ok(compaction, "a compaction entry");
	assert.deepEqual(more, []);
	assert.match(instructions, /^This compaction runs at a completed step/);
	assert.match(instructions, /<untrusted-progress-evidence>[\s\S]*src\/a\.rs[\s\S]*<\/untrusted-progress-evidence>/);
	assert.ok(run.events.includes("before_compact:manual"), run.events.join(","));

	const [continuation] = continuations(run);
	assert.ok(continuation, "the hidden continuation was sent");
	assert.equal(continuation.display, false);
	assert.match(textOf(continuation), /^\[Online Context Compact\] The conversation was compacted/);
	assert.ok(indexOf(run, continuation) > indexOf(run, compaction));
	const final = lastAssistantEntry(run);
	assert.equal(textOf(final.message), "all done after compaction");
	assert.ok(indexOf(run, final) > indexOf(run, continuation), "the final answer comes after the continuation");
	assert.equal(run.session.getLastAssistantText(), "all done after compaction");
	assert.equal(run.agentCalls().length, 3);
	assert.ok(run.summaryCalls().length >= 1);
	assert.ok(run.session.isStreaming === false || run.session.isStreaming === undefined);

	const state = lastState(run);
	assert.equal(state.nativeCompactionCount, 1);
	assert.deepEqual(state.pendingProgress, []);
	assert.deepEqual(state.plan.map((s) => [s.id, s.status]), [["a", "completed"], ["b", "in_progress"]], "the plan survives compaction");
	// Requests: p1, p2, the continuation; the aborted build after the boundary is not counted.
	assert.equal(state.requestCount, 3);

	// The estimate never exceeds what Pi removed, and it predicted Pi's own cut.
	const estimate = run.decisions[0].estimate;
	assert.equal(estimate.firstKeptEntryId, compaction.firstKeptEntryId);
	assert.ok(estimate.removableTokens > 1000, JSON.stringify(estimate));
	assert.ok(estimate.removableTokens <= compaction.tokensBefore, `${estimate.removableTokens} <= ${compaction.tokensBefore}`);
});

test(`Pi ${piVersion}: the removable estimate is bounded by what Pi summarized`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	let prepared;
	const { pi } = await import("./support.mjs");
	const run = await startOccSession({
		...ws,
		script: oneBoundary(["done"]),
		extensionFactories: [
			(api) =>
				api.on("session_before_compact", (event) => {
					const p = event.preparation;
					const removed = [...p.messagesToSummarize, ...(p.turnPrefixMessages ?? [])].reduce((sum, m) => sum + pi.estimateTokens(m), 0);
					prepared = { removed, firstKeptEntryId: p.firstKeptEntryId };
				}),
		],
	});
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.ok(prepared, "Pi prepared a compaction");
	const estimate = run.decisions[0].estimate;
	assert.equal(estimate.firstKeptEntryId, prepared.firstKeptEntryId);
	assert.ok(estimate.removableTokens <= prepared.removed, `${estimate.removableTokens} <= ${prepared.removed}`);
	assert.ok(estimate.removableTokens > 0);
});

async function twoConsecutiveBoundaries(t, replyTimestamps) {
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	const filler = "More work output for the second step. ".repeat(200);
	const run = await startOccSession({
		...ws,
		replyTimestamps,
		script: [
			toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"], ["c", "pending"]), "p1"),
			toolCall("update_plan", plan(["a", "completed"], ["b", "in_progress"], ["c", "pending"]), "p2"),
			// After the first compaction: work on b with enough requests to pass the cooldown.
			(context) =>
				seesContinuation(context)
					? ai.fauxAssistantMessage([ai.fauxText(filler), ai.fauxToolCall("update_plan", plan(["a", "completed"], ["b", "in_progress"], ["c", "pending"]), { id: "p3" })], { stopReason: "toolUse" })
					: "lost",
			toolCall("update_plan", plan(["a", "completed"], ["b", "in_progress"], ["c", "pending"]), "p4"),
			toolCall("update_plan", plan(["a", "completed"], ["b", "completed"], ["c", "in_progress"]), "p5"),
			(context) => (seesContinuation(context) ? "finished after two compactions" : "lost"),
		],
	});
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.deepEqual(
		run.decisions.map((d) => [d.abort, d.reason]),
		[
			[true, "economic"],
			[true, "economic"],
		],
	);
	assert.equal(compactions(run).length, 2);
	const sent = continuations(run);
	assert.equal(sent.length, 2);
	assert.ok(indexOf(run, sent[0]) > indexOf(run, compactions(run)[0]));
	assert.ok(indexOf(run, sent[1]) > indexOf(run, compactions(run)[1]));
	const final = lastAssistantEntry(run);
	assert.equal(textOf(final.message), "finished after two compactions");
	assert.ok(indexOf(run, final) > indexOf(run, sent[1]));
	assert.equal(run.session.getLastAssistantText(), "finished after two compactions");
	assert.equal(lastState(run).nativeCompactionCount, 2);
	assert.equal(run.events.filter((e) => e === "agent_settled").length, 3, run.events.join(","));
}

test(`Pi ${piVersion}: two consecutive boundaries compact twice and continue each time`, (t) => twoConsecutiveBoundaries(t, "provider"));

// Messages Pi makes in one millisecond share their identity (role and timestamp); the estimate
// tells them apart by order, so a fast provider still gets its boundaries priced.
test(`Pi ${piVersion}: a provider answering a whole run within one millisecond still compacts at both boundaries`, (t) =>
	twoConsecutiveBoundaries(t, "same-ms"));

test(`Pi ${piVersion}: a high cache price defers the boundary: no abort, no compaction`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 1_000_000);
	const run = await startOccSession({ ...ws, script: oneBoundary(["finished without compaction"]) });
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.equal(run.decisions.length, 1);
	assert.equal(run.decisions[0].abort, false);
	assert.equal(run.decisions[0].reason, "deferred_economic");
	assert.deepEqual(compactions(run), []);
	assert.deepEqual(continuations(run), []);
	assert.equal(run.summaryCalls().length, 0);
	assert.equal(run.session.getLastAssistantText(), "finished without compaction");
});

test(`Pi ${piVersion}: Pi's refusal "Nothing to compact" is recorded as a skip and the task resumes once`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	// OCC estimates with its explicit 150-token tail and selects the boundary; Pi's own
	// compaction keeps 1,000,000 tokens and refuses.
	const run = await startOccSession({
		...ws,
		explicitKeepRecent: true,
		settings: { compaction: { enabled: false, keepRecentTokens: 1_000_000 } },
		script: oneBoundary([
			(context) => (contextText(context).includes("Pi skipped the compaction") ? toolCall("update_plan", plan(["a", "completed"], ["b", "completed"]), "p3") : "no skip reminder"),
			"resumed after skip",
		]),
	});
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.equal(run.decisions[0].abort, true, JSON.stringify(run.decisions[0]));
	assert.deepEqual(compactions(run), []);
	const [skip, ...moreSkips] = skips(run);
	assert.ok(skip, "a skip entry");
	assert.deepEqual(moreSkips, []);
	assert.equal(skip.data.reason, "nothing_to_compact");
	assert.equal(skip.data.message, "Nothing to compact (session too small)");
	const sent = continuations(run);
	assert.equal(sent.length, 1, "resumed exactly once");
	assert.match(textOf(sent[0]), /Pi skipped the compaction/);
	// The plan-only turn after the skip completes b: retries are blocked until real work or input.
	assert.deepEqual(run.decisions.slice(1), []);
	assert.equal(run.session.getLastAssistantText(), "resumed after skip");
	assert.equal(lastState(run).nativeCompactionCount, 0);
	assert.equal(run.summaryCalls().length, 0);
});

test(`Pi ${piVersion}: a failing compaction is reported and the task still continues`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	const run = await startOccSession({
		...ws,
		summary: () => ai.fauxAssistantMessage("", { stopReason: "error", errorMessage: "boom" }),
		script: oneBoundary([(context) => (contextText(context).includes("did not complete") ? "continued after failure" : "no failure reminder")]),
	});
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(compactions(run), []);
	assert.deepEqual(skips(run), []);
	const sent = continuations(run);
	assert.equal(sent.length, 1);
	assert.match(textOf(sent[0]), /Compaction at the completed plan step did not complete/);
	assert.equal(run.session.getLastAssistantText(), "continued after failure");
	const reported = run.errors.map((e) => String(e.error));
	assert.equal(reported.length, 1, reported.join("\n"));
	assert.match(reported[0], /^Online Context Compact: the compaction at a completed plan step failed: .*boom/);
	assert.equal(run.errors[0].event, "agent_settled");
});

test(`Pi ${piVersion}: a cancelled compaction schedules no continuation`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	const run = await startOccSession({
		...ws,
		script: oneBoundary(["must not run"]),
		extensionFactories: [(api) => api.on("session_before_compact", () => ({ cancel: true }))],
	});
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.equal(run.decisions[0].abort, true);
	assert.deepEqual(compactions(run), []);
	assert.deepEqual(continuations(run), []);
	assert.deepEqual(skips(run), []);
	assert.equal(run.agentCalls().length, 2);
	assert.equal(run.summaryCalls().length, 0);
	// The next user prompt works normally.
	await run.session.prompt("anything else?");
	assert.equal(run.session.getLastAssistantText(), "must not run");
});

test(`Pi ${piVersion}: Pi's threshold compaction outside a selection is never cancelled`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	// Pi's own compaction is on, with a reserve that puts this small context over its threshold.
	const run = await startOccSession({
		...ws,
		settings: { compaction: { enabled: true, keepRecentTokens: 150, reserveTokens: 99_000 } },
		script: oneBoundary([(context) => (seesContinuation(context) ? "continued once" : "no continuation")]),
	});
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.equal(run.decisions[0].abort, true);
	// The boundary compaction (manual) ran first and continued once; Pi's threshold compaction
	// came later, with nothing selected, and was not cancelled.
	const manual = run.events.indexOf("before_compact:manual");
	const threshold = run.events.indexOf("before_compact:threshold");
	assert.ok(manual >= 0 && threshold > manual, run.events.join(","));
	assert.equal(run.events[manual + 1], "compact:manual", run.events.join(","));
	assert.equal(run.events[threshold + 1], "compact:threshold", run.events.join(","));
	assert.equal(continuations(run).length, 1);
});

test(`Pi ${piVersion}: while a boundary compaction is selected, SoL-Pi's session_before_compact cancels only "threshold"`, async (t) => {
	// The real session cannot produce Pi's threshold check inside the selection window (Pi 1.x
	// defers a turn requested from agent_settled until the settled handlers returned; 0.84.2
	// queues it), so SoL-Pi's registered handler is invoked directly, from the decision event
	// that the boundary's turn_end emits right after selecting the compaction.
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	let run;
	const whileSelected = [];
	const reasons = ["threshold", "manual", "overflow"];
	const beforeCompact = (reason) => solPiHandler(run, "session_before_compact")({ type: "session_before_compact", reason }, { mode: "print" });
	run = await startOccSession({
		...ws,
		script: oneBoundary([(context) => (seesContinuation(context) ? "continued once" : "no continuation")]),
		extensionFactories: [
			(api) =>
				api.events.on(DECISION_EVENT, (evaluation) => {
					if (evaluation.abort) for (const reason of reasons) whileSelected.push([reason, beforeCompact(reason)]);
				}),
		],
	});
	t.after(() => run.close());
	// Before any selection nothing is cancelled.
	assert.deepEqual(reasons.map((reason) => beforeCompact(reason)), [undefined, undefined, undefined]);
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.deepEqual(whileSelected, [
		["threshold", { cancel: true }],
		["manual", undefined],
		["overflow", undefined],
	]);
	// The selected boundary compaction itself (manual) still ran and continued.
	assert.equal(compactions(run).length, 1);
	assert.ok(run.events.includes("compact:manual"), run.events.join(","));
	assert.equal(continuations(run).length, 1);
	assert.equal(run.session.getLastAssistantText(), "continued once");
	// After the compaction settled nothing is selected: threshold is not cancelled any more.
	assert.deepEqual(reasons.map((reason) => beforeCompact(reason)), [undefined, undefined, undefined]);
});

test(`Pi ${piVersion}: a selection whose settlement finds Pi busy is dropped, recorded, and never compacts at a later settlement`, async (t) => {
	// Pi not idle at the agent_settled that ends the stopped run: SoL-Pi's agent_settled handler
	// sees isIdle() === false at that one settlement (a wrapper around the registered handler).
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	const run = await startOccSession({ ...ws, script: oneBoundary(["answer to the next prompt"]) });
	t.after(() => run.close());
	const handlers = solPiExtension(run).handlers.get("agent_settled");
	assert.equal(handlers.length, 1);
	const original = handlers[0];
	let settlements = 0;
	handlers[0] = (event, ctx) => {
		settlements += 1;
		const busy = settlements === 1 ? new Proxy(ctx, { get: (target, key) => (key === "isIdle" ? () => false : Reflect.get(target, key)) }) : ctx;
		return original(event, busy);
	};
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.equal(run.decisions.length, 1);
	assert.equal(run.decisions[0].abort, true);
	assert.equal(settlements, 1);
	const [skip, ...more] = skips(run);
	assert.ok(skip, "the dropped selection is recorded");
	assert.deepEqual(more, []);
	assert.equal(skip.data.reason, "not_idle_at_settle");
	assert.equal(skip.data.decisionReason, "economic");
	assert.deepEqual(compactions(run), []);
	assert.deepEqual(continuations(run), []);
	assert.equal(run.agentCalls().length, 2, "the run stopped at the boundary");

	// The next, unrelated settlement (idle) must not compact at its point.
	await run.session.prompt("what next?");
	assert.deepEqual(run.errors, []);
	assert.ok(settlements >= 2);
	assert.deepEqual(compactions(run), []);
	assert.equal(run.summaryCalls().length, 0);
	assert.deepEqual(continuations(run), []);
	assert.equal(run.session.getLastAssistantText(), "answer to the next prompt");
});

test(`Pi ${piVersion}: near the context window a boundary compacts for window protection despite a prohibitive cache price`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 1_000_000);
	// Window 18,000 with Pi's 16,384-token reserve: the ~4,500-token context is inside the reserve.
	const bigOutput = "Work output line with details. ".repeat(200);
	const run = await startOccSession({
		...ws,
		contextWindow: 18_000,
		script: [
			toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"]), "p1"),
			ai.fauxAssistantMessage([ai.fauxText(bigOutput), ai.fauxToolCall("update_plan", { ...plan(["a", "completed"], ["b", "in_progress"]), progress: PROGRESS }, { id: "p2" })], {
				stopReason: "toolUse",
			}),
			(context) => (seesContinuation(context) ? "continued after window protection" : "no continuation"),
		],
	});
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.equal(run.decisions.length, 1);
	const [evaluation] = run.decisions;
	assert.equal(evaluation.reason, "window_protection", JSON.stringify(evaluation));
	assert.equal(evaluation.abort, true);
	assert.equal(evaluation.decision.economic, false, "the economics alone would defer");
	assert.equal(evaluation.decision.windowProtection, true);
	assert.ok(evaluation.decision.contextTokens >= 18_000 - evaluation.reserveTokens, JSON.stringify(evaluation.decision));
	assert.equal(compactions(run).length, 1);
	assert.equal(continuations(run).length, 1);
	assert.equal(run.session.getLastAssistantText(), "continued after window protection");
	assert.equal(lastState(run).nativeCompactionCount, 1);
});

test(`Pi ${piVersion}: a before_provider_request without a context event (a cache-warming replay) is not counted`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 12.5);
	const run = await startOccSession({
		...ws,
		replayPayloads: true,
		script: [toolCall("update_plan", plan(["a", "in_progress"]), "p1"), toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"]), "p2"), "done"],
	});
	t.after(() => run.close());
	await run.session.prompt("count");
	await Promise.all(run.payloads.map((p) => p.done));
	assert.deepEqual(run.errors, []);
	assert.equal(run.agentCalls().length, 3);
	assert.equal(run.payloads.length, 6, "two before_provider_request per request");
	assert.equal(run.payloads.filter((p) => p.payload.replay).length, 3);
	for (const p of run.payloads) assert.deepEqual(p.result ?? p.payload, p.payload, "the payload is unchanged");
	assert.equal(lastState(run).requestCount, 3, "only the requests a context event announced");
});

test(`Pi ${piVersion}: tree navigation is refused while the boundary compaction runs and works after it settles`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 0);
	let run;
	let during;
	let target;
	run = await startOccSession({
		...ws,
		script: oneBoundary(["done after compaction"]),
		extensionFactories: [
			(api) =>
				api.on("session_before_compact", async (event) => {
					if (event.reason !== "manual" || during) return undefined;
					target = entries(run).find((e) => e.type === "message" && e.message.role === "user").id;
					const leaf = run.sessionManager.getLeafId();
					during = await run.session.navigateTree(target).then(
						(result) => ({ result, moved: run.sessionManager.getLeafId() !== leaf }),
						(error) => ({ error: String(error?.message ?? error), moved: run.sessionManager.getLeafId() !== leaf }),
					);
					return undefined;
				}),
		],
	});
	t.after(() => run.close());
	await run.session.prompt(LONG_PROMPT);
	assert.deepEqual(run.errors, []);
	assert.ok(during, "navigation was attempted during the compaction");
	assert.equal(during.moved, false, JSON.stringify(during));
	if (piMajor === 0) {
		// Pi 0.84.2 reports idle during an extension-requested compaction: SoL-Pi cancels.
		assert.deepEqual(during.result, { cancelled: true });
	} else {
		// Pi 1.x refuses navigation during a compaction itself.
		assert.match(during.error ?? "", /^Wait for the current compaction/, JSON.stringify(during));
	}
	assert.equal(compactions(run).length, 1, "the compaction completed");
	assert.equal(run.session.getLastAssistantText(), "done after compaction");
	// Once the compaction settled, navigation works.
	const leaf = run.sessionManager.getLeafId();
	const after = await run.session.navigateTree(target);
	assert.equal(after.cancelled, false);
	assert.notEqual(run.sessionManager.getLeafId(), leaf);
});

/** Runs `body` with everything written to stderr collected. */
async function collectingStderr(body) {
	const lines = [];
	const write = process.stderr.write;
	process.stderr.write = (chunk, ...rest) => {
		lines.push(String(chunk));
		return write.call(process.stderr, chunk, ...rest);
	};
	try {
		await body();
	} finally {
		process.stderr.write = write;
	}
	return lines;
}

test(`Pi ${piVersion}: a session file with a damaged state entry warns once, restores the newest readable state and loses nothing`, async (t) => {
	const ws = makeWorkspace(t);
	enableOcc(ws, 12.5);
	const sessionDir = path.join(ws.agentDir, "sessions");
	const first = await startOccSession({
		...ws,
		sessionManager: pi.SessionManager.create(ws.cwd, sessionDir),
		script: [toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"]), "p1"), "planned"],
	});
	await first.session.prompt("plan it");
	assert.deepEqual(first.errors, []);
	const saved = lastState(first);
	const file = first.sessionManager.getSessionFile();
	const leaf = entries(first).at(-1).id;
	first.close();
	assert.deepEqual(saved.plan.map((step) => step.id), ["a", "b"]);

	// A newer snapshot that no longer reads: its plan is not a list.
	const damaged = { type: "custom", id: "damaged-state", parentId: leaf, timestamp: new Date().toISOString(), customType: STATE_TYPE, data: { ...saved, plan: "broken" } };
	fs.appendFileSync(file, `${JSON.stringify(damaged)}\n`);

	let second;
	const stderr = await collectingStderr(async () => {
		second = await startOccSession({
			...ws,
			sessionManager: pi.SessionManager.open(file, sessionDir),
			script: [toolCall("update_plan", plan(["a", "in_progress"], ["b", "pending"]), "p2"), "continued"],
		});
		t.after(() => second.close());
		await second.session.prompt("go on");
	});
	assert.deepEqual(second.errors, []);
	const warnings = stderr.filter((line) => line.includes("saved state entry on this branch could not be read"));
	assert.equal(warnings.length, 1, `one warning: ${stderr.join("")}`);
	assert.ok(warnings[0].includes("invalid_state_plan"), warnings[0]);
	// The older snapshot was restored and the session went on from it.
	const now = lastState(second);
	assert.deepEqual(now.plan.map((step) => step.id), ["a", "b"]);
	assert.ok(now.requestCount > saved.requestCount, `${now.requestCount} > ${saved.requestCount}`);
	// Nothing lost: the damaged entry is still in the session and its file.
	assert.ok(entries(second).some((entry) => entry.id === "damaged-state"));
	assert.ok(fs.readFileSync(file, "utf8").includes('"id":"damaged-state"'));
	assert.equal(lastAssistantEntry(second) !== undefined, true);
});

// The reducer's step API as the addon exports it to asynchronous hosts: `Reducer.begin`
// gives the decision or a model request with a pending reduction, whose `finish` takes
// what came of the call. Real files (the archive under a temp runtime root), the
// fixture log and its scripted receipt; every outcome carries its account.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import { makeWorkspace, repoRoot } from "./support.mjs";

const addon = createRequire(import.meta.url)("../index.js");
const fixture = path.join(repoRoot, "fixtures", "reducer", "cargo-test-failure");
const log = fs.readFileSync(path.join(fixture, "output.txt"), "utf8");
const receipt = fs.readFileSync(path.join(fixture, "receipt.json"), "utf8");

function input(t, overrides = {}) {
	const ws = makeWorkspace(t);
	return {
		toolCallId: "call_1",
		toolName: "bash",
		inputJson: JSON.stringify({ command: "cargo test --workspace --no-fail-fast" }),
		contentJson: JSON.stringify([{ type: "text", text: log }]),
		isError: true,
		structuredContent: { exit_code: 101 },
		runtimeRoot: path.join(ws.root, "sol-pi", "session-a"),
		osTempDir: addon.realTempDir(os.tmpdir()) ?? os.tmpdir(),
		timestamp: "2026-12-01T12:00:00.000Z",
		provider: "reducer-faux",
		model: "luna",
		...overrides,
	};
}

const textBytes = (content) => content.filter((b) => b.type === "text").reduce((n, b) => n + Buffer.byteLength(b.text), 0);
const kinds = (records) => records.map((r) => r.kind);
/** An assistant message as Pi's `complete()` resolves it, with one text block (split in two). */
const reply = (text, usage = {}) => ({
	role: "assistant",
	content: [{ type: "text", text: text.slice(0, 5) }, { type: "thinking", thinking: "-" }, { type: "text", text: text.slice(5) }],
	usage,
});
const zero = { bytesRemoved: 0, tokensRemoved: 0, requestsAvoided: 0, modelCalls: 0, modelInputTokens: 0, modelOutputTokens: 0 };

test("begin asks for the model after journaling the candidate; finish applies the receipt and accounts for the call and the saving", (t) => {
	const reducer = new addon.Reducer();
	const result = input(t);
	const begun = reducer.begin(result);
	assert.equal(begun.kind, "askModel");
	assert.deepEqual(kinds(begun.journal), ["candidate"]);
	assert.equal(begun.entryType, "sol-pi-evidence-preserving-reducer-v1");
	assert.equal(fs.readFileSync(begun.journal[0].sourcePath, "utf8"), log.replace(/\n\nCommand exited with code 101\n?$/, ""), "archived before the call");
	assert.deepEqual([begun.request.provider, begun.request.model, begun.request.maxOutputTokens, begun.request.timeoutMs], ["reducer-faux", "luna", 2048, 90000]);
	assert.match(begun.request.userText, /<untrusted_log>\n/);

	const done = begun.reduction.finish({ kind: "reply", message: reply(receipt, { input: 1200, output: 80, totalTokens: 1280 }) }, "2026-12-01T12:00:01.000Z");
	assert.equal(done.kind, "replaced");
	assert.deepEqual(kinds(done.journal), ["provider_response", "applied"]);
	assert.equal(done.journal[0].timestamp, "2026-12-01T12:00:01.000Z");
	assert.match(done.content[0].text, /^sol_pi_evidence_receipt_v1\nstatus=failure\n/);
	const removed = Buffer.byteLength(log) - textBytes(done.content);
	assert.ok(removed > 0);
	assert.deepEqual(done.account, {
		bytesRemoved: removed,
		tokensRemoved: Math.ceil(log.length / 4) - Math.ceil(done.content[0].text.length / 4),
		requestsAvoided: 0,
		modelCalls: 1,
		modelInputTokens: 1200,
		modelOutputTokens: 80,
	});
	assert.throws(() => begun.reduction.finish({ kind: "reply", message: reply(receipt) }, "2026-12-01T12:00:02.000Z"), /already finished/);

	// The identical rerun is answered from the cache: no model call, the saving of its receipt.
	const again = reducer.begin({ ...result, toolCallId: "call_2" });
	assert.equal(again.kind, "done");
	assert.equal(again.done.kind, "replaced");
	assert.deepEqual(kinds(again.done.journal), ["candidate", "cache_hit", "applied"]);
	assert.equal(again.done.account.modelCalls, 0);
	assert.match(again.done.content[0].text, /\nreducer_total_tokens=0\n/);
	assert.equal(again.done.account.bytesRemoved, Buffer.byteLength(log) - textBytes(again.done.content));
});

test("a result that is not a candidate is done at once, with nothing journaled and nothing saved", (t) => {
	const reducer = new addon.Reducer();
	const begun = reducer.begin(input(t, { inputJson: JSON.stringify({ command: "rg needle src" }) }));
	assert.equal(begun.kind, "done");
	// A step that saved and cost nothing carries no account: nothing for the savings book to add.
	const { account, ...done } = begun.done;
	assert.equal(account, undefined);
	assert.deepEqual(done, { kind: "unchanged", reason: "not-diagnostic-command", entryType: "sol-pi-evidence-preserving-reducer-v1", journal: [] });
	const broken = reducer.begin(input(t, { contentJson: "[{" }));
	assert.equal(broken.kind, "done");
	assert.equal(broken.done.reason, "non-text-content");
});

for (const [answer, reason, modelCalls] of [
	[{ kind: "unavailable" }, "reducer-model-unavailable", 0],
	[{ kind: "timeout" }, "model-call-timeout", 1],
	[{ kind: "aborted" }, "model-call-aborted", 1],
	[{ kind: "exception", message: "socket hang up" }, "model-call-exception", 1],
	[{ kind: "reply", message: reply("not json", { input: 900, output: 3 }) }, "invalid-json", 1],
]) {
	test(`a ${answer.kind} answer keeps the result (${reason}) and accounts for ${modelCalls} model call(s)`, (t) => {
		const begun = new addon.Reducer().begin(input(t));
		assert.equal(begun.kind, "askModel");
		const done = begun.reduction.finish(answer, "2026-12-01T12:00:01.000Z");
		assert.equal(done.kind, "unchanged");
		assert.equal(done.reason, reason);
		assert.deepEqual(kinds(done.journal), answer.kind === "reply" ? ["provider_response", "fallback"] : ["fallback"]);
		const usage = answer.message?.usage;
		assert.deepEqual(done.account, modelCalls === 0 ? undefined : { ...zero, modelCalls, modelInputTokens: usage?.input ?? 0, modelOutputTokens: usage?.output ?? 0 });
		if (answer.kind === "exception") assert.match(done.journal[0].errorMessage, /socket hang up/);
	});
}

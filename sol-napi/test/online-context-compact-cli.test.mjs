// Online Context Compact in the real `pi -p` CLI of the Pi install under test: one
// invocation finishes a compact-and-continue (0.84.2 through the settlement barrier,
// 0.87+ through Pi's deferred turn), and stdout holds only the final answer.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { test } from "node:test";

import { makeWorkspace, piCliPath, piVersion, repoRoot, writeJson } from "./support.mjs";
import { piMajor } from "./occ-support.mjs";

const fixture = (name) => path.join(repoRoot, "sol-napi", "test", "fixtures", name);
const LONG_PROMPT = `Please carry out the task.\n${"Some background context for the task. ".repeat(320)}`;

function runOcc(t, extraArgs = []) {
	const ws = makeWorkspace(t);
	writeJson(path.join(ws.agentDir, "sol-pi.json"), { version: 1, onlineContextCompact: true, cacheWriteReadRatio: 0 });
	writeJson(path.join(ws.agentDir, "settings.json"), { compaction: { enabled: false, keepRecentTokens: 150 } });
	// Pi 0.84.2 has no getSettings(): OCC's retained tail comes from the factory option there.
	const solPi = piMajor === 0 ? fixture("occ-keep-recent-extension.ts") : repoRoot;
	const args = [piCliPath(), "--provider", "sol-faux", "--model", "faux-1", "--no-session", "-e", fixture("occ-faux-provider-extension.ts"), "-e", solPi, ...extraArgs, "-p", LONG_PROMPT];
	const env = { ...process.env, PI_CODING_AGENT_DIR: ws.agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" };
	return spawnSync(process.execPath, args, { cwd: ws.cwd, env, encoding: "utf8", timeout: 120_000 });
}

test(`Pi ${piVersion}: \`pi -p\` compacts at a plan boundary and continues within one invocation`, (t) => {
	const result = runOcc(t);
	assert.equal(result.status, 0, result.stderr);
	assert.equal(result.stdout.trim(), "finished after compact-and-continue", `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
	assert.doesNotMatch(result.stderr, /SoL-Pi|Extension error|Online Context Compact/, result.stderr);
});

test(`Pi ${piVersion}: \`pi --mode json -p\` finishes the compact-and-continue within one invocation too`, (t) => {
	const result = runOcc(t, ["--mode", "json"]);
	assert.equal(result.status, 0, result.stderr);
	const events = result.stdout.trim().split("\n").map((line) => JSON.parse(line));
	const text = JSON.stringify(events);
	assert.match(text, /compaction/i, "a compaction event is in the JSON stream");
	const finals = events.filter((e) => e.type === "message_end" && e.message?.role === "assistant").map((e) => JSON.stringify(e.message.content));
	assert.match(finals.at(-1) ?? "", /finished after compact-and-continue/, "the last assistant message comes after the continuation");
	assert.doesNotMatch(result.stderr, /SoL-Pi|Extension error|Online Context Compact/, result.stderr);
});

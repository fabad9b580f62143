// `/sol-pi` and the savings status line in Pi's real interactive TUI: the real `pi` CLI of
// the install under test runs in a private tmux server (tui-terminal.mjs) with the faux
// provider (fixtures/tui-faux-provider-extension.ts, which records every request it gets)
// and SoL-Pi loaded with `-e`; the test types as a user would and reads the screen.
// The first tests prove the harness with a test-only command and keyed status
// (fixtures/tui-probe-extension.ts).
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

import { makeWorkspace, piRoot, piVersion, repoRoot, writeJson } from "./support.mjs";
import { footerOf, piEnv, startTerminal } from "./tui-terminal.mjs";

const fixture = (name) => path.join(repoRoot, "sol-napi", "test", "fixtures", name);
const SOL_PI = path.join(repoRoot, "sol-napi", "sol-pi", "index.ts");
const MECHANISMS = ["Action Fusion", "ObservationPack", "Evidence-Preserving Reducer", "Online Context Compact"];

/** Pi in tmux on a fresh workspace with ObservationPack on; `requests()` is what the faux model got. */
async function startPi(t, { extensions = [] } = {}) {
	// The folders go only after Pi has stopped (the terminal's own hook would run after this one).
	const ws = makeWorkspace();
	let term;
	t.after(() => {
		term?.close();
		fs.rmSync(ws.root, { recursive: true, force: true });
	});
	writeJson(path.join(ws.agentDir, "sol-pi.json"), { version: 1, observationPack: true });
	writeJson(path.join(ws.agentDir, "settings.json"), { compaction: { enabled: false } });
	const log = path.join(ws.root, "requests.jsonl");
	const args = ["--provider", "sol-faux", "--model", "faux-1", "--session-dir", path.join(ws.root, "sessions")];
	for (const extension of [fixture("tui-faux-provider-extension.ts"), ...extensions, SOL_PI]) args.push("-e", extension);
	term = await startTerminal({ piRoot, cwd: ws.cwd, args, env: piEnv(ws.agentDir, { SOL_PI_TUI_REQUESTS: log }), t });
	// SoL-Pi's startup notice comes from its session_start handler: the session is bound and the editor is live.
	await term.waitFor(/SoL-Pi: ObservationPack enabled/, { what: "SoL-Pi's startup notice" });
	const requests = () =>
		fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line)) : [];
	return { ws, term, requests };
}

/** Everything a request carried to the model, as one text. */
const requestText = (request) => [request.systemPrompt, ...request.messages.map((m) => m.text)].join("\n");

/** The screen lines from the one that starts with `first`, `count` of them, left-trimmed. */
function block(screen, first, count) {
	const lines = screen.split("\n").map((line) => line.trim());
	const start = lines.findIndex((line) => line.startsWith(first));
	return start < 0 ? [] : lines.slice(start, start + count);
}

test(`Pi ${piVersion}: TUI harness: a typed command's notification and keyed status are on the screen, and never reach the model`, async (t) => {
	const { term, requests } = await startPi(t, { extensions: [fixture("tui-probe-extension.ts")] });
	await term.submit("/tui-probe hello");
	const screen = await term.waitFor(/Probe block via notify \(hello\):/, { what: "the probe's notification" });
	assert.deepEqual(block(screen, "Probe block via notify (hello):", 4), [
		"Probe block via notify (hello):",
		"row one  | 1",
		"row two  | 22",
		"Total    | 23",
	]);
	// Pi joins every keyed status on one footer line, sorted by key (SoL-Pi's running total first).
	await term.waitFor((s) => /(^| )probe status: hello$/m.test(footerOf(s)), { what: "the keyed status in the footer" });
	assert.equal(requests().length, 0, "a command sends no request");

	await term.submit("ping");
	await term.waitFor(/answer to: ping/, { what: "the faux model's answer" });
	const sent = requests();
	assert.equal(sent.length, 1);
	assert.match(requestText(sent[0]), /ping/);
	assert.doesNotMatch(requestText(sent[0]), /Probe block|probe status/);
	// The status stays until the extension changes it.
	assert.match(await term.footer(), /(^| )probe status: hello$/m);
	assert.doesNotMatch(await term.screen(), /Extension error|Error:/);
});

test(`Pi ${piVersion}: TUI harness: a block from a command via notify, a rendered custom entry and a widget`, async (t) => {
	const { term, requests } = await startPi(t, { extensions: [fixture("tui-probe-extension.ts")] });
	await term.submit("/tui-probe-entry e1");
	await term.waitFor(/Probe block via appendEntry \(e1\):/, { what: "the custom entry" });
	await term.submit("/tui-probe-widget w1");
	await term.waitFor(/Probe block via setWidget \(w1\):/, { what: "the widget" });
	await term.submit("/tui-probe n1");
	const screen = await term.waitFor(/Probe block via notify \(n1\):/, { what: "the notification" });
	for (const via of ["appendEntry (e1)", "setWidget (w1)", "notify (n1)"]) {
		assert.deepEqual(block(screen, `Probe block via ${via}:`, 4).slice(1), ["row one  | 1", "row two  | 22", "Total    | 23"], via);
	}
	t.diagnostic(`screen on Pi ${piVersion}:\n${screen}`);
	await term.submit("ping");
	await term.waitFor(/answer to: ping/, { what: "the faux model's answer" });
	assert.doesNotMatch(requestText(requests().at(-1)), /Probe block/);
});

/** The `/sol-pi` table's row of `label`: its cells (split on runs of two or more spaces). */
function tableRow(screen, label) {
	const line = screen.split("\n").map((l) => l.trim()).find((l) => l.startsWith(`${label}  `));
	return line?.split(/\s{2,}/);
}
const count = (cell) => Number(cell.replaceAll(",", ""));

test(`Pi ${piVersion}: /sol-pi shows the savings table in the TUI, the footer the running total, and the model sees neither`, async (t) => {
	const { term, requests } = await startPi(t);
	await term.waitFor((s) => /(^|\s)SoL-Pi: no requests yet(\s|$)/m.test(footerOf(s)), { what: "`SoL-Pi: no requests yet` in the footer before any request" });

	// Five requests: the ~38 KB bash result is sent in full twice, then as ObservationPack's placeholder.
	await term.submit("pack the build log");
	await term.waitFor(/^\s*packed$/m, { what: "the faux model's final answer" });
	const sent = requests();
	assert.equal(sent.length, 5);
	const bigResult = (request) => request.messages.find((m) => m.toolCallId === "big")?.text;
	assert.ok(Buffer.byteLength(bigResult(sent[1])) > 30_000);
	assert.match(bigResult(sent[3]), /^\[large tool result replaced after its first 2 provider requests\]/);

	await term.submit("/sol-pi");
	const screen = await term.waitFor(/SoL-Pi savings for this session:/, { what: "the /sol-pi table" });
	const lines = screen.split("\n").map((line) => line.trim());
	const first = lines.findIndex((line) => line.startsWith("SoL-Pi savings for this session:"));
	assert.ok(first >= 0, "the table's first line starts with `SoL-Pi savings for this session:`");
	for (const label of [...MECHANISMS, "Total"]) assert.ok(tableRow(screen, label), `a row for ${label}:\n${screen}`);
	const pack = tableRow(screen, "ObservationPack");
	assert.ok(count(pack[2]) > 0, `ObservationPack's input tokens saved is positive: ${pack.join(" | ")}`);
	assert.ok(count(tableRow(screen, "Total")[2]) >= count(pack[2]));
	// Pi joins every keyed status on one footer line, sorted by key: the total is one of them.
	await term.waitFor((s) => /(^|\s)SoL-Pi saved \S/m.test(footerOf(s)), { what: "`SoL-Pi saved ...` in the footer" });

	// Nothing of this reaches the model.
	await term.submit("and now?");
	await term.waitFor(/answer to: and now\?/, { what: "the answer after /sol-pi" });
	const after = requests();
	assert.equal(after.length, 6);
	assert.doesNotMatch(requestText(after[5]), /SoL-Pi savings|SoL-Pi saved|SoL-Pi: no requests/);
	assert.doesNotMatch(await term.screen(), /Extension error/);
});

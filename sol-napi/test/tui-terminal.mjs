// Test support: the real interactive `pi` CLI of a Pi install inside a detached tmux
// session of a fixed size, on a private tmux server (its own socket in a fresh temp
// folder, no user config), so a test can type into Pi's TUI and read its screen.
// Reading the screen polls `tmux capture-pane` until the awaited text is there: the
// deadline is only a guard against a hang (the test then fails with the last screen),
// never a pause standing in for an event.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { piRoot as defaultPiRoot } from "./support.mjs";

const POLL_MS = 100;
const DEFAULT_DEADLINE_MS = 90_000;

// Run as `node -e <this> <socket> <dir>`: waits for its stdin to end, then kills the server.
const watchdogScript = `
const [socket, dir] = process.argv.slice(1);
const done = () => {
	require("node:child_process").spawnSync("tmux", ["-S", socket, "kill-server"], { stdio: "ignore" });
	require("node:fs").rmSync(dir, { recursive: true, force: true });
	process.exit(0);
};
process.stdin.on("end", done).on("close", done).on("error", done).resume();
`;

/** The installed tmux's version line; throws a clear error when tmux is missing. */
export function tmuxVersion() {
	const result = spawnSync("tmux", ["-V"], { encoding: "utf8" });
	if (result.error || result.status !== 0) {
		const why = result.error ? result.error.message : result.stderr.trim();
		throw new Error(`the TUI tests need tmux on PATH (\`tmux -V\` failed: ${why}); install it, e.g. \`apt-get install tmux\``);
	}
	return result.stdout.trim();
}

/** The `pi` CLI entry of the Pi install at `root`. */
export function piCliPathOf(root) {
	const dir = path.join(root, "node_modules", "@earendil-works", "pi-coding-agent");
	const bin = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).bin;
	return path.join(dir, typeof bin === "string" ? bin : bin.pi);
}

/** The environment every TUI run gets: the isolated agent folder, no network, no telemetry. */
export function piEnv(agentDir, extra = {}) {
	return { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", ...extra };
}

/** The lines below the last full-width rule of the screen: Pi's footer and its status lines. */
export function footerOf(screen) {
	const lines = screen.split("\n");
	let last = -1;
	lines.forEach((line, i) => {
		if (/^─{20,}$/.test(line.trim())) last = i;
	});
	return lines.slice(last + 1).join("\n");
}

/**
 * Starts `node <pi cli> ...args` of `piRoot` in `cwd` inside a private tmux server, with
 * `env` added to the environment (see `piEnv`). With `t`, the server is killed after the
 * test whatever its outcome. Returns the terminal:
 *   type(text)   types the text literally          send(...keys)  sends tmux key names ("Enter")
 *   screen()     the visible screen as text         footer()       the screen's footer (footerOf)
 *   waitFor(regex | predicate(screen), { what, deadlineMs })  the first screen that matches
 *   close()      kills the tmux server (idempotent)
 */
export async function startTerminal({ piRoot = defaultPiRoot, cwd, args = [], env = {}, width = 160, height = 50, t } = {}) {
	tmuxVersion();
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-tmux-"));
	const socket = path.join(dir, "tmux.sock");
	// If the test process dies without running its hooks (a kill), the end of this pipe
	// tells a detached watchdog to kill the server, so no Pi is left running.
	const watchdog = spawn(process.execPath, ["-e", watchdogScript, socket, dir], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
	watchdog.unref();
	watchdog.stdin.unref?.();
	watchdog.stdin.on("error", () => {});
	const tmux = (...argv) => {
		const result = spawnSync("tmux", ["-S", socket, "-f", "/dev/null", ...argv], { encoding: "utf8" });
		if (result.error) throw result.error;
		return result;
	};
	const must = (...argv) => {
		const result = tmux(...argv);
		if (result.status !== 0) throw new Error(`tmux ${argv[0]} failed (${result.status}): ${result.stderr.trim()}`);
		return result.stdout;
	};
	let closed = false;
	const close = () => {
		if (closed) return;
		closed = true;
		tmux("kill-server");
		fs.rmSync(dir, { recursive: true, force: true });
		watchdog.stdin.end();
	};
	t?.after(close);
	// `env` (coreutils) sets the variables, so no tmux environment option is needed.
	const command = ["env", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), process.execPath, piCliPathOf(piRoot), ...args];
	// remain-on-exit keeps the pane (and its last screen) when Pi exits, so a crash is reported with what it printed.
	must(
		"start-server", ";",
		"set-option", "-g", "remain-on-exit", "on", ";",
		"set-option", "-g", "extended-keys", "on", ";",
		"set-option", "-g", "history-limit", "0", ";",
		"new-session", "-d", "-s", "pi", "-x", String(width), "-y", String(height), "-c", cwd, "--", ...command,
	);
	const target = "pi:0.0";
	const screen = async () => must("capture-pane", "-p", "-t", target).replace(/\s+$/, "");
	const paneDead = () => {
		const [dead, status] = must("display-message", "-p", "-t", target, "#{pane_dead} #{pane_dead_status}").trim().split(" ");
		return dead === "1" ? status : undefined;
	};
	const terminal = {
		socket,
		close,
		screen,
		footer: async () => footerOf(await screen()),
		type(text) {
			must("send-keys", "-t", target, "-l", text);
		},
		send(...keys) {
			must("send-keys", "-t", target, ...keys);
		},
		async waitFor(match, { what = String(match), deadlineMs = DEFAULT_DEADLINE_MS } = {}) {
			const test = typeof match === "function" ? match : (text) => match.test(text);
			const deadline = Date.now() + deadlineMs;
			for (;;) {
				const text = await screen();
				if (test(text)) return text;
				const exit = paneDead();
				if (exit !== undefined) throw new Error(`Pi exited (status ${exit}) while waiting for ${what}; last screen:\n${text}`);
				if (Date.now() > deadline) throw new Error(`gave up after ${deadlineMs / 1000} s waiting for ${what}; last screen:\n${text}`);
				await new Promise((resolve) => setTimeout(resolve, POLL_MS));
			}
		},
		/** Types `text`, waits until the editor shows it, then presses Enter. */
		async submit(text) {
			terminal.type(text);
			await terminal.waitFor((s) => editorText(s).includes(text), { what: `the typed text ${JSON.stringify(text)} in the editor` });
			terminal.send("Enter");
		},
	};
	return terminal;
}

/** The editor's text: the lines between the last two full-width rules of the screen. */
export function editorText(screen) {
	const lines = screen.split("\n");
	const rules = [];
	lines.forEach((line, i) => {
		if (/^─{20,}$/.test(line.trim())) rules.push(i);
	});
	if (rules.length < 2) return "";
	return lines.slice(rules.at(-2) + 1, rules.at(-1)).map((line) => line.trim()).join("\n");
}

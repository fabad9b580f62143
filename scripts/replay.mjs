// `npm run replay -- [OPTIONS] <FILES>...`: `sol-pi replay` without a Rust toolchain. The addon
// runs the command's own code (`replayMain`, sol-napi/src/replay.rs) on this process's stdout
// and stderr, so the report and the exit code are the `sol-pi` binary's.
//
// The addon is loaded as the extension loads it (sol-napi/sol-pi/native.ts): through the
// generated loader, and refused when its version is not the package's (a stale build).
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

const firstLine = (error) =>
	(error instanceof Error ? error.message : String(error)).split("\n").find((line) => line.trim() !== "")?.trim() ?? "unknown error";

function loadAddon() {
	let addon;
	try {
		addon = require(path.join(root, "sol-napi", "index.js"));
	} catch (error) {
		return { message: `the SoL-Pi native addon could not be loaded on ${process.platform}-${process.arch} (${firstLine(error)}); build it with \`npm run setup\` (needs Rust and Node 22)` };
	}
	const expected = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
	let version;
	try {
		version = addon.addonVersion();
	} catch (error) {
		version = `unreadable: ${firstLine(error)}`;
	}
	if (version !== expected) return { message: `the SoL-Pi native addon is version ${version} but the package is ${expected}; rebuild it with \`npm run build\`` };
	if (typeof addon.replayMain !== "function") return { message: "the SoL-Pi native addon has no replayMain; rebuild it with `npm run build`" };
	return { addon };
}

// npm runs scripts from the package root; the files on the command line are relative to where
// `npm run` was typed (npm's INIT_CWD), as they are for the binary.
if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);

const { addon, message } = loadAddon();
if (!addon) {
	process.stderr.write(`sol-pi: ${message}\n`);
	process.exitCode = 1;
} else {
	try {
		process.exitCode = addon.replayMain(process.argv.slice(2));
	} catch (error) {
		// A Rust panic, caught at the napi boundary.
		process.stderr.write(`sol-pi: internal error: ${firstLine(error)}\n`);
		process.exitCode = 1;
	}
}

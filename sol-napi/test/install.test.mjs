// The npm package and the ordinary install path, with the real `pi` CLI of the Pi under test:
// - the tarballs `npm run package` makes hold exactly the files they should, one version;
// - `pi install npm:sol-pi` (user and project scope) from a registry of our own
//   (./npm-registry.mjs: the packed tarballs, 404 for anything else), `pi list`, `pi -p` with
//   a faux provider making a fused write, `pi remove`, in a fresh agent folder
//   (PI_CODING_AGENT_DIR), with no cargo on PATH;
// - `pi install <checkout>` of a checkout with no target/ and no cargo on PATH;
// - Pi's startup [Extensions] list (the interactive `pi` in tmux) names both `sol-pi`;
// - no addon for this platform (npm skipped it), and a truncated or wrong-architecture addon:
//   one message naming the prebuilt platforms and the build command, and Pi still answers.
// The install runs on the versions pi-support.json names (installTestedVersions).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";

import { isExtensionFile, MAIN_PACKAGE, PACKAGE_ENTRY, packAll, platforms } from "../../scripts/package.mjs";
import { startRegistry } from "./npm-registry.mjs";
import { makeWorkspace, piCliPath, piRoot, piVersion, repoRoot, writeJson } from "./support.mjs";
import { piEnv as tuiEnv, startTerminal } from "./tui-terminal.mjs";

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));
const support = readJson(path.join(repoRoot, "pi-support.json"));
const installSkip = support.installTestedVersions.includes(piVersion)
	? false
	: `the install path is tested on Pi ${support.installTestedVersions.join(" and ")} (pi-support.json installTestedVersions), not on ${piVersion}`;
const fauxExtension = path.join(repoRoot, "sol-napi", "test", "fixtures", "fused-write-faux-provider-extension.ts");
const hostPlatform = platforms().find((p) => fs.existsSync(path.join(repoRoot, "sol-napi", p.file)));
const ANSWER = "fused write ran its command";

let out;
let packed;
before(() => {
	out = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-pack-"));
	packed = packAll(out).packed;
});
after(() => fs.rmSync(out, { recursive: true, force: true }));

const RUST_TOOLS = ["cargo", "rustc", "rustup"];
const pathDirs = () => (process.env.PATH ?? "").split(path.delimiter).filter(Boolean);
const onPath = (dirs, tool) => dirs.map((dir) => path.join(dir, tool)).find((file) => fs.existsSync(file));

/**
 * A PATH with no Rust toolchain: a folder of the workspace holding `node` (this Node 22) and
 * `npm` (the caller's), then every folder of PATH that has no cargo, rustc or rustup; a few
 * tools Pi and npm run are linked into that folder when only a dropped folder had them.
 */
function barePath(ws) {
	const bin = path.join(ws.root, "bin");
	if (!fs.existsSync(bin)) {
		fs.mkdirSync(bin);
		fs.symlinkSync(process.execPath, path.join(bin, "node"));
		const npm = onPath(pathDirs(), "npm");
		assert.ok(npm, "npm on PATH");
		fs.symlinkSync(npm, path.join(bin, "npm"));
	}
	const kept = pathDirs().filter((dir) => !RUST_TOOLS.some((tool) => fs.existsSync(path.join(dir, tool))));
	for (const tool of ["sh", "bash", "cat", "env", "tar"]) {
		const found = onPath(pathDirs(), tool);
		if (found && !onPath(kept, tool) && !fs.existsSync(path.join(bin, tool))) fs.symlinkSync(found, path.join(bin, tool));
	}
	const dirs = [bin, ...kept];
	for (const tool of RUST_TOOLS) assert.equal(onPath(dirs, tool), undefined, `no ${tool} on the test's PATH`);
	return dirs.join(path.delimiter);
}

function piEnv(ws, registry) {
	const env = {
		...process.env,
		PATH: barePath(ws),
		PI_CODING_AGENT_DIR: ws.agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		npm_config_cache: path.join(ws.root, "npm-cache"),
		npm_config_update_notifier: "false",
		npm_config_fund: "false",
		npm_config_audit: "false",
	};
	// npm reaches nothing but our registry (none at all for a checkout install).
	env.npm_config_registry = registry?.url ?? "http://127.0.0.1:9/";
	delete env.CARGO_HOME;
	delete env.RUSTUP_HOME;
	return env;
}

/**
 * Runs the Pi CLI under test with stdin closed (`pi -p` reads a piped stdin to its end) and
 * without blocking this process, which serves the registry; never throws.
 */
function pi(ws, registry, args, { cwd = ws.cwd } = {}) {
	return new Promise((resolve) => {
		const child = spawn(process.execPath, [piCliPath(), ...args], { cwd, env: piEnv(ws, registry), stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
		child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
		// A guard against a hang, far above any run's length; no assertion depends on time.
		const guard = setTimeout(() => child.kill("SIGKILL"), 180_000);
		child.on("close", (code, signal) => {
			clearTimeout(guard);
			resolve({ status: code ?? signal, stdout, stderr });
		});
	});
}

/** `pi -p` with the faux provider; a session file in the agent folder unless `--no-session` is in `extra`. */
function ask(ws, registry, extra = ["--no-session"]) {
	return pi(ws, registry, ["--provider", "sol-faux", "--model", "faux-1", "-e", fauxExtension, ...extra, "-p", "write the note"]);
}

/**
 * The names in Pi's startup [Extensions] list, read from the real interactive `pi` in tmux
 * (tui-terminal.mjs) once SoL-Pi's startup notice shows that it loaded.
 */
async function startupNames(t, ws) {
	const term = await startTerminal({
		piRoot,
		cwd: ws.cwd,
		args: ["--provider", "sol-faux", "--model", "faux-1", "--no-session", "-e", fauxExtension],
		env: tuiEnv(ws.agentDir, { PATH: barePath(ws) }),
		t,
	});
	try {
		const screen = await term.waitFor((text) => /\[Extensions\]\n\s+\S/.test(text) && /SoL-Pi: Action Fusion/.test(text), {
			what: "the [Extensions] list and SoL-Pi's startup notice",
		});
		const lines = screen.split("\n");
		return lines[lines.findIndex((line) => line.trim() === "[Extensions]") + 1].trim().split(/,\s*/);
	} finally {
		term.close();
	}
}

function enableFusion(ws) {
	writeJson(path.join(ws.agentDir, "sol-pi.json"), { version: 1, actionFusion: true });
}

/** Every path under `dir` (relative), folders included. */
function walk(dir) {
	if (!fs.existsSync(dir)) return [];
	return fs.readdirSync(dir, { recursive: true }).map(String).sort();
}

/** What is left of SoL-Pi under `dir`, leaving out the user's own config file and sessions. */
function leftovers(dir) {
	return walk(dir).filter((p) => /sol-pi/i.test(p) && p !== "sol-pi.json" && !p.startsWith(`sessions${path.sep}`));
}

function assertAnswered(result, what) {
	assert.equal(result.status, 0, `${what}: ${result.stderr}`);
	assert.equal(result.stdout.trim(), ANSWER, `${what}: stdout ${result.stdout}\nstderr ${result.stderr}`);
	assert.doesNotMatch(result.stderr, /SoL-Pi|Extension error/, `${what}: ${result.stderr}`);
}

test("the tarballs hold exactly the package's files, and every package has the one version", () => {
	const version = readJson(path.join(repoRoot, "package.json")).version;
	const cargo = fs.readFileSync(path.join(repoRoot, "Cargo.toml"), "utf8").match(/\[workspace\.package\][^[]*?\nversion = "([^"]+)"/)?.[1];
	assert.equal(cargo, version, "Cargo.toml's workspace version is package.json's");
	assert.equal(readJson(path.join(repoRoot, "sol-napi", "package.json")).version, version, "sol-napi/package.json (the generated loader's version) is package.json's");
	const extensionDir = path.join(repoRoot, "sol-napi", "sol-pi");
	const extension = fs.readdirSync(extensionDir).filter(isExtensionFile).map((f) => `sol-napi/sol-pi/${f}`);
	const expected = [PACKAGE_ENTRY, "LICENSE", "README.md", "package.json", "sol-napi/index.d.ts", "sol-napi/index.js", "sol-napi/package.json", "sol-pi.example.json", ...extension].sort();

	const [main, ...natives] = packed;
	assert.equal(main.name, MAIN_PACKAGE);
	assert.equal(path.basename(main.file), `${MAIN_PACKAGE}-${version}.tgz`);
	assert.deepEqual(main.files, expected, "the main tarball: no file more, none missing");
	const listed = execFileSync("tar", ["tzf", main.file], { encoding: "utf8" }).trim().split("\n").map((f) => f.replace(/^package\//, "")).sort();
	assert.deepEqual(listed, expected, "tar's listing of the main tarball");
	assert.equal(main.manifest.version, version);
	assert.deepEqual(main.manifest.pi, { extensions: [`./${PACKAGE_ENTRY}`] }, "the package's root index.ts, which Pi lists by the package's name");
	for (const entry of main.manifest.pi.extensions) assert.ok(expected.includes(path.posix.normalize(entry)), `${entry} is in the tarball`);
	assert.equal(main.manifest.peerDependencies[support.piPackage], support.peerRange);
	assert.equal(main.manifest.dependencies, undefined, "no runtime dependency but the platform packages");

	const prepared = platforms();
	assert.deepEqual(prepared.map((p) => p.platform), ["darwin-arm64", "darwin-x64", "linux-arm64-gnu", "linux-x64-gnu", "linux-x64-musl", "win32-x64-msvc"]);
	assert.deepEqual(main.manifest.optionalDependencies, Object.fromEntries(prepared.map((p) => [`sol-pi-${p.platform}`, version])));
	for (const p of prepared) {
		assert.equal(p.name, `sol-pi-${p.platform}`);
		assert.equal(p.pkg.version, version, `${p.platform}'s committed version`);
		assert.deepEqual(p.pkg.files, [`sol-pi.${p.platform}.node`]);
	}
	assert.ok(hostPlatform, "the addon is built for this machine (npm run build)");
	assert.deepEqual(natives.map((n) => n.platform), [hostPlatform.platform], "one platform tarball: the one built here");
	const [native] = natives;
	assert.equal(path.basename(native.file), `sol-pi-${hostPlatform.platform}-${version}.tgz`);
	assert.deepEqual(native.files, ["LICENSE", "README.md", hostPlatform.file, "package.json"].sort());
	assert.equal(native.manifest.version, version);
	const listedNative = execFileSync("tar", ["tzf", native.file], { encoding: "utf8" }).trim().split("\n").map((f) => f.replace(/^package\//, "")).sort();
	assert.deepEqual(listedNative, native.files);
});

test("the Pi versions and the peer range are pi-support.json's everywhere they are stated", async () => {
	const { MIN_VERSION, TESTED_VERSIONS } = await import("../../scripts/check-pi-compat.mjs");
	assert.equal(MIN_VERSION, support.minimum);
	assert.deepEqual(TESTED_VERSIONS, support.testedVersions);
	assert.equal(support.peerRange, `>=${support.minimum}`);
	const env = fs.readFileSync(path.join(repoRoot, "scripts", "env.sh"), "utf8").match(/PI_MATRIX_VERSIONS=\(([^)]*)\)/)?.[1].trim().split(/\s+/);
	assert.deepEqual(env, support.testedVersions, "scripts/env.sh's matrix");
	const listed = support.testedVersions.slice(0, -1).join(", ") + ` and ${support.testedVersions.at(-1)}`;
	for (const doc of ["README.md", "docs/compatibility.md"]) {
		const text = fs.readFileSync(path.join(repoRoot, doc), "utf8");
		assert.ok(text.includes(`tested on ${listed}`), `${doc} says "tested on ${listed}"`);
		assert.ok(text.includes(`Pi ${support.minimum} or newer`), `${doc} says "Pi ${support.minimum} or newer"`);
		assert.ok(text.includes("pi-support.json"), `${doc} names pi-support.json`);
	}
});

test(`Pi ${piVersion}: \`pi install npm:sol-pi\` with no Rust, then \`pi -p\` makes a fused write; \`pi remove\` leaves nothing of ours`, { skip: installSkip }, async (t) => {
	const ws = makeWorkspace(t);
	const registry = await startRegistry(packed);
	t.after(() => registry.close());
	enableFusion(ws);

	const installed = await pi(ws, registry, ["install", "npm:sol-pi"]);
	assert.equal(installed.status, 0, installed.stderr);
	const root = path.join(ws.agentDir, "npm", "node_modules");
	assert.ok(fs.existsSync(path.join(root, "sol-pi", "sol-napi", "sol-pi", "index.ts")), walk(root).join("\n"));
	assert.ok(fs.existsSync(path.join(root, `sol-pi-${hostPlatform.platform}`, hostPlatform.file)), "npm installed the platform package");
	assert.deepEqual(
		walk(root).filter((p) => !p.includes(path.sep) && p.startsWith("sol-pi")),
		["sol-pi", `sol-pi-${hostPlatform.platform}`],
		"only this platform's addon",
	);
	assert.ok(!registry.requests.some((r) => r.includes("earendil-works")), `Pi's own packages are peers, never fetched: ${registry.requests}`);

	const listed = await pi(ws, registry, ["list"]);
	assert.equal(listed.status, 0, listed.stderr);
	assert.match(listed.stdout, /npm:sol-pi\n/);

	assert.ok((await startupNames(t, ws)).includes("sol-pi"), "Pi's startup list names the installed package sol-pi");
	assertAnswered(await ask(ws, registry, []), "installed package, with a session");
	assert.ok(walk(path.join(ws.agentDir, "sessions")).some((p) => p.endsWith(".jsonl")), "the session is the user's, in the agent folder");
	assert.equal(fs.readFileSync(path.join(ws.cwd, "note.txt"), "utf8"), "written by a fused call\n");

	const removed = await pi(ws, registry, ["remove", "npm:sol-pi"]);
	assert.equal(removed.status, 0, removed.stderr);
	assert.deepEqual(leftovers(ws.agentDir), [], "nothing of SoL-Pi in the agent folder");
	assert.deepEqual(readJson(path.join(ws.agentDir, "settings.json")).packages ?? [], []);
	assert.doesNotMatch(fs.readFileSync(path.join(ws.agentDir, "npm", "package.json"), "utf8"), /sol-pi/, "Pi's npm prefix no longer depends on sol-pi");
	const after = await pi(ws, registry, ["list"]);
	assert.doesNotMatch(after.stdout, /sol-pi/);
	fs.rmSync(path.join(ws.cwd, "note.txt"));
	const plain = await ask(ws, registry);
	assert.equal(plain.status, 0, plain.stderr);
	assert.notEqual(plain.stdout.trim(), ANSWER, "without SoL-Pi, Pi's write has no then_run");
});

test(`Pi ${piVersion}: \`pi install -l npm:sol-pi\` installs into a trusted project only, and \`pi remove -l\` takes it away`, { skip: installSkip }, async (t) => {
	const ws = makeWorkspace(t);
	const registry = await startRegistry(packed);
	t.after(() => registry.close());
	enableFusion(ws);

	const installed = await pi(ws, registry, ["install", "-l", "-a", "npm:sol-pi"]);
	assert.equal(installed.status, 0, installed.stderr);
	const projectRoot = path.join(ws.cwd, ".pi", "npm", "node_modules");
	assert.ok(fs.existsSync(path.join(projectRoot, "sol-pi", "package.json")), walk(path.join(ws.cwd, ".pi")).join("\n"));
	assert.deepEqual(leftovers(ws.agentDir), [], "nothing in the user's agent folder");
	assert.deepEqual(readJson(path.join(ws.cwd, ".pi", "settings.json")).packages, ["npm:sol-pi"]);

	const listed = await pi(ws, registry, ["list", "-a"]);
	assert.match(listed.stdout, /npm:sol-pi/);
	assertAnswered(await ask(ws, registry, ["--no-session", "-a"]), "project install, trusted");

	const removed = await pi(ws, registry, ["remove", "-l", "-a", "npm:sol-pi"]);
	assert.equal(removed.status, 0, removed.stderr);
	assert.deepEqual(leftovers(path.join(ws.cwd, ".pi")), [], "nothing of SoL-Pi in the project's .pi");
	assert.deepEqual(leftovers(ws.agentDir), []);
});

/** A checkout as a fresh clone plus `npm run build` leaves it: no target/, the built addon beside the loader. */
function copyCheckout(ws, { addon = (file) => fs.copyFileSync(path.join(repoRoot, "sol-napi", hostPlatform.file), file) } = {}) {
	const copy = path.join(ws.root, "sol-pi");
	for (const file of ["package.json", "README.md", "LICENSE", "sol-pi.example.json", "pi-support.json"]) fs.cpSync(path.join(repoRoot, file), path.join(copy, file));
	for (const file of ["index.js", "index.d.ts", "package.json"]) fs.cpSync(path.join(repoRoot, "sol-napi", file), path.join(copy, "sol-napi", file));
	fs.cpSync(path.join(repoRoot, "sol-napi", "sol-pi"), path.join(copy, "sol-napi", "sol-pi"), { recursive: true });
	addon(path.join(copy, "sol-napi", hostPlatform.file));
	assert.ok(!fs.existsSync(path.join(copy, "target")));
	return copy;
}

test(`Pi ${piVersion}: \`pi install <checkout>\` with no target/ and no cargo on PATH, \`pi -p\`, \`pi remove\``, { skip: installSkip }, async (t) => {
	const ws = makeWorkspace(t);
	const checkout = copyCheckout(ws);
	enableFusion(ws);

	const installed = await pi(ws, undefined, ["install", checkout]);
	assert.equal(installed.status, 0, installed.stderr);
	const listed = await pi(ws, undefined, ["list"]);
	assert.ok(listed.stdout.includes(checkout), listed.stdout);
	assert.ok((await startupNames(t, ws)).includes("sol-pi"), "Pi's startup list names the checkout sol-pi");
	assertAnswered(await ask(ws, undefined), "checkout install");

	const removed = await pi(ws, undefined, ["remove", checkout]);
	assert.equal(removed.status, 0, removed.stderr);
	assert.deepEqual(leftovers(ws.agentDir), []);
	assert.deepEqual(readJson(path.join(ws.agentDir, "settings.json")).packages ?? [], []);
});

function assertDisabledOnce(result, what) {
	assert.equal(result.status, 0, `${what}: ${result.stderr}`);
	assert.notEqual(result.stdout.trim(), "", `${what}: Pi still answers`);
	const lines = result.stderr.split("\n").filter((line) => line.includes("SoL-Pi"));
	assert.equal(lines.length, 1, `${what}: one message\n${result.stderr}`);
	const [line] = lines;
	assert.match(line, /SoL-Pi is disabled: its native addon could not be loaded on \w+-\w+/, line);
	for (const p of platforms()) assert.ok(line.includes(p.platform), `${what}: names ${p.platform}: ${line}`);
	assert.match(line, /`npm run setup`/, line);
	assert.match(line, /Pi itself keeps working/, line);
	assert.match(line, /\/sol-pi\/(sol-napi\/sol-pi\/)?index\.ts/, `${what}: Pi names the sol-pi extension: ${line}`);
}

test(`Pi ${piVersion}: a package whose platform addon npm skipped says once which platforms have one, and Pi keeps working`, { skip: installSkip }, async (t) => {
	const ws = makeWorkspace(t);
	// The registry has the main package only, as for a platform no release job builds.
	const registry = await startRegistry(packed.filter((p) => p.name === MAIN_PACKAGE));
	t.after(() => registry.close());
	enableFusion(ws);
	const installed = await pi(ws, registry, ["install", "npm:sol-pi"]);
	assert.equal(installed.status, 0, installed.stderr);
	assert.ok(!fs.existsSync(path.join(ws.agentDir, "npm", "node_modules", `sol-pi-${hostPlatform.platform}`)));
	assertDisabledOnce(await ask(ws, registry), "no platform package");
});

for (const [what, damage] of [
	["a truncated addon", (file) => fs.writeFileSync(file, fs.readFileSync(path.join(repoRoot, "sol-napi", hostPlatform.file)).subarray(0, 4096))],
	[
		"an addon for another architecture",
		(file) => {
			const bytes = Buffer.from(fs.readFileSync(path.join(repoRoot, "sol-napi", hostPlatform.file)));
			// ELF e_machine (offset 18, little-endian): x86-64 (62) <-> AArch64 (183).
			assert.equal(bytes.subarray(0, 4).toString("latin1"), "\x7fELF", "an ELF addon");
			bytes.writeUInt16LE(bytes.readUInt16LE(18) === 62 ? 183 : 62, 18);
			fs.writeFileSync(file, bytes);
		},
	],
]) {
	test(`Pi ${piVersion}: ${what} gets the same one message, not a crash`, { skip: installSkip || (process.platform !== "linux" && "ELF addons: Linux only") }, async (t) => {
		const ws = makeWorkspace(t);
		const checkout = copyCheckout(ws, { addon: damage });
		enableFusion(ws);
		assertDisabledOnce(await ask(ws, undefined, ["--no-session", "-e", checkout]), what);
	});
}

// scripts/check-pi-compat.mjs: the real Pi named by SOL_PI_TEST_PI_ROOT passes under
// --strict; fake Pi roots (a package.json + dist/index.js per package, built in temp dirs
// from the requirement list the checker derives) exercise each failure and warning.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const script = path.join(repoRoot, "scripts", "check-pi-compat.mjs");
const piRoot = path.resolve(process.env.SOL_PI_TEST_PI_ROOT ?? repoRoot);
const { checkPi, deriveRequirements, formatApiSurface, TESTED_VERSIONS } = await import(script);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-compat-test-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
// Derived afresh here (never from a cache), into a cache of this run's own.
const cacheDir = path.join(tmp, "requirements-cache");
const requirements = deriveRequirements({ cacheDir, fresh: true });

function runCli(...args) {
	const r = spawnSync(process.execPath, [script, ...args], { encoding: "utf8", timeout: 120_000 });
	return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function writeFile(file, text) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, text);
}

/**
 * A fake install under `<tmp>/<name>/node_modules`: every module the extension imports, each
 * exporting the derived names (classes with the derived methods), minus `omit` ("module: name"
 * or "module: Class#method").
 */
function fakeRoot(name, { version = "1.3.0", internals = {}, omit = [] } = {}) {
	const root = path.join(tmp, name);
	const byModule = new Map();
	const entry = (module) => {
		if (!byModule.has(module)) byModule.set(module, { values: new Set(), statics: new Map(), methods: new Map() });
		return byModule.get(module);
	};
	for (const { module, names } of requirements.values) for (const n of (entry(module), names)) if (!omit.includes(`${module}: ${n}`)) entry(module).values.add(n);
	for (const m of requirements.classMembers) {
		const label = `${m.module}: ${m.className}${m.static ? "." : "#"}${m.member}`;
		const e = entry(m.module);
		const table = m.static ? e.statics : e.methods;
		if (!table.has(m.className)) table.set(m.className, []);
		if (!omit.includes(label)) table.get(m.className).push(m.member);
		if (!omit.includes(`${m.module}: ${m.className}`)) e.values.add(m.className);
	}
	for (const name of ["@earendil-works/pi-coding-agent", "@earendil-works/pi-agent-core", "@earendil-works/pi-ai", "@earendil-works/pi-tui"]) entry(name);
	for (const [module, e] of byModule) {
		const lines = [];
		const classes = new Set([...e.statics.keys(), ...e.methods.keys()]);
		for (const value of e.values) {
			if (value === "*") continue;
			if (classes.has(value)) {
				const members = [
					...(e.statics.get(value) ?? []).map((m) => `static ${m}() {}`),
					...(e.methods.get(value) ?? []).map((m) => `${m}() {}`),
				];
				lines.push(`export class ${value} { ${members.join(" ")} }`);
			} else if (value === "VERSION") {
				lines.push(`export const VERSION = ${JSON.stringify(version)};`);
			} else if (value === "createBashToolDefinition") {
				lines.push(
					"export function createBashToolDefinition() { return { execute: async () => ({ content: [{ type: 'text', text: 'Command exited with code 3' }], isError: true }) }; }",
				);
			} else if (value === "default") {
				lines.push("export default {};");
			} else {
				lines.push(`export const ${value} = () => {};`);
			}
		}
		const dir = path.join(root, "node_modules", ...module.split("/"));
		const pkgVersion = module === "@earendil-works/pi-coding-agent" ? version : (internals[module] ?? (module.startsWith("@earendil-works/") ? version : "1.3.27"));
		writeFile(path.join(dir, "package.json"), JSON.stringify({ name: module, version: pkgVersion, type: "module", exports: { ".": { import: "./dist/index.js" } } }));
		writeFile(path.join(dir, "dist", "index.js"), `${lines.join("\n")}\n`);
	}
	return root;
}

test("the derived requirements are the extension's value imports, not its type-only ones", () => {
	assert.equal(requirements.typescript, true);
	const pi = requirements.values.find((v) => v.module === "@earendil-works/pi-coding-agent");
	for (const name of ["createBashToolDefinition", "createEditToolDefinition", "createWriteToolDefinition", "SettingsManager", "getAgentDir"]) {
		assert.ok(pi.names.includes(name), name);
	}
	const all = requirements.values.flatMap((v) => v.names);
	for (const typeOnly of ["ExtensionAPI", "ExtensionContext", "BashToolOptions", "ToolDefinition", "TSchema", "NativeAddon"]) {
		assert.ok(!all.includes(typeOnly), `${typeOnly} is type-only`);
	}
	assert.ok(requirements.values.some((v) => v.module === "@earendil-works/pi-tui" && v.names.includes("Container")));
	assert.ok(requirements.values.some((v) => v.module === "typebox" && v.names.includes("Type")));
	assert.ok(!requirements.values.some((v) => v.module.startsWith("node:") || v.module.startsWith(".")));
	const members = requirements.classMembers.map((m) => `${m.className}${m.static ? "." : "#"}${m.member}`);
	for (const m of ["SettingsManager.create", "SettingsManager#getShellPath", "SettingsManager#getShellCommandPrefix", "SettingsManager#drainErrors"]) {
		assert.ok(members.includes(m), m);
	}
});

test("the derived requirements are reused only while every file they came from is unchanged", () => {
	const [entryName] = fs.readdirSync(cacheDir).filter((name) => name.endsWith(".json"));
	const entryFile = path.join(cacheDir, entryName);
	const entry = JSON.parse(fs.readFileSync(entryFile, "utf8"));
	assert.ok(entry.inputs.some(([file]) => file.endsWith(path.join("sol-pi", "index.ts"))), "the extension's entry is among the recorded files");
	assert.deepEqual(deriveRequirements({ cacheDir }), requirements);
	// The entry is what a second derivation returns while the recorded files are as they were...
	fs.writeFileSync(entryFile, JSON.stringify({ ...entry, requirements: { ...requirements, optional: ["marker"] } }));
	assert.deepEqual(deriveRequirements({ cacheDir }).optional, ["marker"]);
	// ...and is not used once one of them differs from its recorded digest (the derivation runs again).
	const changed = entry.inputs.map(([file, sha], i) => [file, i === entry.inputs.length - 1 ? "0".repeat(64) : sha]);
	fs.writeFileSync(entryFile, JSON.stringify({ ...entry, inputs: changed }));
	assert.equal(deriveRequirements({ cacheDir, cacheOnly: true }), undefined);
	fs.writeFileSync(entryFile, "{");
	assert.equal(deriveRequirements({ cacheDir, cacheOnly: true }), undefined);
	fs.writeFileSync(entryFile, JSON.stringify(entry));
	assert.deepEqual(deriveRequirements({ cacheDir, cacheOnly: true }), requirements);
});

test("docs/compatibility.md lists the API surface the code derives", () => {
	const doc = fs.readFileSync(path.join(repoRoot, "docs", "compatibility.md"), "utf8");
	const block = doc.match(/<!-- api-surface:start -->\n([\s\S]*?)\n<!-- api-surface:end -->/);
	assert.ok(block, "the api-surface markers are present");
	assert.equal(block[1], formatApiSurface(requirements), "regenerate with: node scripts/check-pi-compat.mjs --list-api");
});

test("the Pi under test passes --strict and reports its behaviour", () => {
	const r = runCli("--pi-root", piRoot, "--strict", "--json");
	assert.equal(r.code, 0, r.stdout + r.stderr);
	const report = JSON.parse(r.stdout);
	const version = JSON.parse(fs.readFileSync(path.join(piRoot, "node_modules", "@earendil-works", "pi-coding-agent", "package.json"), "utf8")).version;
	const major = Number(version.split(".")[0]);
	assert.equal(report.ok, true);
	assert.equal(report.version, version);
	assert.ok(TESTED_VERSIONS.includes(version));
	assert.equal(report.sameRelease, true);
	assert.deepEqual(report.warnings, []);
	assert.deepEqual(report.failures, []);
	assert.equal(report.bash.nonZeroExit, major >= 1 ? "isError" : "throws");
	assert.equal(report.bash.outputSchema, major >= 1);
	assert.equal(report.codemode, major >= 1);
	assert.ok(report.required.length > 0 && report.required.every((x) => x.present));

	const text = runCli("--pi-root", piRoot);
	assert.equal(text.code, 0, text.stderr);
	assert.match(text.stdout, new RegExp(`^Pi ${version.replaceAll(".", "\\.")} at `));
	assert.match(text.stdout, /bash non-zero exit: /);
	assert.match(text.stdout, /result: compatible/);
});

test("--pi-root takes the package folder, a project, or a node_modules root", async () => {
	const root = fakeRoot("forms");
	const pkg = path.join(root, "node_modules", "@earendil-works", "pi-coding-agent");
	for (const form of [root, path.join(root, "node_modules"), pkg]) {
		const report = await checkPi({ piRoot: form, strict: true, requirements });
		assert.equal(report.packageDir, pkg, form);
		assert.equal(report.ok, true, `${form}: ${report.failures.concat(report.warnings).join("; ")}`);
	}
});

test("a missing export fails and is named", async () => {
	const root = fakeRoot("missing-export", { omit: ["@earendil-works/pi-coding-agent: createWriteToolDefinition"] });
	const report = await checkPi({ piRoot: root, requirements });
	assert.equal(report.ok, false);
	assert.match(report.failures.join("\n"), /missing Pi exports or methods the extension uses: @earendil-works\/pi-coding-agent: createWriteToolDefinition/);

	const r = runCli("--pi-root", root);
	assert.equal(r.code, 1);
	assert.match(r.stdout, /error: missing .*createWriteToolDefinition/);
	assert.match(r.stdout, /result: NOT compatible/);
});

test("a missing class method fails and is named", async () => {
	const root = fakeRoot("missing-method", { omit: ["@earendil-works/pi-coding-agent: SettingsManager#getShellPath"] });
	const report = await checkPi({ piRoot: root, requirements });
	assert.equal(report.ok, false);
	assert.match(report.failures.join("\n"), /SettingsManager#getShellPath/);
});

test("a missing pi-tui or typebox value fails", async () => {
	const root = fakeRoot("missing-host-module-value", { omit: ["typebox: Type"] });
	const report = await checkPi({ piRoot: root, requirements });
	assert.equal(report.ok, false);
	assert.match(report.failures.join("\n"), /typebox: Type/);
});

test("an untested version warns, and fails under --strict", async () => {
	const root = fakeRoot("untested", { version: "1.2.0" });
	const report = await checkPi({ piRoot: root, requirements });
	assert.equal(report.ok, true);
	assert.equal(report.tested, false);
	assert.match(report.warnings.join("\n"), /Pi 1\.2\.0 is not a tested version/);
	const strict = await checkPi({ piRoot: root, strict: true, requirements });
	assert.equal(strict.ok, false);
	assert.deepEqual(strict.failures, []);

	const r = runCli("--pi-root", root, "--strict");
	assert.equal(r.code, 1);
	assert.match(r.stdout, /warning: Pi 1\.2\.0 is not a tested version/);
});

test("a version below the floor fails", async () => {
	const report = await checkPi({ piRoot: fakeRoot("too-old", { version: "0.80.0" }), requirements });
	assert.equal(report.ok, false);
	assert.match(report.failures.join("\n"), /Pi 0\.80\.0 is older than the supported floor 0\.84\.2/);
});

test("a mixed-release install warns", async () => {
	const root = fakeRoot("mixed", { version: "1.0.3", internals: { "@earendil-works/pi-tui": "1.3.0", "@earendil-works/pi-ai": "1.3.0" } });
	const report = await checkPi({ piRoot: root, requirements });
	assert.equal(report.ok, true);
	assert.equal(report.sameRelease, false);
	assert.match(report.warnings.join("\n"), /internal packages come from another release than Pi 1\.0\.3: @earendil-works\/pi-ai@1\.3\.0, @earendil-works\/pi-tui@1\.3\.0/);
	assert.equal((await checkPi({ piRoot: root, strict: true, requirements })).ok, false);
});

test("a folder with no Pi is a clear one-line error", () => {
	const empty = path.join(tmp, "no-pi");
	fs.mkdirSync(path.join(empty, "node_modules"), { recursive: true });
	for (const dir of [empty, path.join(tmp, "does-not-exist")]) {
		const r = runCli("--pi-root", dir);
		assert.equal(r.code, 2);
		assert.equal(r.stdout, "");
		assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
		assert.match(r.stderr, /^check-pi-compat: no Pi found at /);
	}
	const json = runCli("--pi-root", empty, "--json");
	assert.equal(json.code, 2);
	assert.equal(JSON.parse(json.stdout).ok, false);
});

test("argument errors", () => {
	for (const [args, message] of [
		[["--bogus"], "unknown option: --bogus"],
		[["--pi-root"], "missing value for --pi-root"],
		[["--pi-root", "--strict"], "missing value for --pi-root"],
		[["--strict", "--strict"], "duplicate option: --strict"],
	]) {
		const r = runCli(...args);
		assert.equal(r.code, 2, args.join(" "));
		assert.equal(r.stderr, `check-pi-compat: ${message}\n`);
	}
});

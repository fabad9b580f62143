#!/usr/bin/env node
// Checks that an installed Pi can run the SoL-Pi extension.
//
//   node scripts/check-pi-compat.mjs [--pi-root <dir>] [--strict] [--json]
//   node scripts/check-pi-compat.mjs --list-api   (the derived list, as kept in docs/compatibility.md)
//
// --pi-root takes the @earendil-works/pi-coding-agent package folder, a project that depends
// on it, or a node_modules folder that holds it (such as `npm root -g`); without it the
// checkout's development dependency is checked. The list of Pi exports and class methods the
// extension needs is derived from the extension's own imports (sol-napi/sol-pi/*.ts) with
// the TypeScript compiler, so it cannot drift from the code; type-only imports are skipped.
//
// Exit codes: 0 compatible (warnings allowed unless --strict), 1 incompatible, 2 bad
// arguments or no Pi at the given path.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const extensionDir = path.join(repoRoot, "sol-napi", "sol-pi");

// The floor and the tested versions are pi-support.json's, the one place they are stated.
const support = JSON.parse(fs.readFileSync(path.join(repoRoot, "pi-support.json"), "utf8"));
export const PI_PACKAGE = support.piPackage;
export const INTERNAL_PACKAGES = ["@earendil-works/pi-agent-core", "@earendil-works/pi-ai", "@earendil-works/pi-tui"];
export const MIN_VERSION = support.minimum;
export const TESTED_VERSIONS = support.testedVersions;

class UsageError extends Error {}

function parseArgs(argv) {
	const options = { piRoot: undefined, strict: false, json: false };
	const seen = new Set();
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (seen.has(arg)) throw new UsageError(`duplicate option: ${arg}`);
		seen.add(arg);
		if (arg === "--strict") options.strict = true;
		else if (arg === "--json") options.json = true;
		else if (arg === "--pi-root") {
			const value = argv[i + 1];
			if (value === undefined || value.startsWith("--")) throw new UsageError("missing value for --pi-root");
			options.piRoot = value;
			i++;
		} else if (arg === "--list-api") {
			options.listApi = true;
		} else if (arg === "--help" || arg === "-h") {
			options.help = true;
		} else throw new UsageError(`unknown option: ${arg}`);
	}
	return options;
}

function readJson(file) {
	return JSON.parse(fs.readFileSync(file, "utf8"));
}

/** The folder of package `name` as Node would find it from `fromDir` (nested first, then up). */
function findPackage(fromDir, name) {
	for (let dir = fromDir; ; dir = path.dirname(dir)) {
		const candidate = path.join(dir, "node_modules", ...name.split("/"));
		if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
		if (path.dirname(dir) === dir) return undefined;
	}
}

/** Locates the pi-coding-agent package folder from any of the accepted --pi-root forms. */
export function locatePi(root) {
	const dir = path.resolve(root);
	if (!fs.existsSync(dir)) throw new UsageError(`no Pi found at ${dir}: the path does not exist`);
	const own = path.join(dir, "package.json");
	if (fs.existsSync(own)) {
		try {
			if (readJson(own).name === PI_PACKAGE) return dir;
		} catch {
			// Not a readable package.json; try the other forms.
		}
	}
	for (const candidate of [path.join(dir, "node_modules", ...PI_PACKAGE.split("/")), path.join(dir, ...PI_PACKAGE.split("/"))]) {
		if (fs.existsSync(path.join(candidate, "package.json"))) return candidate;
	}
	throw new UsageError(
		`no Pi found at ${dir}: expected the ${PI_PACKAGE} package folder, a project that depends on it, or a node_modules folder that holds it`,
	);
}

/** The ESM entry file of an installed package. */
function entryFile(pkgDir) {
	const pkg = readJson(path.join(pkgDir, "package.json"));
	let target = pkg.exports;
	if (target && typeof target === "object" && "." in target) target = target["."];
	while (target && typeof target === "object") target = target.import ?? target.default ?? target.node;
	const rel = typeof target === "string" ? target : (pkg.module ?? pkg.main ?? "index.js");
	return path.join(pkgDir, rel);
}

function compareVersions(a, b) {
	const parse = (v) => String(v).split("-")[0].split(".").map((n) => Number.parseInt(n, 10) || 0);
	const [x, y] = [parse(a), parse(b)];
	for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
	return 0;
}

// ---------------------------------------------------------------------------------------------
// What the extension needs, from its own source.

/** Maps a declaration file to the package that ships it, or undefined for our own files. */
function packageOfFile(file) {
	const parts = file.split(/[\\/]/);
	const at = parts.lastIndexOf("node_modules");
	if (at < 0) return undefined;
	const first = parts[at + 1];
	return first?.startsWith("@") ? `${first}/${parts[at + 2]}` : first;
}

const isExternal = (spec) => !spec.startsWith(".") && !spec.startsWith("node:") && !path.isAbsolute(spec);

/**
 * The runtime requirements of the extension: every value imported from a non-relative,
 * non-`node:` module, and every method of an exported class from such a package that the code
 * calls unconditionally. Members read behind `typeof` or `?.` are feature detection and are
 * listed as optional instead.
 */
export function deriveRequirements({ cacheDir = defaultCacheDir, fresh = false, cacheOnly = false } = {}) {
	const files = fs
		.readdirSync(extensionDir)
		.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
		.sort()
		.map((f) => path.join(extensionDir, f));
	let ts;
	try {
		ts = createRequire(path.join(repoRoot, "package.json"))("typescript");
	} catch {
		return { ...deriveWithoutTypeScript(files), typescript: false };
	}
	const configPath = path.join(repoRoot, "sol-napi", "tsconfig.json");
	const cacheFile = path.join(cacheDir, `${cacheKey(ts, [fileURLToPath(import.meta.url), configPath, path.join(repoRoot, "package-lock.json"), ...files])}.json`);
	if (!fresh) {
		const cached = readCache(cacheFile);
		if (cached || cacheOnly) return cached;
	}
	const { program, requirements } = deriveWithTypeScript(ts, files, configPath);
	writeCache(cacheFile, program.getSourceFiles().map((source) => source.fileName), requirements);
	return requirements;
}

// The derivation type-checks the extension (seconds of CPU), and its result depends only on
// the files the TypeScript program read. So it is kept in node_modules/.cache under a key made
// from this script, the TypeScript version, the config, the lock file and the extension's files,
// with the digest of every file the program read; an entry is used only while every one of
// those files still has its digest, else the derivation runs again (`fresh` skips the cache,
// `cacheOnly` returns undefined instead of deriving).
const defaultCacheDir = path.join(repoRoot, "node_modules", ".cache", "sol-pi-check-pi-compat");
const digest = (file) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

function cacheKey(ts, keyFiles) {
	const hash = createHash("sha256").update(`typescript ${ts.version}\n`);
	for (const file of keyFiles) hash.update(`${path.relative(repoRoot, file)}\n${fs.existsSync(file) ? digest(file) : "-"}\n`);
	return hash.digest("hex");
}

/** The cached requirements, or undefined when there are none or any file they came from changed. */
function readCache(cacheFile) {
	try {
		const entry = JSON.parse(fs.readFileSync(cacheFile, "utf8"));
		if (!Array.isArray(entry.inputs) || entry.inputs.length === 0 || !entry.requirements) return undefined;
		for (const [file, sha] of entry.inputs) if (digest(file) !== sha) return undefined;
		return entry.requirements;
	} catch {
		return undefined;
	}
}

/** Writes the entry whole or not at all (a rename), so parallel runs never read half of one. */
function writeCache(cacheFile, inputs, requirements) {
	const tmp = `${cacheFile}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
	try {
		fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
		fs.writeFileSync(tmp, JSON.stringify({ inputs: inputs.map((file) => [file, digest(file)]), requirements }));
		fs.renameSync(tmp, cacheFile);
	} catch {
		// A cache that cannot be written only means the next run derives again.
		fs.rmSync(tmp, { force: true });
	}
}

function deriveWithTypeScript(ts, files, configPath) {
	const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, path.dirname(configPath));
	const program = ts.createProgram({ rootNames: files, options: { ...parsed.options, noEmit: true } });
	const checker = program.getTypeChecker();
	const exportsByModule = new Map(); // module -> Set(names)
	const methods = new Map(); // "module\0Class\0member\0static" -> requirement
	const optional = new Set();
	const addExport = (module, name) => {
		if (!exportsByModule.has(module)) exportsByModule.set(module, new Set());
		exportsByModule.get(module).add(name);
	};
	// The names each package's entry exports, to tell a reachable class from an internal one.
	const entryExports = new Map();
	const exportedNames = (module, fromFile) => {
		if (entryExports.has(module)) return entryExports.get(module);
		const resolved = ts.resolveModuleName(module, fromFile, program.getCompilerOptions(), ts.sys).resolvedModule;
		const source = resolved && program.getSourceFile(resolved.resolvedFileName);
		const symbol = source && checker.getSymbolAtLocation(source);
		const names = new Map();
		if (symbol) {
			for (const exp of checker.getExportsOfModule(symbol)) {
				const target = exp.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exp) : exp;
				names.set(target, exp.getName());
			}
		}
		entryExports.set(module, names);
		return names;
	};

	for (const file of files) {
		const source = program.getSourceFile(file);
		for (const statement of source.statements) {
			if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
			const module = statement.moduleSpecifier.text;
			const clause = statement.importClause;
			if (!isExternal(module) || !clause || clause.isTypeOnly) continue;
			if (clause.name) addExport(module, "default");
			const bindings = clause.namedBindings;
			if (bindings && ts.isNamespaceImport(bindings)) addExport(module, "*");
			if (bindings && ts.isNamedImports(bindings)) {
				for (const element of bindings.elements) {
					if (!element.isTypeOnly) addExport(module, (element.propertyName ?? element.name).text);
				}
			}
		}
		const visit = (node) => {
			if (ts.isPropertyAccessExpression(node)) {
				const symbol = checker.getSymbolAtLocation(node.name);
				for (const decl of symbol?.declarations ?? []) {
					if (!(ts.isMethodDeclaration(decl) || ts.isMethodSignature(decl))) continue;
					const cls = decl.parent;
					if (!ts.isClassDeclaration(cls) || !cls.name) continue;
					const module = packageOfFile(decl.getSourceFile().fileName);
					if (!module) continue;
					const classSymbol = checker.getSymbolAtLocation(cls.name);
					const exportName = exportedNames(module, file).get(classSymbol);
					if (!exportName) continue; // not reachable from the package entry
					const isStatic = (ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Static) !== 0;
					const label = `${exportName}${isStatic ? "." : "#"}${node.name.text}`;
					const guarded =
						ts.isTypeOfExpression(node.parent) ||
						node.questionDotToken !== undefined ||
						(ts.isCallExpression(node.parent) && node.parent.questionDotToken !== undefined);
					if (guarded) {
						optional.add(`${module}: ${label}`);
						continue;
					}
					methods.set(`${module}\0${label}`, { module, className: exportName, member: node.name.text, static: isStatic });
				}
			}
			ts.forEachChild(node, visit);
		};
		visit(source);
	}
	const values = [...exportsByModule].sort(([a], [b]) => a.localeCompare(b)).map(([module, names]) => ({ module, names: [...names].sort() }));
	const classMembers = [...methods.values()].sort((a, b) =>
		`${a.module}${a.className}${a.member}`.localeCompare(`${b.module}${b.className}${b.member}`),
	);
	return { program, requirements: { typescript: true, files: files.map((f) => path.relative(repoRoot, f)), values, classMembers, optional: [...optional].sort() } };
}

/** Without TypeScript: every name in every external import, type-only ones included. */
function deriveWithoutTypeScript(files) {
	const exportsByModule = new Map();
	const pattern = /import\s+(?:type\s+)?([\s\S]*?)\s+from\s+["']([^"']+)["']/g;
	for (const file of files) {
		for (const match of fs.readFileSync(file, "utf8").matchAll(pattern)) {
			const [, clause, module] = match;
			if (!isExternal(module)) continue;
			if (!exportsByModule.has(module)) exportsByModule.set(module, new Set());
			const names = exportsByModule.get(module);
			const braces = clause.match(/\{([\s\S]*)\}/);
			if (braces) {
				for (const part of braces[1].split(",")) {
					const name = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0];
					if (name) names.add(name);
				}
			}
			if (/\*\s+as\s+/.test(clause)) names.add("*");
		}
	}
	const values = [...exportsByModule].sort(([a], [b]) => a.localeCompare(b)).map(([module, names]) => ({ module, names: [...names].sort() }));
	return { files: files.map((f) => path.relative(repoRoot, f)), values, classMembers: [], optional: [] };
}

/** The requirements as the Markdown list kept in docs/compatibility.md (`--list-api` prints it). */
export function formatApiSurface(requirements) {
	const lines = [];
	for (const { module, names } of requirements.values) lines.push(`- \`${module}\` exports: ${names.map((n) => `\`${n}\``).join(", ")}`);
	const byModule = new Map();
	for (const m of requirements.classMembers) {
		if (!byModule.has(m.module)) byModule.set(m.module, []);
		byModule.get(m.module).push(`\`${m.className}${m.static ? "." : "#"}${m.member}()\``);
	}
	for (const [module, members] of byModule) lines.push(`- \`${module}\` class methods: ${members.join(", ")}`);
	return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// The checks.

async function probeBash(piModule) {
	if (typeof piModule.createBashToolDefinition !== "function") return { nonZeroExit: "unknown", outputSchema: false };
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sol-pi-compat-"));
	try {
		const bash = piModule.createBashToolDefinition(dir);
		const outputSchema = bash.outputSchema !== undefined && bash.outputSchema !== null;
		let nonZeroExit;
		try {
			// No context: the tool then runs in the folder it was created for.
			const result = await bash.execute("sol-pi-compat-probe", { command: "exit 3" }, undefined, undefined, undefined);
			nonZeroExit = result?.isError === true ? "isError" : "success";
		} catch (error) {
			if (/exited with code 3/.test(String(error?.message))) nonZeroExit = "throws";
			else return { nonZeroExit: "unknown", outputSchema, probeError: String(error?.message ?? error).split("\n")[0] };
		}
		return { nonZeroExit, outputSchema };
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

/** Runs every check against the Pi at `piRoot`; returns the report (never throws for an incompatible Pi). */
export async function checkPi({ piRoot = repoRoot, strict = false, requirements } = {}) {
	const packageDir = locatePi(piRoot);
	requirements ??= deriveRequirements();
	const version = readJson(path.join(packageDir, "package.json")).version;
	const failures = [];
	const warnings = [];
	if (!requirements.typescript) {
		warnings.push("TypeScript is not installed in the checkout (run npm ci): every imported name, type-only ones included, is checked as a runtime value");
	}

	const tested = TESTED_VERSIONS.includes(version);
	if (compareVersions(version, MIN_VERSION) < 0) failures.push(`Pi ${version} is older than the supported floor ${MIN_VERSION}`);
	else if (!tested) warnings.push(`Pi ${version} is not a tested version (tested: ${TESTED_VERSIONS.join(", ")})`);

	const internals = {};
	for (const name of INTERNAL_PACKAGES) {
		const dir = findPackage(packageDir, name);
		internals[name] = dir ? readJson(path.join(dir, "package.json")).version : null;
		if (!dir) failures.push(`${name} is not installed next to Pi`);
	}
	const mixed = Object.entries(internals).filter(([, v]) => v !== null && v !== version);
	const sameRelease = mixed.length === 0;
	if (!sameRelease) {
		warnings.push(
			`Pi's internal packages come from another release than Pi ${version}: ${mixed.map(([n, v]) => `${n}@${v}`).join(", ")} (reinstall Pi so all four packages have one version)`,
		);
	}

	// Load each module the extension imports, from where Pi's loader would take it.
	const modules = new Map();
	const moduleErrors = new Map();
	const loadModule = async (name) => {
		if (modules.has(name) || moduleErrors.has(name)) return modules.get(name);
		const dir = name === PI_PACKAGE ? packageDir : findPackage(packageDir, name);
		if (!dir) {
			moduleErrors.set(name, "not installed with this Pi");
			return undefined;
		}
		try {
			const mod = await import(pathToFileURL(entryFile(dir)).href);
			modules.set(name, mod);
			return mod;
		} catch (error) {
			moduleErrors.set(name, String(error?.message ?? error).split("\n")[0]);
			return undefined;
		}
	};

	const missing = [];
	const required = [];
	for (const { module, names } of requirements.values) {
		const mod = await loadModule(module);
		for (const name of names) {
			const present = mod !== undefined && (name === "*" || name in mod);
			required.push({ module, name, present });
			if (mod !== undefined && !present) missing.push(`${module}: ${name}`);
		}
	}
	for (const req of requirements.classMembers) {
		const mod = await loadModule(req.module);
		const cls = mod?.[req.className];
		const holder = req.static ? cls : cls?.prototype;
		const present = holder !== undefined && holder !== null && typeof holder[req.member] === "function";
		const name = `${req.className}${req.static ? "." : "#"}${req.member}`;
		required.push({ module: req.module, name, present });
		if (mod !== undefined && !present) missing.push(`${req.module}: ${name}`);
	}
	for (const [name, message] of moduleErrors) failures.push(`cannot load ${name}: ${message}`);
	if (missing.length > 0) failures.push(`missing Pi exports or methods the extension uses: ${missing.join(", ")}`);

	const piModule = modules.get(PI_PACKAGE) ?? (await loadModule(PI_PACKAGE));
	const bash = piModule ? await probeBash(piModule) : { nonZeroExit: "unknown", outputSchema: false };
	if (bash.nonZeroExit === "success") failures.push("Pi's bash tool reports `exit 3` as a success");
	if (bash.probeError) warnings.push(`could not run Pi's bash tool to see how it reports a non-zero exit: ${bash.probeError}`);
	const codemode = typeof piModule?.createCodemodeExtension === "function";

	const ok = failures.length === 0 && (!strict || warnings.length === 0);
	return {
		ok,
		strict,
		piRoot: path.resolve(piRoot),
		packageDir,
		version,
		tested,
		minimum: MIN_VERSION,
		testedVersions: TESTED_VERSIONS,
		internals,
		sameRelease,
		bash,
		codemode,
		required,
		optional: requirements.optional,
		warnings,
		failures,
	};
}

function formatReport(r) {
	const lines = [];
	lines.push(`Pi ${r.version} at ${r.packageDir}`);
	lines.push(`  version: ${r.tested ? "tested" : compareVersions(r.version, r.minimum) < 0 ? `below the floor ${r.minimum}` : "untested"} (floor ${r.minimum}; tested ${r.testedVersions.join(", ")})`);
	lines.push(`  internal packages: ${Object.entries(r.internals).map(([n, v]) => `${n.replace("@earendil-works/", "")} ${v ?? "missing"}`).join(", ")}${r.sameRelease ? " (same release)" : " (MIXED releases)"}`);
	const exit = { throws: "throws an error (Pi 0.x behaviour)", isError: "returns an error result, isError: true (Pi 1.x behaviour)", success: "reports success (unsupported)", unknown: "unknown" };
	lines.push(`  bash non-zero exit: ${exit[r.bash.nonZeroExit]}`);
	lines.push(`  bash output schema: ${r.bash.outputSchema ? "declared" : "none"}`);
	lines.push(`  codemode: ${r.codemode ? "available" : "not available"}`);
	const present = r.required.filter((x) => x.present).length;
	lines.push(`  extension's Pi imports and methods: ${present}/${r.required.length} present`);
	for (const w of r.warnings) lines.push(`warning: ${w}`);
	for (const f of r.failures) lines.push(`error: ${f}`);
	lines.push(r.ok ? "result: compatible" : r.failures.length > 0 ? "result: NOT compatible" : "result: failed (--strict turns warnings into failures)");
	return lines.join("\n");
}

async function main() {
	let options;
	try {
		options = parseArgs(process.argv.slice(2));
	} catch (error) {
		process.stderr.write(`check-pi-compat: ${error.message}\n`);
		return 2;
	}
	if (options.help) {
		process.stdout.write("usage: node scripts/check-pi-compat.mjs [--pi-root <dir>] [--strict] [--json] | --list-api\n");
		return 0;
	}
	if (options.listApi) {
		process.stdout.write(`${formatApiSurface(deriveRequirements())}\n`);
		return 0;
	}
	let report;
	try {
		report = await checkPi({ piRoot: options.piRoot ?? repoRoot, strict: options.strict });
	} catch (error) {
		if (!(error instanceof UsageError)) throw error;
		if (options.json) process.stdout.write(`${JSON.stringify({ ok: false, error: error.message }, null, 2)}\n`);
		process.stderr.write(`check-pi-compat: ${error.message}\n`);
		return 2;
	}
	process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
	return report.ok ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	process.exitCode = await main();
}

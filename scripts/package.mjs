#!/usr/bin/env node
// Packs SoL-Pi as npm tarballs, in the napi-rs per-platform layout:
//   sol-pi-<version>.tgz                          the Pi package: its entry index.ts, the extension, the generated
//                                                 loader and typings, README, LICENSE, the example
//                                                 config; each platform package an optional dependency
//   sol-pi-native-<platform>-<version>.tgz        one per platform whose addon is built here
//
//   node scripts/package.mjs [--out <dir>] [--json]
//
// `npm run package` runs scripts/setup.sh first (the release build), then this. The platform
// folders are sol-napi/npm/<platform>/ (committed, one per napi target); a platform is packed
// when its addon is there (`napi artifacts` puts it there in a release job) or next to the
// loader (`npm run build` puts the host's there). The version of every package is the root
// package.json's; the Pi peer range is pi-support.json's. Nothing is fetched: `npm pack` of
// folders staged under the output folder.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));

export const MAIN_PACKAGE = "sol-pi";
/** Files of the main package besides package.json, relative to the checkout (folders whole). */
export const MAIN_FILES = ["README.md", "LICENSE", "sol-pi.example.json", "sol-napi/index.js", "sol-napi/index.d.ts", "sol-napi/package.json", "sol-napi/sol-pi"];

/**
 * The installed package's entry, at its root: Pi lists an npm package whose entry is its root
 * `index.ts` by the package's name alone (`sol-pi`), where `sol-napi/sol-pi/index.ts` would show
 * as `sol-pi:sol-napi/sol-pi`. A checkout keeps the manifest's own entry, whose folder is named
 * `sol-pi` for the same reason.
 */
export const PACKAGE_ENTRY = "index.ts";
const PACKAGE_ENTRY_SOURCE = `// The sol-pi package's entry (made by scripts/package.mjs): the extension itself is in sol-napi/sol-pi/.
export { createSolPiExtension, default } from "./sol-napi/sol-pi/index.ts";
export type { SolPiExtensionOptions } from "./sol-napi/sol-pi/index.ts";
`;

/** A file of the extension folder that belongs in the package. */
export const isExtensionFile = (name) => name === "package.json" || (name.endsWith(".ts") && !name.endsWith(".d.ts"));

/** Every prepared platform: its folder, package name and addon file name. */
export function platforms() {
	const dir = path.join(root, "sol-napi", "npm");
	return fs
		.readdirSync(dir)
		.sort()
		.map((platform) => {
			const pkg = readJson(path.join(dir, platform, "package.json"));
			return { platform, dir: path.join(dir, platform), name: pkg.name, file: pkg.main, pkg };
		});
}

/** The main package's package.json, made from the checkout's. */
export function mainManifest() {
	const pkg = readJson(path.join(root, "package.json"));
	const support = readJson(path.join(root, "pi-support.json"));
	const peerDependencies = { ...pkg.peerDependencies, [support.piPackage]: support.peerRange };
	return {
		name: MAIN_PACKAGE,
		version: pkg.version,
		description: pkg.description,
		type: pkg.type,
		license: pkg.license,
		keywords: pkg.keywords,
		engines: pkg.engines,
		pi: { ...pkg.pi, extensions: [`./${PACKAGE_ENTRY}`] },
		files: [PACKAGE_ENTRY, ...MAIN_FILES.filter((f) => !["README.md", "LICENSE"].includes(f))],
		peerDependencies,
		optionalDependencies: Object.fromEntries(platforms().map((p) => [p.name, pkg.version])),
	};
}

function pack(dir, out) {
	const result = execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", out], {
		cwd: dir,
		encoding: "utf8",
		env: { ...process.env, npm_config_loglevel: "error", npm_config_update_notifier: "false" },
	});
	const [info] = JSON.parse(result);
	return {
		file: path.join(out, info.filename),
		name: info.name,
		version: info.version,
		integrity: info.integrity,
		shasum: info.shasum,
		manifest: readJson(path.join(dir, "package.json")),
		files: info.files.map((f) => f.path).sort(),
	};
}

function copy(from, to) {
	fs.mkdirSync(path.dirname(to), { recursive: true });
	fs.cpSync(from, to, { recursive: true });
}

function writeJson(file, value) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** Stages and packs every package into `out`; returns what was packed and the platforms skipped. */
export function packAll(out) {
	out = path.resolve(out);
	const stage = path.join(out, "stage");
	fs.rmSync(stage, { recursive: true, force: true });
	fs.mkdirSync(stage, { recursive: true });
	const version = readJson(path.join(root, "package.json")).version;

	const main = path.join(stage, MAIN_PACKAGE);
	writeJson(path.join(main, "package.json"), mainManifest());
	fs.writeFileSync(path.join(main, PACKAGE_ENTRY), PACKAGE_ENTRY_SOURCE);
	for (const file of MAIN_FILES) {
		const from = path.join(root, file);
		if (!fs.statSync(from).isDirectory()) copy(from, path.join(main, file));
		// The extension folder: its TypeScript and its package.json, never a stray file beside them.
		else for (const f of fs.readdirSync(from).filter(isExtensionFile)) copy(path.join(from, f), path.join(main, file, f));
	}
	const packed = [pack(main, out)];

	const skipped = [];
	for (const p of platforms()) {
		const addon = [path.join(p.dir, p.file), path.join(root, "sol-napi", p.file)].find((f) => fs.existsSync(f));
		if (!addon) {
			skipped.push(p.platform);
			continue;
		}
		const dir = path.join(stage, p.platform);
		writeJson(path.join(dir, "package.json"), { ...p.pkg, version });
		copy(path.join(p.dir, "README.md"), path.join(dir, "README.md"));
		copy(path.join(root, "LICENSE"), path.join(dir, "LICENSE"));
		copy(addon, path.join(dir, p.file));
		packed.push({ ...pack(dir, out), platform: p.platform });
	}
	fs.rmSync(stage, { recursive: true, force: true });
	return { packed, skipped };
}

function main() {
	const args = process.argv.slice(2);
	let out = path.join(root, "target", "npm");
	let json = false;
	for (let i = 0; i < args.length; i++) {
		if (args[i] === "--out" && args[i + 1]) out = args[++i];
		else if (args[i] === "--json") json = true;
		else {
			process.stderr.write("usage: node scripts/package.mjs [--out <dir>] [--json]\n");
			return 2;
		}
	}
	const result = packAll(out);
	if (result.packed.length < 2) {
		process.stderr.write(`package: no addon built for this machine; run \`npm run build\` first (packed only ${result.packed[0].file})\n`);
		return 1;
	}
	if (json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
	else {
		for (const p of result.packed) process.stdout.write(`${p.file} (${p.files.length} files)\n`);
		if (result.skipped.length > 0) process.stdout.write(`not built here (a release job on that platform packs it): ${result.skipped.join(", ")}\n`);
	}
	return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();

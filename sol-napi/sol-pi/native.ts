// Loads the napi-rs addon through its generated loader (`sol-napi/index.js`). Loading can
// fail on a platform without a build, in a checkout where it was never built, or with a
// stale build: each becomes one message that says why and how to fix it (Rust cannot say
// it, it is not loaded), and SoL-Pi stays off while Pi keeps working.
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";

import type * as NativeAddon from "../index.js";
import { truncatedElf } from "./native-file.ts";

export type { NativeAddon };

export type NativeLoad = { ok: true; addon: typeof NativeAddon } | { ok: false; message: string };

const require = createRequire(import.meta.url);

const firstLine = (error: unknown): string =>
	(error instanceof Error ? error.message : String(error)).split("\n").find((line) => line.trim() !== "")?.trim() ?? "unknown error";

export function extensionVersion(): string {
	return (require("../../package.json") as { version: string }).version;
}

/**
 * The platforms a prebuilt addon is published for, as napi-rs names them (`linux-x64-gnu`),
 * from the napi targets in `sol-napi/package.json`, which the package carries.
 */
export function prebuiltPlatforms(): string[] {
	let targets: string[] = [];
	try {
		targets = (require("../package.json") as { napi?: { targets?: string[] } }).napi?.targets ?? [];
	} catch {
		return [];
	}
	const arch: Record<string, string> = { x86_64: "x64", aarch64: "arm64", i686: "ia32", armv7: "arm" };
	return targets.map((triple) => {
		const [cpu = "", , system = "", abi] = triple.split("-");
		const name = arch[cpu] ?? cpu;
		if (system === "darwin") return `darwin-${name}`;
		if (system === "windows") return `win32-${name}${abi ? `-${abi}` : ""}`;
		return `${system}-${name}${abi ? `-${abi}` : ""}`;
	});
}

/**
 * The addon files the generated loader may open on this machine: a build beside the loader
 * (`sol-pi.<platform>.node`, from `npm run build`), then the installed platform package.
 */
function addonCandidates(): string[] {
	const host = `${process.platform}-${process.arch}`;
	const here = path.dirname(require.resolve("../index.js"));
	const files: string[] = [];
	try {
		for (const f of fs.readdirSync(here)) if (f.startsWith(`sol-pi.${host}`) && f.endsWith(".node")) files.push(path.join(here, f));
	} catch {
		// no folder listing: the loader reports what it finds
	}
	for (const platform of prebuiltPlatforms().filter((p) => p.startsWith(host))) {
		try {
			files.push(require.resolve(`sol-pi-${platform}`));
		} catch {
			// not installed (npm skips another platform's package)
		}
	}
	return files;
}

/** Loads the addon; never throws. */
export function loadNative(): NativeLoad {
	let addon: typeof NativeAddon;
	try {
		for (const file of addonCandidates()) {
			const problem = truncatedElf(file);
			if (problem) throw new Error(problem);
		}
		addon = require("../index.js") as typeof NativeAddon;
	} catch (error) {
		const platform = `${process.platform}-${process.arch}`;
		const platforms = prebuiltPlatforms();
		const message =
			`SoL-Pi is disabled: its native addon could not be loaded on ${platform} (${firstLine(error)}). ` +
			`The sol-pi package ships a prebuilt addon for ${platforms.length > 0 ? platforms.join(", ") : "no platform"}; ` +
			"elsewhere, or if npm skipped it, build it from source in a SoL-Pi checkout with `npm run setup` (needs Rust and Node 22) and install that checkout. Pi itself keeps working.";
		return { ok: false, message };
	}
	let version: string;
	try {
		version = addon.addonVersion();
	} catch (error) {
		version = `unreadable: ${firstLine(error)}`;
	}
	const expected = extensionVersion();
	if (version === expected) return { ok: true, addon };
	const message = `SoL-Pi is disabled: its native addon is version ${version} but the extension is ${expected}. Rebuild the addon in the SoL-Pi checkout with \`npm run build\`. Pi itself keeps working.`;
	return { ok: false, message };
}

// Loads the napi-rs addon through its generated loader (`sol-napi/index.js`). Loading can
// fail on a platform without a build, in a checkout where it was never built, or with a
// stale build: each becomes one message that says why and how to fix it (Rust cannot say
// it, it is not loaded), and SoL-Pi stays off while Pi keeps working.
import { createRequire } from "node:module";

import type * as NativeAddon from "../index.js";

export type { NativeAddon };

export type NativeLoad = { ok: true; addon: typeof NativeAddon } | { ok: false; message: string };

const require = createRequire(import.meta.url);

const firstLine = (error: unknown): string =>
	(error instanceof Error ? error.message : String(error)).split("\n").find((line) => line.trim() !== "")?.trim() ?? "unknown error";

export function extensionVersion(): string {
	return (require("../../package.json") as { version: string }).version;
}

/** Loads the addon; never throws. */
export function loadNative(): NativeLoad {
	let addon: typeof NativeAddon;
	try {
		addon = require("../index.js") as typeof NativeAddon;
	} catch (error) {
		const platform = `${process.platform}-${process.arch}`;
		const message =
			`SoL-Pi is disabled: its native addon could not be loaded on ${platform} (${firstLine(error)}). ` +
			"Build it in the SoL-Pi checkout with `npm run setup` (needs Rust and Node 22), or install SoL-Pi on a platform it ships for. Pi itself keeps working.";
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

// Where SoL-Pi keeps its files for a session: `<sessionDir>/sol-pi/<sessionId>/`,
// or, for a session without a directory (`--no-session`, in-memory sessions), a
// private `sol-pi-<sessionId>-<random>/` under the OS temp folder, made once per
// session id and reused by every mechanism while the extension is loaded.
// Rust checks the session id and builds the path; this file only makes the temp folder.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

import type { NativeAddon } from "./native.ts";

const temporaryRoots = new Map<string, string>();
// Roots already built, by session directory and id: the context handler asks on every request.
const roots = new Map<string, RuntimeRoot>();

export type RuntimeRoot = { ok: true; root: string } | { ok: false; error: string };

export function runtimeRoot(ctx: ExtensionContext, addon: typeof NativeAddon): RuntimeRoot {
	const sessionId = ctx.sessionManager.getSessionId();
	const key = `${ctx.sessionManager.getSessionDir()}\0${sessionId}`;
	let root = roots.get(key);
	if (!root) {
		root = buildRoot(ctx, addon, sessionId);
		// A failure is not kept: the next request tries again.
		if (root.ok) roots.set(key, root);
	}
	return root;
}

function buildRoot(ctx: ExtensionContext, addon: typeof NativeAddon, sessionId: string): RuntimeRoot {
	let sessionDir = ctx.sessionManager.getSessionDir();
	let temporary = false;
	if (!sessionDir) {
		const checked = addon.checkSessionId(sessionId);
		if (checked) return { ok: false, error: checked };
		let dir = temporaryRoots.get(sessionId);
		if (!dir) {
			dir = fs.mkdtempSync(path.join(os.tmpdir(), `sol-pi-${sessionId}-`));
			temporaryRoots.set(sessionId, dir);
		}
		sessionDir = dir;
		temporary = true;
	}
	const result = addon.runtimeRoot({ sessionDir, sessionId, temporary });
	return result.root !== undefined ? { ok: true, root: result.root } : { ok: false, error: result.error ?? "no runtime root" };
}

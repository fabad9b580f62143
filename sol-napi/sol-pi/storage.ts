// Where SoL-Pi keeps a session's files. Rust decides and caches it: `<sessionDir>/sol-pi/
// <sessionId>/`, or, for a session without a directory (`--no-session`, in-memory sessions),
// one private `sol-pi-<sessionId>-<random>/` under the OS temp folder per session id.
import * as os from "node:os";

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

import type { NativeAddon } from "./native.ts";

/** The last root Rust gave, with what it was asked: the same question gets the same root. */
let last: { sessionDir: string | undefined; sessionId: string; tempDir: string; outcome: NativeAddon.RuntimeRootOutcome } | undefined;

/**
 * The session's runtime root. Rust keeps each root it built for the process (`ROOTS` in
 * `sol-napi/src/storage.rs`); the last one is kept here as well, for the same session directory, id and temp
 * folder, so that a session's steady state does not cross for it. `unavailable` is asked again.
 */
export function runtimeRoot(ctx: ExtensionContext, addon: typeof NativeAddon): NativeAddon.RuntimeRootOutcome {
	const sessionDir = ctx.sessionManager.getSessionDir();
	const sessionId = ctx.sessionManager.getSessionId();
	const tempDir = os.tmpdir();
	if (last && last.sessionDir === sessionDir && last.sessionId === sessionId && last.tempDir === tempDir) return last.outcome;
	const outcome = addon.runtimeRoot({ sessionDir, sessionId, tempDir });
	last = outcome.kind === "root" ? { sessionDir, sessionId, tempDir, outcome } : undefined;
	return outcome;
}

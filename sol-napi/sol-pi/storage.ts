// Where SoL-Pi keeps a session's files. Rust decides and caches it: `<sessionDir>/sol-pi/
// <sessionId>/`, or, for a session without a directory (`--no-session`, in-memory sessions),
// one private `sol-pi-<sessionId>-<random>/` under the OS temp folder per session id.
import * as os from "node:os";

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

import type { NativeAddon } from "./native.ts";

export function runtimeRoot(ctx: ExtensionContext, addon: typeof NativeAddon): NativeAddon.RuntimeRootOutcome {
	return addon.runtimeRoot({ sessionDir: ctx.sessionManager.getSessionDir(), sessionId: ctx.sessionManager.getSessionId(), tempDir: os.tmpdir() });
}

// The SoL-Pi Pi extension: a thin I/O shell over the Rust addon.
//
// It registers one `session_start` handler. On the first session start it loads
// `sol-pi.json` through Rust and, in the interactive terminal only, shows one
// notice naming the enabled mechanisms. Anything that stops SoL-Pi (no addon,
// a broken config) is thrown from that handler as one message: Pi reports it
// through its own error channel (the TUI, or stderr in print mode) and keeps
// running without SoL-Pi. Policy lives in Rust; this file only carries data.
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import type { BashToolOptions, ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

import { registerActionFusion } from "./action-fusion.ts";
import { loadNative, type NativeLoad } from "./native.ts";
import { registerObservationPack } from "./observation-pack.ts";
import { registerOnlineContextCompact } from "./online-context-compact.ts";
import { registerReducer } from "./reducer.ts";

export interface SolPiExtensionOptions {
	/** Pi's agent directory; defaults to Pi's own `getAgentDir()`. */
	agentDir?: string;
	/** Replaces the addon loader (embedding and tests). */
	loadNative?: () => NativeLoad;
	/** Bash options for Action Fusion's `then_run`; by default read from Pi's settings files. */
	bashOptions?: BashToolOptions;
	/** Online Context Compact's retained tail in tokens; overrides Pi's compaction settings. */
	keepRecentTokens?: number;
}

/** Builds a SoL-Pi extension factory; `export default` below is the stock one. */
export function createSolPiExtension(options: SolPiExtensionOptions = {}) {
	return function solPi(pi: ExtensionAPI): void {
		const native = (options.loadNative ?? loadNative)();
		let started = false;

		pi.on("session_start", (_event, ctx: ExtensionContext) => {
			if (started) return;
			started = true;
			if (!native.ok) throw new Error(native.message);

			const agentDir = options.agentDir ?? getAgentDir();
			let outcome: ReturnType<typeof native.addon.loadConfig>;
			try {
				outcome = native.addon.loadConfig({ cwd: ctx.cwd, agentDir, projectTrusted: ctx.isProjectTrusted() });
			} catch (error) {
				const reason = error instanceof Error ? error.message : String(error);
				throw new Error(`SoL-Pi is disabled for this session: internal error while loading its config (${reason}). Pi itself keeps working.`);
			}
			if (!outcome.ok || !outcome.config) throw new Error(outcome.error?.message ?? "SoL-Pi is disabled: its config could not be loaded.");
			const config = outcome.config;

			// Registration order matters: Online Context Compact observes context last.
			// A mechanism that cannot start is skipped with its own message; the others still run.
			const failures: string[] = [];
			const start = (register: () => void) => {
				try {
					register();
				} catch (error) {
					failures.push(error instanceof Error ? error.message : String(error));
				}
			};
			if (config.actionFusion) start(() => registerActionFusion(pi, ctx, native.addon, { agentDir, bashOptions: options.bashOptions }));
			if (config.observationPack) start(() => registerObservationPack(pi, native.addon));
			if (config.evidencePreservingReducer)
				start(() =>
					registerReducer(pi, native.addon, {
						provider: config.evidencePreservingReducerProvider,
						model: config.evidencePreservingReducerModel,
					}),
				);
			// Last among `context` handlers: it observes what the others projected.
			if (config.onlineContextCompact)
				start(() =>
					registerOnlineContextCompact(pi, ctx, native.addon, {
						cacheWriteReadRatio: config.cacheWriteReadRatio,
						keepRecentTokens: options.keepRecentTokens,
					}),
				);

			// `hasUI` is also true in RPC mode; only the interactive terminal gets the notice.
			if (ctx.mode === "tui" && outcome.notice) ctx.ui.notify(outcome.notice, "info");
			if (failures.length > 0) throw new Error(failures.join("\n"));
		});
	};
}

export default createSolPiExtension();

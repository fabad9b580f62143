// The SoL-Pi Pi extension, a thin I/O shell over the Rust addon. On the first session start it
// loads `sol-pi.json` through Rust, registers the mechanisms Rust lists as enabled, in Rust's
// order, and shows Rust's notice in the interactive terminal. Anything that stops SoL-Pi is
// thrown from that handler as one message: Pi reports it and keeps running without it.
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import type { BashToolOptions, ExtensionAPI } from "@earendil-works/pi-coding-agent";

import { registerActionFusion } from "./action-fusion.ts";
import { routedEvents } from "./events.ts";
import { loadNative, type NativeLoad } from "./native.ts";
import { registerObservationPack } from "./observation-pack.ts";
import { registerOnlineContextCompact } from "./online-context-compact.ts";
import { registerReducer } from "./reducer.ts";
import { frameWith } from "./request-frame.ts";
import { SavingsTracker } from "./savings.ts";
import { messageOf } from "./tui.ts";

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
	return function solPi(piApi: ExtensionAPI): void {
		// Every handler below and in the mechanisms enters through one registration per event.
		const pi = routedEvents(piApi);
		const native = (options.loadNative ?? loadNative)();
		let started = false;
		pi.on("session_start", (_event, ctx) => {
			if (started) return;
			started = true;
			if (!native.ok) throw new Error(native.message);
			const [addon, agentDir] = [native.addon, options.agentDir ?? getAgentDir()];
			frameWith(addon);
			const outcome = addon.loadConfig({ cwd: ctx.cwd, agentDir, projectTrusted: ctx.isProjectTrusted() });
			if (outcome.kind === "invalid") throw new Error(outcome.error.message);
			const { config } = outcome;
			const savings = new SavingsTracker(addon, config.prices, { provider: config.evidencePreservingReducerProvider, model: config.evidencePreservingReducerModel });
			const register: Record<string, () => void> = {
				actionFusion: () => registerActionFusion(pi, ctx, addon, { agentDir, bashOptions: options.bashOptions, savings }),
				observationPack: () =>
					registerObservationPack(pi, addon, savings, {
						cacheAwareRatio: config.cacheAware || config.keepRecentOutputs ? config.cacheWriteReadRatio : undefined,
						keepRecentOutputs: config.keepRecentOutputs,
					}),
				evidencePreservingReducer: () =>
					registerReducer(
						pi,
						addon,
						{ provider: config.evidencePreservingReducerProvider, model: config.evidencePreservingReducerModel },
						savings,
						config.cacheAware ? { cacheWriteReadRatio: config.cacheWriteReadRatio, prices: config.prices } : undefined,
					),
				onlineContextCompact: () =>
					registerOnlineContextCompact(pi, ctx, addon, { cacheWriteReadRatio: config.cacheWriteReadRatio, keepRecentTokens: options.keepRecentTokens, savings }),
			};
			// A mechanism that cannot start is skipped with its own message; the others still run.
			const failures = outcome.enabled.flatMap((key) => {
				try {
					register[key]();
				} catch (error) {
					return [messageOf(error)];
				}
				return [];
			});
			// After the mechanisms, so it sees each request as sent; with none on, nothing is registered.
			if (outcome.enabled.length > 0) savings.register(pi, ctx);
			// `hasUI` is also true in RPC mode; only the interactive terminal gets the notice.
			if (ctx.mode === "tui") ctx.ui.notify(outcome.notice, "info");
			if (failures.length > 0) throw new Error(failures.join("\n"));
		});
	};
}

export default createSolPiExtension();

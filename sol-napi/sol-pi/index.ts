// The SoL-Pi Pi extension, a thin I/O shell over the Rust addon. On the first session start it
// loads `sol-pi.json` through Rust, registers the mechanisms Rust lists as enabled, in Rust's
// order, and shows Rust's notice in the interactive terminal. Anything that stops SoL-Pi is
// thrown from that handler as one message: Pi reports it and keeps running without it.
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import type { BashToolOptions, ExtensionAPI } from "@earendil-works/pi-coding-agent";

import { registerActionFusion } from "./action-fusion.ts";
import { loadNative, type NativeAddon, type NativeLoad } from "./native.ts";
import { type ContextStep, registerObservationPack } from "./observation-pack.ts";
import { registerPlanTool } from "./online-context-compact.ts";
import { registerReducer } from "./reducer.ts";
import { frameWith } from "./request-frame.ts";
import { SavingsTracker } from "./savings.ts";
import { registerSession, type SessionDriver } from "./session.ts";
import { messageOf, piMajor } from "./tui.ts";

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

/** ObservationPack's placement as `config` sets it (the engine's `observationPack` option when ObservationPack is on). */
export const observationPackPlacement = (config: NativeAddon.EffectiveConfig): NativeAddon.ObsPlacement => ({
	cacheAwareRatio: config.cacheAware || config.keepRecentOutputs ? config.cacheWriteReadRatio : undefined,
	keepRecentOutputs: config.keepRecentOutputs,
});

/** Builds a SoL-Pi extension factory; `export default` below is the stock one. */
export function createSolPiExtension(options: SolPiExtensionOptions = {}) {
	return function solPi(pi: ExtensionAPI): void {
		const native = (options.loadNative ?? loadNative)();
		let started = false;
		// Later session starts go to the session's handler (none when SoL-Pi did not start).
		let session: SessionDriver | undefined;
		pi.on("session_start", (_event, ctx) => {
			if (started) return session?.sessionStart(ctx);
			started = true;
			if (!native.ok) throw new Error(native.message);
			const [addon, agentDir] = [native.addon, options.agentDir ?? getAgentDir()];
			frameWith(addon);
			const outcome = addon.loadConfig({ cwd: ctx.cwd, agentDir, projectTrusted: ctx.isProjectTrusted() });
			if (outcome.kind === "invalid") throw new Error(outcome.error.message);
			const { config, enabled } = outcome;
			// With none on, nothing is registered.
			if (enabled.length === 0) return void (ctx.mode === "tui" && ctx.ui.notify(outcome.notice, "info"));
			const failures: string[] = [];
			/** A mechanism that cannot start is skipped with its own message; the others still run. */
			const attempt = <T>(start: () => T): T | undefined => {
				try {
					return start();
				} catch (error) {
					failures.push(messageOf(error));
					return undefined;
				}
			};
			const on = (key: string) => enabled.includes(key);
			const occ = on("onlineContextCompact")
				? { cacheWriteReadRatio: config.cacheWriteReadRatio, keepRecentTokens: options.keepRecentTokens, piRefusesTreeNavigationDuringCompaction: piMajor >= 1 }
				: undefined;
			const observationPack = on("observationPack") ? observationPackPlacement(config) : undefined;
			// The session engine: the book, with Online Context Compact and ObservationPack when on
			// (Online Context Compact's invalid options leave it off, with their message).
			const withOcc = attempt(() => new addon.Engine({ prices: config.prices, occ, observationPack }));
			const engine = withOcc ?? new addon.Engine({ prices: config.prices, observationPack });
			const reducerRoute = { provider: config.evidencePreservingReducerProvider, model: config.evidencePreservingReducerModel };
			const savings = new SavingsTracker(addon, engine, reducerRoute);
			const economy = config.cacheAware ? { cacheWriteReadRatio: config.cacheWriteReadRatio, prices: config.prices } : undefined;
			// In Rust's order (`enabled`); ObservationPack's `context` step goes to the session's handler.
			let pack: ContextStep | undefined;
			const register: Record<string, () => void> = {
				actionFusion: () => registerActionFusion(pi, ctx, addon, { agentDir, bashOptions: options.bashOptions, engine, savings }),
				observationPack: () => void (pack = registerObservationPack(pi, addon, engine, savings)),
				evidencePreservingReducer: () => registerReducer(pi, addon, reducerRoute, engine, savings, economy),
			};
			for (const key of enabled) attempt(() => register[key]?.());
			// Online Context Compact's tool last, as it comes last in Rust's order.
			const occOn = occ !== undefined && withOcc !== undefined;
			const driver = registerSession(pi, ctx, addon, engine, savings, occOn, pack);
			session = driver;
			if (occOn) attempt(() => registerPlanTool(pi, addon, engine, driver, savings));
			savings.register(pi, ctx);
			// `hasUI` is also true in RPC mode; only the interactive terminal gets the notice.
			if (ctx.mode === "tui") ctx.ui.notify(outcome.notice, "info");
			if (failures.length > 0) throw new Error(failures.join("\n"));
		});
	};
}

export default createSolPiExtension();

#!/usr/bin/env node
// Config preflight: validates a SoL-Pi configuration file before Pi loads it.
//
//   node scripts/check-sol-pi-config.mjs --config <path> [--require-all-enabled]
//
// The file is checked by the addon's `validateConfigFile`, which runs the same Rust
// validation (`sol_core::parse_config`) the extension applies to `sol-pi.json`, so the two
// cannot disagree. On success the effective configuration is printed as JSON (exit 0); on any
// failure one line goes to stderr: `SoL-Pi configuration preflight failed: <message>` (exit 1).
import * as path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const FLAGS = ["actionFusion", "observationPack", "evidencePreservingReducer", "onlineContextCompact"];

class PreflightError extends Error {}

function parseArgs(argv) {
	const options = { config: undefined, requireAllEnabled: false };
	const seen = new Set();
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === "--config" || arg === "--require-all-enabled") {
			if (seen.has(arg)) throw new PreflightError(`duplicate option: ${arg}`);
			seen.add(arg);
		}
		if (arg === "--require-all-enabled") options.requireAllEnabled = true;
		else if (arg === "--config") {
			const value = argv[i + 1];
			if (value === undefined || value.startsWith("--")) throw new PreflightError("missing value for --config");
			options.config = value;
			i++;
		} else throw new PreflightError(`unknown option: ${arg}`);
	}
	if (options.config === undefined) throw new PreflightError("--config is required");
	return options;
}

function loadAddon() {
	try {
		return createRequire(path.join(repoRoot, "package.json"))("./sol-napi/index.js");
	} catch (error) {
		const reason = String(error?.message ?? error).split("\n")[0];
		throw new PreflightError(`the SoL-Pi native addon could not be loaded (run npm run build): ${reason}`);
	}
}

function run(argv) {
	const options = parseArgs(argv);
	const configPath = path.resolve(options.config);
	const outcome = loadAddon().validateConfigFile(configPath);
	if (!outcome.ok) throw new PreflightError(outcome.error.detail);
	const c = outcome.config;
	if (options.requireAllEnabled) {
		const off = FLAGS.filter((flag) => c[flag] !== true);
		if (off.length > 0) throw new PreflightError(off.map((flag) => `${flag} must be true`).join("; "));
	}
	return {
		ok: true,
		all_enabled: outcome.allEnabled,
		effective_config: {
			version: c.version,
			actionFusion: c.actionFusion,
			observationPack: c.observationPack,
			evidencePreservingReducer: c.evidencePreservingReducer,
			onlineContextCompact: c.onlineContextCompact,
			cacheWriteReadRatio: c.cacheWriteReadRatio,
			cacheAware: c.cacheAware,
			evidencePreservingReducerModel: c.evidencePreservingReducerModel,
			evidencePreservingReducerProvider: c.evidencePreservingReducerProvider,
			// Only when on (ObservationPack's recent-outputs placement).
			...(c.keepRecentOutputs ? { keepRecentOutputs: c.keepRecentOutputs } : {}),
			// Only when the file sets a price table (the savings report's default otherwise).
			...(c.prices ? { prices: c.prices } : {}),
		},
		config: configPath,
	};
}

try {
	process.stdout.write(`${JSON.stringify(run(process.argv.slice(2)), null, 2)}\n`);
} catch (error) {
	const message = error instanceof PreflightError ? error.message : String(error?.stack ?? error);
	process.stderr.write(`SoL-Pi configuration preflight failed: ${message.replace(/\s*\n\s*/g, " ")}\n`);
	process.exitCode = 1;
}

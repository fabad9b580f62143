// The addon's test-only exports (sol-napi/src/test_hooks.rs): `__panicForTests`,
// `fusionPlanCall`, `occSizeMessages`, `occObservedMessages`, `frameInPlace`. The addon `npm run build` makes,
// which the packages ship and the other tests load, has none of them; these come from cargo's
// debug build of sol-napi with the `test-hooks` feature (in CARGO_TARGET_DIR when set, as
// scripts/test.sh sets it for the suites), brought up to date here: a no-op when it is current.
import { spawnSync } from "node:child_process";
import * as path from "node:path";

import { repoRoot } from "./support.mjs";

const library = { darwin: "libsol_napi.dylib", win32: "sol_napi.dll" }[process.platform] ?? "libsol_napi.so";
const loaded = new Map();
/** The library file of each profile, once cargo brought it up to date in this process. */
const built = new Map();

/**
 * The test-hooks build's library file, built first when it is not current (once per
 * process); `release` (for a benchmark) builds it with the release profile, as the shipped
 * addon is built.
 */
export function testHooksFile({ release = false } = {}) {
	if (built.has(release)) return built.get(release);
	const profile = release ? ["--release"] : [];
	const build = spawnSync("cargo", ["build", "-q", ...profile, "-p", "sol-napi", "--features", "test-hooks"], { cwd: repoRoot, encoding: "utf8", timeout: 1_800_000 });
	if (build.status !== 0) throw new Error(`cargo build -p sol-napi --features test-hooks failed:\n${build.stderr}`);
	built.set(release, path.join(path.resolve(repoRoot, process.env.CARGO_TARGET_DIR ?? "target"), release ? "release" : "debug", library));
	return built.get(release);
}

/** The test-hooks build of the addon, loaded once per process (`process.dlopen`, whatever the file's name). */
export function testHooks({ release = false } = {}) {
	if (!loaded.has(release)) {
		const module = { exports: {} };
		process.dlopen(module, testHooksFile({ release }));
		loaded.set(release, module.exports);
	}
	return loaded.get(release);
}

#!/usr/bin/env bash
# The full test command: sets everything up, then runs every check.
#   Rust: fmt, clippy -D warnings, unit + property + snapshot tests (all features), then the
#   library crates as published: docs without warnings and `cargo package` with verification
#   Addon: the committed generated loader (index.js / index.d.ts) matches the build
#   TypeScript: type check of the extension
#   Per version of the Pi matrix: type check of the extension against that version's types,
#   and the complete JS integration suite, whose check-pi-compat.test.mjs runs
#   `check-pi-compat --strict` against that install (the one run of it per version)
# At the end it prints the wall and CPU seconds each step took (scripts/test-times.sh times
# each JS file). The Pi versions' JS suites run beside the Rust and TypeScript steps, all four
# at a time (SOL_PI_TEST_JOBS=n: n at a time; 1 runs them one after another at the end, with
# their output as it comes; see README).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$root"
start=$(date +%s)
times=()
# lap NAME: closes the timing of the step before and starts step NAME.
# Each step's line also gives the CPU seconds its processes used (user + system, from the
# shell's /proc stat: the children it has waited for), which shows what running steps side by
# side could gain on two cores.
tick=$(getconf CLK_TCK)
cpu() { local f; read -r -a f </proc/$$/stat; echo $(( (f[15] + f[16]) / tick )); }
step_start=$start step_cpu=$(cpu) step_name="setup.sh --matrix"
lap() {
	local t c; t=$(date +%s) c=$(cpu)
	times+=("$((t - step_start)) s, CPU $((c - step_cpu)) s  $step_name")
	step_start=$t step_cpu=$c step_name="$1"; echo "== $1"
}
bash scripts/setup.sh --matrix

lap "cargo fmt --check"
cargo fmt --all -- --check

# The JS suites run beside the Rust steps below (SOL_PI_TEST_JOBS Pi versions at a time, all
# four by default), since a suite leaves most of a core idle (its tests wait on Pi, shells and
# terminals). They need the addon (built by the setup) and the `sol-pi` debug binary that
# replay-cli.test.mjs compares with `npm run replay`: built here, first, in a target folder of
# their own, so that nothing the Rust steps build replaces it while they run (that test's own
# `cargo build`, kept so the file stays right alone, is then a no-op).
js_target="${CARGO_TARGET_DIR:-$root/target}/js-suites"
lap "cargo build -p sol-pi-cli (for the JS suites)"
CARGO_TARGET_DIR="$js_target" cargo build -q -p sol-pi-cli

passed=0 failed=0 bad_versions=()
logs="$(mktemp -d)"
js_suites=""
# A step that fails ends the command: the suites still running in the background end with it.
trap '[ -z "$js_suites" ] || kill -- "-$js_suites" 2>/dev/null; rm -rf "$logs"' EXIT
# One Pi version's JS suite, its output in $logs/<v>.log and its exit code in $logs/<v>.rc.
suite() { set +e; CARGO_TARGET_DIR="$js_target" bash scripts/test-js.sh "$1" >"$logs/$1.log" 2>&1; echo $? >"$logs/$1.rc"; }
# Every version's suite, $1 at a time; then the suites' wall and CPU seconds in $logs/js.times.
suites() {
	local t0 c0 v
	t0=$(date +%s) c0=$(cpu)
	for v in "${PI_MATRIX_VERSIONS[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$1" ]; do wait -n || true; done
		suite "$v" &
	done
	wait
	echo "$(($(date +%s) - t0)) s, CPU $(($(cpu) - c0)) s  JS integration suites, $1 Pi versions at a time (SOL_PI_TEST_JOBS), beside the steps above" >"$logs/js.times"
}
jobs_max="${SOL_PI_TEST_JOBS:-${#PI_MATRIX_VERSIONS[@]}}"
if [ "$jobs_max" -gt 1 ]; then
	# In a process group of its own (job control on just for this start), so that the trap
	# above can end the suites and everything they started; cpu() there reads the subshell.
	set -m
	(
		set +m
		cpu() { local f; read -r -a f </proc/$BASHPID/stat; echo $(((f[15] + f[16]) / tick)); }
		suites "$jobs_max"
	) </dev/null &
	js_suites=$!
	set +m
	echo "== JS integration suites started in the background, $jobs_max Pi versions at a time"
fi

lap "cargo clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings
lap "cargo test"
# Property tests run from a fixed seed here, so that the test command gives the same
# outcome on every machine and every run; scripts/proptest-explore.sh runs them from fresh
# random seeds with more cases, to look for new failures (commit what it finds to the
# crate's proptest-regressions/).
INSTA_UPDATE=no PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261201}" cargo test --workspace --all-features

lap "check-crates.sh"
bash scripts/check-crates.sh

lap "generated addon loader is committed as built"
if ! git diff --exit-code -- sol-napi/index.js sol-napi/index.d.ts; then
	echo "sol-napi/index.js or index.d.ts differs from what the build generates; commit the regenerated files" >&2
	exit 1
fi

lap "TypeScript"
npm run --silent typecheck

for v in "${PI_MATRIX_VERSIONS[@]}"; do
	lap "TypeScript against Pi $v's types"
	if ! bash scripts/typecheck-pi.sh "$v"; then bad_versions+=("$v"); fi
done
if [ "$jobs_max" -le 1 ]; then
	# One after another, with the output as it comes (for reading a failure as it happens).
	for v in "${PI_MATRIX_VERSIONS[@]}"; do
		lap "JS integration suite on Pi $v"
		set +e; CARGO_TARGET_DIR="$js_target" bash scripts/test-js.sh "$v" 2>&1 | tee "$logs/$v.log"; echo "${PIPESTATUS[0]}" >"$logs/$v.rc"; set -e
	done
else
	lap "waiting for the JS integration suites"
	wait "$js_suites" || true
	js_suites=""
	for v in "${PI_MATRIX_VERSIONS[@]}"; do echo "== JS integration suite on Pi $v"; cat "$logs/$v.log"; done
fi
for v in "${PI_MATRIX_VERSIONS[@]}"; do
	[ "$(cat "$logs/$v.rc" 2>/dev/null)" = 0 ] || bad_versions+=("$v")
	p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$logs/$v.log" | tail -1)
	f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$logs/$v.log" | tail -1)
	# A run that died before reporting counts as a failure.
	[ -n "$p" ] || { p=0; f=$(( ${f:-0} + 1 )); }
	echo "js on Pi $v: $p passed, ${f:-0} failed"
	passed=$((passed + p)) failed=$((failed + ${f:-0}))
done
lap "done"
printf '%s\n' "step times:" "${times[@]/#/  }"
[ ! -f "$logs/js.times" ] || echo "  $(cat "$logs/js.times")"
echo "test command took $(( $(date +%s) - start )) s; Pi versions with failures: ${bad_versions[*]:-none}"
echo "js: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#bad_versions[@]} -eq 0 ]

#!/usr/bin/env bash
# The full test command: sets everything up, then runs every check.
#   Rust: fmt, clippy -D warnings, unit + property + snapshot tests (all features), then the
#   library crates as published: docs without warnings and `cargo package` with verification
#   Addon: the committed generated loader (index.js / index.d.ts) matches the build
#   TypeScript: type check of the extension
#   Per version of the Pi matrix: type check of the extension against that version's types,
#   and the complete JS integration suite, whose check-pi-compat.test.mjs runs
#   `check-pi-compat --strict` against that install (the one run of it per version)
# Steps run side by side where they are independent, so that both cores stay busy: clippy and
# the JS suites' `sol-pi` binary build while the setup installs and compiles the addon (a
# release build with LTO spends much of its time on one core), and the four Pi versions' JS
# suites run in the background through all the steps after the setup (SOL_PI_TEST_JOBS=n: n
# versions at a time; 1 runs them one after another at the end, with their output as it comes;
# see README). A background step's output is printed when it is joined.
# At the end it prints the wall and CPU seconds of each step (scripts/test-times.sh times each
# JS file).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$root"
start=$(date +%s)
logs="$(mktemp -d)"
background=()
declare -A background_pid=()
# A step that fails ends the command, and the steps still running in the background end with it.
trap 'for group in "${background[@]}"; do kill -- "-$group" 2>/dev/null || true; done; rm -rf "$logs"' EXIT

tick=$(getconf CLK_TCK)
# The CPU seconds (user + system) of the children process $1 has reaped.
cpu_of() { local f; read -r -a f </proc/$1/stat; echo $(((f[15] + f[16]) / tick)); }
# measured NAME COMMAND...: runs the command in this shell's subshell and appends its wall and
# CPU seconds to $logs/times (its own CPU, whatever else runs beside it); returns its status.
measured() {
	local name="$1" me t0 c0 status=0
	shift
	me=$BASHPID t0=$(date +%s) c0=$(cpu_of "$BASHPID")
	"$@" || status=$?
	echo "$(($(date +%s) - t0)) s, CPU $(($(cpu_of "$me") - c0)) s  $name" >>"$logs/times"
	return "$status"
}
# step NAME COMMAND...: a step in the foreground, its output as it comes.
step() {
	echo "== $1"
	(measured "$@")
}
# step_bg ID NAME COMMAND...: a step started in the background, in a process group of its own
# (job control on just for this start, so the trap can end it and all it started); its output
# goes to $logs/ID.log and its status to $logs/ID.rc. join ID prints the output and returns
# the status.
step_bg() {
	local id="$1"
	shift
	echo "== $1 (started in the background)"
	set -m
	(
		set +m
		status=0
		measured "$@" >"$logs/$id.log" 2>&1 </dev/null || status=$?
		echo "$status" >"$logs/$id.rc"
	) &
	background_pid[$id]=$!
	background+=("$!")
	set +m
}
join() {
	wait "${background_pid[$1]}" || true
	cat "$logs/$1.log"
	return "$(cat "$logs/$1.rc" 2>/dev/null || echo 1)"
}

step "cargo fmt --check" cargo fmt --all -- --check

# The JS suites' `sol-pi` debug binary (replay-cli.test.mjs compares it with `npm run replay`)
# and the addon's debug build with the `test-hooks` exports (sol-napi/test/hooks.mjs), in a
# target folder of their own, so that nothing the Rust steps build replaces them while the
# suites run (the tests' own `cargo build`s, kept so each file stays right alone, are no-ops).
# Two builds, not one: a build of both at once unifies their features, and the tests' own
# build of one would then not be a no-op.
js_target="${CARGO_TARGET_DIR:-$root/target}/js-suites"
js_builds() {
	CARGO_TARGET_DIR="$js_target" cargo build -q -p sol-pi-cli &&
		CARGO_TARGET_DIR="$js_target" cargo build -q -p sol-napi --features test-hooks
}
step_bg cli "cargo build -p sol-pi-cli, -p sol-napi --features test-hooks (for the JS suites)" js_builds
# Debug and release builds lock their own folders of target/: clippy does not wait for the addon.
step_bg clippy "cargo clippy" cargo clippy --workspace --all-targets --all-features -- -D warnings
step "setup.sh --matrix" bash scripts/setup.sh --matrix

echo "== joining: the JS suites' cargo builds"
join cli

# One Pi version's JS suite, with the suites' own `sol-pi` build.
js_suite() { CARGO_TARGET_DIR="$js_target" bash scripts/test-js.sh "$1"; }
# The same in the background: its output in $logs/<v>.log and its exit code in $logs/<v>.rc.
suite() { set +e; js_suite "$1" >"$logs/$1.log" 2>&1; echo $? >"$logs/$1.rc"; }
# Every version's suite, $1 at a time.
suites() {
	local v
	for v in "${PI_MATRIX_VERSIONS[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$1" ]; do wait -n || true; done
		suite "$v" &
	done
	wait
}
jobs_max="${SOL_PI_TEST_JOBS:-${#PI_MATRIX_VERSIONS[@]}}"
if [ "$jobs_max" -gt 1 ]; then
	step_bg js "JS integration suites, $jobs_max Pi versions at a time (SOL_PI_TEST_JOBS)" suites "$jobs_max"
fi

echo "== joining: cargo clippy"
join clippy
# Property tests run from a fixed seed here, so that the test command gives the same
# outcome on every machine and every run; scripts/proptest-explore.sh runs them from fresh
# random seeds with more cases, to look for new failures (commit what it finds to the
# crate's proptest-regressions/).
step "cargo test" env INSTA_UPDATE=no PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261201}" \
	cargo test --workspace --all-features

step "check-crates.sh" bash scripts/check-crates.sh

loader_is_committed() {
	git diff --exit-code -- sol-napi/index.js sol-napi/index.d.ts && return 0
	echo "sol-napi/index.js or index.d.ts differs from what the build generates; commit the regenerated files" >&2
	return 1
}
step "generated addon loader is committed as built" loader_is_committed

step "TypeScript" npm run --silent typecheck

bad_versions=()
for v in "${PI_MATRIX_VERSIONS[@]}"; do
	step "TypeScript against Pi $v's types" bash scripts/typecheck-pi.sh "$v" || bad_versions+=("$v")
done
if [ "$jobs_max" -le 1 ]; then
	# One after another, with the output as it comes (for reading a failure as it happens).
	for v in "${PI_MATRIX_VERSIONS[@]}"; do
		echo "== JS integration suite on Pi $v"
		set +e; measured "JS integration suite on Pi $v" js_suite "$v" 2>&1 | tee "$logs/$v.log"; echo "${PIPESTATUS[0]}" >"$logs/$v.rc"; set -e
	done
else
	echo "== joining: JS integration suites"
	join js || true
	for v in "${PI_MATRIX_VERSIONS[@]}"; do echo "== JS integration suite on Pi $v"; cat "$logs/$v.log"; done
fi
passed=0 failed=0
for v in "${PI_MATRIX_VERSIONS[@]}"; do
	[ "$(cat "$logs/$v.rc" 2>/dev/null)" = 0 ] || bad_versions+=("$v")
	p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$logs/$v.log" | tail -1)
	f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$logs/$v.log" | tail -1)
	# A run that died before reporting counts as a failure.
	[ -n "$p" ] || { p=0; f=$((${f:-0} + 1)); }
	echo "js on Pi $v: $p passed, ${f:-0} failed"
	passed=$((passed + p)) failed=$((failed + ${f:-0}))
done
echo "step times (wall, and the CPU seconds of the step's own processes; steps overlap):"
sed 's/^/  /' "$logs/times"
echo "test command took $(($(date +%s) - start)) s; Pi versions with failures: ${bad_versions[*]:-none}"
echo "js: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#bad_versions[@]} -eq 0 ]

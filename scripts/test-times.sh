#!/usr/bin/env bash
# Where the test command's time goes: runs the steps of scripts/test.sh one after the other,
# each alone and timed, then every JS test file alone on each Pi version, and prints the
# seconds of each as Markdown tables (the ones in bench/RESULTS.md) with the counts of passed
# and failed tests. It is a measurement, not a check: a failing step is shown as such and the
# timing goes on.
#   bash scripts/test-times.sh                  every step, then every file on every Pi version
#   bash scripts/test-times.sh --js [v ...]     only the JS files (on the given Pi versions)
#   bash scripts/test-times.sh --steps          only the steps
# Times are wall clock on whatever else the machine runs; compare rankings and ratios.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$root"

mode=all
case "${1:-}" in
--js) mode=js; shift ;;
--steps) mode=steps; shift ;;
esac
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("${PI_MATRIX_VERSIONS[@]}")

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# One timed step: prints its table row; the output goes to $log (shown when it fails).
step() {
	local name="$1" t0 status=ok
	shift
	t0=$(now)
	if ! "$@" >"$log" 2>&1; then
		status=FAIL
		tail -20 "$log" >&2
	fi
	echo "| $name | $(secs "$t0" "$(now)") | $status |"
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
total0=$(now)
if [ "$mode" != js ]; then
	echo
	echo "| step | s | result |"
	echo "|---|---:|---|"
	step "setup.sh --matrix (warm)" bash scripts/setup.sh --matrix
	step "cargo fmt --check" cargo fmt --all -- --check
	step "cargo clippy" cargo clippy --workspace --all-targets --all-features -- -D warnings
	step "cargo test --workspace" env INSTA_UPDATE=no PROPTEST_RNG_SEED=20261201 cargo test --workspace --all-features
	step "check-crates.sh" bash scripts/check-crates.sh
	step "npm run typecheck" npm run --silent typecheck
	for v in "${versions[@]}"; do
		step "typecheck-pi.sh $v" bash scripts/typecheck-pi.sh "$v"
		step "check-pi-compat --strict $v" node scripts/check-pi-compat.mjs --strict --pi-root "$(pi_root_for "$v")"
	done
fi
if [ "$mode" != steps ]; then
	for v in "${versions[@]}"; do
		echo
		echo "Pi $v: each JS test file alone (node --test --test-concurrency=1 <file>)"
		echo
		echo "| file | s | pass | fail |"
		echo "|---|---:|---:|---:|"
		v0=$(now) vp=0 vf=0
		for file in sol-napi/test/*.test.mjs; do
			t0=$(now)
			SOL_PI_TEST_PI_ROOT="$(pi_root_for "$v")" node --test --test-concurrency=1 "$file" >"$log" 2>&1
			p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | tail -1)
			f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | tail -1)
			[ -n "$p" ] || { p=0 f=$(( ${f:-0} + 1 )); }
			vp=$((vp + p)) vf=$((vf + ${f:-0}))
			[ "${f:-0}" -eq 0 ] || grep -E '^not ok|# Subtest' "$log" | grep -B1 '^not ok' >&2
			echo "| $(basename "$file") | $(secs "$t0" "$(now)") | $p | ${f:-0} |"
		done
		echo "| **all files, Pi $v** | $(secs "$v0" "$(now)") | $vp | $vf |"
	done
fi
echo
echo "total $(secs "$total0" "$(now)") s; load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

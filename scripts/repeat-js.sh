#!/usr/bin/env bash
# Runs JS test files again and again against one Pi version, to find tests whose outcome
# depends on timing. Prints one line per file: how many runs passed and failed; the output
# of each failed run is kept in a temporary folder that the line names.
#   bash scripts/repeat-js.sh <pi-version> <runs> <test file>...
#   bash scripts/repeat-js.sh 0.84.2 30 sol-napi/test/online-context-compact.test.mjs
# Add SOL_PI_REPEAT_LOAD=2 to keep two extra busy loops running meanwhile (a loaded machine).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
[ $# -ge 3 ] || { sed -n 2,7p "$0" >&2; exit 2; }
v="$1" runs="$2"; shift 2
pi_root="$(pi_root_for "$v")"
[ -d "$pi_root/node_modules/@earendil-works/pi-coding-agent" ] || { echo "Pi $v is not installed; run: bash scripts/setup.sh --matrix" >&2; exit 1; }
cd "$root"
busy=()
for _ in $(seq 1 "${SOL_PI_REPEAT_LOAD:-0}"); do (while :; do :; done) & busy+=($!); done
trap '[ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2>/dev/null' EXIT
logs="$(mktemp -d)"
status=0
for file in "$@"; do
	passed=0 failed=0
	for i in $(seq 1 "$runs"); do
		log="$logs/$(basename "$file" .test.mjs)-$i.log"
		if SOL_PI_TEST_PI_ROOT="$pi_root" node --test --test-concurrency=1 "$file" >"$log" 2>&1; then
			passed=$((passed + 1)); rm -f "$log"
		else
			failed=$((failed + 1)); status=1
		fi
	done
	where=""
	[ "$failed" -eq 0 ] || where="; logs of the failed runs in $logs"
	echo "Pi $v $(basename "$file"): $passed passed, $failed failed (load average $(cut -d' ' -f1 /proc/loadavg))$where"
done
rmdir "$logs" 2>/dev/null || true
exit "$status"

#!/usr/bin/env bash
# Runs the JS integration suite against one Pi version (default: 1.3.0, the development dependency).
#   bash scripts/test-js.sh [version]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
v="${1:-1.3.0}"
pi_root="$(pi_root_for "$v")"
[ -d "$pi_root/node_modules/@earendil-works/pi-coding-agent" ] || { echo "Pi $v is not installed; run: bash scripts/setup.sh --matrix" >&2; exit 1; }
cd "$root"
# Every file in one Node process, one test after another (`--experimental-test-isolation=none`):
# a process per file started Node and imported Pi 28 times per version, a fifth of the suite's
# CPU. Each test still makes its own folders, sessions and child processes; a file alone runs
# in its own process as before (README, "Develop").
SOL_PI_TEST_PI_ROOT="$pi_root" node --test --experimental-test-isolation=none "sol-napi/test/*.test.mjs"

#!/usr/bin/env bash
# Runs the JS integration suite against one Pi version (default: 1.3.0, the development dependency).
#   bash scripts/test-js.sh [version]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
v="${1:-1.3.0}"
pi_root="$(pi_root_for "$v")"
[ -d "$pi_root/node_modules/@earendil-works/pi-coding-agent" ] || { echo "Pi $v is not installed; run: bash scripts/setup.sh --matrix" >&2; exit 1; }
cd "$root"
SOL_PI_TEST_PI_ROOT="$pi_root" node --test --test-concurrency=1 "sol-napi/test/*.test.mjs"

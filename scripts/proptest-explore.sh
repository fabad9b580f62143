#!/usr/bin/env bash
# Runs the Rust property tests from random seeds with more cases than the test command
# (which uses a fixed seed so that its outcome never varies). A failure prints its minimal
# input and proptest appends the seed to the crate's proptest-regressions/ file: commit it,
# with the fix, so that every later run tries that case first.
#   usage: scripts/proptest-explore.sh [cases per property, default 2000] [cargo test args…]
# With `-p <crate>` among the arguments only that crate runs; without one, the workspace.
# A property that sets its own case count keeps it (PROPTEST_CASES is only the default).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$root"
cases="${1:-2000}"
shift || true
unset PROPTEST_RNG_SEED
scope=(--workspace)
for arg in "$@"; do
	case "$arg" in -p | --package | -p* | --package=*) scope=() ;; esac
done
PROPTEST_CASES="$cases" INSTA_UPDATE=no cargo test "${scope[@]}" --all-features "$@"

#!/usr/bin/env bash
# The main job: sets up, then runs the demo (scripts/demo.mjs): a real Pi session, with all four
# SoL-Pi mechanisms on, fixing a real bug in a small project (faux models, no network). --tui: in Pi's terminal.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$root/scripts/setup.sh"
exec node "$root/scripts/demo.mjs" "$@"

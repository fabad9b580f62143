#!/usr/bin/env bash
# The main job for now: sets up, then runs a scripted Pi session (faux provider, no network)
# with SoL-Pi loaded from this checkout, and prints which mechanisms are active.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$root/scripts/setup.sh"
exec node "$root/scripts/demo.mjs" "$@"

#!/usr/bin/env bash
# `npm run package`: on a fresh clone with only cargo and any Node/npm, sets everything up
# (scripts/setup.sh: Node 22, dependencies, the release build of the addon), then packs the
# npm tarballs into target/npm/ (scripts/package.mjs; options: --out <dir>, --json).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$root"
bash scripts/setup.sh
echo "== npm tarballs"
node scripts/package.mjs "$@"

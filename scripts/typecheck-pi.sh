#!/usr/bin/env bash
# Type-checks the extension (sol-napi/sol-pi/*.ts) against one Pi install's type
# declarations: a temporary tsconfig extends sol-napi/tsconfig.json and maps
# `@earendil-works/*` and `typebox` to that install's node_modules (with Bundler resolution,
# because NodeNext does not resolve a `paths` target that is a package folder).
#   bash scripts/typecheck-pi.sh [version | pi-root]   (default: 1.3.0, the development dependency)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
arg="${1:-1.3.0}"
if [ -d "$arg" ]; then pi_root="$(cd "$arg" && pwd)"; else pi_root="$(pi_root_for "$arg")"; fi
nm="$pi_root/node_modules"
[ -f "$nm/@earendil-works/pi-coding-agent/package.json" ] || { echo "typecheck-pi: no Pi installed under $pi_root (run: bash scripts/setup.sh --matrix)" >&2; exit 1; }
version="$(node -p "require('$nm/@earendil-works/pi-coding-agent/package.json').version")"
cfg="$(mktemp "$root/sol-napi/.tsconfig-pi-XXXXXX.json")"
trap 'rm -f "$cfg"' EXIT
cat >"$cfg" <<JSON
{
  "extends": "./tsconfig.json",
  "compilerOptions": {
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "typeRoots": ["$root/node_modules/@types"],
    "paths": {
      "@earendil-works/*": ["$nm/@earendil-works/*"],
      "typebox": ["$nm/typebox"],
      "typebox/*": ["$nm/typebox/*"]
    }
  },
  "include": ["sol-pi/**/*.ts", "index.d.ts"]
}
JSON
cd "$root"
tsc -p "$cfg" ${TYPECHECK_PI_TSC_FLAGS:-} && echo "typecheck: extension OK against Pi $version ($pi_root)"

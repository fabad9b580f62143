#!/usr/bin/env bash
# Installs everything SoL-Pi needs inside the checkout, from the package registries only:
#   tools/node22/   Node 22 from the npm `node` package (Pi needs Node >= 22.19)
#   node_modules/   Pi 1.3.0 (development dependency), the napi-rs CLI, TypeScript
#   sol-napi/*.node the Rust addon, release build
#   .cache/pi/<v>/  the other Pi versions of the test matrix (with --matrix)
# Safe to run again: each step is skipped when its lockfile has not changed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$root"

step() { printf '== %s\n' "$*"; }

# npm ci, skipped when node_modules already matches the lockfile. A registry that drops a
# connection fails one attempt, not the setup: npm retries each fetch itself, and a failed
# install is tried again twice after a pause (npm ci starts from an empty node_modules). When
# every attempt fails, the end of npm's own log says why.
npm_ci_in() {
	local dir="$1" stamp="$1/node_modules/.sol-pi-lock" attempt logs
	if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp"; then return 0; fi
	logs="$(mktemp -d)"
	for attempt in 1 2 3; do
		if (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error --fetch-retries=4 \
			--fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=30000 --logs-dir="$logs"); then
			rm -rf "$logs"
			cp "$dir/package-lock.json" "$stamp"
			return 0
		fi
		echo "setup: npm ci in $dir failed (attempt $attempt of 3)" >&2
		[ "$attempt" = 3 ] || sleep $((attempt * 10))
	done
	echo "setup: the end of npm's log:" >&2
	tail -n 40 "$(ls -t "$logs"/*.log | head -n 1)" >&2 || true
	rm -rf "$logs"
	return 1
}

command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust (rustup) first" >&2; exit 1; }
command -v npm >/dev/null || { echo "setup: npm not found; install any Node.js with npm to bootstrap Node 22" >&2; exit 1; }

step "Node 22 (npm package node@22)"
npm_ci_in tools/node22
node --version

step "JavaScript dependencies (Pi 1.3.0, @napi-rs/cli, TypeScript)"
npm_ci_in .

# The matrix's Pi versions install (network and disk) while the addon compiles (CPU); each
# install's output is shown after the build, and a failed install fails the setup.
matrix=()
if [ "${1:-}" = "--matrix" ]; then
	for v in "${PI_MATRIX_VERSIONS[@]}"; do [ "$v" = "1.3.0" ] || matrix+=("$v"); done
fi
installs="$(mktemp -d)"
trap 'rm -rf "$installs"' EXIT
(
	for v in "${matrix[@]}"; do
		mkdir -p ".cache/pi/$v"
		cp "scripts/pi-versions/$v/package.json" "scripts/pi-versions/$v/package-lock.json" ".cache/pi/$v/"
		if npm_ci_in ".cache/pi/$v" >"$installs/$v.log" 2>&1; then echo ok >"$installs/$v.rc"; fi
	done
) &
matrix_installs=$!

step "Rust addon (release build)"
npm run --silent build

wait "$matrix_installs"
for v in "${matrix[@]}"; do
	step "Pi $v (test matrix)"
	cat "$installs/$v.log"
	[ -f "$installs/$v.rc" ] || { echo "setup: installing Pi $v failed" >&2; exit 1; }
done
step "setup done"

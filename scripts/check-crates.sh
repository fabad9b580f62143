#!/usr/bin/env bash
# The five library crates as they would be published: their API docs build without a warning,
# and `cargo package` assembles each one and builds it from its .crate alone (the workspace's
# crates resolve from the packages just made, everything else from the registry). Uncommitted
# changes are packaged as they are, so the check holds for the tree being tested.
# sol-napi (the addon) and sol-testkit (test support) are never published.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$root"

echo "== cargo doc --no-deps (warnings are errors)"
RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -D warnings" cargo doc --no-deps --workspace --all-features --locked

echo "== cargo package (each crate built from its .crate)"
cargo package --workspace --exclude sol-napi --exclude sol-testkit --locked --allow-dirty

# Every package carries its licence and README, and nothing that reads the workspace's files.
for crate in sol-core sol-fusion sol-obspack sol-reducer sol-occ; do
	files=$(cargo package --list --locked --allow-dirty -p "$crate")
	for needed in LICENSE README.md Cargo.toml src/lib.rs; do
		grep -qx "$needed" <<<"$files" || { echo "$crate: the package lacks $needed" >&2; exit 1; }
	done
	if grep -q '^tests/' <<<"$files"; then echo "$crate: the package holds tests/, which read ../fixtures" >&2; exit 1; fi
done
echo "crates: docs and packages of sol-core, sol-fusion, sol-obspack, sol-reducer, sol-occ are fine"

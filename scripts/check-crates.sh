#!/usr/bin/env bash
# The five library crates as they would be published: their API docs build without a warning,
# each README example runs as the program of a new project with one dependency line, and
# `cargo package` assembles each one and builds it from its .crate alone (the workspace's
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
# A Rust host outside the workspace: a new cargo project whose only dependency line is the
# crate, and whose program is the crate README's example (its asserts are the check). The
# workspace's lock file pins the same versions of everything else.
outside="$(mktemp -d)"
trap 'rm -rf "$outside"' EXIT
for crate in sol-core sol-fusion sol-obspack sol-reducer sol-occ; do
	echo "== the $crate README example in a project of its own"
	project="$outside/$crate-host"
	mkdir -p "$project/src"
	# The first rust block of the README; a doctest's hidden lines (starting '# ') are part of it.
	block=$(awk '/^```rust/ { inside = 1; next } /^```/ { if (inside) exit } inside' "$root/$crate/README.md" | sed -E 's/^# (.*)$/\1/; s/^#$//')
	# A block that uses the real ports (`<crate>::host::`) gets the crate's `host` feature.
	features=""
	if grep -q '::host::' <<<"$block"; then features=', features = ["host"]'; fi
	cat >"$project/Cargo.toml" <<-TOML
		[package]
		name = "${crate}-host"
		version = "0.0.0"
		edition = "2024"
		publish = false

		[dependencies]
		$crate = { path = "$root/$crate"$features }
	TOML
	# A block with its own `fn main` is a whole program; any other is the body of one.
	if grep -q '^fn main' <<<"$block"; then
		printf '%s\n' "$block" >"$project/src/main.rs"
	else
		printf 'fn main() {\n%s\n}\n' "$block" >"$project/src/main.rs"
	fi
	cp "$root/Cargo.lock" "$project/Cargo.lock"
	(cd "$project" && CARGO_TARGET_DIR="$root/target/outside-hosts" cargo run --quiet)
done
# Every example with a committed `<name>.stdout` beside it prints exactly that.
for crate in sol-core sol-fusion sol-obspack sol-reducer sol-occ; do
	for expected in "$root/$crate"/examples/*.stdout; do
		[ -e "$expected" ] || continue
		name="$(basename "$expected" .stdout)"
		echo "== the $crate example $name prints examples/$name.stdout"
		cargo run --quiet --locked -p "$crate" --all-features --example "$name" | diff -u "$expected" -
	done
done
echo "crates: docs, packages and README examples of sol-core, sol-fusion, sol-obspack, sol-reducer, sol-occ are fine"

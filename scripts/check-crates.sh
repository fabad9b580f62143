#!/usr/bin/env bash
# The seven library crates as they would be published (in this order: sol-core, sol-host, the
# four mechanisms, then sol-replay): their API docs build without a warning, each README example runs as the
# program of a new project with one dependency line, every example with a committed .stdout
# prints exactly that, and `cargo package` assembles each crate and builds it from its .crate
# alone (the workspace's crates resolve from the packages just made, everything else from the
# registry). Uncommitted changes are packaged as they are, so the check holds for the tree
# being tested. sol-napi (the addon), sol-testkit (test support) and sol-fuzz (the fuzz
# targets' bodies) are never published.
# sol-pi-cli (the `sol-pi` binary) is packaged and built from its .crate with the others (it is
# what `cargo install sol-pi-cli` would build); having no library README example, it skips the
# README-example and examples/ checks below.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$root"

echo "== cargo doc --no-deps (warnings are errors)"
RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -D warnings" cargo doc --no-deps --workspace --all-features --locked

echo "== cargo package (each crate built from its .crate)"
# The workspace's own target folder, so the packages build on the registry dependencies the
# test command's `cargo test` has just built (a folder of their own meant a cold build of every
# dependency, more than half of this script's time). What must never be reused
# is an unpacked copy of the packages themselves: cargo unpacks a package that another one
# depends on into $CARGO_HOME/registry/src/<a name made from the package folder's path>/ and
# keeps any copy it finds there. That folder outlives the checkout: a new clone at the same path
# (as CI makes each run) finds the copies an older commit left, and builds against them. So
# before packaging, every unpacked copy of our packages in every registry folder is removed
# (no registry dependency has one of their names), and after, each copy a build read is checked
# against the .crate just made. (Cleaning the packages' builds cleans the workspace's builds of
# the same crates too: the next build of the workspace compiles those crates again, not their
# dependencies.)
outside="$(mktemp -d)"
trap 'rm -rf "$outside"' EXIT
package_target="${CARGO_TARGET_DIR:-$root/target}"
packaged=(sol-core sol-host sol-fusion sol-obspack sol-reducer sol-occ sol-replay sol-pi-cli)
registry_src="${CARGO_HOME:-$HOME/.cargo}/registry/src"
for name in "${packaged[@]}"; do
	find "$registry_src" -mindepth 2 -maxdepth 2 -type d -name "$name-[0-9]*" -exec rm -rf {} + 2>/dev/null || true
done
if [ -d "$package_target/debug" ]; then
	cargo clean --quiet --target-dir "$package_target" $(printf -- '-p %s ' "${packaged[@]}")
fi
cargo package --workspace --exclude sol-napi --exclude sol-testkit --exclude sol-fuzz --locked --allow-dirty \
	--target-dir "$package_target"
# The unpacked copies of our packages that the builds in the package target read.
names="$(printf '%s|' "${packaged[@]}")"
copies="$(find "$package_target/debug/deps" -name '*.d' -print0 |
	xargs -0r grep -hoE "/[^ :]*/registry/src/[^/]+/(${names%|})-[0-9][^/ :]*/" | sort -u)"
# The other packages depend on sol-core, so a run that found no copy could not check them.
[ -n "$copies" ] || { echo "check-crates: found no unpacked copy of the packages in $package_target's builds" >&2; exit 1; }
while read -r copy; do
	name="$(basename "$copy")"
	fresh="$outside/fresh-$name"
	mkdir -p "$fresh"
	tar -xzf "$package_target/package/$name.crate" -C "$fresh"
	diff -r -x .cargo-ok "$fresh/$name" "$copy" >/dev/null ||
		{ echo "check-crates: a package was built against an unpacked copy of $name ($copy) that is not the .crate just made" >&2; exit 1; }
done <<<"$copies"

crates=(sol-core sol-host sol-fusion sol-obspack sol-reducer sol-occ sol-replay)
mechanisms=(sol-fusion sol-obspack sol-reducer sol-occ)
is_mechanism() { [[ " ${mechanisms[*]} " == *" $1 "* ]]; }

# Every package carries its licence and README, and nothing that reads the workspace's files.
for crate in "${crates[@]}" sol-pi-cli; do
	files=$(cargo package --list --locked --allow-dirty -p "$crate")
	needed_files=(LICENSE README.md Cargo.toml src/lib.rs)
	if [ "$crate" = sol-pi-cli ]; then needed_files+=(src/main.rs); fi
	for needed in "${needed_files[@]}"; do
		grep -qx "$needed" <<<"$files" || { echo "$crate: the package lacks $needed" >&2; exit 1; }
	done
	if grep -q '^tests/' <<<"$files"; then echo "$crate: the package holds tests/, which read ../fixtures" >&2; exit 1; fi
done
# A Rust host outside the workspace: a new cargo project whose only dependency line is the
# crate (a mechanism with its `host` feature, so the real ports come with it), and whose program
# is the crate README's first rust block (its asserts are the check): as it is when it has its
# own `fn main`, else wrapped in one. The workspace's lock file pins the same versions of
# everything else. The projects are workspaces of their own (an empty [workspace] table) in the
# target folder, so that the checkout's .cargo/config.toml applies to them as to every other
# build here and they build on the same dependency builds.
hosts="$package_target/readme-hosts"
rm -rf "$hosts"
for crate in "${crates[@]}"; do
	echo "== the $crate README example in a project of its own"
	project="$hosts/$crate-host"
	mkdir -p "$project/src"
	features=""
	if is_mechanism "$crate"; then features=', features = ["host"]'; fi
	cat >"$project/Cargo.toml" <<-TOML
		[package]
		name = "${crate}-host"
		version = "0.0.0"
		edition = "2024"
		publish = false

		[workspace]

		[dependencies]
		$crate = { path = "$root/$crate"$features }
	TOML
	# The first rust block of the README; a doctest's hidden lines (starting '# ') are part of it.
	example=$(awk '/^```rust/ { inside = 1; next } /^```/ { if (inside) exit } inside' "$root/$crate/README.md" | sed -E 's/^# (.*)$/\1/; s/^#$//')
	if grep -qE '^[[:space:]]*fn main\(' <<<"$example"; then
		printf '%s\n' "$example" >"$project/src/main.rs"
	else
		printf 'fn main() {\n%s\n}\n' "$example" >"$project/src/main.rs"
	fi
	cp "$root/Cargo.lock" "$project/Cargo.lock"
	(cd "$project" && CARGO_TARGET_DIR="$package_target" cargo run --quiet)
done

# The first rust block of a crate's README, as written.
readme_block() { awk '/^```rust/ { inside = 1; next } /^```/ { if (inside) exit } inside' "$root/$1/README.md"; }

# Examples with a committed expected output: each prints exactly its <name>.stdout (a mechanism's
# with its `host` feature) and is part of the crate's package; the README shows one of them.
for crate in "${crates[@]}"; do
	shopt -s nullglob
	outputs=("$root/$crate"/examples/*.stdout)
	shopt -u nullglob
	[ ${#outputs[@]} -gt 0 ] || continue
	files=$(cargo package --list --locked --allow-dirty -p "$crate")
	shown=no
	for expected in "${outputs[@]}"; do
		name=$(basename "$expected" .stdout)
		[ -f "$root/$crate/examples/$name.rs" ] || { echo "$crate: examples/$name.stdout has no examples/$name.rs" >&2; exit 1; }
		grep -qx "examples/$name.rs" <<<"$files" || { echo "$crate: the package lacks examples/$name.rs" >&2; exit 1; }
		if diff -q <(readme_block "$crate") "$root/$crate/examples/$name.rs" >/dev/null; then shown=yes; fi
		echo "== $crate example $name prints examples/$name.stdout"
		flags=()
		if is_mechanism "$crate"; then flags=(--features host); fi
		actual="$outside/$crate-$name.stdout"
		cargo run --locked -q -p "$crate" "${flags[@]}" --example "$name" >"$actual"
		if ! diff -u "$expected" "$actual"; then
			echo "$crate: the example $name printed something else than examples/$name.stdout (diff above)" >&2
			exit 1
		fi
	done
	# The README shows one of these examples as it is, so what a reader copies is what runs here.
	[ "$shown" = yes ] || { echo "$crate: the README's first rust block is none of its examples with a .stdout" >&2; exit 1; }
done
echo "crates: docs, packages, README examples and examples of ${crates[*]} are fine; sol-pi-cli packaged and built from its .crate"

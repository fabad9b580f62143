# Sourced by the other scripts: the checkout root, the project's Node 22 first on PATH.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$root/tools/node22/node_modules/.bin:$root/node_modules/.bin:$PATH"
# Pi versions of the test matrix; 1.3.0 is the checkout's development dependency.
PI_MATRIX_VERSIONS=(0.84.2 1.0.3 1.3.0 1.6.0)
pi_root_for() {
	if [ "$1" = "1.3.0" ]; then echo "$root"; else echo "$root/.cache/pi/$1"; fi
}

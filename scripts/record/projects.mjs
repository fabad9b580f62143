// The real projects the recorded scenarios work on, each written into a fresh folder:
// a crate's sources copied from the local cargo registry, a module of the Python standard
// library with a unittest suite, and a few of this repository's own sources.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { repoRoot } from "../../sol-napi/test/support.mjs";

/** The folder of a crate in the local cargo registry (`~/.cargo/registry/src/<index>/<name>-<version>`). */
export function registryCrate(nameVersion) {
	const cargoHome = process.env.CARGO_HOME ?? path.join(os.homedir(), ".cargo");
	const src = path.join(cargoHome, "registry", "src");
	const indexes = fs.existsSync(src) ? fs.readdirSync(src).sort() : [];
	for (const index of indexes) {
		const dir = path.join(src, index, nameVersion);
		if (fs.existsSync(path.join(dir, "Cargo.toml"))) return dir;
	}
	throw new Error(`the crate ${nameVersion} is not in the local cargo registry (${src}); run a cargo build of this workspace first`);
}

const copyTree = (from, to) => fs.cpSync(from, to, { recursive: true, filter: (file) => !file.endsWith(".cargo-ok") });

function replaceOnce(file, before, after) {
	const text = fs.readFileSync(file, "utf8");
	if (!text.includes(before)) throw new Error(`${file} does not contain ${JSON.stringify(before)}`);
	fs.writeFileSync(file, text.replace(before, after));
}

// The fnv crate with a wrong FNV prime: its known-answer tests fail.
export const FNV_CRATE = "fnv-1.0.7";
export const FNV_PRIME = "0x100000001b3";
export const FNV_WRONG_PRIME = "0x100000001b5";

/** The fnv crate's sources in `dir`, with the multiplication by the FNV prime broken. */
export function fnvProject(dir) {
	copyTree(registryCrate(FNV_CRATE), dir);
	replaceOnce(path.join(dir, "lib.rs"), `hash.wrapping_mul(${FNV_PRIME})`, `hash.wrapping_mul(${FNV_WRONG_PRIME})`);
	return dir;
}

/** The source file of a module of the Python standard library (the python3 on PATH). */
export function stdlibModule(name) {
	return execFileSync("python3", ["-c", `import ${name}; print(${name}.__file__)`], { encoding: "utf8" }).trim();
}

// colorsys with a wrong constant in rgb_to_yiq, and a unittest suite that catches it.
export const COLORSYS_BUG = ["i = 0.74*(r-y) - 0.27*(b-y)", "i = 0.47*(r-y) - 0.27*(b-y)"];
const COLORSYS_TESTS = `import unittest

from colorpkg import colorsys


class RoundTripTests(unittest.TestCase):
    COLORS = [(0.0, 0.0, 0.0), (1.0, 1.0, 1.0), (1.0, 0.0, 0.0), (0.2, 0.4, 0.6), (0.9, 0.1, 0.5)]

    def assertClose(self, got, want):
        for a, b in zip(got, want):
            self.assertAlmostEqual(a, b, places=5)

    def test_hsv_round_trip(self):
        for rgb in self.COLORS:
            self.assertClose(colorsys.hsv_to_rgb(*colorsys.rgb_to_hsv(*rgb)), rgb)

    def test_hls_round_trip(self):
        for rgb in self.COLORS:
            self.assertClose(colorsys.hls_to_rgb(*colorsys.rgb_to_hls(*rgb)), rgb)

    def test_yiq_round_trip(self):
        for rgb in self.COLORS:
            self.assertClose(colorsys.yiq_to_rgb(*colorsys.rgb_to_yiq(*rgb)), rgb)

    def test_pure_red_in_yiq(self):
        y, i, q = colorsys.rgb_to_yiq(1.0, 0.0, 0.0)
        self.assertAlmostEqual(y, 0.30, places=2)
        self.assertAlmostEqual(i, 0.599, places=2)


if __name__ == "__main__":
    unittest.main()
`;

/** `colorpkg/colorsys.py` (the standard library's, with a wrong I coefficient) and `tests/test_colorsys.py`. */
export function colorsysProject(dir) {
	fs.mkdirSync(path.join(dir, "colorpkg"), { recursive: true });
	fs.mkdirSync(path.join(dir, "tests"), { recursive: true });
	fs.copyFileSync(stdlibModule("colorsys"), path.join(dir, "colorpkg", "colorsys.py"));
	replaceOnce(path.join(dir, "colorpkg", "colorsys.py"), ...COLORSYS_BUG);
	fs.writeFileSync(path.join(dir, "colorpkg", "__init__.py"), "");
	fs.writeFileSync(path.join(dir, "tests", "__init__.py"), "");
	fs.writeFileSync(path.join(dir, "tests", "test_colorsys.py"), COLORSYS_TESTS);
	return dir;
}

// textwrap, unchanged, with a small unittest suite.
const TEXTWRAP_TESTS = `import unittest

from wrappkg import textwrap


class WrapTests(unittest.TestCase):
    def test_wrap_keeps_words_whole(self):
        self.assertEqual(textwrap.wrap("the quick brown fox", 10), ["the quick", "brown fox"])

    def test_dedent_removes_the_common_margin(self):
        self.assertEqual(textwrap.dedent("  a\\n    b\\n"), "a\\n  b\\n")

    def test_shorten_adds_the_placeholder(self):
        self.assertEqual(textwrap.shorten("Hello world, how are you", 15), "Hello [...]")


if __name__ == "__main__":
    unittest.main()
`;

/** `wrappkg/textwrap.py` (the standard library's) and `tests/test_textwrap.py`. */
export function textwrapProject(dir) {
	fs.mkdirSync(path.join(dir, "wrappkg"), { recursive: true });
	fs.mkdirSync(path.join(dir, "tests"), { recursive: true });
	fs.copyFileSync(stdlibModule("textwrap"), path.join(dir, "wrappkg", "textwrap.py"));
	fs.writeFileSync(path.join(dir, "wrappkg", "__init__.py"), "");
	fs.writeFileSync(path.join(dir, "tests", "__init__.py"), "");
	fs.writeFileSync(path.join(dir, "tests", "test_textwrap.py"), TEXTWRAP_TESTS);
	return dir;
}

/** Copies files of this repository (paths relative to its root) into `dir`, same layout. */
export function repoSourcesProject(dir, files) {
	for (const file of files) {
		const to = path.join(dir, file);
		fs.mkdirSync(path.dirname(to), { recursive: true });
		fs.copyFileSync(path.join(repoRoot, file), to);
	}
	return dir;
}

// strsim from the local cargo registry with a doubled Jaro-Winkler prefix boost: its
// jaro_winkler tests fail.
export const STRSIM_CRATE = "strsim-0.11.1";
export const STRSIM_BUG = ["sim + 0.1 * prefix_length as f64 * (1.0 - sim)", "sim + 0.2 * prefix_length as f64 * (1.0 - sim)"];

/** The strsim crate's sources in `dir`, with the Jaro-Winkler prefix scale broken. */
export function strsimProject(dir) {
	copyTree(registryCrate(STRSIM_CRATE), dir);
	replaceOnce(path.join(dir, "src", "lib.rs"), ...STRSIM_BUG);
	return dir;
}

/** The file of a test module of the Python standard library (`test/<name>.py`). */
export function stdlibTest(name) {
	return path.join(path.dirname(stdlibModule("unittest")), "..", "test", `${name}.py`);
}

// textwrap with the standard library's own test suite, and two spaces after a sentence end
// turned into one in _fix_sentence_endings.
export const TEXTWRAP_BUG = ['chunks[i+1] = "  "', 'chunks[i+1] = " "'];

/** `wrappkg/textwrap.py` (with the sentence-ending bug) and `tests/test_textwrap.py` (the standard library's suite, importing wrappkg). */
export function textwrapSuiteProject(dir) {
	fs.mkdirSync(path.join(dir, "wrappkg"), { recursive: true });
	fs.mkdirSync(path.join(dir, "tests"), { recursive: true });
	fs.copyFileSync(stdlibModule("textwrap"), path.join(dir, "wrappkg", "textwrap.py"));
	replaceOnce(path.join(dir, "wrappkg", "textwrap.py"), ...TEXTWRAP_BUG);
	fs.writeFileSync(path.join(dir, "wrappkg", "__init__.py"), "");
	fs.writeFileSync(path.join(dir, "tests", "__init__.py"), "");
	fs.copyFileSync(stdlibTest("test_textwrap"), path.join(dir, "tests", "test_textwrap.py"));
	replaceOnce(path.join(dir, "tests", "test_textwrap.py"), "\nfrom textwrap import ", "\nfrom wrappkg.textwrap import ");
	return dir;
}

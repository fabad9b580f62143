//! The workspace boundaries that keep the pure crates pure, checked from the manifests:
//! who may depend on whom, where the purity lints come from, and what every crate ships.
//!
//! A small line scanner reads the TOML: the manifests only use tables, `key = value` lines
//! and arrays of strings or inline tables, one item per line.

use std::collections::{BTreeMap, BTreeSet};

use camino::{Utf8Path, Utf8PathBuf};

const CORE: &str = "sol-core";
const MECHANISMS: [&str; 4] = ["sol-fusion", "sol-obspack", "sol-reducer", "sol-occ"];
const HOST: &str = "sol-napi";
/// The real ports: depends on sol-core only; an optional dependency of the mechanisms
/// (their `host` feature re-exports it) and a normal one of the addon.
const HOST_LAYER: &str = "sol-host";
/// Replay of recorded sessions: pure, built on sol-core and the mechanisms' own decisions.
const REPLAY: &str = "sol-replay";
/// The `sol-pi` command (package `sol-pi-cli`, folder `sol-cli`): a host that opens the
/// session files and prints the replay; the addon runs the same library for `npm run replay`.
const CLI: &str = "sol-cli";
/// The CLI's package name, as other manifests name it.
const CLI_PACKAGE: &str = "sol-pi-cli";
/// What the CLI may depend on: the replay, the price table, argument parsing, a progress bar, and
/// the platform's open flags (a FIFO or a terminal given as a session file is refused, not waited on).
const CLI_DEPENDENCIES: [&str; 5] = ["sol-core", "sol-replay", "clap", "indicatif", "libc"];
/// Test support: a dev-dependency of the crates above, never a normal one.
const TEST_SUPPORT: &str = "sol-testkit";
/// The fuzz targets' bodies: pure, never published, built on the pure crates only (the
/// cargo-fuzz project in `fuzz/` is outside the workspace).
const FUZZ: &str = "sol-fuzz";

/// What a mechanism crate may depend on (`base64` and `unicode-security`: the reducer's secret
/// gate decodes encoded credentials and folds lookalike letters).
const MECHANISM_DEPENDENCIES: [&str; 10] = [
    "sol-core",
    "sol-host",
    "serde",
    "serde_json",
    "sha2",
    "regex",
    "camino",
    "thiserror",
    "base64",
    "unicode-security",
];
/// What sol-core may depend on.
const CORE_DEPENDENCIES: [&str; 6] = [
    "serde",
    "serde_json",
    "camino",
    "thiserror",
    "sha2",
    "regex",
];

fn workspace_root() -> Utf8PathBuf {
    Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Utf8Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// The text before an unquoted `#`.
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    for (index, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &line[..index],
            _ => {}
        }
    }
    line
}

/// Every `key = value` line of a manifest, grouped by the table it is in (`""` before the
/// first header). Keys keep their dots (`sol-core.workspace`); quotes around keys go.
fn tables(text: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let mut tables: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut current = String::new();
    tables.insert(current.clone(), Vec::new());
    for line in text.lines() {
        let line = strip_comment(line).trim();
        if let Some(header) = line.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            current = header.trim_matches(['[', ']']).trim().replace('"', "");
            tables.entry(current.clone()).or_default();
        } else if let Some((key, value)) = line.split_once('=') {
            let key = key.trim().replace('"', "");
            tables
                .entry(current.clone())
                .or_default()
                .push((key, value.trim().to_owned()));
        }
    }
    tables
}

/// The quoted strings of the array `key = [ ... ]` in `text`, or, with `field`, the value
/// of `field = "..."` in each inline table of that array.
fn array_items(text: &str, key: &str, field: Option<&str>) -> Vec<String> {
    let mut items = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let line = strip_comment(line).trim();
        let body = if inside {
            line
        } else if let Some((name, rest)) = line.split_once('=') {
            if name.trim() != key || !rest.trim_start().starts_with('[') {
                continue;
            }
            inside = true;
            rest.trim_start().trim_start_matches('[')
        } else {
            continue;
        };
        let (body, closes) = match field {
            // Inline tables close with `}`, so only a line starting with `]` ends the array.
            Some(_) => (body, body.starts_with(']')),
            None => match body.split_once(']') {
                Some((before, _)) => (before, true),
                None => (body, false),
            },
        };
        match field {
            Some(field) => {
                let marker = format!("{field} = \"");
                if let Some(start) = body.find(&marker) {
                    let rest = &body[start + marker.len()..];
                    let end = rest.find('"').expect("closing quote");
                    items.push(rest[..end].to_owned());
                }
            }
            None => items.extend(
                body.split(',')
                    .map(|item| item.trim().trim_matches('"'))
                    .filter(|item| !item.is_empty())
                    .map(str::to_owned),
            ),
        }
        if closes {
            inside = false;
        }
    }
    items
}

/// A member crate's manifest, read once.
struct Member {
    name: String,
    dir: Utf8PathBuf,
    tables: BTreeMap<String, Vec<(String, String)>>,
}

impl Member {
    fn load(name: &str) -> Self {
        let dir = workspace_root().join(name);
        let tables = tables(&read(&dir.join("Cargo.toml")));
        Member {
            name: name.to_owned(),
            dir,
            tables,
        }
    }

    /// Crate names in the dependency tables whose name matches `is_kind` (`dependencies`,
    /// `dev-dependencies`, ...), including target-specific ones and renamed packages.
    fn dependencies_where(&self, is_kind: impl Fn(&str) -> bool) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        for (table, entries) in &self.tables {
            let (kind, dotted_name) = match table.split_once('.') {
                // [dependencies.foo]
                Some((kind, name)) if kind.ends_with("dependencies") => (kind, Some(name)),
                _ => (table.rsplit('.').next().unwrap_or(table), None),
            };
            if !is_kind(kind) {
                continue;
            }
            if let Some(name) = dotted_name {
                names.insert(name.to_owned());
            }
            for (key, value) in entries {
                if dotted_name.is_some() {
                    if key == "package" {
                        names.insert(value.trim_matches('"').to_owned());
                    }
                    continue;
                }
                names.insert(key.split('.').next().unwrap_or(key).to_owned());
                if let Some(start) = value.find("package = \"") {
                    let rest = &value[start + "package = \"".len()..];
                    names.insert(rest[..rest.find('"').unwrap_or(rest.len())].to_owned());
                }
            }
        }
        names
    }

    fn normal_dependencies(&self) -> BTreeSet<String> {
        self.dependencies_where(|kind| kind == "dependencies")
    }

    fn dev_dependencies(&self) -> BTreeSet<String> {
        self.dependencies_where(|kind| kind == "dev-dependencies")
    }

    fn all_dependencies(&self) -> BTreeSet<String> {
        self.dependencies_where(|kind| kind.ends_with("dependencies"))
    }

    fn table(&self, name: &str) -> Option<&Vec<(String, String)>> {
        self.tables.get(name)
    }
}

fn members() -> Vec<String> {
    array_items(&read(&workspace_root().join("Cargo.toml")), "members", None)
}

#[test]
fn the_workspace_has_the_expected_members() {
    let mut expected: Vec<&str> = vec![CORE, HOST_LAYER, HOST, REPLAY, CLI, TEST_SUPPORT, FUZZ];
    expected.extend(MECHANISMS);
    expected.sort_unstable();
    let mut actual = members();
    actual.sort();
    // A new crate must be placed in one of the groups below before it joins.
    assert_eq!(actual, expected);
}

#[test]
fn mechanism_crates_depend_only_on_sol_core_and_small_leaf_crates() {
    for name in MECHANISMS {
        let member = Member::load(name);
        let dependencies = member.normal_dependencies();
        assert!(
            dependencies.contains(CORE),
            "{name} must depend on {CORE}: {dependencies:?}"
        );
        for dependency in &dependencies {
            assert!(
                MECHANISM_DEPENDENCIES.contains(&dependency.as_str()),
                "{name} depends on {dependency}, outside {MECHANISM_DEPENDENCIES:?}"
            );
        }
        for dependency in member.all_dependencies() {
            assert!(
                !MECHANISMS.contains(&dependency.as_str())
                    && dependency != HOST
                    && (dependency != TEST_SUPPORT
                        || member.dev_dependencies().contains(TEST_SUPPORT)),
                "{name} depends on the SoL-Pi crate {dependency}"
            );
            assert!(
                !dependency.starts_with("napi"),
                "{name} depends on {dependency}: only {HOST} talks to Node"
            );
        }
    }
}

#[test]
fn the_replay_crate_depends_only_on_the_pure_crates_and_small_leaf_crates() {
    let member = Member::load(REPLAY);
    let dependencies = member.normal_dependencies();
    assert!(dependencies.contains(CORE), "{REPLAY}: {dependencies:?}");
    for dependency in &dependencies {
        assert!(
            dependency == CORE
                || MECHANISMS.contains(&dependency.as_str())
                || (MECHANISM_DEPENDENCIES.contains(&dependency.as_str())
                    && dependency != HOST_LAYER),
            "{REPLAY} depends on {dependency}: it stays pure (the binary reads the files)"
        );
    }
}

#[test]
fn the_cli_depends_only_on_the_replay_and_its_two_command_line_crates() {
    let member = Member::load(CLI);
    let package = member
        .table("package")
        .and_then(|entries| entries.iter().find(|(key, _)| key == "name"))
        .map(|(_, value)| value.trim_matches('"').to_owned());
    assert_eq!(package.as_deref(), Some(CLI_PACKAGE));
    let dependencies = member.normal_dependencies();
    assert!(dependencies.contains(REPLAY), "{CLI}: {dependencies:?}");
    for dependency in &dependencies {
        assert!(
            CLI_DEPENDENCIES.contains(&dependency.as_str()),
            "{CLI} depends on {dependency}, outside {CLI_DEPENDENCIES:?}"
        );
    }
    // A host crate: clippy.toml of its own (I/O allowed), and hash-ordered collections still out.
    let own = read(&member.dir.join("clippy.toml"));
    let types = array_items(&own, "disallowed-types", Some("path"));
    assert!(
        types.iter().any(|path| path == "std::collections::HashMap"),
        "{CLI}/clippy.toml must disallow HashMap: {types:?}"
    );
    // Only the addon (for `npm run replay`) may build on the command.
    for name in members() {
        if name == HOST || name == CLI {
            continue;
        }
        assert!(
            !Member::load(&name).all_dependencies().contains(CLI_PACKAGE),
            "{name} depends on {CLI_PACKAGE}"
        );
    }
}

#[test]
fn the_host_layer_is_optional_in_the_mechanisms_and_depends_on_sol_core_only() {
    let layer = Member::load(HOST_LAYER);
    for dependency in layer.normal_dependencies() {
        assert!(
            dependency == CORE || !dependency.starts_with("sol-"),
            "{HOST_LAYER} depends on the SoL-Pi crate {dependency}"
        );
        assert!(
            !dependency.starts_with("napi"),
            "{HOST_LAYER} depends on {dependency}"
        );
    }
    for name in MECHANISMS {
        let member = Member::load(name);
        let line = member
            .table("dependencies")
            .and_then(|entries| entries.iter().find(|(key, _)| key == HOST_LAYER))
            .map(|(_, value)| value.clone())
            .unwrap_or_else(|| panic!("{name} has no optional {HOST_LAYER} dependency"));
        // The mechanism stays pure by default: only its `host` feature brings the real ports.
        assert!(
            line.contains("optional = true"),
            "{name}: {HOST_LAYER} = {line}"
        );
        let features = member
            .table("features")
            .unwrap_or_else(|| panic!("{name} has no [features]"));
        assert!(
            features
                .iter()
                .any(|(key, value)| key == "host" && value.contains("dep:sol-host")),
            "{name}: the host feature must enable {HOST_LAYER}: {features:?}"
        );
    }
}

#[test]
fn sol_core_depends_only_on_small_leaf_crates() {
    let member = Member::load(CORE);
    for dependency in member.normal_dependencies() {
        assert!(
            CORE_DEPENDENCIES.contains(&dependency.as_str()),
            "{CORE} depends on {dependency}, outside {CORE_DEPENDENCIES:?}"
        );
    }
    for dependency in member.all_dependencies() {
        let test_support =
            dependency == TEST_SUPPORT && member.dev_dependencies().contains(TEST_SUPPORT);
        assert!(
            (test_support || !dependency.starts_with("sol-")) && !dependency.starts_with("napi"),
            "{CORE} depends on {dependency}"
        );
    }
}

#[test]
fn the_fuzz_crate_depends_only_on_the_pure_crates_and_is_never_published() {
    let member = Member::load(FUZZ);
    for dependency in member.normal_dependencies() {
        assert!(
            dependency == CORE
                || dependency == REPLAY
                || MECHANISMS.contains(&dependency.as_str())
                || (MECHANISM_DEPENDENCIES.contains(&dependency.as_str())
                    && dependency != HOST_LAYER),
            "{FUZZ} depends on {dependency}: its bodies stay pure"
        );
    }
    let package = member.table("package").expect("a [package] table");
    assert!(
        package
            .iter()
            .any(|(key, value)| key == "publish" && value == "false"),
        "{FUZZ} must say publish = false"
    );
    for name in members() {
        assert!(
            !Member::load(&name).all_dependencies().contains(FUZZ),
            "{name} depends on {FUZZ}"
        );
    }
}

#[test]
fn test_support_is_only_ever_a_dev_dependency() {
    let support = Member::load(TEST_SUPPORT);
    assert!(
        support
            .normal_dependencies()
            .iter()
            .all(|d| !d.starts_with("sol-")),
        "{TEST_SUPPORT} depends on a SoL-Pi crate"
    );
    for name in members() {
        let member = Member::load(&name);
        assert!(
            !member.normal_dependencies().contains(TEST_SUPPORT),
            "{name} depends on {TEST_SUPPORT} outside [dev-dependencies]"
        );
    }
}

#[test]
fn every_member_uses_the_workspace_lints() {
    for name in members() {
        let member = Member::load(&name);
        let lints = member
            .table("lints")
            .unwrap_or_else(|| panic!("{name} has no [lints] table"));
        assert!(
            lints
                .iter()
                .any(|(key, value)| key == "workspace" && value == "true"),
            "{name}: [lints] must say workspace = true, has {lints:?}"
        );
    }
}

#[test]
fn every_member_has_a_readme_and_a_crate_doc() {
    for name in members() {
        let member = Member::load(&name);
        let readme = member.dir.join("README.md");
        assert!(readme.is_file(), "{name} has no README.md");
        let lib = read(&member.dir.join("src/lib.rs"));
        let first = lib
            .lines()
            .find(|line| !line.trim().is_empty())
            .unwrap_or_default();
        assert!(
            first.starts_with("//!"),
            "{name}: src/lib.rs must open with a crate doc, starts with {first:?}"
        );
        assert_eq!(member.name, name);
    }
}

#[test]
fn pure_crates_use_the_root_purity_lints() {
    for name in [CORE, REPLAY, FUZZ].into_iter().chain(MECHANISMS) {
        for file in ["clippy.toml", ".clippy.toml"] {
            let own = workspace_root().join(name).join(file);
            // Clippy reads the nearest clippy.toml; one here would replace the root's rules.
            assert!(!own.exists(), "{own} would shadow the root clippy.toml");
        }
    }
    let root = read(&workspace_root().join("clippy.toml"));
    let methods = array_items(&root, "disallowed-methods", Some("path"));
    for method in [
        "std::fs::read",
        "std::env::var",
        "std::process::Command::new",
        "std::time::SystemTime::now",
    ] {
        assert!(
            methods.iter().any(|path| path == method),
            "the root clippy.toml must disallow {method}: {methods:?}"
        );
    }
    let types = array_items(&root, "disallowed-types", Some("path"));
    assert!(
        types.iter().any(|path| path == "std::collections::HashMap"),
        "the root clippy.toml must disallow HashMap: {types:?}"
    );
}

#[test]
fn the_scanner_reads_the_manifest_shapes_in_use() {
    let manifest = r#"
[package]
name = "x" # a comment
description = "has a # inside"

[dependencies]
sol-core.workspace = true
serde_json = { workspace = true, features = ["float_roundtrip"] }
renamed = { package = "napi", version = "3" }

[dependencies.regex]
version = "1"

[target.'cfg(unix)'.dependencies]
sha2 = "0.10"

[dev-dependencies]
insta.workspace = true
"#;
    let member = Member {
        name: "x".to_owned(),
        dir: Utf8PathBuf::new(),
        tables: tables(manifest),
    };
    let normal: Vec<String> = member.normal_dependencies().into_iter().collect();
    assert_eq!(
        normal,
        ["napi", "regex", "renamed", "serde_json", "sha2", "sol-core"]
    );
    assert!(member.all_dependencies().contains("insta"));
    assert_eq!(
        member.table("package").expect("package")[1],
        ("description".to_owned(), "\"has a # inside\"".to_owned())
    );

    let lists = r#"
members = [
    "a",
    "b", # trailing
]
single = ["c", "d"]
disallowed-types = [
    { path = "std::collections::HashMap", reason = "use [BTreeMap]" },
]
"#;
    assert_eq!(array_items(lists, "members", None), ["a", "b"]);
    assert_eq!(array_items(lists, "single", None), ["c", "d"]);
    assert_eq!(
        array_items(lists, "disallowed-types", Some("path")),
        ["std::collections::HashMap"]
    );
}

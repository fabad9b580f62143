//! The shared cases under `fixtures/config/`, run through `parse_config`.

// Reading the fixture files needs std::fs, which clippy.toml forbids in the library.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use camino::{Utf8Path, Utf8PathBuf};
use serde::Deserialize;
use serde_json::Value;
use sol_core::{SolPiConfig, parse_config};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    ok: bool,
    #[serde(default)]
    config: Option<SolPiConfig>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    key: Option<Value>,
}

fn case_dirs() -> Vec<Utf8PathBuf> {
    let root = Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/config");
    let mut dirs: Vec<Utf8PathBuf> = std::fs::read_dir(&root)
        .expect("fixtures/config exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|path| path.is_dir())
        .map(|path| Utf8PathBuf::from_path_buf(path).expect("UTF-8 fixture path"))
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_config_fixture_gives_its_expected_result() {
    let dirs = case_dirs();
    assert!(dirs.len() >= 20, "only {} config fixtures", dirs.len());
    let mut codes_seen = std::collections::BTreeSet::new();
    for dir in &dirs {
        let name = dir.file_name().expect("case name");
        let bytes = std::fs::read(dir.join("sol-pi.json")).expect("sol-pi.json");
        let expected_text =
            std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
        let expected: Expected = serde_json::from_str(&expected_text)
            .unwrap_or_else(|error| panic!("{name}: bad expected.json: {error}"));
        let path = Utf8Path::new("/fixture").join(name).join("sol-pi.json");
        let actual = parse_config(&bytes, &path);
        match (expected.ok, actual) {
            (true, Ok(config)) => {
                let want = expected
                    .config
                    .unwrap_or_else(|| panic!("{name}: ok without config"));
                assert_eq!(config, want, "{name}");
            }
            (false, Err(error)) => {
                let code = expected
                    .code
                    .unwrap_or_else(|| panic!("{name}: error without code"));
                assert_eq!(error.code(), code, "{name}: {error}");
                let key = match expected.key {
                    None | Some(Value::Null) => None,
                    Some(Value::String(key)) => Some(key),
                    Some(other) => panic!("{name}: key must be a string or null, got {other}"),
                };
                assert_eq!(error.key(), key.as_deref(), "{name}: {error}");
                assert_eq!(error.path(), path, "{name}");
                codes_seen.insert(code);
            }
            (true, Err(error)) => panic!("{name}: expected a config, got {error}"),
            (false, Ok(config)) => panic!("{name}: expected an error, got {config:?}"),
        }
    }
    let all_codes = [
        "duplicate_key",
        "empty_string",
        "invalid_keep_recent_outputs",
        "invalid_prices",
        "invalid_ratio",
        "not_an_object",
        "not_boolean",
        "unknown_key",
        "unreadable",
        "unsupported_version",
    ];
    assert_eq!(codes_seen.into_iter().collect::<Vec<_>>(), all_codes);
}

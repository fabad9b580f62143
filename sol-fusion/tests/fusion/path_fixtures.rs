//! The shared path cases in `fixtures/fusion/paths.json`, run through `resolve_tool_path`.

// Reading the fixture file needs std::fs, which clippy.toml forbids in the library.
#![allow(clippy::disallowed_methods)]

use serde::Deserialize;
use sol_fusion::path::{PathContext, Platform, resolve_tool_path};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    input: String,
    cwd: String,
    home: String,
    platform: FixturePlatform,
    expected: Option<String>,
    error_code: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum FixturePlatform {
    Posix,
    Windows,
}

fn cases() -> Vec<Case> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/fusion/paths.json");
    let text = std::fs::read_to_string(file).expect("fixtures/fusion/paths.json is readable");
    serde_json::from_str(&text).expect("fixtures/fusion/paths.json is a list of cases")
}

#[test]
fn every_path_fixture_gives_its_expected_result() {
    let cases = cases();
    assert!(cases.len() >= 40, "only {} path fixtures", cases.len());
    let mut codes_seen = std::collections::BTreeSet::new();
    for case in &cases {
        let platform = match case.platform {
            FixturePlatform::Posix => Platform::Posix,
            FixturePlatform::Windows => Platform::Windows,
        };
        let ctx = PathContext {
            cwd: &case.cwd,
            home: &case.home,
            platform,
        };
        let label = format!("{:?} on {platform:?}", case.input);
        match (
            &case.expected,
            &case.error_code,
            resolve_tool_path(&case.input, &ctx),
        ) {
            (Some(expected), None, Ok(actual)) => assert_eq!(&actual, expected, "{label}"),
            (None, Some(code), Err(error)) => {
                assert_eq!(error.code(), code, "{label}: {error}");
                codes_seen.insert(code.clone());
            }
            (Some(_), Some(_), _) | (None, None, _) => {
                panic!("{label}: give exactly one of expected and error_code")
            }
            (_, _, actual) => panic!("{label}: expected {case:?}, got {actual:?}"),
        }
    }
    let all_codes = [
        "empty_path",
        "encoded_separator",
        "file_url_host",
        "file_url_not_absolute",
        "invalid_cwd",
        "invalid_file_url_host",
        "invalid_home",
        "invalid_percent_encoding",
        "invalid_utf8",
        "nul_byte",
    ];
    assert_eq!(codes_seen.into_iter().collect::<Vec<_>>(), all_codes);
}

//! The likely-secret gate, both ways, over the shared table `fixtures/reducer/secrets.json`:
//! credentials are caught by the rule the table names, test output and prose are not.

// Reading the table needs std::fs, which clippy.toml forbids in the library.
#![allow(clippy::disallowed_methods)]

use serde::Deserialize;
use sol_reducer::secret::{SecretKind, find_likely_secret, is_likely_secret};

use crate::support::{fixture, fixtures_dir};

/// One line of the table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SecretCase {
    pub(crate) line: String,
    pub(crate) caught: bool,
    #[serde(default)]
    pub(crate) rule: Option<String>,
    /// The credential inside `line`, which property tests replace with generated values.
    #[serde(default)]
    pub(crate) secret: Option<String>,
    /// A form named in the bug report that the gate used to miss.
    #[serde(default)]
    pub(crate) reported: bool,
    #[serde(default)]
    pub(crate) why: Option<String>,
}

impl SecretCase {
    pub(crate) fn kind(&self) -> SecretKind {
        let code = self.rule.as_deref().expect("a caught case names its rule");
        SecretKind::from_code(code).unwrap_or_else(|| panic!("unknown rule {code}"))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    #[allow(dead_code)]
    description: String,
    cases: Vec<SecretCase>,
}

/// Every case of `fixtures/reducer/secrets.json`, in table order.
pub(crate) fn secret_cases() -> Vec<SecretCase> {
    let path = fixtures_dir().join("secrets.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let table: Table =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{path}: {error}"));
    table.cases
}

#[test]
fn the_table_is_well_formed_and_covers_every_rule() {
    let cases = secret_cases();
    for case in &cases {
        assert!(!case.line.contains('\n'), "{:?} is one line", case.line);
        if case.caught {
            let _ = case.kind();
            assert!(case.why.is_none(), "{:?}", case.line);
            if let Some(secret) = &case.secret {
                assert!(case.line.contains(secret.as_str()), "{:?}", case.line);
            }
        } else {
            assert!(case.rule.is_none() && case.secret.is_none() && !case.reported);
            assert!(
                case.why.is_some(),
                "{:?} says why it is not a secret",
                case.line
            );
        }
    }
    for kind in SecretKind::ALL {
        assert!(
            cases.iter().any(|case| case.caught && case.kind() == kind),
            "no case for {}",
            kind.code()
        );
    }
    let reported = cases.iter().filter(|case| case.reported).count();
    assert_eq!(reported, 8, "the eight forms of the bug report");
    assert!(cases.iter().filter(|case| !case.caught).count() >= 40);
}

#[test]
fn every_caught_line_is_caught_by_its_rule() {
    for case in secret_cases().iter().filter(|case| case.caught) {
        let finding =
            find_likely_secret(&case.line).unwrap_or_else(|| panic!("missed {:?}", case.line));
        assert_eq!(finding.kind, case.kind(), "{:?}", case.line);
        assert_eq!(finding.line, 1);
    }
}

#[test]
fn no_line_that_is_not_a_secret_fires() {
    for case in secret_cases().iter().filter(|case| !case.caught) {
        assert_eq!(find_likely_secret(&case.line), None, "{:?}", case.line);
    }
}

#[test]
fn the_negatives_together_and_the_fixture_logs_stay_clean() {
    let negatives: Vec<String> = secret_cases()
        .into_iter()
        .filter(|case| !case.caught)
        .map(|case| case.line)
        .collect();
    assert_eq!(find_likely_secret(&negatives.join("\n")), None);
    for name in [
        "cargo-test-failure",
        "npm-test-pass",
        "pytest-failure",
        "tsc-errors-fused",
    ] {
        let output = fixture(name).output;
        assert_eq!(find_likely_secret(&output), None, "{name}");
        let mixed = format!("{output}\n{}\n", negatives.join("\n"));
        assert_eq!(
            find_likely_secret(&mixed),
            None,
            "{name} with the negatives"
        );
    }
    // The realistic logs of the other mechanisms' fixtures are no secrets either.
    for name in ["cargo-test.log", "multibyte-no-final-newline.txt"] {
        let path = fixtures_dir().join("../obspack").join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
        assert_eq!(find_likely_secret(&text), None, "{name}");
    }
}

#[test]
fn a_caught_line_inside_a_real_log_is_found_on_its_line() {
    let output = fixture("cargo-test-failure").output;
    let lines: Vec<&str> = output.lines().collect();
    for (index, case) in secret_cases().iter().filter(|case| case.caught).enumerate() {
        let at = (index * 7) % lines.len();
        let mut log: Vec<&str> = lines.clone();
        log.insert(at, &case.line);
        let finding = find_likely_secret(&log.join("\n"))
            .unwrap_or_else(|| panic!("missed {:?} at line {}", case.line, at + 1));
        assert_eq!(
            (finding.kind, finding.line),
            (case.kind(), at as u64 + 1),
            "{:?}",
            case.line
        );
    }
}

#[test]
fn the_finding_names_the_line_but_not_the_secret() {
    let text = "running\nok\n\nPGPASSWORD=s3cr3t psql\n";
    let finding = find_likely_secret(text).expect("a secret");
    assert_eq!(finding.line, 4);
    assert!(!format!("{finding:?}").contains("s3cr3t"));
    assert!(is_likely_secret(text));
}

#[test]
fn every_kind_has_a_distinct_code_that_parses_back() {
    let mut codes: Vec<&str> = SecretKind::ALL.iter().map(|kind| kind.code()).collect();
    for kind in SecretKind::ALL {
        assert_eq!(SecretKind::from_code(kind.code()), Some(kind));
    }
    assert_eq!(SecretKind::from_code("password"), None);
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), SecretKind::ALL.len());
}

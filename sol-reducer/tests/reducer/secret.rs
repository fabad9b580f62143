//! The likely-secret gate, both ways, over the shared table `fixtures/reducer/secrets.json`:
//! credentials are caught by the rule the table names, test output and prose are not.

// Reading the table needs std::fs, which clippy.toml forbids in the library.
#![allow(clippy::disallowed_methods)]

use proptest::prelude::*;
use proptest::sample::select;
use serde::Deserialize;
use sol_reducer::secret::{SecretKind, find_likely_secret, is_likely_secret, normalise};

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
    // Only the rules that read two or more lines have cases of two or more lines, and
    // their near misses.
    let multi_line = ["password-after-prompt", "private-key-body"];
    for case in &cases {
        let reads_lines = case
            .rule
            .as_deref()
            .is_none_or(|rule| multi_line.contains(&rule));
        assert!(
            !case.line.contains('\n') || reads_lines,
            "{:?} is one line",
            case.line
        );
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
    assert_eq!(
        reported,
        8 + 24,
        "the eight forms of the first bug report and the 24 of issue 25"
    );
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

/// Lookalike letters (Cyrillic, Greek, fullwidth) for each letter of `PASSWORD`.
const LOOKALIKES: &[(char, &[char])] = &[
    ('P', &['\u{420}', '\u{3A1}', '\u{FF30}']),
    ('A', &['\u{410}', '\u{391}', '\u{FF21}']),
    ('S', &['\u{405}', '\u{FF33}']),
    ('W', &['\u{51C}', '\u{FF37}']),
    ('O', &['\u{41E}', '\u{39F}', '\u{FF2F}']),
    ('R', &['\u{FF32}']),
    ('D', &['\u{FF24}']),
];

/// Characters that show nothing: zero-width space, non-joiner and joiner, word joiner,
/// byte-order mark, soft hyphen.
const INVISIBLE: &[char] = &[
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{AD}',
];

#[test]
fn the_issue_forms_with_lookalikes_are_caught() {
    for (ascii, others) in LOOKALIKES {
        for other in *others {
            let line = format!(
                "export DB_{}=hunter2",
                "PASSWORD".replace(*ascii, &other.to_string())
            );
            assert_eq!(
                find_likely_secret(&line).map(|finding| finding.kind),
                Some(SecretKind::PasswordAssignment),
                "{line:?}"
            );
        }
    }
    // A key's END line alone, and its body without armour.
    assert_eq!(
        find_likely_secret("-----END EC PRIVATE KEY-----").map(|finding| finding.kind),
        Some(SecretKind::PrivateKeyArmour)
    );
}

proptest! {
    /// `PASSWORD` spelt with any mix of lookalike letters and invisible characters is
    /// read as `PASSWORD`.
    #[test]
    fn lookalike_and_invisible_letters_inside_password_still_fire(
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>(), prop::option::of(select(INVISIBLE.to_vec()))), 8),
        prefix in select(vec!["PG", "DB_", "export MYSQL_", "  "]),
    ) {
        let mut name = String::new();
        for (letter, (pick, swap, invisible)) in "PASSWORD".chars().zip(picks) {
            let others = LOOKALIKES.iter().find(|(ascii, _)| *ascii == letter).map(|(_, others)| *others).unwrap_or(&[]);
            name.push(if swap && !others.is_empty() { *pick.get(others) } else { letter });
            name.extend(invisible);
        }
        let line = format!("{prefix}{name}=hunter2 ./migrate");
        prop_assert_eq!(find_likely_secret(&line).map(|finding| finding.kind), Some(SecretKind::PasswordAssignment), "{:?}", line);
    }

    /// Normalising never touches ASCII text and never moves a line.
    #[test]
    fn normalising_keeps_ascii_text_and_every_line(text in "\\PC{0,120}(\n\\PC{0,40}){0,4}", ascii in "[ -~\n]{0,200}") {
        let same = normalise(&ascii);
        prop_assert_eq!(same.as_ref(), ascii.as_str());
        let normalised = normalise(&text);
        prop_assert_eq!(normalised.matches('\n').count(), text.matches('\n').count());
        prop_assert!(normalised.chars().count() <= text.chars().count());
    }

    /// A key body split anywhere by the cut of a long output: the part kept fires as long
    /// as it holds the END line or three body lines.
    #[test]
    fn any_tail_of_a_private_key_fires(
        lines in prop::collection::vec("[A-Za-z0-9+/]{62}[A-Z][a-z][0-9]", 3..30),
        kept in any::<prop::sample::Index>(),
        openssh in any::<bool>(),
    ) {
        let kind = if openssh { "OPENSSH PRIVATE KEY" } else { "PRIVATE KEY" };
        let mut key = vec![format!("-----BEGIN {kind}-----")];
        key.extend(lines.iter().cloned());
        key.push(format!("-----END {kind}-----"));
        let from = kept.index(key.len());
        let tail = format!("running 3 tests\n{}\ntest result: ok. 3 passed\n", key[from..].join("\n"));
        prop_assert!(find_likely_secret(&tail).is_some(), "{}", tail);
    }
}

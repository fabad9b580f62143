//! The realistic logs of `fixtures/reducer/`, reduced end to end with their scripted receipts.

use serde_json::Value;
use sol_reducer::exit::split_status_line;
use sol_reducer::{DETAILS_KEY, MIN_SOURCE_BYTES};

use crate::support::{Fixture, Harness, fixtures};

/// The exact log of a fixture: its output without the marker and the status line.
fn exact_log(fixture: &Fixture) -> String {
    let output = fixture
        .output
        .strip_prefix("[then_run:failed]\n")
        .unwrap_or(&fixture.output);
    let (log, _) = if fixture.result.is_error {
        split_status_line(output)
    } else {
        (output, None)
    };
    log.to_owned()
}

#[test]
fn there_are_six_fixtures_over_the_minimum() {
    let fixtures = fixtures();
    let names: Vec<&str> = fixtures.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cargo-test-failure",
            "go-test-failure",
            "npm-test-pass",
            "pytest-failure",
            "tsc-errors-fused",
            "unittest-failure"
        ]
    );
    for fixture in &fixtures {
        assert!(
            exact_log(fixture).len() > MIN_SOURCE_BYTES,
            "{}",
            fixture.name
        );
    }
}

#[test]
fn every_fixture_is_reduced_with_its_scripted_receipt() {
    for fixture in fixtures() {
        let harness = Harness::new().replying(fixture.receipt.clone());
        let decision = harness.run(&fixture.result);
        let replacement = decision
            .replacement()
            .unwrap_or_else(|| panic!("{}: {decision:?}", fixture.name));
        let log = exact_log(&fixture);
        let receipt: Value = serde_json::from_str(&fixture.receipt).expect("receipt.json");
        let items = receipt["evidence"].as_array().expect("evidence").len() as u64;
        assert_eq!(
            replacement.summary.evidence_count, items,
            "{}",
            fixture.name
        );
        assert_eq!(
            replacement.summary.source_bytes,
            log.len() as u64,
            "{}",
            fixture.name
        );
        assert_eq!(
            harness.archived(&log),
            Some(log.clone().into_bytes()),
            "{}",
            fixture.name
        );
        assert_eq!(replacement.is_error, fixture.result.is_error);
        assert!(
            replacement.bytes_removed() > 1000,
            "{}: {}",
            fixture.name,
            replacement.bytes_removed()
        );
        assert_eq!(
            harness.kinds(),
            ["candidate", "provider_response", "applied"],
            "{}",
            fixture.name
        );
        let last = replacement
            .content
            .last()
            .and_then(|b| b.as_text())
            .expect("text");
        if fixture.result.is_error {
            let status = fixture.output.lines().last().expect("a status line");
            assert!(last.ends_with(&format!("\n\n{status}")), "{}", fixture.name);
        }
        for line in log.lines().filter(|line| line.len() > 20) {
            let quoted = receipt["evidence"]
                .as_array()
                .expect("evidence")
                .iter()
                .any(|item| {
                    item["quote"]
                        .as_str()
                        .is_some_and(|quote| quote.contains(line))
                });
            if !quoted {
                assert!(
                    !last.contains(line),
                    "{}: unquoted log line kept: {line}",
                    fixture.name
                );
            }
        }
    }
}

#[test]
fn the_fused_fixture_keeps_the_mutation_and_the_diff() {
    let fixture = crate::support::fixture("tsc-errors-fused");
    let harness = Harness::new().replying(fixture.receipt.clone());
    let replacement = harness
        .run(&fixture.result)
        .replacement()
        .cloned()
        .expect("reduced");
    assert_eq!(replacement.content[0], fixture.result.content[0]);
    let block = replacement.content[1].as_text().expect("text");
    assert!(block.starts_with("[then_run:failed]\nsol_pi_evidence_receipt_v1\n"));
    assert!(block.ends_with("\n\nCommand exited with code 2"));
    let details = fixture.result.details.clone().expect("details");
    for key in ["diff", "patch", "firstChangedLine"] {
        assert_eq!(replacement.details[key], details[key], "{key}");
    }
    assert!(replacement.details[DETAILS_KEY].is_object());
}

#[test]
fn a_fixture_with_a_mangled_receipt_is_left_alone() {
    let mut mangled_cases = 0;
    for fixture in fixtures() {
        // Collapse the runs of spaces the logs are full of, as a careless model would.
        let mut receipt: Value = serde_json::from_str(&fixture.receipt).expect("receipt.json");
        let mut changed = false;
        for item in receipt["evidence"].as_array_mut().expect("evidence") {
            let quote = item["quote"].as_str().expect("quote");
            let collapsed = quote
                .split(' ')
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            changed |= collapsed != quote;
            item["quote"] = Value::from(collapsed);
        }
        if !changed {
            continue;
        }
        mangled_cases += 1;
        let harness = Harness::new().replying(receipt.to_string());
        let decision = harness.run(&fixture.result);
        assert_eq!(
            decision.reason().map(|r| r.code()),
            Some("unverifiable-quote"),
            "{}",
            fixture.name
        );
    }
    assert!(mangled_cases >= 3);
}

/// One case of `fixtures/reducer/failure-evidence.json`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EvidenceCase {
    fixture: String,
    quotes: Vec<String>,
    accepted: bool,
    why: String,
}

#[test]
fn the_failure_evidence_table_decides_as_it_says() {
    #[allow(clippy::disallowed_methods)]
    let text =
        std::fs::read_to_string(crate::support::fixtures_dir().join("failure-evidence.json"))
            .expect("failure-evidence.json");
    let table: Value = serde_json::from_str(&text).expect("JSON");
    let cases: Vec<EvidenceCase> = serde_json::from_value(table["cases"].clone()).expect("cases");
    assert!(cases.iter().any(|case| case.accepted) && cases.iter().any(|case| !case.accepted));
    for case in cases {
        let fixture = crate::support::fixture(&case.fixture);
        assert!(
            fixture.result.is_error,
            "{}: a failing fixture",
            case.fixture
        );
        let log = exact_log(&fixture);
        let sha = sol_reducer::sha256_hex(log.as_bytes());
        let items: Vec<(&str, &str)> = case
            .quotes
            .iter()
            .map(|quote| ("failure", quote.as_str()))
            .collect();
        let reply = crate::support::receipt(&sha, "failure", &items);
        let harness = Harness::new().replying(reply);
        let decision = harness.run(&fixture.result);
        if case.accepted {
            assert!(
                decision.replacement().is_some(),
                "{}: {}: {decision:?}",
                case.fixture,
                case.why
            );
        } else {
            assert_eq!(
                decision.reason().map(|reason| reason.code()),
                Some("missing-failure-evidence"),
                "{}: {}",
                case.fixture,
                case.why
            );
        }
    }
}

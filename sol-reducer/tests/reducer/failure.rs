//! Failure evidence: what identifies the failures of a log in each runner's format, and a
//! failing log's receipt must keep it (a bare `FAILED` is not evidence).

use proptest::prelude::*;
use proptest::sample::select;
use sol_reducer::failure::{
    FailingTestsOnSuccess, MissingEvidence, check_failure_evidence, check_success_log,
    identify_failures, is_bare_status,
};
use sol_reducer::{ReceiptCheck, sha256_hex, validate_receipt};

use crate::support::{fixture, passing_log, receipt};

fn test_names(log: &str) -> Vec<String> {
    identify_failures(log)
        .tests
        .into_iter()
        .map(|test| test.name)
        .collect()
}

fn exact_log(name: &str) -> String {
    let output = fixture(name).output;
    let output = output
        .strip_prefix("[then_run:failed]\n")
        .unwrap_or(&output);
    sol_reducer::exit::split_status_line(output).0.to_owned()
}

#[test]
fn each_runner_names_its_failing_tests() {
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            exact_log("cargo-test-failure"),
            vec![
                "import::csv::tests::rejects_unbalanced_rows",
                "reconcile::tests::matches_split_transactions",
            ],
        ),
        (
            // cargo test -q prints dots, then the failures list.
            "running 3 tests\n.F.\nfailures:\n\n---- a::b stdout ----\nthread 'a::b' panicked at src/a.rs:3:5:\nboom\n\nfailures:\n    a::b\n\ntest result: FAILED. 2 passed; 1 failed\n".to_owned(),
            vec!["a::b"],
        ),
        (
            exact_log("pytest-failure"),
            vec![
                "tests/test_schedule.py::test_next_high_tide_crosses_midnight",
                "tests/test_tides.py::test_amplitude_units",
            ],
        ),
        (
            "ERROR tests/test_db.py - ModuleNotFoundError: No module named 'psycopg'\n=== 1 error in 0.12s ===\n".to_owned(),
            vec!["tests/test_db.py"],
        ),
        (
            "=== RUN   TestParse\n=== RUN   TestParse/empty\n--- FAIL: TestParse (0.00s)\n    --- FAIL: TestParse/empty (0.00s)\n        parse_test.go:12: got 1, want 2\nFAIL\nFAIL\texample.com/p\t0.01s\n".to_owned(),
            vec!["TestParse", "TestParse/empty"],
        ),
        (
            "FAIL src/cart.test.js\n  Cart\n    ✓ starts empty (2 ms)\n    ✕ adds items (5 ms)\n\n  ● Cart › adds items\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 3\n    Received: 2\n\nTests:       1 failed, 1 passed, 2 total\n".to_owned(),
            vec!["Cart › adds items"],
        ),
        (
            " ❯ src/cart.test.ts (2 tests | 1 failed) 8ms\n   × Cart > adds items 3ms\n\n FAIL  src/cart.test.ts > Cart > adds items\nAssertionError: expected 2 to be 3\n".to_owned(),
            vec!["src/cart.test.ts > Cart > adds items"],
        ),
        (
            "  Cart\n    ✓ starts empty (2 ms)\n    ✕ adds items (5 ms)\n".to_owned(),
            vec!["adds items"],
        ),
        ("test result: ok. 3 passed\n".to_owned(), vec![]),
    ];
    for (log, names) in cases {
        assert_eq!(test_names(&log), names, "{log}");
    }
}

#[test]
fn without_failing_tests_the_error_lines_identify_the_failure() {
    let tsc = identify_failures(&exact_log("tsc-errors-fused"));
    assert!(tsc.tests.is_empty());
    assert_eq!(tsc.diagnostics.len(), 24);
    assert_eq!(
        tsc.diagnostics[0].identity,
        "src/api/client.ts(48,11): error TS2345"
    );
    let cases = [
        (
            "src/a.ts:3:5 - error TS2322: Type 'string' is not assignable to type 'number'.",
            "src/a.ts:3:5 - error TS2322",
        ),
        (
            "error[E0308]: mismatched types\n --> src/a.rs:3:5",
            "error[E0308]: mismatched types",
        ),
        (
            "src/a.c:3:5: error: expected ';' before '}' token",
            "src/a.c:3:5: error: expected ';' before '}' token",
        ),
        (
            "TypeError: Cannot read properties of undefined (reading 'id')",
            "TypeError: Cannot read properties of undefined (reading 'id')",
        ),
    ];
    for (log, identity) in cases {
        let failures = identify_failures(log);
        assert_eq!(
            failures
                .diagnostics
                .iter()
                .map(|d| d.identity.as_str())
                .collect::<Vec<_>>(),
            [identity],
            "{log}"
        );
    }
    // Status lines are not diagnostics.
    let bare = identify_failures("error: build failed\nmake: *** [all] Error 1\nFAILED\n");
    assert_eq!(bare, Default::default());
}

#[test]
fn bare_status_words() {
    for bare in [
        "FAILED",
        "error",
        "Error:",
        "test result: FAILED. 36 passed; 2 failed; 0 ignored",
        "npm ERR! Test failed.",
        "error: build failed",
        "FAIL",
    ] {
        assert!(is_bare_status(bare), "{bare:?}");
    }
    for identifying in [
        "test parser::tokens ... FAILED",
        "error[E0308]: mismatched types",
        "FAILED tests/test_a.py::test_b - assert 1 == 2",
        "--- FAIL: TestParse (0.00s)",
    ] {
        assert!(!is_bare_status(identifying), "{identifying:?}");
    }
}

/// The reason and detail `validate_receipt` gives a failing `log` whose receipt has these
/// failure quotes.
fn judge(log: &str, quotes: &[&str]) -> Result<(), (String, String)> {
    let sha = sha256_hex(log.as_bytes());
    let items: Vec<(&str, &str)> = quotes.iter().map(|quote| ("failure", *quote)).collect();
    let reply = receipt(&sha, "failure", &items);
    let check = ReceiptCheck {
        log,
        source_sha256: &sha,
        is_error: true,
    };
    validate_receipt(&reply, &check)
        .map(|_| ())
        .map_err(|rejection| (rejection.reason.code().to_owned(), rejection.detail))
}

/// A 10 KB cargo log with three failing tests among many passing ones.
fn ten_kilobyte_cargo_log() -> String {
    let mut log = String::from("running 253 tests\n");
    for index in 0..250 {
        log.push_str(&format!("test ledger::case_{index:03}::balances ... ok\n"));
    }
    for name in [
        "import::rejects_bad_rows",
        "report::totals_by_month",
        "rules::first_match_wins",
    ] {
        log.push_str(&format!("test {name} ... FAILED\n"));
    }
    log.push_str("\nfailures:\n\n---- import::rejects_bad_rows stdout ----\nthread 'import::rejects_bad_rows' panicked at src/import.rs:88:9:\nassertion `left == right` failed\n  left: 3\n right: 4\n\nfailures:\n    import::rejects_bad_rows\n    report::totals_by_month\n    rules::first_match_wins\n\ntest result: FAILED. 250 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.05s\n\nerror: test failed, to rerun pass `--lib`\n");
    assert!(log.len() > 10_000, "{}", log.len());
    log
}

#[test]
fn a_bare_failed_quote_is_not_evidence_for_a_failing_log() {
    let log = ten_kilobyte_cargo_log();
    let (reason, detail) = judge(&log, &["FAILED"]).expect_err("rejected");
    assert_eq!(reason, "missing-failure-evidence");
    assert!(detail.contains("`import::rejects_bad_rows`"), "{detail}");
    for quotes in [
        vec!["test result: FAILED. 250 passed; 3 failed"],
        vec!["error: test failed, to rerun pass `--lib`"],
        vec!["test import::rejects_bad_rows ... FAILED"],
        vec![
            "test import::rejects_bad_rows ... FAILED",
            "test report::totals_by_month ... FAILED",
        ],
        // The failures list names them, but shows no failure word.
        vec![
            "    import::rejects_bad_rows\n    report::totals_by_month\n    rules::first_match_wins",
        ],
    ] {
        assert_eq!(
            judge(&log, &quotes).expect_err("rejected").0,
            "missing-failure-evidence",
            "{quotes:?}"
        );
    }
    for quotes in [
        vec![
            "test import::rejects_bad_rows ... FAILED\ntest report::totals_by_month ... FAILED\ntest rules::first_match_wins ... FAILED",
        ],
        vec![
            "thread 'import::rejects_bad_rows' panicked at src/import.rs:88:9:",
            "test report::totals_by_month ... FAILED",
            "test rules::first_match_wins ... FAILED",
        ],
        vec![
            "failures:\n    import::rejects_bad_rows\n    report::totals_by_month\n    rules::first_match_wins",
        ],
    ] {
        assert_eq!(judge(&log, &quotes), Ok(()), "{quotes:?}");
    }
}

#[test]
fn a_log_without_test_lines_needs_one_identifying_line() {
    let tsc = exact_log("tsc-errors-fused");
    assert_eq!(
        judge(&tsc, &["Found 24 errors in 11 files."])
            .expect_err("rejected")
            .0,
        "missing-failure-evidence"
    );
    assert_eq!(
        judge(&tsc, &["error"]).expect_err("rejected").0,
        "missing-failure-evidence"
    );
    assert_eq!(
        judge(&tsc, &["src/api/client.ts(48,11): error TS2345"]),
        Ok(())
    );
    let generic = format!("{}make: *** [all] Error 1\n", "step done\n".repeat(400));
    assert_eq!(
        judge(&generic, &["Error"]).expect_err("rejected").0,
        "missing-failure-evidence"
    );
    assert_eq!(judge(&generic, &["make: *** [all] Error 1"]), Ok(()));
}

#[test]
fn when_more_tests_fail_than_a_receipt_holds_items_twelve_are_enough() {
    let names: Vec<String> = (0..20)
        .map(|index| format!("suite::case_{index:02}"))
        .collect();
    let log: String = names
        .iter()
        .map(|name| format!("test {name} ... FAILED\n"))
        .collect();
    let lines: Vec<String> = names
        .iter()
        .map(|name| format!("test {name} ... FAILED"))
        .collect();
    let quotes: Vec<&str> = lines.iter().map(String::as_str).collect();
    assert_eq!(judge(&log, &quotes[..12]), Ok(()));
    let (reason, detail) = judge(&log, &quotes[..11]).expect_err("rejected");
    assert_eq!(reason, "missing-failure-evidence");
    assert!(
        detail.contains("11 of the 20") && detail.contains("12 must be"),
        "{detail}"
    );
}

#[test]
fn missing_failure_evidence_details() {
    let texts = [
        MissingEvidence::Tests {
            first_unquoted: "reconcile::tests::matches_split_transactions".to_owned(),
            unquoted: 1,
            identified: 2,
            required: 2,
        },
        MissingEvidence::Tests {
            first_unquoted: "suite::case_11".to_owned(),
            unquoted: 9,
            identified: 20,
            required: 12,
        },
        MissingEvidence::Diagnostics {
            first: "src/api/client.ts(48,11): error TS2345".to_owned(),
            identified: 24,
        },
        MissingEvidence::BareStatus,
    ]
    .map(|missing| missing.detail());
    assert_text_snapshot!("missing_failure_evidence_details", texts.join("\n"));
}

/// A runner's log of `tests` (name, passed), with its failure lines.
fn runner_log(runner: &str, tests: &[(String, bool)]) -> String {
    let mut log = String::new();
    if runner.starts_with("unittest") {
        // Python's unittest: the verbose lines, then a FAIL: section per failing test. From
        // 3.11 the id ends with the method; before, it names only the class.
        let method = |name: &str| format!("test_{}", name.replace("::", "_"));
        let id = |name: &str| match runner {
            "unittest" => format!("tests.test_mod.Case.{}", method(name)),
            _ => "tests.test_mod.Case".to_owned(),
        };
        for (name, passed) in tests {
            let status = if *passed { "ok" } else { "FAIL" };
            log.push_str(&format!("{} ({}) ... {status}\n", method(name), id(name)));
        }
        for (name, _) in tests.iter().filter(|(_, passed)| !passed) {
            log.push_str(&format!(
                "\n======\nFAIL: {} ({})\n------\nAssertionError: 1 != 2\n",
                method(name),
                id(name)
            ));
        }
        return log;
    }
    for (name, passed) in tests {
        let line = match (runner, passed) {
            ("cargo", true) => format!("test {name} ... ok"),
            ("cargo", false) => format!("test {name} ... FAILED"),
            ("pytest", true) => format!(
                "tests/test_{}.py::test_{} PASSED",
                name.len(),
                name.replace("::", "_")
            ),
            ("pytest", false) => format!(
                "tests/test_{}.py::test_{} FAILED  [ 50%]",
                name.len(),
                name.replace("::", "_")
            ),
            (_, true) => format!("--- PASS: Test{} (0.00s)", name.replace("::", "_")),
            (_, false) => format!("--- FAIL: Test{} (0.00s)", name.replace("::", "_")),
        };
        log.push_str(&line);
        log.push('\n');
        log.push_str("    some output of the test: left 1, right 2\n");
    }
    log
}

fn runner_name(runner: &str, name: &str) -> String {
    match runner {
        "cargo" => name.to_owned(),
        "unittest" | "unittest-3.10" => {
            format!("tests.test_mod.Case.test_{}", name.replace("::", "_"))
        }
        "pytest" => format!(
            "tests/test_{}.py::test_{}",
            name.len(),
            name.replace("::", "_")
        ),
        _ => format!("Test{}", name.replace("::", "_")),
    }
}

fn runner_case() -> impl Strategy<Value = (&'static str, Vec<(String, bool)>)> {
    (
        select(vec!["cargo", "pytest", "go", "unittest", "unittest-3.10"]),
        prop::collection::btree_map("[a-z]{1,6}(::[a-z]{1,6}){0,2}", any::<bool>(), 1..20),
    )
        .prop_map(|(runner, tests)| (runner, tests.into_iter().collect()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn identification_never_panics(text in "\\PC{0,300}", lines in prop::collection::vec(select(vec![
        "failures:", "    a::b", "test a ... FAILED", "FAILED x.py::t - e", "--- FAIL: T", "  ● a › b",
        " FAIL  a > b", " × c 3ms", "a.ts(1,2): error TS1: x", "error[E1]: y", "TypeError: z", "",
    ]), 0..30)) {
        let _ = identify_failures(&text);
        let _ = identify_failures(&lines.join("\n"));
        let _ = is_bare_status(&text);
    }

    #[test]
    fn a_runner_log_names_exactly_its_failing_tests((runner, tests) in runner_case()) {
        let log = runner_log(runner, &tests);
        let expected: Vec<String> = tests.iter().filter(|(_, passed)| !passed).map(|(name, _)| runner_name(runner, name)).collect();
        prop_assert_eq!(test_names(&log), expected);
    }

    #[test]
    fn a_receipt_is_accepted_exactly_when_it_quotes_enough_failing_tests(
        (runner, tests) in runner_case(),
        keep in prop::collection::vec(any::<bool>(), 20),
    ) {
        let log = runner_log(runner, &tests);
        let failures = identify_failures(&log);
        let quoted: Vec<&str> = failures.tests.iter().zip(&keep).filter(|(_, keep)| **keep).map(|(test, _)| test.line.as_str()).collect();
        let required = failures.tests.len().min(12);
        let outcome = check_failure_evidence(&failures, &log, &quoted);
        prop_assert_eq!(outcome.is_ok(), quoted.len() >= required, "{:?}", outcome);
        // Status words never stand in for a test.
        let bare = check_failure_evidence(&failures, &log, &["FAILED", "FAIL", "error"]);
        prop_assert_eq!(bare.is_ok(), failures.tests.is_empty());
    }
}

/// A largest log that names a failing test on every line (about 19,000 of them, some twice):
/// each is kept once, in the order the log first names it, and a receipt quoting the first
/// twelve passes. Reading such a log once compared each name with every earlier one, which
/// took over a second in a release build (`cargo bench -p sol-reducer --bench
/// quote_worst_case`, "many failures"); this runs it in a debug build in well under that.
#[test]
fn a_log_naming_thousands_of_failing_tests_is_read_once_per_line() {
    let mut log = String::new();
    let mut n = 0;
    while log.len() < sol_reducer::MAX_SOURCE_CHARS - 200 {
        log.push_str(&format!("test suite::case_{n:05} ... FAILED\n"));
        if n % 1000 == 0 {
            log.push_str("test suite::case_00000 ... FAILED\n");
        }
        n += 1;
    }
    log.push_str("error: test failed\n");
    let names = test_names(&log);
    assert_eq!(names.len(), n);
    assert!(
        names
            .iter()
            .enumerate()
            .all(|(index, name)| *name == format!("suite::case_{index:05}"))
    );
    let sha = sha256_hex(log.as_bytes());
    let evidence: Vec<String> = (0..12)
        .map(|index| {
            format!(r#"{{"kind":"failure","quote":"test suite::case_{index:05} ... FAILED"}}"#)
        })
        .collect();
    let reply = format!(
        r#"{{"schema":"sol-pi-evidence-receipt/1","source_sha256":"{sha}","status":"failure","uncertain":false,"evidence":[{}]}}"#,
        evidence.join(",")
    );
    let check = ReceiptCheck {
        log: &log,
        source_sha256: &sha,
        is_error: true,
    };
    let verified = validate_receipt(&reply, &check).expect("twelve failing tests quoted");
    assert_eq!(verified.evidence.len(), 12);
}

/// Lines of passing runs that look like failures to a careless reader: a passing test
/// whose name says "failed", summaries that count zero failures, a jest configuration
/// notice. None of them names a failing test.
const PASSING_LOOKALIKES: &[&str] = &[
    "test auth::test_failed_login ... ok",
    "test auth::tests::reports_FAILED_status ... ok",
    "tests/test_auth.py::test_failed_login PASSED",
    "tests/test_auth.py::test_failed_login PASSED                              [ 50%]",
    "test_failed_login (tests.test_auth.Case.test_failed_login) ... ok",
    "--- PASS: TestFailedLogin (0.00s)",
    "ok  \texample.com/auth\t0.012s",
    "✓ src/login.test.ts > shows FAILED when the password is wrong 3ms",
    " PASS  src/login.test.ts",
    "  ● Validation Warning:",
    "  ● Deprecation Warning:",
    "test result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
    "Tests:       0 failed, 42 passed, 42 total",
    "========================= 42 passed, 0 failed in 1.20s =========================",
    "Ran 42 tests in 0.120s",
    "OK (expected failures=1)",
    "XFAIL tests/test_auth.py::test_legacy_hash - known issue",
    "error: 0 failed",
];

/// The failing-test lines of each runner, the way a reported success can still carry them
/// (`make test | tail`, `make test || true`).
const FAILING_LINES: &[(&str, &str)] = &[
    (
        "test ledger::rejects_overdraft ... FAILED",
        "ledger::rejects_overdraft",
    ),
    (
        "FAILED tests/test_ledger.py::test_overdraft - assert 1 == 2",
        "tests/test_ledger.py::test_overdraft",
    ),
    (
        "tests/test_ledger.py::test_overdraft FAILED                              [ 50%]",
        "tests/test_ledger.py::test_overdraft",
    ),
    ("--- FAIL: TestOverdraft (0.00s)", "TestOverdraft"),
    (
        "FAIL: test_overdraft (tests.test_ledger.Case.test_overdraft)",
        "tests.test_ledger.Case.test_overdraft",
    ),
    (
        "  ● ledger › rejects an overdraft",
        "ledger › rejects an overdraft",
    ),
    (
        " FAIL  src/ledger.test.ts > ledger > rejects an overdraft",
        "src/ledger.test.ts > ledger > rejects an overdraft",
    ),
];

#[test]
fn a_success_log_that_names_failing_tests_is_refused_for_every_runner() {
    for name in [
        "cargo-test-failure",
        "pytest-failure",
        "go-test-failure",
        "unittest-failure",
    ] {
        let log = exact_log(name);
        let refused = check_success_log(&identify_failures(&log)).expect_err(name);
        assert!(refused.identified >= 2, "{name}: {refused:?}");
    }
    for (line, name) in FAILING_LINES {
        let log = format!("{}\n{line}\n", PASSING_LOOKALIKES.join("\n"));
        let refused = check_success_log(&identify_failures(&log)).expect_err(line);
        assert_eq!(
            refused,
            FailingTestsOnSuccess {
                first: (*name).to_owned(),
                identified: 1
            }
        );
    }
}

#[test]
fn true_passes_and_their_lookalikes_are_not_refused() {
    let log = PASSING_LOOKALIKES.join("\n");
    assert_eq!(check_success_log(&identify_failures(&log)), Ok(()));
    for line in PASSING_LOOKALIKES {
        assert_eq!(
            check_success_log(&identify_failures(line)),
            Ok(()),
            "{line}"
        );
    }
    assert_eq!(
        check_success_log(&identify_failures(&exact_log("npm-test-pass"))),
        Ok(())
    );
    assert_eq!(
        check_success_log(&identify_failures(&passing_log(300))),
        Ok(())
    );
}

/// A success receipt for a log naming failing tests is refused by the validator itself,
/// whatever it quotes (issue 25: `make test 2>&1 | tail -n 1000` exits 0).
#[test]
fn the_validator_refuses_a_success_receipt_for_a_log_naming_failing_tests() {
    let log = exact_log("cargo-test-failure");
    let sha = sha256_hex(log.as_bytes());
    let check = ReceiptCheck {
        log: &log,
        source_sha256: &sha,
        is_error: false,
    };
    let summary = "test result: FAILED. 36 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.04s";
    for evidence in [
        vec![("summary", summary)],
        vec![
            (
                "failure",
                "test import::csv::tests::rejects_unbalanced_rows ... FAILED",
            ),
            (
                "failure",
                "test reconcile::tests::matches_split_transactions ... FAILED",
            ),
        ],
    ] {
        let rejection = validate_receipt(&receipt(&sha, "success", &evidence), &check)
            .expect_err("a success receipt for failing tests");
        assert_eq!(rejection.reason.code(), "success-with-failing-tests");
        assert!(
            rejection
                .detail
                .contains("the first `import::csv::tests::rejects_unbalanced_rows`"),
            "{}",
            rejection.detail
        );
    }
    // A true pass keeps its success receipt.
    let pass = passing_log(300);
    let sha = sha256_hex(pass.as_bytes());
    let check = ReceiptCheck {
        log: &pass,
        source_sha256: &sha,
        is_error: false,
    };
    assert!(validate_receipt(&crate::support::passing_receipt(&pass), &check).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A passing log keeps its success receipt however its lookalike lines are mixed in;
    /// one failing-test line anywhere in it makes it refused, naming that test.
    #[test]
    fn the_success_check_fires_exactly_on_a_failing_test_line(
        lookalikes in prop::collection::vec(select(PASSING_LOOKALIKES.to_vec()), 0..30),
        tests in 1usize..200,
        failing in prop::option::of((select(FAILING_LINES.to_vec()), any::<prop::sample::Index>())),
    ) {
        let mut lines: Vec<String> = passing_log(tests).lines().map(str::to_owned).collect();
        lines.extend(lookalikes.iter().map(|line| (*line).to_owned()));
        if let Some(((line, _), at)) = failing {
            let index = at.index(lines.len() + 1);
            lines.insert(index, line.to_owned());
        }
        let outcome = check_success_log(&identify_failures(&lines.join("\n")));
        match failing {
            None => prop_assert_eq!(outcome, Ok(())),
            Some(((_, name), _)) => prop_assert_eq!(
                outcome.map_err(|refused| refused.first),
                Err(name.to_owned())
            ),
        }
    }
}

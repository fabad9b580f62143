//! What identifies the failures in a failing log, and whether a receipt's quotes keep it.
//!
//! A receipt for a failing command replaces the log in every later prompt, so it must keep
//! what the agent needs to act: which tests failed, or which error stopped the build. A
//! quote of a bare status word (`FAILED`, `error`) says nothing the receipt's
//! `status=failure` does not already say.
//!
//! [`identify_failures`] reads the log line by line:
//!
//! - **Failing tests**, one per name, in log order: cargo test (`test NAME ... FAILED` and
//!   the `failures:` list), pytest (`FAILED NODEID - …`, `ERROR NODEID`, verbose
//!   `NODEID FAILED`), Python's unittest (`FAIL: NAME (ID)`, `ERROR: NAME (ID)` and verbose
//!   `NAME (ID) ... FAIL`, named by the dotted id ending in the test's name), go test
//!   (`--- FAIL: NAME`), jest (`● NAME`) and vitest
//!   (`FAIL  FILE > SUITE > NAME`; the `✕`/`×` tree lines only when neither of those is
//!   there).
//! - **Diagnostics**, when no failing test is named: tsc (`FILE(L,C): error TSNNNN` and
//!   `FILE:L:C - error TSNNNN`), compiler and tool errors (`error: …`, `error[E0308]: …`,
//!   `FILE:L:C: error: …`, `fatal error: …`, `TypeError: …`) that say more than a status.
//!
//! [`check_failure_evidence`] then asks of the receipt's `fatal` and `failure` quotes:
//!
//! 1. with failing tests: each test is quoted, by a line that identifies it as failing (any
//!    of the forms above, not only the first the log shows) or by its name in a quote that
//!    shows a failure word; when the log names more tests than a receipt can
//!    hold items ([`MAX_EVIDENCE_ITEMS`]), that many of them;
//! 2. else with diagnostics: at least one diagnostic is quoted (for tsc, its location and
//!    code; otherwise the whole line);
//! 3. else, when the log shows a failure word: at least one quote shows a failure word and
//!    something beyond status words;
//! 4. else (a failure without any failure word, such as a bare non-zero exit): nothing.
//!
//! [`check_success_log`] is the rule for a command that reported success: its log must name
//! no failing test. An exit code of 0 does not prove the tests passed (`make test | tail`,
//! `make test || true` hide the test runner's status), and a success receipt would replace
//! the very lines that say otherwise, so such a log is never reduced: the agent reads it
//! whole and judges for itself. Only the runners' own failure lines count (those above), so
//! a passing test named `test_failed_login` or a `0 failed` summary does not.
//!
//! ```
//! use sol_reducer::failure::{check_failure_evidence, identify_failures};
//!
//! let log = "test a::one ... ok\ntest a::two ... FAILED\ntest a::three ... FAILED\n";
//! let failures = identify_failures(log);
//! assert_eq!(failures.tests.len(), 2);
//! assert!(check_failure_evidence(&failures, log, &["FAILED"]).is_err());
//! assert!(check_failure_evidence(&failures, log, &["test a::two ... FAILED\ntest a::three ... FAILED"]).is_ok());
//!
//! // The same log from `cargo test | tail`, which exits 0: no success receipt for it.
//! assert!(sol_reducer::failure::check_success_log(&failures).is_err());
//! let passing = "test a::test_failed_login ... ok\ntest result: ok. 1 passed; 0 failed\n";
//! assert!(sol_reducer::failure::check_success_log(&identify_failures(passing)).is_ok());
//! ```

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::MAX_EVIDENCE_ITEMS;
use crate::command::has_failure_signal;

/// A failing test named by the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailingTest {
    /// The test's name as the runner prints it (`parser::rejects_empty`,
    /// `tests/test_a.py::test_b`, `TestParse/empty`).
    pub name: String,
    /// The first line that names it as failing, without trailing blanks.
    pub line: String,
}

/// A line that says what stopped a build or run that names no failing test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The part of the line a quote must contain: for tsc the location and the code,
    /// otherwise the trimmed line (at most 300 bytes).
    pub identity: String,
}

/// What identifies the failures of one log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failures {
    /// Failing tests, one per name, in log order.
    pub tests: Vec<FailingTest>,
    /// Diagnostics, in log order; empty when `tests` is not.
    pub diagnostics: Vec<Diagnostic>,
}

/// Why a receipt's quotes do not keep the failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingEvidence {
    /// Failing tests are not quoted.
    Tests {
        /// The first failing test that no quote keeps.
        first_unquoted: String,
        /// How many failing tests no quote keeps.
        unquoted: usize,
        /// How many failing tests the log names.
        identified: usize,
        /// How many of them must be quoted.
        required: usize,
    },
    /// None of the log's diagnostics is quoted.
    Diagnostics {
        /// The first diagnostic of the log.
        first: String,
        /// How many the log has.
        identified: usize,
    },
    /// No quote shows the failure beyond status words.
    BareStatus,
}

impl MissingEvidence {
    /// The journal's detail text.
    pub fn detail(&self) -> String {
        match self {
            MissingEvidence::Tests {
                first_unquoted,
                unquoted,
                identified,
                required,
            } => format!(
                "no fatal or failure item quotes the failing test `{first_unquoted}`; {} of the {identified} failing tests the log names are quoted, {required} must be",
                identified - unquoted
            ),
            MissingEvidence::Diagnostics { first, identified } => format!(
                "no fatal or failure item quotes any of the {identified} error lines of the log, such as `{first}`"
            ),
            MissingEvidence::BareStatus => "no fatal or failure item quotes a line that identifies the failure; a bare status such as `FAILED` or `error` is not evidence".to_owned(),
        }
    }
}

/// Why a log whose command reported success cannot get a success receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailingTestsOnSuccess {
    /// The first failing test the log names.
    pub first: String,
    /// How many failing tests the log names.
    pub identified: usize,
}

impl FailingTestsOnSuccess {
    /// The journal's detail text.
    pub fn detail(&self) -> String {
        let tests = if self.identified == 1 {
            "1 failing test".to_owned()
        } else {
            format!("{} failing tests", self.identified)
        };
        format!(
            "the command reported success, but the log names {tests}, the first `{}`; a pipe or `|| true` may have hidden the test runner's exit code, so no success receipt may replace the log",
            self.first
        )
    }
}

/// Checks the log of a command that reported success: it must name no failing test (see
/// the module documentation). `failures` is [`identify_failures`] of the log.
pub fn check_success_log(failures: &Failures) -> Result<(), FailingTestsOnSuccess> {
    match failures.tests.first() {
        None => Ok(()),
        Some(first) => Err(FailingTestsOnSuccess {
            first: first.name.clone(),
            identified: failures.tests.len(),
        }),
    }
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the failure patterns are valid")
}

static CARGO_FAILED: LazyLock<Regex> = LazyLock::new(|| regex(r"^test (.+?) \.\.\. FAILED$"));
static CARGO_LIST_ENTRY: LazyLock<Regex> = LazyLock::new(|| regex(r"^    (\S(?:.*\S)?)$"));
static PYTEST_SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:FAILED|ERROR) (\S+)(?: - .*)?$"));
static PYTEST_VERBOSE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(\S+::\S+) (?:FAILED|ERROR)(?:\s+\[\s*\d+%\])?$"));
static UNITTEST_SUMMARY: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)"));
static UNITTEST_VERBOSE: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(\w+) \(([\w.]+)\) \.\.\. (?:FAIL|ERROR)$"));
static GO_FAIL: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*--- FAIL: (\S+)"));
static JEST_HEADING: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*● (\S.*)$"));
static VITEST_FAIL: LazyLock<Regex> = LazyLock::new(|| regex(r"^\s*FAIL\s+(\S.* > .*\S)$"));
static TREE_CROSS: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^\s*[✕×✗] (\S.*?)(?:\s+\(?\d+(?:\.\d+)?\s?m?s\)?)?$"));
static TSC_ERROR: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^(\S.*?(?:\(\d+,\d+\):|:\d+:\d+ -) error TS\d+):"));
static TOOL_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^\s*(?:\S+:\d+(?::\d+)?:\s*)?(?:(?:fatal )?error(?:\[[A-Z]*\d+\])?:|(?:Uncaught )?[A-Z][A-Za-z]*Error: )\s*\S",
    )
});

/// Reads what identifies the failures of `log`; see the module documentation.
pub fn identify_failures(log: &str) -> Failures {
    // Each list keeps the order of first appearance; the sets beside them find a name
    // again without a scan, so a log naming tens of thousands of tests stays linear.
    let mut tests = Tests::default();
    let mut trees = Tests::default();
    let mut diagnostics = Vec::new();
    let mut diagnostic_identities = BTreeSet::new();
    let mut in_failure_list = false;
    for raw in log.lines() {
        let line = raw.trim_end();
        if in_failure_list {
            match CARGO_LIST_ENTRY.captures(line) {
                Some(caps) => tests.push(&caps[1], line),
                None => in_failure_list = false,
            }
        }
        if line == "failures:" {
            in_failure_list = true;
            continue;
        }
        if let Some(name) = failing_test_name(line) {
            tests.push(&name, line);
        } else if let Some(caps) = line
            .contains(['✕', '×', '✗'])
            .then(|| TREE_CROSS.captures(line))
            .flatten()
        {
            trees.push(&caps[1], line);
        } else if let Some(identity) = diagnostic_identity(line)
            && diagnostic_identities.insert(identity.clone())
        {
            diagnostics.push(Diagnostic { identity });
        }
    }
    let mut tests = tests.list;
    if tests.is_empty() {
        tests = trees.list;
    }
    if !tests.is_empty() {
        diagnostics.clear();
    }
    Failures { tests, diagnostics }
}

/// The failing test a line names, if it is one of the runners' failure lines.
fn failing_test_name(line: &str) -> Option<Cow<'_, str>> {
    borrowed_failing_test_name(line)
        .map(Cow::Borrowed)
        .or_else(|| unittest_name(line))
}

/// unittest's test id: the dotted id in parentheses, which ends with the method's name
/// from Python 3.11 on and names only the class before (the name is then appended).
fn unittest_name(line: &str) -> Option<Cow<'_, str>> {
    let caps = if line.starts_with("FAIL: ") || line.starts_with("ERROR: ") {
        UNITTEST_SUMMARY.captures(line)?
    } else if line.ends_with(" ... FAIL") || line.ends_with(" ... ERROR") {
        UNITTEST_VERBOSE.captures(line)?
    } else {
        return None;
    };
    let (method, id) = (caps.get(1)?.as_str(), caps.get(2)?.as_str());
    let complete = id
        .strip_suffix(method)
        .is_some_and(|module| module.ends_with('.'));
    Some(if complete {
        Cow::Borrowed(id)
    } else {
        Cow::Owned(format!("{id}.{method}"))
    })
}

fn borrowed_failing_test_name(line: &str) -> Option<&str> {
    // Cheap tests first: most lines of a long log are none of these.
    let trimmed = line.trim_start();
    if line.starts_with("test ") && line.ends_with("FAILED") {
        return CARGO_FAILED
            .captures(line)
            .and_then(|caps| caps.get(1))
            .map(|m| m.as_str());
    }
    if line.starts_with("FAILED ") || line.starts_with("ERROR ") {
        let name = PYTEST_SUMMARY.captures(line)?.get(1)?.as_str();
        return (name.contains("::") || name.ends_with(".py")).then_some(name);
    }
    if line.contains("::") && (line.contains(" FAILED") || line.contains(" ERROR")) {
        return PYTEST_VERBOSE
            .captures(line)
            .and_then(|caps| caps.get(1))
            .map(|m| m.as_str());
    }
    if trimmed.starts_with("--- FAIL: ") {
        return GO_FAIL
            .captures(line)
            .and_then(|caps| caps.get(1))
            .map(|m| m.as_str());
    }
    if trimmed.starts_with("● ") {
        let name = JEST_HEADING.captures(line)?.get(1)?.as_str();
        // `● Console` groups logged output; `● Validation Warning:` and `● Deprecation
        // Warning:` are configuration notices of a run that may pass.
        return (!name.starts_with("Console") && !name.ends_with("Warning:")).then_some(name);
    }
    if trimmed.starts_with("FAIL ") && line.contains(" > ") {
        return VITEST_FAIL
            .captures(line)
            .and_then(|caps| caps.get(1))
            .map(|m| m.as_str());
    }
    None
}

/// Failing tests in the order the log first names them, each name once.
#[derive(Default)]
struct Tests {
    list: Vec<FailingTest>,
    names: BTreeSet<String>,
}

impl Tests {
    fn push(&mut self, name: &str, line: &str) {
        if self.names.insert(name.to_owned()) {
            self.list.push(FailingTest {
                name: name.to_owned(),
                line: line.to_owned(),
            });
        }
    }
}

/// The identity of a diagnostic line, if `line` is one.
fn diagnostic_identity(line: &str) -> Option<String> {
    if line.contains(" error TS")
        && let Some(caps) = TSC_ERROR.captures(line)
    {
        return Some(caps[1].to_owned());
    }
    let lower_has_error = line.contains("rror");
    if !lower_has_error || !TOOL_ERROR.is_match(line) || is_bare_status(line) {
        return None;
    }
    let trimmed = line.trim();
    let mut end = trimmed.len().min(300);
    while !trimmed.is_char_boundary(end) {
        end -= 1;
    }
    Some(trimmed[..end].to_owned())
}

/// Words that only report a status or a count, never which test or error.
const STATUS_WORDS: &[&str] = &[
    "and",
    "assert",
    "assertion",
    "assertionerror",
    "build",
    "code",
    "command",
    "err",
    "error",
    "errors",
    "exception",
    "exit",
    "exited",
    "fail",
    "failed",
    "failing",
    "failure",
    "failures",
    "fatal",
    "filtered",
    "finished",
    "found",
    "in",
    "ignored",
    "make",
    "measured",
    "mismatch",
    "ms",
    "not",
    "npm",
    "of",
    "ok",
    "out",
    "panic",
    "panicked",
    "pass",
    "passed",
    "result",
    "results",
    "run",
    "skipped",
    "status",
    "step",
    "summary",
    "test",
    "tests",
    "the",
    "timed",
    "timeout",
    "type",
    "unsolved",
    "with",
];

/// Whether `text` holds nothing but status words, counts and punctuation
/// (`FAILED`, `error:`, `test result: FAILED. 3 passed; 1 failed`).
pub fn is_bare_status(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty() && !word.chars().all(|c| c.is_ascii_digit()))
        .all(|word| {
            let lower = word.to_lowercase();
            lower.chars().count() < 2 || STATUS_WORDS.contains(&lower.as_str())
        })
}

/// Whether `quote` contains `name` as a whole name, not as part of a longer test path
/// (`a` is not named by `a::b`, `TestX` not by `TestX/sub`).
fn contains_name(quote: &str, name: &str) -> bool {
    let is_name_char = |c: char| c.is_alphanumeric() || "_:/.-[]".contains(c);
    quote.match_indices(name).any(|(start, _)| {
        let before = quote[..start].chars().next_back();
        let after = quote[start + name.len()..].chars().next();
        !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
    })
}

/// A quote with the failing tests its own lines name, read once per receipt rather than
/// once per failing test of the log.
struct Quote<'q> {
    text: &'q str,
    named: Vec<Cow<'q, str>>,
}

impl<'q> Quote<'q> {
    fn new(text: &'q str) -> Quote<'q> {
        Quote {
            text,
            named: text
                .lines()
                .filter_map(|line| failing_test_name(line.trim_end()))
                .collect(),
        }
    }

    fn keeps(&self, test: &FailingTest) -> bool {
        self.text.contains(test.line.as_str())
            || self.named.iter().any(|name| *name == test.name)
            || (contains_name(self.text, &test.name) && has_failure_signal(self.text))
    }
}

/// Checks that `quotes` (the receipt's `fatal` and `failure` quotes) keep the failures of
/// `log`; see the module documentation. `failures` is [`identify_failures`] of `log`.
pub fn check_failure_evidence(
    failures: &Failures,
    log: &str,
    quotes: &[&str],
) -> Result<(), MissingEvidence> {
    if !failures.tests.is_empty() {
        let quotes: Vec<Quote<'_>> = quotes.iter().map(|quote| Quote::new(quote)).collect();
        let unquoted: Vec<&FailingTest> = failures
            .tests
            .iter()
            .filter(|test| !quotes.iter().any(|quote| quote.keeps(test)))
            .collect();
        let identified = failures.tests.len();
        let required = identified.min(MAX_EVIDENCE_ITEMS);
        return match unquoted.first() {
            Some(first) if identified - unquoted.len() < required => Err(MissingEvidence::Tests {
                first_unquoted: first.name.clone(),
                unquoted: unquoted.len(),
                identified,
                required,
            }),
            _ => Ok(()),
        };
    }
    if let Some(first) = failures.diagnostics.first() {
        let quoted = failures.diagnostics.iter().any(|diagnostic| {
            quotes
                .iter()
                .any(|quote| quote.contains(diagnostic.identity.as_str()))
        });
        return if quoted {
            Ok(())
        } else {
            Err(MissingEvidence::Diagnostics {
                first: first.identity.clone(),
                identified: failures.diagnostics.len(),
            })
        };
    }
    let identifies = |quote: &&str| has_failure_signal(quote) && !is_bare_status(quote);
    if quotes.iter().any(identifies) || !has_failure_signal(log) {
        Ok(())
    } else {
        Err(MissingEvidence::BareStatus)
    }
}

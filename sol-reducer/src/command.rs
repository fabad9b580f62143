//! Which commands produce logs worth reducing, and which texts show a failure.
//!
//! Both matchers are case-insensitive and fixed by the specification, so a log is treated the
//! same by every SoL-Pi host.
//!
//! ```
//! use sol_reducer::command::{has_failure_signal, is_diagnostic_command};
//!
//! assert!(is_diagnostic_command("cargo test --all"));
//! assert!(is_diagnostic_command("cd app && npm test"));
//! assert!(!is_diagnostic_command("rg test src"));
//! assert!(has_failure_signal("test result: FAILED. 1 passed; 2 failed"));
//! assert!(!has_failure_signal("test result: ok. 3 passed"));
//! ```

use std::sync::LazyLock;

use regex::Regex;

/// The build and test command words, each preceded by the start of the command, a shell
/// separator (`;`, `&`, `|`, `(`, `)`) or whitespace, and followed by whitespace or the end.
static DIAGNOSTIC_COMMAND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)(?:^|[;&|()\s])(?:",
        r"lake\s+build|lake\s+env\s+lean|lean|coq|cargo(?:\s+(?:build|test|check))?",
        r"|zig\s+build|pytest|python3?\s+-m\s+(?:pytest|unittest|py_compile)|ctest",
        r"|cmake\s+--build|ninja|make|npm\s+test|pnpm\s+test|yarn\s+test|go\s+test|bazel\s+test",
        r")(?:\s|$)",
    ))
    .expect("the diagnostic-command pattern is valid")
});

/// Words that mark a failure anywhere in a text.
static FAILURE_SIGNAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)error|failed|failure|fatal|exception|panic|timeout|unsolved|type mismatch|assert",
    )
    .expect("the failure-signal pattern is valid")
});

/// Whether `command` runs one of the build or test tools whose logs the reducer handles:
/// `lake build`, `lake env lean`, `lean`, `coq`, `cargo` (any subcommand), `zig build`,
/// `pytest`, `python`/`python3 -m pytest|unittest|py_compile`, `ctest`, `cmake --build`,
/// `ninja`, `make`, `npm test`, `pnpm test`, `yarn test`, `go test` and `bazel test`.
///
/// The command word may appear anywhere in a shell line (`cd app && make -j8`), but not
/// inside another word or argument (`rg test src`, `cat Makefile`).
pub fn is_diagnostic_command(command: &str) -> bool {
    DIAGNOSTIC_COMMAND.is_match(command)
}

/// Whether `text` contains a failure word: `error`, `failed`, `failure`, `fatal`,
/// `exception`, `panic`, `timeout`, `unsolved`, `type mismatch` or `assert`, in any case
/// and also inside longer words (`AssertionError`, `panicked`).
pub fn has_failure_signal(text: &str) -> bool {
    FAILURE_SIGNAL.is_match(text)
}

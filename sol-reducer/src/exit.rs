//! Pi's conventions for how a command ended, read from the result text Pi returns, and the
//! runtime status line that is kept after a receipt.
//!
//! Pi reports the end of a command in the tool result itself: Pi 1.x bash results carry
//! `structuredContent.exit_code`; every version appends a status line such as
//! `Command exited with code 2` to a failed command's text; Action Fusion puts
//! `[then_run:succeeded]` or `[then_run:failed]` before the command output. The reducer
//! reads these signals and refuses to reduce when they contradict the result's `isError`
//! flag, so a failed command can never receive a `status=success` receipt.
//!
//! ```
//! use sol_reducer::exit::{bash_exit_signal, split_status_line, ExitSignal};
//!
//! let text = "running 3 tests\n\n\nCommand exited with code 101";
//! assert_eq!(bash_exit_signal(None, text), ExitSignal::Failed);
//! assert_eq!(bash_exit_signal(Some(0), text), ExitSignal::Succeeded);
//! assert_eq!(
//!     split_status_line(text),
//!     ("running 3 tests\n", Some("Command exited with code 101"))
//! );
//! ```

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

pub use crate::records::ExitSignal;

/// The marker Action Fusion writes before a successful command's output.
pub const THEN_RUN_SUCCEEDED: &str = "[then_run:succeeded]";
/// The marker Action Fusion writes before a failed command's output.
pub const THEN_RUN_FAILED: &str = "[then_run:failed]";

/// Which `[then_run:…]` marker a fused result carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ThenRunMarker {
    /// `[then_run:succeeded]`.
    Succeeded,
    /// `[then_run:failed]`.
    Failed,
}

impl ThenRunMarker {
    /// The marker's text.
    pub fn as_str(self) -> &'static str {
        match self {
            ThenRunMarker::Succeeded => THEN_RUN_SUCCEEDED,
            ThenRunMarker::Failed => THEN_RUN_FAILED,
        }
    }

    /// The first marker in `text` and its byte offset.
    pub fn find_first(text: &str) -> Option<(ThenRunMarker, usize)> {
        let succeeded = text
            .find(THEN_RUN_SUCCEEDED)
            .map(|at| (ThenRunMarker::Succeeded, at));
        let failed = text
            .find(THEN_RUN_FAILED)
            .map(|at| (ThenRunMarker::Failed, at));
        match (succeeded, failed) {
            (Some(s), Some(f)) => Some(if s.1 < f.1 { s } else { f }),
            (one, other) => one.or(other),
        }
    }
}

/// A final status line Pi appends to a command's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusLine {
    /// `Command exited with code N`; `None` when N does not fit an `i32` (it is non-zero).
    Exited(Option<i32>),
    /// `Command timed out after N seconds`.
    TimedOut,
    /// `Command aborted`.
    Aborted,
    /// `Command terminated without an exit code`.
    Terminated,
}

impl StatusLine {
    /// Parses one line (without its line break).
    pub fn parse(line: &str) -> Option<StatusLine> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        match line {
            "Command aborted" => return Some(StatusLine::Aborted),
            "Command terminated without an exit code" => return Some(StatusLine::Terminated),
            _ => {}
        }
        if let Some(code) = line.strip_prefix("Command exited with code ") {
            let digits = code.strip_prefix('-').unwrap_or(code);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            return Some(StatusLine::Exited(code.parse().ok()));
        }
        TIMED_OUT.is_match(line).then_some(StatusLine::TimedOut)
    }

    /// Whether this line reports a failure (every status line except an exit with code 0).
    pub fn is_failure(self) -> bool {
        self != StatusLine::Exited(Some(0))
    }
}

static TIMED_OUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Command timed out after [0-9]+(?:\.[0-9]+)? seconds?$")
        .expect("the timeout pattern is valid")
});

/// The last line of `text`, ignoring trailing line breaks.
fn last_line(text: &str) -> &str {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    trimmed.rsplit('\n').next().unwrap_or(trimmed)
}

/// The status line that ends `text`, if its last line is one.
pub fn trailing_status(text: &str) -> Option<StatusLine> {
    StatusLine::parse(last_line(text))
}

/// The exit signal of a `bash` result, in the order the requirement gives: Pi 1.x's
/// structured exit code when present, else a trailing status line, else
/// [`ExitSignal::Unknown`].
pub fn bash_exit_signal(structured_exit_code: Option<i32>, text: &str) -> ExitSignal {
    match (structured_exit_code, trailing_status(text)) {
        (Some(0), _) => ExitSignal::Succeeded,
        (Some(_), _) => ExitSignal::Failed,
        (None, Some(status)) if status.is_failure() => ExitSignal::Failed,
        (None, Some(_)) => ExitSignal::Succeeded,
        (None, None) => ExitSignal::Unknown,
    }
}

/// The exit signal of a fused `edit`/`write` result from its first marker and the
/// command output after it: `[then_run:failed]` is a failure, and so is
/// `[then_run:succeeded]` followed by output whose last line is a non-zero
/// `Command exited with code N`.
pub fn fused_exit_signal(marker: ThenRunMarker, command_output: &str) -> ExitSignal {
    match marker {
        ThenRunMarker::Failed => ExitSignal::Failed,
        ThenRunMarker::Succeeded => match trailing_status(command_output) {
            Some(status @ StatusLine::Exited(_)) if status.is_failure() => ExitSignal::Failed,
            _ => ExitSignal::Succeeded,
        },
    }
}

/// Splits Pi's runtime status line off the end of a failed command's text: the log before
/// it and the line itself.
///
/// The line is split off only when it is the last line and a blank line separates it from
/// the output, the way Pi appends it (`<output>\n\nCommand exited with code N`); the two
/// line breaks Pi added go with it. Status-looking text anywhere else stays in the log.
pub fn split_status_line(text: &str) -> (&str, Option<&str>) {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    let line_start = trimmed.rfind('\n').map_or(0, |i| i + 1);
    let line = &trimmed[line_start..];
    if StatusLine::parse(line).is_none() {
        return (text, None);
    }
    let before = &trimmed[..line_start];
    let log = before
        .strip_suffix("\r\n\r\n")
        .or_else(|| before.strip_suffix("\n\n"))
        .or_else(|| before.strip_suffix("\n\r\n"));
    match log {
        Some(log) => (log, Some(line.strip_suffix('\r').unwrap_or(line))),
        None => (text, None),
    }
}

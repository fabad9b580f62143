//! Which results are candidates, and what their log is: the harness-neutral input
//! ([`ShellResult`]: a command, how it ended, its output) and the [`Candidate`] every input
//! becomes.
//!
//! A candidate is the output of one of the build and test commands of the [`Policy`]
//! ([`crate::command::CommandSet`]). Everything here is decided from the result alone, before
//! any file is read. A host other than Pi hands the reducer a [`ShellResult`]; Pi's tool
//! results go through the adapter in [`crate::pi`], which reads Pi's conventions (tool names,
//! arguments, status lines, `then_run` markers, full-output files) into the same
//! [`Candidate`].
//!
//! ```
//! use sol_reducer::candidate::{CandidateInput, ExitStatus, ShellResult};
//! use sol_reducer::{Policy, ReasonCode};
//!
//! let run = ShellResult {
//!     call_id: "run-1",
//!     command: "make check",
//!     exit: ExitStatus::Code(2),
//!     output: "cc -c a.c\na.c:3:1: error: expected ';'\n",
//!     full_output_log: None,
//! };
//! let candidate = run.select(&Policy::default()).expect("make is a build command");
//! assert!(candidate.is_error);
//! assert_eq!(candidate.exit_code, Some(2));
//! assert_eq!(candidate.inline_log, run.output);
//!
//! let listing = ShellResult { command: "ls -l", ..run };
//! assert_eq!(listing.select(&Policy::default()).unwrap_err().reason, ReasonCode::NotDiagnosticCommand);
//! ```

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sol_core::message::ContentBlock;
use sol_core::{ShellExit, ShellOutcome};

use crate::exit::{ThenRunMarker, split_status_line};
use crate::policy::Policy;
use crate::reason::{Fallback, ReasonCode};
pub use crate::records::ExitSignal;

/// How a command ended, as the host saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "code", rename_all = "camelCase")]
pub enum ExitStatus {
    /// It exited with this status code (`0` is success).
    Code(i32),
    /// It ended without a status code (killed by a signal).
    NoCode,
    /// The host stopped it when its timeout expired.
    TimedOut,
    /// The host stopped it because the user aborted the turn.
    Aborted,
}

impl ExitStatus {
    /// Whether the command exited with status 0.
    pub fn is_success(self) -> bool {
        self == ExitStatus::Code(0)
    }

    /// The status code, when there is one.
    pub fn code(self) -> Option<i32> {
        match self {
            ExitStatus::Code(code) => Some(code),
            _ => None,
        }
    }
}

/// How a host's log or its user reads it: `exit code 1`, `ended without an exit code`,
/// `timed out`, `aborted`.
///
/// ```
/// use sol_reducer::ExitStatus;
///
/// assert_eq!(ExitStatus::Code(101).to_string(), "exit code 101");
/// assert_eq!(ExitStatus::TimedOut.to_string(), "timed out");
/// ```
impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitStatus::Code(code) => write!(f, "exit code {code}"),
            ExitStatus::NoCode => f.write_str("ended without an exit code"),
            ExitStatus::TimedOut => f.write_str("timed out"),
            ExitStatus::Aborted => f.write_str("aborted"),
        }
    }
}

impl From<ShellExit> for ExitStatus {
    fn from(exit: ShellExit) -> Self {
        match exit {
            ShellExit::Code(code) => ExitStatus::Code(code),
            ShellExit::NoCode => ExitStatus::NoCode,
            ShellExit::TimedOut { .. } => ExitStatus::TimedOut,
            ShellExit::Aborted => ExitStatus::Aborted,
        }
    }
}

/// One finished shell command, as any harness has it: the reducer's harness-neutral input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellResult<'a> {
    /// The host's id for the call, for the journal only (identity comes from the log).
    pub call_id: &'a str,
    /// The command line that ran.
    pub command: &'a str,
    /// How it ended.
    pub exit: ExitStatus,
    /// Its output as the model would see it (combined standard output and error). When
    /// `full_output_log` is given this may be a truncated preview.
    pub output: &'a str,
    /// A file the host wrote and trusts to hold the whole output: read (as a regular file,
    /// without following a link, within [`crate::MAX_FULL_OUTPUT_BYTES`]) in place of
    /// `output`. If it cannot be read, nothing is reduced.
    pub full_output_log: Option<&'a Utf8Path>,
}

impl<'a> ShellResult<'a> {
    /// The result of `command` as a [`sol_core::Shell`] port ran it: its output and how it
    /// ended, with no full-output log. When the shell kept only the end of a long output
    /// ([`ShellOutcome::dropped_bytes`]), that end is the log, as it is what the model
    /// would read.
    ///
    /// ```
    /// use sol_reducer::sol_core::{ShellExit, ShellOutcome};
    /// use sol_reducer::{ExitStatus, ShellResult};
    ///
    /// let ran = ShellOutcome { output: "error: x\n".into(), exit: ShellExit::Code(2), dropped_bytes: 0 };
    /// let result = ShellResult::from_outcome("call-1", "make", &ran);
    /// assert_eq!((result.exit, result.output), (ExitStatus::Code(2), "error: x\n"));
    /// assert_eq!(result.full_output_log, None);
    /// ```
    pub fn from_outcome(
        call_id: &'a str,
        command: &'a str,
        outcome: &'a ShellOutcome,
    ) -> ShellResult<'a> {
        ShellResult {
            call_id,
            command,
            exit: ExitStatus::from(outcome.exit),
            output: &outcome.output,
            full_output_log: None,
        }
    }
}

/// Anything the reducer can take a candidate from: a [`ShellResult`], or a host adapter's
/// own result type ([`crate::pi::ToolResultView`]).
pub trait CandidateInput {
    /// The host's id for the call, for the journal.
    fn call_id(&self) -> &str;
    /// Picks out a candidate under `policy`, or says why this result is not one. No reason
    /// returned here is journaled.
    fn select(&self, policy: &Policy) -> Result<Candidate, Fallback>;
}

impl CandidateInput for ShellResult<'_> {
    fn call_id(&self) -> &str {
        self.call_id
    }

    fn select(&self, policy: &Policy) -> Result<Candidate, Fallback> {
        if self.command.trim().is_empty() {
            return Err(Fallback::new(ReasonCode::NoCommand));
        }
        if !policy.commands.matches(self.command) {
            return Err(Fallback::new(ReasonCode::NotDiagnosticCommand));
        }
        let is_error = !self.exit.is_success();
        Ok(Candidate {
            tool_call_id: self.call_id.to_owned(),
            command: self.command.to_owned(),
            is_error,
            exit_code: self.exit.code(),
            exit_signal: ExitSignal::of_error_flag(is_error),
            shape: CandidateShape::Output,
            inline_log: self.output.to_owned(),
            full_output_log: self.full_output_log.map(Utf8Path::to_path_buf),
            content: vec![ContentBlock::text(self.output)],
            details: None,
            readback_tool: policy.shell_tool.clone(),
        })
    }
}

/// Where the log sits in the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CandidateShape {
    /// A [`ShellResult`]: the output is the log, and a receipt replaces it all.
    Output,
    /// A Pi bash result: the text of every block is the log, and a receipt replaces it all;
    /// a failed command's trailing status line is kept after the receipt.
    Bash,
    /// A Pi fused edit/write result: only the command output after the marker is the log.
    Fused {
        /// Index of the content block holding the marker.
        block: usize,
        /// The marker found first.
        marker: ThenRunMarker,
        /// That block's text up to and including the marker (the mutation's text stays).
        head: String,
        /// The line breaks between the marker and the log (`\n` when there were none).
        separator: String,
    },
}

/// A result whose log may be reduced.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The call's id.
    pub tool_call_id: String,
    /// The build or test command that produced the log.
    pub command: String,
    /// Whether the command failed (Pi: the result's `isError` flag).
    pub is_error: bool,
    /// The exit code, if the result had one.
    pub exit_code: Option<i32>,
    /// What the result says about how the command ended.
    pub exit_signal: ExitSignal,
    /// Where the log sits.
    pub shape: CandidateShape,
    /// The log as the result shows it (for Pi, trailing status line included; for a fused
    /// result only the command output after the marker and its separator).
    pub inline_log: String,
    /// The file the host trusts to hold the whole log, read in place of `inline_log`.
    pub full_output_log: Option<Utf8PathBuf>,
    /// The result's content, for the projection.
    pub content: Vec<ContentBlock>,
    /// The result's details, for the projection.
    pub details: Option<Value>,
    /// The model-facing shell tool the receipt names for reading the archive back.
    pub readback_tool: String,
}

impl Candidate {
    /// The inline log without a trailing runtime status line, and that line: for a failed
    /// Pi result (a [`CandidateShape::Bash`] or [`CandidateShape::Fused`] one), the line Pi
    /// appended ([`split_status_line`]); a [`ShellResult`]'s output has none.
    pub fn split_inline_log(&self) -> (&str, Option<&str>) {
        match self.shape {
            CandidateShape::Output => (&self.inline_log, None),
            CandidateShape::Bash | CandidateShape::Fused { .. } if self.is_error => {
                split_status_line(&self.inline_log)
            }
            CandidateShape::Bash | CandidateShape::Fused { .. } => (&self.inline_log, None),
        }
    }
}

use camino::Utf8PathBuf;
use serde::{Deserialize, Serialize};

/// Runs a shell command the way the host's own shell tool does.
pub trait Shell {
    /// Runs `request.command` in `request.cwd` and waits for it to end.
    fn run(&self, request: &ShellRequest) -> Result<ShellOutcome, ShellError>;
}

/// A command to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShellRequest {
    /// The command line, as the user's shell reads it.
    pub command: String,
    /// Working directory.
    pub cwd: Utf8PathBuf,
    /// Stop the command after this many seconds; `None` for the host's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
}

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShellOutcome {
    /// Combined standard output and error, as the host presents it (possibly truncated).
    pub output: String,
    /// How the command ended.
    pub exit: ShellExit,
}

/// How a command ended.
///
/// Serializes as `{"kind":"code","code":0}`, `{"kind":"noCode"}`,
/// `{"kind":"timedOut","afterSeconds":30}` or `{"kind":"aborted"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "ShellExitRepr", into = "ShellExitRepr")]
pub enum ShellExit {
    /// It exited with this status code.
    Code(i32),
    /// It ended without a status code (killed by a signal).
    NoCode,
    /// It was stopped when the timeout expired.
    TimedOut {
        /// The timeout that expired.
        after_seconds: u32,
    },
    /// It was stopped because the user aborted the turn.
    Aborted,
}

/// The serialized form of [`ShellExit`]: internal tagging cannot hold a bare integer.
#[derive(Clone, Copy, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum ShellExitRepr {
    Code {
        code: i32,
    },
    NoCode,
    TimedOut {
        #[serde(rename = "afterSeconds")]
        after_seconds: u32,
    },
    Aborted,
}

impl From<ShellExitRepr> for ShellExit {
    fn from(repr: ShellExitRepr) -> Self {
        match repr {
            ShellExitRepr::Code { code } => ShellExit::Code(code),
            ShellExitRepr::NoCode => ShellExit::NoCode,
            ShellExitRepr::TimedOut { after_seconds } => ShellExit::TimedOut { after_seconds },
            ShellExitRepr::Aborted => ShellExit::Aborted,
        }
    }
}

impl From<ShellExit> for ShellExitRepr {
    fn from(exit: ShellExit) -> Self {
        match exit {
            ShellExit::Code(code) => ShellExitRepr::Code { code },
            ShellExit::NoCode => ShellExitRepr::NoCode,
            ShellExit::TimedOut { after_seconds } => ShellExitRepr::TimedOut { after_seconds },
            ShellExit::Aborted => ShellExitRepr::Aborted,
        }
    }
}

impl ShellExit {
    /// Whether the command exited with status 0.
    pub fn is_success(self) -> bool {
        self == ShellExit::Code(0)
    }
}

/// A command that could not be run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    /// The shell could not be started.
    #[error("shell could not be started: {message}")]
    Unavailable {
        /// The host's description of the failure.
        message: String,
    },
    /// The host failed while running the command.
    #[error("shell command failed to run: {message}")]
    Failed {
        /// The host's description of the failure.
        message: String,
    },
}

use std::time::Duration;

use camino::Utf8PathBuf;
use serde::{Deserialize, Serialize};

/// Runs a shell command the way the host's own shell tool does.
pub trait Shell {
    /// Runs `request.command` in `request.cwd` and waits for it to end.
    fn run(&self, request: &ShellRequest) -> Result<ShellOutcome, ShellError>;
}

/// A command to run.
///
/// Serializes as `{"command":"cargo test","cwd":"/work/app","timeoutMs":30000}`; the
/// timeout is a whole number of milliseconds (a finer one is cut to the millisecond) and
/// is left out when `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShellRequest {
    /// The command line, as the user's shell reads it.
    pub command: String,
    /// Working directory.
    pub cwd: Utf8PathBuf,
    /// Stop the command once it has run this long; `None` for the host's default.
    #[serde(
        default,
        rename = "timeoutMs",
        skip_serializing_if = "Option::is_none",
        with = "super::millis::optional"
    )]
    pub timeout: Option<Duration>,
}

impl ShellRequest {
    /// `command` in `cwd`, with the host's default timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sol_core::ShellRequest;
    ///
    /// let request = ShellRequest::new("cargo test", "/work/app").with_timeout(Duration::from_secs(60));
    /// assert_eq!((request.command.as_str(), request.cwd.as_str()), ("cargo test", "/work/app"));
    /// assert_eq!(request.timeout, Some(Duration::from_secs(60)));
    /// ```
    pub fn new(command: impl Into<String>, cwd: impl Into<Utf8PathBuf>) -> ShellRequest {
        ShellRequest {
            command: command.into(),
            cwd: cwd.into(),
            timeout: None,
        }
    }

    /// The same request, stopped once it has run for `timeout`.
    #[must_use]
    pub fn with_timeout(self, timeout: Duration) -> ShellRequest {
        ShellRequest {
            timeout: Some(timeout),
            ..self
        }
    }
}

/// What a command did.
///
/// Serializes as `{"output":"...","exit":{...},"droppedBytes":0}`; `droppedBytes` may be
/// absent when read (it is then 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShellOutcome {
    /// Combined standard output and error, as the host presents it: when the command
    /// printed more than the host keeps, the end of it.
    pub output: String,
    /// How the command ended.
    pub exit: ShellExit,
    /// How many bytes the command printed before the part in `output`, dropped to respect
    /// the host's output limit; 0 when `output` is all of it.
    #[serde(default)]
    pub dropped_bytes: u64,
}

/// How a command ended.
///
/// Serializes as `{"kind":"code","code":0}`, `{"kind":"noCode"}`,
/// `{"kind":"timedOut","afterMs":30000}` or `{"kind":"aborted"}` (the timeout in whole
/// milliseconds).
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
        after: Duration,
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
        #[serde(rename = "afterMs")]
        after_ms: u64,
    },
    Aborted,
}

impl From<ShellExitRepr> for ShellExit {
    fn from(repr: ShellExitRepr) -> Self {
        match repr {
            ShellExitRepr::Code { code } => ShellExit::Code(code),
            ShellExitRepr::NoCode => ShellExit::NoCode,
            ShellExitRepr::TimedOut { after_ms } => ShellExit::TimedOut {
                after: Duration::from_millis(after_ms),
            },
            ShellExitRepr::Aborted => ShellExit::Aborted,
        }
    }
}

impl From<ShellExit> for ShellExitRepr {
    fn from(exit: ShellExit) -> Self {
        match exit {
            ShellExit::Code(code) => ShellExitRepr::Code { code },
            ShellExit::NoCode => ShellExitRepr::NoCode,
            ShellExit::TimedOut { after } => ShellExitRepr::TimedOut {
                after_ms: super::millis::millis(after),
            },
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

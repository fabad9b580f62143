//! The optional `then_run` argument of a fused `edit` or `write`.
//!
//! The host validates `then_run` before it touches the file, so a malformed argument
//! rejects the whole tool call with nothing changed. Every error message says so, because
//! the model reads it as the tool result and must know it can simply retry.
//!
//! ```
//! use std::time::Duration;
//! use serde_json::json;
//! use sol_fusion::then_run::{parse_then_run, ThenRun};
//!
//! let value = json!({"command": "npm test", "timeout": 90});
//! assert_eq!(
//!     parse_then_run(Some(&value))?,
//!     Some(ThenRun {
//!         command: "npm test".to_owned(),
//!         timeout: Some(Duration::from_secs(90)),
//!         timeout_seconds: Some(90.0),
//!     })
//! );
//! assert_eq!(parse_then_run(None)?, None);
//!
//! let error = parse_then_run(Some(&json!({"command": "  "}))).unwrap_err();
//! assert_eq!(error.code(), "empty_command");
//! # Ok::<(), sol_fusion::then_run::ThenRunError>(())
//! ```

use std::time::Duration;

use serde_json::Value;

/// The key of the follow-up command inside `then_run`.
pub const COMMAND_KEY: &str = "command";
/// The key of the optional timeout, in seconds, inside `then_run`.
pub const TIMEOUT_KEY: &str = "timeout";

/// The longest timer Pi's bash tool accepts, in milliseconds: Node's `setTimeout` holds at
/// most 2^31 - 1 ms and fires at once for anything longer, so Pi refuses a larger timeout
/// when the command starts, which for a fused call is after the file was changed.
pub const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;
/// [`MAX_TIMEOUT_MS`] in seconds, as the error text gives it (about 24.8 days).
pub const MAX_TIMEOUT_SECONDS: f64 = MAX_TIMEOUT_MS / 1000.0;

/// The longest `then_run.command` accepted, in UTF-8 bytes. On Linux the shell receives the
/// command as one argument (`bash -c <command>`), and one argument may hold at most
/// 131,072 bytes with its terminating NUL (`MAX_ARG_STRLEN`); Pi also puts the
/// `shellCommandPrefix` setting in front of it. Half of that limit leaves the prefix room.
pub const MAX_COMMAND_BYTES: usize = 65_536;

/// A validated `then_run` request.
#[derive(Debug, Clone, PartialEq)]
pub struct ThenRun {
    /// The bash command, exactly as the model wrote it (not trimmed).
    pub command: String,
    /// The timeout, greater than zero and at most [`MAX_TIMEOUT_SECONDS`]; `None` means no
    /// timeout. This is the value for a Rust host's shell: [`timeout_duration`] of
    /// [`ThenRun::timeout_seconds`].
    pub timeout: Option<Duration>,
    /// The same timeout as the number of seconds the model wrote, unrounded. A host whose
    /// shell takes seconds as a floating-point number (Pi's bash) passes this one on, so the
    /// exact number reaches it even where a [`Duration`] would round it.
    pub timeout_seconds: Option<f64>,
}

/// The [`Duration`] of a timeout that [`parse_then_run`] accepted (`seconds` greater than 0
/// and at most [`MAX_TIMEOUT_SECONDS`]), to the nearest nanosecond and at least one
/// nanosecond, so that a timeout never becomes zero. Anything else (not finite, not greater
/// than 0, beyond the maximum) gives `None`.
///
/// ```
/// use std::time::Duration;
/// use sol_fusion::then_run::timeout_duration;
///
/// assert_eq!(timeout_duration(0.1), Some(Duration::from_millis(100)));
/// assert_eq!(timeout_duration(1e-12), Some(Duration::from_nanos(1)));
/// assert_eq!(timeout_duration(0.0), None);
/// ```
pub fn timeout_duration(seconds: f64) -> Option<Duration> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds * 1000.0 <= MAX_TIMEOUT_MS) {
        return None;
    }
    Some(Duration::from_secs_f64(seconds).max(Duration::from_nanos(1)))
}

/// Why a `then_run` argument was rejected. Every message ends by saying that the file was
/// not modified.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThenRunError {
    /// `then_run` is present but not an object (and not null).
    #[error(
        "then_run must be an object like {{\"command\": \"npm test\", \"timeout\": 60}}, got {found}; the file was not modified"
    )]
    NotAnObject {
        /// The JSON kind that was given, such as `a string`.
        found: String,
    },
    /// `then_run` has a key other than `command` and `timeout` (the first in document order).
    #[error(
        "then_run has an unknown key {key:?}; only \"command\" and \"timeout\" are allowed; the file was not modified"
    )]
    UnknownKey {
        /// The unknown key.
        key: String,
    },
    /// `then_run.command` is missing.
    #[error(
        "then_run.command is missing; it must be a non-empty string with the bash command to run; the file was not modified"
    )]
    MissingCommand,
    /// `then_run.command` is not a string.
    #[error("then_run.command must be a non-empty string, got {found}; the file was not modified")]
    CommandNotString {
        /// The JSON kind that was given, such as `a number`.
        found: String,
    },
    /// `then_run.command` is empty or only white space.
    #[error(
        "then_run.command must be a non-empty string, got an empty or blank string; the file was not modified"
    )]
    EmptyCommand,
    /// `then_run.command` is longer than [`MAX_COMMAND_BYTES`].
    #[error(
        "then_run.command is {bytes} bytes long, more than the {MAX_COMMAND_BYTES} bytes a shell command may have here; put a long script in a file and run that file; the file was not modified"
    )]
    CommandTooLong {
        /// The command's length in UTF-8 bytes.
        bytes: usize,
    },
    /// `then_run.command` contains U+0000, which no process argument can carry.
    #[error(
        "then_run.command contains a NUL character (U+0000), which a shell command cannot carry; the file was not modified"
    )]
    CommandHasNul,
    /// `then_run.timeout` is present but not a finite number greater than 0.
    #[error(
        "then_run.timeout must be a number of seconds greater than 0, or left out for no timeout; got {found}; the file was not modified"
    )]
    InvalidTimeout {
        /// The value that was given: the number itself, or its JSON kind.
        found: String,
    },
    /// `then_run.timeout` is longer than Pi's bash tool accepts ([`MAX_TIMEOUT_SECONDS`]).
    #[error(
        "then_run.timeout must be at most {MAX_TIMEOUT_SECONDS} seconds (about 24.8 days), the longest timer Pi's bash tool accepts, or left out for no timeout; got {found}; the file was not modified"
    )]
    TimeoutTooLong {
        /// The number that was given.
        found: String,
    },
}

impl ThenRunError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            ThenRunError::NotAnObject { .. } => "not_an_object",
            ThenRunError::UnknownKey { .. } => "unknown_key",
            ThenRunError::MissingCommand => "missing_command",
            ThenRunError::CommandNotString { .. } => "command_not_string",
            ThenRunError::EmptyCommand => "empty_command",
            ThenRunError::CommandTooLong { .. } => "command_too_long",
            ThenRunError::CommandHasNul => "command_has_nul",
            ThenRunError::InvalidTimeout { .. } => "invalid_timeout",
            ThenRunError::TimeoutTooLong { .. } => "timeout_too_long",
        }
    }
}

/// Validates the `then_run` argument of a tool call.
///
/// `None` (the key is absent) and JSON `null` mean no follow-up: `Ok(None)`. Otherwise the
/// value must be an object with a `command` string that is not blank, at most
/// [`MAX_COMMAND_BYTES`] long and free of NUL characters and, optionally, a `timeout` that is
/// a number greater than 0 and at most [`MAX_TIMEOUT_SECONDS`]. These are the commands Pi's
/// bash tool can start, so a call that passes is not refused by bash after its file was
/// changed. The checks run in this order: the kind of value, unknown keys, `command`
/// (present, a string, not blank, length, NUL), `timeout` (a number, greater than 0, at most
/// the maximum).
///
/// # Errors
///
/// A [`ThenRunError`] describing the first problem found.
pub fn parse_then_run(value: Option<&Value>) -> Result<Option<ThenRun>, ThenRunError> {
    let object = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(object)) => object,
        Some(other) => {
            return Err(ThenRunError::NotAnObject {
                found: kind(other).to_owned(),
            });
        }
    };
    if let Some(key) = object
        .keys()
        .find(|key| *key != COMMAND_KEY && *key != TIMEOUT_KEY)
    {
        return Err(ThenRunError::UnknownKey { key: key.clone() });
    }
    let command = match object.get(COMMAND_KEY) {
        None => return Err(ThenRunError::MissingCommand),
        Some(Value::String(command)) if is_blank(command) => {
            return Err(ThenRunError::EmptyCommand);
        }
        Some(Value::String(command)) if command.len() > MAX_COMMAND_BYTES => {
            return Err(ThenRunError::CommandTooLong {
                bytes: command.len(),
            });
        }
        Some(Value::String(command)) if command.contains('\0') => {
            return Err(ThenRunError::CommandHasNul);
        }
        Some(Value::String(command)) => command.clone(),
        Some(other) => {
            return Err(ThenRunError::CommandNotString {
                found: kind(other).to_owned(),
            });
        }
    };
    let timeout_seconds = match object.get(TIMEOUT_KEY) {
        None => None,
        Some(Value::Number(number)) => match number.as_f64() {
            // Pi compares `seconds * 1000` with its limit; the same f64 product here.
            Some(seconds) if seconds.is_finite() && seconds > 0.0 => {
                if seconds * 1000.0 > MAX_TIMEOUT_MS {
                    return Err(ThenRunError::TimeoutTooLong {
                        found: number.to_string(),
                    });
                }
                Some(seconds)
            }
            _ => {
                return Err(ThenRunError::InvalidTimeout {
                    found: number.to_string(),
                });
            }
        },
        Some(other) => {
            return Err(ThenRunError::InvalidTimeout {
                found: kind(other).to_owned(),
            });
        }
    };
    Ok(Some(ThenRun {
        command,
        timeout: timeout_seconds.and_then(timeout_duration),
        timeout_seconds,
    }))
}

/// Blank as JavaScript's `trim()` sees it: white space and the byte-order mark.
fn is_blank(text: &str) -> bool {
    text.chars().all(|c| c.is_whitespace() || c == '\u{FEFF}')
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

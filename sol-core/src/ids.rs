//! Identifiers that come from Pi.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A Pi session id that is safe to use as one directory name.
///
/// Safe means: ASCII letters, digits, `.`, `_` and `-` only, starting with a letter or a
/// digit (the pattern `^[a-z0-9][a-z0-9._-]*$`, case-insensitive). So it is never empty,
/// never `.` or `..`, and never contains a separator.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

impl SessionId {
    /// Accepts `id` if it is safe, see [`SessionId`].
    pub fn parse(id: &str) -> Result<SessionId, SessionIdError> {
        if is_safe_session_id(id) {
            Ok(SessionId(id.to_owned()))
        } else {
            Err(SessionIdError { id: id.to_owned() })
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn is_safe_session_id(id: &str) -> bool {
    let mut bytes = id.bytes();
    match bytes.next() {
        Some(first) if first.is_ascii_alphanumeric() => {
            bytes.all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
        }
        _ => false,
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SessionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SessionId {
    type Error = SessionIdError;

    fn try_from(id: String) -> Result<Self, Self::Error> {
        if is_safe_session_id(&id) {
            Ok(SessionId(id))
        } else {
            Err(SessionIdError { id })
        }
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> String {
        id.0
    }
}

/// How many characters of a rejected id an error message shows.
const SHOWN_ID_CHARS: usize = 80;

/// A session id that is not safe to use as a directory name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SessionIdError {
    id: String,
}

impl SessionIdError {
    /// The rejected id, in full.
    pub fn rejected_id(&self) -> &str {
        &self.id
    }
}

impl fmt::Display for SessionIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug formatting escapes quotes and control characters, so the message stays one
        // line whatever the id holds; a very long id is cut so the message stays readable.
        let total = self.id.chars().count();
        if total <= SHOWN_ID_CHARS {
            write!(f, "SoL-Pi requires a safe Pi session id, got {:?}", self.id)
        } else {
            let shown: String = self.id.chars().take(SHOWN_ID_CHARS).collect();
            write!(
                f,
                "SoL-Pi requires a safe Pi session id, got {shown:?}... ({total} characters)"
            )
        }
    }
}

/// The id Pi gives a tool call; links a tool result to the call that produced it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolCallId(pub String);

impl ToolCallId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolCallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ToolCallId {
    fn from(id: &str) -> Self {
        ToolCallId(id.to_owned())
    }
}

impl From<String> for ToolCallId {
    fn from(id: String) -> Self {
        ToolCallId(id)
    }
}

impl AsRef<str> for ToolCallId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

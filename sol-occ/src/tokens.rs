//! Token estimates of Pi messages, and the identity that matches a message across two
//! views of the same conversation.
//!
//! Pi estimates a message at `ceil(chars / 4)`, where `chars` is the JavaScript string
//! length (UTF-16 code units) of its text, thinking and tool-call parts, 4,800 characters
//! per image. That rule lives with the message type
//! ([`sol_core::message::AgentMessage::estimated_tokens`]); [`estimate_message_tokens`]
//! applies it, so that the cut point this crate predicts is the one Pi chooses. The system
//! prompt and compaction summaries are estimated from their UTF-8 size instead
//! ([`estimate_utf8_tokens`]).
//!
//! ```
//! use serde_json::json;
//! use sol_core::message::AgentMessage;
//! use sol_occ::tokens::{estimate_message_tokens, estimate_utf8_tokens, MessageRole, SizedMessage};
//!
//! let message = AgentMessage::from_value(
//!     json!({"role": "user", "content": "Fix the failing test", "timestamp": 7}),
//! );
//! assert_eq!(estimate_message_tokens(&message), 5); // 20 characters
//! let sized = SizedMessage::from_message(&message);
//! assert_eq!(sized.role, MessageRole::User);
//! assert_eq!(sized.key, "user@7");
//! assert_eq!(estimate_utf8_tokens("héllo"), 2); // 6 bytes
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sol_core::message::AgentMessage;
pub use sol_core::message::{IMAGE_CHARS, content_key, js_length, tokens_from_chars};

/// `ceil(UTF-8 bytes / 4)`: the estimate for the system prompt and for summaries.
pub fn estimate_utf8_tokens(text: &str) -> u64 {
    tokens_from_chars(text.len() as u64)
}

/// The role of a message, as far as cut points and turns are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MessageRole {
    /// A prompt.
    User,
    /// A model response.
    Assistant,
    /// A tool result; never a cut point, since it must follow its call.
    ToolResult,
    /// A system message (Pi 1.x); prompt state, never summarized.
    System,
    /// A custom message sent by an extension.
    Custom,
    /// A `!command` run by the user.
    BashExecution,
    /// The summary of an abandoned branch.
    BranchSummary,
    /// The summary written by a compaction.
    CompactionSummary,
    /// A role this crate does not know; treated like a tool result (no cut point).
    Other,
}

impl MessageRole {
    /// Reads Pi's `role` field.
    pub fn parse(role: &str) -> MessageRole {
        match role {
            "user" => MessageRole::User,
            "assistant" => MessageRole::Assistant,
            "toolResult" => MessageRole::ToolResult,
            "system" => MessageRole::System,
            "custom" => MessageRole::Custom,
            "bashExecution" => MessageRole::BashExecution,
            "branchSummary" => MessageRole::BranchSummary,
            "compactionSummary" => MessageRole::CompactionSummary,
            _ => MessageRole::Other,
        }
    }

    /// Pi's role string; `other` for unknown roles.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
            MessageRole::ToolResult => "toolResult",
            MessageRole::System => "system",
            MessageRole::Custom => "custom",
            MessageRole::BashExecution => "bashExecution",
            MessageRole::BranchSummary => "branchSummary",
            MessageRole::CompactionSummary => "compactionSummary",
            MessageRole::Other => "other",
        }
    }

    /// Whether Pi may keep the context from this message on.
    pub fn is_cut_point(self) -> bool {
        matches!(
            self,
            MessageRole::User
                | MessageRole::Assistant
                | MessageRole::Custom
                | MessageRole::BashExecution
                | MessageRole::BranchSummary
                | MessageRole::CompactionSummary
        )
    }

    /// Whether this message starts a turn (user-like input).
    pub fn starts_turn(self) -> bool {
        self.is_cut_point() && self != MessageRole::Assistant
    }
}

/// A message reduced to what the estimator needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SizedMessage {
    /// Its role.
    pub role: MessageRole,
    /// Pi's estimate of its size.
    pub tokens: u64,
    /// Its identity across views ([`message_key`]). Every message has one: Pi's role and
    /// timestamp, or, for a message without a timestamp, its role and a digest of its
    /// content ([`content_key`]).
    pub key: String,
}

impl SizedMessage {
    /// A message the host sized and identified itself: its role, its size in tokens and
    /// an identity that is the same in every view of the conversation the host hands over
    /// (any stable text the host chose: its own message number, a timestamp, a digest of
    /// the content).
    ///
    /// ```
    /// use sol_occ::tokens::{MessageRole, SizedMessage};
    ///
    /// let message = SizedMessage::new(MessageRole::Assistant, 2_000, "reply-3");
    /// assert_eq!((message.role, message.tokens, message.key.as_str()), (MessageRole::Assistant, 2_000, "reply-3"));
    /// ```
    pub fn new(role: MessageRole, tokens: u64, key: impl Into<String>) -> SizedMessage {
        SizedMessage {
            role,
            tokens,
            key: key.into(),
        }
    }

    /// Sizes and identifies one Pi message (any role).
    pub fn from_message(message: &AgentMessage) -> SizedMessage {
        SizedMessage {
            role: MessageRole::parse(role_of(message)),
            tokens: estimate_message_tokens(message),
            key: message_key(message),
        }
    }

    /// Sizes every message of a list.
    pub fn from_messages(messages: &[AgentMessage]) -> Vec<SizedMessage> {
        messages.iter().map(SizedMessage::from_message).collect()
    }

    /// A message the host already sized: its raw `role` field, Pi's estimate, its raw
    /// `timestamp` field and, for a message without a usable timestamp (a number or a
    /// string), the message itself. The role and the identity are read exactly as
    /// [`SizedMessage::from_message`] reads them from the whole message. A host that hands
    /// over neither gets [`UNIDENTIFIED_KEY`] for the role, which never matches a message of
    /// the other view: such a message is never priced as a saving.
    ///
    /// ```
    /// use serde_json::json;
    /// use sol_core::message::AgentMessage;
    /// use sol_occ::tokens::SizedMessage;
    ///
    /// let message = AgentMessage::from_value(
    ///     json!({"role": "user", "content": "Fix the failing test", "timestamp": 7}),
    /// );
    /// let parts = SizedMessage::from_parts("user", 5, Some(&json!(7)), None);
    /// assert_eq!(parts, SizedMessage::from_message(&message));
    ///
    /// // Without a timestamp the identity comes from the content.
    /// let unstamped = AgentMessage::from_value(json!({"role": "user", "content": "Fix it"}));
    /// let parts = SizedMessage::from_parts("user", 2, None, Some(&unstamped));
    /// assert_eq!(parts, SizedMessage::from_message(&unstamped));
    /// assert!(parts.key.starts_with("user#"));
    /// ```
    pub fn from_parts(
        role: &str,
        tokens: u64,
        timestamp: Option<&Value>,
        message: Option<&AgentMessage>,
    ) -> SizedMessage {
        let key = timestamp
            .and_then(|timestamp| key_of(role, timestamp))
            .or_else(|| message.map(|message| content_key(role, &message.to_value())))
            .unwrap_or_else(|| format!("{role}{UNIDENTIFIED_KEY}"));
        SizedMessage {
            role: MessageRole::parse(role),
            tokens,
            key,
        }
    }
}

fn role_of(message: &AgentMessage) -> &str {
    message.role().unwrap_or("")
}

/// The identity of a message across two views of the conversation (Pi's canonical
/// projection and the copy a `context` handler sees): its role and the timestamp Pi gave it
/// (`user@1733000000000`), or, without a timestamp, its role and a digest of its content
/// ([`content_key`], `user#3f…`).
///
/// Context transformers such as ObservationPack change a message's content but keep these
/// fields, so the key finds the projected version of a stored message. Messages made in the
/// same millisecond share a key and are told apart by their order
/// ([`crate::estimate::ObservedContext`]); the tool-call id is not part of it, because
/// providers reuse and omit those ids. A content key finds a message whose content no
/// transformer changed; a changed one matches nothing and is not priced (never mis-priced).
pub fn message_key(message: &AgentMessage) -> String {
    let role = role_of(message);
    match message.timestamp_text() {
        Some(timestamp) => format!("{role}@{timestamp}"),
        None => content_key(role, &message.to_value()),
    }
}

/// The suffix of the key [`SizedMessage::from_parts`] gives a message it has neither a
/// timestamp nor the content of: no message of the other view has it.
pub const UNIDENTIFIED_KEY: &str = "#unidentified";

fn key_of(role: &str, timestamp: &Value) -> Option<String> {
    let timestamp = match timestamp {
        Value::Number(number) => number.to_string(),
        Value::String(text) => text.clone(),
        _ => return None,
    };
    Some(format!("{role}@{timestamp}"))
}

/// Pi's estimate of a message's size, `ceil(chars / 4)`; 0 for unknown roles.
pub fn estimate_message_tokens(message: &AgentMessage) -> u64 {
    message.estimated_tokens()
}

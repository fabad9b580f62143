//! The messages Pi hands to extensions, as serde types (JSON keys in camelCase).
//!
//! Only what SoL-Pi reads is modelled; every other field is kept in an `extra` map, so
//! serializing a deserialized message gives back the same JSON value. A message whose role
//! SoL-Pi does not model (`custom`, `system`, `bashExecution`, `branchSummary`,
//! `compactionSummary`, or anything newer), or whose shape differs from the model, becomes
//! [`AgentMessage::Other`] with the original value: deserializing an [`AgentMessage`] never
//! fails and never loses data.

mod blocks;
mod codes;
mod identity;
mod size;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

pub use blocks::{AssistantBlock, ContentBlock, UserContent};
pub use codes::{ROLE_CODES, ends_with_prompt, role_of_code};
pub use identity::content_key;
pub use size::{IMAGE_CHARS, js_json_length, js_length, tokens_from_chars, tool_call_tokens};

use crate::ids::ToolCallId;

/// Whether a reply whose `stopReason` is `stop_reason` failed: Pi's `aborted` (the person or
/// an extension stopped it) or `error` (the provider or the connection did). Its usage is not
/// a request that did its work; the savings book, the replay and ObservationPack's learned
/// cache misses all read it through this one rule.
///
/// ```
/// use sol_core::message::reply_failed;
///
/// assert!(reply_failed(Some("aborted")) && reply_failed(Some("error")));
/// assert!(!reply_failed(Some("stop")) && !reply_failed(Some("toolUse")) && !reply_failed(None));
/// ```
pub fn reply_failed(stop_reason: Option<&str>) -> bool {
    matches!(stop_reason, Some("aborted" | "error"))
}

/// The `text` of each `{"type": "text"}` block of a Pi message's or tool result's `content`
/// array, in order, read straight from the JSON (any other block, or a `content` that is not
/// an array, gives nothing).
///
/// ```
/// let result = serde_json::json!({"content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]});
/// assert_eq!(sol_core::message::text_blocks(&result).collect::<Vec<_>>(), ["a", "b"]);
/// ```
pub fn text_blocks(value: &Value) -> impl Iterator<Item = &str> {
    value
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
}

/// Fields of a message or block that SoL-Pi does not model, kept for lossless round trips.
pub type Extra = Map<String, Value>;

/// Any message of a Pi conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    /// `"role": "user"`.
    User(UserMessage),
    /// `"role": "assistant"`.
    Assistant(AssistantMessage),
    /// `"role": "toolResult"`.
    ToolResult(ToolResultMessage),
    /// Any other role, or a known role in a shape this crate does not model, kept verbatim.
    Other(Value),
}

impl AgentMessage {
    /// Interprets a JSON value; falls back to [`AgentMessage::Other`] instead of failing.
    pub fn from_value(value: Value) -> AgentMessage {
        let typed = match value.get("role").and_then(Value::as_str) {
            Some("user") => typed_without(&value, "role").map(AgentMessage::User),
            Some("assistant") => typed_without(&value, "role").map(AgentMessage::Assistant),
            Some("toolResult") => typed_without(&value, "role").map(AgentMessage::ToolResult),
            _ => None,
        };
        typed.unwrap_or(AgentMessage::Other(value))
    }

    /// The JSON form, equal to the value this message was read from.
    pub fn to_value(&self) -> Value {
        // Serializing these types into a `Value` cannot fail: every map key is a string.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The `role` field: `"user"`, `"assistant"`, `"toolResult"`, another role of an
    /// [`AgentMessage::Other`], or `None` when an unmodelled value has no string role.
    pub fn role(&self) -> Option<&str> {
        match self {
            AgentMessage::User(_) => Some("user"),
            AgentMessage::Assistant(_) => Some("assistant"),
            AgentMessage::ToolResult(_) => Some("toolResult"),
            AgentMessage::Other(value) => value.get("role").and_then(Value::as_str),
        }
    }

    /// The tool result, if this is one.
    pub fn as_tool_result(&self) -> Option<&ToolResultMessage> {
        match self {
            AgentMessage::ToolResult(result) => Some(result),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(AgentMessage::from_value)
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "role", rename_all = "camelCase")]
        enum Tagged<'a> {
            User(&'a UserMessage),
            Assistant(&'a AssistantMessage),
            ToolResult(&'a ToolResultMessage),
        }
        match self {
            AgentMessage::User(message) => Tagged::User(message).serialize(serializer),
            AgentMessage::Assistant(message) => Tagged::Assistant(message).serialize(serializer),
            AgentMessage::ToolResult(message) => Tagged::ToolResult(message).serialize(serializer),
            AgentMessage::Other(value) => value.serialize(serializer),
        }
    }
}

/// Types whose unmodelled fields land in an [`Extra`] map.
pub(crate) trait HasExtra {
    fn extra_mut(&mut self) -> &mut Extra;
}

/// Deserializes `value` as `T` and drops `tag` (the enum tag that selected `T`) from the
/// extra fields, since the enclosing enum writes it back. `None` if the shape differs.
pub(crate) fn typed_without<'a, T>(value: &'a Value, tag: &str) -> Option<T>
where
    T: Deserialize<'a> + HasExtra,
{
    let mut typed = T::deserialize(value).ok()?;
    typed.extra_mut().remove(tag);
    Some(typed)
}

/// For optional fields: absent means `None`, but an explicit `null` is rejected, so that
/// such a message stays [`AgentMessage::Other`] and round-trips exactly.
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Like [`present`] for JSON values, where `null` is a value like any other.
pub(crate) fn present_value<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A prompt typed by the user (or sent on the user's behalf).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// A plain string or text and image blocks.
    pub content: UserContent,
    /// Unix time in milliseconds.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

impl HasExtra for UserMessage {
    fn extra_mut(&mut self) -> &mut Extra {
        &mut self.extra
    }
}

/// A model response: text, thinking and tool calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// The response's blocks, in order.
    pub content: Vec<AssistantBlock>,
    /// Pi's stop reason: `stop`, `length`, `toolUse`, `error`, `aborted`, ...
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub stop_reason: Option<String>,
    /// Provider id that produced the response.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub provider: Option<String>,
    /// Model id that produced the response.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub model: Option<String>,
    /// Unix time in milliseconds when the request started.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    /// Fields not modelled here (`api`, `usage`, `errorMessage`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl HasExtra for AssistantMessage {
    fn extra_mut(&mut self) -> &mut Extra {
        &mut self.extra
    }
}

impl AssistantMessage {
    /// The tool calls of this response, in order, as `(id, name, arguments)`.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&ToolCallId, &str, &Value)> {
        self.content.iter().filter_map(|block| match block {
            AssistantBlock::ToolCall {
                id,
                name,
                arguments,
                ..
            } => Some((id, name.as_str(), arguments)),
            _ => None,
        })
    }
}

/// The result of one tool call, as the model will see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call this result answers.
    pub tool_call_id: ToolCallId,
    /// The tool's name.
    pub tool_name: String,
    /// Text and image blocks.
    pub content: Vec<ContentBlock>,
    /// Whether the tool reported a failure.
    pub is_error: bool,
    /// Tool-specific structured data (not sent to the model); `Some(Value::Null)` for an
    /// explicit `null`.
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<Value>,
    /// Unix time in milliseconds.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    /// Fields not modelled here (`usage`, `durationMs`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl HasExtra for ToolResultMessage {
    fn extra_mut(&mut self) -> &mut Extra {
        &mut self.extra
    }
}

impl ToolResultMessage {
    /// The text blocks joined with `\n`, if the content is non-empty and all text.
    ///
    /// `None` as soon as one block is an image: such results are passed through untouched.
    pub fn text_only(&self) -> Option<String> {
        if self.content.is_empty() {
            return None;
        }
        let mut parts = Vec::with_capacity(self.content.len());
        for block in &self.content {
            parts.push(block.as_text()?);
        }
        Some(parts.join("\n"))
    }

    /// UTF-8 length of the text blocks joined with `\n`, ignoring images; equals
    /// `text_only().map(|text| text.len())` for text-only content, without allocating.
    pub fn text_len_bytes(&self) -> usize {
        let texts = self.content.iter().filter_map(ContentBlock::as_text);
        let (count, bytes) = texts.fold((0usize, 0usize), |(count, bytes), text| {
            (count + 1, bytes + text.len())
        });
        bytes + count.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn explicit_null_timestamp_keeps_the_message_verbatim() {
        let value = json!({"role": "user", "content": "hi", "timestamp": null});
        let message = AgentMessage::from_value(value.clone());
        assert!(matches!(message, AgentMessage::Other(_)));
        assert_eq!(message.to_value(), value);
    }

    #[test]
    fn text_len_matches_text_only() {
        let result = ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "bash".to_owned(),
            content: vec![ContentBlock::text("héllo"), ContentBlock::text("")],
            is_error: false,
            details: None,
            timestamp: None,
            extra: Extra::new(),
        };
        assert_eq!(result.text_only().as_deref(), Some("héllo\n"));
        assert_eq!(result.text_len_bytes(), "héllo\n".len());
    }
}

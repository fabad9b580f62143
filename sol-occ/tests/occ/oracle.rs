//! The hand-parsed readers of Pi's JSON that sol-occ used before the typed vocabulary of
//! `sol_core::session` and `sol_core::message` (kept verbatim, as free functions): the
//! oracle the typed readers are compared with in `vocab_props.rs`.

#![allow(dead_code)]

use serde_json::{Value, json};
use sol_occ::estimate::{EntryKind, NativeProjection, ProjectedEntry, iso_to_epoch_ms};
use sol_occ::state::{OccState, STATE_ENTRY_TYPE};
use sol_occ::tokens::{
    IMAGE_CHARS, MessageRole, SizedMessage, content_key, js_length, tokens_from_chars,
};

/// `SizedMessage::from_message` over a JSON message.
pub(crate) fn sized(message: &Value) -> SizedMessage {
    SizedMessage {
        role: MessageRole::parse(role_of(message)),
        tokens: estimate_message_tokens(message),
        key: message_key(message),
    }
}

fn sized_all(messages: &[Value]) -> Vec<SizedMessage> {
    messages.iter().map(sized).collect()
}

/// Reads one entry of Pi's `buildSessionProjection()`: `{sourceEntry, messages}`.
pub(crate) fn from_projection_entry(entry: &Value) -> ProjectedEntry {
    let source = entry.get("sourceEntry").unwrap_or(&Value::Null);
    let messages = entry
        .get("messages")
        .and_then(Value::as_array)
        .map(|messages| sized_all(messages))
        .unwrap_or_default();
    ProjectedEntry {
        id: source.get("id").and_then(Value::as_str).map(str::to_owned),
        kind: EntryKind::parse(source.get("type").and_then(Value::as_str).unwrap_or("")),
        messages,
    }
}

/// Reads one raw session entry: a `message` entry contributes its message,
/// `custom_message` and `branch_summary` entries the message Pi synthesizes from them,
/// a `compaction` entry (as a retained or older entry) and any other entry nothing.
pub(crate) fn from_session_entry(entry: &Value) -> ProjectedEntry {
    let kind_text = entry.get("type").and_then(Value::as_str).unwrap_or("");
    let message = match kind_text {
        "message" => entry.get("message").cloned(),
        "custom_message" => Some(json!({
            "role": "custom",
            "customType": entry.get("customType").cloned().unwrap_or(Value::Null),
            "content": entry.get("content").cloned().unwrap_or(Value::Null),
            "timestamp": entry_timestamp(entry),
        })),
        "branch_summary" => Some(json!({
            "role": "branchSummary",
            "summary": entry.get("summary").cloned().unwrap_or(Value::Null),
            "timestamp": entry_timestamp(entry),
        })),
        _ => None,
    };
    ProjectedEntry {
        id: id_of(entry),
        kind: EntryKind::parse(kind_text),
        messages: message.iter().map(sized).collect(),
    }
}

/// Reads the value of Pi 1.x `buildSessionProjection()` (`{entries: [{sourceEntry,
/// messages}], ...}`); `leaf_is_compaction` comes from the session's leaf entry.
pub(crate) fn from_session_projection(
    projection: &Value,
    leaf_is_compaction: bool,
) -> NativeProjection {
    let entries = projection
        .get("entries")
        .and_then(Value::as_array)
        .map(|entries| entries.iter().map(from_projection_entry).collect())
        .unwrap_or_default();
    NativeProjection {
        entries,
        leaf_is_compaction,
    }
}

/// Builds the projection from raw branch entries (root first), as Pi 0.84.2 sees them:
/// the newest compaction's summary, the entries it retained (from its
/// `firstKeptEntryId`), then everything after it. Message entries contribute their
/// message, `custom_message` and `branch_summary` entries their synthesized message,
/// other entries nothing.
pub(crate) fn from_branch(branch: &[Value]) -> NativeProjection {
    fn entry_type(entry: &Value) -> &str {
        entry.get("type").and_then(Value::as_str).unwrap_or("")
    }
    let last_compaction = branch
        .iter()
        .rposition(|entry| entry_type(entry) == "compaction");
    let mut entries = Vec::with_capacity(branch.len() + 1);
    let tail_start = match last_compaction {
        None => 0,
        Some(index) => {
            let compaction = &branch[index];
            entries.push(ProjectedEntry {
                id: id_of(compaction),
                kind: EntryKind::Compaction,
                messages: vec![sized(&summary_message(compaction))],
            });
            let first_kept = compaction.get("firstKeptEntryId").and_then(Value::as_str);
            if let Some(kept) = first_kept.and_then(|id| {
                branch[..index]
                    .iter()
                    .position(|e| id_of(e).as_deref() == Some(id))
            }) {
                entries.extend(branch[kept..index].iter().map(from_session_entry));
            }
            index + 1
        }
    };
    entries.extend(branch[tail_start..].iter().map(from_session_entry));
    NativeProjection {
        entries,
        leaf_is_compaction: branch
            .last()
            .is_some_and(|entry| entry_type(entry) == "compaction"),
    }
}

fn id_of(entry: &Value) -> Option<String> {
    entry.get("id").and_then(Value::as_str).map(str::to_owned)
}

/// Milliseconds since the Unix epoch of an entry's ISO-8601 timestamp, or the number itself.
fn entry_timestamp(entry: &Value) -> Value {
    match entry.get("timestamp") {
        Some(Value::String(text)) => {
            iso_to_epoch_ms(text).map_or_else(|| Value::String(text.clone()), Value::from)
        }
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

fn summary_message(compaction: &Value) -> Value {
    json!({
        "role": "compactionSummary",
        "summary": compaction.get("summary").cloned().unwrap_or(Value::Null),
        "timestamp": entry_timestamp(compaction),
    })
}

fn role_of(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

/// The identity of a message across two views of the conversation (Pi's canonical
/// projection and the copy a `context` handler sees): its role and the timestamp Pi gave it.
/// Without a timestamp (added with the typed readers): the role and the content digest.
///
/// Context transformers such as ObservationPack change a message's content but keep these
/// fields, so the key finds the projected version of a stored message. Messages made in the
/// same millisecond share a key and are told apart by their order
/// ([`crate::estimate::ObservedContext`]); the tool-call id is not part of it, because
/// providers reuse and omit those ids.
pub(crate) fn message_key(message: &Value) -> String {
    message
        .get("timestamp")
        .and_then(|timestamp| key_of(role_of(message), timestamp))
        .unwrap_or_else(|| content_key(role_of(message), message))
}

fn key_of(role: &str, timestamp: &Value) -> Option<String> {
    let timestamp = match timestamp {
        Value::Number(number) => number.to_string(),
        Value::String(text) => text.clone(),
        _ => return None,
    };
    Some(format!("{role}@{timestamp}"))
}

/// Pi's estimate of a message's size, `ceil(chars / 4)`; 0 for unknown roles.
pub(crate) fn estimate_message_tokens(message: &Value) -> u64 {
    let chars = match role_of(message) {
        "user" | "custom" | "toolResult" => content_chars(message.get("content")),
        "assistant" => assistant_chars(message),
        "system" => system_chars(message),
        "bashExecution" => string_field(message, "command") + string_field(message, "output"),
        "branchSummary" | "compactionSummary" => string_field(message, "summary"),
        _ => 0,
    };
    tokens_from_chars(chars)
}

fn string_field(message: &Value, key: &str) -> u64 {
    message
        .get(key)
        .and_then(Value::as_str)
        .map_or(0, js_length)
}

/// Text blocks and images of a `content` that is a string or a block list.
fn content_chars(content: Option<&Value>) -> u64 {
    match content {
        Some(Value::String(text)) => js_length(text),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|block| match block.get("type").and_then(Value::as_str) {
                Some("text") => string_field(block, "text"),
                Some("image") => IMAGE_CHARS,
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

fn assistant_chars(message: &Value) -> u64 {
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        return 0;
    };
    blocks
        .iter()
        .map(|block| match block.get("type").and_then(Value::as_str) {
            Some("text") => string_field(block, "text"),
            Some("thinking") => string_field(block, "thinking"),
            Some("toolCall") => {
                let arguments = block.get("arguments").unwrap_or(&Value::Null);
                // JSON.stringify of the arguments (numbers as JavaScript writes them, which
                // sol-core's own test checks against Node's output).
                string_field(block, "name") + sol_core::message::js_json_length(arguments)
            }
            _ => 0,
        })
        .sum()
}

/// Counted as Pi's `estimateTokens` counts a system message (the one function here not kept
/// verbatim: the rule moved to Pi's own count of sections and declarations): each section's
/// `length` (a text's characters, a list's items), the declarations' JSON when JavaScript
/// finds them there.
fn system_chars(message: &Value) -> u64 {
    let mut chars = content_chars(message.get("content"));
    let length = |value: &Value| match value {
        Value::String(text) => js_length(text),
        Value::Array(items) => items.len() as u64,
        _ => 0,
    };
    chars += match message.get("sections") {
        Some(Value::Object(sections)) => sections.values().map(length).sum::<u64>(),
        Some(Value::Array(sections)) => sections.iter().map(length).sum::<u64>(),
        Some(Value::String(text)) => js_length(text),
        _ => 0,
    };
    let absent = matches!(
        message.get("toolsAdded"),
        None | Some(Value::Null) | Some(Value::Bool(false))
    ) || message.get("toolsAdded").and_then(Value::as_f64) == Some(0.0)
        || message.get("toolsAdded").and_then(Value::as_str) == Some("");
    if !absent {
        chars += sol_core::message::js_json_length(&message["toolsAdded"]);
    }
    chars
}

/// Finds the newest valid snapshot on a branch (entries root first, as Pi's `getBranch()`
/// returns them): the data of the last custom entry of type [`STATE_ENTRY_TYPE`] that
/// validates. Malformed newer snapshots are skipped.
pub(crate) fn latest_state(branch: &[Value]) -> Option<OccState> {
    branch.iter().rev().find_map(|entry| {
        let is_state = entry.get("type").and_then(Value::as_str) == Some("custom")
            && entry.get("customType").and_then(Value::as_str) == Some(STATE_ENTRY_TYPE);
        if !is_state {
            return None;
        }
        OccState::from_value(entry.get("data")?).ok()
    })
}

/// The state of a branch: its newest valid snapshot, else the initial state.
pub(crate) fn restore_state(branch: &[Value]) -> OccState {
    latest_state(branch).unwrap_or_default()
}

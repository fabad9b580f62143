//! Pi's session entries and the 1.x session projection, as serde types (JSON keys in
//! camelCase, entry types in snake_case).
//!
//! Like [`crate::message`], only what SoL-Pi reads is modelled and every other field is
//! kept in an `extra` map: an entry whose type SoL-Pi does not model (`label`,
//! `model_change`, `usage`, ...), or whose modelled fields have an unexpected JSON type,
//! becomes [`SessionEntry::Other`] with the original value. Deserializing a
//! [`SessionEntry`] never fails and serializing it gives back the same JSON value.
//!
//! The entry kinds are those of Pi 0.84.2 and 1.x: `message`, `compaction`, `custom`,
//! `custom_message`, `branch_summary`, and 1.x's `context_edit`.
//!
//! ```
//! use serde_json::json;
//! use sol_core::session::SessionEntry;
//!
//! let value = json!({"type": "compaction", "id": "c1", "parentId": "e9",
//!                    "timestamp": "2026-03-02T09:00:00.500Z", "summary": "Done so far",
//!                    "firstKeptEntryId": "e7", "tokensBefore": 41200});
//! let entry = SessionEntry::from_value(value.clone());
//! let SessionEntry::Compaction(compaction) = &entry else { panic!("typed") };
//! assert_eq!(compaction.first_kept_entry_id.as_deref(), Some("e7"));
//! assert_eq!(entry.id(), Some("c1"));
//! assert_eq!(entry.header().and_then(|h| h.epoch_ms()), Some(1_772_442_000_500));
//! assert_eq!(entry.to_value(), value);
//!
//! let label = SessionEntry::from_value(json!({"type": "label", "id": "l1", "label": "x"}));
//! assert!(matches!(label, SessionEntry::Other(_)));
//! assert_eq!((label.entry_type(), label.id()), (Some("label"), Some("l1")));
//! ```

use serde::de::Deserializer;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Number, Value, json};

use crate::message::{AgentMessage, Extra, HasExtra, present, present_value, typed_without};

/// The fields every session entry has: its id, its parent's id and when it was written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryHeader {
    /// The entry id.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<String>,
    /// `Some(None)` for an explicit `null` (the first entry), `None` when absent.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub parent_id: Option<Option<String>>,
    /// When Pi wrote the entry.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<EntryTimestamp>,
}

impl EntryHeader {
    /// Milliseconds since the Unix epoch of the timestamp, if it is one Pi writes.
    pub fn epoch_ms(&self) -> Option<i64> {
        self.timestamp.as_ref()?.epoch_ms()
    }
}

/// An entry's timestamp: the `Date.prototype.toISOString()` text Pi writes, or a number
/// (Unix milliseconds), which hosts that synthesize entries (such as a replay) may write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EntryTimestamp {
    /// ISO-8601 text (or any other text, kept as written).
    Text(String),
    /// A JSON number, kept as written.
    Number(Number),
}

impl EntryTimestamp {
    /// Milliseconds since the Unix epoch: the parsed text ([`iso_to_epoch_ms`]) or the
    /// number when it is an integer.
    pub fn epoch_ms(&self) -> Option<i64> {
        match self {
            EntryTimestamp::Text(text) => iso_to_epoch_ms(text),
            EntryTimestamp::Number(number) => number.as_i64(),
        }
    }

    /// The value a message synthesized from the entry carries as its `timestamp`: the
    /// milliseconds when the text parses, else the text itself; a number as it is.
    pub fn message_timestamp(&self) -> Value {
        match self {
            EntryTimestamp::Text(text) => {
                iso_to_epoch_ms(text).map_or_else(|| Value::String(text.clone()), Value::from)
            }
            EntryTimestamp::Number(number) => Value::Number(number.clone()),
        }
    }
}

/// One entry of a Pi session.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEntry {
    /// `"type": "message"`: one agent message.
    Message(MessageEntry),
    /// `"type": "compaction"`: a summary replacing the history before `firstKeptEntryId`.
    Compaction(CompactionEntry),
    /// `"type": "custom"`: extension data, never part of the model context.
    Custom(CustomEntry),
    /// `"type": "custom_message"`: an extension's message, part of the model context.
    CustomMessage(CustomMessageEntry),
    /// `"type": "branch_summary"`: the summary of an abandoned branch.
    BranchSummary(BranchSummaryEntry),
    /// `"type": "context_edit"` (Pi 1.x).
    ContextEdit(ContextEditEntry),
    /// Any other entry, or a known type in a shape this crate does not model, verbatim.
    Other(Value),
}

impl SessionEntry {
    /// Interprets a JSON value; falls back to [`SessionEntry::Other`] instead of failing.
    pub fn from_value(value: Value) -> SessionEntry {
        let typed = match value.get("type").and_then(Value::as_str) {
            Some("message") => typed_without(&value, "type").map(SessionEntry::Message),
            Some("compaction") => typed_without(&value, "type").map(SessionEntry::Compaction),
            Some("custom") => typed_without(&value, "type").map(SessionEntry::Custom),
            Some("custom_message") => {
                typed_without(&value, "type").map(SessionEntry::CustomMessage)
            }
            Some("branch_summary") => {
                typed_without(&value, "type").map(SessionEntry::BranchSummary)
            }
            Some("context_edit") => typed_without(&value, "type").map(SessionEntry::ContextEdit),
            _ => None,
        };
        typed.unwrap_or(SessionEntry::Other(value))
    }

    /// Interprets every value of a list, in order.
    pub fn from_values(values: impl IntoIterator<Item = Value>) -> Vec<SessionEntry> {
        values.into_iter().map(SessionEntry::from_value).collect()
    }

    /// The JSON form, equal to the value this entry was read from.
    pub fn to_value(&self) -> Value {
        // Serializing these types into a `Value` cannot fail: every map key is a string.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The `type` field, also of an [`SessionEntry::Other`] (when it is a string).
    pub fn entry_type(&self) -> Option<&str> {
        Some(match self {
            SessionEntry::Message(_) => "message",
            SessionEntry::Compaction(_) => "compaction",
            SessionEntry::Custom(_) => "custom",
            SessionEntry::CustomMessage(_) => "custom_message",
            SessionEntry::BranchSummary(_) => "branch_summary",
            SessionEntry::ContextEdit(_) => "context_edit",
            SessionEntry::Other(value) => return value.get("type").and_then(Value::as_str),
        })
    }

    /// The header of a typed entry; `None` for [`SessionEntry::Other`].
    pub fn header(&self) -> Option<&EntryHeader> {
        match self {
            SessionEntry::Message(entry) => Some(&entry.header),
            SessionEntry::Compaction(entry) => Some(&entry.header),
            SessionEntry::Custom(entry) => Some(&entry.header),
            SessionEntry::CustomMessage(entry) => Some(&entry.header),
            SessionEntry::BranchSummary(entry) => Some(&entry.header),
            SessionEntry::ContextEdit(entry) => Some(&entry.header),
            SessionEntry::Other(_) => None,
        }
    }

    /// The `id` field, also of an [`SessionEntry::Other`] (when it is a string).
    pub fn id(&self) -> Option<&str> {
        match self {
            SessionEntry::Other(value) => value.get("id").and_then(Value::as_str),
            typed => typed.header()?.id.as_deref(),
        }
    }

    /// Whether this is a (typed) compaction entry.
    pub fn is_compaction(&self) -> bool {
        matches!(self, SessionEntry::Compaction(_))
    }

    /// The message this entry puts into the model context when it lies on the path (as an
    /// entry after the newest compaction, or one that compaction kept): a `message` entry
    /// its message; `custom_message` and `branch_summary` entries the `custom` and
    /// `branchSummary` message Pi synthesizes from them (the fields its size and identity
    /// depend on); any other entry nothing. A compaction contributes its summary instead
    /// ([`CompactionEntry::summary_message`]), and only as the newest one.
    pub fn context_message(&self) -> Option<AgentMessage> {
        match self {
            SessionEntry::Message(entry) => Some(entry.message.clone()),
            SessionEntry::CustomMessage(entry) => Some(AgentMessage::from_value(json!({
                "role": "custom",
                "customType": entry.custom_type,
                "content": entry.content.clone().unwrap_or(Value::Null),
                "timestamp": message_timestamp(&entry.header),
            }))),
            SessionEntry::BranchSummary(entry) => Some(AgentMessage::from_value(json!({
                "role": "branchSummary",
                "summary": entry.summary,
                "timestamp": message_timestamp(&entry.header),
            }))),
            _ => None,
        }
    }
}

fn message_timestamp(header: &EntryHeader) -> Value {
    header
        .timestamp
        .as_ref()
        .map_or(Value::Null, EntryTimestamp::message_timestamp)
}

impl<'de> Deserialize<'de> for SessionEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(SessionEntry::from_value)
    }
}

impl Serialize for SessionEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        enum Tagged<'a> {
            Message(&'a MessageEntry),
            Compaction(&'a CompactionEntry),
            Custom(&'a CustomEntry),
            CustomMessage(&'a CustomMessageEntry),
            BranchSummary(&'a BranchSummaryEntry),
            ContextEdit(&'a ContextEditEntry),
        }
        let tagged = match self {
            SessionEntry::Message(entry) => Tagged::Message(entry),
            SessionEntry::Compaction(entry) => Tagged::Compaction(entry),
            SessionEntry::Custom(entry) => Tagged::Custom(entry),
            SessionEntry::CustomMessage(entry) => Tagged::CustomMessage(entry),
            SessionEntry::BranchSummary(entry) => Tagged::BranchSummary(entry),
            SessionEntry::ContextEdit(entry) => Tagged::ContextEdit(entry),
            SessionEntry::Other(value) => return value.serialize(serializer),
        };
        tagged.serialize(serializer)
    }
}

/// A `message` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageEntry {
    /// Id, parent and time.
    #[serde(flatten)]
    pub header: EntryHeader,
    /// The message (any role; unmodelled roles are [`AgentMessage::Other`]).
    pub message: AgentMessage,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A `compaction` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionEntry {
    /// Id, parent and time.
    #[serde(flatten)]
    pub header: EntryHeader,
    /// The summary that replaces the compacted history.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub summary: Option<String>,
    /// The first entry the compaction kept.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub first_kept_entry_id: Option<String>,
    /// Fields not modelled here (`tokensBefore`, `details`, `fromHook`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl CompactionEntry {
    /// The `compactionSummary` message Pi puts first in the context after this
    /// compaction (the fields its size and identity depend on).
    pub fn summary_message(&self) -> AgentMessage {
        AgentMessage::from_value(json!({
            "role": "compactionSummary",
            "summary": self.summary,
            "timestamp": message_timestamp(&self.header),
        }))
    }
}

/// A `custom` entry: data an extension stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    /// Id, parent and time.
    #[serde(flatten)]
    pub header: EntryHeader,
    /// The extension's entry type.
    pub custom_type: String,
    /// The stored data; `Some(Value::Null)` for an explicit `null`.
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub data: Option<Value>,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A `custom_message` entry: an extension's message in the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    /// Id, parent and time.
    #[serde(flatten)]
    pub header: EntryHeader,
    /// The extension's message type.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub custom_type: Option<String>,
    /// A string or text and image blocks, kept as JSON; `Some(Value::Null)` for `null`.
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub content: Option<Value>,
    /// Fields not modelled here (`display`, `details`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// A `branch_summary` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryEntry {
    /// Id, parent and time.
    #[serde(flatten)]
    pub header: EntryHeader,
    /// The summary of the abandoned branch.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub summary: Option<String>,
    /// Fields not modelled here (`fromId`, `details`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// A `context_edit` entry (Pi 1.x); what it edits is kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEditEntry {
    /// Id, parent and time.
    #[serde(flatten)]
    pub header: EntryHeader,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

macro_rules! has_extra {
    ($($entry:ty),*) => {
        $(impl HasExtra for $entry {
            fn extra_mut(&mut self) -> &mut Extra {
                &mut self.extra
            }
        })*
    };
}

has_extra!(
    MessageEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    BranchSummaryEntry,
    ContextEditEntry
);

/// The value of Pi 1.x `buildSessionProjection()`: the compaction- and context-edit-aware
/// view of what the model sees, each message mapped back to its entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionProjection {
    /// The projected entries, in context order.
    pub entries: Vec<ProjectedSessionEntry>,
    /// Fields not modelled here (`messages`, `thinkingLevel`, `model`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl SessionProjection {
    /// Reads the projection; `None` when the value does not have its shape (an object
    /// whose `entries` are objects with a `messages` list).
    pub fn from_value(value: &Value) -> Option<SessionProjection> {
        SessionProjection::deserialize(value).ok()
    }

    /// The JSON form, equal to the value this projection was read from.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// One entry of a [`SessionProjection`]: a session entry and the messages it contributes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedSessionEntry {
    /// The session entry.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub source_entry: Option<SessionEntry>,
    /// The messages it contributes, in Pi's canonical form.
    pub messages: Vec<AgentMessage>,
    /// Fields not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The newest entry of a branch (root first, as Pi's `getBranch()` lists it) that `read`
/// reads, with the errors of the newer entries it could not read, newest first.
///
/// `read` gives `None` for an entry that is not of the kind sought (passed over silently),
/// `Some(Err(_))` for one that is but cannot be used, and `Some(Ok(_))` for one that can:
/// the walk from the newest entry back stops at the first of these. Older unreadable
/// entries are not reported, since a newer readable one replaced them; a branch without a
/// readable entry gives `None` and the errors of all of them.
///
/// ```
/// use serde_json::json;
/// use sol_core::session::{SessionEntry, newest_readable};
///
/// let counter = |n: i64| SessionEntry::from_value(json!({"type": "custom", "id": format!("c{n}"),
///     "customType": "counter", "data": n}));
/// let read = |entry: &SessionEntry| match entry {
///     SessionEntry::Custom(custom) if custom.custom_type == "counter" => {
///         let n = custom.data.as_ref().and_then(|data| data.as_i64()).unwrap_or(-1);
///         Some(if n >= 0 { Ok(n) } else { Err(format!("bad counter {n}")) })
///     }
///     _ => None,
/// };
/// let label = SessionEntry::from_value(json!({"type": "label", "id": "l1", "label": "x"}));
/// let branch = [counter(-3), counter(1), label, counter(-2), counter(-4)];
/// let (newest, rejected) = newest_readable(&branch, read);
/// assert_eq!(newest, Some(1));
/// assert_eq!(rejected, ["bad counter -4", "bad counter -2"]);
/// assert_eq!(newest_readable(&branch[..1], read), (None, vec!["bad counter -3".to_owned()]));
/// ```
pub fn newest_readable<T, E>(
    branch: &[SessionEntry],
    mut read: impl FnMut(&SessionEntry) -> Option<Result<T, E>>,
) -> (Option<T>, Vec<E>) {
    let mut rejected = Vec::new();
    for entry in branch.iter().rev() {
        match read(entry) {
            Some(Ok(value)) => return (Some(value), rejected),
            Some(Err(error)) => rejected.push(error),
            None => {}
        }
    }
    (None, rejected)
}

/// Parses the `YYYY-MM-DDTHH:MM:SS(.fff)Z` form `Date.prototype.toISOString()` writes,
/// into milliseconds since the Unix epoch (proleptic Gregorian, no leap-second table: a
/// second of 60 counts as the next minute's first). More than three fraction digits are
/// cut, not rounded.
///
/// ```
/// use sol_core::session::iso_to_epoch_ms;
///
/// assert_eq!(iso_to_epoch_ms("1970-01-01T00:00:00.000Z"), Some(0));
/// assert_eq!(iso_to_epoch_ms("2026-03-02T09:00:00.5Z"), Some(1_772_442_000_500));
/// assert_eq!(iso_to_epoch_ms("yesterday"), None);
/// ```
pub fn iso_to_epoch_ms(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    if bytes.len() < 20 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b'T' {
        return None;
    }
    if bytes[13] != b':' || bytes[16] != b':' || bytes.last() != Some(&b'Z') {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    let millis = match bytes[19] {
        b'Z' if bytes.len() == 20 => 0,
        b'.' => {
            let fraction = text.get(20..text.len() - 1)?;
            let digits: String = fraction.chars().chain("000".chars()).take(3).collect();
            if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            digits.parse().ok()?
        }
        _ => return None,
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((((days * 24 + hour) * 60 + minute) * 60 + second) * 1000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

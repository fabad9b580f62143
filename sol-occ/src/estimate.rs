//! How many context tokens Pi's native compaction would remove right now.
//!
//! Pi never cuts inside a message: it walks back from the newest entry, adding up message
//! sizes until `keepRecentTokens` is reached, then keeps everything from the nearest valid
//! cut point (a user-like or assistant message, never a tool result) on. Everything before
//! that point, plus the previous compaction summary, is replaced by a new summary.
//!
//! [`estimate_native_cut`] repeats that walk over Pi's canonical projection of the branch
//! ([`NativeProjection`]) and prices each removed message at its size in the latest context
//! the extension observed ([`ObservedContext`]), so ObservationPack placeholders count at
//! their projected size. A removed message that has no counterpart in that view
//! (dropped by a transformer, added after the last `context` event, or in a group of
//! same-millisecond messages that is larger in that view than in the projection) adds
//! nothing, and a matched one adds the smaller of its two sizes: the estimate never exceeds
//! what Pi would actually remove.
//!
//! ```
//! use serde_json::json;
//! use sol_core::message::AgentMessage;
//! use sol_core::session::SessionEntry;
//! use sol_occ::estimate::{estimate_native_cut, NativeProjection, ObservedContext};
//! use sol_occ::tokens::SizedMessage;
//!
//! // One short prompt, then one huge recent tool call: Pi keeps the huge call and its
//! // result, so only the prompt (25 tokens) is removable, not `total - keepRecent`.
//! let messages = vec![
//!     json!({"role": "user", "content": "x".repeat(100), "timestamp": 1}),
//!     json!({"role": "assistant", "timestamp": 2, "content": [
//!         {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}]}),
//!     json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read", "timestamp": 3,
//!            "isError": false, "content": [{"type": "text", "text": "y".repeat(100_000)}]}),
//! ];
//! let branch: Vec<_> = messages.iter().enumerate().map(|(i, message)| {
//!     SessionEntry::from_value(json!({"type": "message", "id": format!("e{i}"), "message": message}))
//! }).collect();
//! let messages: Vec<_> = messages.into_iter().map(AgentMessage::from_value).collect();
//! let projection = NativeProjection::from_branch(&branch);
//! let observed = ObservedContext::new(&SizedMessage::from_messages(&messages));
//! let estimate = estimate_native_cut(&projection, 20_000, &observed);
//! assert_eq!(estimate.removable_tokens, 25);
//! assert!(estimate.compactable);
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
pub use sol_core::session::iso_to_epoch_ms;
use sol_core::session::{ProjectedSessionEntry, SessionEntry, SessionProjection};

use crate::tokens::{MessageRole, SizedMessage};

/// The type of the session entry a projected entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A `message` entry.
    Message,
    /// A `compaction` entry; never a cut point.
    Compaction,
    /// Any other entry (`custom_message`, `branch_summary`, `context_edit`, `custom`, ...).
    Other,
}

impl EntryKind {
    /// Reads a session entry's `type`.
    pub fn parse(kind: &str) -> EntryKind {
        match kind {
            "message" => EntryKind::Message,
            "compaction" => EntryKind::Compaction,
            _ => EntryKind::Other,
        }
    }

    /// The kind of a session entry: only a typed compaction entry is a
    /// [`EntryKind::Compaction`]; an entry whose `type` is `message` is a
    /// [`EntryKind::Message`] even in a shape this crate does not model.
    pub fn of(entry: Option<&SessionEntry>) -> EntryKind {
        match entry {
            Some(SessionEntry::Compaction(_)) => EntryKind::Compaction,
            Some(entry) if entry.entry_type() == Some("message") => EntryKind::Message,
            _ => EntryKind::Other,
        }
    }
}

/// One entry of Pi's projection: a session entry and the messages it contributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedEntry {
    /// The session entry id.
    pub id: Option<String>,
    /// The session entry type.
    pub kind: EntryKind,
    /// The messages it contributes to the model context, in Pi's canonical form.
    pub messages: Vec<SizedMessage>,
}

impl ProjectedEntry {
    /// Reads one entry of Pi's `buildSessionProjection()`: `{sourceEntry, messages}`.
    pub fn from_projection_entry(entry: &ProjectedSessionEntry) -> ProjectedEntry {
        let source = entry.source_entry.as_ref();
        ProjectedEntry {
            id: source.and_then(SessionEntry::id).map(str::to_owned),
            kind: EntryKind::of(source),
            messages: SizedMessage::from_messages(&entry.messages),
        }
    }

    /// Reads one session entry: a `message` entry contributes its message,
    /// `custom_message` and `branch_summary` entries the message Pi synthesizes from them,
    /// a `compaction` entry (as a retained or older entry) and any other entry nothing
    /// ([`SessionEntry::context_message`]).
    pub fn from_session_entry(entry: &SessionEntry) -> ProjectedEntry {
        ProjectedEntry {
            id: entry.id().map(str::to_owned),
            kind: EntryKind::of(Some(entry)),
            messages: entry
                .context_message()
                .iter()
                .map(SizedMessage::from_message)
                .collect(),
        }
    }

    /// The summed size of its messages.
    pub fn tokens(&self) -> u64 {
        self.messages
            .iter()
            .fold(0u64, |sum, message| sum.saturating_add(message.tokens))
    }

    fn is_cut_point(&self) -> bool {
        self.kind != EntryKind::Compaction
            && self
                .messages
                .iter()
                .any(|message| message.role.is_cut_point())
    }
}

/// Pi's canonical view of the current branch, the input of the cut-point walk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NativeProjection {
    /// The projected entries: the newest compaction first (if any), then the retained and
    /// newer entries in branch order.
    pub entries: Vec<ProjectedEntry>,
    /// Whether the branch's leaf entry is a compaction; Pi then refuses with
    /// `Already compacted`.
    pub leaf_is_compaction: bool,
}

impl NativeProjection {
    /// Reads the value of Pi 1.x `buildSessionProjection()` (`{entries: [{sourceEntry,
    /// messages}], ...}`); `leaf_is_compaction` comes from the session's leaf entry.
    pub fn from_session_projection(
        projection: &SessionProjection,
        leaf_is_compaction: bool,
    ) -> Self {
        NativeProjection {
            entries: projection
                .entries
                .iter()
                .map(ProjectedEntry::from_projection_entry)
                .collect(),
            leaf_is_compaction,
        }
    }

    /// Builds the projection from branch entries (root first), as Pi 0.84.2 sees them:
    /// the newest compaction's summary, the entries it retained (from its
    /// `firstKeptEntryId`), then everything after it. Message entries contribute their
    /// message, `custom_message` and `branch_summary` entries their synthesized message,
    /// other entries nothing.
    pub fn from_branch(branch: &[SessionEntry]) -> Self {
        let last_compaction =
            branch
                .iter()
                .enumerate()
                .rev()
                .find_map(|(index, entry)| match entry {
                    SessionEntry::Compaction(compaction) => Some((index, compaction)),
                    _ => None,
                });
        let mut entries = Vec::with_capacity(branch.len() + 1);
        let tail_start = match last_compaction {
            None => 0,
            Some((index, compaction)) => {
                entries.push(ProjectedEntry {
                    id: compaction.header.id.clone(),
                    kind: EntryKind::Compaction,
                    messages: vec![SizedMessage::from_message(&compaction.summary_message())],
                });
                let first_kept = compaction.first_kept_entry_id.as_deref();
                if let Some(kept) = first_kept
                    .and_then(|id| branch[..index].iter().position(|e| e.id() == Some(id)))
                {
                    entries.extend(
                        branch[kept..index]
                            .iter()
                            .map(ProjectedEntry::from_session_entry),
                    );
                }
                index + 1
            }
        };
        entries.extend(
            branch[tail_start..]
                .iter()
                .map(ProjectedEntry::from_session_entry),
        );
        NativeProjection {
            entries,
            leaf_is_compaction: branch.last().is_some_and(SessionEntry::is_compaction),
        }
    }

    /// The projection of a host that keeps no session entries of its own: its
    /// conversation, one [`EntryKind::Message`] entry per message (ids `m0`, `m1`, ...),
    /// no compaction.
    ///
    /// ```
    /// use sol_occ::estimate::{EntryKind, NativeProjection};
    /// use sol_occ::tokens::{MessageRole, SizedMessage};
    ///
    /// let messages = [
    ///     SizedMessage::new(MessageRole::User, 10, "user-1"),
    ///     SizedMessage::new(MessageRole::Assistant, 20, "assistant-1"),
    /// ];
    /// let projection = NativeProjection::from_messages(&messages);
    /// assert_eq!(projection.total_tokens(), 30);
    /// assert_eq!(projection.entries[1].id.as_deref(), Some("m1"));
    /// assert!(projection.entries.iter().all(|entry| entry.kind == EntryKind::Message));
    /// ```
    pub fn from_messages(messages: &[SizedMessage]) -> Self {
        NativeProjection {
            entries: messages
                .iter()
                .enumerate()
                .map(|(index, message)| ProjectedEntry {
                    id: Some(format!("m{index}")),
                    kind: EntryKind::Message,
                    messages: vec![message.clone()],
                })
                .collect(),
            leaf_is_compaction: false,
        }
    }

    /// Index of the first entry after the newest compaction summary (0 without one).
    pub fn history_start(&self) -> usize {
        self.entries
            .iter()
            .position(|entry| entry.kind == EntryKind::Compaction && !entry.messages.is_empty())
            .map_or(0, |index| index + 1)
    }

    /// The model-visible messages of the projection, in order.
    pub fn messages(&self) -> impl Iterator<Item = &SizedMessage> {
        self.entries.iter().flat_map(|entry| entry.messages.iter())
    }

    /// Pi's estimate of the projected context (system messages included).
    pub fn total_tokens(&self) -> u64 {
        self.entries
            .iter()
            .fold(0u64, |sum, entry| sum.saturating_add(entry.tokens()))
    }
}

/// The sizes of the messages in the latest context the extension observed, by identity.
///
/// Messages that Pi created in the same millisecond share an identity
/// ([`crate::tokens::message_key`]). Both views list them in the same order, and messages
/// added since the last `context` event come after the ones it saw, so the n-th message of
/// a group in Pi's projection is priced at the n-th of the same group here. A group that is
/// larger here than in the projection (a transformer added a message with that identity)
/// is not trusted at all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObservedContext {
    /// Sizes of the identified messages, grouped by identity, in context order.
    by_key: BTreeMap<String, Vec<u64>>,
    total: u64,
}

impl ObservedContext {
    /// Indexes the messages of one `context` event.
    pub fn new(messages: &[SizedMessage]) -> ObservedContext {
        let mut by_key: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        let mut total = 0u64;
        for message in messages {
            total = total.saturating_add(message.tokens);
            by_key
                .entry(message.key.clone())
                .or_default()
                .push(message.tokens);
        }
        ObservedContext { by_key, total }
    }

    /// The sum of all observed message sizes.
    pub fn total_tokens(&self) -> u64 {
        self.total
    }

    /// The observed size of the `occurrence`-th message (0-based, in order) with this
    /// identity, in a projection that holds `group_len` messages with it.
    pub fn size_of(&self, key: &str, occurrence: usize, group_len: usize) -> Option<u64> {
        let sizes = self.by_key.get(key)?;
        if sizes.len() > group_len {
            return None;
        }
        sizes.get(occurrence).copied()
    }
}

/// What the cut-point walk predicts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NativeCutEstimate {
    /// Proven savings: the priced removed messages, plus the priced previous summary when
    /// there is new history to summarize. This is the economics' archive size.
    pub removable_tokens: u64,
    /// Canonical size of the removed messages (not a saving: unobserved sizes included).
    pub canonical_removed_tokens: u64,
    /// How many messages Pi would summarize and remove (system messages excluded).
    pub removed_messages: usize,
    /// How many of them had a unique observed counterpart.
    pub priced_messages: usize,
    /// The priced size of the previous summary included in `removable_tokens`.
    pub previous_summary_tokens: u64,
    /// Index (in the projection) of the first entry Pi would keep.
    pub first_kept_index: usize,
    /// Id of that entry.
    pub first_kept_entry_id: Option<String>,
    /// Whether Pi would compact at all: there is something to summarize and the branch does
    /// not already end with a compaction.
    pub compactable: bool,
}

/// Index of the first projected entry Pi keeps when compacting entries `start..end` with a
/// retained tail of `keep_recent_tokens`.
///
/// Pi's recovery-omission rule, which can move the cut one entry later, is not applied:
/// without it the prefix is never larger than Pi's, so the estimate stays conservative.
pub fn find_cut_index(
    entries: &[ProjectedEntry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> usize {
    let end = end.min(entries.len());
    let start = start.min(end);
    let cut_points: Vec<usize> = (start..end)
        .filter(|&index| entries[index].is_cut_point())
        .collect();
    let (Some(&first), Some(&last)) = (cut_points.first(), cut_points.last()) else {
        return start;
    };
    let mut cut = first;
    let mut accumulated = 0u64;
    for index in (start..end).rev() {
        let tokens = entries[index].tokens();
        if tokens == 0 {
            continue;
        }
        accumulated = accumulated.saturating_add(tokens);
        if accumulated >= keep_recent_tokens {
            cut = cut_points
                .iter()
                .copied()
                .find(|&candidate| candidate >= index)
                .unwrap_or(last);
            break;
        }
    }
    // Metadata entries right before the cut travel with the kept tail.
    while cut > start {
        let previous = &entries[cut - 1];
        if previous.kind == EntryKind::Compaction || !previous.messages.is_empty() {
            break;
        }
        cut -= 1;
    }
    cut
}

/// Predicts what Pi's native compaction would remove from `projection` with a retained tail
/// of `keep_recent_tokens`, priced against `observed`.
pub fn estimate_native_cut(
    projection: &NativeProjection,
    keep_recent_tokens: u64,
    observed: &ObservedContext,
) -> NativeCutEstimate {
    let entries = &projection.entries;
    let start = projection.history_start();
    let cut = find_cut_index(entries, start, entries.len(), keep_recent_tokens);

    // Each projected message's place within its identity group, and each group's size.
    let mut group_len: BTreeMap<&str, usize> = BTreeMap::new();
    let occurrence: Vec<Vec<usize>> = entries
        .iter()
        .map(|entry| {
            entry
                .messages
                .iter()
                .map(|message| {
                    let seen = group_len.entry(message.key.as_str()).or_default();
                    *seen += 1;
                    *seen - 1
                })
                .collect()
        })
        .collect();
    let price = |message: &SizedMessage, occurrence: usize| -> Option<u64> {
        let key = message.key.as_str();
        let len = group_len.get(key).copied()?;
        observed
            .size_of(key, occurrence, len)
            .map(|seen| seen.min(message.tokens))
    };

    let mut estimate = NativeCutEstimate {
        first_kept_index: cut,
        first_kept_entry_id: entries.get(cut).and_then(|entry| entry.id.clone()),
        ..NativeCutEstimate::default()
    };
    let removed = (start..cut)
        .filter(|&index| entries[index].kind != EntryKind::Compaction)
        .flat_map(|index| entries[index].messages.iter().zip(&occurrence[index]))
        .filter(|(message, _)| message.role != MessageRole::System);
    for (message, &occurrence) in removed {
        estimate.removed_messages += 1;
        estimate.canonical_removed_tokens = estimate
            .canonical_removed_tokens
            .saturating_add(message.tokens);
        if let Some(tokens) = price(message, occurrence) {
            estimate.priced_messages += 1;
            estimate.removable_tokens = estimate.removable_tokens.saturating_add(tokens);
        }
    }
    if estimate.removed_messages > 0 && start > 0 {
        estimate.previous_summary_tokens = entries[start - 1]
            .messages
            .iter()
            .zip(&occurrence[start - 1])
            .filter_map(|(message, &occurrence)| price(message, occurrence))
            .fold(0u64, u64::saturating_add);
        estimate.removable_tokens = estimate
            .removable_tokens
            .saturating_add(estimate.previous_summary_tokens);
    }
    estimate.compactable =
        estimate.removed_messages > 0 && !projection.leaf_is_compaction && cut < entries.len();
    estimate
}

/// The first, cut-unaware estimate (`write - systemPrompt - keepRecent`, at least 0). Kept
/// for comparison only: it ignores that Pi cuts at message boundaries (issue #5).
pub fn naive_archive_tokens(write_tokens: u64, system_prompt_tokens: u64, keep_recent: u64) -> u64 {
    write_tokens
        .saturating_sub(system_prompt_tokens)
        .saturating_sub(keep_recent)
}

//! The compact form the reader keeps of each entry: what a replay needs, never the text.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};
use sol_core::Mechanism;
use sol_core::message::{AgentMessage, ToolResultMessage};
use sol_core::savings::{OwnPrompt, ToolCall};
use sol_core::session::{SessionEntry, iso_to_epoch_ms};
use sol_obspack::quote::reply_quotes;
pub use sol_obspack::quote::{ContentDigest, QUOTE_MAX_LINES, QUOTE_MIN_BYTES, quotable_lines};
use sol_occ::plan::TOOL_NAME as PLAN_TOOL;
use sol_occ::session::CORRECTION_PREFIX;
use sol_reducer::ToolResultView;
use sol_reducer::pi::CANDIDATE_TOOLS;
use sol_reducer::source::FullOutput;

/// The position of an entry in its file (0 for the first entry after the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryIndex(pub(crate) u32);

impl EntryIndex {
    /// The position as a `usize`, for indexing [`super::Session::entries`].
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// One entry of a session file, as much of it as a replay needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub(crate) id: Arc<str>,
    pub(crate) parent: Option<EntryIndex>,
    pub(crate) line: u64,
    pub(crate) timestamp_ms: Option<i64>,
    pub(crate) has_children: bool,
    pub(crate) kind: EntryKind,
}

impl Entry {
    /// The entry's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The parent entry's position; `None` for a root (`parentId` null or absent).
    pub fn parent(&self) -> Option<EntryIndex> {
        self.parent
    }

    /// The 1-based line of the file that holds the entry.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The entry's `timestamp` in Unix milliseconds, when it is one Pi writes.
    pub fn timestamp_ms(&self) -> Option<i64> {
        self.timestamp_ms
    }

    /// Whether a later entry names this one as its parent (a leaf has none).
    pub fn has_children(&self) -> bool {
        self.has_children
    }

    /// What kind of entry it is, with the facts kept for it.
    pub fn kind(&self) -> &EntryKind {
        &self.kind
    }

    /// The entry's `type` as Pi writes it.
    pub fn entry_type(&self) -> &str {
        self.kind.entry_type()
    }

    /// The message facts of a `message` entry.
    pub fn message(&self) -> Option<&MessageFacts> {
        match &self.kind {
            EntryKind::Message(message) => Some(message),
            _ => None,
        }
    }

    /// Pi's token estimate of what this entry puts into the model context when it lies on
    /// the branch: a message's estimate, a custom message's or branch summary's synthesized
    /// message; a compaction's summary counts only as the newest compaction (see
    /// [`CompactionFacts::summary_tokens`]), so 0 here, as for every other entry.
    pub fn context_tokens(&self) -> u64 {
        match &self.kind {
            EntryKind::Message(message) => message.tokens,
            EntryKind::CustomMessage { tokens, .. } | EntryKind::BranchSummary { tokens, .. } => {
                *tokens
            }
            _ => 0,
        }
    }
}

/// The kinds of entry Pi 0.84.2 to 1.6.0 write, with what a replay needs of each.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    /// `message`: one agent message.
    Message(MessageFacts),
    /// `compaction`: a summary replacing the history before `firstKeptEntryId`.
    Compaction(Box<CompactionFacts>),
    /// `branch_summary`: the summary of an abandoned branch (written by `/tree`).
    BranchSummary {
        /// Pi's estimate of the `branchSummary` message it puts into the context.
        tokens: u64,
        /// The leaf the navigation left (`fromId`), if written.
        from_id: Option<Box<str>>,
    },
    /// `custom_message`: an extension's message, part of the model context.
    CustomMessage {
        /// The extension's message type.
        custom_type: Option<Arc<str>>,
        /// Pi's estimate of the `custom` message it puts into the context.
        tokens: u64,
    },
    /// `custom`: extension data, never part of the model context.
    Custom {
        /// The extension's entry type.
        custom_type: Arc<str>,
        /// The data of a SoL-Pi entry (`customType` starting with `sol-pi-`); `None` for
        /// other extensions' entries, whose data is not kept.
        data: Option<Box<Value>>,
    },
    /// `context_edit` (Pi 1.x): a branch-local replacement or removal of an earlier entry's
    /// model-visible content.
    ContextEdit {
        /// The edited entry's id (`targetId`).
        target_id: Option<Box<str>>,
        /// Pi's estimate of the replacement (its text and image blocks); `None` when the
        /// edit removes the content (`replacement: null`).
        replacement_tokens: Option<u64>,
    },
    /// `label`: a bookmark on an entry.
    Label,
    /// `session_info`: the session's display name.
    SessionInfo,
    /// `model_change`.
    ModelChange,
    /// `thinking_level_change`.
    ThinkingLevelChange,
    /// `usage` (Pi 1.x): model usage outside the context (a summary's, say).
    Usage(Usage),
    /// Any other `type`, kept by name.
    Other(Box<str>),
}

impl EntryKind {
    /// The `type` Pi writes for this kind.
    pub fn entry_type(&self) -> &str {
        match self {
            EntryKind::Message(_) => "message",
            EntryKind::Compaction(_) => "compaction",
            EntryKind::BranchSummary { .. } => "branch_summary",
            EntryKind::CustomMessage { .. } => "custom_message",
            EntryKind::Custom { .. } => "custom",
            EntryKind::ContextEdit { .. } => "context_edit",
            EntryKind::Label => "label",
            EntryKind::SessionInfo => "session_info",
            EntryKind::ModelChange => "model_change",
            EntryKind::ThinkingLevelChange => "thinking_level_change",
            EntryKind::Usage(_) => "usage",
            EntryKind::Other(entry_type) => entry_type,
        }
    }
}

/// A compaction entry's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionFacts {
    /// Pi's estimate of the `compactionSummary` message that starts the context after it.
    pub summary_tokens: u64,
    /// The first entry the compaction kept (may be the compaction itself on Pi 1.x, which
    /// writes its own id when nothing is kept).
    pub first_kept_entry_id: Option<Box<str>>,
    /// Pi's `tokensBefore`: the context's size when it compacted.
    pub tokens_before: Option<u64>,
    /// The summary's size as Online Context Compact accounts the summarizer's output
    /// (`ceil(UTF-8 bytes / 4)` of the summary text).
    pub summarizer_output_tokens: u64,
    /// The system message Pi 1.x copies into the compaction (`systemMessage`), which
    /// starts the context after it: Pi's estimate and its identity.
    pub system_message: Option<(u64, ContentDigest)>,
    /// SoL-Pi's share of that system message ([`MessageFacts::system_own`]).
    pub system_own: Box<[ToolCall]>,
    /// The usage the provider reported for the summary's request (`usage`), when Pi wrote it.
    pub usage: Option<Usage>,
}

/// A message's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageFacts {
    /// The message's role.
    pub role: Role,
    /// Pi's token estimate, `sol_core::message::AgentMessage::estimated_tokens`.
    pub tokens: u64,
    /// The message's own `timestamp` (Unix milliseconds), when it is an integer.
    pub timestamp: Option<i64>,
    /// A tool result's facts.
    pub tool_result: Option<Box<ToolResultFacts>>,
    /// An assistant message's facts.
    pub assistant: Option<Box<AssistantFacts>>,
    /// A user message whose text starts with Online Context Compact's correction prefix
    /// (`CORRECTION:`), which ends a selected boundary.
    pub correction: bool,
    /// A system message's identity: the digest of what it tells the model (content,
    /// sections, tools added), never its timestamp, which Pi renews when it copies the
    /// prompt into a compaction.
    pub system_digest: Option<ContentDigest>,
    /// What SoL-Pi's tools added to a system message, per mechanism, as
    /// `sol_core::savings::OwnPrompt::system_shares` gives it (the live book's rule); empty
    /// for any other message and where SoL-Pi added nothing.
    pub system_own: Box<[ToolCall]>,
}

impl MessageFacts {
    /// An assistant message's tool calls, in order (none for other roles).
    pub fn tool_calls(&self) -> &[ToolCallFacts] {
        self.assistant
            .as_ref()
            .map_or(&[], |assistant| &assistant.tool_calls)
    }
}

/// What an assistant message holds besides its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantFacts {
    /// Its tool calls, in order.
    pub tool_calls: Box<[ToolCallFacts]>,
    /// The provider-reported usage, if written.
    pub usage: Option<Usage>,
    /// The `stopReason`, if written.
    pub stop_reason: Option<Arc<str>>,
    /// The model that answered, as `provider/model`, where the message names both.
    pub model: Option<Arc<str>>,
    /// The quotable lines of its text, thinking and the string values of its tool calls'
    /// arguments ([`quotable_lines`]).
    pub quotes: Box<[ContentDigest]>,
}

/// The role of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `toolResult`.
    ToolResult,
    /// `custom` (also version 2's `hookMessage`).
    Custom,
    /// `bashExecution` (a user's `!command`).
    BashExecution,
    /// `system` (Pi 1.x).
    System,
    /// `branchSummary`.
    BranchSummary,
    /// `compactionSummary`.
    CompactionSummary,
    /// Any other role; empty when the message has no string role.
    Other(Arc<str>),
}

impl Role {
    fn from_name(name: &str, names: &mut Names) -> Role {
        match name {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "toolResult" => Role::ToolResult,
            "custom" => Role::Custom,
            "bashExecution" => Role::BashExecution,
            "system" => Role::System,
            "branchSummary" => Role::BranchSummary,
            "compactionSummary" => Role::CompactionSummary,
            other => Role::Other(names.get(other)),
        }
    }

    /// The role as Pi writes it.
    pub fn name(&self) -> &str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
            Role::Custom => "custom",
            Role::BashExecution => "bashExecution",
            Role::System => "system",
            Role::BranchSummary => "branchSummary",
            Role::CompactionSummary => "compactionSummary",
            Role::Other(name) => name,
        }
    }
}

/// A tool result's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResultFacts {
    /// The call it answers (`toolCallId`; empty when absent).
    pub tool_call_id: Box<str>,
    /// The tool's name (`toolName`; empty when absent).
    pub tool_name: Arc<str>,
    /// Whether the tool reported a failure.
    pub is_error: bool,
    /// UTF-8 length of the text blocks joined with `\n` (images left out).
    pub text_bytes: u64,
    /// The digest of that same text.
    pub digest: ContentDigest,
    /// What ObservationPack would send instead from its third request on, when it would
    /// archive the result (text blocks only, not an error, over its threshold, not a
    /// receipt): `None` otherwise.
    pub pack: Option<PackFacts>,
    /// What the recent-outputs placement (`keepRecentOutputs`) would send instead, its
    /// compact placeholder ([`sol_obspack::compact_placeholder_with`]), when it would
    /// archive the result (the same, over
    /// [`MEDIUM_THRESHOLD_BYTES`](sol_obspack::MEDIUM_THRESHOLD_BYTES)): `None` otherwise.
    pub compact: Option<PackFacts>,
    /// The log the Evidence-Preserving Reducer would send its model, when the result is one
    /// of its candidates (a build or test command's output of at least its minimum size, no
    /// likely secret), read from the text alone (Pi's full-output file is not part of the
    /// session): the text the model saw, as the cache-aware policy reads it.
    pub reducer_log: Option<ReducerLog>,
    /// The result is already a reducer receipt (a line equals the receipt marker).
    pub receipt: bool,
    /// What the reducer wrote about the receipt it put here (`details`), when it did.
    pub reduced: Option<ReducedFacts>,
    /// Its quotable lines ([`quotable_lines`]): what a later reply that quotes it shows the
    /// model relied on.
    pub lines: Box<[ContentDigest]>,
    /// For an edit or write that ran a command (`then_run`): Pi's estimate of the result
    /// without the command's output (the blocks before Action Fusion's marker block),
    /// what the model's next turn would have read in plain Pi.
    pub fused_without: Option<u64>,
}

/// A log the reducer would read, with what its economics weigh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReducerLog {
    /// The log's UTF-8 bytes.
    pub bytes: u64,
    /// The tokens the model reads of it.
    pub result_tokens: u64,
    /// The tokens the reducer call would read (the instructions and the framed log).
    pub call_input_tokens: u64,
}

/// The reducer's record of a result it replaced by a receipt (its `details`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReducedFacts {
    /// The log's bytes (`sourceBytes`): the command's whole output, which the reducer reads.
    pub source_bytes: u64,
    /// The log's lines, as the receipt states them (`source_lines`), when it does.
    pub source_lines: Option<u64>,
    /// The receipt's bytes (`receiptBytes`).
    pub receipt_bytes: u64,
    /// The reducer model's tokens for it, as the receipt states (`reducer_total_tokens`).
    pub model_tokens: u64,
}

impl ReducedFacts {
    /// The tokens the receipt removed from each request that carries it, as the reducer
    /// accounts them (a quarter of each text's length, rounded up), for a result whose text
    /// is now `text_bytes` long: the receipt and what the reducer kept around it (Pi's
    /// status line), around which the log stood before. Exact for ASCII logs, where bytes
    /// and UTF-16 units agree.
    pub fn tokens_removed(&self, text_bytes: u64) -> u64 {
        let before = text_bytes
            .saturating_sub(self.receipt_bytes)
            .saturating_add(self.sent_bytes());
        before.div_ceil(4).saturating_sub(text_bytes.div_ceil(4))
    }

    /// The bytes of the log as Pi's bash tool sent it, which is what the request carried
    /// before the receipt: a log over 2,000 lines or 50 KiB is cut to its tail within both
    /// limits, followed by a notice of the lines shown and where the full output is. The
    /// tail is taken at the log's average line length, the notice at its usual length.
    ///
    /// ```
    /// use sol_replay::reader::ReducedFacts;
    ///
    /// let log = |source_bytes, source_lines| ReducedFacts {
    ///     source_bytes,
    ///     source_lines,
    ///     receipt_bytes: 900,
    ///     model_tokens: 0,
    /// };
    /// assert_eq!(log(12_873, Some(117)).sent_bytes(), 12_873);
    /// assert_eq!(log(85_487, Some(1_740)).sent_bytes(), 51_200 + 100);
    /// assert_eq!(log(40_000, Some(4_000)).sent_bytes(), 20_000 + 100);
    /// ```
    pub fn sent_bytes(&self) -> u64 {
        const MAX_BYTES: u64 = 50 * 1024;
        const MAX_LINES: u64 = 2_000;
        const NOTICE_BYTES: u64 = 100;
        let lines = self.source_lines.unwrap_or(0);
        let by_lines = if lines > MAX_LINES {
            let kept = u128::from(self.source_bytes) * u128::from(MAX_LINES) / u128::from(lines);
            u64::try_from(kept).unwrap_or(u64::MAX)
        } else {
            self.source_bytes
        };
        let kept = by_lines.min(MAX_BYTES);
        if kept < self.source_bytes {
            kept + NOTICE_BYTES
        } else {
            self.source_bytes
        }
    }
}

/// What ObservationPack makes of a result it archives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackFacts {
    /// Pi's token estimate of the result message as it is sent with the placeholder.
    pub placeholder_tokens: u64,
    /// The step account's tokens for one request that sends the placeholder
    /// ([`sol_obspack::removed_tokens`]).
    pub removed_tokens: u64,
    /// The step account's bytes for one such request.
    pub removed_bytes: u64,
}

/// One tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallFacts {
    /// The call's id.
    pub id: Box<str>,
    /// The tool's name.
    pub name: Arc<str>,
    /// An `edit` or `write` call that carries a `then_run` command (Action Fusion's call).
    pub then_run: bool,
    /// The arguments of an `update_plan` call (Online Context Compact's tool); `None` for
    /// every other tool, whose arguments are not kept.
    pub plan_arguments: Option<Box<Value>>,
    /// Pi's estimate of the call's share of its message (name and arguments).
    pub tokens: u64,
}

/// Provider-reported token usage (`usage` of an assistant message or a 1.x usage entry);
/// a missing field counts 0, a fractional one its whole part.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
}

impl Usage {
    /// Every input token: uncached, read from and written to the cache.
    pub fn all_input(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// Read as the live book reads it (`ReportedUsage::from_pi_usage`: a field that is not a
    /// positive number counts 0).
    pub(crate) fn from_value(value: &Value) -> Usage {
        let reported = sol_core::savings::ReportedUsage::from_pi_usage(value);
        Usage {
            input: reported.input,
            output: reported.output,
            cache_read: reported.cache_read,
            cache_write: reported.cache_write,
        }
    }
}

fn boxed_str(value: Option<&Value>) -> Option<Box<str>> {
    value.and_then(Value::as_str).map(Box::from)
}

/// Names that repeat (tool names, stop reasons, custom types), each held once.
#[derive(Debug, Default)]
pub(crate) struct Names(BTreeSet<Arc<str>>);

impl Names {
    /// The shared copy of `name`.
    pub(crate) fn get(&mut self, name: &str) -> Arc<str> {
        if let Some(known) = self.0.get(name) {
            return known.clone();
        }
        let name: Arc<str> = Arc::from(name);
        self.0.insert(name.clone());
        name
    }

    fn field(&mut self, value: Option<&Value>) -> Option<Arc<str>> {
        value.and_then(Value::as_str).map(|name| self.get(name))
    }
}

/// The kind and facts of an entry of type `entry_type`, read from its JSON (`value`, the
/// whole entry object), consumed so that no text outlives this call.
pub(crate) fn entry_kind(
    entry_type: &str,
    mut value: Value,
    version: u64,
    names: &mut Names,
    calls: &mut PendingCalls,
) -> EntryKind {
    match entry_type {
        "message" => {
            let message = value.get_mut("message").map(Value::take);
            EntryKind::Message(message_facts(
                message.unwrap_or(Value::Null),
                version,
                names,
                calls,
            ))
        }
        "compaction" => {
            let tokens_before = value.get("tokensBefore").and_then(Value::as_u64);
            let system = value
                .get("systemMessage")
                .filter(|message| message.is_object());
            let system_message = system.map(|message| {
                let tokens = AgentMessage::from_value(message.clone()).estimated_tokens();
                (tokens, system_digest(message))
            });
            let system_own = system.map(system_own).unwrap_or_default();
            let first_kept_entry_id = boxed_str(value.get("firstKeptEntryId"));
            let usage = value
                .get("usage")
                .filter(|usage| usage.is_object())
                .map(Usage::from_value);
            let (summary_tokens, summarizer_output_tokens) = match SessionEntry::from_value(value) {
                SessionEntry::Compaction(compaction) => (
                    compaction.summary_message().estimated_tokens(),
                    sol_occ::tokens::estimate_utf8_tokens(
                        compaction.summary.as_deref().unwrap_or(""),
                    ),
                ),
                _ => (0, 0),
            };
            EntryKind::Compaction(Box::new(CompactionFacts {
                summary_tokens,
                summarizer_output_tokens,
                system_message,
                system_own,
                usage,
                first_kept_entry_id,
                tokens_before,
            }))
        }
        "branch_summary" => {
            let from_id = boxed_str(value.get("fromId"));
            let tokens = context_tokens(SessionEntry::from_value(value));
            EntryKind::BranchSummary { tokens, from_id }
        }
        "custom_message" => {
            let custom_type = names.field(value.get("customType"));
            let tokens = context_tokens(SessionEntry::from_value(value));
            EntryKind::CustomMessage {
                custom_type,
                tokens,
            }
        }
        "custom" => {
            let custom_type = names
                .field(value.get("customType"))
                .unwrap_or_else(|| names.get(""));
            let data = if custom_type.starts_with("sol-pi-") {
                value.get_mut("data").map(|data| Box::new(data.take()))
            } else {
                None
            };
            EntryKind::Custom { custom_type, data }
        }
        "context_edit" => {
            let target_id = boxed_str(value.get("targetId"));
            let replacement_tokens = match value.get_mut("replacement").map(Value::take) {
                None | Some(Value::Null) => None,
                Some(mut replacement) => {
                    let content = replacement.get_mut("content").map(Value::take);
                    let message = json!({"role": "custom", "content": content});
                    Some(AgentMessage::from_value(message).estimated_tokens())
                }
            };
            EntryKind::ContextEdit {
                target_id,
                replacement_tokens,
            }
        }
        "label" => EntryKind::Label,
        "session_info" => EntryKind::SessionInfo,
        "model_change" => EntryKind::ModelChange,
        "thinking_level_change" => EntryKind::ThinkingLevelChange,
        "usage" => EntryKind::Usage(
            value
                .get("usage")
                .map(Usage::from_value)
                .unwrap_or_default(),
        ),
        other => EntryKind::Other(other.into()),
    }
}

fn context_tokens(entry: SessionEntry) -> u64 {
    entry
        .context_message()
        .map_or(0, |message| message.estimated_tokens())
}

/// The arguments of the calls of the last assistant message that a tool result can need:
/// `bash`, `edit` and `write` calls (the reducer reads their command), by call id.
#[derive(Debug, Default)]
pub(crate) struct PendingCalls(BTreeMap<Box<str>, Value>);

/// The facts of one message, consumed.
fn message_facts(
    mut message: Value,
    version: u64,
    names: &mut Names,
    calls: &mut PendingCalls,
) -> MessageFacts {
    // Version 2 called extension messages `hookMessage`; Pi renames them when it migrates.
    if version < 3 && message.get("role").and_then(Value::as_str) == Some("hookMessage") {
        message["role"] = Value::from("custom");
    }
    let role = Role::from_name(
        message.get("role").and_then(Value::as_str).unwrap_or(""),
        names,
    );
    let timestamp = message.get("timestamp").and_then(Value::as_i64);
    let mut tool_result = None;
    let mut assistant = None;
    let mut correction = false;
    let mut system = None;
    let mut own = Box::default();
    let mut reducer_call = None;
    match role {
        Role::System => {
            system = Some(system_digest(&message));
            own = system_own(&message);
        }
        Role::ToolResult => {
            // The reducer's view needs the typed message, made below from this one.
            reducer_call = calls.take(message.get("toolCallId")).map(|input| {
                let exit_code = message
                    .get("structuredContent")
                    .and_then(sol_reducer::pi::structured_exit_code);
                (input, exit_code)
            });
            tool_result = Some(Box::new(tool_result_facts(&message, names)));
        }
        Role::Assistant => {
            calls.0.clear();
            let blocks = message.get("content").and_then(Value::as_array);
            let tool_calls = blocks
                .into_iter()
                .flatten()
                .filter(|block| block.get("type").and_then(Value::as_str) == Some("toolCall"))
                .map(|block| {
                    let id: Box<str> = boxed_str(block.get("id")).unwrap_or_default();
                    let name = names
                        .field(block.get("name"))
                        .unwrap_or_else(|| names.get(""));
                    let arguments = block.get("arguments");
                    let then_run = matches!(&*name, "edit" | "write")
                        && arguments.and_then(|a| a.get("then_run")).is_some();
                    if CANDIDATE_TOOLS.contains(&&*name) {
                        calls
                            .0
                            .insert(id.clone(), arguments.cloned().unwrap_or(Value::Null));
                    }
                    let plan_arguments = (&*name == PLAN_TOOL)
                        .then(|| Box::new(arguments.cloned().unwrap_or(Value::Null)));
                    ToolCallFacts {
                        id,
                        name,
                        then_run,
                        plan_arguments,
                        tokens: sol_core::message::tool_call_tokens(block),
                    }
                })
                .collect();
            assistant = Some(Box::new(AssistantFacts {
                tool_calls,
                usage: message.get("usage").map(Usage::from_value),
                stop_reason: names.field(message.get("stopReason")),
                model: match (
                    message.get("provider").and_then(Value::as_str),
                    message.get("model").and_then(Value::as_str),
                ) {
                    (Some(provider), Some(model)) => {
                        Some(names.get(&format!("{provider}/{model}")))
                    }
                    _ => None,
                },
                quotes: reply_quotes(blocks.map(Vec::as_slice).unwrap_or_default()),
            }));
        }
        Role::User => {
            correction = match message.get("content") {
                Some(Value::String(text)) => text.starts_with(CORRECTION_PREFIX),
                Some(content) => sol_core::message::text_blocks(&json!({ "content": content }))
                    .next()
                    .is_some_and(|text| text.starts_with(CORRECTION_PREFIX)),
                None => false,
            };
        }
        _ => {}
    }
    let message = AgentMessage::from_value(message);
    let tokens = message.estimated_tokens();
    if let (Some(facts), Some((input, exit_code)), AgentMessage::ToolResult(result)) =
        (tool_result.as_mut(), reducer_call, &message)
    {
        facts.reducer_log = reducer_log(result, &input, exit_code);
    }
    MessageFacts {
        role,
        tokens,
        timestamp,
        tool_result,
        assistant,
        correction,
        system_digest: system,
        system_own: own,
    }
}

/// Pi's estimate of a tool result without the output of the command Action Fusion ran after
/// its edit or write: the blocks before the first that starts with Action Fusion's marker
/// ([`sol_fusion::text::MARKER_PREFIX`]). `None` for a result without one.
fn fused_without(message: &Value) -> Option<u64> {
    let blocks = message.get("content").and_then(Value::as_array)?;
    let at = blocks.iter().position(|block| {
        block.get("type").and_then(Value::as_str) == Some("text")
            && block
                .get("text")
                .and_then(Value::as_str)
                .is_some_and(|text| text.starts_with(sol_fusion::text::MARKER_PREFIX))
    })?;
    let mut without = message.clone();
    without["content"] = Value::Array(blocks[..at].to_vec());
    Some(AgentMessage::from_value(without).estimated_tokens())
}

/// What SoL-Pi's tools add to a system message, as the live extension registers them:
/// ObservationPack's `obs_recall` and Online Context Compact's `update_plan`, each with its
/// line in Pi's tool list and its guidelines (Action Fusion's `then_run` is found by name).
fn system_own(message: &Value) -> Box<[ToolCall]> {
    static OWN: std::sync::OnceLock<OwnPrompt> = std::sync::OnceLock::new();
    let own = OWN.get_or_init(|| {
        let mut own = OwnPrompt::default();
        own.add_tool(
            sol_obspack::text::Names::default().recall_tool(),
            Mechanism::ObservationPack,
            Some(sol_obspack::text::prompt_snippet()),
            &[],
        );
        own.add_tool(
            PLAN_TOOL,
            Mechanism::OnlineContextCompact,
            Some(sol_occ::text::PROMPT_SNIPPET),
            &sol_occ::text::PROMPT_GUIDELINES,
        );
        own
    });
    own.system_shares(message).into_boxed_slice()
}

/// The identity of a system message: its content, sections and added tools.
fn system_digest(message: &Value) -> ContentDigest {
    let parts = json!([
        message.get("content"),
        message.get("sections"),
        message.get("toolsAdded"),
    ]);
    ContentDigest::of_texts([parts.to_string().as_str()])
}

impl PendingCalls {
    fn take(&mut self, id: Option<&Value>) -> Option<Value> {
        self.0.remove(id.and_then(Value::as_str)?)
    }
}

/// A tool result's facts, with what ObservationPack and the reducer would make of it.
/// (The reducer's log bytes are filled in by the caller, from the typed message.)
fn tool_result_facts(message: &Value, names: &mut Names) -> ToolResultFacts {
    let texts = || sol_core::message::text_blocks(message);
    let (count, bytes) = texts().fold((0u64, 0u64), |(count, bytes), text| {
        (count + 1, bytes + text.len() as u64)
    });
    let tool_name = names
        .field(message.get("toolName"))
        .unwrap_or_else(|| names.get(""));
    let tool_call_id: Box<str> = boxed_str(message.get("toolCallId")).unwrap_or_default();
    let is_error = message.get("isError").and_then(Value::as_bool) == Some(true);
    let text_bytes = bytes + count.saturating_sub(1);
    let blocks = message.get("content").and_then(Value::as_array);
    let text_only = blocks.is_some_and(|blocks| {
        !blocks.is_empty()
            && blocks.iter().all(|block| {
                block.get("type").and_then(Value::as_str) == Some("text")
                    && block.get("text").is_some_and(Value::is_string)
            })
    });
    // Only a result ObservationPack may pack is joined (over the recent-outputs placement's
    // threshold, the lowest).
    let joined = (text_only && text_bytes > sol_obspack::MEDIUM_THRESHOLD_BYTES)
        .then(|| texts().collect::<Vec<_>>().join("\n"));
    let receipt = texts().any(sol_obspack::is_receipt);
    let packable = joined.as_deref().filter(|text| {
        !is_error && sol_obspack::is_packable_over(text, sol_obspack::MEDIUM_THRESHOLD_BYTES)
    });
    let facts = |text: &str, observation: &sol_obspack::Observation, placeholder: String| {
        let sent = json!({
            "role": "toolResult",
            "toolCallId": &*tool_call_id,
            "toolName": &*tool_name,
            "content": [{"type": "text", "text": placeholder}],
            "isError": false,
        });
        PackFacts {
            placeholder_tokens: AgentMessage::from_value(sent).estimated_tokens(),
            removed_tokens: sol_obspack::removed_tokens(
                observation.tokens,
                sol_obspack::placeholder_tokens(&placeholder),
            ),
            removed_bytes: (text.len() as u64).saturating_sub(placeholder.len() as u64),
        }
    };
    let observation = packable.map(|text| sol_obspack::observe(&tool_name, &tool_call_id, text));
    let pack = packable
        .zip(observation.as_ref())
        .filter(|(text, _)| sol_obspack::is_packable(text))
        .map(|(text, observation)| {
            facts(
                text,
                observation,
                sol_obspack::placeholder(observation, text),
            )
        });
    let names = sol_obspack::text::Names::default();
    let compact = packable
        .zip(observation.as_ref())
        .filter(|(text, _)| sol_obspack::compact_pays(text, &names))
        .map(|(text, observation)| {
            facts(
                text,
                observation,
                sol_obspack::compact_placeholder_with(observation, text, &names),
            )
        });
    let reduced = message
        .get("details")
        .and_then(|details| details.get("evidencePreservingReducer"))
        .filter(|_| receipt)
        .and_then(|record| {
            let field = |key: &str| record.get(key).and_then(Value::as_u64);
            let receipt_field = |name: &str| {
                texts()
                    .flat_map(|text| text.lines())
                    .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
                    .and_then(|value| value.trim().parse().ok())
            };
            let model_tokens = receipt_field("reducer_total_tokens").unwrap_or(0);
            Some(ReducedFacts {
                source_bytes: field("sourceBytes")?,
                source_lines: receipt_field("source_lines"),
                receipt_bytes: field("receiptBytes")?,
                model_tokens,
            })
        });
    ToolResultFacts {
        tool_call_id,
        tool_name,
        is_error,
        text_bytes,
        digest: ContentDigest::of_texts(texts()),
        pack,
        compact,
        reducer_log: None,
        receipt,
        reduced,
        lines: quotable_lines(texts()),
        fused_without: fused_without(message),
    }
}

/// The log the reducer would send for `result`, the answer to a call with `input`
/// (`exit_code`: Pi 1.x's `structuredContent.exit_code`).
fn reducer_log(
    result: &ToolResultMessage,
    input: &Value,
    exit_code: Option<i32>,
) -> Option<ReducerLog> {
    let view = ToolResultView {
        tool_call_id: result.tool_call_id.as_str(),
        tool_name: &result.tool_name,
        input,
        content: &result.content,
        details: result.details.as_ref(),
        is_error: result.is_error,
        parent_tool_call_id: None,
        exit_code,
        os_temp_dir: None,
    };
    let candidate = sol_reducer::select_candidate(&view).ok()?;
    let source = sol_reducer::source::prepare_source(candidate, FullOutput::NotRead).ok()?;
    let (result_tokens, call_input_tokens) = sol_reducer::economics::source_tokens(&source);
    Some(ReducerLog {
        bytes: source.bytes(),
        result_tokens,
        call_input_tokens,
    })
}

/// An entry's `timestamp` in Unix milliseconds.
pub(crate) fn timestamp_ms(value: &Value) -> Option<i64> {
    match value.get("timestamp")? {
        Value::String(text) => iso_to_epoch_ms(text),
        Value::Number(number) => number.as_i64(),
        _ => None,
    }
}

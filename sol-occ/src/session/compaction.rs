//! A compaction's outcome as Pi reports it: its refusals and error strings, read in one place
//! ([`classify_compaction_error`]), and what the machine does next (the skip record, the
//! savings notice, the continuation).

// Everything the machine's module names (its imports and types), as when this was one file.
use super::*;

/// A compaction Pi refused without failing: the task resumes with the current context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NativeRefusal {
    /// `Nothing to compact (session too small)`.
    NothingToCompact,
    /// `Already compacted`.
    AlreadyCompacted,
    /// The summary hit its token cap and would be incomplete.
    SummaryTokenCap,
}

impl NativeRefusal {
    /// The stable code.
    pub fn code(self) -> &'static str {
        match self {
            NativeRefusal::NothingToCompact => "nothing_to_compact",
            NativeRefusal::AlreadyCompacted => "already_compacted",
            NativeRefusal::SummaryTokenCap => "summary_token_cap",
        }
    }

    /// A short reason for the reminder.
    pub fn describe(self) -> &'static str {
        match self {
            NativeRefusal::NothingToCompact => "the session is too small to compact",
            NativeRefusal::AlreadyCompacted => "the conversation was already compacted",
            NativeRefusal::SummaryTokenCap => "the summary would have been incomplete",
        }
    }
}

/// Pi's error message when there is nothing before the cut point.
pub const NOTHING_TO_COMPACT: &str = "Nothing to compact (session too small)";
/// Pi's error message when the branch already ends with a compaction.
pub const ALREADY_COMPACTED: &str = "Already compacted";
/// The end of Pi's error message when a summary stopped at its token cap.
pub const SUMMARY_TOKEN_CAP_SUFFIX: &str =
    "failed: generation hit the token cap and the summary is incomplete";
/// The labels Pi puts before [`SUMMARY_TOKEN_CAP_SUFFIX`].
pub const SUMMARY_TOKEN_CAP_LABELS: [&str; 2] = ["Summarization", "Turn prefix summarization"];
/// The skip reason of a selection dropped because Pi was not idle at the `agent_settled` that
/// ended the stopped run ([`OccSession::on_agent_settled`]).
pub const SELECTION_DROPPED_NOT_IDLE: &str = "not_idle_at_settle";
/// The message of that skip record.
pub const SELECTION_DROPPED_MESSAGE: &str = "Pi was not idle when the run stopped at the plan boundary settled; the selected compaction was dropped";
/// Pi's error message when a compaction was cancelled.
pub const COMPACTION_CANCELLED: &str = "Compaction cancelled";
/// The error name of an aborted operation.
pub const ABORT_ERROR_NAME: &str = "AbortError";

/// How a compaction error is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompactionErrorKind {
    /// Cancelled or aborted: nothing follows.
    Cancelled,
    /// Refused by Pi: resume once, record a skip.
    Refused(NativeRefusal),
    /// Anything else: resume and report the error.
    Failed,
}

/// Classifies a compaction error by its exact name and message.
pub fn classify_compaction_error(name: Option<&str>, message: &str) -> CompactionErrorKind {
    if name == Some(ABORT_ERROR_NAME) || message == COMPACTION_CANCELLED {
        return CompactionErrorKind::Cancelled;
    }
    if message == NOTHING_TO_COMPACT {
        return CompactionErrorKind::Refused(NativeRefusal::NothingToCompact);
    }
    if message == ALREADY_COMPACTED {
        return CompactionErrorKind::Refused(NativeRefusal::AlreadyCompacted);
    }
    let token_cap = SUMMARY_TOKEN_CAP_LABELS
        .iter()
        .any(|label| message == format!("{label} {SUMMARY_TOKEN_CAP_SUFFIX}"));
    if token_cap {
        return CompactionErrorKind::Refused(NativeRefusal::SummaryTokenCap);
    }
    CompactionErrorKind::Failed
}

/// The hidden message that continues the task: `pi.sendMessage({customType, content,
/// display: false}, {triggerTurn: true})`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Continuation {
    /// [`text::CONTINUATION_MESSAGE_TYPE`].
    pub custom_type: &'static str,
    /// The reminder text.
    pub content: String,
    /// Always `false`: the message is for the model only.
    pub display: bool,
    /// Always `true`: it starts a new turn.
    pub trigger_turn: bool,
}

impl Continuation {
    pub(super) fn new(content: String) -> Continuation {
        Continuation {
            custom_type: text::CONTINUATION_MESSAGE_TYPE,
            content,
            display: false,
            trigger_turn: true,
        }
    }
}

/// A savings notice for the TUI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SavingsNotice {
    /// Tokens removed.
    pub removed_tokens: u64,
    /// `ctx.ui.notify` text.
    pub notice: String,
    /// `ctx.ui.setStatus(key, text)` key.
    pub status_key: &'static str,
    /// The status text.
    pub status_text: String,
}

/// A custom entry for `pi.appendEntry(customType, data)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    /// The entry type.
    pub custom_type: &'static str,
    /// The entry data.
    pub data: Value,
}

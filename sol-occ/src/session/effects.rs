//! What a step returns: the [`Effect`]s the host carries out in order, with the step's
//! account ([`Step`]), and what the host's Pi does itself ([`PiCapabilities`]).

// Everything the machine's module names (its imports and types), as when this was one file.
use super::*;

/// What the host's Pi does itself, passed once at construction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PiCapabilities {
    /// Pi refuses tree navigation while any compaction runs (Pi 1.x); Pi 0.84.2 reports the
    /// session idle during an extension-requested compaction and lets it navigate.
    pub refuses_tree_navigation_during_compaction: bool,
}

/// One thing the host does, in the order a step lists them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Effect {
    /// `pi.appendEntry(customType, data)`: a state snapshot ([`STATE_ENTRY_TYPE`], the state
    /// as the step left it) or a skip record ([`text::SKIP_ENTRY_TYPE`]).
    AppendEntry(CustomEntry),
    /// Emit the boundary evaluation on the diagnostics channel.
    Decision(Box<BoundaryEvaluation>),
    /// `ctx.abort()`: stop the run at the selected boundary.
    Abort,
    /// Measure the context and report it with [`OccSession::on_decide_boundary`].
    Measure,
    /// `ctx.compact({customInstructions})`; report how it ended with
    /// [`OccSession::on_compaction_finished`].
    Compact {
        /// The summarizer instructions, with the progress evidence.
        custom_instructions: String,
    },
    /// A warning for the person at the terminal.
    Warn {
        /// The warning.
        text: String,
    },
    /// The savings notice and its self-clearing status line (terminal only).
    SavingsNotice(SavingsNotice),
    /// `pi.sendMessage(continuation, {triggerTurn})`; then report whether Pi is still idle
    /// with [`OccSession::on_continuation_sent`].
    SendMessage(Continuation),
    /// Pi started the continuation's turn inside this `agent_settled` dispatch (Pi 0.84.2):
    /// keep the dispatch open until the continuation's own `agent_settled` ends it.
    WaitForContinuation,
    /// A settlement nested in a running boundary compaction: a continuation this dispatch
    /// found waiting keeps waiting (it is not the continuation's own settlement).
    KeepWaiting,
    /// Fail the `agent_settled` dispatch with this error (Pi reports an extension error).
    Fail {
        /// The error text.
        error: String,
    },
}

/// One line per effect, saying what the host does: for a log, a trace or a test. Texts of
/// several lines (a warning, the notice, an error) are joined with ` / `.
///
/// ```
/// use sol_occ::session::Effect;
///
/// assert_eq!(Effect::Abort.to_string(), "abort the run");
/// assert_eq!(Effect::Warn { text: "a\nb".into() }.to_string(), "warn: a / b");
/// ```
impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one_line = |text: &str| text.lines().collect::<Vec<_>>().join(" / ");
        match self {
            Effect::AppendEntry(entry) => write!(f, "save {}", entry.custom_type),
            Effect::Decision(evaluation) => write!(
                f,
                "decision compact={} reason={} removable_tokens={}",
                evaluation.decision.compact,
                evaluation.decision.reason.code(),
                evaluation.estimate.removable_tokens
            ),
            Effect::Abort => f.write_str("abort the run"),
            Effect::Measure => f.write_str("measure the context"),
            Effect::Compact {
                custom_instructions,
            } => write!(
                f,
                "compact ({} chars of instructions)",
                custom_instructions.chars().count()
            ),
            Effect::Warn { text } => write!(f, "warn: {}", one_line(text)),
            Effect::SavingsNotice(notice) => write!(f, "notice: {}", one_line(&notice.notice)),
            Effect::SendMessage(continuation) => write!(
                f,
                "send the continuation ({} chars)",
                continuation.content.chars().count()
            ),
            Effect::WaitForContinuation => f.write_str("wait for the continuation"),
            Effect::KeepWaiting => f.write_str("keep waiting"),
            Effect::Fail { error } => write!(f, "fail: {}", one_line(error)),
        }
    }
}

/// What one step left for the host, and what it saved and cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// The effects, to be carried out in this order.
    pub effects: Vec<Effect>,
    /// What the step saved and spent (a completed compaction: one model call and the
    /// tokens it removed).
    pub account: StepAccount,
}

/// The step's effects in order, as one line: `[save …, abort the run]` ([`Effect`]'s
/// `Display`); `[]` for a step with nothing to do. The account is not part of it.
///
/// ```
/// use sol_occ::session::{Effect, Step};
///
/// let step = Step { effects: vec![Effect::Measure], ..Step::default() };
/// assert_eq!(step.to_string(), "[measure the context]");
/// assert_eq!(Step::default().to_string(), "[]");
/// ```
impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (index, effect) in self.effects.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{effect}")?;
        }
        f.write_str("]")
    }
}

impl Step {
    pub(super) fn of(effects: Vec<Effect>) -> Step {
        Step {
            effects,
            account: StepAccount::default(),
        }
    }
}

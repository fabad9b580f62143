//! The events the host reports, as values (Pi's context, input, turn, boundary measurement
//! and compaction), and what a step answers beside its effects: the plan tool's result and
//! the boundary evaluation.

// Everything the machine's module names (its imports and types), as when this was one file.
use super::*;

/// What the host observed of the messages the model sees (a `context` event's messages, or
/// the session's messages at start, tree navigation and compaction).
///
/// A request needs only the total; a boundary decision also needs each message's size and
/// identity. The Pi host sizes the messages itself on every request and reports
/// [`Observation::Total`], keeping the sized list of its latest observation; it hands that
/// list over only when a boundary is evaluated ([`BoundaryMeasurement::observed`]). Both
/// forms give the same decisions when the list the host hands over is the one it summed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// Every message, sized.
    Sized(Vec<SizedMessage>),
    /// Only the sum of the message sizes; the host holds the sized list.
    Total(u64),
}

impl Observation {
    /// The sum of the observed message sizes.
    pub fn total_tokens(&self) -> u64 {
        match self {
            Observation::Sized(messages) => ObservedContext::new(messages).total_tokens(),
            Observation::Total(total) => *total,
        }
    }
}

impl From<Vec<SizedMessage>> for Observation {
    fn from(messages: Vec<SizedMessage>) -> Observation {
        Observation::Sized(messages)
    }
}

/// The messages of one `context` event.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextEvent {
    /// Whether the event's signal was already aborted (a build that never reaches the
    /// provider).
    pub aborted: bool,
    /// The messages the event carried (after earlier transformers), as observed.
    pub observation: Observation,
}

impl ContextEvent {
    /// Sizes the event's messages.
    pub fn new(aborted: bool, messages: &[AgentMessage]) -> ContextEvent {
        ContextEvent {
            aborted,
            observation: Observation::Sized(SizedMessage::from_messages(messages)),
        }
    }

    /// An event whose messages the host sized and summed itself.
    pub fn total(aborted: bool, total_tokens: u64) -> ContextEvent {
        ContextEvent {
            aborted,
            observation: Observation::Total(total_tokens),
        }
    }
}

/// The user input of an `input` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputEvent {
    /// The input text.
    pub text: String,
    /// Pi's `streamingBehavior`: `steer`, `followUp` or none.
    pub streaming_behavior: Option<String>,
}

/// Inputs starting with this are corrections.
pub const CORRECTION_PREFIX: &str = "CORRECTION:";

/// The `details` of an `update_plan` result (snake_case keys).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanToolDetails {
    /// Whether the call completed a registered step.
    pub boundary: bool,
    /// The steps it completed.
    pub completed_step_ids: Vec<String>,
    /// Whether its progress report was kept (a boundary with progress).
    pub progress_recorded: bool,
    /// Always `active`.
    pub task_status: &'static str,
    /// The plan as stored.
    pub plan: Vec<PlanStep>,
}

/// The result of an accepted `update_plan` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanToolOutput {
    /// The text the model reads.
    pub text: String,
    /// The tool result details.
    pub details: PlanToolDetails,
    /// The transition analysis.
    pub transition: PlanTransition,
}

/// Why an `update_plan` call failed; the message is the tool's error text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanToolError {
    /// The call's signal was aborted before it ran.
    #[error("Plan update was aborted")]
    Aborted,
    /// The arguments were invalid.
    #[error(transparent)]
    Invalid(#[from] PlanError),
}

impl PlanToolError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            PlanToolError::Aborted => "aborted",
            PlanToolError::Invalid(error) => error.code(),
        }
    }
}

/// One tool result of the ending turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnToolResult {
    /// The call id.
    pub tool_call_id: String,
    /// The tool name.
    pub tool_name: String,
    /// Whether the result is an error.
    pub is_error: bool,
}

impl TurnToolResult {
    /// One tool result of the ending turn.
    ///
    /// ```
    /// use sol_occ::session::TurnToolResult;
    ///
    /// let result = TurnToolResult::new("call-2", "update_plan", false);
    /// assert_eq!((result.tool_call_id.as_str(), result.is_error), ("call-2", false));
    /// ```
    pub fn new(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        is_error: bool,
    ) -> TurnToolResult {
        TurnToolResult {
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
            is_error,
        }
    }
}

/// Why the assistant message that ends a turn stopped.
///
/// Pi's `stopReason` strings are read in one place, [`StopReason::parse`], and written back
/// by [`StopReason::name`]: `parse(name)` gives the reason back for every variant, and
/// `name(parse(s))` gives `s` back for every string. Only [`StopReason::Error`] and
/// [`StopReason::Aborted`] keep a plan boundary from being evaluated.
///
/// ```
/// use sol_occ::session::StopReason;
///
/// assert_eq!(StopReason::parse("toolUse"), StopReason::ToolUse);
/// assert_eq!(StopReason::parse("refusal"), StopReason::Unknown("refusal".into()));
/// assert_eq!(StopReason::Length.name(), "length");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StopReason {
    /// The model called tools (`toolUse`).
    ToolUse,
    /// The model finished its answer (`stop`).
    Stop,
    /// The reply hit its token limit (`length`).
    Length,
    /// The provider reported an error (`error`).
    Error,
    /// The run was aborted (`aborted`).
    Aborted,
    /// Any other reason, as the host named it. Built by [`StopReason::parse`] only for
    /// names that are none of the above.
    Unknown(String),
}

impl StopReason {
    /// Reads Pi's `stopReason` string.
    pub fn parse(name: &str) -> StopReason {
        match name {
            "toolUse" => StopReason::ToolUse,
            "stop" => StopReason::Stop,
            "length" => StopReason::Length,
            "error" => StopReason::Error,
            "aborted" => StopReason::Aborted,
            other => StopReason::Unknown(other.to_owned()),
        }
    }

    /// Pi's name of the reason.
    pub fn name(&self) -> &str {
        match self {
            StopReason::ToolUse => "toolUse",
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Unknown(name) => name,
        }
    }
}

impl From<String> for StopReason {
    fn from(name: String) -> StopReason {
        StopReason::parse(&name)
    }
}

impl From<StopReason> for String {
    fn from(reason: StopReason) -> String {
        reason.name().to_owned()
    }
}

/// The data of a `turn_end` event.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEnd {
    /// The assistant message's stop reason, when the host has one.
    pub stop_reason: Option<StopReason>,
    /// Whether the context's signal is aborted.
    pub aborted: bool,
    /// The turn's tool results.
    pub tool_results: Vec<TurnToolResult>,
}

impl TurnEnd {
    /// A turn that ended normally after calling tools ([`StopReason::ToolUse`], not
    /// aborted) with these results.
    ///
    /// ```
    /// use sol_occ::session::{StopReason, TurnEnd, TurnToolResult};
    ///
    /// let turn = TurnEnd::after_tools(vec![TurnToolResult::new("call-2", "update_plan", false)]);
    /// assert_eq!(turn.stop_reason, Some(StopReason::ToolUse));
    /// assert!(!turn.aborted);
    /// ```
    pub fn after_tools(tool_results: Vec<TurnToolResult>) -> TurnEnd {
        TurnEnd {
            stop_reason: Some(StopReason::ToolUse),
            aborted: false,
            tool_results,
        }
    }
}

/// The measurements the host takes for a boundary decision.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryMeasurement {
    /// `ctx.getContextUsage()?.tokens` (used when a positive safe integer).
    pub reported_tokens: Option<f64>,
    /// `ctx.getContextUsage()?.contextWindow`.
    pub usage_context_window: Option<f64>,
    /// `ctx.model?.contextWindow`.
    pub model_context_window: Option<f64>,
    /// `ceil(UTF-8 bytes of the system prompt / 4)` ([`system_prompt_tokens`]).
    pub system_prompt_tokens: u64,
    /// Pi's canonical projection of the branch.
    pub projection: NativeProjection,
    /// Pi's compaction settings ([`crate::settings::resolve_compaction_settings`]).
    pub settings: CompactionSettings,
    /// The sized messages of the host's latest observation, when it reported only their
    /// total ([`Observation::Total`]); ignored when the session holds the sized messages.
    pub observed: Option<Vec<SizedMessage>>,
}

impl BoundaryMeasurement {
    /// The measurement of a host without Pi's session entries: the conversation it sent
    /// (`messages`, the sized list of its latest observation) is also the branch, one
    /// projected entry per message ([`NativeProjection::from_messages`]), in a window of
    /// `context_window` tokens, with no reported size, no system prompt and Pi's default
    /// compaction settings (the session's `keep_recent_tokens` option still wins). The
    /// fields are public for a host that measured more.
    ///
    /// ```
    /// use sol_occ::session::BoundaryMeasurement;
    /// use sol_occ::tokens::{MessageRole, SizedMessage};
    ///
    /// let messages = vec![SizedMessage::new(MessageRole::User, 2_000, "message-0")];
    /// let measurement = BoundaryMeasurement::from_observed(messages.clone(), 200_000);
    /// assert_eq!(measurement.projection.entries.len(), 1);
    /// assert_eq!(measurement.usage_context_window, Some(200_000.0));
    /// assert_eq!(measurement.observed, Some(messages));
    /// ```
    pub fn from_observed(messages: Vec<SizedMessage>, context_window: u64) -> BoundaryMeasurement {
        BoundaryMeasurement {
            reported_tokens: None,
            // Context windows are far below 2^53, so the conversion is exact.
            usage_context_window: Some(context_window as f64),
            model_context_window: None,
            system_prompt_tokens: 0,
            projection: NativeProjection::from_messages(&messages),
            settings: CompactionSettings::default(),
            observed: Some(messages),
        }
    }
}

/// Pi's estimate of the system prompt.
pub fn system_prompt_tokens(system_prompt: &str) -> u64 {
    estimate_utf8_tokens(system_prompt)
}

/// A boundary decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BoundaryEvaluation {
    /// The economics, possibly overruled as `native_not_compactable`.
    pub decision: BoundaryDecision,
    /// The cut-point estimate behind the archive size.
    pub estimate: NativeCutEstimate,
    /// Whether the compaction is selected: the step ends with [`Effect::Abort`]
    /// (`ctx.abort()`); the compaction runs from the next `agent_settled` if Pi is idle there.
    pub abort: bool,
}

/// A `session_before_compact` reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// `/compact`, or an extension's `ctx.compact()`.
    Manual,
    /// Pi's own compaction near the window limit.
    Threshold,
    /// Pi's compaction after a context-overflow error.
    Overflow,
}

impl CompactionTrigger {
    /// Reads Pi's reason string; unknown reasons count as manual (never cancelled).
    pub fn parse(reason: &str) -> CompactionTrigger {
        match reason {
            "threshold" => CompactionTrigger::Threshold,
            "overflow" => CompactionTrigger::Overflow,
            _ => CompactionTrigger::Manual,
        }
    }
}

/// How `ctx.compact()` ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CompactionResult {
    /// `onComplete` with the summary.
    Completed {
        /// The summary text.
        summary: String,
    },
    /// `onError`.
    Failed {
        /// The error's `name`, such as `AbortError`.
        name: Option<String>,
        /// The error's `message`.
        message: String,
    },
    /// Neither callback came: the session shut down while the host waited. Nothing
    /// follows, as for a cancelled compaction.
    Abandoned,
}

impl CompactionResult {
    /// `onComplete` with this summary.
    ///
    /// ```
    /// use sol_occ::session::CompactionResult;
    ///
    /// let result = CompactionResult::completed("## Goal\nShip it.");
    /// assert_eq!(result, CompactionResult::Completed { summary: "## Goal\nShip it.".into() });
    /// ```
    pub fn completed(summary: impl Into<String>) -> CompactionResult {
        CompactionResult::Completed {
            summary: summary.into(),
        }
    }
}

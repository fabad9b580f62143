//! Online Context Compact in the session engine: `Occ`, the `sol_occ::OccSession` state
//! machine with the session's book, behind the [`Engine`](crate::engine::Engine)'s Online
//! Context Compact entries (`engine/compact.rs`), and the shapes its events and measurements
//! cross in. No decision is made on the JavaScript side; with Online Context Compact off,
//! every entry has no effects.
//!
//! Inputs cross as plain objects; branch entries and the projection cross as
//! JSON values and are converted once, here, into `sol_core::session` types
//! (which never fail: unmodelled shapes are kept as they are); settings are
//! read by `sol-occ` itself. Pi's messages never
//! cross on a request: the host sizes them with Pi's estimate and reports their total; the
//! sized list of its latest observation crosses only with a boundary measurement.

use sol_occ::session::StopReason;
use std::sync::{Mutex, MutexGuard, PoisonError};

use napi::{Error, Result};
use napi_derive::napi;
use serde_json::Value;
use sol_core::Mechanism;
use sol_core::message::AgentMessage;
use sol_core::session::{SessionEntry, SessionProjection};
use sol_occ::OccSession;
use sol_occ::estimate::NativeProjection;
use sol_occ::plan::{StepStatus, TOOL_NAME};
use sol_occ::session::{
    BoundaryMeasurement, ContextEvent, Effect, PiCapabilities, Step, TurnEnd, TurnToolResult,
    system_prompt_tokens,
};
use sol_occ::settings::{CompactionSettings, ModelRef, OccOptions, resolve_compaction_settings};
use sol_occ::state::STATE_ENTRY_TYPE;
use sol_occ::text;
use sol_occ::tokens::SizedMessage;

use crate::account::count;
use crate::boundary::quiet;
use crate::savings::SharedBook;

/// The factory options.
#[napi(object)]
pub struct OccCreateOptions {
    /// `cacheWriteReadRatio` from `sol-pi.json`; absent means unknown.
    pub cache_write_read_ratio: Option<f64>,
    /// An explicit retained tail that overrides Pi's settings.
    pub keep_recent_tokens: Option<f64>,
    /// Pi refuses tree navigation during any compaction itself (Pi 1.x); absent: false.
    pub pi_refuses_tree_navigation_during_compaction: Option<bool>,
}

/// Every fixed text and name the host needs, fetched once at registration.
#[napi(object)]
pub struct OccTexts {
    /// `update_plan`.
    pub tool_name: String,
    /// The tool's label.
    pub tool_label: String,
    /// Who may call the tool, where Pi lets an extension say (`exposure`, Pi 1.x).
    pub tool_exposure: String,
    /// The tool's description.
    pub tool_description: String,
    /// The prompt snippet.
    pub prompt_snippet: String,
    /// The prompt guidelines.
    pub prompt_guidelines: Vec<String>,
    /// The tool parameters as JSON Schema, with the bounds of `sol_occ::plan`.
    #[napi(ts_type = "unknown")]
    pub parameters_schema: Value,
    /// Custom entry type of the state snapshots.
    pub state_entry_type: String,
    /// Custom message type of the hidden continuations.
    pub continuation_message_type: String,
    /// Custom entry type of refused compactions.
    pub skip_entry_type: String,
    /// First badge line.
    pub badge_title: String,
    /// Second badge line.
    pub badge_saving: String,
    /// Result row while the call runs.
    pub render_partial: String,
    /// Result row of a boundary.
    pub render_boundary: String,
    /// Result row of any other plan call.
    pub render_plan: String,
}

/// The fixed texts.
#[napi(catch_unwind)]
pub fn occ_texts() -> OccTexts {
    quiet(|| OccTexts {
        tool_name: TOOL_NAME.to_owned(),
        tool_label: text::TOOL_LABEL.to_owned(),
        tool_exposure: text::TOOL_EXPOSURE.to_owned(),
        tool_description: text::TOOL_DESCRIPTION.to_owned(),
        prompt_snippet: text::PROMPT_SNIPPET.to_owned(),
        prompt_guidelines: text::PROMPT_GUIDELINES
            .iter()
            .map(|line| (*line).to_owned())
            .collect(),
        parameters_schema: text::tool_parameters_schema(),
        state_entry_type: STATE_ENTRY_TYPE.to_owned(),
        continuation_message_type: text::CONTINUATION_MESSAGE_TYPE.to_owned(),
        skip_entry_type: text::SKIP_ENTRY_TYPE.to_owned(),
        badge_title: text::badge_title(),
        badge_saving: text::badge_saving(),
        render_partial: text::RENDER_PARTIAL.to_owned(),
        render_boundary: text::RENDER_BOUNDARY.to_owned(),
        render_plan: text::RENDER_PLAN.to_owned(),
    })
}

/// The call row of `update_plan` for whatever arguments the model sent.
#[napi(catch_unwind, ts_args_type = "args: unknown")]
pub fn occ_render_call(args: Value) -> String {
    quiet(|| {
        let steps = args
            .get("steps")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let completed = steps
            .iter()
            .filter(|step| {
                step.get("status").and_then(Value::as_str) == Some(StepStatus::Completed.as_str())
            })
            .count();
        text::render_call(steps.len(), completed)
    })
}

/// The estimate of a message Pi's own `estimateTokens` cannot size (it throws, or gives no
/// number: a malformed message, which Pi's compaction could not size either), by the same
/// rule as every message Rust sizes (`AgentMessage::estimated_tokens`). The extension sizes
/// every other message with Pi's function, so this crosses only for such a message.
#[napi(catch_unwind, ts_args_type = "message: unknown")]
pub fn message_tokens(message: Value) -> f64 {
    quiet(|| AgentMessage::from_value(message).estimated_tokens() as f64)
}

/// The message reported once when Online Context Compact itself fails; the
/// session goes on without a compaction.
#[napi(catch_unwind)]
pub fn occ_internal_error(detail: String) -> String {
    quiet(|| {
        let detail: String = detail
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        format!(
            "SoL-Pi {}: internal error ({detail}); no compaction this time, the session continues.",
            text::MECHANISM_LABEL
        )
    })
}

/// One tool result of the ending turn.
#[napi(object)]
pub struct OccTurnToolResult {
    /// `toolCallId`.
    pub tool_call_id: String,
    /// `toolName`.
    pub tool_name: String,
    /// `isError`.
    pub is_error: bool,
}

/// A `context` event the host carries into Rust with the next step instead of on its own
/// (`Occ.beforeProviderRequest` and `Occ.turnEnd` take it and apply it first; before any
/// other step the host hands it over with `Occ.context`), so that Rust sees Pi's events in
/// their order with one crossing fewer per request.
#[napi(object)]
pub struct OccContextSeen {
    /// Whether `ctx.signal` was aborted at the `context` event.
    pub aborted: bool,
    /// The total size of the messages, as the host sized them.
    pub observed_tokens: f64,
}

/// Applies a `context` event carried with a step, before the step.
pub(crate) fn seen_first(session: &mut OccSession, context: Option<OccContextSeen>) {
    if let Some(seen) = context {
        session.on_context(ContextEvent::total(
            seen.aborted,
            count(seen.observed_tokens),
        ));
    }
}

/// The data of a `turn_end` event.
#[napi(object)]
pub struct OccTurnEndInput {
    /// The assistant message's `stopReason`.
    pub stop_reason: Option<String>,
    /// Whether `ctx.signal` is aborted.
    pub aborted: bool,
    /// The turn's tool results.
    pub tool_results: Vec<OccTurnToolResult>,
}

/// One message as the host sized it (see `sol-pi/online-context-compact-sizes.ts`).
#[napi(object)]
pub struct OccObservedMessage {
    /// The message's `role` field (empty when it is not a string).
    pub role: String,
    /// Pi's estimate of the message, `ceil(chars / 4)`.
    pub tokens: f64,
    /// The message's `timestamp` field when it is a number or a string.
    #[napi(ts_type = "number | string")]
    pub timestamp: Option<Value>,
    /// The whole message when it has no such timestamp: its identity comes from its content.
    #[napi(ts_type = "unknown")]
    pub message: Option<Value>,
}

pub(crate) fn observed_list(observed: Vec<OccObservedMessage>) -> Vec<SizedMessage> {
    observed
        .into_iter()
        .map(|message| {
            let content = message.message.map(AgentMessage::from_value);
            SizedMessage::from_parts(
                &message.role,
                count(message.tokens),
                message.timestamp.as_ref(),
                content.as_ref(),
            )
        })
        .collect()
}

/// The measurements of a boundary decision.
#[napi(object)]
pub struct OccMeasurement {
    /// `ctx.getContextUsage()?.tokens`.
    pub reported_tokens: Option<f64>,
    /// `ctx.getContextUsage()?.contextWindow`.
    pub usage_context_window: Option<f64>,
    /// `ctx.model?.contextWindow`.
    pub model_context_window: Option<f64>,
    /// `ctx.getSystemPrompt()`.
    pub system_prompt: String,
    /// `ctx.sessionManager.getBranch()`, root first.
    #[napi(ts_type = "ReadonlyArray<unknown>")]
    pub branch: Vec<Value>,
    /// `ctx.sessionManager.buildSessionProjection()` where Pi has it (1.x).
    #[napi(ts_type = "unknown")]
    pub projection: Option<Value>,
    /// `pi.getSettings()` where Pi has it (1.x).
    #[napi(ts_type = "unknown")]
    pub settings: Option<Value>,
    /// `ctx.model?.provider`.
    pub model_provider: Option<String>,
    /// `ctx.model?.id`.
    pub model_id: Option<String>,
    /// The sized messages of the host's latest observation (the ones whose total it
    /// reported last).
    pub observed: Vec<OccObservedMessage>,
}

/// A boundary decision.
#[napi(object)]
pub struct OccEvaluation {
    /// Whether the compaction is selected: save the state, then `ctx.abort()`.
    pub abort: bool,
    /// The decision's reason code.
    pub reason: String,
    /// The whole decision, with its inputs and intermediate values.
    #[napi(ts_type = "Record<string, unknown>")]
    pub decision: Value,
    /// The native-cut estimate behind the archive size.
    #[napi(ts_type = "Record<string, unknown>")]
    pub estimate: Value,
    /// The compaction settings used.
    pub keep_recent_tokens: f64,
    /// The reserve used for window protection.
    pub reserve_tokens: f64,
}

/// How `ctx.compact()` ended, as the shell saw it.
#[napi(discriminant = "kind", discriminant_case = "camelCase")]
pub enum OccCompactionResult {
    /// `onComplete`, with the summary.
    Completed {
        /// The summary of the compaction.
        summary: Option<String>,
        /// The `usage` Pi reported for the summary's model call, where it reports one.
        #[napi(ts_type = "unknown")]
        usage: Option<Value>,
    },
    /// `onError`, with the error's name and message.
    Failed {
        /// The error's `name`.
        name: Option<String>,
        /// The error's `message`.
        message: Option<String>,
    },
    /// Neither callback came: the session shut down while the shell waited.
    Abandoned,
}

/// The hidden message that continues the task.
#[napi(object)]
pub struct OccContinuation {
    /// Custom message type.
    pub custom_type: String,
    /// The reminder.
    pub content: String,
    /// `display` (always false).
    pub display: bool,
    /// `triggerTurn` (always true).
    pub trigger_turn: bool,
}

/// The savings notice (terminal only), in the shape `SavingsStatus.showNotice` takes.
#[napi(object)]
pub struct OccSavingsNotice {
    /// Tokens removed.
    pub removed_tokens: f64,
    /// `ctx.ui.notify` text.
    pub notice: String,
    /// `ctx.ui.setStatus` key.
    pub status_key: String,
    /// `ctx.ui.setStatus` text.
    pub status: String,
    /// How long the status stays, in milliseconds.
    pub status_clear_ms: u32,
}

/// Pi's branch entries as `sol_core` reads them, numbers as they crossed (a boundary's
/// measurement; the restores read the branch through `engine::branch_entries`, which turns
/// whole-number floats into integers).
fn entries(branch: Vec<Value>) -> Vec<SessionEntry> {
    SessionEntry::from_values(branch)
}

/// Online Context Compact in a session's engine: the state machine, and the session's book,
/// where every step records its account.
pub(crate) struct Occ {
    session: Mutex<OccSession>,
    pub(crate) book: SharedBook,
}

impl Occ {
    /// Validates the options; their error message when invalid.
    pub(crate) fn new(options: OccCreateOptions, book: SharedBook) -> Result<Self> {
        let capabilities = PiCapabilities {
            refuses_tree_navigation_during_compaction: options
                .pi_refuses_tree_navigation_during_compaction
                .unwrap_or(false),
        };
        let options = OccOptions::new(options.cache_write_read_ratio, options.keep_recent_tokens)
            .map_err(|error| Error::from_reason(error.to_string()))?;
        Ok(Occ {
            session: Mutex::new(OccSession::with_capabilities(options, capabilities)),
            book,
        })
    }

    pub(crate) fn session(&self) -> MutexGuard<'_, OccSession> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One step of the state machine: `run` over the session, then the step's account booked
    /// (the session unlocked); its effects for the host.
    pub(crate) fn step(&self, run: impl FnOnce(&mut OccSession) -> Step) -> Vec<Effect> {
        self.step_with(|session| ((), run(session))).1
    }

    /// [`Occ::step`] for a step that also gives an outcome (`update_plan`'s result).
    pub(crate) fn step_with<T>(
        &self,
        run: impl FnOnce(&mut OccSession) -> (T, Step),
    ) -> (T, Vec<Effect>) {
        let (outcome, step) = run(&mut self.session());
        self.book
            .record_step(Mechanism::OnlineContextCompact, step.account);
        (outcome, step.effects)
    }

    /// `session_shutdown` (the step never has effects).
    pub(crate) fn session_shutdown(&self) {
        self.session().on_session_shutdown();
    }

    /// `turn_end`, after the `context` event carried with it: ends the turn's request, takes
    /// the pending boundary; `measure` when it is to be evaluated.
    pub(crate) fn turn_end(
        &self,
        turn: OccTurnEndInput,
        context: Option<OccContextSeen>,
    ) -> Vec<Effect> {
        let turn = TurnEnd {
            stop_reason: turn.stop_reason.as_deref().map(StopReason::parse),
            aborted: turn.aborted,
            tool_results: turn
                .tool_results
                .into_iter()
                .map(|result| TurnToolResult {
                    tool_call_id: result.tool_call_id,
                    tool_name: result.tool_name,
                    is_error: result.is_error,
                })
                .collect(),
        };
        self.step(|session| {
            seen_first(session, context);
            session.on_turn_end(&turn)
        })
    }

    /// The measurement a `measure` effect asked for: the decision, and for a selected
    /// compaction the snapshot and `abort`.
    pub(crate) fn decide_boundary(
        &self,
        measurement: OccMeasurement,
    ) -> (Vec<Effect>, CompactionSettings) {
        let branch = entries(measurement.branch);
        let leaf_compaction = branch.last().is_some_and(SessionEntry::is_compaction);
        let projection = match &measurement.projection {
            // A value without the projection's shape projects nothing.
            Some(projection) => NativeProjection::from_session_projection(
                &SessionProjection::from_value(projection).unwrap_or_default(),
                leaf_compaction,
            ),
            None => NativeProjection::from_branch(&branch),
        };
        let model = match (measurement.model_provider, measurement.model_id) {
            (Some(provider), Some(id)) => Some(ModelRef { provider, id }),
            _ => None,
        };
        let keep_recent_tokens = self.session().options().keep_recent_tokens;
        let settings = resolve_compaction_settings(
            measurement.settings.as_ref(),
            model.as_ref(),
            keep_recent_tokens,
        );
        let measurement = BoundaryMeasurement {
            reported_tokens: measurement.reported_tokens,
            usage_context_window: measurement.usage_context_window,
            model_context_window: measurement.model_context_window,
            system_prompt_tokens: system_prompt_tokens(&measurement.system_prompt),
            projection,
            settings,
            observed: Some(observed_list(measurement.observed)),
        };
        let effects = self.step(|session| session.on_decide_boundary(&measurement));
        (effects, settings)
    }
}

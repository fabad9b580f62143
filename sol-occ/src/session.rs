//! The mechanism as a state machine the host drives with Pi's events.
//!
//! [`OccSession`] owns the persisted [`OccState`] and the transient state of one Pi session
//! (the request mark, the pending plan boundary, a selected or running compaction). The host
//! feeds it one event at a time through the `on_*` steps; each returns a [`Step`]: the
//! [`Effect`]s the host carries out in order with its own APIs (append a state snapshot or a
//! skip record, `ctx.abort()`, `ctx.compact()`, `pi.sendMessage()`, a notice, the decision
//! for diagnostics, wait, fail) and a [`StepAccount`] of what the step saved and spent. A
//! state snapshot is an effect of the step that changed the state, never polled. What the
//! host's Pi does itself is a [`PiCapabilities`] given once at construction. The steps are
//! the session's only way to change; its other methods construct it or read it.
//!
//! # A boundary, end to end
//!
//! 1. `update_plan` completes a registered step → [`OccSession::on_update_plan`] records the
//!    boundary, remembers the tool call and returns the snapshot.
//! 2. `turn_end` → [`OccSession::on_turn_end`] checks the turn ended normally and the plan
//!    call succeeded; [`Effect::Measure`] asks the host for the context measurements, which
//!    it reports with [`OccSession::on_decide_boundary`]: the decision
//!    ([`Effect::Decision`]) and, when it compacts, [`Effect::Abort`].
//! 3. `agent_settled` → [`OccSession::on_agent_settled`] returns [`Effect::Compact`] with the
//!    instructions if Pi is idle. The selection is valid only for this settlement, which
//!    ends the stopped run: if Pi is not idle there it is dropped and recorded (the skip
//!    record as [`Effect::AppendEntry`]), never carried to a later one.
//! 4. `session_compact` → [`OccSession::on_session_compact`] records the compaction and its
//!    cache debt.
//! 5. `onComplete` / `onError` → [`OccSession::on_compaction_finished`]: a skip record, the
//!    snapshot, a warning or the savings notice, and the continuation
//!    ([`Effect::SendMessage`]), or nothing (cancellation). A completed compaction accounts
//!    one model call and the tokens it removed.
//! 6. The host sent the continuation and reports whether Pi is still idle
//!    ([`OccSession::on_continuation_sent`]): Pi 0.84.2 started the turn inside the
//!    `agent_settled` dispatch, which must stay open until the continuation's own
//!    settlement ([`Effect::WaitForContinuation`]); Pi 0.87+ deferred it (nothing to wait
//!    for). A compaction error comes last ([`Effect::Fail`]).
//!
//! Pi's error strings of a compaction are read in one place,
//! [`classify_compaction_error`].
//!
//! # Request counting
//!
//! A `context` event marks the next `before_provider_request` as a request; the assistant
//! `message_end` that ends it clears the mark, and so does the `turn_end` that follows it (Pi
//! ends every assistant message's turn, an error or abort included, before the next
//! `context`; a host may report either, and the Pi extension reports only `turn_end`).
//! Builds whose `context` arrives with an aborted signal never reach the provider and are
//! not counted, and Pi 1.x cache-warming replays (a `before_provider_request` without a
//! `context`) are not counted either. Session start, tree navigation, compaction and
//! shutdown clear the mark.
//!
//! ```
//! use serde_json::json;
//! use sol_core::message::AgentMessage;
//! use sol_occ::session::{ContextEvent, Effect, OccSession};
//! use sol_occ::settings::OccOptions;
//! use sol_occ::tokens::MessageRole;
//!
//! let mut occ = OccSession::new(OccOptions { cache_write_read_ratio: Some(12.5), keep_recent_tokens: None });
//! occ.on_restore(&[]);
//! let messages = vec![AgentMessage::from_value(json!({"role": "user", "content": "hello", "timestamp": 1}))];
//! occ.on_context(ContextEvent::new(false, &messages));
//! // The counted request's state snapshot is an effect of the step that counted it.
//! let step = occ.on_before_provider_request(None, 0);
//! assert!(matches!(step.effects.as_slice(), [Effect::AppendEntry(entry)] if entry.data["requestCount"] == 1));
//! assert!(occ.on_before_provider_request(None, 0).effects.is_empty()); // a replay
//! occ.on_message_end(MessageRole::Assistant);
//! assert_eq!(occ.state().request_count, 1);
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sol_core::StepAccount;
use sol_core::message::AgentMessage;
use sol_core::session::SessionEntry;

use crate::economics::{BoundaryDecision, EconomicsInput, EconomicsParams, MEMO_TOKENS, decide};
use crate::estimate::{NativeCutEstimate, NativeProjection, ObservedContext, estimate_native_cut};
use crate::instructions::compaction_instructions;
use crate::plan::{
    PlanError, PlanStep, PlanTransition, ProgressSummary, TOOL_NAME, analyze_transition,
    parse_update_plan_named, remaining_steps,
};
use crate::settings::{CompactionSettings, OccOptions, positive_safe_integer};
use crate::state::{CacheDebt, OccState, STATE_ENTRY_TYPE, StateError, restore_from_branch};
use crate::text;
use crate::tokens::{MessageRole, SizedMessage, estimate_utf8_tokens};

mod compaction;
mod effects;
mod events;

pub use compaction::*;
pub use effects::*;
pub use events::*;

/// Whether the next `before_provider_request` is an agent request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RequestMark {
    /// No agent request is being built.
    Clear,
    /// A `context` event announced a request that has not reached the provider yet.
    Marked,
    /// The announced request was counted; its assistant `message_end` is still to come.
    Counted,
}

/// Where a boundary compaction stands.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Idle,
    /// Selected at a boundary; waiting for the run to settle.
    Selected(Selection),
    /// `ctx.compact()` is running.
    Compacting(Selection, CompactionProgress),
}

#[derive(Debug, Clone, PartialEq)]
struct Selection {
    decision: BoundaryDecision,
    estimate: NativeCutEstimate,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct CompactionProgress {
    debt: CacheDebt,
    debt_recorded: bool,
}

/// Online Context Compact for one Pi session.
#[derive(Debug, Clone, PartialEq)]
pub struct OccSession {
    options: OccOptions,
    state: OccState,
    restored: bool,
    dirty: bool,
    mark: RequestMark,
    observed: Observation,
    pending_boundary: Option<String>,
    candidate: bool,
    phase: Phase,
    retry_blocked: bool,
    capabilities: PiCapabilities,
    sent: Option<SentContinuation>,
    plan_tool: String,
}

impl OccSession {
    /// A session with the initial state, not yet restored.
    pub fn new(options: OccOptions) -> OccSession {
        OccSession {
            options,
            state: OccState::default(),
            restored: false,
            dirty: false,
            mark: RequestMark::Clear,
            observed: Observation::Sized(Vec::new()),
            pending_boundary: None,
            candidate: false,
            phase: Phase::Idle,
            retry_blocked: false,
            capabilities: PiCapabilities::default(),
            sent: None,
            plan_tool: TOOL_NAME.to_owned(),
        }
    }

    /// The same session with the plan tool registered under another model-facing name
    /// (Pi's is [`TOOL_NAME`], the default). The name is the one the continuation texts
    /// tell the model to call, and a turn's tool results with this name are plan calls
    /// rather than other work.
    ///
    /// ```
    /// use sol_occ::{OccSession, settings::OccOptions};
    ///
    /// let occ = OccSession::new(OccOptions::default()).with_plan_tool_name("set_plan");
    /// assert_eq!(occ.plan_tool_name(), "set_plan");
    /// assert_eq!(OccSession::new(OccOptions::default()).plan_tool_name(), "update_plan");
    /// ```
    pub fn with_plan_tool_name(mut self, name: impl Into<String>) -> OccSession {
        self.plan_tool = name.into();
        self
    }

    /// The plan tool's model-facing name.
    pub fn plan_tool_name(&self) -> &str {
        &self.plan_tool
    }

    /// A session for a Pi with these capabilities ([`OccSession::new`] assumes none).
    pub fn with_capabilities(options: OccOptions, capabilities: PiCapabilities) -> OccSession {
        OccSession {
            capabilities,
            ..OccSession::new(options)
        }
    }

    /// What the host's Pi does itself.
    pub fn capabilities(&self) -> PiCapabilities {
        self.capabilities
    }

    /// The options.
    pub fn options(&self) -> &OccOptions {
        &self.options
    }

    /// The persisted state.
    pub fn state(&self) -> &OccState {
        &self.state
    }

    /// Whether compaction retries are blocked after a skipped or failed compaction.
    pub fn is_retry_blocked(&self) -> bool {
        self.retry_blocked
    }

    /// Whether the state still has to be restored from the branch
    /// ([`OccSession::on_restore`]). The host restores lazily before `update_plan`,
    /// `context`, `before_provider_request`, `input` and `session_compact` when
    /// `session_start` has not.
    pub fn needs_restore(&self) -> bool {
        !self.restored
    }

    /// Restores the state from the branch (root first) without touching transient state.
    /// Returns why each snapshot newer than the restored one could not be read
    /// ([`crate::state::restore_from_branch`]).
    fn restore(&mut self, branch: &[SessionEntry]) -> Vec<StateError> {
        let restored = restore_from_branch(branch);
        self.state = restored.state;
        self.restored = true;
        restored.rejected
    }

    /// A session that starts from a state the host saved itself (for example
    /// [`OccState::to_value`] written to its own store), without a branch of session
    /// entries: nothing is left to restore.
    ///
    /// ```
    /// use sol_occ::{OccSession, OccState, settings::OccOptions};
    ///
    /// let saved = OccState { request_count: 4, ..OccState::default() };
    /// let occ = OccSession::from_state(OccOptions::default(), saved.clone());
    /// assert_eq!(occ.state(), &saved);
    /// assert!(!occ.needs_restore());
    /// ```
    pub fn from_state(options: OccOptions, state: OccState) -> OccSession {
        OccSession {
            state,
            restored: true,
            ..OccSession::new(options)
        }
    }

    /// [`OccSession::from_state`] from the saved JSON value.
    ///
    /// # Errors
    ///
    /// The [`StateError`] of a value that is not a valid snapshot (a bare snapshot is the
    /// expected input here, not an error).
    ///
    /// ```
    /// use serde_json::json;
    /// use sol_occ::{OccSession, OccState, settings::OccOptions, state::StateError};
    ///
    /// let saved = OccState { request_count: 4, ..OccState::default() }.to_value();
    /// let occ = OccSession::from_state_value(OccOptions::default(), &saved)?;
    /// assert_eq!(occ.state().request_count, 4);
    /// let damaged = json!({"version": 1, "plan": "not a list"});
    /// assert!(matches!(
    ///     OccSession::from_state_value(OccOptions::default(), &damaged),
    ///     Err(StateError::Plan(_))
    /// ));
    /// # Ok::<(), StateError>(())
    /// ```
    pub fn from_state_value(options: OccOptions, state: &Value) -> Result<OccSession, StateError> {
        Ok(OccSession::from_state(
            options,
            OccState::from_value(state)?,
        ))
    }

    fn clear_transient(&mut self) {
        self.mark = RequestMark::Clear;
        self.pending_boundary = None;
        self.candidate = false;
        self.phase = Phase::Idle;
        self.retry_blocked = false;
        self.sent = None;
    }

    /// The context size: Pi's reported size when it is a positive safe integer and larger
    /// than the estimate, else the estimate (observed messages plus the system prompt).
    fn context_tokens(&self, reported_tokens: Option<f64>, system_prompt_tokens: u64) -> u64 {
        let estimated = self
            .observed
            .total_tokens()
            .saturating_add(system_prompt_tokens);
        match reported_tokens.and_then(positive_safe_integer) {
            Some(reported) => reported.max(estimated),
            None => estimated,
        }
    }

    /// Executes `update_plan`: records the plan, and the boundary when the call completes a
    /// registered step (the first such call of a turn is the pending boundary).
    ///
    /// # Errors
    ///
    /// [`PlanToolError::Aborted`] if `aborted`, [`PlanToolError::Invalid`] for invalid
    /// arguments; the state is unchanged in both cases.
    fn update_plan(
        &mut self,
        tool_call_id: &str,
        arguments: &Value,
        aborted: bool,
    ) -> Result<PlanToolOutput, PlanToolError> {
        if aborted {
            return Err(PlanToolError::Aborted);
        }
        let update = parse_update_plan_named(arguments, &self.plan_tool)?;
        let transition = analyze_transition(&self.state.plan, &update.steps);
        let mut progress_recorded = false;
        if let Some(first_id) = transition.completed_step_ids.first() {
            let summary = update.progress.as_ref().and_then(|progress| {
                let step = update.steps.iter().find(|step| &step.id == first_id)?;
                Some(ProgressSummary::new(step, progress, &update.steps))
            });
            progress_recorded = summary.is_some();
            self.state.record_boundary(update.steps, summary);
            if self.pending_boundary.is_none() {
                self.pending_boundary = Some(tool_call_id.to_owned());
            }
        } else {
            self.state.record_plan(update.steps);
        }
        self.dirty = true;
        let plan = self.state.plan.clone();
        Ok(PlanToolOutput {
            text: text::plan_result_text(&plan, &transition.advice),
            details: PlanToolDetails {
                boundary: transition.is_boundary(),
                completed_step_ids: transition.completed_step_ids.clone(),
                progress_recorded,
                task_status: text::TASK_STATUS_ACTIVE,
                plan,
            },
            transition,
        })
    }

    /// Evaluates the boundary [`OccSession::on_turn_end`] accepted; `None` without one.
    /// A compaction the economics select waits for the run to settle.
    fn decide_boundary(&mut self, measurement: &BoundaryMeasurement) -> Option<BoundaryEvaluation> {
        if !std::mem::take(&mut self.candidate) || self.phase != Phase::Idle {
            return None;
        }
        let context_tokens = self.context_tokens(
            measurement.reported_tokens,
            measurement.system_prompt_tokens,
        );
        let keep_recent = self
            .options
            .keep_recent_tokens
            .unwrap_or(measurement.settings.keep_recent_tokens);
        let observed = match &self.observed {
            Observation::Sized(messages) => messages.as_slice(),
            Observation::Total(_) => measurement.observed.as_deref().unwrap_or_default(),
        };
        let estimate = estimate_native_cut(
            &measurement.projection,
            keep_recent,
            &ObservedContext::new(observed),
        );
        let context_window = measurement
            .usage_context_window
            .and_then(positive_safe_integer)
            .or_else(|| {
                measurement
                    .model_context_window
                    .and_then(positive_safe_integer)
            });
        let input = EconomicsInput {
            write_tokens: context_tokens,
            archive_tokens: estimate.removable_tokens,
            memo_tokens: MEMO_TOKENS,
            context_tokens,
            completed_boundary_request_counts: Some(
                self.state.completed_boundary_request_counts.clone(),
            ),
            remaining_boundaries: remaining_steps(&self.state.plan),
            average_context_token_increment: self.state.average_context_increment(),
            context_window_tokens: context_window,
            prior_compaction_count: self.state.native_compaction_count,
            carried_debt_tokens: self.state.cache_debt_tokens,
            cache_debt_repayment_tokens: self.state.cache_debt_repayment_tokens,
            cache_write_read_ratio: self.options.cache_write_read_ratio,
            requests_since_last_compaction: self.state.requests_since_last_compaction(),
        };
        let params = EconomicsParams::with_reserve(measurement.settings.reserve_tokens);
        let mut decision = decide(&input, &params);
        if !estimate.compactable {
            decision.overrule_not_compactable();
        }
        let abort = decision.compact;
        if abort {
            self.phase = Phase::Selected(Selection {
                decision: decision.clone(),
                estimate: estimate.clone(),
            });
        }
        Some(BoundaryEvaluation {
            decision,
            estimate,
            abort,
        })
    }

    /// The state snapshot as an [`Effect::AppendEntry`], when the state changed since the
    /// last snapshot. Every step that changes the state ends with it, so no change is left
    /// for a later step to save.
    fn snapshot(&mut self, effects: &mut Vec<Effect>) {
        if std::mem::take(&mut self.dirty) {
            effects.push(Effect::AppendEntry(CustomEntry {
                custom_type: STATE_ENTRY_TYPE,
                data: self.state.to_value(),
            }));
        }
    }
}

/// The data of a [`text::SKIP_ENTRY_TYPE`] entry: a native refusal's code or
/// [`SELECTION_DROPPED_NOT_IDLE`].
fn skip_entry_data(reason: &str, message: &str, state: &OccState, selection: &Selection) -> Value {
    json!({
        "version": 1,
        "reason": reason,
        "message": message,
        "epoch": state.epoch,
        "requestCount": state.request_count,
        "decisionReason": selection.decision.reason.code(),
        "archiveTokens": selection.estimate.removable_tokens,
        "contextTokens": selection.decision.context_tokens,
    })
}

/// The warning about snapshots that could not be read, if there are any.
fn unreadable_state(rejected: &[StateError]) -> Vec<Effect> {
    if rejected.is_empty() {
        return Vec::new();
    }
    vec![Effect::Warn {
        text: text::unreadable_state_warning(rejected),
    }]
}

/// A continuation handed to the host ([`Effect::SendMessage`]) whose sending it has not
/// reported yet ([`OccSession::on_continuation_sent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct SentContinuation {
    /// The error to report from `agent_settled` once the continuation is under way.
    error: Option<String>,
}

/// The steps: each `on_*` step takes one event (or the result of an earlier effect) and
/// returns everything the host does for it, the state snapshot included, as a [`Step`].
impl OccSession {
    /// Restores the state from the branch (root first) without touching transient state:
    /// [`Effect::Warn`] with [`text::unreadable_state_warning`] when snapshots newer than
    /// the restored state could not be read ([`crate::state::restore_from_branch`]), else
    /// nothing. The host shows the warning and keeps going; the session file is not
    /// changed.
    pub fn on_restore(&mut self, branch: &[SessionEntry]) -> Step {
        let rejected = self.restore(branch);
        Step::of(unreadable_state(&rejected))
    }

    /// `session_start`: restores the branch's state, observes the session's messages
    /// (`buildSessionContext().messages`) and clears the transient state; the warning of
    /// [`OccSession::on_restore`], if any.
    pub fn on_session_start(
        &mut self,
        branch: &[SessionEntry],
        messages: impl Into<Observation>,
    ) -> Step {
        let rejected = self.restore(branch);
        self.observed = messages.into();
        self.clear_transient();
        Step::of(unreadable_state(&rejected))
    }

    /// `session_tree`: the same as [`OccSession::on_session_start`] for the new leaf.
    pub fn on_session_tree(
        &mut self,
        branch: &[SessionEntry],
        messages: impl Into<Observation>,
    ) -> Step {
        self.on_session_start(branch, messages)
    }

    /// `update_plan`: the tool's result and the step (the snapshot of a valid call). A call
    /// that completes a registered step records the boundary and remembers the tool call;
    /// `turn_end` decides whether it is evaluated.
    ///
    /// The result is [`PlanToolError::Aborted`] if `aborted`, [`PlanToolError::Invalid`]
    /// for invalid arguments; the state is unchanged in both cases, and nothing is saved.
    pub fn on_update_plan(
        &mut self,
        tool_call_id: &str,
        arguments: &Value,
        aborted: bool,
    ) -> (Result<PlanToolOutput, PlanToolError>, Step) {
        let result = self.update_plan(tool_call_id, arguments, aborted);
        let mut effects = Vec::new();
        self.snapshot(&mut effects);
        (result, Step::of(effects))
    }

    /// `input`: corrections (a steering message or a [`CORRECTION_PREFIX`] prompt) drop the
    /// plan, its history and a selected compaction; a new task after a fully completed plan
    /// starts a new request horizon. Either is saved (the snapshot). Any input lifts the
    /// retry block. The host always continues the input.
    pub fn on_input(&mut self, event: &InputEvent) -> Step {
        self.retry_blocked = false;
        let steer = event.streaming_behavior.as_deref() == Some("steer");
        if steer || event.text.starts_with(CORRECTION_PREFIX) {
            self.pending_boundary = None;
            self.candidate = false;
            if matches!(self.phase, Phase::Selected(_)) {
                self.phase = Phase::Idle;
            }
            self.state.record_correction();
            self.dirty = true;
        } else if self.state.record_completed_plan_handoff() {
            self.dirty = true;
        }
        let mut effects = Vec::new();
        self.snapshot(&mut effects);
        Step::of(effects)
    }

    /// `context`: observes the messages the request carries (never changes them) and marks
    /// the next provider request, unless the build was already aborted. The observation is
    /// not saved, so the step has no effects.
    ///
    /// ```
    /// use sol_occ::session::{ContextEvent, OccSession};
    /// use sol_occ::settings::OccOptions;
    /// use sol_occ::tokens::MessageRole;
    ///
    /// let mut occ = OccSession::new(OccOptions::default());
    /// assert!(occ.on_context(ContextEvent::total(false, 1_200)).effects.is_empty());
    /// assert_eq!(occ.on_before_provider_request(None, 0).effects.len(), 1); // counted, saved
    /// assert!(occ.on_message_end(MessageRole::Assistant).effects.is_empty());
    /// assert_eq!(occ.state().request_count, 1);
    /// ```
    pub fn on_context(&mut self, event: ContextEvent) -> Step {
        self.observed = event.observation;
        self.mark = match (event.aborted, self.mark) {
            // The counted request has not ended yet; its message_end clears the mark.
            (_, RequestMark::Counted) => RequestMark::Counted,
            (true, _) => RequestMark::Clear,
            (false, _) => RequestMark::Marked,
        };
        Step::default()
    }

    /// One whole request of a host whose agent loop has no separate `context`,
    /// `before_provider_request` and `message_end` events: the three steps in that order
    /// (the reply is an assistant message), so the request is counted unless `event` says
    /// the build was aborted. The effects are those of
    /// [`OccSession::on_before_provider_request`]: the snapshot of a counted request.
    ///
    /// ```
    /// use sol_occ::session::{ContextEvent, OccSession};
    /// use sol_occ::settings::OccOptions;
    ///
    /// let mut occ = OccSession::new(OccOptions::default());
    /// assert_eq!(occ.on_request(ContextEvent::total(false, 2_000), None, 0).effects.len(), 1);
    /// assert_eq!(occ.on_request(ContextEvent::total(false, 4_000), None, 0).effects.len(), 1);
    /// assert!(occ.on_request(ContextEvent::total(true, 6_000), None, 0).effects.is_empty());
    /// assert_eq!(occ.state().request_count, 2);
    /// ```
    pub fn on_request(
        &mut self,
        event: ContextEvent,
        reported_tokens: Option<f64>,
        system_prompt_tokens: u64,
    ) -> Step {
        self.on_context(event);
        let step = self.on_before_provider_request(reported_tokens, system_prompt_tokens);
        self.on_message_end(MessageRole::Assistant);
        step
    }

    /// `message_end`: the assistant message ends the counted request; other roles change
    /// nothing. Never any effects.
    pub fn on_message_end(&mut self, role: MessageRole) -> Step {
        if role == MessageRole::Assistant {
            self.mark = RequestMark::Clear;
        }
        Step::default()
    }

    /// `session_shutdown`: clears the transient state; a running compaction will produce
    /// no continuation. Never any effects.
    pub fn on_session_shutdown(&mut self) -> Step {
        self.clear_transient();
        Step::default()
    }

    /// `session_before_compact`: whether to cancel the compaction that is about to run.
    /// Only Pi's threshold compaction is cancelled, and only while a boundary compaction is
    /// selected, so that it cannot consume the selection; manual and overflow compactions
    /// always run.
    pub fn on_before_compact(&self, trigger: CompactionTrigger) -> bool {
        trigger == CompactionTrigger::Threshold && matches!(self.phase, Phase::Selected(_))
    }

    /// `before_provider_request`: counts the request if a `context` event marked it, at the
    /// context size Pi reports when that is a positive safe integer larger than the estimate
    /// (the observed messages plus the system prompt), else at the estimate. A counted
    /// request is saved (the snapshot); anything else has no effects.
    pub fn on_before_provider_request(
        &mut self,
        reported_tokens: Option<f64>,
        system_prompt_tokens: u64,
    ) -> Step {
        if self.mark != RequestMark::Marked {
            return Step::default();
        }
        let context_tokens = self.context_tokens(reported_tokens, system_prompt_tokens);
        self.state.record_provider_request(context_tokens);
        self.mark = RequestMark::Counted;
        self.dirty = true;
        let mut effects = Vec::new();
        self.snapshot(&mut effects);
        Step::of(effects)
    }

    /// `turn_end`: ends the turn's request (the mark is cleared, as by its assistant
    /// `message_end`); takes the pending boundary; [`Effect::Measure`] when it is to be
    /// evaluated: no boundary compaction is selected or running, the turn ended normally
    /// (neither [`StopReason::Error`] nor [`StopReason::Aborted`], its signal not aborted),
    /// the plan call's result is among the turn's results and succeeded, and no skipped or
    /// failed compaction blocks retries. Tool work other than the plan tool's, without an
    /// error, lifts that block.
    pub fn on_turn_end(&mut self, turn: &TurnEnd) -> Step {
        // The turn's request has ended, as its assistant `message_end` says.
        self.mark = RequestMark::Clear;
        self.candidate = false;
        let did_work = turn
            .tool_results
            .iter()
            .any(|result| result.tool_name != self.plan_tool && !result.is_error);
        if did_work {
            self.retry_blocked = false;
        }
        let Some(call_id) = self.pending_boundary.take() else {
            return Step::default();
        };
        let plan_result = turn
            .tool_results
            .iter()
            .find(|result| result.tool_call_id == call_id);
        let ended_normally = !matches!(
            turn.stop_reason,
            Some(StopReason::Error | StopReason::Aborted)
        ) && !turn.aborted;
        let evaluate = self.phase == Phase::Idle
            && ended_normally
            && plan_result.is_some_and(|result| !result.is_error)
            && !self.retry_blocked;
        if !evaluate {
            return Step::default();
        }
        self.candidate = true;
        Step::of(vec![Effect::Measure])
    }

    /// The measurement [`Effect::Measure`] asked for: the decision for the diagnostics,
    /// then, when the compaction is selected, [`Effect::Abort`] (the plan call's step saved
    /// the boundary already). The compaction runs from the next `agent_settled` if Pi is
    /// idle there. Nothing without a boundary to evaluate.
    pub fn on_decide_boundary(&mut self, measurement: &BoundaryMeasurement) -> Step {
        let Some(evaluation) = self.decide_boundary(measurement) else {
            return Step::default();
        };
        let abort = evaluation.abort;
        let mut effects = vec![Effect::Decision(Box::new(evaluation))];
        if abort {
            effects.push(Effect::Abort);
        }
        Step::of(effects)
    }

    /// `session_compact`: records the compaction, charging the cache debt of a running
    /// boundary compaction (none for compactions the mechanism did not select, or whose
    /// summary an extension supplied), clears the mark and the pending boundary, and
    /// observes the compacted session's messages; the snapshot follows.
    pub fn on_session_compact(
        &mut self,
        from_extension: bool,
        messages: impl Into<Observation>,
    ) -> Step {
        let mut debt = CacheDebt::default();
        if let Phase::Compacting(_, progress) = &mut self.phase
            && !progress.debt_recorded
        {
            progress.debt_recorded = true;
            if !from_extension {
                debt = progress.debt;
            }
        }
        self.state.record_compaction(debt);
        self.dirty = true;
        self.observed = messages.into();
        self.mark = RequestMark::Clear;
        self.pending_boundary = None;
        self.candidate = false;
        if matches!(self.phase, Phase::Selected(_)) {
            self.phase = Phase::Idle;
        }
        let mut effects = Vec::new();
        self.snapshot(&mut effects);
        Step::of(effects)
    }

    /// `agent_settled`: [`Effect::Compact`] for a selection Pi is idle at, the skip record
    /// of a dropped one, [`Effect::KeepWaiting`] for a settlement nested in a running
    /// compaction, else nothing (the host releases any continuation this dispatch found
    /// waiting when the dispatch ends).
    ///
    /// A selection is valid only for the first `agent_settled` after it, the one that ends
    /// the run the boundary stopped: if Pi is not idle there, the selection is dropped and
    /// recorded ([`SELECTION_DROPPED_NOT_IDLE`]) rather than kept for a later settlement,
    /// which would compact at an unrelated point of the conversation. No continuation is
    /// sent then: Pi is busy with another run.
    pub fn on_agent_settled(&mut self, idle: bool) -> Step {
        match &self.phase {
            Phase::Idle => Step::default(),
            Phase::Compacting(..) => Step::of(vec![Effect::KeepWaiting]),
            Phase::Selected(selection) if !idle => {
                let data = skip_entry_data(
                    SELECTION_DROPPED_NOT_IDLE,
                    SELECTION_DROPPED_MESSAGE,
                    &self.state,
                    selection,
                );
                self.phase = Phase::Idle;
                Step::of(vec![Effect::AppendEntry(CustomEntry {
                    custom_type: text::SKIP_ENTRY_TYPE,
                    data,
                })])
            }
            Phase::Selected(selection) => {
                let selection = selection.clone();
                let debt = CacheDebt {
                    debt_tokens: selection.decision.debt_tokens(),
                    repayment_tokens: selection.decision.repayment_tokens(),
                };
                self.phase = Phase::Compacting(
                    selection,
                    CompactionProgress {
                        debt,
                        debt_recorded: false,
                    },
                );
                Step::of(vec![Effect::Compact {
                    custom_instructions: compaction_instructions(&self.state.pending_progress),
                }])
            }
        }
    }

    /// How `ctx.compact()` ended (`onComplete` or `onError`): the skip record of a refusal,
    /// the warning or savings notice, then the continuation. Pi's error strings are read by
    /// [`classify_compaction_error`]: a cancellation (or an abandoned compaction) has
    /// nothing follow it, a refusal resumes the task once with the current context, any
    /// other error resumes it and is reported once the continuation is under way
    /// ([`OccSession::on_continuation_sent`]); both block plan-only retries. Nothing when no
    /// boundary compaction is running (it ended already, or the session shut down).
    ///
    /// A completed compaction accounts one model call and the tokens it removed; the call
    /// is Pi's summarizer, which reads what the summary replaces (by Pi's estimate) and
    /// writes the summary.
    pub fn on_compaction_finished(&mut self, result: &CompactionResult) -> Step {
        let Phase::Compacting(selection, _) = std::mem::replace(&mut self.phase, Phase::Idle)
        else {
            self.sent = None;
            return Step::default();
        };
        let plan = &self.state.plan;
        let mut effects = Vec::new();
        let mut account = StepAccount::default();
        let mut error = None;
        let continuation = match result {
            CompactionResult::Completed { summary } => {
                // Pi's summarizer reads what the summary replaces and writes the summary.
                let summary_tokens = estimate_utf8_tokens(summary);
                let removed_tokens = selection
                    .estimate
                    .removable_tokens
                    .saturating_sub(summary_tokens);
                if removed_tokens > 0 {
                    effects.push(Effect::SavingsNotice(SavingsNotice {
                        removed_tokens,
                        notice: text::savings_notice(removed_tokens),
                        status_key: text::STATUS_KEY,
                        status_text: text::status_text(removed_tokens),
                    }));
                }
                account = StepAccount {
                    tokens_removed: removed_tokens,
                    model_calls: 1,
                    model_input_tokens: removed_tokens.saturating_add(summary_tokens),
                    model_output_tokens: summary_tokens,
                    ..StepAccount::default()
                };
                Some(text::continuation_after_compaction(plan, &self.plan_tool))
            }
            CompactionResult::Abandoned => None,
            CompactionResult::Failed { name, message } => {
                match classify_compaction_error(name.as_deref(), message) {
                    CompactionErrorKind::Cancelled => None,
                    CompactionErrorKind::Refused(refusal) => {
                        self.retry_blocked = true;
                        effects.push(Effect::AppendEntry(CustomEntry {
                            custom_type: text::SKIP_ENTRY_TYPE,
                            data: skip_entry_data(refusal.code(), message, &self.state, &selection),
                        }));
                        effects.push(Effect::Warn {
                            text: text::skip_warning(message),
                        });
                        Some(text::continuation_after_skip(
                            refusal.describe(),
                            plan,
                            &self.plan_tool,
                        ))
                    }
                    CompactionErrorKind::Failed => {
                        self.retry_blocked = true;
                        error = Some(text::compaction_failed_error(message));
                        Some(text::continuation_after_failure(plan, &self.plan_tool))
                    }
                }
            }
        };
        self.sent = None;
        if let Some(content) = continuation {
            self.sent = Some(SentContinuation { error });
            effects.push(Effect::SendMessage(Continuation::new(content)));
        }
        Step { effects, account }
    }

    /// The host sent the continuation of [`Effect::SendMessage`] and reports whether Pi is
    /// still idle. Pi 0.87+ defers the continuation's turn until every `agent_settled`
    /// handler returned, so Pi is idle and nothing is to wait for; Pi 0.84.2 started the
    /// turn synchronously ([`Effect::WaitForContinuation`]). A compaction error is reported
    /// after that ([`Effect::Fail`]). Nothing without a continuation to report.
    pub fn on_continuation_sent(&mut self, idle: bool) -> Step {
        let Some(sent) = self.sent.take() else {
            return Step::default();
        };
        let mut effects = Vec::new();
        if !idle {
            effects.push(Effect::WaitForContinuation);
        }
        effects.extend(sent.error.map(|error| Effect::Fail { error }));
        Step::of(effects)
    }

    /// `session_before_tree`: whether to refuse tree navigation. Pi 0.84.2 reports the
    /// session idle while an extension-requested compaction runs, so navigation is refused
    /// then; a Pi that refuses it itself (the capabilities given at construction) needs
    /// nothing.
    pub fn on_before_tree(&self) -> bool {
        matches!(self.phase, Phase::Compacting(..))
            && !self.capabilities.refuses_tree_navigation_during_compaction
    }
}

//! Online Context Compact exports: one [`Occ`] instance per loaded extension
//! wraps the `sol_occ::OccSession` state machine. The host feeds it Pi's
//! events and carries out what it returns (append a state entry, abort,
//! compact, send the hidden continuation); no decision is made on the
//! JavaScript side.
//!
//! Inputs cross as plain objects; branch entries and the projection cross as
//! JSON values and are converted once, here, into `sol_core::session` types
//! (which never fail: unmodelled shapes are kept as they are); settings are
//! read by `sol-occ` itself. Pi's messages never
//! cross on a request: the host sizes them with the estimate of
//! `sol_occ::tokens` and reports their total; the sized list of its latest
//! observation crosses only with a boundary measurement.

use sol_occ::session::StopReason;
use std::sync::{Mutex, MutexGuard, PoisonError};

use napi::{Error, Result};
use napi_derive::napi;
use serde_json::Value;
use sol_core::message::AgentMessage;
use sol_core::savings::ReportedUsage;
use sol_core::session::{SessionEntry, SessionProjection};
use sol_core::{Mechanism, StepAccount};
use sol_occ::OccSession;
use sol_occ::estimate::NativeProjection;
use sol_occ::plan::{StepStatus, TOOL_NAME};
use sol_occ::session::{
    BoundaryEvaluation, BoundaryMeasurement, CompactionResult, CompactionTrigger, ContextEvent,
    Effect, InputEvent, Observation, PiCapabilities, Step, TurnEnd, TurnToolResult,
    system_prompt_tokens,
};
use sol_occ::settings::{CompactionSettings, ModelRef, OccOptions, resolve_compaction_settings};
use sol_occ::state::STATE_ENTRY_TYPE;
use sol_occ::text;
use sol_occ::tokens::SizedMessage;

use crate::account::count;
use crate::boundary::quiet;
use crate::savings::{SavingsBook, SavingsEntry, SharedBook};

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

/// The outcome of an `update_plan` call: `text` and `details` on success,
/// `error` (the tool's error text) otherwise, with the step's effects (the state snapshot).
#[napi(object)]
pub struct OccPlanResult {
    /// Whether the call was accepted.
    pub ok: bool,
    /// The tool result text.
    pub text: Option<String>,
    /// The tool result details.
    #[napi(ts_type = "Record<string, unknown>")]
    pub details: Option<Value>,
    /// Whether the call completed a registered step.
    pub boundary: bool,
    /// The error text of a rejected call.
    pub error: Option<String>,
    /// A stable code of a rejected call.
    pub error_code: Option<String>,
    /// What to do before the tool returns, in order.
    pub effects: Vec<OccEffect>,
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
fn seen_first(session: &mut OccSession, context: Option<OccContextSeen>) {
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

/// One thing the host does, in the order a step lists them (`sol_occ::session::Effect`).
#[napi(discriminant = "kind", discriminant_case = "camelCase")]
pub enum OccEffect {
    /// `pi.appendEntry(customType, data)`: a state snapshot or a skip record.
    AppendEntry {
        /// Entry type.
        custom_type: String,
        /// Entry data (a JSON object).
        #[napi(ts_type = "Record<string, unknown>")]
        data: Value,
    },
    /// Emit the evaluation on `pi.events` (diagnostics).
    Decision {
        /// The boundary evaluation.
        evaluation: OccEvaluation,
    },
    /// `ctx.abort()`.
    Abort,
    /// Measure the context and pass it to `decideBoundary`.
    Measure,
    /// `ctx.compact({customInstructions})`, then report the result to `compactionFinished`.
    Compact {
        /// `customInstructions` for `ctx.compact()`.
        custom_instructions: String,
    },
    /// A terminal warning.
    Warn {
        /// The warning.
        text: String,
    },
    /// The savings notice and its self-clearing status.
    SavingsNotice {
        /// The notice.
        notice: OccSavingsNotice,
    },
    /// `pi.sendMessage(...)`, then report `continuationSent(ctx.isIdle())`.
    SendMessage {
        /// The message.
        continuation: OccContinuation,
    },
    /// Keep this `agent_settled` dispatch open until the continuation's own settlement.
    WaitForContinuation,
    /// A nested settlement: the continuation this dispatch found waiting keeps waiting.
    KeepWaiting,
    /// Throw `error` from `agent_settled`.
    Fail {
        /// The error text.
        error: String,
    },
}

/// What a step left for the host (what it saved and cost went to the savings book).
#[napi(object)]
pub struct OccStep {
    /// The effects, in order.
    pub effects: Vec<OccEffect>,
    /// `turnEnd` and `decideBoundary` only, with a savings book: the totals entry when the
    /// totals changed since it was last given out, which the host appends at this `turn_end`.
    pub totals: Option<SavingsEntry>,
}

/// The evaluation as JavaScript sees it, with the settings the decision used.
fn evaluation_of(
    evaluation: &BoundaryEvaluation,
    settings: Option<&CompactionSettings>,
) -> OccEvaluation {
    OccEvaluation {
        abort: evaluation.abort,
        reason: evaluation.decision.reason.code().to_owned(),
        decision: serde_json::to_value(&evaluation.decision).unwrap_or(Value::Null),
        estimate: serde_json::to_value(&evaluation.estimate).unwrap_or(Value::Null),
        keep_recent_tokens: settings.map_or(0.0, |s| s.keep_recent_tokens as f64),
        reserve_tokens: settings.map_or(0.0, |s| s.reserve_tokens as f64),
    }
}

fn effect_of(effect: Effect, settings: Option<&CompactionSettings>) -> OccEffect {
    match effect {
        Effect::AppendEntry(entry) => OccEffect::AppendEntry {
            custom_type: entry.custom_type.to_owned(),
            data: entry.data,
        },
        Effect::Decision(evaluation) => OccEffect::Decision {
            evaluation: evaluation_of(&evaluation, settings),
        },
        Effect::Abort => OccEffect::Abort,
        Effect::Measure => OccEffect::Measure,
        Effect::Compact {
            custom_instructions,
        } => OccEffect::Compact {
            custom_instructions,
        },
        Effect::Warn { text } => OccEffect::Warn { text },
        Effect::SavingsNotice(notice) => OccEffect::SavingsNotice {
            notice: OccSavingsNotice {
                removed_tokens: notice.removed_tokens as f64,
                notice: notice.notice,
                status_key: notice.status_key.to_owned(),
                status: notice.status_text,
                status_clear_ms: text::STATUS_CLEAR_MS,
            },
        },
        Effect::SendMessage(continuation) => OccEffect::SendMessage {
            continuation: OccContinuation {
                custom_type: continuation.custom_type.to_owned(),
                content: continuation.content,
                display: continuation.display,
                trigger_turn: continuation.trigger_turn,
            },
        },
        Effect::WaitForContinuation => OccEffect::WaitForContinuation,
        Effect::KeepWaiting => OccEffect::KeepWaiting,
        Effect::Fail { error } => OccEffect::Fail { error },
    }
}

fn effects_of(effects: Vec<Effect>, settings: Option<&CompactionSettings>) -> Vec<OccEffect> {
    effects
        .into_iter()
        .map(|effect| effect_of(effect, settings))
        .collect()
}

/// Pi's branch entries as `sol_core` reads them (whole numbers as the integers Rust wrote).
fn entries(branch: Vec<Value>) -> Vec<SessionEntry> {
    SessionEntry::from_values(branch)
}

/// Online Context Compact for one loaded extension.
#[napi]
pub struct Occ {
    session: Mutex<OccSession>,
    /// The session's savings book, where every step records its account.
    book: Option<SharedBook>,
}

impl Occ {
    fn session(&self) -> MutexGuard<'_, OccSession> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Books a step's account; its effects for the host.
    fn booked(&self, account: StepAccount) {
        if let Some(book) = &self.book {
            book.record_step(Mechanism::OnlineContextCompact, account);
        }
    }

    fn step_of(&self, step: Step) -> OccStep {
        self.booked(step.account);
        OccStep {
            effects: effects_of(step.effects, None),
            totals: None,
        }
    }

    /// A step of `turn_end`, with the totals entry when the book changed.
    fn turn_step(&self, step: Step, settings: Option<&CompactionSettings>) -> OccStep {
        self.booked(step.account);
        OccStep {
            effects: effects_of(step.effects, settings),
            totals: self.book.as_ref().and_then(SharedBook::take_totals),
        }
    }
}

#[napi]
impl Occ {
    /// Validates the options; throws their error message when invalid. Made with the
    /// session's `book`, every step records its account there.
    #[napi(constructor, catch_unwind)]
    pub fn new(options: OccCreateOptions, book: Option<&SavingsBook>) -> Result<Self> {
        quiet(|| {
            let capabilities = PiCapabilities {
                refuses_tree_navigation_during_compaction: options
                    .pi_refuses_tree_navigation_during_compaction
                    .unwrap_or(false),
            };
            let options =
                OccOptions::new(options.cache_write_read_ratio, options.keep_recent_tokens)
                    .map_err(|error| Error::from_reason(error.to_string()))?;
            Ok(Occ {
                session: Mutex::new(OccSession::with_capabilities(options, capabilities)),
                book: book.map(SavingsBook::shared),
            })
        })
    }

    /// Whether the state has not been restored from the branch yet.
    #[napi(catch_unwind)]
    pub fn needs_restore(&self) -> bool {
        quiet(|| self.session().needs_restore())
    }

    /// Restores the persisted state from `getBranch()` (root first); `warn` when saved
    /// snapshots newer than the restored one could not be read.
    #[napi(catch_unwind, ts_args_type = "branch: ReadonlyArray<unknown>")]
    pub fn restore(&self, branch: Vec<Value>) -> OccStep {
        quiet(|| self.step_of(self.session().on_restore(&entries(branch))))
    }

    /// `session_start`: restore, observe the session's messages (their total size, as the
    /// host sized them), clear transient state; `warn` as for `restore`.
    #[napi(
        catch_unwind,
        ts_args_type = "branch: ReadonlyArray<unknown>, observedTokens: number"
    )]
    pub fn session_start(&self, branch: Vec<Value>, observed_tokens: f64) -> OccStep {
        quiet(|| {
            let step = self
                .session()
                .on_session_start(&entries(branch), Observation::Total(count(observed_tokens)));
            self.step_of(step)
        })
    }

    /// `session_tree`: the same for the new leaf.
    #[napi(
        catch_unwind,
        ts_args_type = "branch: ReadonlyArray<unknown>, observedTokens: number"
    )]
    pub fn session_tree(&self, branch: Vec<Value>, observed_tokens: f64) -> OccStep {
        quiet(|| {
            let step = self
                .session()
                .on_session_tree(&entries(branch), Observation::Total(count(observed_tokens)));
            self.step_of(step)
        })
    }

    /// `session_shutdown`.
    #[napi(catch_unwind)]
    pub fn session_shutdown(&self) {
        quiet(|| {
            // The step never has effects.
            self.session().on_session_shutdown();
        });
    }

    /// `context`: observes the messages (their total size, as the host sized them) and
    /// marks the next provider request.
    #[napi(catch_unwind)]
    pub fn context(&self, aborted: bool, observed_tokens: f64) {
        quiet(|| {
            // The step never has effects: an observation is not saved.
            self.session()
                .on_context(ContextEvent::total(aborted, count(observed_tokens)));
        });
    }

    /// `before_provider_request`, after the `context` event carried with it: counts the
    /// request if a `context` marked it (a counted request is saved).
    #[napi(catch_unwind)]
    pub fn before_provider_request(
        &self,
        reported_tokens: Option<f64>,
        system_prompt: String,
        context: Option<OccContextSeen>,
    ) -> OccStep {
        quiet(|| {
            let mut session = self.session();
            seen_first(&mut session, context);
            let step = session
                .on_before_provider_request(reported_tokens, system_prompt_tokens(&system_prompt));
            drop(session);
            self.step_of(step)
        })
    }

    /// `input`: corrections drop the plan, a new task after a completed plan starts a new
    /// horizon; the snapshot when that changed the state.
    #[napi(catch_unwind)]
    pub fn input(&self, text: String, streaming_behavior: Option<String>) -> OccStep {
        quiet(|| {
            let step = self.session().on_input(&InputEvent {
                text,
                streaming_behavior,
            });
            self.step_of(step)
        })
    }

    /// Executes `update_plan`.
    #[napi(
        catch_unwind,
        ts_args_type = "toolCallId: string, args: unknown, aborted: boolean"
    )]
    pub fn update_plan(&self, tool_call_id: String, args: Value, aborted: bool) -> OccPlanResult {
        quiet(|| {
            let (result, step) = self.session().on_update_plan(&tool_call_id, &args, aborted);
            self.booked(step.account);
            let effects = effects_of(step.effects, None);
            match result {
                Ok(output) => OccPlanResult {
                    ok: true,
                    boundary: output.details.boundary,
                    details: serde_json::to_value(&output.details).ok(),
                    text: Some(output.text),
                    error: None,
                    error_code: None,
                    effects,
                },
                Err(error) => OccPlanResult {
                    ok: false,
                    text: None,
                    details: None,
                    boundary: false,
                    error: Some(error.to_string()),
                    error_code: Some(error.code().to_owned()),
                    effects,
                },
            }
        })
    }

    /// `turn_end`, after the `context` event carried with it: ends the turn's request, takes
    /// the pending boundary; `measure` when it is to be evaluated.
    #[napi(catch_unwind)]
    pub fn turn_end(&self, turn: OccTurnEndInput, context: Option<OccContextSeen>) -> OccStep {
        quiet(|| {
            let mut session = self.session();
            seen_first(&mut session, context);
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
            let step = session.on_turn_end(&turn);
            drop(session);
            self.turn_step(step, None)
        })
    }

    /// The measurement a `measure` effect asked for: the decision, and for a selected
    /// compaction the snapshot and `abort`.
    #[napi(catch_unwind)]
    pub fn decide_boundary(&self, measurement: OccMeasurement) -> OccStep {
        quiet(|| {
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
            let mut session = self.session();
            let settings = resolve_compaction_settings(
                measurement.settings.as_ref(),
                model.as_ref(),
                session.options().keep_recent_tokens,
            );
            let step = session.on_decide_boundary(&BoundaryMeasurement {
                reported_tokens: measurement.reported_tokens,
                usage_context_window: measurement.usage_context_window,
                model_context_window: measurement.model_context_window,
                system_prompt_tokens: system_prompt_tokens(&measurement.system_prompt),
                projection,
                settings,
                observed: Some(observed_list(measurement.observed)),
            });
            drop(session);
            self.turn_step(step, Some(&settings))
        })
    }

    /// `agent_settled`: `compact` for a selection Pi is idle at, the skip record of a
    /// dropped one (a selection is valid only for the settlement of the run it stopped),
    /// `keepWaiting` for a settlement nested in a running compaction.
    #[napi(catch_unwind)]
    pub fn agent_settled(&self, idle: bool) -> OccStep {
        quiet(|| {
            let step = self.session().on_agent_settled(idle);
            self.step_of(step)
        })
    }

    /// `session_before_compact`: whether to cancel (threshold compaction while
    /// a boundary compaction is selected).
    #[napi(catch_unwind)]
    pub fn should_cancel_compaction(&self, reason: String) -> bool {
        quiet(|| {
            self.session()
                .on_before_compact(CompactionTrigger::parse(&reason))
        })
    }

    /// `session_before_tree`: whether to refuse tree navigation (by the capability given
    /// at construction).
    #[napi(catch_unwind)]
    pub fn should_cancel_tree_navigation(&self) -> bool {
        quiet(|| self.session().on_before_tree())
    }

    /// `session_compact`: records the compaction and observes the compacted messages
    /// (their total size, as the host sized them); the snapshot follows.
    #[napi(catch_unwind)]
    pub fn session_compact(&self, from_extension: bool, observed_tokens: f64) -> OccStep {
        quiet(|| {
            let step = self
                .session()
                .on_session_compact(from_extension, Observation::Total(count(observed_tokens)));
            self.step_of(step)
        })
    }

    /// The end of `ctx.compact()`: records, notices and the continuation.
    #[napi(catch_unwind)]
    pub fn compaction_finished(&self, result: OccCompactionResult) -> OccStep {
        quiet(|| {
            let result = match result {
                OccCompactionResult::Completed { summary, usage } => {
                    if let (Some(book), Some(usage)) = (&self.book, usage) {
                        book.summary_usage(ReportedUsage::from_pi_usage(&usage));
                    }
                    CompactionResult::Completed {
                        summary: summary.unwrap_or_default(),
                    }
                }
                OccCompactionResult::Failed { name, message } => CompactionResult::Failed {
                    name,
                    message: message.unwrap_or_default(),
                },
                OccCompactionResult::Abandoned => CompactionResult::Abandoned,
            };
            let step = self.session().on_compaction_finished(&result);
            self.step_of(step)
        })
    }

    /// The continuation was sent; `idle` is `ctx.isIdle()` right after. `waitForContinuation`
    /// when Pi started its turn inside this dispatch (0.84.2), then a compaction error.
    #[napi(catch_unwind)]
    pub fn continuation_sent(&self, idle: bool) -> OccStep {
        quiet(|| {
            let step = self.session().on_continuation_sent(idle);
            self.step_of(step)
        })
    }
}

//! Online Context Compact's entries of the [`Engine`] over `occ.rs`'s `Occ`, and its effects
//! as the engine's ([`EngineEffect`]).

use napi::{Error, Result};
use napi_derive::napi;
use serde_json::Value;
use sol_core::savings::{ReportedUsage, Watched};
use sol_occ::session::{
    BoundaryEvaluation, CompactionResult, CompactionTrigger, Effect, InputEvent,
    system_prompt_tokens,
};
use sol_occ::settings::CompactionSettings;
use sol_occ::text;

use super::{Engine, EngineEffect, EngineStep, branch_entries, restoring};
use crate::boundary::quiet;
use crate::occ::{
    OccCompactionResult, OccContextSeen, OccContinuation, OccEvaluation, OccMeasurement,
    OccSavingsNotice, seen_first,
};
use crate::savings::SharedBook;

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
    pub effects: Vec<EngineEffect>,
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

/// One effect as the host carries it out; a continuation is registered in `book` as content
/// Online Context Compact added.
fn effect_of(
    effect: Effect,
    settings: Option<&CompactionSettings>,
    book: &SharedBook,
) -> EngineEffect {
    match effect {
        Effect::AppendEntry(entry) => EngineEffect::AppendEntry {
            custom_type: entry.custom_type.to_owned(),
            data: entry.data,
        },
        Effect::Decision(evaluation) => EngineEffect::Decision {
            evaluation: evaluation_of(&evaluation, settings),
        },
        Effect::Abort => EngineEffect::Abort,
        Effect::Measure => EngineEffect::Measure,
        Effect::Compact {
            custom_instructions,
        } => EngineEffect::Compact {
            custom_instructions,
        },
        Effect::Warn { text } => EngineEffect::Warn {
            text,
            everywhere: false,
        },
        Effect::SavingsNotice(notice) => EngineEffect::SavingsNotice {
            notice: OccSavingsNotice {
                removed_tokens: notice.removed_tokens as f64,
                notice: notice.notice,
                status_key: notice.status_key.to_owned(),
                status: notice.status_text,
                status_clear_ms: text::STATUS_CLEAR_MS,
            },
        },
        Effect::SendMessage(continuation) => EngineEffect::SendMessage {
            continuation: OccContinuation {
                custom_type: continuation.custom_type.to_owned(),
                content: continuation.content,
                display: continuation.display,
                trigger_turn: continuation.trigger_turn,
            },
            watch: book.watch(Watched::Added),
        },
        Effect::WaitForContinuation => EngineEffect::WaitForContinuation,
        Effect::KeepWaiting => EngineEffect::KeepWaiting,
        Effect::Fail { error } => EngineEffect::Fail { error },
    }
}

pub(crate) fn effects_of(
    effects: Vec<Effect>,
    settings: Option<&CompactionSettings>,
    book: &SharedBook,
) -> Vec<EngineEffect> {
    effects
        .into_iter()
        .map(|effect| effect_of(effect, settings, book))
        .collect()
}

/// Online Context Compact's steps as the engine's entries (with it off: no effects, nothing
/// to restore or cancel).
#[napi]
impl Engine {
    /// Whether Online Context Compact's state has not been restored from the branch yet.
    #[napi(catch_unwind)]
    pub fn needs_restore(&self) -> bool {
        quiet(|| {
            self.occ
                .as_ref()
                .is_some_and(|occ| occ.session().needs_restore())
        })
    }

    /// Restores Online Context Compact's persisted state from `getBranch()` (root first);
    /// `warn` when saved snapshots newer than the restored one could not be read.
    #[napi(catch_unwind, ts_args_type = "branch: ReadonlyArray<unknown>")]
    pub fn restore_state(&self, branch: Vec<Value>) -> EngineStep {
        quiet(|| {
            let branch = branch_entries(branch);
            restoring(self.occ_step(|session| session.on_restore(&branch)))
        })
    }

    /// `context`: observes the messages (their total size, as the host sized them) and
    /// marks the next provider request.
    #[napi(catch_unwind)]
    pub fn context(&self, aborted: bool, observed_tokens: f64) {
        quiet(|| {
            if let Some(occ) = &self.occ {
                // The step never has effects: an observation is not saved.
                let seen = OccContextSeen {
                    aborted,
                    observed_tokens,
                };
                seen_first(&mut occ.session(), Some(seen));
            }
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
    ) -> EngineStep {
        quiet(|| {
            self.occ_step(|session| {
                seen_first(session, context);
                session.on_before_provider_request(
                    reported_tokens,
                    system_prompt_tokens(&system_prompt),
                )
            })
        })
    }

    /// `input`: corrections drop the plan, a new task after a completed plan starts a new
    /// horizon; the snapshot when that changed the state.
    #[napi(catch_unwind)]
    pub fn input(&self, text: String, streaming_behavior: Option<String>) -> EngineStep {
        quiet(|| {
            self.occ_step(|session| {
                session.on_input(&InputEvent {
                    text,
                    streaming_behavior,
                })
            })
        })
    }

    /// Executes `update_plan` (registered only with Online Context Compact on).
    #[napi(
        catch_unwind,
        ts_args_type = "toolCallId: string, args: unknown, aborted: boolean"
    )]
    pub fn update_plan(
        &self,
        tool_call_id: String,
        args: Value,
        aborted: bool,
    ) -> Result<OccPlanResult> {
        quiet(|| {
            let occ = self.occ.as_ref().ok_or_else(|| {
                Error::from_reason("Online Context Compact is off in this session")
            })?;
            let (result, effects) =
                occ.step_with(|session| session.on_update_plan(&tool_call_id, &args, aborted));
            let effects = effects_of(effects, None, &occ.book);
            Ok(match result {
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
            })
        })
    }

    /// The measurement a `measure` effect asked for: the decision, for a selected compaction
    /// the snapshot and `abort`, then the totals entry when the totals changed.
    #[napi(catch_unwind)]
    pub fn decide_boundary(&self, measurement: OccMeasurement) -> EngineStep {
        quiet(|| {
            let mut effects = self
                .occ
                .as_ref()
                .map(|occ| {
                    let (effects, settings) = occ.decide_boundary(measurement);
                    effects_of(effects, Some(&settings), &occ.book)
                })
                .unwrap_or_default();
            effects.extend(self.totals());
            EngineStep { effects }
        })
    }

    /// `agent_settled`: `compact` for a selection Pi is idle at, the skip record of a
    /// dropped one (a selection is valid only for the settlement of the run it stopped),
    /// `keepWaiting` for a settlement nested in a running compaction.
    #[napi(catch_unwind)]
    pub fn agent_settled(&self, idle: bool) -> EngineStep {
        quiet(|| self.occ_step(|session| session.on_agent_settled(idle)))
    }

    /// `session_before_compact`: whether to cancel (threshold compaction while a boundary
    /// compaction is selected).
    #[napi(catch_unwind)]
    pub fn should_cancel_compaction(&self, reason: String) -> bool {
        quiet(|| {
            self.occ.as_ref().is_some_and(|occ| {
                occ.session()
                    .on_before_compact(CompactionTrigger::parse(&reason))
            })
        })
    }

    /// `session_before_tree`: whether to refuse tree navigation (by the capability given
    /// at construction).
    #[napi(catch_unwind)]
    pub fn should_cancel_tree_navigation(&self) -> bool {
        quiet(|| {
            self.occ
                .as_ref()
                .is_some_and(|occ| occ.session().on_before_tree())
        })
    }

    /// The end of `ctx.compact()`: records, notices and the continuation.
    #[napi(catch_unwind)]
    pub fn compaction_finished(&self, result: OccCompactionResult) -> EngineStep {
        quiet(|| {
            EngineStep::of(self.occ.as_ref().map(|occ| {
                let mut watched = None;
                let result = match result {
                    OccCompactionResult::Completed { summary, usage } => {
                        if let Some(usage) = usage {
                            occ.book.summary_usage(ReportedUsage::from_pi_usage(&usage));
                        }
                        let summary = summary.unwrap_or_default();
                        // A later request that carries it is reported with the id.
                        if !summary.is_empty() {
                            watched = Some(EngineEffect::WatchSummary {
                                id: occ.book.watch(Watched::Added),
                                summary: summary.clone(),
                            });
                        }
                        CompactionResult::Completed { summary }
                    }
                    OccCompactionResult::Failed { name, message } => CompactionResult::Failed {
                        name,
                        message: message.unwrap_or_default(),
                    },
                    OccCompactionResult::Abandoned => CompactionResult::Abandoned,
                };
                let effects = occ.step(|session| session.on_compaction_finished(&result));
                watched
                    .into_iter()
                    .chain(effects_of(effects, None, &occ.book))
                    .collect()
            }))
        })
    }

    /// The continuation was sent; `idle` is `ctx.isIdle()` right after. `waitForContinuation`
    /// when Pi started its turn inside this dispatch (0.84.2), then a compaction error.
    #[napi(catch_unwind)]
    pub fn continuation_sent(&self, idle: bool) -> EngineStep {
        quiet(|| self.occ_step(|session| session.on_continuation_sent(idle)))
    }
}

//! Builders shared by the test modules: Pi messages, branch entries, plans, a small driver
//! that plays Pi's events against an `OccSession` through its `on_*` steps, and probes that
//! read what the steps show of the session (on a copy, so that probing changes nothing).

#![allow(dead_code)]

use serde_json::{Value, json};
use sol_core::StepAccount;
use sol_core::message::AgentMessage;
use sol_core::session::SessionEntry;
use sol_occ::estimate::NativeProjection;
use sol_occ::session::{
    BoundaryEvaluation, BoundaryMeasurement, CompactionResult, CompactionTrigger, ContextEvent,
    Continuation, CustomEntry, Effect, OccSession, PiCapabilities, PlanToolError, SavingsNotice,
    Step, StopReason, TurnEnd, TurnToolResult,
};
use sol_occ::settings::{OccOptions, resolve_compaction_settings};
use sol_occ::state::{OccState, STATE_ENTRY_TYPE};
use sol_occ::text;
use sol_occ::tokens::MessageRole;
use std::cell::RefCell;

/// A message read from its JSON.
pub(crate) fn message(value: Value) -> AgentMessage {
    AgentMessage::from_value(value)
}

/// A session entry read from its JSON.
pub(crate) fn entry(value: Value) -> SessionEntry {
    SessionEntry::from_value(value)
}

/// Session entries read from their JSON.
pub(crate) fn entries(values: &[Value]) -> Vec<SessionEntry> {
    SessionEntry::from_values(values.iter().cloned())
}

/// `message` with one field replaced (or removed, for `None`).
pub(crate) fn with_field(message: &AgentMessage, key: &str, value: Option<Value>) -> AgentMessage {
    let mut json = message.to_value();
    if let Some(fields) = json.as_object_mut() {
        match value {
            Some(value) => fields.insert(key.to_owned(), value),
            None => fields.shift_remove(key),
        };
    }
    AgentMessage::from_value(json)
}

/// A user message of `chars` ASCII characters.
pub(crate) fn user(timestamp: i64, chars: usize) -> AgentMessage {
    message(json!({"role": "user", "content": "u".repeat(chars), "timestamp": timestamp}))
}

/// An assistant message with one text block of `chars` characters.
pub(crate) fn assistant(timestamp: i64, chars: usize) -> AgentMessage {
    message(
        json!({"role": "assistant", "content": [{"type": "text", "text": "a".repeat(chars)}],
               "stopReason": "stop", "timestamp": timestamp}),
    )
}

/// A tool result of `chars` characters.
pub(crate) fn tool_result(timestamp: i64, call: &str, chars: usize) -> AgentMessage {
    message(
        json!({"role": "toolResult", "toolCallId": call, "toolName": "bash", "isError": false,
               "content": [{"type": "text", "text": "r".repeat(chars)}], "timestamp": timestamp}),
    )
}

/// Message entries with ids `e0`, `e1`, ... chained by `parentId`.
pub(crate) fn branch_of(messages: &[AgentMessage]) -> Vec<SessionEntry> {
    messages
        .iter()
        .enumerate()
        .map(|(i, message)| message_entry(i, message))
        .collect()
}

/// The entry at position `i` of [`branch_of`]: it depends on the message and `i` only.
fn message_entry(i: usize, message: &AgentMessage) -> SessionEntry {
    let parent = if i == 0 {
        Value::Null
    } else {
        json!(format!("e{}", i - 1))
    };
    entry(
        json!({"type": "message", "id": format!("e{i}"), "parentId": parent,
                 "timestamp": "2026-03-02T09:00:00.000Z", "message": message}),
    )
}

/// `update_plan` arguments from `(id, status)` pairs; goals are `goal <id>`.
pub(crate) fn plan_args(steps: &[(&str, &str)]) -> Value {
    let steps: Vec<Value> = steps
        .iter()
        .map(|(id, status)| json!({"id": id, "goal": format!("goal {id}"), "status": status}))
        .collect();
    json!({ "steps": steps })
}

/// Plays Pi's events against a session with a growing conversation.
pub(crate) struct Driver {
    pub(crate) occ: OccSession,
    pub(crate) messages: Vec<AgentMessage>,
    pub(crate) clock: i64,
    pub(crate) window: f64,
    pub(crate) keep_recent: u64,
    /// `branch_of(&messages)` as far as it was built: `messages` only ever grows, and an
    /// entry depends on its message and position alone, so each measurement builds the
    /// entries of the new messages only (a whole branch per event was the most of the
    /// property tests' time).
    branch: RefCell<Vec<SessionEntry>>,
}

impl Driver {
    pub(crate) fn new(ratio: Option<f64>) -> Driver {
        Driver::with_capabilities(ratio, PiCapabilities::default())
    }

    /// A driver whose session runs on a Pi with these capabilities.
    pub(crate) fn with_capabilities(ratio: Option<f64>, capabilities: PiCapabilities) -> Driver {
        let options = OccOptions {
            cache_write_read_ratio: ratio,
            keep_recent_tokens: Some(150),
        };
        let mut occ = OccSession::with_capabilities(options, capabilities);
        assert_eq!(occ.on_session_start(&[], Vec::new()), Step::default());
        Driver {
            occ,
            messages: Vec::new(),
            clock: 0,
            window: 200_000.0,
            keep_recent: 150,
            branch: RefCell::new(Vec::new()),
        }
    }

    fn tick(&mut self) -> i64 {
        self.clock += 1;
        self.clock
    }

    /// One provider request: `context`, `before_provider_request`, the assistant
    /// `message_end`; the conversation grows by a user turn of `chars` characters.
    pub(crate) fn request(&mut self, chars: usize) {
        let stamp = self.tick();
        self.messages.push(user(stamp, chars));
        let context = self
            .occ
            .on_context(ContextEvent::new(false, &self.messages));
        assert_eq!(context, Step::default(), "an observation is not saved");
        let step = self.occ.on_before_provider_request(None, 0);
        assert_snapshots_are_the_state(&step, &self.occ);
        let stamp = self.tick();
        self.messages.push(assistant(stamp, 8));
        assert_eq!(
            self.occ.on_message_end(MessageRole::Assistant),
            Step::default()
        );
    }

    /// An `update_plan` call that must succeed; its step saves the plan.
    pub(crate) fn plan(
        &mut self,
        call: &str,
        steps: &[(&str, &str)],
    ) -> sol_occ::session::PlanToolOutput {
        let (result, step) = self.occ.on_update_plan(call, &plan_args(steps), false);
        assert_eq!(saved_state(&step).as_ref(), Some(self.occ.state()));
        result.expect("a valid plan")
    }

    /// A normal `turn_end` whose only tool result is the plan call `call`: `[Measure]` when
    /// the boundary is to be evaluated, else nothing.
    pub(crate) fn turn_end(&mut self, call: &str) -> Step {
        self.occ.on_turn_end(&plan_turn(call))
    }

    pub(crate) fn measurement(&self) -> BoundaryMeasurement {
        BoundaryMeasurement {
            reported_tokens: None,
            usage_context_window: Some(self.window),
            model_context_window: None,
            system_prompt_tokens: 0,
            projection: NativeProjection::from_branch(&self.branch()),
            settings: resolve_compaction_settings(None, None, Some(self.keep_recent)),
            observed: None,
        }
    }

    /// The branch of the conversation so far, the same as `branch_of(&self.messages)`.
    fn branch(&self) -> std::cell::Ref<'_, Vec<SessionEntry>> {
        let mut branch = self.branch.borrow_mut();
        assert!(
            branch.len() <= self.messages.len(),
            "the driver's conversation only grows"
        );
        let built = branch.len();
        branch.extend(
            self.messages[built..]
                .iter()
                .enumerate()
                .map(|(i, message)| message_entry(built + i, message)),
        );
        drop(branch);
        self.branch.borrow()
    }

    /// The step of the measurement `[Measure]` asked for.
    pub(crate) fn decide_step(&mut self) -> Step {
        let measurement = self.measurement();
        self.occ.on_decide_boundary(&measurement)
    }

    /// The boundary evaluation of the measurement's step (`None` when there was nothing to
    /// evaluate), checked against the step's other effects ([`evaluation`]).
    pub(crate) fn decide(&mut self) -> Option<BoundaryEvaluation> {
        let step = self.decide_step();
        evaluation(&step, &self.occ)
    }
}

/// The evaluation a measurement's step carries, checked against the step's other effects:
/// the decision, then `abort` for a selected compaction (every earlier step saved the state
/// it changed, so nothing is left to save before the abort).
pub(crate) fn evaluation(step: &Step, occ: &OccSession) -> Option<BoundaryEvaluation> {
    let (first, rest) = step.effects.split_first()?;
    let Effect::Decision(evaluation) = first else {
        panic!("a measurement's step starts with the decision: {step:?}");
    };
    assert_eq!(evaluation.abort, evaluation.decision.compact);
    let expected: &[Effect] = if evaluation.abort {
        &[Effect::Abort]
    } else {
        &[]
    };
    assert_eq!(rest, expected, "{step:?}");
    assert_eq!(selected(occ), evaluation.abort);
    assert_eq!(step.account, StepAccount::default());
    Some((**evaluation).clone())
}

/// The state snapshot a step appends, if any (there is at most one).
pub(crate) fn saved_state(step: &Step) -> Option<OccState> {
    let mut snapshots = step.effects.iter().filter_map(|effect| match effect {
        Effect::AppendEntry(entry) if entry.custom_type == STATE_ENTRY_TYPE => {
            Some(OccState::from_value(&entry.data).expect("a valid snapshot"))
        }
        _ => None,
    });
    let first = snapshots.next();
    assert!(
        snapshots.next().is_none(),
        "one snapshot per step: {step:?}"
    );
    first
}

/// Every state snapshot of the step is the state as the step left it.
pub(crate) fn assert_snapshots_are_the_state(step: &Step, occ: &OccSession) {
    if let Some(saved) = saved_state(step) {
        assert_eq!(&saved, occ.state());
    }
}

/// Whether a boundary compaction is selected and waiting for the run to settle: Pi's
/// threshold compaction is cancelled exactly then.
pub(crate) fn selected(occ: &OccSession) -> bool {
    occ.on_before_compact(CompactionTrigger::Threshold)
}

/// Whether a boundary compaction is running: only then does its end (here, on a copy)
/// continue the task.
pub(crate) fn compacting(occ: &OccSession) -> bool {
    let step = occ
        .clone()
        .on_compaction_finished(&CompactionResult::completed(""));
    step.effects
        .iter()
        .any(|effect| matches!(effect, Effect::SendMessage(_)))
}

/// Whether a state change is left unsaved: an aborted plan call changes nothing, so its
/// step (here, on a copy) saves only what an earlier step did not.
pub(crate) fn unsaved(occ: &OccSession) -> bool {
    let (result, step) = occ.clone().on_update_plan("probe", &json!({}), true);
    assert_eq!(result.map(|_| ()), Err(PlanToolError::Aborted));
    !step.effects.is_empty()
}

/// The request mark, as the steps show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// No agent request is being built.
    Clear,
    /// A `context` event announced a request that has not reached the provider yet.
    Marked,
    /// The announced request was counted; its assistant `message_end` is still to come.
    Counted,
}

/// The request mark, probed on copies: a marked request is counted by the next
/// `before_provider_request`; after a `context` event, a request is counted unless the
/// counted one has not ended yet.
pub(crate) fn mark(occ: &OccSession) -> Mark {
    let counts = |mut occ: OccSession| {
        let before = occ.state().request_count;
        occ.on_before_provider_request(None, 0);
        occ.state().request_count > before
    };
    if counts(occ.clone()) {
        return Mark::Marked;
    }
    let mut announced = occ.clone();
    announced.on_context(ContextEvent::total(false, 0));
    if counts(announced) {
        Mark::Clear
    } else {
        Mark::Counted
    }
}

/// The context size a boundary evaluated now would be priced at (Pi reporting no size and
/// no system prompt): a plan step registered and completed on a copy of the session, then
/// measured.
pub(crate) fn boundary_context_tokens(occ: &OccSession) -> u64 {
    let mut occ = occ.clone();
    let plan = |status: &str| plan_args(&[("probe-a", status), ("probe-b", "pending")]);
    assert!(
        occ.on_update_plan("probe-1", &plan("in_progress"), false)
            .0
            .is_ok()
    );
    assert!(
        occ.on_update_plan("probe-2", &plan("completed"), false)
            .0
            .is_ok()
    );
    assert_eq!(
        occ.on_turn_end(&plan_turn("probe-2")).effects,
        vec![Effect::Measure]
    );
    let measurement = BoundaryMeasurement {
        reported_tokens: None,
        usage_context_window: Some(200_000.0),
        model_context_window: None,
        system_prompt_tokens: 0,
        projection: NativeProjection::from_branch(&[]),
        settings: resolve_compaction_settings(None, None, None),
        observed: None,
    };
    let step = occ.on_decide_boundary(&measurement);
    evaluation(&step, &occ)
        .expect("evaluated")
        .decision
        .context_tokens
}

/// What the host does after a boundary compaction ended: the effects of
/// `on_compaction_finished`, by kind, and, when the task continues, those of the
/// continuation's report with Pi idle after sending it (Pi 0.87+).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct FollowUp {
    /// The skip record of a refusal.
    pub(crate) skip_entry: Option<CustomEntry>,
    /// The state snapshot.
    pub(crate) snapshot: Option<OccState>,
    /// A warning for the TUI.
    pub(crate) warning: Option<String>,
    /// The savings notice.
    pub(crate) savings_notice: Option<SavingsNotice>,
    /// The message that continues the task.
    pub(crate) continuation: Option<Continuation>,
    /// The error that fails the dispatch, once the continuation is under way.
    pub(crate) error: Option<String>,
    /// What the compaction's step saved and spent.
    pub(crate) account: StepAccount,
}

impl FollowUp {
    /// Nothing follows (a cancelled compaction, or none running).
    pub(crate) fn is_nothing(&self) -> bool {
        *self == FollowUp::default()
    }

    /// The tokens a completed compaction removed, as accounted (and noticed, when any).
    pub(crate) fn removed_tokens(&self) -> u64 {
        let noticed = self.savings_notice.as_ref().map_or(0, |n| n.removed_tokens);
        assert_eq!(noticed, self.account.tokens_removed);
        self.account.tokens_removed
    }
}

/// Reports how `ctx.compact()` ended and carries out the continuation, as the host does;
/// checks that the effects come in the order the host carries them out.
pub(crate) fn finish(occ: &mut OccSession, result: &CompactionResult) -> FollowUp {
    let step = occ.on_compaction_finished(result);
    let mut follow_up = FollowUp {
        account: step.account,
        ..FollowUp::default()
    };
    let mut rank = 0;
    for effect in step.effects {
        let next = match effect {
            Effect::AppendEntry(entry) if entry.custom_type == text::SKIP_ENTRY_TYPE => {
                follow_up.skip_entry = Some(entry);
                1
            }
            Effect::AppendEntry(entry) => {
                assert_eq!(entry.custom_type, STATE_ENTRY_TYPE);
                assert_eq!(entry.data, occ.state().to_value());
                follow_up.snapshot = Some(OccState::from_value(&entry.data).expect("valid"));
                2
            }
            Effect::Warn { text } => {
                follow_up.warning = Some(text);
                3
            }
            Effect::SavingsNotice(notice) => {
                follow_up.savings_notice = Some(notice);
                4
            }
            Effect::SendMessage(continuation) => {
                follow_up.continuation = Some(continuation);
                5
            }
            other => panic!("not a compaction's follow-up: {other:?}"),
        };
        assert!(next > rank, "out of order or repeated: {next} after {rank}");
        rank = next;
    }
    if follow_up.continuation.is_some() {
        let sent = occ.on_continuation_sent(true);
        match sent.effects.as_slice() {
            [] => {}
            [Effect::Fail { error }] => follow_up.error = Some(error.clone()),
            other => panic!("after the continuation: {other:?}"),
        }
    } else {
        assert_eq!(
            occ.on_continuation_sent(true),
            Step::default(),
            "nothing sent"
        );
    }
    follow_up
}

/// A normal turn whose only tool result is the successful plan call `call`.
pub(crate) fn plan_turn(call: &str) -> TurnEnd {
    TurnEnd {
        stop_reason: Some(StopReason::ToolUse),
        aborted: false,
        tool_results: vec![TurnToolResult {
            tool_call_id: call.to_owned(),
            tool_name: "update_plan".to_owned(),
            is_error: false,
        }],
    }
}

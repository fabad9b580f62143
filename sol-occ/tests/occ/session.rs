//! The lifecycle state machine, driven the way the host drives it from Pi's events: through
//! the `on_*` steps, with assertions on the effects they return and on what the session's
//! read-only accessors (and the probes of `support.rs`) show.

use serde_json::json;
use sol_core::StepAccount;
use sol_occ::DecisionReason;
use sol_occ::session::{
    CompactionErrorKind, CompactionResult, CompactionTrigger, ContextEvent, Effect, InputEvent,
    NativeRefusal, OccSession, PiCapabilities, PlanToolError, Step, StopReason, TurnEnd,
    TurnToolResult, classify_compaction_error,
};
use sol_occ::settings::OccOptions;
use sol_occ::state::{OccState, STATE_ENTRY_TYPE};
use sol_occ::text;
use sol_occ::tokens::{MessageRole, SizedMessage};

use crate::support::{
    Driver, Mark, boundary_context_tokens, compacting, finish, mark, plan_args, plan_turn,
    saved_state, selected, unsaved, user,
};

fn session() -> OccSession {
    let mut occ = OccSession::new(OccOptions {
        cache_write_read_ratio: Some(12.5),
        keep_recent_tokens: None,
    });
    assert_eq!(occ.on_session_start(&[], Vec::new()), Step::default());
    occ
}

fn context(occ: &mut OccSession, aborted: bool) {
    let step = occ.on_context(ContextEvent::new(aborted, &[user(1, 40)]));
    assert_eq!(step, Step::default(), "an observation is not saved");
}

/// Whether `before_provider_request` counted the request; a counted request is saved.
fn provider_request(occ: &mut OccSession, reported: Option<f64>, system_prompt: u64) -> bool {
    let before = occ.state().request_count;
    let step = occ.on_before_provider_request(reported, system_prompt);
    let counted = occ.state().request_count > before;
    match saved_state(&step) {
        Some(saved) => assert!(counted && &saved == occ.state()),
        None => assert!(!counted && step == Step::default()),
    }
    counted
}

fn input(text: &str, streaming: Option<&str>) -> InputEvent {
    InputEvent {
        text: text.to_owned(),
        streaming_behavior: streaming.map(str::to_owned),
    }
}

/// The compaction instructions of a settlement that starts the selected compaction.
fn compacts(step: &Step) -> &str {
    let [
        Effect::Compact {
            custom_instructions,
        },
    ] = step.effects.as_slice()
    else {
        panic!("the idle settlement compacts: {step:?}");
    };
    custom_instructions
}

/// A driver with one completed boundary that the economics select (ratio 0).
fn selected_boundary() -> Driver {
    selected_boundary_on(PiCapabilities::default())
}

fn selected_boundary_on(capabilities: PiCapabilities) -> Driver {
    let mut d = Driver::with_capabilities(Some(0.0), capabilities);
    d.request(8_000);
    d.plan("p1", &[("build", "in_progress"), ("ship", "pending")]);
    assert_eq!(d.turn_end("p1"), Step::default(), "no boundary");
    d.request(8_000);
    d.request(8_000);
    let args = json!({"steps": [
        {"id": "build", "goal": "goal build", "status": "completed"},
        {"id": "ship", "goal": "goal ship", "status": "in_progress"},
    ], "progress": {"files_changed": ["src/lib.rs"], "verification": ["cargo test: 12 passed"]}});
    let (result, step) = d.occ.on_update_plan("p2", &args, false);
    let output = result.expect("valid");
    assert!(output.details.boundary && output.details.progress_recorded);
    assert_eq!(saved_state(&step).as_ref(), Some(d.occ.state()));
    assert_eq!(d.turn_end("p2").effects, vec![Effect::Measure]);
    let evaluation = d.decide().expect("evaluated");
    assert!(evaluation.abort, "{:?}", evaluation.decision.reason);
    d
}

#[test]
fn a_context_event_marks_the_next_provider_request() {
    let mut occ = session();
    context(&mut occ, false);
    assert_eq!(mark(&occ), Mark::Marked);
    assert!(provider_request(&mut occ, Some(5_000.0), 10));
    assert_eq!(
        occ.state().last_context_tokens,
        Some(5_000),
        "Pi's larger reported size wins"
    );
    assert_eq!(mark(&occ), Mark::Counted);
    assert_eq!(
        occ.on_message_end(MessageRole::parse("toolResult")),
        Step::default()
    );
    assert_eq!(
        mark(&occ),
        Mark::Counted,
        "only the assistant message ends it"
    );
    assert_eq!(
        occ.on_message_end(MessageRole::parse("assistant")),
        Step::default()
    );
    assert_eq!(mark(&occ), Mark::Clear);
    assert_eq!(occ.state().request_count, 1);
    assert!(!unsaved(&occ), "the count was saved by its own step");
}

#[test]
fn the_estimate_is_used_when_pi_reports_no_size() {
    let mut occ = session();
    context(&mut occ, false);
    // 40 characters = 10 tokens, plus a 5-token system prompt; 0 and NaN are not sizes.
    for reported in [Some(0.0), Some(f64::NAN), Some(3.0), None] {
        let mut request = occ.clone();
        assert!(provider_request(&mut request, reported, 5));
        assert_eq!(
            request.state().last_context_tokens,
            Some(15),
            "{reported:?}"
        );
    }
}

#[test]
fn aborted_builds_and_cache_warming_replays_are_not_counted() {
    let mut occ = session();
    assert!(
        !provider_request(&mut occ, None, 0),
        "a replay without context"
    );
    context(&mut occ, true);
    assert!(!provider_request(&mut occ, None, 0), "an aborted build");
    context(&mut occ, false);
    assert!(provider_request(&mut occ, None, 0));
    assert!(
        !provider_request(&mut occ, None, 0),
        "a replay of the same request"
    );
    context(&mut occ, false);
    assert!(
        !provider_request(&mut occ, None, 0),
        "the request has not ended yet"
    );
    occ.on_message_end(MessageRole::Assistant);
    assert_eq!(occ.state().request_count, 1);
}

#[test]
fn session_events_clear_a_pending_mark() {
    let clear: [fn(&mut OccSession) -> Step; 4] = [
        |occ| occ.on_session_start(&[], Vec::new()),
        |occ| occ.on_session_tree(&[], Vec::new()),
        |occ| occ.on_session_compact(false, Vec::new()),
        OccSession::on_session_shutdown,
    ];
    for event in clear {
        let mut occ = session();
        context(&mut occ, false);
        let step = event(&mut occ);
        assert!(
            step.effects
                .iter()
                .all(|effect| matches!(effect, Effect::AppendEntry(e) if e.custom_type == STATE_ENTRY_TYPE)),
            "{step:?}"
        );
        assert_eq!(mark(&occ), Mark::Clear);
        assert!(!provider_request(&mut occ, None, 0));
    }
}

#[test]
fn the_context_event_is_only_observed() {
    let mut occ = session();
    let messages = vec![user(1, 40)];
    let before = messages.clone();
    occ.on_context(ContextEvent::new(false, &messages));
    assert_eq!(messages, before, "the messages are borrowed, never changed");
}

#[test]
fn restore_is_lazy_and_reads_the_branch() {
    let mut occ = OccSession::new(OccOptions {
        cache_write_read_ratio: None,
        keep_recent_tokens: None,
    });
    assert!(occ.needs_restore());
    let saved = OccState {
        request_count: 4,
        ..OccState::default()
    };
    let branch = sol_core::session::SessionEntry::from_values([
        json!({"type": "custom", "customType": STATE_ENTRY_TYPE, "data": saved.to_value()}),
    ]);
    assert_eq!(
        occ.on_restore(&branch),
        Step::default(),
        "nothing unreadable"
    );
    assert!(!occ.needs_restore());
    assert_eq!(occ.state().request_count, 4);
}

#[test]
fn a_selection_not_idle_at_its_settlement_is_dropped_and_never_compacts_later() {
    let mut d = selected_boundary();
    let step = d.occ.on_agent_settled(false);
    let [Effect::AppendEntry(skip_entry)] = step.effects.as_slice() else {
        panic!("Pi was not idle at the settlement of the stopped run: {step:?}");
    };
    assert_eq!(skip_entry.custom_type, text::SKIP_ENTRY_TYPE);
    assert_eq!(skip_entry.data["reason"], "not_idle_at_settle");
    assert_eq!(skip_entry.data["decisionReason"], "economic");
    assert!(skip_entry.data["archiveTokens"].as_u64().is_some());
    assert!(!selected(&d.occ) && !compacting(&d.occ));
    assert!(
        !d.occ.on_before_compact(CompactionTrigger::Threshold),
        "nothing is selected any more"
    );
    // The next, unrelated settlement (idle) does not compact at its point.
    d.request(8_000);
    assert_eq!(d.occ.on_agent_settled(true), Step::default());
    assert_eq!(d.occ.on_agent_settled(true), Step::default());
    // The retry block is untouched: a later boundary is evaluated normally.
    assert!(!d.occ.is_retry_blocked());
}

#[test]
fn the_main_flow_compacts_once_and_continues() {
    let mut d = selected_boundary();
    assert!(selected(&d.occ));
    assert!(d.occ.on_before_compact(CompactionTrigger::Threshold));
    assert!(!d.occ.on_before_compact(CompactionTrigger::Manual));
    assert!(!d.occ.on_before_compact(CompactionTrigger::Overflow));

    let step = d.occ.on_agent_settled(true);
    let custom_instructions = compacts(&step);
    assert!(custom_instructions.starts_with(text::BOUNDARY_COMPACTION_INSTRUCTIONS));
    assert!(custom_instructions.contains(r#""verification":["cargo test: 12 passed"]"#));
    assert!(compacting(&d.occ));
    assert!(d.occ.on_before_tree(), "Pi 0.84.2 reports idle meanwhile");
    let mut refusing = selected_boundary_on(PiCapabilities {
        refuses_tree_navigation_during_compaction: true,
    });
    compacts(&refusing.occ.on_agent_settled(true));
    assert!(!refusing.occ.on_before_tree(), "Pi 1.x refuses by itself");
    assert!(
        !d.occ.on_before_compact(CompactionTrigger::Manual),
        "our own compaction"
    );
    assert_eq!(
        d.occ.on_agent_settled(true).effects,
        vec![Effect::KeepWaiting]
    );

    let step = d.occ.on_session_compact(false, Vec::new());
    let state = d.occ.state().clone();
    assert_eq!(saved_state(&step), Some(state.clone()));
    assert_eq!(state.native_compaction_count, 1);
    assert!(state.pending_progress.is_empty());
    assert_eq!(state.plan.len(), 2, "the plan survives the compaction");
    assert_eq!(state.cache_debt_tokens, 0.0, "ratio 0 charges no debt");

    let follow_up = finish(
        &mut d.occ,
        &CompactionResult::Completed {
            summary: "s".repeat(400),
        },
    );
    let removed_tokens = follow_up.removed_tokens();
    assert!(removed_tokens > 0);
    assert_eq!(follow_up.account.model_calls, 1);
    let continuation = follow_up.continuation.expect("one hidden continuation");
    assert_eq!(continuation.custom_type, "sol-pi-online-context-compact");
    assert!(!continuation.display && continuation.trigger_turn);
    assert_eq!(
        continuation.content,
        text::continuation_after_compaction(&state.plan, sol_occ::plan::TOOL_NAME)
    );
    let notice = follow_up.savings_notice.expect("tokens were removed");
    assert_eq!(notice.notice, text::savings_notice(removed_tokens));
    assert!(follow_up.error.is_none() && follow_up.skip_entry.is_none());

    assert!(!d.occ.on_before_tree(), "navigation works again");
    assert_eq!(d.occ.on_agent_settled(true), Step::default());
    assert!(
        finish(
            &mut d.occ,
            &CompactionResult::Completed {
                summary: String::new()
            }
        )
        .is_nothing(),
        "no compaction is running any more"
    );
}

#[test]
fn a_selected_compaction_charges_its_cache_debt() {
    let mut d = Driver::new(Some(1.5));
    d.request(8_000);
    d.plan("p1", &[("a", "in_progress"), ("b", "pending")]);
    d.request(8_000);
    d.request(8_000);
    d.plan("p2", &[("a", "completed"), ("b", "in_progress")]);
    assert_eq!(d.turn_end("p2").effects, vec![Effect::Measure]);
    let evaluation = d.decide().expect("evaluated");
    assert!(evaluation.abort, "{:?}", evaluation.decision);
    let decision = evaluation.decision;
    compacts(&d.occ.on_agent_settled(true));
    let step = d.occ.on_session_compact(false, Vec::new());
    let state = d.occ.state();
    assert_eq!(saved_state(&step).as_ref(), Some(state));
    assert_eq!(state.cache_debt_tokens, decision.write_tokens as f64 * 0.5);
    assert_eq!(state.cache_debt_repayment_tokens, decision.saving_tokens);
}

#[test]
fn an_extension_supplied_summary_charges_no_debt() {
    let mut d = Driver::new(Some(1.5));
    d.request(8_000);
    d.plan("p1", &[("a", "in_progress"), ("b", "pending")]);
    d.request(8_000);
    d.request(8_000);
    d.plan("p2", &[("a", "completed"), ("b", "in_progress")]);
    d.turn_end("p2");
    assert!(d.decide().expect("evaluated").abort);
    d.occ.on_agent_settled(true);
    d.occ.on_session_compact(true, Vec::new());
    assert_eq!(d.occ.state().cache_debt_tokens, 0.0);
}

#[test]
fn too_little_removable_history_never_aborts() {
    let mut d = Driver::new(Some(0.0));
    d.keep_recent = 20_000;
    d.occ = OccSession::new(OccOptions {
        cache_write_read_ratio: Some(0.0),
        keep_recent_tokens: None,
    });
    d.occ.on_session_start(&[], Vec::new());
    d.request(40);
    d.plan("p1", &[("a", "in_progress"), ("b", "pending")]);
    d.request(40);
    d.request(100_000);
    d.plan("p2", &[("a", "completed"), ("b", "in_progress")]);
    assert_eq!(d.turn_end("p2").effects, vec![Effect::Measure]);
    let evaluation = d.decide().expect("evaluated");
    assert!(!evaluation.abort);
    assert_eq!(
        evaluation.decision.reason,
        DecisionReason::NonPositiveSaving
    );
    assert!(
        evaluation.estimate.removable_tokens < 100,
        "{}",
        evaluation.estimate.removable_tokens
    );
    assert_eq!(d.occ.on_agent_settled(true), Step::default());
}

#[test]
fn a_branch_pi_would_refuse_is_not_compactable() {
    let mut d = Driver::new(Some(0.0));
    d.request(8_000);
    d.plan("p1", &[("a", "in_progress"), ("b", "pending")]);
    d.request(8_000);
    d.request(8_000);
    d.plan("p2", &[("a", "completed"), ("b", "in_progress")]);
    d.turn_end("p2");
    let mut measurement = d.measurement();
    measurement.projection.leaf_is_compaction = true;
    let step = d.occ.on_decide_boundary(&measurement);
    let evaluation = crate::support::evaluation(&step, &d.occ).expect("evaluated");
    assert_eq!(
        evaluation.decision.reason,
        DecisionReason::NativeNotCompactable
    );
    assert!(!evaluation.abort && !selected(&d.occ));
}

#[test]
fn a_window_starting_with_a_system_message_is_too_small() {
    let mut d = Driver::new(Some(0.0));
    d.keep_recent = 20_000;
    d.occ = OccSession::new(OccOptions {
        cache_write_read_ratio: Some(0.0),
        keep_recent_tokens: None,
    });
    d.occ.on_session_start(&[], Vec::new());
    d.messages.push(sol_core::message::AgentMessage::from_value(
        json!({"role": "system", "content": "x".repeat(60_000), "timestamp": 0}),
    ));
    d.request(40);
    d.plan("p1", &[("a", "in_progress"), ("b", "pending")]);
    d.request(40);
    d.plan("p2", &[("a", "completed"), ("b", "in_progress")]);
    d.turn_end("p2");
    let evaluation = d.decide().expect("evaluated");
    assert_eq!(evaluation.estimate.removed_messages, 0);
    assert!(!evaluation.estimate.compactable && !evaluation.abort);
}

#[test]
fn boundaries_are_skipped_when_the_turn_did_not_end_normally() {
    let cases = [
        (
            TurnEnd {
                stop_reason: Some(StopReason::parse("error")),
                ..plan_turn("p2")
            },
            "turn failed",
        ),
        (
            TurnEnd {
                stop_reason: Some(StopReason::parse("aborted")),
                ..plan_turn("p2")
            },
            "turn aborted",
        ),
        (
            TurnEnd {
                aborted: true,
                ..plan_turn("p2")
            },
            "turn aborted",
        ),
        (
            TurnEnd {
                tool_results: Vec::new(),
                ..plan_turn("p2")
            },
            "plan result missing",
        ),
        (
            TurnEnd {
                tool_results: vec![TurnToolResult {
                    tool_call_id: "p2".into(),
                    tool_name: "update_plan".into(),
                    is_error: true,
                }],
                ..plan_turn("p2")
            },
            "plan result failed",
        ),
    ];
    for (turn, skip) in cases {
        let mut d = Driver::new(Some(0.0));
        d.request(8_000);
        d.plan("p1", &[("a", "in_progress")]);
        d.request(8_000);
        d.plan("p2", &[("a", "completed")]);
        assert_eq!(
            d.occ.clone().on_turn_end(&plan_turn("p2")).effects,
            vec![Effect::Measure],
            "the boundary a normal turn would evaluate"
        );
        assert_eq!(d.occ.on_turn_end(&turn), Step::default(), "{skip}");
        assert!(d.decide().is_none(), "nothing to evaluate after {skip}");
        assert_eq!(
            d.occ.on_turn_end(&plan_turn("p2")),
            Step::default(),
            "taken once"
        );
    }
}

#[test]
fn only_the_first_plan_call_of_a_turn_is_the_pending_boundary() {
    let mut d = Driver::new(Some(0.0));
    d.request(8_000);
    d.plan(
        "p1",
        &[("a", "in_progress"), ("b", "pending"), ("c", "pending")],
    );
    d.request(8_000);
    d.request(8_000);
    d.plan(
        "p2",
        &[("a", "completed"), ("b", "in_progress"), ("c", "pending")],
    );
    d.plan(
        "p3",
        &[("a", "completed"), ("b", "completed"), ("c", "in_progress")],
    );
    assert_eq!(d.occ.state().completed_boundary_request_counts, vec![3, 0]);
    assert_eq!(d.turn_end("p2").effects, vec![Effect::Measure]);
}

#[test]
fn a_boundary_during_a_selected_compaction_is_skipped() {
    let mut d = selected_boundary();
    d.plan("p3", &[("build", "completed"), ("ship", "completed")]);
    assert!(selected(&d.occ));
    assert_eq!(d.turn_end("p3"), Step::default(), "compaction in progress");
    assert!(d.decide().is_none());
}

#[test]
fn plan_tool_errors_leave_the_state_alone() {
    let mut occ = session();
    let before = occ.state().clone();
    let (aborted, step) = occ.on_update_plan("p", &plan_args(&[("a", "pending")]), true);
    let aborted = aborted.expect_err("aborted");
    assert_eq!(aborted, PlanToolError::Aborted);
    assert_eq!(aborted.to_string(), "Plan update was aborted");
    assert_eq!(step, Step::default(), "nothing to save");
    let (invalid, step) = occ.on_update_plan("p", &json!({"steps": []}), false);
    assert_eq!(invalid.expect_err("empty").code(), "no_steps");
    assert_eq!(step, Step::default(), "nothing to save");
    assert_eq!(occ.state(), &before);
    assert!(!unsaved(&occ));
}

/// A selected boundary, settled and compacted once.
fn compacted_once() -> Driver {
    let mut d = selected_boundary();
    d.occ.on_agent_settled(true);
    d.occ.on_session_compact(false, Vec::new());
    finish(
        &mut d.occ,
        &CompactionResult::Completed {
            summary: String::new(),
        },
    );
    d
}

#[test]
fn restating_the_plan_after_compaction_is_not_progress() {
    let mut d = compacted_once();
    for call in ["r1", "r2", "r3"] {
        d.request(8_000);
        let output = d.plan(call, &[("build", "completed"), ("ship", "in_progress")]);
        assert!(!output.details.boundary);
        assert_eq!(d.turn_end(call), Step::default(), "no boundary");
    }
    // Re-keyed, with the finished work arriving completed: history, not progress.
    d.request(8_000);
    let output = d.plan("r4", &[("p1", "completed"), ("p2", "completed")]);
    assert!(!output.details.boundary && output.details.completed_step_ids.is_empty());
    assert_eq!(d.occ.state().native_compaction_count, 1);
}

#[test]
fn two_boundaries_compact_twice() {
    let mut d = compacted_once();
    for _ in 0..3 {
        d.request(8_000);
    }
    d.plan("p3", &[("build", "completed"), ("ship", "completed")]);
    assert_eq!(d.turn_end("p3").effects, vec![Effect::Measure]);
    let evaluation = d.decide().expect("evaluated");
    assert!(evaluation.abort, "{:?}", evaluation.decision.reason);
    compacts(&d.occ.on_agent_settled(true));
    d.occ.on_session_compact(false, Vec::new());
    let follow_up = finish(
        &mut d.occ,
        &CompactionResult::Completed {
            summary: String::new(),
        },
    );
    assert!(follow_up.continuation.is_some());
    assert_eq!(d.occ.state().native_compaction_count, 2);
}

#[test]
fn the_cooldown_holds_back_an_economic_boundary_right_after_a_compaction() {
    let mut d = compacted_once();
    d.request(8_000);
    d.plan("p3", &[("build", "completed"), ("ship", "completed")]);
    d.turn_end("p3");
    let evaluation = d.decide().expect("evaluated");
    assert_eq!(evaluation.decision.requests_since_last_compaction, Some(1));
    assert_eq!(
        evaluation.decision.reason,
        DecisionReason::DeferredPostCompactionCooldown
    );
}

#[test]
fn pi_threshold_compaction_is_recorded_without_debt() {
    let mut occ = session();
    assert!(
        !occ.on_before_compact(CompactionTrigger::Threshold),
        "nothing selected"
    );
    let step = occ.on_session_compact(false, vec![SizedMessage::from_message(&user(1, 40))]);
    assert_eq!(saved_state(&step).as_ref(), Some(occ.state()));
    assert_eq!(occ.state().native_compaction_count, 1);
    assert_eq!(occ.state().cache_debt_tokens, 0.0);
    assert_eq!(
        boundary_context_tokens(&occ),
        10,
        "the compacted messages are observed"
    );
    assert_eq!(
        CompactionTrigger::parse("threshold"),
        CompactionTrigger::Threshold
    );
    assert_eq!(
        CompactionTrigger::parse("overflow"),
        CompactionTrigger::Overflow
    );
    assert_eq!(
        CompactionTrigger::parse("manual"),
        CompactionTrigger::Manual
    );
}

#[test]
fn an_overflow_compaction_consumes_the_selection() {
    let mut d = selected_boundary();
    d.occ.on_session_compact(false, Vec::new());
    assert!(!selected(&d.occ));
    assert_eq!(d.occ.on_agent_settled(true), Step::default());
}

#[test]
fn native_refusals_resume_once_and_block_plan_only_retries() {
    let mut d = selected_boundary();
    d.occ.on_agent_settled(true);
    let follow_up = finish(
        &mut d.occ,
        &CompactionResult::Failed {
            name: Some("Error".into()),
            message: "Nothing to compact (session too small)".into(),
        },
    );
    let entry = follow_up.skip_entry.expect("a skip record");
    assert_eq!(entry.custom_type, "sol-pi-online-context-compact-skipped");
    assert_eq!(entry.data["reason"], NativeRefusal::NothingToCompact.code());
    let continuation = follow_up.continuation.expect("resumes once");
    assert!(continuation.trigger_turn && !continuation.display);
    assert!(
        follow_up
            .warning
            .expect("a TUI warning")
            .contains("Compaction skipped")
    );
    assert!(follow_up.error.is_none());
    assert_eq!(follow_up.account, StepAccount::default(), "no summary");
    assert_eq!(
        d.occ.state().native_compaction_count,
        0,
        "no compaction recorded"
    );
    assert_eq!(d.occ.state().cache_debt_tokens, 0.0);
    assert!(d.occ.is_retry_blocked());

    // The resumed turn only updates the plan: no new compaction.
    d.request(8_000);
    d.plan("p3", &[("build", "completed"), ("ship", "completed")]);
    assert_eq!(d.turn_end("p3"), Step::default(), "retry blocked");

    // Real work lifts the block.
    let work = TurnEnd {
        stop_reason: Some(StopReason::parse("toolUse")),
        aborted: false,
        tool_results: vec![TurnToolResult {
            tool_call_id: "b1".into(),
            tool_name: "bash".into(),
            is_error: false,
        }],
    };
    assert_eq!(d.occ.on_turn_end(&work), Step::default(), "no boundary");
    assert!(!d.occ.is_retry_blocked());
}

#[test]
fn failed_tool_work_does_not_lift_the_block_but_user_input_does() {
    let mut d = selected_boundary();
    d.occ.on_agent_settled(true);
    finish(
        &mut d.occ,
        &CompactionResult::Failed {
            name: None,
            message: "Already compacted".into(),
        },
    );
    let failed = TurnEnd {
        stop_reason: Some(StopReason::parse("toolUse")),
        aborted: false,
        tool_results: vec![TurnToolResult {
            tool_call_id: "b".into(),
            tool_name: "bash".into(),
            is_error: true,
        }],
    };
    d.occ.on_turn_end(&failed);
    assert!(d.occ.is_retry_blocked());
    d.occ.on_input(&input("please continue", None));
    assert!(!d.occ.is_retry_blocked());
}

#[test]
fn other_failures_continue_and_report_the_error() {
    let mut d = selected_boundary();
    d.occ.on_agent_settled(true);
    let follow_up = finish(
        &mut d.occ,
        &CompactionResult::Failed {
            name: Some("Error".into()),
            message: "Summarization failed: 529 overloaded".into(),
        },
    );
    let continuation = follow_up.continuation.expect("the task continues");
    assert!(continuation.content.contains("did not complete"));
    assert_eq!(
        follow_up.error.as_deref(),
        Some(
            "Online Context Compact: the compaction at a completed plan step failed: Summarization failed: 529 overloaded"
        )
    );
    assert!(follow_up.skip_entry.is_none());
    assert_eq!(follow_up.account, StepAccount::default(), "no summary");
    assert!(d.occ.is_retry_blocked());
}

#[test]
fn cancellation_and_shutdown_never_continue() {
    for (name, message) in [
        (Some("AbortError"), "This operation was aborted"),
        (None, "Compaction cancelled"),
    ] {
        let mut d = selected_boundary();
        d.occ.on_agent_settled(true);
        assert!(compacting(&d.occ));
        let follow_up = finish(
            &mut d.occ,
            &CompactionResult::Failed {
                name: name.map(str::to_owned),
                message: message.to_owned(),
            },
        );
        assert!(follow_up.is_nothing(), "cancelled: {follow_up:?}");
        assert!(!compacting(&d.occ));
    }
    let mut d = selected_boundary();
    d.occ.on_agent_settled(true);
    assert_eq!(d.occ.on_session_shutdown(), Step::default());
    assert!(!compacting(&d.occ), "the shutdown ended the run");
    let follow_up = finish(
        &mut d.occ,
        &CompactionResult::Completed {
            summary: String::new(),
        },
    );
    assert!(follow_up.is_nothing(), "not running: {follow_up:?}");
}

#[test]
fn compaction_errors_are_classified_by_exact_text() {
    use CompactionErrorKind::*;
    assert_eq!(
        classify_compaction_error(Some("AbortError"), "anything"),
        Cancelled
    );
    assert_eq!(
        classify_compaction_error(None, "Compaction cancelled"),
        Cancelled
    );
    assert_eq!(
        classify_compaction_error(None, "Nothing to compact (session too small)"),
        Refused(NativeRefusal::NothingToCompact)
    );
    assert_eq!(
        classify_compaction_error(None, "Already compacted"),
        Refused(NativeRefusal::AlreadyCompacted)
    );
    for label in ["Summarization", "Turn prefix summarization"] {
        let message =
            format!("{label} failed: generation hit the token cap and the summary is incomplete");
        assert_eq!(
            classify_compaction_error(None, &message),
            Refused(NativeRefusal::SummaryTokenCap)
        );
    }
    assert_eq!(classify_compaction_error(None, "already compacted"), Failed);
    assert_eq!(
        classify_compaction_error(None, "Compaction failed: Already compacted"),
        Failed
    );
}

#[test]
fn corrections_drop_the_plan_and_the_selection() {
    for correction in [
        input("stop, use the other API", Some("steer")),
        input("CORRECTION: wrong file", None),
    ] {
        let mut d = selected_boundary();
        let epoch = d.occ.state().epoch;
        let step = d.occ.on_input(&correction);
        let saved = saved_state(&step).expect("the correction is saved");
        assert_eq!(&saved, d.occ.state());
        assert_eq!(saved.epoch, epoch + 1, "a new epoch");
        assert_eq!(
            saved.last_context_tokens, None,
            "a correction drops the context samples too"
        );
        assert!(!selected(&d.occ));
        assert!(d.occ.state().plan.is_empty());
        assert!(d.occ.state().completed_boundary_request_counts.is_empty());
        assert_eq!(d.occ.on_agent_settled(true), Step::default());
    }
    let mut occ = session();
    let before = occ.state().clone();
    assert_eq!(
        occ.on_input(&input("a follow-up", Some("followUp"))),
        Step::default(),
        "any other input changes nothing"
    );
    assert_eq!(occ.state(), &before);
}

#[test]
fn a_new_task_after_a_completed_plan_starts_a_new_horizon() {
    let mut d = Driver::new(Some(0.0));
    d.request(8_000);
    d.plan("p1", &[("a", "in_progress")]);
    d.request(8_000);
    d.plan("p2", &[("a", "completed")]);
    d.turn_end("p2");
    let epoch = d.occ.state().epoch;
    let step = d.occ.on_input(&input("Next, add metrics.", None));
    let state = d.occ.state();
    assert_eq!(
        saved_state(&step).as_ref(),
        Some(state),
        "the handoff is saved"
    );
    assert_eq!(state.epoch, epoch + 1, "a new epoch");
    assert!(
        state.last_context_tokens.is_some(),
        "a handoff, not a correction: the context samples stay"
    );
    assert!(state.plan.is_empty() && state.completed_boundary_request_counts.is_empty());
    assert_eq!(state.last_boundary_request_count, state.request_count);
    assert_eq!(
        d.occ.on_input(&input("And docs.", None)),
        Step::default(),
        "any other input changes nothing"
    );
}

#[test]
fn update_plan_results_carry_the_snapshot_and_details() {
    let mut occ = session();
    let (result, step) = occ.on_update_plan(
        "p1",
        &plan_args(&[("a", "in_progress"), ("b", "in_progress")]),
        false,
    );
    let output = result.expect("valid");
    assert!(
        output
            .text
            .starts_with("<sol-pi-plan task_status=\"active\">{\"steps\":[")
    );
    assert_eq!(output.text.lines().count(), 2, "one advice line");
    let details = serde_json::to_value(&output.details).expect("json");
    assert_eq!(
        details,
        json!({"boundary": false, "completed_step_ids": [], "progress_recorded": false,
               "task_status": "active", "plan": [
                   {"id": "a", "goal": "goal a", "status": "in_progress"},
                   {"id": "b", "goal": "goal b", "status": "in_progress"}]})
    );
    let snapshot = saved_state(&step).expect("the plan was stored");
    assert_eq!(snapshot.plan.len(), 2);
}

#[test]
fn progress_without_a_completion_is_not_recorded() {
    let mut occ = session();
    let args = json!({"steps": [{"id": "a", "goal": "g", "status": "in_progress"}],
                      "progress": {"decisions": ["use BTreeMap"]}});
    let (result, _) = occ.on_update_plan("p", &args, false);
    let output = result.expect("valid");
    assert!(!output.details.progress_recorded);
    assert!(occ.state().pending_progress.is_empty());
}

#[test]
fn a_compaction_abandoned_by_shutdown_ends_like_a_cancelled_one() {
    let mut d = selected_boundary();
    d.occ.on_agent_settled(true);
    let follow_up = finish(&mut d.occ, &CompactionResult::Abandoned);
    assert!(follow_up.continuation.is_none());
    assert!(follow_up.skip_entry.is_none());
    assert!(follow_up.error.is_none() && follow_up.warning.is_none());
    assert!(follow_up.savings_notice.is_none());
    assert!(follow_up.is_nothing());
    // The run ended: a late callback finds nothing running.
    assert!(!compacting(&d.occ));
    let late = finish(
        &mut d.occ,
        &CompactionResult::Completed {
            summary: "late".into(),
        },
    );
    assert!(late.is_nothing());
}

#[test]
fn the_plan_tool_name_is_an_option_of_the_session() {
    // A harness that registers the plan tool as `set_plan`: the continuation tells the model
    // to call `set_plan`, and a turn's `set_plan` result is the plan call, not other work.
    let mut d = selected_boundary();
    d.occ = d.occ.clone().with_plan_tool_name("set_plan");
    compacts(&d.occ.on_agent_settled(true));
    d.occ.on_session_compact(false, Vec::new());
    let follow_up = finish(
        &mut d.occ,
        &CompactionResult::Completed {
            summary: "s".repeat(400),
        },
    );
    let continuation = follow_up.continuation.expect("a continuation");
    assert_eq!(
        continuation.content,
        text::continuation_after_compaction(&d.occ.state().plan, "set_plan")
    );
    assert!(
        continuation
            .content
            .contains("when you next call set_plan;")
    );
    assert!(!continuation.content.contains("update_plan"));

    // A failed compaction blocks retries until other tool work: `update_plan` is other work
    // for this session, `set_plan` is not.
    let mut d = selected_boundary();
    d.occ = d.occ.clone().with_plan_tool_name("set_plan");
    d.occ.on_agent_settled(true);
    let failed = CompactionResult::Failed {
        name: None,
        message: "boom".into(),
    };
    assert!(finish(&mut d.occ, &failed).continuation.is_some());
    assert!(d.occ.is_retry_blocked());
    let turn = |name: &str| TurnEnd {
        stop_reason: Some(StopReason::ToolUse),
        aborted: false,
        tool_results: vec![TurnToolResult {
            tool_call_id: "x".into(),
            tool_name: name.into(),
            is_error: false,
        }],
    };
    d.occ.on_turn_end(&turn("set_plan"));
    assert!(d.occ.is_retry_blocked(), "the plan tool is not work");
    d.occ.on_turn_end(&turn("update_plan"));
    assert!(!d.occ.is_retry_blocked(), "another tool is work");
}

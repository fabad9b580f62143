//! The persisted state: exact shape, restoration, and every transition.

use serde_json::{Value, json};
use sol_core::session::SessionEntry;
use sol_occ::OccSession;
use sol_occ::plan::{PlanStep, ProgressSummary, StepStatus, analyze_transition};
use sol_occ::settings::OccOptions;
use sol_occ::state::{
    CacheDebt, OccState, STATE_ENTRY_TYPE, StateError, latest_state, restore_state,
};

fn state_entry(data: Value) -> Value {
    json!({"type": "custom", "customType": STATE_ENTRY_TYPE, "id": "s", "parentId": null,
           "timestamp": "2026-03-02T09:00:00.000Z", "data": data})
}

fn summary(step: &str) -> ProgressSummary {
    ProgressSummary {
        step_id: step.into(),
        goal: format!("goal {step}"),
        files_changed: vec!["src/a.rs".into()],
        verification: vec![],
        decisions: vec![],
        next_work: vec![],
    }
}

#[test]
fn the_initial_state_has_exactly_these_fields_in_this_order() {
    let value = OccState::default().to_value();
    assert_eq!(
        serde_json::to_string(&value).expect("json"),
        concat!(
            r#"{"version":1,"epoch":0,"plan":[],"pendingProgress":[],"requestCount":0,"#,
            r#""lastBoundaryRequestCount":0,"completedBoundaryRequestCounts":[],"lastContextTokens":null,"#,
            r#""positiveContextDeltaTotal":0,"positiveContextDeltaCount":0,"nativeCompactionCount":0,"#,
            r#""cacheDebtTokens":0.0,"cacheDebtRepaymentTokens":0.0,"lastCompactionRequestCount":null}"#
        )
    );
    assert_eq!(OccState::from_value(&value), Ok(OccState::default()));
}

#[test]
fn restore_takes_the_latest_valid_snapshot() {
    let older = OccState {
        request_count: 7,
        ..OccState::default()
    };
    let branch = SessionEntry::from_values([
        state_entry(OccState::default().to_value()),
        state_entry(older.to_value()),
        json!({"type": "message", "id": "m", "message": {"role": "user", "content": "x"}}),
        state_entry(json!({"version": 1, "plan": "not a plan"})),
        json!({"type": "custom", "customType": "something-else", "data": {"version": 1}}),
    ]);
    assert_eq!(restore_state(&branch).request_count, 7);
    assert_eq!(latest_state(&branch[..1]), Some(OccState::default()));
    assert_eq!(latest_state(&[]), None);
    assert_eq!(restore_state(&[]), OccState::default());
}

#[test]
fn malformed_snapshots_are_rejected_with_a_reason() {
    let mut ahead = OccState::default().to_value();
    ahead["lastBoundaryRequestCount"] = json!(3);
    assert_eq!(
        OccState::from_value(&ahead),
        Err(StateError::CounterAhead("lastBoundaryRequestCount"))
    );
    let mut negative = OccState::default().to_value();
    negative["cacheDebtTokens"] = json!(-1.0);
    assert_eq!(
        OccState::from_value(&negative)
            .expect_err("negative")
            .code(),
        "negative_state_debt"
    );
    let mut version = OccState::default().to_value();
    version["version"] = json!(2);
    assert_eq!(OccState::from_value(&version), Err(StateError::Version(2)));
    let mut plan = OccState::default().to_value();
    plan["plan"] = json!([{"id": "", "goal": "g", "status": "pending"}]);
    assert_eq!(
        OccState::from_value(&plan).expect_err("plan").code(),
        "invalid_state_plan"
    );
}

#[test]
fn requests_track_growth_and_repay_debt() {
    let mut state = OccState::default();
    for tokens in [500, 900, 650] {
        state.record_provider_request(tokens);
    }
    assert_eq!(state.request_count, 3);
    assert_eq!(state.last_context_tokens, Some(650));
    // 500 -> 900 grew by 400; 900 -> 650 shrank.
    assert_eq!(
        (
            state.positive_context_delta_total,
            state.positive_context_delta_count
        ),
        (400, 1)
    );

    let mut state = OccState::default();
    state.record_provider_request(1000);
    state.record_provider_request(900);
    state.record_provider_request(900);
    state.record_provider_request(1150);
    assert_eq!(state.last_context_tokens, Some(1150));
    assert_eq!(
        (
            state.positive_context_delta_total,
            state.positive_context_delta_count
        ),
        (250, 1)
    );

    state.record_compaction(CacheDebt {
        debt_tokens: 300.0,
        repayment_tokens: 100.0,
    });
    for expected in [200.0, 100.0, 0.0] {
        state.record_provider_request(900);
        assert_eq!(state.cache_debt_tokens, expected);
    }
    assert_eq!(state.cache_debt_repayment_tokens, 0.0);
}

#[test]
fn boundaries_record_intervals_and_progress() {
    let mut state = OccState::default();
    state.record_provider_request(1);
    state.record_provider_request(2);
    state.record_boundary(
        vec![PlanStep::new("a", "A", StepStatus::Completed)],
        Some(summary("a")),
    );
    state.record_provider_request(3);
    state.record_boundary(Vec::new(), None);
    assert_eq!(state.completed_boundary_request_counts, vec![2, 1]);
    assert_eq!(state.last_boundary_request_count, 3);
    assert_eq!(state.pending_progress, vec![summary("a")]);
}

#[test]
fn compaction_keeps_plan_and_horizon_and_arms_the_cooldown() {
    let mut state = OccState::default();
    let plan = vec![PlanStep::new("a", "A", StepStatus::Completed)];
    state.record_provider_request(100);
    state.record_provider_request(300);
    state.record_boundary(plan.clone(), Some(summary("a")));
    state.record_compaction(CacheDebt {
        debt_tokens: 1200.0,
        repayment_tokens: 300.0,
    });
    assert_eq!(state.epoch, 1);
    assert_eq!(state.plan, plan);
    assert_eq!(state.completed_boundary_request_counts, vec![2]);
    assert!(state.pending_progress.is_empty());
    assert_eq!(state.native_compaction_count, 1);
    assert_eq!(
        (state.cache_debt_tokens, state.cache_debt_repayment_tokens),
        (1200.0, 300.0)
    );
    assert_eq!(state.last_compaction_request_count, Some(2));
    assert_eq!(state.requests_since_last_compaction(), Some(0));
    assert_eq!(state.last_context_tokens, None);
    assert_eq!(
        state.average_context_increment(),
        Some(200.0),
        "growth history is kept"
    );
}

#[test]
fn carried_debt_accumulates_across_compactions() {
    let mut state = OccState::default();
    state.record_compaction(CacheDebt {
        debt_tokens: 1000.0,
        repayment_tokens: 100.0,
    });
    state.record_provider_request(10);
    state.record_compaction(CacheDebt {
        debt_tokens: 500.0,
        repayment_tokens: 50.0,
    });
    assert_eq!(state.cache_debt_tokens, 1400.0);
    assert_eq!(state.cache_debt_repayment_tokens, 150.0);
    // A compaction the mechanism did not select adds nothing and forgives nothing.
    state.record_compaction(CacheDebt::default());
    assert_eq!(
        (state.cache_debt_tokens, state.cache_debt_repayment_tokens),
        (1400.0, 150.0)
    );
}

#[test]
fn reissuing_the_same_plan_after_compaction_completes_nothing() {
    let mut state = OccState::default();
    let plan = vec![
        PlanStep::new("a", "A", StepStatus::Completed),
        PlanStep::new("b", "B", StepStatus::InProgress),
    ];
    state.record_boundary(plan.clone(), None);
    state.record_compaction(CacheDebt::default());
    assert!(
        analyze_transition(&state.plan, &plan)
            .completed_step_ids
            .is_empty()
    );
}

#[test]
fn correction_drops_the_plan_and_its_history() {
    let mut state = OccState::default();
    state.record_provider_request(100);
    state.record_provider_request(400);
    state.record_boundary(
        vec![PlanStep::new("a", "A", StepStatus::Completed)],
        Some(summary("a")),
    );
    state.record_compaction(CacheDebt {
        debt_tokens: 50.0,
        repayment_tokens: 10.0,
    });
    state.record_correction();
    assert_eq!(state.epoch, 2);
    assert!(state.plan.is_empty() && state.pending_progress.is_empty());
    assert!(state.completed_boundary_request_counts.is_empty());
    assert_eq!(state.last_boundary_request_count, 2);
    assert_eq!(state.last_context_tokens, None);
    assert_eq!(state.average_context_increment(), None);
    assert_eq!(
        state.cache_debt_tokens, 50.0,
        "debt already incurred is kept"
    );
}

#[test]
fn a_completed_plan_hands_off_to_a_new_horizon_keeping_debt() {
    let mut state = OccState::default();
    state.record_provider_request(1);
    state.record_boundary(vec![PlanStep::new("a", "A", StepStatus::InProgress)], None);
    assert!(
        !state.record_completed_plan_handoff(),
        "an unfinished plan is left alone"
    );
    let unchanged = state.clone();
    assert!(!state.record_completed_plan_handoff());
    assert_eq!(state, unchanged);

    state.record_boundary(vec![PlanStep::new("a", "A", StepStatus::Completed)], None);
    state.record_compaction(CacheDebt {
        debt_tokens: 900.0,
        repayment_tokens: 30.0,
    });
    state.record_provider_request(5);
    assert!(state.record_completed_plan_handoff());
    assert!(state.plan.is_empty() && state.completed_boundary_request_counts.is_empty());
    assert_eq!(state.last_boundary_request_count, state.request_count);
    assert_eq!(state.native_compaction_count, 1);
    assert_eq!(state.cache_debt_tokens, 870.0);
    assert!(
        !state.record_completed_plan_handoff(),
        "an empty plan is not a completed one"
    );
}

#[test]
fn legacy_snapshots_restore_with_defaults_and_unknown_fields_are_ignored() {
    let legacy = json!({
        "version": 1, "epoch": 2, "plan": [], "pendingProgress": [], "requestCount": 9,
        "lastBoundaryRequestCount": 4, "completedBoundaryRequestCounts": [4],
        "lastContextTokens": 1200, "positiveContextDeltaTotal": 300,
        "positiveContextDeltaCount": 2, "nativeCompactionCount": 1,
        "cacheDebtTokens": 0, "cacheDebtRepaymentTokens": 0,
        "awaitingPlanRestatement": true, "lastMemoTokens": 0
    });
    let state = OccState::from_value(&legacy).expect("legacy");
    assert_eq!(state.last_compaction_request_count, None);
    assert_eq!(state.request_count, 9);
}

#[test]
fn a_damaged_newer_snapshot_is_reported_and_the_older_one_restored() {
    use sol_occ::session::Effect;
    let saved = OccState {
        request_count: 5,
        ..OccState::default()
    };
    let branch = SessionEntry::from_values(vec![
        state_entry(saved.to_value()),
        state_entry(json!({"version": 1, "plan": "broken"})),
    ]);
    let mut occ = OccSession::new(OccOptions::default());
    let step = occ.on_session_start(&branch, Vec::new());
    assert_eq!(occ.state(), &saved);
    let [Effect::Warn { text: warning }] = step.effects.as_slice() else {
        panic!("one warning: {:?}", step.effects);
    };
    assert!(warning.contains("invalid_state_plan"), "{warning}");
    // The same branch again (tree navigation) says it again: the host shows it once.
    assert_eq!(occ.on_session_tree(&branch, Vec::new()), step);
    // A readable newest snapshot: nothing to say.
    assert!(occ.on_restore(&branch[..1]).effects.is_empty());

    // The direct path: a damaged state is an error, never the initial state.
    let damaged = json!({"version": 1, "plan": "broken"});
    assert!(matches!(
        OccSession::from_state_value(OccOptions::default(), &damaged),
        Err(StateError::Plan(_))
    ));
    let direct = OccSession::from_state(OccOptions::default(), saved.clone());
    assert_eq!(direct.state(), &saved);
    assert!(!direct.needs_restore());
}

//! The effect API: one whole boundary as the host sees it, the settlement decision on both
//! Pi behaviours, errors after the continuation, the tree-navigation capability and the
//! step accounts.

use serde_json::{Value, json};
use sol_core::StepAccount;
use sol_occ::session::{
    CompactionResult, Effect, PiCapabilities, Step, StopReason, TurnEnd, TurnToolResult,
};
use sol_occ::state::STATE_ENTRY_TYPE;
use sol_occ::text;

use crate::support::{Driver, plan_args, plan_turn, unsaved};

fn capabilities(refuses: bool) -> PiCapabilities {
    PiCapabilities {
        refuses_tree_navigation_during_compaction: refuses,
    }
}

/// A driver with capabilities, a long enough conversation, and a registered plan.
fn planned(refuses_tree: bool) -> Driver {
    let mut d = Driver::with_capabilities(Some(0.0), capabilities(refuses_tree));
    d.request(8_000);
    let (result, _) = d.occ.on_update_plan(
        "p1",
        &plan_args(&[("build", "in_progress"), ("ship", "pending")]),
        false,
    );
    assert!(result.is_ok());
    assert_eq!(d.occ.on_turn_end(&plan_turn("p1")), Step::default());
    d.request(8_000);
    d.request(8_000);
    d
}

/// Completes `build` with progress through the effect API up to the selected boundary;
/// returns the steps' effects, named.
fn to_the_abort(d: &mut Driver, named: &mut Vec<(&'static str, Step)>) {
    let args = json!({"steps": [
        {"id": "build", "goal": "goal build", "status": "completed"},
        {"id": "ship", "goal": "goal ship", "status": "in_progress"},
    ], "progress": {"files_changed": ["src/lib.rs"], "verification": ["cargo test: 12 passed"]}});
    let (result, step) = d.occ.on_update_plan("p2", &args, false);
    assert!(result.expect("valid").details.boundary);
    named.push(("update_plan", step));
    let step = d.occ.on_turn_end(&plan_turn("p2"));
    assert_eq!(step.effects, vec![Effect::Measure]);
    named.push(("turn_end", step));
    let measurement = d.measurement();
    let step = d.occ.on_decide_boundary(&measurement);
    assert_eq!(
        step.effects.last(),
        Some(&Effect::Abort),
        "{:?}",
        step.effects
    );
    named.push(("measured", step));
}

/// The effect lists of one whole boundary: plan, turn_end, evaluation, settlement,
/// compaction, continuation, and the continuation's own settlement.
fn whole_boundary(idle_after_send: bool) -> Vec<(&'static str, Step)> {
    let mut d = planned(false);
    let mut named = Vec::new();
    to_the_abort(&mut d, &mut named);
    named.push(("agent_settled", d.occ.on_agent_settled(true)));
    named.push((
        "session_compact",
        d.occ.on_session_compact(false, Vec::new()),
    ));
    named.push((
        "compaction_finished",
        d.occ.on_compaction_finished(&CompactionResult::Completed {
            summary: "s".repeat(400),
        }),
    ));
    named.push((
        "continuation_sent",
        d.occ.on_continuation_sent(idle_after_send),
    ));
    named.push(("continuation_settled", d.occ.on_agent_settled(true)));
    named
}

fn as_json(named: &[(&'static str, Step)]) -> Value {
    Value::Array(
        named
            .iter()
            .map(|(name, step)| json!({"step": name, "effects": step.effects, "account": step.account}))
            .collect(),
    )
}

#[test]
fn boundary_effects() {
    let deferred = whole_boundary(true);
    let synchronous = whole_boundary(false);
    assert_json_value_snapshot!(
        "boundary_effects",
        json!({
            "pi_defers_the_continuation_turn": as_json(&deferred),
            "pi_starts_the_continuation_turn_synchronously": as_json(&synchronous),
        })
    );
    // The two differ only in the wait.
    for ((name, a), (_, b)) in deferred.iter().zip(&synchronous) {
        if *name == "continuation_sent" {
            assert_eq!(a.effects, Vec::new());
            assert_eq!(b.effects, vec![Effect::WaitForContinuation]);
        } else {
            assert_eq!(a, b, "{name}");
        }
    }
}

#[test]
fn a_boundary_saves_the_state_before_it_aborts_and_snapshots_each_change_once() {
    let mut d = planned(false);
    let mut named = Vec::new();
    to_the_abort(&mut d, &mut named);
    let snapshots: Vec<&Effect> = named
        .iter()
        .flat_map(|(_, step)| &step.effects)
        .filter(|effect| matches!(effect, Effect::AppendEntry(entry) if entry.custom_type == STATE_ENTRY_TYPE))
        .collect();
    assert_eq!(
        snapshots.len(),
        1,
        "the plan call's snapshot; nothing changed since"
    );
    let Effect::AppendEntry(entry) = snapshots[0] else {
        unreachable!()
    };
    assert_eq!(entry.data, d.occ.state().to_value());
    assert!(!unsaved(&d.occ), "nothing is left to save");
}

#[test]
fn a_failed_compaction_reports_its_error_only_after_the_continuation_is_under_way() {
    let mut d = planned(false);
    to_the_abort(&mut d, &mut Vec::new());
    assert!(matches!(
        d.occ.on_agent_settled(true).effects.as_slice(),
        [Effect::Compact { .. }]
    ));
    let step = d.occ.on_compaction_finished(&CompactionResult::Failed {
        name: Some("Error".into()),
        message: "Summarization failed: 500".into(),
    });
    assert_eq!(step.account, StepAccount::default());
    let Some(Effect::SendMessage(continuation)) = step.effects.last() else {
        panic!("the task continues: {:?}", step.effects);
    };
    assert!(continuation.trigger_turn && !continuation.display);
    assert!(
        !step
            .effects
            .iter()
            .any(|effect| matches!(effect, Effect::Fail { .. }))
    );
    let sent = d.occ.on_continuation_sent(false);
    assert_eq!(
        sent.effects,
        vec![
            Effect::WaitForContinuation,
            Effect::Fail {
                error: text::compaction_failed_error("Summarization failed: 500")
            }
        ]
    );
    assert_eq!(d.occ.on_continuation_sent(false), Step::default(), "once");
}

#[test]
fn a_refusal_records_a_skip_warns_and_continues_without_a_model_call_or_an_error() {
    let mut d = planned(false);
    to_the_abort(&mut d, &mut Vec::new());
    d.occ.on_agent_settled(true);
    let step = d.occ.on_compaction_finished(&CompactionResult::Failed {
        name: None,
        message: "Nothing to compact (session too small)".into(),
    });
    assert_eq!(step.account, StepAccount::default());
    let kinds: Vec<&str> = step
        .effects
        .iter()
        .map(|effect| match effect {
            Effect::AppendEntry(entry) if entry.custom_type == text::SKIP_ENTRY_TYPE => "skip",
            Effect::AppendEntry(_) => "state",
            Effect::Warn { .. } => "warn",
            Effect::SendMessage(_) => "send",
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["skip", "warn", "send"]);
    assert_eq!(d.occ.on_continuation_sent(true), Step::default());
}

#[test]
fn a_cancelled_or_abandoned_compaction_leaves_nothing_to_do() {
    for result in [
        CompactionResult::Abandoned,
        CompactionResult::Failed {
            name: Some("AbortError".into()),
            message: "aborted".into(),
        },
    ] {
        let mut d = planned(false);
        to_the_abort(&mut d, &mut Vec::new());
        d.occ.on_agent_settled(true);
        assert_eq!(d.occ.on_compaction_finished(&result), Step::default());
        assert_eq!(d.occ.on_continuation_sent(false), Step::default());
    }
}

#[test]
fn a_selection_pi_is_busy_at_is_dropped_with_its_record() {
    let mut d = planned(false);
    to_the_abort(&mut d, &mut Vec::new());
    let step = d.occ.on_agent_settled(false);
    let [Effect::AppendEntry(entry)] = step.effects.as_slice() else {
        panic!("{:?}", step.effects);
    };
    assert_eq!(entry.custom_type, text::SKIP_ENTRY_TYPE);
    assert_eq!(entry.data["reason"], "not_idle_at_settle");
    assert_eq!(d.occ.on_agent_settled(true), Step::default());
}

#[test]
fn a_settlement_during_the_compaction_keeps_the_waiting_continuation_waiting() {
    let mut d = planned(false);
    to_the_abort(&mut d, &mut Vec::new());
    d.occ.on_agent_settled(true);
    assert_eq!(
        d.occ.on_agent_settled(true).effects,
        vec![Effect::KeepWaiting]
    );
}

#[test]
fn tree_navigation_is_refused_during_the_compaction_only_where_pi_does_not_refuse_it() {
    for refuses in [false, true] {
        let mut d = planned(refuses);
        assert!(!d.occ.on_before_tree());
        to_the_abort(&mut d, &mut Vec::new());
        assert!(!d.occ.on_before_tree(), "selected, not running yet");
        d.occ.on_agent_settled(true);
        assert_eq!(d.occ.on_before_tree(), !refuses);
        d.occ.on_compaction_finished(&CompactionResult::Completed {
            summary: String::new(),
        });
        assert!(!d.occ.on_before_tree());
    }
}

#[test]
fn a_completed_compaction_accounts_one_model_call_and_the_tokens_it_removed() {
    let mut d = planned(false);
    to_the_abort(&mut d, &mut Vec::new());
    d.occ.on_agent_settled(true);
    let step = d.occ.on_compaction_finished(&CompactionResult::Completed {
        summary: "s".repeat(400),
    });
    let notice = step
        .effects
        .iter()
        .find_map(|effect| match effect {
            Effect::SavingsNotice(notice) => Some(notice.removed_tokens),
            _ => None,
        })
        .expect("a notice");
    // The call is Pi's summarizer: it read what the summary replaces and wrote the 100-token
    // summary.
    assert_eq!(
        step.account,
        StepAccount {
            tokens_removed: notice,
            model_calls: 1,
            model_input_tokens: notice + 100,
            model_output_tokens: 100,
            ..StepAccount::default()
        }
    );
    // Every other step of the boundary saved and spent nothing.
    let total: StepAccount = whole_boundary(true)
        .into_iter()
        .map(|(_, step)| step.account)
        .sum();
    assert_eq!(total.model_calls, 1);
}

#[test]
fn a_turn_without_a_boundary_and_an_uncounted_request_leave_nothing_to_do() {
    let mut d = planned(false);
    let turn = TurnEnd {
        stop_reason: Some(StopReason::parse("stop")),
        aborted: false,
        tool_results: vec![TurnToolResult {
            tool_call_id: "w".into(),
            tool_name: "bash".into(),
            is_error: false,
        }],
    };
    assert_eq!(d.occ.on_turn_end(&turn), Step::default());
    assert_eq!(d.occ.on_before_provider_request(None, 0), Step::default());
}

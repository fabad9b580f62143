//! The session engine's lifecycle, driven from Rust as the extension drives it: the totals
//! entry comes out of `turnEnd` exactly when the book changed since the last one and the
//! accounting has not stopped, a session start goes on from the newest entry written, and a
//! compaction's summary is registered with the book (its own id) before the step goes on.

use proptest::prelude::*;
use serde_json::{Value, json};
use sol_napi::engine::{Engine, EngineEffect, EngineOptions, EngineStep};
use sol_napi::occ::{OccCompactionResult, OccCreateOptions, OccTurnEndInput};

/// One thing that happens in a session, as far as the book's totals go.
#[derive(Debug, Clone)]
enum Op {
    /// The model recalled this many bytes (a recall counts even of nothing).
    Recall(u32),
    /// A turn ends.
    TurnEnd,
    /// The extension's accounting failed.
    Stop,
    /// The session starts again over the entries written so far (a resume).
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        prop_oneof![Just(0u32), 1u32..5_000].prop_map(Op::Recall),
        Just(Op::TurnEnd),
        Just(Op::TurnEnd),
        Just(Op::Stop),
        Just(Op::Restart),
    ]
}

fn turn() -> OccTurnEndInput {
    OccTurnEndInput {
        stop_reason: Some("stop".to_owned()),
        aborted: false,
        tool_results: Vec::new(),
    }
}

/// The totals entries a step appends, as Pi would store them.
fn totals(step: &EngineStep, written: usize) -> Vec<Value> {
    step.effects
        .iter()
        .filter_map(|effect| match effect {
            EngineEffect::AppendEntry { custom_type, data }
                if custom_type == "sol-pi-savings-totals" =>
            {
                Some(json!({
                    "type": "custom",
                    "id": format!("e{written}"),
                    "parentId": null,
                    "timestamp": "2026-12-07T10:00:00.000Z",
                    "customType": custom_type,
                    "data": data,
                }))
            }
            _ => None,
        })
        .collect()
}

fn engine(occ: bool) -> Engine {
    let occ = occ.then_some(OccCreateOptions {
        cache_write_read_ratio: None,
        keep_recent_tokens: None,
        pi_refuses_tree_navigation_during_compaction: None,
    });
    Engine::new(Some(EngineOptions {
        occ,
        ..EngineOptions::default()
    }))
    .expect("valid options")
}

proptest! {
    #[test]
    fn a_turn_writes_the_totals_exactly_when_they_changed(ops in prop::collection::vec(op(), 0..40), occ in any::<bool>()) {
        let engine = engine(occ);
        let start = engine.session_start(Vec::new(), 0.0);
        let status = start.effects.iter().any(|effect| matches!(effect, EngineEffect::Status { .. }));
        prop_assert!(status, "the running total");
        let (mut changed, mut stopped) = (false, false);
        let mut branch: Vec<Value> = Vec::new();
        // The table as of the newest entry written, which a restart goes on from.
        let mut written_table = engine.view().table;
        for op in ops {
            match op {
                Op::Recall(bytes) => {
                    engine.record_recall(f64::from(bytes));
                    changed = true;
                }
                Op::TurnEnd => {
                    let entries = totals(&engine.turn_end(turn(), None), branch.len());
                    prop_assert_eq!(entries.len(), usize::from(changed && !stopped));
                    if !entries.is_empty() {
                        written_table = engine.view().table;
                    }
                    branch.extend(entries);
                    changed = false;
                }
                Op::Stop => {
                    engine.stop_accounting();
                    stopped = true;
                }
                Op::Restart => {
                    let step = engine.session_start(branch.clone(), 0.0);
                    let warned = step.effects.iter().any(|effect| matches!(effect, EngineEffect::Warn { .. }));
                    prop_assert!(!warned, "every entry written is read back");
                    prop_assert_eq!(engine.view().table, written_table.clone());
                    changed = false;
                }
            }
        }
    }
}

#[test]
fn a_refused_totals_entry_is_one_warning_and_the_book_starts_empty() {
    let engine = engine(false);
    let empty = engine.view().table;
    let broken = json!({"type": "custom", "id": "a", "parentId": null, "timestamp": "2026-12-07T10:00:00.000Z", "customType": "sol-pi-savings-totals", "data": {"version": 99}});
    let step = engine.session_start(vec![broken], 0.0);
    let warnings: Vec<&str> = step
        .effects
        .iter()
        .filter_map(|effect| match effect {
            EngineEffect::Warn { text, everywhere } => {
                assert!(
                    everywhere,
                    "a restore's warning reaches print and JSON runs too"
                );
                Some(text.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("SoL-Pi: savings totals not restored from one entry"));
    assert_eq!(engine.view().table, empty);
}

#[test]
fn without_online_context_compact_its_steps_have_no_effects_and_ask_nothing() {
    let engine = engine(false);
    assert!(!engine.needs_restore());
    assert!(engine.agent_settled(true).effects.is_empty());
    assert!(engine.input("go".to_owned(), None).effects.is_empty());
    assert!(!engine.should_cancel_compaction("threshold".to_owned()));
    assert!(!engine.should_cancel_tree_navigation());
    assert!(
        engine
            .update_plan("c1".to_owned(), json!({}), false)
            .is_err()
    );
}

#[test]
fn a_compaction_summary_is_registered_with_the_book_before_the_step_goes_on() {
    let engine = engine(true);
    engine.session_start(Vec::new(), 0.0);
    let finished = |summary: &str| {
        engine.compaction_finished(OccCompactionResult::Completed {
            summary: Some(summary.to_owned()),
            usage: None,
        })
    };
    let watched = |step: &EngineStep| -> Vec<(u32, String)> {
        step.effects
            .iter()
            .filter_map(|effect| match effect {
                EngineEffect::WatchSummary { id, summary } => Some((*id, summary.clone())),
                _ => None,
            })
            .collect()
    };
    let first = finished("the task so far");
    assert!(matches!(
        first.effects.first(),
        Some(EngineEffect::WatchSummary { .. })
    ));
    let second = finished("and after that");
    let [(one, text)] = watched(&first).try_into().expect("one summary");
    let [(two, _)] = watched(&second).try_into().expect("one summary");
    assert_eq!(text, "the task so far");
    assert_ne!(one, two, "each summary has an id of its own");
    // Nothing to look for: no summary, or a failed compaction.
    assert!(watched(&finished("")).is_empty());
    let failed = engine.compaction_finished(OccCompactionResult::Failed {
        name: None,
        message: Some("no model".to_owned()),
    });
    assert!(watched(&failed).is_empty());
}

/// ObservationPack's placement says how short a text result the host's walk may skip (none
/// the placement could pack) and whether its step reads the replies; with it off, neither.
#[test]
fn the_placement_says_what_the_walk_skips_and_whether_replies_cross() {
    use sol_napi::obspack::{ObsPlacement, min_candidate_units};
    use sol_obspack::{MEDIUM_THRESHOLD_BYTES, THRESHOLD_BYTES};

    let engine = |placement: Option<ObsPlacement>| {
        Engine::new(Some(EngineOptions {
            observation_pack: placement,
            ..EngineOptions::default()
        }))
        .expect("valid options")
    };
    let units = |bytes: u64| min_candidate_units(u32::try_from(bytes).expect("small"));
    let recent = |keep| ObsPlacement {
        cache_aware_ratio: None,
        keep_recent_outputs: Some(keep),
    };
    let cache_aware = ObsPlacement {
        cache_aware_ratio: Some(12.5),
        keep_recent_outputs: None,
    };
    for (placement, bound, replies) in [
        (ObsPlacement::default(), units(THRESHOLD_BYTES), false),
        (cache_aware, units(THRESHOLD_BYTES), false),
        // keepRecentOutputs 0 is the placement off.
        (recent(0), units(THRESHOLD_BYTES), false),
        (recent(10), units(MEDIUM_THRESHOLD_BYTES), true),
    ] {
        let engine = engine(Some(placement));
        assert_eq!(engine.obs_min_candidate_units(), bound, "{placement:?}");
        assert_eq!(engine.obs_reads_replies(), replies, "{placement:?}");
    }
    let off = engine(None);
    assert_eq!(
        (off.obs_min_candidate_units(), off.obs_reads_replies()),
        (0, false)
    );
}

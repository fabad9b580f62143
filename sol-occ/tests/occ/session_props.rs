//! Properties of the state machine under arbitrary event sequences: no panics, every
//! counted request was announced and is counted once, the persisted state stays valid, and
//! cancellation never continues.

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;
use sol_occ::session::StopReason;
use sol_occ::session::{
    CompactionOutcome, CompactionResult, CompactionTrigger, ContextEvent, InputEvent, Observation,
    OccSession, RequestMark, SELECTION_DROPPED_NOT_IDLE, SettledAction, TurnEnd, TurnToolResult,
};
use sol_occ::settings::OccOptions;
use sol_occ::state::OccState;
use sol_occ::tokens::SizedMessage;

use crate::support::{Driver, assistant, plan_args, user};

#[derive(Debug, Clone)]
pub(crate) enum Event {
    Context {
        aborted: bool,
        chars: usize,
    },
    ProviderRequest {
        reported: Option<f64>,
    },
    MessageEnd(&'static str),
    SessionStart,
    SessionTree,
    SessionCompact {
        from_extension: bool,
    },
    Shutdown,
    Input {
        text: &'static str,
        steer: bool,
    },
    Plan {
        call: u8,
        steps: Vec<(&'static str, &'static str)>,
    },
    TurnEnd {
        call: u8,
        stop: Option<&'static str>,
        aborted: bool,
        is_error: bool,
        work: bool,
    },
    Decide,
    Settled {
        idle: bool,
    },
    Finished(CompactionResult),
    BeforeCompact(CompactionTrigger),
    BeforeTree(bool),
}

fn steps() -> impl Strategy<Value = Vec<(&'static str, &'static str)>> {
    prop::collection::vec(
        (
            select(vec!["a", "b", "c", "d"]),
            select(vec!["pending", "in_progress", "completed"]),
        ),
        1..4,
    )
    .prop_map(|mut steps| {
        steps.sort_by_key(|(id, _)| *id);
        steps.dedup_by_key(|(id, _)| *id);
        steps
    })
}

pub(crate) fn result() -> impl Strategy<Value = CompactionResult> {
    prop_oneof![
        ".{0,40}".prop_map(|summary| CompactionResult::Completed { summary }),
        select(vec![
            (Some("AbortError"), "aborted"),
            (None, "Compaction cancelled"),
            (None, "Nothing to compact (session too small)"),
            (None, "Already compacted"),
            (
                None,
                "Summarization failed: generation hit the token cap and the summary is incomplete"
            ),
            (Some("Error"), "Summarization failed: 500"),
        ])
        .prop_map(|(name, message)| CompactionResult::Failed {
            name: name.map(str::to_owned),
            message: message.to_owned(),
        }),
        Just(CompactionResult::Abandoned),
    ]
}

pub(crate) fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        6 => (any::<bool>(), 0usize..30_000).prop_map(|(aborted, chars)| Event::Context { aborted, chars }),
        6 => prop::option::of(prop_oneof![Just(0.0), Just(f64::NAN), 0.0f64..300_000.0])
            .prop_map(|reported| Event::ProviderRequest { reported }),
        6 => select(vec!["assistant", "assistant", "toolResult", "user", "custom"]).prop_map(Event::MessageEnd),
        1 => Just(Event::SessionStart),
        1 => Just(Event::SessionTree),
        1 => any::<bool>().prop_map(|from_extension| Event::SessionCompact { from_extension }),
        1 => Just(Event::Shutdown),
        1 => (select(vec!["go on", "CORRECTION: no", "new task"]), any::<bool>())
            .prop_map(|(text, steer)| Event::Input { text, steer }),
        4 => (0u8..3, steps()).prop_map(|(call, steps)| Event::Plan { call, steps }),
        4 => (0u8..3, prop::option::of(select(vec!["toolUse", "stop", "error", "aborted"])),
              any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(call, stop, aborted, is_error, work)| Event::TurnEnd { call, stop, aborted, is_error, work }),
        3 => Just(Event::Decide),
        3 => any::<bool>().prop_map(|idle| Event::Settled { idle }),
        2 => result().prop_map(Event::Finished),
        1 => select(vec![CompactionTrigger::Manual, CompactionTrigger::Threshold, CompactionTrigger::Overflow])
            .prop_map(Event::BeforeCompact),
        1 => any::<bool>().prop_map(Event::BeforeTree),
    ]
}

/// Counters of the events that bound the request count.
#[derive(Debug, Default)]
struct Tally {
    announced: u64,
    assistant_ends: u64,
    interrupted: u64,
}

/// A branch holding the session's latest snapshot (what the host appended), after some
/// malformed entries that restoration must skip.
pub(crate) fn own_branch(occ: &OccSession) -> Vec<sol_core::session::SessionEntry> {
    sol_core::session::SessionEntry::from_values([
        serde_json::json!({"type": "custom", "customType": sol_occ::state::STATE_ENTRY_TYPE,
                           "data": occ.state().to_value()}),
        Value::Null,
        serde_json::json!({"type": "custom", "customType": sol_occ::state::STATE_ENTRY_TYPE,
                           "data": {"version": 1}}),
    ])
}

fn apply(driver: &mut Driver, event: &Event, tally: &mut Tally) {
    let occ = &mut driver.occ;
    let was_counted = occ.request_mark() == RequestMark::Counted;
    match event {
        Event::Context { aborted, chars } => {
            driver.clock += 1;
            driver.messages.push(user(driver.clock, *chars));
            driver.clock += 1;
            driver.messages.push(assistant(driver.clock, 8));
            if !aborted && !was_counted {
                tally.announced += 1;
            }
            driver
                .occ
                .context(ContextEvent::new(*aborted, &driver.messages));
        }
        Event::ProviderRequest { reported } => {
            let before = occ.request_mark();
            let outcome = occ.before_provider_request(*reported, 7);
            assert_eq!(outcome.counted, before == RequestMark::Marked);
        }
        Event::MessageEnd(role) => {
            if *role == "assistant" && was_counted {
                tally.assistant_ends += 1;
            }
            occ.message_end(role);
        }
        Event::SessionStart => {
            tally.interrupted += u64::from(was_counted);
            let branch = own_branch(occ);
            occ.session_start(&branch, Vec::new());
        }
        Event::SessionTree => {
            tally.interrupted += u64::from(was_counted);
            let branch = own_branch(occ);
            occ.session_tree(&branch, Vec::new());
        }
        Event::SessionCompact { from_extension } => {
            tally.interrupted += u64::from(was_counted);
            occ.session_compact(*from_extension, Vec::new());
        }
        Event::Shutdown => {
            tally.interrupted += u64::from(was_counted);
            occ.session_shutdown();
        }
        Event::Input { text, steer } => {
            let streaming = steer.then(|| "steer".to_owned());
            occ.input(&InputEvent {
                text: (*text).to_owned(),
                streaming_behavior: streaming,
            });
        }
        Event::Plan { call, steps } => {
            let _ = occ.update_plan(&format!("p{call}"), &plan_args(steps), false);
        }
        Event::TurnEnd { .. } => {
            occ.turn_end(&turn_end_of(event).expect("a turn"));
        }
        Event::Decide => {
            let measurement = driver.measurement();
            if let Some(evaluation) = driver.occ.decide_boundary(&measurement) {
                assert_eq!(evaluation.abort, evaluation.decision.compact);
                assert_eq!(evaluation.abort, driver.occ.is_compaction_selected());
            }
        }
        Event::Settled { idle } => {
            let selected = occ.is_compaction_selected();
            let compacting = occ.is_compacting();
            match occ.agent_settled(*idle) {
                SettledAction::Compact { .. } => assert!(selected && *idle),
                SettledAction::Dropped { skip_entry } => {
                    assert!(selected && !idle);
                    assert_eq!(skip_entry.data["reason"], SELECTION_DROPPED_NOT_IDLE);
                }
                SettledAction::Wait => assert!(compacting),
                SettledAction::Release => assert!(!selected && !compacting),
            }
            // A selection is valid for one settlement only: it never survives to a later,
            // unrelated one.
            assert!(!occ.is_compaction_selected());
        }
        Event::Finished(result) => {
            let running = occ.is_compacting();
            let follow_up = occ.compaction_finished(result);
            if !running {
                assert_eq!(follow_up.outcome, CompactionOutcome::NotRunning);
            }
            if matches!(
                follow_up.outcome,
                CompactionOutcome::Cancelled | CompactionOutcome::NotRunning
            ) {
                assert!(follow_up.continuation.is_none());
            } else {
                let continuation = follow_up.continuation.expect("a continuation");
                assert!(continuation.trigger_turn && !continuation.display);
            }
            assert!(!occ.is_compacting());
        }
        Event::BeforeCompact(trigger) => {
            let cancel = occ.should_cancel_compaction(*trigger);
            assert!(
                !cancel
                    || (*trigger == CompactionTrigger::Threshold && occ.is_compaction_selected())
            );
        }
        Event::BeforeTree(pi_refuses) => {
            let cancel = occ.should_cancel_tree_navigation(*pi_refuses);
            assert!(!cancel || (!pi_refuses && occ.is_compacting()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    #[test]
    fn arbitrary_event_sequences_keep_the_invariants(
        events in prop::collection::vec(event(), 0..60),
        ratio in prop::option::of(prop_oneof![Just(0.0), 0.0f64..30.0]),
    ) {
        let mut driver = Driver::new(ratio);
        let mut tally = Tally::default();
        for event in &events {
            apply(&mut driver, event, &mut tally);
            let occ = &driver.occ;
            let state = occ.state();
            let open = u64::from(occ.request_mark() == RequestMark::Counted);
            // Each count consumed one announcement, and is closed by exactly one assistant
            // message_end or one interrupting session event before the next can happen.
            prop_assert!(state.request_count <= tally.announced);
            prop_assert_eq!(state.request_count, tally.assistant_ends + tally.interrupted + open);
            prop_assert!(state.last_boundary_request_count <= state.request_count);
            prop_assert!(state.cache_debt_tokens.is_finite() && state.cache_debt_tokens >= 0.0);
            prop_assert!(!(occ.is_compacting() && occ.is_compaction_selected()));
            let restored = OccState::from_value(&state.to_value());
            prop_assert_eq!(restored.as_ref(), Ok(state));
        }
        if let Some(snapshot) = driver.occ.take_state_entry() {
            prop_assert_eq!(&snapshot, driver.occ.state());
        }
    }

    #[test]
    fn requests_without_interruptions_never_outnumber_assistant_messages(
        events in prop::collection::vec(event(), 0..80),
    ) {
        let events: Vec<Event> = events
            .into_iter()
            .filter(|event| !matches!(event,
                Event::SessionStart | Event::SessionTree | Event::SessionCompact { .. } | Event::Shutdown))
            .collect();
        let mut driver = Driver::new(Some(12.5));
        let mut tally = Tally::default();
        let mut assistant_ends = 0u64;
        for event in &events {
            if matches!(event, Event::MessageEnd("assistant")) {
                assistant_ends += 1;
            }
            apply(&mut driver, event, &mut tally);
            let open = u64::from(driver.occ.request_mark() == RequestMark::Counted);
            prop_assert!(driver.occ.state().request_count <= assistant_ends + open);
        }
    }
}

/// The session can be rebuilt from its own snapshots at any point.
#[test]
fn a_session_restores_from_its_own_snapshot() {
    let mut occ = OccSession::new(OccOptions {
        cache_write_read_ratio: Some(12.5),
        keep_recent_tokens: None,
    });
    occ.session_start(&[], Vec::new());
    occ.context(ContextEvent::new(false, &[user(1, 40)]));
    occ.before_provider_request(None, 0);
    occ.update_plan("p", &plan_args(&[("a", "in_progress")]), false)
        .expect("valid");
    let snapshot = occ.take_state_entry().expect("changed");
    let branch = sol_core::session::SessionEntry::from_values([serde_json::json!({
        "type": "custom", "customType": sol_occ::state::STATE_ENTRY_TYPE, "data": snapshot.to_value()
    })]);
    let mut restored = OccSession::new(*occ.options());
    restored.session_start(&branch, Vec::new());
    assert_eq!(restored.state(), occ.state());
}

/// One event against a session, returning everything the event's call returned. The
/// observations are either the whole sized messages (`held: None`, the oracle: what the
/// host did before it sized messages itself) or only their total, with the host keeping the
/// sized list in `held` and handing it over with the boundary measurement.
fn observe_step(
    driver: &mut Driver,
    event: &Event,
    held: Option<&mut Vec<SizedMessage>>,
) -> String {
    let sized = SizedMessage::from_messages(&driver.messages);
    let observation = |held: Option<&mut Vec<SizedMessage>>| -> Observation {
        match held {
            None => Observation::Sized(sized.clone()),
            Some(list) => {
                *list = sized.clone();
                Observation::Total(sized.iter().map(|m| m.tokens).sum())
            }
        }
    };
    match event {
        Event::Context { aborted, chars } => {
            driver.clock += 1;
            driver.messages.push(user(driver.clock, *chars));
            driver.clock += 1;
            driver.messages.push(assistant(driver.clock, 8));
            let sized = SizedMessage::from_messages(&driver.messages);
            let observation = match held {
                None => Observation::Sized(sized),
                Some(list) => {
                    let total = sized.iter().map(|m| m.tokens).sum();
                    *list = sized;
                    Observation::Total(total)
                }
            };
            driver.occ.context(ContextEvent {
                aborted: *aborted,
                observation,
            });
            String::new()
        }
        Event::SessionStart => {
            let branch = own_branch(&driver.occ);
            driver.occ.session_start(&branch, observation(held));
            String::new()
        }
        Event::SessionTree => {
            let branch = own_branch(&driver.occ);
            driver.occ.session_tree(&branch, observation(held));
            String::new()
        }
        Event::SessionCompact { from_extension } => {
            driver
                .occ
                .session_compact(*from_extension, observation(held));
            String::new()
        }
        Event::ProviderRequest { reported } => {
            format!("{:?}", driver.occ.before_provider_request(*reported, 7))
        }
        Event::Decide => {
            let mut measurement = driver.measurement();
            measurement.observed = held.map(|list| list.clone());
            format!("{:?}", driver.occ.decide_boundary(&measurement))
        }
        Event::Settled { idle } => format!("{:?}", driver.occ.agent_settled(*idle)),
        Event::Finished(result) => format!("{:?}", driver.occ.compaction_finished(result)),
        other => {
            let mut tally = Tally::default();
            apply(driver, other, &mut tally);
            String::new()
        }
    }
}

/// Completes a plan step on a copy of the session and evaluates the boundary.
fn probe_boundary(
    driver: &Driver,
    held: Option<&Vec<SizedMessage>>,
) -> Option<sol_occ::session::BoundaryEvaluation> {
    let mut occ = driver.occ.clone();
    occ.update_plan(
        "probe-1",
        &plan_args(&[("x", "in_progress"), ("y", "pending")]),
        false,
    )
    .ok()?;
    occ.update_plan(
        "probe-2",
        &plan_args(&[("x", "completed"), ("y", "pending")]),
        false,
    )
    .ok()?;
    occ.turn_end(&TurnEnd {
        stop_reason: Some(StopReason::parse("toolUse")),
        aborted: false,
        tool_results: vec![TurnToolResult {
            tool_call_id: "probe-2".into(),
            tool_name: "update_plan".into(),
            is_error: false,
        }],
    });
    let mut measurement = driver.measurement();
    measurement.observed = held.cloned();
    occ.decide_boundary(&measurement)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The host that reports only totals on requests and hands over its sized list at a
    /// boundary gets exactly what the host that handed over every message got: the same
    /// request counts, decisions, settlements, follow-ups and snapshots.
    #[test]
    fn host_sized_observations_decide_as_whole_messages(
        events in prop::collection::vec(event(), 0..60),
        ratio in prop::option::of(prop_oneof![Just(0.0), 0.0f64..30.0]),
    ) {
        let mut oracle = Driver::new(ratio);
        let mut host = Driver::new(ratio);
        let mut held = Vec::new();
        for event in &events {
            let expected = observe_step(&mut oracle, event, None);
            let actual = observe_step(&mut host, event, Some(&mut held));
            prop_assert_eq!(actual, expected, "{:?}", event);
            prop_assert_eq!(host.occ.state(), oracle.occ.state());
            prop_assert_eq!(host.occ.request_mark(), oracle.occ.request_mark());
            prop_assert_eq!(host.occ.is_compaction_selected(), oracle.occ.is_compaction_selected());
            prop_assert_eq!(host.occ.is_compacting(), oracle.occ.is_compacting());
            prop_assert_eq!(host.occ.is_retry_blocked(), oracle.occ.is_retry_blocked());
            prop_assert_eq!(host.occ.take_state_entry(), oracle.occ.take_state_entry());
            // A boundary evaluated right now decides the same, on copies of both sessions.
            prop_assert_eq!(probe_boundary(&host, Some(&held)), probe_boundary(&oracle, None));
        }
    }
}

/// The `turn_end` an [`Event::TurnEnd`] stands for (`None` for any other event); the
/// per-event driver here and the effect steps of `step_props.rs` build it the same way.
pub(crate) fn turn_end_of(event: &Event) -> Option<TurnEnd> {
    let Event::TurnEnd {
        call,
        stop,
        aborted,
        is_error,
        work,
    } = event
    else {
        return None;
    };
    let mut tool_results = vec![TurnToolResult {
        tool_call_id: format!("p{call}"),
        tool_name: "update_plan".into(),
        is_error: *is_error,
    }];
    if *work {
        tool_results.push(TurnToolResult {
            tool_call_id: "w".into(),
            tool_name: "bash".into(),
            is_error: false,
        });
    }
    Some(TurnEnd {
        stop_reason: stop.map(StopReason::parse),
        aborted: *aborted,
        tool_results,
    })
}

//! Properties of the state machine under arbitrary event sequences played through its
//! `on_*` steps: no panics, every counted request was announced and is counted once, the
//! persisted state stays valid and every change of it is saved by the step that made it,
//! and cancellation never continues.

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;
use sol_occ::session::{
    CompactionErrorKind, CompactionResult, CompactionTrigger, ContextEvent, Effect, InputEvent,
    Observation, OccSession, SELECTION_DROPPED_NOT_IDLE, Step, StopReason, TurnEnd, TurnToolResult,
    classify_compaction_error,
};
use sol_occ::settings::OccOptions;
use sol_occ::state::OccState;
use sol_occ::tokens::{MessageRole, SizedMessage};

use crate::support::{
    Driver, Mark, assert_snapshots_are_the_state, assistant, compacting, evaluation, mark,
    plan_args, saved_state, selected, unsaved, user,
};

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
    /// `session_before_tree`; whether Pi refuses by itself is the session's capability.
    BeforeTree,
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
        1 => Just(Event::BeforeTree),
    ]
}

/// Counters of the events that bound the request count.
#[derive(Debug, Default)]
struct Tally {
    announced: u64,
    /// Counts closed by an assistant `message_end` or a `turn_end`.
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

/// Whether a compaction that ended so would be cancelled (nothing follows it).
fn cancelled(result: &CompactionResult) -> bool {
    match result {
        CompactionResult::Completed { .. } => false,
        CompactionResult::Abandoned => true,
        CompactionResult::Failed { name, message } => {
            classify_compaction_error(name.as_deref(), message) == CompactionErrorKind::Cancelled
        }
    }
}

/// Plays one event through its step and checks what the step returned against what the
/// session showed before it; returns the step.
fn apply(driver: &mut Driver, event: &Event, tally: &mut Tally) -> Step {
    let was_counted = mark(&driver.occ) == Mark::Counted;
    let occ = &mut driver.occ;
    let step = match event {
        Event::Context { aborted, chars } => {
            driver.clock += 1;
            driver.messages.push(user(driver.clock, *chars));
            driver.clock += 1;
            driver.messages.push(assistant(driver.clock, 8));
            if !aborted && !was_counted {
                tally.announced += 1;
            }
            let step = driver
                .occ
                .on_context(ContextEvent::new(*aborted, &driver.messages));
            assert_eq!(step, Step::default(), "an observation is not saved");
            step
        }
        Event::ProviderRequest { reported } => {
            let before = mark(occ);
            let count = occ.state().request_count;
            let step = occ.on_before_provider_request(*reported, 7);
            let counted = occ.state().request_count > count;
            assert_eq!(counted, before == Mark::Marked);
            assert_eq!(saved_state(&step).is_some(), counted, "a count is saved");
            assert_eq!(step.effects.len(), usize::from(counted));
            step
        }
        Event::MessageEnd(role) => {
            if *role == "assistant" && was_counted {
                tally.assistant_ends += 1;
            }
            occ.on_message_end(MessageRole::parse(role))
        }
        Event::SessionStart => {
            tally.interrupted += u64::from(was_counted);
            let branch = own_branch(occ);
            occ.on_session_start(&branch, Vec::new())
        }
        Event::SessionTree => {
            tally.interrupted += u64::from(was_counted);
            let branch = own_branch(occ);
            occ.on_session_tree(&branch, Vec::new())
        }
        Event::SessionCompact { from_extension } => {
            tally.interrupted += u64::from(was_counted);
            occ.on_session_compact(*from_extension, Vec::new())
        }
        Event::Shutdown => {
            tally.interrupted += u64::from(was_counted);
            occ.on_session_shutdown()
        }
        Event::Input { text, steer } => {
            let streaming = steer.then(|| "steer".to_owned());
            occ.on_input(&InputEvent {
                text: (*text).to_owned(),
                streaming_behavior: streaming,
            })
        }
        Event::Plan { call, steps } => {
            occ.on_update_plan(&format!("p{call}"), &plan_args(steps), false)
                .1
        }
        Event::TurnEnd { .. } => {
            // The turn's end closes its request as its assistant message_end does.
            tally.assistant_ends += u64::from(was_counted);
            let step = occ.on_turn_end(&turn_end_of(event).expect("a turn"));
            assert!(
                step.effects.is_empty() || step.effects == [Effect::Measure],
                "{step:?}"
            );
            step
        }
        Event::Decide => {
            let measurement = driver.measurement();
            let step = driver.occ.on_decide_boundary(&measurement);
            // The decision, then for a selected compaction the snapshot and the abort.
            if let Some(evaluation) = evaluation(&step, &driver.occ) {
                assert_eq!(evaluation.abort, evaluation.decision.compact);
                assert_eq!(evaluation.abort, selected(&driver.occ));
            }
            step
        }
        Event::Settled { idle } => {
            let was_selected = selected(occ);
            let was_compacting = compacting(occ);
            let step = occ.on_agent_settled(*idle);
            match step.effects.as_slice() {
                [Effect::Compact { .. }] => assert!(was_selected && *idle),
                [Effect::AppendEntry(skip_entry)] => {
                    assert!(was_selected && !idle);
                    assert_eq!(skip_entry.data["reason"], SELECTION_DROPPED_NOT_IDLE);
                }
                [Effect::KeepWaiting] => assert!(was_compacting),
                [] => assert!(!was_selected && !was_compacting),
                other => panic!("a settlement's effects: {other:?}"),
            }
            // A selection is valid for one settlement only: it never survives to a later,
            // unrelated one.
            assert!(!selected(occ));
            step
        }
        Event::Finished(result) => {
            let running = compacting(occ);
            let step = occ.on_compaction_finished(result);
            if !running {
                assert_eq!(step, Step::default(), "nothing was running");
            }
            let continuations: Vec<_> = step
                .effects
                .iter()
                .filter_map(|effect| match effect {
                    Effect::SendMessage(continuation) => Some(continuation),
                    _ => None,
                })
                .collect();
            if !running || cancelled(result) {
                assert!(continuations.is_empty(), "{step:?}");
            } else {
                let [continuation] = continuations.as_slice() else {
                    panic!("one continuation: {step:?}");
                };
                assert!(continuation.trigger_turn && !continuation.display);
                // The host sends it and reports; an error is failed only then.
                let sent = occ.on_continuation_sent(true);
                assert!(
                    matches!(sent.effects.as_slice(), [] | [Effect::Fail { .. }]),
                    "{sent:?}"
                );
            }
            assert!(!compacting(occ));
            step
        }
        Event::BeforeCompact(trigger) => {
            let cancel = occ.on_before_compact(*trigger);
            assert!(!cancel || (*trigger == CompactionTrigger::Threshold && selected(occ)));
            Step::default()
        }
        Event::BeforeTree => {
            let pi_refuses = occ.capabilities().refuses_tree_navigation_during_compaction;
            let cancel = occ.on_before_tree();
            assert!(!cancel || (!pi_refuses && compacting(occ)));
            Step::default()
        }
    };
    assert_snapshots_are_the_state(&step, &driver.occ);
    step
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
            let open = u64::from(mark(occ) == Mark::Counted);
            // Each count consumed one announcement, and is closed by exactly one assistant
            // message_end or turn_end, or one interrupting session event, before the next can
            // happen.
            prop_assert!(state.request_count <= tally.announced);
            prop_assert_eq!(state.request_count, tally.assistant_ends + tally.interrupted + open);
            prop_assert!(state.last_boundary_request_count <= state.request_count);
            prop_assert!(state.cache_debt_tokens.is_finite() && state.cache_debt_tokens >= 0.0);
            prop_assert!(!(compacting(occ) && selected(occ)));
            let restored = OccState::from_value(&state.to_value());
            prop_assert_eq!(restored.as_ref(), Ok(state));
            // Every change of the state was saved by the step that made it.
            prop_assert!(!unsaved(occ), "{:?}", event);
        }
    }

    #[test]
    fn requests_without_interruptions_never_outnumber_their_ends(
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
            if matches!(event, Event::MessageEnd("assistant") | Event::TurnEnd { .. }) {
                assistant_ends += 1;
            }
            apply(&mut driver, event, &mut tally);
            let open = u64::from(mark(&driver.occ) == Mark::Counted);
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
    occ.on_session_start(&[], Vec::new());
    occ.on_context(ContextEvent::new(false, &[user(1, 40)]));
    occ.on_before_provider_request(None, 0);
    let (result, step) = occ.on_update_plan("p", &plan_args(&[("a", "in_progress")]), false);
    result.expect("valid");
    let snapshot = saved_state(&step).expect("changed");
    let branch = sol_core::session::SessionEntry::from_values([serde_json::json!({
        "type": "custom", "customType": sol_occ::state::STATE_ENTRY_TYPE, "data": snapshot.to_value()
    })]);
    let mut restored = OccSession::new(*occ.options());
    assert_eq!(
        restored.on_session_start(&branch, Vec::new()),
        Step::default()
    );
    assert_eq!(restored.state(), occ.state());
}

/// One event against a session through its step, returning the step (with the
/// continuation's report, when it sent one). The observations are either the whole sized
/// messages (`held: None`, the oracle: what the host did before it sized messages itself) or
/// only their total, with the host keeping the sized list in `held` and handing it over with
/// the boundary measurement.
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
    let step = match event {
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
            driver.occ.on_context(ContextEvent {
                aborted: *aborted,
                observation,
            })
        }
        Event::SessionStart => {
            let branch = own_branch(&driver.occ);
            driver.occ.on_session_start(&branch, observation(held))
        }
        Event::SessionTree => {
            let branch = own_branch(&driver.occ);
            driver.occ.on_session_tree(&branch, observation(held))
        }
        Event::SessionCompact { from_extension } => driver
            .occ
            .on_session_compact(*from_extension, observation(held)),
        Event::ProviderRequest { reported } => driver.occ.on_before_provider_request(*reported, 7),
        Event::Decide => {
            let mut measurement = driver.measurement();
            measurement.observed = held.map(|list| list.clone());
            driver.occ.on_decide_boundary(&measurement)
        }
        Event::Settled { idle } => driver.occ.on_agent_settled(*idle),
        Event::Finished(result) => {
            let mut step = driver.occ.on_compaction_finished(result);
            let sent = driver.occ.on_continuation_sent(true);
            step.effects.extend(sent.effects);
            step
        }
        other => {
            let mut tally = Tally::default();
            apply(driver, other, &mut tally)
        }
    };
    format!("{step:?}")
}

/// Completes a plan step on a copy of the session and evaluates the boundary: the
/// measurement's step.
fn probe_boundary(driver: &Driver, held: Option<&Vec<SizedMessage>>) -> Option<Step> {
    let mut occ = driver.occ.clone();
    occ.on_update_plan(
        "probe-1",
        &plan_args(&[("x", "in_progress"), ("y", "pending")]),
        false,
    )
    .0
    .ok()?;
    occ.on_update_plan(
        "probe-2",
        &plan_args(&[("x", "completed"), ("y", "pending")]),
        false,
    )
    .0
    .ok()?;
    occ.on_turn_end(&TurnEnd {
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
    Some(occ.on_decide_boundary(&measurement))
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
            prop_assert_eq!(mark(&host.occ), mark(&oracle.occ));
            prop_assert_eq!(selected(&host.occ), selected(&oracle.occ));
            prop_assert_eq!(compacting(&host.occ), compacting(&oracle.occ));
            prop_assert_eq!(host.occ.is_retry_blocked(), oracle.occ.is_retry_blocked());
            prop_assert_eq!(unsaved(&host.occ), unsaved(&oracle.occ));
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

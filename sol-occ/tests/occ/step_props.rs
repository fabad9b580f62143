//! The effect API against the per-event API it is built on: random event sequences played
//! through the `on_*` steps give exactly what a host of the per-event values did (the
//! oracle): the same entries appended (state snapshots equal to what `take_state_entry`
//! polled after each step, in the same order), aborts, compactions, continuations,
//! notices, waits and errors, the same session afterwards, and accounts that add up to
//! what the completed compactions removed.

use proptest::prelude::*;
use sol_core::StepAccount;
use sol_occ::session::{
    BoundaryMeasurement, CompactionOutcome, CompactionResult, CustomEntry, Effect, OccSession,
    PiCapabilities, SettledAction, Step, TurnEndOutcome,
};
use sol_occ::state::STATE_ENTRY_TYPE;
use sol_occ::tokens::{MessageRole, estimate_utf8_tokens};

use crate::session_props::{Event, event, own_branch, result, turn_end_of};
use crate::support::{Driver, assistant, plan_args, user};

/// A driver whose session has these capabilities.
fn driver(ratio: Option<f64>, capabilities: PiCapabilities) -> Driver {
    let mut driver = Driver::new(ratio);
    driver.occ = OccSession::with_capabilities(*driver.occ.options(), capabilities);
    driver.occ.session_start(&[], Vec::new());
    driver
}

/// What the old host appended after a call: the snapshot `take_state_entry` handed out.
fn polled(occ: &mut OccSession) -> Option<Effect> {
    occ.take_state_entry().map(|state| {
        Effect::AppendEntry(CustomEntry {
            custom_type: STATE_ENTRY_TYPE,
            data: state.to_value(),
        })
    })
}

/// The warning the old host showed for the snapshots a restore could not read.
fn warning(rejected: &[sol_occ::state::StateError]) -> Option<Effect> {
    (!rejected.is_empty()).then(|| Effect::Warn {
        text: sol_occ::text::unreadable_state_warning(rejected),
    })
}

/// The conversation grows as in `session_props`; the same for both drivers.
fn grow(driver: &mut Driver, chars: usize) {
    driver.clock += 1;
    driver.messages.push(user(driver.clock, chars));
    driver.clock += 1;
    driver.messages.push(assistant(driver.clock, 8));
}

/// The boundary measurement, taken before the event, for the two events that use it: a
/// `turn_end` (whose only follow-up that measures is [`Effect::Measure`]) and a decision.
/// Neither changes the conversation, so measuring first is measuring when asked; the
/// others skip it (it rebuilds the whole branch, the most of these tests' time).
fn measured(driver: &Driver, event: &Event) -> Option<BoundaryMeasurement> {
    matches!(event, Event::TurnEnd { .. } | Event::Decide).then(|| driver.measurement())
}

/// One event the way the extension drove the per-event API before the effects: what it
/// did, in order, as effects, and what a completed compaction removed. `idle_after_send`
/// is what `ctx.isIdle()` says right after a continuation was sent.
fn oracle(
    driver: &mut Driver,
    event: &Event,
    idle_after_send: bool,
) -> (Vec<Effect>, String, StepAccount) {
    let mut effects = Vec::new();
    let mut returned = String::new();
    let mut account = StepAccount::default();
    let measurement = measured(driver, event);
    let measurement = || measurement.as_ref().expect("measured for a boundary event");
    let occ = &mut driver.occ;
    match event {
        Event::Context { aborted, chars } => {
            grow(driver, *chars);
            let messages = driver.messages.clone();
            driver
                .occ
                .context(sol_occ::session::ContextEvent::new(*aborted, &messages));
        }
        Event::ProviderRequest { reported } => {
            if occ.before_provider_request(*reported, 7).counted {
                effects.extend(polled(occ));
            }
        }
        Event::MessageEnd(role) => occ.message_end(role),
        Event::SessionStart => {
            let branch = own_branch(occ);
            let rejected = occ.session_start(&branch, Vec::new());
            effects.extend(warning(&rejected));
        }
        Event::SessionTree => {
            let branch = own_branch(occ);
            let rejected = occ.session_tree(&branch, Vec::new());
            effects.extend(warning(&rejected));
        }
        Event::SessionCompact { from_extension } => {
            occ.session_compact(*from_extension, Vec::new());
            effects.extend(polled(occ));
        }
        Event::Shutdown => occ.session_shutdown(),
        Event::Input { text, steer } => {
            occ.input(&sol_occ::session::InputEvent {
                text: (*text).to_owned(),
                streaming_behavior: steer.then(|| "steer".to_owned()),
            });
            effects.extend(polled(occ));
        }
        Event::Plan { call, steps } => {
            returned = format!(
                "{:?}",
                occ.update_plan(&format!("p{call}"), &plan_args(steps), false)
            );
            effects.extend(polled(occ));
        }
        Event::TurnEnd { .. } => {
            let turn = turn_end_of(event).expect("a turn");
            if occ.turn_end(&turn) == TurnEndOutcome::Evaluate
                && let Some(evaluation) = occ.decide_boundary(measurement())
            {
                let abort = evaluation.abort;
                effects.push(Effect::Decision(Box::new(evaluation)));
                if abort {
                    effects.extend(polled(occ));
                    effects.push(Effect::Abort);
                }
            }
        }
        Event::Decide => {
            if let Some(evaluation) = occ.decide_boundary(measurement()) {
                let abort = evaluation.abort;
                effects.push(Effect::Decision(Box::new(evaluation)));
                if abort {
                    effects.extend(polled(occ));
                    effects.push(Effect::Abort);
                }
            }
        }
        Event::Settled { idle } => match occ.agent_settled(*idle) {
            SettledAction::Release => {}
            SettledAction::Wait => effects.push(Effect::KeepWaiting),
            SettledAction::Dropped { skip_entry } => effects.push(Effect::AppendEntry(skip_entry)),
            SettledAction::Compact {
                custom_instructions,
            } => effects.push(Effect::Compact {
                custom_instructions,
            }),
        },
        Event::Finished(result) => {
            let follow_up = occ.compaction_finished(result);
            effects.extend(follow_up.skip_entry.map(Effect::AppendEntry));
            effects.extend(polled(occ));
            effects.extend(follow_up.warning.map(|text| Effect::Warn { text }));
            effects.extend(follow_up.savings_notice.map(Effect::SavingsNotice));
            if let Some(continuation) = follow_up.continuation {
                effects.push(Effect::SendMessage(continuation));
                if !idle_after_send {
                    effects.push(Effect::WaitForContinuation);
                }
            }
            effects.extend(follow_up.error.map(|error| Effect::Fail { error }));
            if let (
                CompactionOutcome::Completed { removed_tokens },
                CompactionResult::Completed { summary },
            ) = (follow_up.outcome, result)
            {
                // Pi's summarizer read what the summary replaces and wrote the summary.
                let summary_tokens = estimate_utf8_tokens(summary);
                account.model_calls = 1;
                account.tokens_removed = removed_tokens;
                account.model_input_tokens = removed_tokens + summary_tokens;
                account.model_output_tokens = summary_tokens;
            }
        }
        Event::BeforeCompact(trigger) => {
            returned = format!("{}", occ.on_before_compact(*trigger));
        }
        Event::BeforeTree(_) => {
            let refuses = occ.capabilities().refuses_tree_navigation_during_compaction;
            returned = format!("{}", occ.should_cancel_tree_navigation(refuses));
        }
    }
    (effects, returned, account)
}

/// The same event through the effect API, carrying out `measure` and `sendMessage` the
/// way the extension does (the measurement, then `ctx.isIdle()` after sending).
fn stepped(
    driver: &mut Driver,
    event: &Event,
    idle_after_send: bool,
) -> (Vec<Effect>, String, StepAccount) {
    let mut returned = String::new();
    let measurement = measured(driver, event);
    let measurement = || measurement.as_ref().expect("measured for a boundary event");
    let occ = &mut driver.occ;
    let first: Step = match event {
        Event::Context { aborted, chars } => {
            grow(driver, *chars);
            let messages = driver.messages.clone();
            driver
                .occ
                .on_context(sol_occ::session::ContextEvent::new(*aborted, &messages))
        }
        Event::ProviderRequest { reported } => occ.on_before_provider_request(*reported, 7),
        Event::MessageEnd(role) => occ.on_message_end(MessageRole::parse(role)),
        Event::SessionStart => {
            let branch = own_branch(occ);
            occ.on_session_start(&branch, Vec::new())
        }
        Event::SessionTree => {
            let branch = own_branch(occ);
            occ.on_session_tree(&branch, Vec::new())
        }
        Event::SessionCompact { from_extension } => {
            occ.on_session_compact(*from_extension, Vec::new())
        }
        Event::Shutdown => occ.on_session_shutdown(),
        Event::Input { text, steer } => occ.on_input(&sol_occ::session::InputEvent {
            text: (*text).to_owned(),
            streaming_behavior: steer.then(|| "steer".to_owned()),
        }),
        Event::Plan { call, steps } => {
            let (result, step) = occ.on_update_plan(&format!("p{call}"), &plan_args(steps), false);
            returned = format!("{result:?}");
            step
        }
        Event::TurnEnd { .. } => occ.on_turn_end(&turn_end_of(event).expect("a turn")),
        Event::Decide => occ.on_decide_boundary(measurement()),
        Event::Settled { idle } => occ.on_agent_settled(*idle),
        Event::Finished(result) => occ.on_compaction_finished(result),
        Event::BeforeCompact(trigger) => {
            returned = format!("{}", occ.on_before_compact(*trigger));
            Step::default()
        }
        Event::BeforeTree(_) => {
            returned = format!("{}", occ.on_before_tree());
            Step::default()
        }
    };
    let mut effects = Vec::new();
    let mut account = first.account;
    let mut queue: Vec<Effect> = first.effects.into_iter().rev().collect();
    while let Some(effect) = queue.pop() {
        let next = match &effect {
            Effect::Measure => Some(driver.occ.on_decide_boundary(measurement())),
            Effect::SendMessage(_) => Some(driver.occ.on_continuation_sent(idle_after_send)),
            _ => None,
        };
        if !matches!(effect, Effect::Measure) {
            effects.push(effect);
        }
        if let Some(next) = next {
            account += next.account;
            queue.extend(next.effects.into_iter().rev());
        }
    }
    (effects, returned, account)
}

/// A plan step registered and completed over two requests, ending in a normal turn: a
/// boundary the economics evaluate (and, at a low cache price, select).
fn boundary(call: u8, chars: usize) -> Vec<Event> {
    let request = || {
        [
            Event::Context {
                aborted: false,
                chars,
            },
            Event::ProviderRequest { reported: None },
            Event::MessageEnd("assistant"),
        ]
    };
    let mut events = Vec::new();
    events.extend(request());
    events.push(Event::Plan {
        call,
        steps: vec![("a", "in_progress"), ("b", "pending")],
    });
    events.extend(request());
    events.push(Event::Plan {
        call: call + 1,
        steps: vec![("a", "completed"), ("b", "in_progress")],
    });
    events.push(Event::TurnEnd {
        call: call + 1,
        stop: Some("toolUse"),
        aborted: false,
        is_error: false,
        work: false,
    });
    events
}

/// Random events, with whole boundaries, settlements and compaction results mixed in so
/// that every follow-up is reached often.
fn events() -> impl Strategy<Value = Vec<(Event, bool)>> {
    let single = (event(), any::<bool>()).prop_map(|pair| vec![pair]);
    let boundary = (
        0u8..2,
        2_000usize..30_000,
        any::<bool>(),
        result(),
        any::<bool>(),
    )
        .prop_map(|(call, chars, idle, result, idle_after_send)| {
            let mut events: Vec<(Event, bool)> = boundary(call, chars)
                .into_iter()
                .map(|event| (event, true))
                .collect();
            events.push((Event::Settled { idle }, true));
            events.push((Event::Finished(result), idle_after_send));
            events
        });
    prop::collection::vec(prop_oneof![6 => single, 1 => boundary], 0..30)
        .prop_map(|blocks| blocks.into_iter().flatten().collect())
}

fn capabilities() -> impl Strategy<Value = PiCapabilities> {
    any::<bool>().prop_map(|refuses| PiCapabilities {
        refuses_tree_navigation_during_compaction: refuses,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn the_effects_are_what_the_host_of_the_per_event_values_did(
        events in events(),
        ratio in prop::option::of(prop_oneof![Just(0.0), 0.0f64..30.0]),
        capabilities in capabilities(),
    ) {
        let mut old = driver(ratio, capabilities);
        let mut new = driver(ratio, capabilities);
        let mut old_total = StepAccount::default();
        let mut new_total = StepAccount::default();
        let mut compactions = 0u64;
        for (event, idle_after_send) in &events {
            let (expected, expected_returned, expected_account) = oracle(&mut old, event, *idle_after_send);
            let (actual, actual_returned, actual_account) = stepped(&mut new, event, *idle_after_send);
            prop_assert_eq!(&actual, &expected, "{:?}", event);
            prop_assert_eq!(actual_returned, expected_returned, "{:?}", event);
            prop_assert_eq!(actual_account, expected_account, "{:?}", event);
            prop_assert_eq!(&new.occ, &old.occ, "{:?}", event);
            old_total += expected_account;
            new_total += actual_account;
            compactions += actual.iter().filter(|effect| matches!(effect, Effect::Compact { .. })).count() as u64;
            // Every snapshot is the state as the step left it.
            for effect in &actual {
                if let Effect::AppendEntry(entry) = effect
                    && entry.custom_type == STATE_ENTRY_TYPE
                {
                    prop_assert_eq!(&entry.data, &new.occ.state().to_value());
                }
            }
        }
        prop_assert_eq!(new_total, old_total);
        // A model call is accounted only for a compaction the session asked for.
        prop_assert!(new_total.model_calls <= compactions);
    }

    /// Whatever came before, a continuation's report asks to wait exactly when Pi was not
    /// idle after sending it, and only once.
    #[test]
    fn only_a_sent_continuation_is_waited_for_and_only_once(
        events in events(),
        idle in any::<bool>(),
    ) {
        let mut host = driver(Some(0.0), PiCapabilities::default());
        for (event, idle_after_send) in &events {
            stepped(&mut host, event, *idle_after_send);
        }
        // No continuation is outstanding after a whole event: nothing to wait for.
        prop_assert_eq!(host.occ.on_continuation_sent(idle), Step::default());
    }
}

proptest! {
    // Each case drives a whole random session first (a measurement per event): few cases.
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Every effect a step can return reads as one non-empty line, and a step's line is its
    /// effects' lines, in order, between brackets.
    #[test]
    fn every_effect_and_step_reads_as_one_line(events in events()) {
        let mut host = driver(Some(0.0), PiCapabilities::default());
        for (event, idle_after_send) in &events {
            let (effects, _, _) = stepped(&mut host, event, *idle_after_send);
            let lines: Vec<String> = effects.iter().map(Effect::to_string).collect();
            for line in &lines {
                prop_assert!(!line.is_empty() && !line.contains('\n'), "{:?}", line);
            }
            let step = Step { effects, account: StepAccount::default() };
            prop_assert_eq!(step.to_string(), format!("[{}]", lines.join(", ")));
        }
    }

    /// `on_request` after any events is `context`, `before_provider_request` and the
    /// assistant's `message_end`, one after the other: the same effects, the same session.
    #[test]
    fn a_whole_request_is_its_three_events(
        events in events(),
        aborted in any::<bool>(),
        observed in 0u64..50_000,
        reported in prop::option::of(prop_oneof![Just(-1.0), 0.0f64..200_000.0]),
        system in 0u64..5_000,
    ) {
        let mut host = driver(Some(0.0), PiCapabilities::default());
        for (event, idle_after_send) in &events {
            stepped(&mut host, event, *idle_after_send);
        }
        let mut apart = host.occ.clone();
        let context = || sol_occ::session::ContextEvent::total(aborted, observed);
        let whole = host.occ.on_request(context(), reported, system);
        let mut effects = apart.on_context(context()).effects;
        effects.extend(apart.on_before_provider_request(reported, system).effects);
        effects.extend(apart.on_message_end(MessageRole::Assistant).effects);
        prop_assert_eq!(whole.effects, effects);
        prop_assert_eq!(&host.occ, &apart);
    }
}

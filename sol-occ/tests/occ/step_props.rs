//! The effect API's own invariants: random event sequences played through the `on_*`
//! steps, with `measure` and `sendMessage` carried out as the host does, give for each
//! event exactly the effects the event and the session before it call for (the entries
//! appended, with every state snapshot equal to the state the step left and nothing left
//! unsaved; aborts, compactions, continuations, notices, waits and errors, each in its
//! place), and accounts that add up to what the completed compactions removed.

use proptest::prelude::*;
use sol_core::StepAccount;
use sol_occ::session::{
    BoundaryMeasurement, CompactionErrorKind, CompactionResult, CompactionTrigger, Effect,
    PiCapabilities, Step, classify_compaction_error,
};
use sol_occ::state::{OccState, STATE_ENTRY_TYPE};
use sol_occ::text;
use sol_occ::tokens::{MessageRole, estimate_utf8_tokens};

use crate::session_props::{Event, event, own_branch, result, turn_end_of};
use crate::support::{
    Driver, Mark, assistant, compacting, mark, plan_args, selected, unsaved, user,
};

/// A driver whose session has these capabilities.
fn driver(ratio: Option<f64>, capabilities: PiCapabilities) -> Driver {
    Driver::with_capabilities(ratio, capabilities)
}

/// The conversation grows as in `session_props`.
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
        Event::BeforeTree => {
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

/// What the session showed before an event, through its accessors and the probes.
struct Before {
    state: OccState,
    mark: Mark,
    selected: bool,
    compacting: bool,
    retry_blocked: bool,
}

impl Before {
    fn of(driver: &Driver) -> Before {
        Before {
            state: driver.occ.state().clone(),
            mark: mark(&driver.occ),
            selected: selected(&driver.occ),
            compacting: compacting(&driver.occ),
            retry_blocked: driver.occ.is_retry_blocked(),
        }
    }
}

/// The kinds of `effects`, one letter each, in order: `s` a state snapshot, `k` a skip
/// record, `d` the decision, `a` abort, `c` compact, `w` a warning, `n` the savings notice,
/// `m` the continuation, `W` wait for it, `K` keep waiting, `f` fail, `M` measure.
fn kinds(effects: &[Effect]) -> String {
    effects
        .iter()
        .map(|effect| match effect {
            Effect::AppendEntry(entry) if entry.custom_type == STATE_ENTRY_TYPE => 's',
            Effect::AppendEntry(entry) if entry.custom_type == text::SKIP_ENTRY_TYPE => 'k',
            Effect::AppendEntry(entry) => panic!("an entry of an unknown type: {entry:?}"),
            Effect::Decision(_) => 'd',
            Effect::Abort => 'a',
            Effect::Compact { .. } => 'c',
            Effect::Warn { .. } => 'w',
            Effect::SavingsNotice(_) => 'n',
            Effect::SendMessage(_) => 'm',
            Effect::WaitForContinuation => 'W',
            Effect::KeepWaiting => 'K',
            Effect::Fail { .. } => 'f',
            Effect::Measure => 'M',
        })
        .collect()
}

/// Checks one event's effects (as [`stepped`] carried them out), its returned value and its
/// account against the event and what the session showed before it.
fn check(
    driver: &Driver,
    before: &Before,
    event: &Event,
    idle_after_send: bool,
    (effects, returned, account): &(Vec<Effect>, String, StepAccount),
) -> Result<(), TestCaseError> {
    let occ = &driver.occ;
    let state = occ.state();
    let kinds = kinds(effects);
    let wait = if idle_after_send { "" } else { "W" };
    // Every snapshot is the state as the step left it, and nothing is left unsaved.
    for effect in effects {
        if let Effect::AppendEntry(entry) = effect
            && entry.custom_type == STATE_ENTRY_TYPE
        {
            prop_assert_eq!(&entry.data, &state.to_value());
        }
    }
    prop_assert!(!unsaved(occ));
    // A model call is accounted only for a completed compaction.
    if !matches!(event, Event::Finished(CompactionResult::Completed { .. })) {
        prop_assert_eq!(account, &StepAccount::default());
    }
    match event {
        Event::Context { .. } | Event::MessageEnd(_) | Event::Shutdown => {
            prop_assert_eq!(kinds, "");
            if matches!(event, Event::Shutdown) {
                // The transient state is cleared: a running compaction will not continue.
                prop_assert!(!selected(occ) && !compacting(occ) && mark(occ) == Mark::Clear);
            }
        }
        Event::ProviderRequest { .. } => {
            // Counted (and saved) exactly when a `context` event marked it.
            let counted = before.mark == Mark::Marked;
            prop_assert_eq!(kinds, if counted { "s" } else { "" });
            let count = before.state.request_count + u64::from(counted);
            prop_assert_eq!(state.request_count, count);
        }
        Event::SessionStart | Event::SessionTree => {
            // At most the warning about unreadable snapshots; the session restored its own
            // latest snapshot, with the transient state cleared.
            prop_assert!(matches!(kinds.as_str(), "" | "w"), "{}", kinds);
            prop_assert_eq!(state, &before.state);
            prop_assert!(mark(occ) == Mark::Clear && !selected(occ) && !compacting(occ));
        }
        Event::SessionCompact { .. } => {
            prop_assert_eq!(kinds, "s");
            prop_assert_eq!(
                state.native_compaction_count,
                before.state.native_compaction_count + 1
            );
            prop_assert!(mark(occ) == Mark::Clear && !selected(occ));
            prop_assert_eq!(compacting(occ), before.compacting);
        }
        Event::Input { text, steer } => {
            prop_assert!(matches!(kinds.as_str(), "" | "s"), "{}", kinds);
            prop_assert_eq!(kinds == "s", state != &before.state);
            if *steer || text.starts_with(sol_occ::session::CORRECTION_PREFIX) {
                prop_assert_eq!(kinds, "s");
                prop_assert!(state.plan.is_empty() && !selected(occ));
            }
            prop_assert!(!occ.is_retry_blocked());
        }
        Event::Plan { .. } => {
            // The generated plans are valid: each call is saved.
            prop_assert!(returned.starts_with("Ok("), "{}", returned);
            prop_assert_eq!(kinds, "s");
        }
        Event::TurnEnd { .. } | Event::Decide => {
            // Nothing, the decision, or the decision and the abort of a selected compaction
            // (`measure` was carried out; the plan's own step saved the boundary).
            prop_assert!(matches!(kinds.as_str(), "" | "d" | "da"), "{}", kinds);
            if let Some(Effect::Decision(evaluation)) = effects.first() {
                prop_assert!(!before.selected && !before.compacting);
                prop_assert_eq!(evaluation.abort, evaluation.decision.compact);
                prop_assert_eq!(kinds == "da", evaluation.abort);
                if let Event::TurnEnd {
                    stop,
                    aborted,
                    is_error,
                    work,
                    ..
                } = event
                {
                    // Only a turn that ended normally with a successful plan call, after
                    // other work if a skipped or failed compaction blocked retries.
                    prop_assert!(!matches!(stop, Some("error" | "aborted")) && !aborted);
                    prop_assert!(!is_error);
                    prop_assert!(!before.retry_blocked || *work);
                }
            }
            prop_assert_eq!(selected(occ), before.selected || kinds == "da");
        }
        Event::Settled { idle } => {
            let expected = match (before.selected, before.compacting, idle) {
                (true, _, true) => "c",
                (true, _, false) => "k",
                (false, true, _) => "K",
                (false, false, _) => "",
            };
            prop_assert_eq!(kinds.as_str(), expected);
            if let [Effect::AppendEntry(entry)] = effects.as_slice() {
                prop_assert_eq!(
                    &entry.data["reason"],
                    sol_occ::session::SELECTION_DROPPED_NOT_IDLE
                );
            }
            prop_assert!(!selected(occ));
            prop_assert_eq!(compacting(occ), before.compacting || expected == "c");
        }
        Event::Finished(result) => {
            prop_assert!(!compacting(occ));
            prop_assert_eq!(state, &before.state, "a compaction's end changes no state");
            if !before.compacting {
                prop_assert_eq!(kinds, "", "nothing was running");
                return Ok(());
            }
            match result {
                CompactionResult::Completed { summary } => {
                    let noticed = effects.iter().find_map(|effect| match effect {
                        Effect::SavingsNotice(notice) => Some(notice.removed_tokens),
                        _ => None,
                    });
                    let removed = noticed.unwrap_or(0);
                    prop_assert_eq!(noticed.is_some(), removed > 0);
                    let expected = format!("{}m{wait}", if removed > 0 { "n" } else { "" });
                    prop_assert_eq!(kinds, expected);
                    let summary_tokens = estimate_utf8_tokens(summary);
                    prop_assert_eq!(
                        account,
                        &StepAccount {
                            tokens_removed: removed,
                            model_calls: 1,
                            model_input_tokens: removed + summary_tokens,
                            model_output_tokens: summary_tokens,
                            ..StepAccount::default()
                        }
                    );
                }
                CompactionResult::Abandoned => prop_assert_eq!(kinds, ""),
                CompactionResult::Failed { name, message } => {
                    match classify_compaction_error(name.as_deref(), message) {
                        CompactionErrorKind::Cancelled => prop_assert_eq!(kinds, ""),
                        CompactionErrorKind::Refused(refusal) => {
                            prop_assert_eq!(kinds, format!("kwm{wait}"));
                            let Effect::AppendEntry(entry) = &effects[0] else {
                                unreachable!()
                            };
                            prop_assert_eq!(&entry.data["reason"], refusal.code());
                            prop_assert!(occ.is_retry_blocked());
                        }
                        CompactionErrorKind::Failed => {
                            // The error is failed only once the continuation is under way.
                            prop_assert_eq!(kinds, format!("m{wait}f"));
                            prop_assert!(occ.is_retry_blocked());
                        }
                    }
                }
            }
        }
        Event::BeforeCompact(trigger) => {
            prop_assert_eq!(kinds, "");
            let cancel = *trigger == CompactionTrigger::Threshold && before.selected;
            prop_assert_eq!(returned, &cancel.to_string());
        }
        Event::BeforeTree => {
            prop_assert_eq!(kinds, "");
            let refuses = occ.capabilities().refuses_tree_navigation_during_compaction;
            prop_assert_eq!(returned, &(before.compacting && !refuses).to_string());
        }
    }
    Ok(())
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
    fn every_step_returns_what_its_event_and_the_session_call_for(
        events in events(),
        ratio in prop::option::of(prop_oneof![Just(0.0), 0.0f64..30.0]),
        capabilities in capabilities(),
    ) {
        let mut host = driver(ratio, capabilities);
        let mut total = StepAccount::default();
        let mut compactions = 0u64;
        let mut noticed = 0u64;
        for (event, idle_after_send) in &events {
            let before = Before::of(&host);
            let stepped = stepped(&mut host, event, *idle_after_send);
            check(&host, &before, event, *idle_after_send, &stepped)
                .map_err(|error| TestCaseError::fail(format!("{event:?}: {error}")))?;
            let (effects, _, account) = stepped;
            total += account;
            compactions += effects.iter().filter(|effect| matches!(effect, Effect::Compact { .. })).count() as u64;
            noticed += effects
                .iter()
                .map(|effect| match effect {
                    Effect::SavingsNotice(notice) => notice.removed_tokens,
                    _ => 0,
                })
                .sum::<u64>();
        }
        // A model call is accounted only for a compaction the session asked for, and the
        // tokens removed are those the notices reported.
        prop_assert!(total.model_calls <= compactions);
        prop_assert_eq!(total.tokens_removed, noticed);
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

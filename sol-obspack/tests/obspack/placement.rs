//! The cache-aware placement: its economics over random requests (never a loss, monotone in
//! the price ratio and the horizon, deterministic), the step that keeps placeholders stable,
//! and the texts of its reason codes and ledger records.

use proptest::prelude::*;
use sol_obspack::ledger::ledger_lines;
use sol_obspack::pack::{Carried, Pack, Seen};
use sol_obspack::placement::{CacheMisses, Pending, PlacementReason, Shape, place};
use sol_obspack::{FULL_SENDS, LedgerRecord, observe};

const REASONS: [PlacementReason; 6] = [
    PlacementReason::FullSend,
    PlacementReason::Shown,
    PlacementReason::RidesRewrite,
    PlacementReason::Economic,
    PlacementReason::Deferred,
    PlacementReason::Recent,
];

/// A request's packed results in order: each with tokens after it that shrink from one to the
/// next (a later result has fewer messages after it).
fn request() -> impl Strategy<Value = (Vec<Pending>, Shape)> {
    let item = (
        0u32..6,
        any::<bool>(),
        2_600u64..40_000,
        0u64..6_000,
        prop::bool::weighted(0.2),
    );
    (
        prop::collection::vec(item, 0..8),
        0u64..8_000,
        any::<bool>(),
        0u32..80,
    )
        .prop_map(|(items, new_tokens, rewritten, carried_requests)| {
            let mut after: u64 = new_tokens + items.iter().map(|item| item.2 + item.3).sum::<u64>();
            let pending = items
                .into_iter()
                .map(|(prior, shown, full, gap, recent)| {
                    after = after.saturating_sub(full + gap);
                    Pending {
                        prior_requests: prior,
                        // A placeholder is shown only past the full sends.
                        shown: shown && prior >= FULL_SENDS,
                        recent,
                        full_tokens: full,
                        removed_tokens: full - 2_500,
                        tokens_after: after + gap,
                    }
                })
                .collect();
            let shape = Shape {
                new_tokens,
                rewritten,
                carried_requests,
                ..Shape::default()
            };
            (pending, shape)
        })
}

fn replaced(items: &[Pending], shape: Shape, ratio: f64) -> Vec<bool> {
    place(items, shape, ratio).replace().collect()
}

proptest! {
    #[test]
    fn placement_never_books_a_loss((items, shape) in request(), ratio in 0.0f64..40.0) {
        let placed = place(&items, shape, ratio);
        prop_assert_eq!(placed.reasons.len(), items.len());
        if let Some(batch) = placed.economics {
            prop_assert!(batch.net > 0.0);
            prop_assert!(batch.saving >= 0.0 && batch.rewrite_cost >= 0.0);
            prop_assert_eq!(placed.reasons[batch.first], PlacementReason::Economic);
        }
        for (item, reason) in items.iter().zip(&placed.reasons) {
            // The requirement's two full sends are never cut short; a shown placeholder stays.
            if item.prior_requests < FULL_SENDS {
                prop_assert_eq!(*reason, PlacementReason::FullSend);
            } else if item.recent && !item.shown {
                // The recent-outputs placement keeps its newest outputs whatever pays.
                prop_assert_eq!(*reason, PlacementReason::Recent);
            } else if item.shown {
                prop_assert_eq!(*reason, PlacementReason::Shown);
            } else if shape.rewritten {
                prop_assert_eq!(*reason, PlacementReason::RidesRewrite);
            } else {
                prop_assert!(matches!(reason, PlacementReason::Economic | PlacementReason::Deferred));
            }
        }
        // An economic batch is every waiting result from its first one on.
        let first = placed.reasons.iter().position(|r| *r == PlacementReason::Economic);
        if let Some(first) = first {
            prop_assert!(placed.reasons[first..].iter().all(|r| *r != PlacementReason::Deferred));
        }
    }

    #[test]
    fn a_higher_ratio_never_replaces_more(
        (items, shape) in request(),
        low in 0.0f64..40.0,
        extra in 0.0f64..40.0,
    ) {
        let cheap = replaced(&items, shape, low);
        let dear = replaced(&items, shape, low + extra);
        for (at_low, at_high) in cheap.iter().zip(&dear) {
            prop_assert!(!at_high || *at_low, "replaced at {} but not at {}", low + extra, low);
        }
    }

    #[test]
    fn a_longer_horizon_never_replaces_less(
        (items, shape) in request(),
        ratio in 0.0f64..40.0,
        more in 0u32..80,
    ) {
        let longer = Shape { carried_requests: shape.carried_requests + more, ..shape };
        let short = replaced(&items, shape, ratio);
        let long = replaced(&items, longer, ratio);
        for (at_short, at_long) in short.iter().zip(&long) {
            prop_assert!(!at_short || *at_long);
        }
    }

    #[test]
    fn a_likelier_miss_never_replaces_less(
        (items, shape) in request(),
        ratio in 0.0f64..40.0,
        low in 0.0f64..1.0,
        more in 0.0f64..1.0,
    ) {
        let trusting = replaced(&items, Shape { miss_chance: low, ..shape }, ratio);
        let missing = replaced(&items, Shape { miss_chance: (low + more).min(1.0), ..shape }, ratio);
        for (at_low, at_high) in trusting.iter().zip(&missing) {
            prop_assert!(!at_low || *at_high);
        }
    }

    #[test]
    fn more_caution_never_replaces_more(
        (items, shape) in request(),
        ratio in 0.0f64..40.0,
        low in 1.0f64..5.0,
        more in 0.0f64..5.0,
    ) {
        let bold = replaced(&items, Shape { caution: low, ..shape }, ratio);
        let careful = replaced(&items, Shape { caution: low + more, ..shape }, ratio);
        for (at_low, at_high) in bold.iter().zip(&careful) {
            prop_assert!(!at_high || *at_low);
        }
    }

    /// A miss chance or a caution that is not a number in range counts as its nearest sane
    /// value: never a panic, never a different placement than that value's.
    #[test]
    fn odd_chances_and_cautions_count_as_their_nearest_sane_value(
        (items, shape) in request(),
        ratio in 0.0f64..40.0,
        odd in prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.0, 7.0, 0.0]),
    ) {
        let chance = place(&items, Shape { miss_chance: odd, ..shape }, ratio);
        let sane = if odd.is_nan() { 0.0 } else { odd.clamp(0.0, 1.0) };
        prop_assert_eq!(chance, place(&items, Shape { miss_chance: sane, ..shape }, ratio));
        let caution = place(&items, Shape { caution: odd, ..shape }, ratio);
        let sane = if odd.is_finite() { odd.max(1.0) } else { 1.0 };
        prop_assert_eq!(caution, place(&items, Shape { caution: sane, ..shape }, ratio));
    }

    /// The learned miss chance stays between 0 and 1, grows with the misses seen and keeps
    /// the two kinds of request apart.
    #[test]
    fn the_miss_chance_follows_the_misses(seen in prop::collection::vec((any::<bool>(), any::<bool>()), 0..200)) {
        let mut misses = CacheMisses::default();
        for &(prompt, missed) in &seen {
            misses.observe(prompt, missed);
        }
        for prompt in [true, false] {
            let chance = misses.miss_chance(prompt);
            prop_assert!((0.0..=1.0).contains(&chance));
            let mut more = misses;
            more.observe(prompt, true);
            prop_assert!(more.miss_chance(prompt) >= chance);
            prop_assert_eq!(more.miss_chance(!prompt), misses.miss_chance(!prompt));
            let mut fewer = misses;
            fewer.observe(prompt, false);
            prop_assert!(fewer.miss_chance(prompt) <= chance);
        }
        prop_assert!(misses.prompt_misses <= misses.prompts && misses.turn_misses <= misses.turns);
    }

    #[test]
    fn placement_is_deterministic((items, shape) in request(), ratio in 0.0f64..40.0) {
        prop_assert_eq!(place(&items, shape, ratio), place(&items, shape, ratio));
    }

    /// Over a branch of requests, a placeholder once sent is sent on every later request,
    /// and every result is replaced on its first request after a rewrite at the latest.
    #[test]
    fn the_step_keeps_placeholders_stable(
        sizes in prop::collection::vec(11_000usize..60_000, 1..6),
        ratio in 0.0f64..20.0,
        compaction_at in prop::option::of(2u32..14),
    ) {
        let mut pack = Pack::new();
        let logs: Vec<String> = sizes
            .iter()
            .enumerate()
            .map(|(n, size)| format!("run {n}\n{}", "line of output\n".repeat(size / 15)))
            .collect();
        let handles: Vec<_> = logs
            .iter()
            .map(|log| pack.admit(observe("bash", "call", log), log))
            .collect();
        let mut shown = vec![false; logs.len()];
        for request in 1..16u32 {
            // Result n arrived before request n + 1: it has been carried request - n - 1 times.
            let carried: Vec<Carried> = handles
                .iter()
                .enumerate()
                .filter(|(n, _)| (*n as u32) < request)
                .map(|(n, handle)| Carried {
                    seen: Seen::new(*handle, request - n as u32 - 1),
                    tokens_after: 1_000 * u64::from(request - n as u32),
                    newer_outputs: 0,
                })
                .collect();
            let shape = Shape {
                new_tokens: 1_000,
                rewritten: compaction_at == Some(request),
                carried_requests: request - 1,
                ..Shape::default()
            };
            let step = pack.on_context_cache_aware(request, &carried, shape, ratio);
            for (n, replace) in step.replace.iter().enumerate() {
                prop_assert!(!shown[n] || *replace, "result {n} went back to full on request {request}");
                if shape.rewritten && carried[n].seen.prior_requests >= FULL_SENDS {
                    prop_assert!(*replace);
                }
                shown[n] |= *replace;
            }
            let first_placeholders = step
                .ledger
                .iter()
                .filter(|record| matches!(record, LedgerRecord::Placeholder { .. }))
                .count();
            prop_assert_eq!(first_placeholders > 0, step.first_replacement_tokens > 0);
        }
    }
}

#[test]
fn a_rewrite_takes_every_waiting_result_along() {
    let waiting = [
        Pending::waiting(6_000, 5_800, 30_000),
        Pending::waiting(6_000, 5_800, 1_000),
    ];
    let shape = Shape {
        new_tokens: 500,
        rewritten: true,
        carried_requests: 2,
        ..Shape::default()
    };
    let placed = place(&waiting, shape, 12.5);
    assert_eq!(
        placed.reasons,
        [PlacementReason::RidesRewrite, PlacementReason::RidesRewrite]
    );
    assert_eq!(placed.economics, None);
}

#[test]
fn a_late_result_goes_alone_when_the_early_one_would_rewrite_too_much() {
    // The first result sits 200,000 tokens from the end; the second near it.
    let waiting = [
        Pending::waiting(4_000, 3_800, 200_000),
        Pending::waiting(30_000, 29_500, 2_000),
    ];
    let shape = Shape {
        new_tokens: 1_000,
        rewritten: false,
        carried_requests: 10,
        ..Shape::default()
    };
    let placed = place(&waiting, shape, 12.5);
    assert_eq!(
        placed.reasons,
        [PlacementReason::Deferred, PlacementReason::Economic]
    );
    let batch = placed.economics.expect("a batch");
    assert_eq!(
        (batch.first, batch.removed_tokens, batch.rewritten_tokens),
        (1, 29_500, 31_000)
    );
}

#[test]
fn the_step_records_held_results_once_and_names_the_reason_of_a_replacement() {
    let log: String = (1..=900)
        .map(|n| format!("test case_{n} ... ok\n"))
        .collect();
    let mut pack = Pack::new();
    let handle = pack.admit(observe("bash", "call_1", &log), &log);
    let at = |request: u32, tokens_after: u64| Carried {
        seen: Seen::new(handle, request - 1),
        tokens_after,
        newer_outputs: 0,
    };
    let young = Shape {
        new_tokens: 100,
        rewritten: false,
        carried_requests: 2,
        ..Shape::default()
    };
    let step = pack.on_context_cache_aware(3, &[at(3, 60_000)], young, 12.5);
    assert_eq!(step.replace, [false]);
    assert!(matches!(
        step.ledger[..],
        [LedgerRecord::Held { send_number: 3, .. }]
    ));
    let step = pack.on_context_cache_aware(4, &[at(4, 60_000)], young, 12.5);
    assert!(step.ledger.is_empty(), "held is recorded once");
    let after_compaction = Shape {
        rewritten: true,
        ..young
    };
    let step = pack.on_context_cache_aware(5, &[at(5, 60_000)], after_compaction, 12.5);
    assert_eq!(step.replace, [true]);
    assert!(step.first_replacement_tokens > 0);
    let lines = ledger_lines(&step.ledger, "2026-12-04T06:00:00.000Z");
    assert!(lines.contains(r#""placement":"rides_rewrite""#), "{lines}");
    // From then on it stays a placeholder, announced no more.
    let step = pack.on_context_cache_aware(6, &[at(6, 60_000)], young, 12.5);
    assert_eq!(step.replace, [true]);
    assert_eq!(step.first_replacement_tokens, 0);
    assert!(step.account.tokens_removed > 0);
}

#[test]
fn reason_codes_and_records() {
    let mut text = String::new();
    for reason in REASONS {
        text.push_str(&format!(
            "{:<18} replaces={:<5} {}\n",
            reason.code(),
            reason.replaces(),
            reason.description()
        ));
    }
    let log: String = (1..=900)
        .map(|n| format!("test case_{n} ... ok\n"))
        .collect();
    let obs = observe("bash", "call_1", &log);
    let mut pack = Pack::new();
    let handle = pack.admit(obs.clone(), &log);
    let placeholder = pack.get(handle).expect("admitted").placeholder.clone();
    let records = [
        LedgerRecord::held(&obs, 3, 3, PlacementReason::Deferred),
        LedgerRecord::placed(&obs, 7, 7, &placeholder, PlacementReason::Economic),
    ];
    text.push_str(&ledger_lines(&records, "2026-12-04T06:00:00.000Z"));
    let placed = place(
        &[
            Pending::waiting(9_000, 8_700, 20_000),
            Pending::waiting(12_000, 11_600, 4_000),
        ],
        Shape {
            new_tokens: 1_500,
            rewritten: false,
            carried_requests: 12,
            ..Shape::default()
        },
        12.5,
    );
    text.push_str(&serde_json::to_string_pretty(&placed).expect("serializable"));
    text.push('\n');
    assert_text_snapshot!("placement_reasons", text);
}

//! Properties of the decision: monotone in the price ratio, window protection always
//! compacts a compressible context, and no input yields NaN or a panic.

use proptest::prelude::*;
use serde_json::Value;
use sol_occ::economics::{BoundaryDecision, EconomicsInput, EconomicsParams, decide};

fn tokens() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => 0u64..400_000,
        1 => Just(0u64),
        1 => any::<u64>(),
        1 => Just(u64::MAX),
    ]
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => 0.0f64..50.0,
        1 => Just(0.0),
        1 => Just(-0.0),
        1 => -1e9f64..1e9,
        1 => Just(f64::MAX),
        1 => Just(f64::MIN_POSITIVE),
        1 => Just(f64::EPSILON),
        1 => any::<f64>(),
    ]
}

fn input() -> impl Strategy<Value = EconomicsInput> {
    (
        (tokens(), tokens(), tokens(), tokens()),
        prop::option::of(prop::collection::vec(tokens(), 0..6)),
        (
            tokens(),
            prop::option::of(float()),
            prop::option::of(tokens()),
        ),
        (0u64..4, float(), float(), prop::option::of(float())),
        prop::option::of(0u64..6),
    )
        .prop_map(
            |(
                (write, archive, memo, context),
                counts,
                (remaining, delta, window),
                (k, debt, repayment, ratio),
                q,
            )| {
                EconomicsInput {
                    write_tokens: write,
                    archive_tokens: archive,
                    memo_tokens: memo,
                    context_tokens: context,
                    completed_boundary_request_counts: counts,
                    remaining_boundaries: remaining,
                    average_context_token_increment: delta,
                    context_window_tokens: window,
                    prior_compaction_count: k,
                    carried_debt_tokens: debt,
                    cache_debt_repayment_tokens: repayment,
                    cache_write_read_ratio: ratio,
                    requests_since_last_compaction: q,
                }
            },
        )
}

/// A realistic input: sizes in range, ratios finite.
fn realistic() -> impl Strategy<Value = EconomicsInput> {
    (
        (1_000u64..300_000, 0u64..200_000, 0u64..3_000),
        prop::collection::vec(1u64..60, 0..6),
        (0u64..10, 1.0f64..8_000.0, 50_000u64..400_000),
        (
            0u64..4,
            0.0f64..5_000_000.0,
            0.0f64..100_000.0,
            0.0f64..40.0,
        ),
        prop::option::of(0u64..6),
    )
        .prop_map(
            |(
                (context, archive, memo),
                counts,
                (remaining, delta, window),
                (k, debt, repayment, ratio),
                q,
            )| {
                EconomicsInput {
                    write_tokens: context,
                    archive_tokens: archive,
                    memo_tokens: memo,
                    context_tokens: context,
                    completed_boundary_request_counts: Some(counts),
                    remaining_boundaries: remaining,
                    average_context_token_increment: Some(delta),
                    context_window_tokens: Some(window),
                    prior_compaction_count: k,
                    carried_debt_tokens: debt,
                    cache_debt_repayment_tokens: repayment,
                    cache_write_read_ratio: Some(ratio),
                    requests_since_last_compaction: if k == 0 { None } else { q },
                }
            },
        )
}

fn assert_no_nan(decision: &BoundaryDecision) {
    let value = serde_json::to_value(decision).expect("serializable");
    let Value::Object(fields) = value else {
        panic!("an object")
    };
    for (key, value) in fields {
        if let Some(number) = value.as_f64() {
            assert!(!number.is_nan(), "{key} is NaN");
        }
    }
    let floats = [
        decision.requests_per_boundary_mean,
        decision.requests_per_boundary_lower_bound,
        decision.unbounded_expected_remaining_requests,
        decision.average_context_token_increment,
        decision.window_request_upper_bound,
        decision.expected_remaining_requests,
        Some(decision.saving_tokens),
        decision.breakeven_requests,
        decision.combined_breakeven_requests,
        decision.effective_horizon_requests,
        decision.cache_write_read_ratio,
        decision.incremental_cache_cost_ratio,
        Some(decision.carried_debt_tokens),
        Some(decision.cache_debt_repayment_tokens),
        Some(decision.debt_tokens()),
        Some(decision.repayment_tokens()),
    ];
    for float in floats.into_iter().flatten() {
        assert!(!float.is_nan(), "{decision:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn no_input_yields_nan_or_a_panic(input in input(), reserve in tokens()) {
        let decision = decide(&input, &EconomicsParams::with_reserve(reserve));
        assert_no_nan(&decision);
        prop_assert_eq!(decision.compact, decision.reason.compacts());
    }

    #[test]
    fn a_higher_ratio_never_turns_defer_into_compact(
        input in input(),
        low in float(),
        high in float(),
    ) {
        let (low, high) = if low <= high { (low, high) } else { (high, low) };
        let params = EconomicsParams::default();
        let cheap = decide(&EconomicsInput { cache_write_read_ratio: Some(low), ..input.clone() }, &params);
        let dear = decide(&EconomicsInput { cache_write_read_ratio: Some(high), ..input }, &params);
        prop_assert!(!dear.compact || cheap.compact, "{:?} vs {:?}", cheap.reason, dear.reason);
    }

    #[test]
    fn a_higher_ratio_never_compacts_in_realistic_sessions_either(
        input in realistic(),
        extra in 0.0f64..30.0,
    ) {
        let params = EconomicsParams::default();
        let cheap = decide(&input, &params);
        let ratio = input.cache_write_read_ratio.map(|r| r + extra);
        let dear = decide(&EconomicsInput { cache_write_read_ratio: ratio, ..input }, &params);
        prop_assert!(!dear.compact || cheap.compact);
    }

    #[test]
    fn window_protection_always_compacts_a_compressible_context(
        input in input(),
        reserve in tokens(),
        window in 1u64..1_000_000,
    ) {
        let memo = input.memo_tokens.min(u64::MAX - 1);
        let input = EconomicsInput {
            archive_tokens: memo.saturating_add(1).max(input.archive_tokens),
            memo_tokens: memo,
            context_window_tokens: Some(window),
            context_tokens: window.saturating_sub(reserve).max(input.context_tokens),
            ..input
        };
        let decision = decide(&input, &EconomicsParams::with_reserve(reserve));
        prop_assert!(decision.window_protection);
        prop_assert!(decision.compact);
    }
}

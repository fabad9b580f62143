//! The decision math, with the worked checks of the specification.

use sol_occ::economics::{DecisionReason, EconomicsInput, EconomicsParams, decide};

/// The specification's default inputs: W=80000, A=60000, M=1000, C=80000, [4,6,5], B=4,
/// Δ=2000, W_c=200000, K=0, r=1.
pub(crate) fn default_input() -> EconomicsInput {
    EconomicsInput {
        write_tokens: 80_000,
        archive_tokens: 60_000,
        memo_tokens: 1_000,
        context_tokens: 80_000,
        completed_boundary_request_counts: Some(vec![4, 6, 5]),
        remaining_boundaries: 4,
        average_context_token_increment: Some(2_000.0),
        context_window_tokens: Some(200_000),
        prior_compaction_count: 0,
        carried_debt_tokens: 0.0,
        cache_debt_repayment_tokens: 0.0,
        cache_write_read_ratio: Some(1.0),
        requests_since_last_compaction: None,
    }
}

fn params() -> EconomicsParams {
    EconomicsParams::default()
}

#[test]
fn the_horizon_of_the_worked_example() {
    let input = EconomicsInput {
        remaining_boundaries: 3,
        context_tokens: 100_000,
        average_context_token_increment: Some(5_000.0),
        ..default_input()
    };
    let decision = decide(&input, &params());
    assert_eq!(decision.requests_per_boundary_mean, Some(5.0));
    assert_eq!(decision.unbounded_expected_remaining_requests, Some(16.0));
    assert_eq!(decision.window_request_upper_bound, Some(20.0));
    assert_eq!(decision.expected_remaining_requests, Some(16.0));
}

#[test]
fn a_summary_as_large_as_the_archive_saves_nothing() {
    let decision = decide(
        &EconomicsInput {
            archive_tokens: 500,
            ..default_input()
        },
        &params(),
    );
    assert_eq!(decision.reason, DecisionReason::NonPositiveSaving);
    assert!(!decision.compact);
}

#[test]
fn the_default_inputs_are_economic() {
    let decision = decide(&default_input(), &params());
    assert_eq!(decision.reason, DecisionReason::Economic);
    assert!(decision.compact);
    assert_eq!(decision.incremental_cache_cost_ratio, Some(0.0));
    assert_eq!(decision.breakeven_requests, Some(0.0));
    assert_eq!(decision.effective_horizon_requests, Some(42.0));
}

#[test]
fn window_protection_ignores_the_price() {
    let input = EconomicsInput {
        context_tokens: 195_000,
        cache_write_read_ratio: Some(100.0),
        ..default_input()
    };
    let decision = decide(&input, &EconomicsParams::with_reserve(10_000));
    assert_eq!(decision.reason, DecisionReason::WindowProtection);
    assert!(decision.compact && decision.window_protection);
}

#[test]
fn without_a_ratio_there_is_no_breakeven() {
    let decision = decide(
        &EconomicsInput {
            cache_write_read_ratio: None,
            ..default_input()
        },
        &params(),
    );
    assert_eq!(decision.reason, DecisionReason::CacheRatioUnavailable);
    assert_eq!(decision.breakeven_requests, None);
    let no_horizon = EconomicsInput {
        completed_boundary_request_counts: None,
        ..default_input()
    };
    assert_eq!(
        decide(&no_horizon, &params()).reason,
        DecisionReason::HorizonUnavailable
    );
}

#[test]
fn huge_carried_debt_defers_a_later_compaction() {
    let input = EconomicsInput {
        prior_compaction_count: 1,
        cache_write_read_ratio: Some(2.0),
        carried_debt_tokens: 2_000_000.0,
        ..default_input()
    };
    let decision = decide(&input, &params());
    assert_eq!(decision.reason, DecisionReason::DeferredCarriedDebt);
    let breakeven = decision.breakeven_requests.expect("b");
    let combined = decision.combined_breakeven_requests.expect("b_c");
    assert!((breakeven - 1.356).abs() < 0.001, "{breakeven}");
    assert!((combined - 35.25).abs() < 0.01, "{combined}");
    assert!(combined > breakeven);
    assert_eq!(decision.expected_remaining_requests, Some(21.0));
}

#[test]
fn carried_debt_is_priced_against_every_active_saving() {
    let input = EconomicsInput {
        write_tokens: 500,
        archive_tokens: 200,
        memo_tokens: 100,
        prior_compaction_count: 1,
        cache_write_read_ratio: Some(2.0),
        carried_debt_tokens: 1000.0,
        cache_debt_repayment_tokens: 200.0,
        ..default_input()
    };
    let decision = decide(&input, &params());
    assert_eq!(decision.breakeven_requests, Some(5.0));
    assert_eq!(decision.combined_breakeven_requests, Some(5.0));
}

#[test]
fn a_later_compaction_needs_its_margin() {
    // K=1, b = 80000·ρ/59000; with ρ = 11.5, b ≈ 15.6 ≤ H = 21 but 1.5·b ≈ 23.4 > 21.
    let input = EconomicsInput {
        prior_compaction_count: 1,
        cache_write_read_ratio: Some(12.5),
        ..default_input()
    };
    let decision = decide(&input, &params());
    assert_eq!(decision.reason, DecisionReason::DeferredSubsequentMargin);
    // The first compaction would have gone ahead with its stretched horizon.
    let first = decide(
        &EconomicsInput {
            prior_compaction_count: 0,
            ..input
        },
        &params(),
    );
    assert_eq!(first.reason, DecisionReason::Economic);
}

#[test]
fn an_expensive_first_compaction_is_deferred() {
    let input = EconomicsInput {
        cache_write_read_ratio: Some(40.0),
        ..default_input()
    };
    let decision = decide(&input, &params());
    assert_eq!(decision.reason, DecisionReason::DeferredEconomic);
    assert!(!decision.compact);
}

#[test]
fn one_request_after_a_compaction_is_in_cooldown() {
    let input = EconomicsInput {
        prior_compaction_count: 1,
        requests_since_last_compaction: Some(1),
        ..default_input()
    };
    let decision = decide(&input, &params());
    assert_eq!(
        decision.reason,
        DecisionReason::DeferredPostCompactionCooldown
    );
    assert!(decision.cooldown && !decision.compact);
}

#[test]
fn two_requests_after_a_compaction_are_economic_again() {
    let input = EconomicsInput {
        prior_compaction_count: 1,
        requests_since_last_compaction: Some(2),
        ..default_input()
    };
    assert_eq!(decide(&input, &params()).reason, DecisionReason::Economic);
}

#[test]
fn window_protection_overrides_the_cooldown() {
    let input = EconomicsInput {
        prior_compaction_count: 1,
        requests_since_last_compaction: Some(0),
        context_tokens: 190_000,
        ..default_input()
    };
    let decision = decide(&input, &params());
    assert_eq!(decision.reason, DecisionReason::WindowProtection);
    assert!(decision.compact && decision.cooldown);
}

#[test]
fn never_compacted_means_no_cooldown() {
    let decision = decide(&default_input(), &params());
    assert!(!decision.cooldown);
    assert_eq!(decision.requests_since_last_compaction, None);
}

#[test]
fn the_small_sample_scale_applies_only_with_a_deviation_multiplier() {
    let params = EconomicsParams {
        std_dev_multiplier: 1.0,
        ..params()
    };
    let two = EconomicsInput {
        completed_boundary_request_counts: Some(vec![4, 6]),
        ..default_input()
    };
    assert_eq!(
        decide(&two, &params).requests_per_boundary_lower_bound,
        Some(2.5)
    );
    let three = decide(&default_input(), &params);
    assert_eq!(three.requests_per_boundary_lower_bound, Some(4.0)); // 5 − 1·σ, σ = 1
}

#[test]
fn reason_codes_are_stable() {
    let codes: Vec<&str> = DecisionReason::ALL
        .iter()
        .map(|reason| reason.code())
        .collect();
    assert_eq!(
        codes,
        [
            "non_positive_saving",
            "window_protection",
            "deferred_post_compaction_cooldown",
            "economic",
            "horizon_unavailable",
            "cache_ratio_unavailable",
            "deferred_subsequent_margin",
            "deferred_carried_debt",
            "deferred_economic",
            "native_not_compactable",
        ]
    );
    let decision = decide(&default_input(), &params());
    let json = serde_json::to_value(&decision).expect("json");
    assert_eq!(json["reason"], "economic");
    assert_eq!(json["breakevenRequests"], 0.0);
    let mut overruled = decision.clone();
    overruled.overrule_not_compactable();
    assert_eq!(
        (overruled.compact, overruled.reason),
        (false, DecisionReason::NativeNotCompactable)
    );
}

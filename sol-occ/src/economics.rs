//! Whether compacting at a plan boundary pays for itself.
//!
//! A compaction replaces `A` archived tokens by a summary of about `M` tokens, so every
//! later request reads `S = A − M` fewer tokens. In exchange, the next request has to write
//! the new context to the prompt cache instead of reading it: with a cache write costing
//! `r` times a cache read, that is `W·(r − 1)` extra read-equivalents for a context of `W`
//! tokens. The compaction breaks even after `b = W·(r − 1) / S` requests. [`decide`]
//! compares `b` with how many requests the task is expected to make before it ends
//! (derived from the requests between past plan boundaries and the number of unfinished
//! steps, and bounded by how soon the context window fills up).
//!
//! Every value is computed in `f64` from integer token counts; non-finite or negative
//! inputs are sanitized first, so no input produces NaN or a panic.
//!
//! ```
//! use sol_occ::economics::{decide, DecisionReason, EconomicsInput, EconomicsParams};
//!
//! let input = EconomicsInput {
//!     write_tokens: 80_000,
//!     archive_tokens: 60_000,
//!     memo_tokens: 1_000,
//!     context_tokens: 80_000,
//!     completed_boundary_request_counts: Some(vec![4, 6, 5]),
//!     remaining_boundaries: 4,
//!     average_context_token_increment: Some(2_000.0),
//!     context_window_tokens: Some(200_000),
//!     prior_compaction_count: 0,
//!     carried_debt_tokens: 0.0,
//!     cache_debt_repayment_tokens: 0.0,
//!     cache_write_read_ratio: Some(12.5),
//!     requests_since_last_compaction: None,
//! };
//! let decision = decide(&input, &EconomicsParams::default());
//! assert_eq!(decision.reason, DecisionReason::Economic);
//! assert!(decision.compact);
//! assert_eq!(decision.expected_remaining_requests, Some(21.0));
//! ```

use std::fmt;

use serde::{Serialize, Serializer};

/// Estimated size of the summary a native compaction writes, in tokens.
pub const MEMO_TOKENS: u64 = 1000;
/// Requests per boundary are scaled by this to get the expected remaining requests.
pub const REMAINING_REQUEST_SCALE: f64 = 1.0;
/// How many standard deviations below the mean the request horizon is taken.
pub const STD_DEV_MULTIPLIER: f64 = 0.0;
/// Window protection compacts once the context is within this many tokens of the window
/// (Pi's default reserve; the host passes Pi's effective reserve).
pub const WINDOW_RESERVE_TOKENS: u64 = 16_384;
/// The first compaction may look this many times further ahead.
pub const FIRST_COMPACTION_HORIZON_SCALE: f64 = 2.0;
/// Later compactions need the break-even point this many times inside the horizon.
pub const SUBSEQUENT_COMPACTION_MARGIN: f64 = 1.5;
/// Economic compaction waits this many provider requests after a compaction.
pub const COOLDOWN_REQUESTS: u64 = 2;
/// Fewer boundary samples than this use the small-sample scale instead of the deviation.
pub const MIN_VARIANCE_SAMPLES: usize = 3;
/// Scale of the mean with too few samples (only when the deviation multiplier is not 0).
pub const SMALL_SAMPLE_SCALE: f64 = 0.5;

/// The tunable constants of the decision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EconomicsParams {
    /// `s`: scale of the expected remaining requests.
    pub remaining_request_scale: f64,
    /// `k`: deviations below the mean; 0 uses the mean itself.
    pub std_dev_multiplier: f64,
    /// `R_w`: window protection reserve, in tokens.
    pub window_reserve_tokens: u64,
    /// `f`: horizon scale of the first compaction.
    pub first_compaction_horizon_scale: f64,
    /// `m`: break-even margin of later compactions.
    pub subsequent_compaction_margin: f64,
    /// `q_min`: requests to wait after a compaction before compacting economically again.
    pub min_requests_since_compaction: u64,
    /// Samples needed before the deviation is used.
    pub min_variance_samples: usize,
    /// Mean scale with fewer samples.
    pub small_sample_scale: f64,
}

impl Default for EconomicsParams {
    fn default() -> Self {
        EconomicsParams {
            remaining_request_scale: REMAINING_REQUEST_SCALE,
            std_dev_multiplier: STD_DEV_MULTIPLIER,
            window_reserve_tokens: WINDOW_RESERVE_TOKENS,
            first_compaction_horizon_scale: FIRST_COMPACTION_HORIZON_SCALE,
            subsequent_compaction_margin: SUBSEQUENT_COMPACTION_MARGIN,
            min_requests_since_compaction: COOLDOWN_REQUESTS,
            min_variance_samples: MIN_VARIANCE_SAMPLES,
            small_sample_scale: SMALL_SAMPLE_SCALE,
        }
    }
}

impl EconomicsParams {
    /// The defaults with Pi's effective reserve.
    pub fn with_reserve(reserve_tokens: u64) -> EconomicsParams {
        EconomicsParams {
            window_reserve_tokens: reserve_tokens,
            ..EconomicsParams::default()
        }
    }
}

/// What the decision is computed from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EconomicsInput {
    /// `W`: tokens the next request writes to the cache after a compaction (the current
    /// context size).
    pub write_tokens: u64,
    /// `A`: tokens the compaction removes (see [`crate::estimate`]).
    pub archive_tokens: u64,
    /// `M`: tokens of the summary that replaces them.
    pub memo_tokens: u64,
    /// `C`: the current context size.
    pub context_tokens: u64,
    /// `c_1..c_n`: provider requests between consecutive plan boundaries; `None` when
    /// unknown (no horizon).
    pub completed_boundary_request_counts: Option<Vec<u64>>,
    /// `B`: plan steps not completed yet.
    pub remaining_boundaries: u64,
    /// `Δ`: average growth of the context per request that grew it.
    pub average_context_token_increment: Option<f64>,
    /// `W_c`: the model's context window.
    pub context_window_tokens: Option<u64>,
    /// `K`: native compactions so far in this session.
    pub prior_compaction_count: u64,
    /// `D`: cache debt of earlier compactions not yet repaid, in read-equivalent tokens.
    pub carried_debt_tokens: f64,
    /// `P`: tokens per request that earlier compactions still save (their repayment rate).
    pub cache_debt_repayment_tokens: f64,
    /// `r`: price of a cache write relative to a read; `None` when unknown.
    pub cache_write_read_ratio: Option<f64>,
    /// `q`: provider requests since the last compaction; `None` before the first.
    pub requests_since_last_compaction: Option<u64>,
}

/// Why a boundary compacts or not. The first matching reason, in declaration order, wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecisionReason {
    /// The summary would be at least as large as what it replaces.
    NonPositiveSaving,
    /// The context is within the reserve of the window: compact regardless of price.
    WindowProtection,
    /// Economic, but too soon after the last compaction.
    DeferredPostCompactionCooldown,
    /// The cache rewrite is repaid within the expected remaining requests.
    Economic,
    /// No request history to derive a horizon from.
    HorizonUnavailable,
    /// No cache price ratio, so no break-even point.
    CacheRatioUnavailable,
    /// A later compaction that breaks even, but not with the required margin.
    DeferredSubsequentMargin,
    /// A later compaction that would not also repay the debt of earlier ones in time.
    DeferredCarriedDebt,
    /// The break-even point lies beyond the horizon.
    DeferredEconomic,
    /// The economics said compact, but Pi would remove nothing (too little history before
    /// its cut point, or the branch already ends with a compaction).
    NativeNotCompactable,
}

impl DecisionReason {
    /// Every reason, in precedence order.
    pub const ALL: [DecisionReason; 10] = [
        DecisionReason::NonPositiveSaving,
        DecisionReason::WindowProtection,
        DecisionReason::DeferredPostCompactionCooldown,
        DecisionReason::Economic,
        DecisionReason::HorizonUnavailable,
        DecisionReason::CacheRatioUnavailable,
        DecisionReason::DeferredSubsequentMargin,
        DecisionReason::DeferredCarriedDebt,
        DecisionReason::DeferredEconomic,
        DecisionReason::NativeNotCompactable,
    ];

    /// The stable code written to logs and tool details.
    pub fn code(self) -> &'static str {
        match self {
            DecisionReason::NonPositiveSaving => "non_positive_saving",
            DecisionReason::WindowProtection => "window_protection",
            DecisionReason::DeferredPostCompactionCooldown => "deferred_post_compaction_cooldown",
            DecisionReason::Economic => "economic",
            DecisionReason::HorizonUnavailable => "horizon_unavailable",
            DecisionReason::CacheRatioUnavailable => "cache_ratio_unavailable",
            DecisionReason::DeferredSubsequentMargin => "deferred_subsequent_margin",
            DecisionReason::DeferredCarriedDebt => "deferred_carried_debt",
            DecisionReason::DeferredEconomic => "deferred_economic",
            DecisionReason::NativeNotCompactable => "native_not_compactable",
        }
    }

    /// Whether this reason compacts.
    pub fn compacts(self) -> bool {
        matches!(
            self,
            DecisionReason::WindowProtection | DecisionReason::Economic
        )
    }
}

impl fmt::Display for DecisionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for DecisionReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

/// The decision, echoing its inputs and every intermediate value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BoundaryDecision {
    /// `W`.
    pub write_tokens: u64,
    /// `A`.
    pub archive_tokens: u64,
    /// `M`.
    pub memo_tokens: u64,
    /// `C`.
    pub context_tokens: u64,
    /// `c_1..c_n`.
    pub completed_boundary_request_counts: Option<Vec<u64>>,
    /// `B`.
    pub remaining_boundaries: u64,
    /// `μ`: mean requests per boundary.
    pub requests_per_boundary_mean: Option<f64>,
    /// `L`: the lower bound used for the horizon.
    pub requests_per_boundary_lower_bound: Option<f64>,
    /// `H∞`: expected remaining requests ignoring the window.
    pub unbounded_expected_remaining_requests: Option<f64>,
    /// `Δ`.
    pub average_context_token_increment: Option<f64>,
    /// `U`: requests until the window is full at the average growth.
    pub window_request_upper_bound: Option<f64>,
    /// `H = min(H∞, U)`.
    pub expected_remaining_requests: Option<f64>,
    /// `S = A − M`.
    pub saving_tokens: f64,
    /// `b`: requests until this compaction breaks even.
    pub breakeven_requests: Option<f64>,
    /// `b_c`: requests until this and the carried debt are repaid.
    pub combined_breakeven_requests: Option<f64>,
    /// `H_eff`: the horizon actually compared (stretched for the first compaction).
    pub effective_horizon_requests: Option<f64>,
    /// `r` as used (a non-finite ratio counts as unknown).
    pub cache_write_read_ratio: Option<f64>,
    /// `ρ = max(0, r − 1)`.
    pub incremental_cache_cost_ratio: Option<f64>,
    /// `K`.
    pub prior_compaction_count: u64,
    /// `q`.
    pub requests_since_last_compaction: Option<u64>,
    /// `D` as used.
    pub carried_debt_tokens: f64,
    /// `P` as used.
    pub cache_debt_repayment_tokens: f64,
    /// Whether window protection applies (`C ≥ W_c − R_w`).
    pub window_protection: bool,
    /// Whether the economic gates are open (cooldown aside).
    pub economic: bool,
    /// Whether the cooldown holds an economic compaction back.
    pub cooldown: bool,
    /// The verdict.
    pub compact: bool,
    /// Why.
    pub reason: DecisionReason,
}

impl BoundaryDecision {
    /// Turns a compacting decision into [`DecisionReason::NativeNotCompactable`]: the host
    /// found that Pi would remove nothing.
    pub fn overrule_not_compactable(&mut self) {
        if self.compact {
            self.compact = false;
            self.reason = DecisionReason::NativeNotCompactable;
        }
    }

    /// The cache debt this compaction adds if it runs: `W·ρ` (0 without a ratio).
    pub fn debt_tokens(&self) -> f64 {
        let rho = self.incremental_cache_cost_ratio.unwrap_or(0.0);
        finite_or_max(self.write_tokens as f64 * rho)
    }

    /// What the compaction saves per later request: `max(0, A − M)`.
    pub fn repayment_tokens(&self) -> f64 {
        self.saving_tokens.max(0.0)
    }
}

fn finite_or_max(value: f64) -> f64 {
    if value.is_nan() {
        0.0
    } else {
        value.min(f64::MAX)
    }
}

/// A non-negative amount of tokens: NaN and negatives become 0, +∞ the largest finite value.
fn sanitize_amount(value: f64) -> f64 {
    if value.is_nan() || value <= 0.0 {
        0.0
    } else {
        value.min(f64::MAX)
    }
}

/// Decides whether to compact at a plan boundary; see the module documentation and
/// [`DecisionReason`] for the rules.
pub fn decide(input: &EconomicsInput, params: &EconomicsParams) -> BoundaryDecision {
    let write = input.write_tokens as f64;
    let context = input.context_tokens as f64;
    let ratio = input.cache_write_read_ratio.filter(|r| r.is_finite());
    let rho = ratio.map(|r| (r - 1.0).max(0.0));
    let debt = sanitize_amount(input.carried_debt_tokens);
    let repayment = sanitize_amount(input.cache_debt_repayment_tokens);
    let increment = input
        .average_context_token_increment
        .filter(|delta| !delta.is_nan());

    // The request horizon.
    let scale = sanitize_amount(params.remaining_request_scale);
    let k = sanitize_amount(params.std_dev_multiplier);
    let horizon = input
        .completed_boundary_request_counts
        .as_deref()
        .map(|counts| {
            let n = counts.len();
            let mean = counts.iter().map(|&c| c as f64).sum::<f64>() / n.max(1) as f64;
            let lower = if k == 0.0 {
                mean
            } else if n < params.min_variance_samples.max(2) {
                sanitize_amount(params.small_sample_scale) * mean
            } else {
                let variance = counts
                    .iter()
                    .map(|&c| (c as f64 - mean).powi(2))
                    .sum::<f64>()
                    / (n - 1) as f64;
                (mean - k * variance.sqrt()).max(0.0)
            };
            let unbounded = 1.0 + (lower * input.remaining_boundaries as f64 * scale).floor();
            (mean, lower, finite_or_max(unbounded))
        });
    let window_bound = match (input.context_window_tokens, increment) {
        (Some(window), Some(delta)) if delta > 0.0 => Some(finite_or_max(
            ((window as f64 - context) / delta).floor().max(0.0),
        )),
        _ => None,
    };
    let expected = horizon.map(|(_, _, unbounded)| match window_bound {
        Some(bound) => unbounded.min(bound),
        None => unbounded,
    });

    // Costs.
    // Subtract in integers: two large sizes one token apart must still count as a saving.
    let compressible = input.archive_tokens > input.memo_tokens;
    let saving = if compressible {
        (input.archive_tokens - input.memo_tokens) as f64
    } else {
        -((input.memo_tokens - input.archive_tokens) as f64)
    };
    let breakeven = match rho {
        Some(rho) if compressible => Some(finite_or_max(write * rho) / saving),
        _ => None,
    };
    let combined = match rho {
        Some(rho) if compressible => {
            Some((debt + finite_or_max(write * rho)).min(f64::MAX) / (repayment + saving))
        }
        _ => None,
    };
    let first = input.prior_compaction_count == 0;
    let effective = expected.map(|h| {
        if first {
            let stretched =
                finite_or_max(sanitize_amount(params.first_compaction_horizon_scale) * h);
            stretched.min(window_bound.unwrap_or(f64::INFINITY))
        } else {
            h
        }
    });

    // Gates.
    let window_protection = input.context_window_tokens.is_some_and(|window| {
        input.context_tokens >= window.saturating_sub(params.window_reserve_tokens)
    });
    let within = |value: Option<f64>, limit: Option<f64>| match (value, limit) {
        (Some(value), Some(limit)) => value <= limit,
        _ => false,
    };
    let base_economic = expected.is_some_and(|h| h > 0.0) && within(breakeven, expected);
    let first_economic =
        first && effective.is_some_and(|h| h > 0.0) && within(breakeven, effective);
    let margin = sanitize_amount(params.subsequent_compaction_margin);
    let margin_open = !first && within(breakeven.map(|b| finite_or_max(margin * b)), expected);
    let debt_open = !first && within(combined, expected);
    let economic = if first {
        first_economic
    } else {
        base_economic && margin_open && debt_open
    };
    let cooldown = input
        .requests_since_last_compaction
        .is_some_and(|q| q < params.min_requests_since_compaction);
    let compact = compressible && (window_protection || (economic && !cooldown));

    let reason = if !compressible {
        DecisionReason::NonPositiveSaving
    } else if window_protection {
        DecisionReason::WindowProtection
    } else if economic && cooldown {
        DecisionReason::DeferredPostCompactionCooldown
    } else if economic {
        DecisionReason::Economic
    } else if horizon.is_none() {
        DecisionReason::HorizonUnavailable
    } else if breakeven.is_none() {
        DecisionReason::CacheRatioUnavailable
    } else if !first && base_economic && !margin_open {
        DecisionReason::DeferredSubsequentMargin
    } else if !first && base_economic && !debt_open {
        DecisionReason::DeferredCarriedDebt
    } else {
        DecisionReason::DeferredEconomic
    };

    BoundaryDecision {
        write_tokens: input.write_tokens,
        archive_tokens: input.archive_tokens,
        memo_tokens: input.memo_tokens,
        context_tokens: input.context_tokens,
        completed_boundary_request_counts: input.completed_boundary_request_counts.clone(),
        remaining_boundaries: input.remaining_boundaries,
        requests_per_boundary_mean: horizon.map(|(mean, _, _)| mean),
        requests_per_boundary_lower_bound: horizon.map(|(_, lower, _)| lower),
        unbounded_expected_remaining_requests: horizon.map(|(_, _, unbounded)| unbounded),
        average_context_token_increment: increment,
        window_request_upper_bound: window_bound,
        expected_remaining_requests: expected,
        saving_tokens: saving,
        breakeven_requests: breakeven,
        combined_breakeven_requests: combined,
        effective_horizon_requests: effective,
        cache_write_read_ratio: ratio,
        incremental_cache_cost_ratio: rho,
        prior_compaction_count: input.prior_compaction_count,
        requests_since_last_compaction: input.requests_since_last_compaction,
        carried_debt_tokens: debt,
        cache_debt_repayment_tokens: repayment,
        window_protection,
        economic,
        cooldown,
        compact,
        reason,
    }
}

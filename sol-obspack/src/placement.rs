//! Cache-aware placement: when a large result is replaced by its placeholder, priced as a
//! prompt cache bills it.
//!
//! The fixed rule ([`decide`](crate::policy::decide)) replaces a result on its third
//! request. A provider's prompt cache bills a request's prefix shared with the previous
//! request as a cache read and everything from the first changed message on as a cache
//! write, so that replacement rewrites every token after the result; results replaced one
//! request after another rewrite the same suffix again and again. This module decides
//! instead, on each request, whether replacing the waiting results pays:
//!
//! - a result goes in full for its first [`FULL_SENDS`] requests,
//!   exactly as under the fixed rule ([`PlacementReason::FullSend`]);
//! - once shown, a placeholder is sent on every later request of the branch, byte for byte
//!   ([`PlacementReason::Shown`]);
//! - when the request shares no prefix with the previous one anyway (the first after a
//!   compaction, a resume or a branch switch), every waiting result is replaced at no
//!   rewrite cost ([`PlacementReason::RidesRewrite`]): pending replacements ride along with
//!   Online Context Compact's or Pi's compaction;
//! - otherwise the waiting results are replaced together, from the one whose batch has the
//!   best net saving, when that net is positive ([`PlacementReason::Economic`]); the others
//!   wait ([`PlacementReason::Deferred`]).
//!
//! In units of one cache-read token, with `r` the cache write/read price ratio, `R` the
//! expected remaining requests ([`sol_core::horizon`]), `X` the tokens the batch removes and
//! `L` the tokens the previous request cached from the batch's first result to its end:
//!
//! ```text
//! saving = (R + r) · X        this request writes X fewer tokens, each later one reads X fewer
//! rewrite = c · max(0, r − 1) · L · (1 − m)  those L tokens are written again instead of
//!                                      read, unless the provider misses the cache anyway
//!                                      (chance m); c ≥ 1 is the placement's caution
//! net = saving − rewrite
//! ```
//!
//! The same function runs the **recent-outputs placement** (`keepRecentOutputs`), built
//! for real sessions, where most outputs are small and the provider loses the cache at
//! many new prompts: a result (from [`MEDIUM_THRESHOLD_BYTES`](crate::MEDIUM_THRESHOLD_BYTES)
//! up) stays in full while it is one of the newest tool outputs ([`Pending::recent`],
//! [`PlacementReason::Recent`]) rather than for two requests only, and at a request that
//! starts with a new prompt the rewrite is weighed at the chance the provider keeps its
//! cache, learned from its reports ([`CacheMisses`], [`Shape::miss_chance`]). A prompt
//! sent after the cache lifetime makes the request `rewritten`: everything waiting rides
//! along.
//!
//! A later start makes a smaller batch with a shorter rewrite; among equal nets the smaller
//! batch wins. The net of each candidate batch falls as `r` rises, faster for a larger batch,
//! so a higher ratio never replaces more; a replaced batch's net is always positive.
//!
//! ```
//! use sol_obspack::placement::{place, Pending, PlacementReason, Shape};
//!
//! // Two waiting results of 6,000 tokens (each placeholder removes 5,800), with 9,000
//! // tokens after the second one; 1,000 of them are new in this request.
//! let waiting = [
//!     Pending::waiting(6_000, 5_800, 15_000),
//!     Pending::waiting(6_000, 5_800, 9_000),
//! ];
//! let early = Shape { new_tokens: 1_000, carried_requests: 3, ..Shape::default() };
//! let placed = place(&waiting, early, 12.5);
//! assert_eq!(placed.reasons, [PlacementReason::Deferred, PlacementReason::Deferred]);
//!
//! // Twenty requests later the same rewrite pays for itself.
//! let later = Shape { carried_requests: 20, ..early };
//! let placed = place(&waiting, later, 12.5);
//! assert_eq!(placed.reasons, [PlacementReason::Economic, PlacementReason::Economic]);
//! assert!(placed.economics.expect("a batch").net > 0.0);
//! ```

use serde::Serialize;
use sol_core::horizon::expected_remaining_requests;
use sol_core::savings::rewritten_tokens;

use crate::policy::FULL_SENDS;

/// Why a packed result goes as it does on a request under the cache-aware placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementReason {
    /// One of its first two requests: sent in full, as the requirement's rule says.
    FullSend,
    /// Its placeholder was already shown on this branch: sent again, unchanged.
    Shown,
    /// Replaced now at no rewrite cost: the request shares no prefix with the previous one.
    RidesRewrite,
    /// Replaced now with the batch whose saving over the expected remaining requests beats
    /// the rewrite it causes.
    Economic,
    /// Still sent in full: no batch it belongs to would save more than it rewrites yet.
    Deferred,
    /// Sent in full as one of the newest tool outputs the recent-outputs placement keeps
    /// (`keepRecentOutputs`).
    Recent,
}

impl PlacementReason {
    /// The stable code written to the ledger.
    pub fn code(self) -> &'static str {
        match self {
            PlacementReason::FullSend => "full_send",
            PlacementReason::Shown => "shown",
            PlacementReason::RidesRewrite => "rides_rewrite",
            PlacementReason::Economic => "economic",
            PlacementReason::Deferred => "deferred_economic",
            PlacementReason::Recent => "recent",
        }
    }

    /// What the code means, for people.
    pub fn description(self) -> &'static str {
        match self {
            PlacementReason::FullSend => "one of its first two requests: sent in full",
            PlacementReason::Shown => "its placeholder was already shown: sent again unchanged",
            PlacementReason::RidesRewrite => {
                "replaced at no rewrite cost: the request shares no cached prefix with the previous one"
            }
            PlacementReason::Economic => {
                "replaced with a batch whose saving over the expected remaining requests beats the cache rewrite"
            }
            PlacementReason::Deferred => {
                "kept in full: replacing it now would rewrite more of the cached prefix than it saves"
            }
            PlacementReason::Recent => "kept in full: one of the newest tool outputs",
        }
    }

    /// Whether the result goes as its placeholder.
    pub fn replaces(self) -> bool {
        matches!(
            self,
            PlacementReason::Shown | PlacementReason::RidesRewrite | PlacementReason::Economic
        )
    }
}

/// One packed result of a request, in the request's order, as the placement sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    /// Requests that already carried it on this branch.
    pub prior_requests: u32,
    /// Whether its placeholder was already shown on this branch.
    pub shown: bool,
    /// Whether it is one of the newest tool outputs, which the recent-outputs placement
    /// keeps in full ([`PlacementReason::Recent`]); always false under the cache-aware one.
    pub recent: bool,
    /// Its tokens in full.
    pub full_tokens: u64,
    /// The tokens its placeholder removes.
    pub removed_tokens: u64,
    /// The tokens of every message after it in the request, in their original forms (a
    /// shown placeholder counted at its original's size: the placement takes its
    /// removal off).
    pub tokens_after: u64,
}

impl Pending {
    /// A result past its full sends whose placeholder was never shown.
    pub const fn waiting(full_tokens: u64, removed_tokens: u64, tokens_after: u64) -> Pending {
        Pending {
            prior_requests: FULL_SENDS,
            shown: false,
            recent: false,
            full_tokens,
            removed_tokens,
            tokens_after,
        }
    }
}

/// What the placement knows of the request beyond its packed results.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shape {
    /// Tokens at the end of the request the previous one did not carry (the newest turn's
    /// messages): written to the cache whatever is placed.
    pub new_tokens: u64,
    /// The request shares no prefix with the previous one (the first after a compaction, a
    /// resume or a branch switch): every replacement rides along for free.
    pub rewritten: bool,
    /// The assistant messages the request carries: the horizon's input.
    pub carried_requests: u32,
    /// The chance, from 0 to 1, that the provider will not read this request's cached
    /// prefix anyway (it is expected to rewrite it whatever is placed): the rewrite a batch
    /// causes is weighed at `1 − miss_chance` of its cost. 0 (the cache-aware placement's)
    /// trusts the cache; [`CacheMisses::miss_chance`] learns it from the provider's reports.
    /// A value outside 0 to 1 counts as the nearest end (not a number as 0).
    pub miss_chance: f64,
    /// How many times its rewrite a batch must save (at least 1; anything else counts as
    /// 1): the recent-outputs placement asks [`RECENT_CAUTION`], since a forecast of the
    /// remaining requests that runs long would turn its rewrites into a loss.
    pub caution: f64,
}

/// The recent-outputs placement's [`Shape::caution`]: on the real corpora a lower one lost
/// money on a few short runs, whose remaining requests the horizon overestimated (one
/// mini-swe-agent run ended 15 requests after a batch the forecast gave 129 more).
pub const RECENT_CAUTION: f64 = 5.0;

/// How often the provider missed its cache, learned from the usage it reported: per kind of
/// request (one that starts with a new user prompt, and one that continues a turn), how
/// many were compared with the request before and how many of those read less of the
/// cache than that request had sent. Real providers lose the cache often, most of all
/// while a person reads and types; where they do, a replacement costs no rewrite.
///
/// ```
/// use sol_obspack::placement::CacheMisses;
///
/// let mut seen = CacheMisses::default();
/// assert_eq!(seen.miss_chance(true), 0.5);
/// seen.observe(true, true);
/// seen.observe(true, true);
/// seen.observe(true, false);
/// assert_eq!(seen.miss_chance(true), 0.6);
/// assert_eq!(seen.miss_chance(false), 0.5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheMisses {
    /// Prompt-start requests compared.
    pub prompts: u32,
    /// Those that missed.
    pub prompt_misses: u32,
    /// Other requests compared.
    pub turns: u32,
    /// Those that missed.
    pub turn_misses: u32,
}

impl CacheMisses {
    /// One more reported request (`prompt`: it started with a new user prompt); `missed`
    /// when the provider read less of its cache than the previous request had sent.
    pub fn observe(&mut self, prompt: bool, missed: bool) {
        let (seen, misses) = match prompt {
            true => (&mut self.prompts, &mut self.prompt_misses),
            false => (&mut self.turns, &mut self.turn_misses),
        };
        *seen = seen.saturating_add(1);
        *misses = misses.saturating_add(u32::from(missed)).min(*seen);
    }

    /// Whether a request missed the cache where it matters to a replacement: it read less
    /// than a quarter of the `previous_input` tokens the request before it sent (a miss
    /// frees a replacement only where the provider lost the older part of the context,
    /// where the replaced results sit).
    ///
    /// ```
    /// use sol_obspack::placement::CacheMisses;
    ///
    /// assert!(CacheMisses::missed(10_000, 0));
    /// assert!(CacheMisses::missed(10_000, 2_000));
    /// assert!(!CacheMisses::missed(10_000, 3_000));
    /// assert!(!CacheMisses::missed(10_000, 10_000));
    /// ```
    pub fn missed(previous_input: u64, cache_read: u64) -> bool {
        rewritten_tokens(previous_input, cache_read)
            .is_some_and(|rewritten| rewritten.saturating_mul(4) > previous_input.saturating_mul(3))
    }

    /// The expected chance that the next request of the kind misses the cache: the share
    /// seen so far, with one miss and one hit assumed beforehand (0.5 before any report,
    /// never 0 or 1 on few observations).
    pub fn miss_chance(&self, prompt: bool) -> f64 {
        let (seen, misses) = match prompt {
            true => (self.prompts, self.prompt_misses),
            false => (self.turns, self.turn_misses),
        };
        (f64::from(misses) + 1.0) / (f64::from(seen) + 2.0)
    }
}

/// The figures of the batch a request replaced, in cache-read tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Economics {
    /// The index of the batch's first result.
    pub first: usize,
    /// The cache write/read price ratio.
    pub write_read_ratio: f64,
    /// The expected remaining requests.
    pub horizon_requests: u32,
    /// The tokens the batch removes from this and every later request.
    pub removed_tokens: u64,
    /// The cached tokens the batch makes the provider write again.
    pub rewritten_tokens: u64,
    /// `(horizon + ratio) × removed`.
    pub saving: f64,
    /// `max(0, ratio − 1) × rewritten`.
    pub rewrite_cost: f64,
    /// `saving − rewrite_cost`; always positive for a batch that was replaced.
    pub net: f64,
}

/// The placement of one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// Parallel to the input: why each result goes as it does.
    pub reasons: Vec<PlacementReason>,
    /// The economic batch replaced on this request, if one was.
    pub economics: Option<Economics>,
}

impl Placement {
    /// Parallel to the input: whether each result goes as its placeholder.
    pub fn replace(&self) -> impl Iterator<Item = bool> + '_ {
        self.reasons.iter().map(|reason| reason.replaces())
    }
}

/// Places the packed results `items` (in the request's order) of a request of `shape`, at a
/// cache write/read price ratio of `write_read_ratio` (`cacheWriteReadRatio`; a ratio that is
/// not a finite non-negative number counts as 0).
pub fn place(items: &[Pending], shape: Shape, write_read_ratio: f64) -> Placement {
    let ratio = if write_read_ratio.is_finite() && write_read_ratio >= 0.0 {
        write_read_ratio
    } else {
        0.0
    };
    let mut reasons: Vec<PlacementReason> = items
        .iter()
        .map(|item| {
            if item.prior_requests < FULL_SENDS {
                PlacementReason::FullSend
            } else if item.recent && !item.shown {
                PlacementReason::Recent
            } else if item.shown {
                PlacementReason::Shown
            } else if shape.rewritten {
                PlacementReason::RidesRewrite
            } else {
                PlacementReason::Deferred
            }
        })
        .collect();
    let horizon = expected_remaining_requests(shape.carried_requests);
    let caution = if shape.caution.is_finite() {
        shape.caution.max(1.0)
    } else {
        1.0
    };
    let kept_cache = if shape.miss_chance.is_nan() {
        1.0
    } else {
        1.0 - shape.miss_chance.clamp(0.0, 1.0)
    };
    // Each candidate start: the removals of the waiting results from it on, and the tokens
    // the previous request cached from it to its end (shown placeholders at their size).
    let mut best: Option<Economics> = None;
    for (first, item) in items.iter().enumerate() {
        if reasons[first] != PlacementReason::Deferred {
            continue;
        }
        let mut removed = 0u64;
        let mut shown_after = 0u64;
        for (index, later) in items.iter().enumerate().skip(first) {
            if reasons[index] == PlacementReason::Deferred {
                removed = removed.saturating_add(later.removed_tokens);
            } else if index > first && reasons[index] == PlacementReason::Shown {
                shown_after = shown_after.saturating_add(later.removed_tokens);
            }
        }
        let rewritten = item
            .full_tokens
            .saturating_add(item.tokens_after)
            .saturating_sub(shown_after)
            .saturating_sub(shape.new_tokens);
        let saving = (f64::from(horizon) + ratio) * removed as f64;
        let rewrite_cost = (ratio - 1.0).max(0.0) * rewritten as f64 * kept_cache * caution;
        let candidate = Economics {
            first,
            write_read_ratio: ratio,
            horizon_requests: horizon,
            removed_tokens: removed,
            rewritten_tokens: rewritten,
            saving,
            rewrite_cost,
            net: saving - rewrite_cost,
        };
        // A later start is a smaller batch: it wins a tie.
        if candidate.net > 0.0 && best.is_none_or(|best| candidate.net >= best.net) {
            best = Some(candidate);
        }
    }
    if let Some(batch) = best {
        for reason in &mut reasons[batch.first..] {
            if *reason == PlacementReason::Deferred {
                *reason = PlacementReason::Economic;
            }
        }
    }
    Placement {
        reasons,
        economics: best,
    }
}

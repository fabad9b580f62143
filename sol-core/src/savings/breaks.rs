//! The cache breaks a provider billed: requests that did not read from the cache what the
//! request before them had written there, and the visible cause of each.
//!
//! A provider's prompt cache holds what the previous request sent. A request that extends it
//! reads all of it; one that reads less (its reported cache read is short of the previous
//! request's reported input) made the provider write the rest again: a break, full when it
//! read nothing. Only reported usage shows a break; a request without a report, and the
//! first one, are not judged.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Why the cache broke, as far as the session shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BreakCause {
    /// Another model or provider answered than the one before.
    ModelSwitch,
    /// A compaction replaced the history with its summary (before the system prompt: a
    /// session that does not record its system prompt starts with the summary then).
    Compaction,
    /// The system prompt changed.
    SystemPrompt,
    /// SoL-Pi put a placeholder or receipt into a message the previous request had sent.
    Placement,
    /// A new user prompt after the cache lifetime had passed.
    Lifetime,
    /// A new user prompt within the cache lifetime (some providers and clients start the
    /// cache anew at each prompt).
    NewPrompt,
    /// Nothing the session shows.
    Unknown,
}

impl BreakCause {
    /// How the cause is named in the table.
    pub fn label(self) -> &'static str {
        match self {
            BreakCause::ModelSwitch => "a model or provider switch",
            BreakCause::SystemPrompt => "a changed system prompt",
            BreakCause::Compaction => "a compaction",
            BreakCause::Placement => "a SoL-Pi placement",
            BreakCause::Lifetime => "a new prompt after the cache lifetime",
            BreakCause::NewPrompt => "a new prompt within the cache lifetime",
            BreakCause::Unknown => "unknown",
        }
    }
}

/// What one request shows that can explain a break.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BreakFacts {
    /// Another model answered than the previous request's.
    pub model_changed: bool,
    /// Its system prompt differs from the previous request's.
    pub system_changed: bool,
    /// It is the first request after a compaction.
    pub compaction: bool,
    /// SoL-Pi changed a message the previous request had sent.
    pub placement: bool,
    /// It starts with a new user prompt sent after the cache lifetime.
    pub after_lifetime: bool,
    /// It starts with a new user prompt.
    pub new_prompt: bool,
}

/// The cause of a break with these facts: the first that holds in the order of
/// [`BreakCause`], else unknown.
pub fn break_cause(facts: &BreakFacts) -> BreakCause {
    [
        (facts.model_changed, BreakCause::ModelSwitch),
        (facts.compaction, BreakCause::Compaction),
        (facts.system_changed, BreakCause::SystemPrompt),
        (facts.placement, BreakCause::Placement),
        (facts.after_lifetime, BreakCause::Lifetime),
        (facts.new_prompt, BreakCause::NewPrompt),
    ]
    .into_iter()
    .find_map(|(holds, cause)| holds.then_some(cause))
    .unwrap_or(BreakCause::Unknown)
}

/// The tokens a request wrote again that the previous request (of `previous_input` reported
/// input tokens) had cached, when it read only `cache_read` of them: `None` when it read all
/// but a twentieth (at least 64 tokens, a provider's cache granularity), which is no break.
///
/// ```
/// use sol_core::savings::rewritten_tokens;
///
/// assert_eq!(rewritten_tokens(10_000, 10_000), None);
/// assert_eq!(rewritten_tokens(10_000, 9_700), None);
/// assert_eq!(rewritten_tokens(10_000, 2_000), Some(8_000));
/// assert_eq!(rewritten_tokens(10_000, 0), Some(10_000));
/// ```
pub fn rewritten_tokens(previous_input: u64, cache_read: u64) -> Option<u64> {
    let slack = (previous_input / 20).max(64);
    (cache_read.saturating_add(slack) < previous_input).then(|| previous_input - cache_read)
}

/// A provider's prompt cache lifetime when a request does not ask for longer (Anthropic's
/// default, five minutes), in milliseconds.
pub const CACHE_LIFETIME_MS: f64 = 5.0 * 60.0 * 1000.0;

/// The lifetime a request asking for long retention gets where the model names none
/// (Anthropic's extended cache, one hour), in milliseconds.
pub const LONG_CACHE_LIFETIME_MS: f64 = 60.0 * 60.0 * 1000.0;

/// The prompt cache lifetime of a request, in milliseconds: `retention` is what the request
/// asked for (Pi's `PI_CACHE_RETENTION`: `long`, `short`, `none`; anything else is the short
/// one) and `model_seconds` the model's own lifetimes in Pi's model registry
/// (`promptCache.short` and `promptCache.long`, seconds), where it names them. A model's
/// lifetime that is not a positive number is left for the default.
///
/// ```
/// use sol_core::savings::{CACHE_LIFETIME_MS, LONG_CACHE_LIFETIME_MS, cache_lifetime_ms};
/// assert_eq!(cache_lifetime_ms(None, (None, None)), CACHE_LIFETIME_MS);
/// assert_eq!(cache_lifetime_ms(Some("long"), (None, None)), LONG_CACHE_LIFETIME_MS);
/// assert_eq!(cache_lifetime_ms(Some("long"), (Some(300.0), Some(86_400.0))), 86_400_000.0);
/// assert_eq!(cache_lifetime_ms(Some("short"), (Some(f64::NAN), None)), CACHE_LIFETIME_MS);
/// // No cache: every request rewrites, as if each came after the lifetime.
/// assert_eq!(cache_lifetime_ms(Some("none"), (None, None)), 0.0);
/// ```
pub fn cache_lifetime_ms(
    retention: Option<&str>,
    model_seconds: (Option<f64>, Option<f64>),
) -> f64 {
    let given = |seconds: Option<f64>| {
        seconds
            .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
            .map(|seconds| seconds * 1000.0)
    };
    match retention {
        Some("none") => 0.0,
        Some("long") => given(model_seconds.1).unwrap_or(LONG_CACHE_LIFETIME_MS),
        _ => given(model_seconds.0).unwrap_or(CACHE_LIFETIME_MS),
    }
}

/// Whether a request whose messages carry these timestamps (milliseconds, NaN where a message
/// has none) ends with a new user prompt (`ends_with_prompt`) sent more than `lifetime_ms`
/// after the newest message before it (the previous response): the cache had expired.
///
/// ```
/// use sol_core::savings::prompt_after_lifetime;
///
/// let minute = 60_000.0;
/// assert!(prompt_after_lifetime(&[0.0, minute, 7.0 * minute], true, 5.0 * minute));
/// assert!(!prompt_after_lifetime(&[0.0, minute, 3.0 * minute], true, 5.0 * minute));
/// assert!(!prompt_after_lifetime(&[0.0, minute, 7.0 * minute], false, 5.0 * minute));
/// assert!(!prompt_after_lifetime(&[f64::NAN, 7.0 * minute], true, 5.0 * minute));
/// ```
pub fn prompt_after_lifetime(stamps: &[f64], ends_with_prompt: bool, lifetime_ms: f64) -> bool {
    let Some((&sent, before)) = stamps.split_last() else {
        return false;
    };
    let newest = before
        .iter()
        .copied()
        .filter(|stamp| !stamp.is_nan())
        .fold(f64::NAN, f64::max);
    ends_with_prompt && sent - newest > lifetime_ms
}

/// The breaks of one cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CauseTotals {
    /// Breaks.
    pub breaks: u64,
    /// Tokens written again.
    pub tokens: u64,
}

/// A session's cache breaks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CacheBreaks {
    /// Breaks.
    pub breaks: u64,
    /// Of them, those that read nothing.
    pub full: u64,
    /// Tokens written again.
    pub tokens: u64,
    /// Per cause.
    pub causes: BTreeMap<BreakCause, CauseTotals>,
}

impl CacheBreaks {
    /// Whether there was none.
    pub fn is_empty(&self) -> bool {
        self.breaks == 0
    }

    /// Adds one break of `tokens` rewritten, `full` when nothing was read.
    pub fn record(&mut self, cause: BreakCause, tokens: u64, full: bool) {
        self.breaks = self.breaks.saturating_add(1);
        self.full = self.full.saturating_add(u64::from(full));
        self.tokens = self.tokens.saturating_add(tokens);
        let totals = self.causes.entry(cause).or_default();
        totals.breaks = totals.breaks.saturating_add(1);
        totals.tokens = totals.tokens.saturating_add(tokens);
    }

    pub(crate) fn add(&mut self, other: &CacheBreaks) {
        self.breaks = self.breaks.saturating_add(other.breaks);
        self.full = self.full.saturating_add(other.full);
        self.tokens = self.tokens.saturating_add(other.tokens);
        for (cause, totals) in &other.causes {
            let mine = self.causes.entry(*cause).or_default();
            mine.breaks = mine.breaks.saturating_add(totals.breaks);
            mine.tokens = mine.tokens.saturating_add(totals.tokens);
        }
    }
}

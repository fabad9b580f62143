//! The recent-outputs placement's own state (`keepRecentOutputs`): which packed results a
//! reply quoted, and how often the provider missed its cache.
//!
//! Real sessions differ from scripted ones in three ways this placement answers (measured
//! on real recordings, see `bench/RESULTS.md`): most outputs are small, so it packs smaller
//! ones too (any its compact placeholder halves, [`compact_pays`](crate::compact_pays)); the
//! model keeps using what it read recently, so a medium output
//! stays in full while it is one of the newest `keep` tool outputs, and one a reply quoted
//! while it is one of the newest [`QUOTED_KEEP_FACTOR`] × `keep` ([`keeps_recent`]); and the
//! provider loses its cache at many new prompts, so the rewrite a replacement causes there
//! is weighed at the chance the cache survives, learned from the provider's reports
//! ([`CacheMisses`]).
//!
//! The host tells the pack what it cannot see: each reply's quotable lines and reported
//! usage ([`Pack::on_reply`](crate::Pack::on_reply)), and for each request whether it starts
//! with a new prompt and whether that prompt came after the cache lifetime
//! ([`PromptFacts`]). Nothing here reads a clock: the lifetime is decided from the
//! messages' own timestamps.
//!
//! ```
//! use sol_obspack::recent::keeps_recent;
//!
//! // A 4 KB output stays in full while fewer than 10 outputs follow it...
//! assert!(keeps_recent(4_000, 9, false, 10));
//! assert!(!keeps_recent(4_000, 10, false, 10));
//! // ...longer once a reply quoted it...
//! assert!(keeps_recent(4_000, 29, true, 10));
//! // ...and a large one only when quoted.
//! assert!(!keeps_recent(40_000, 0, false, 10));
//! assert!(keeps_recent(40_000, 3, true, 10));
//! ```

use std::collections::BTreeMap;

use crate::placement::CacheMisses;
use crate::policy::THRESHOLD_BYTES;
use crate::quote::ContentDigest;

/// A result a reply already quoted stays in full while it is one of this many times
/// `keepRecentOutputs` newest tool outputs: a model that quoted it once tends to again.
pub const QUOTED_KEEP_FACTOR: u32 = 3;

/// Whether the recent-outputs placement keeps a packed result of `text_bytes` in full with
/// `newer_outputs` tool outputs after it, `quoted` when a reply quoted a line of it and
/// `keep` the configured `keepRecentOutputs`: a medium result (up to
/// [`THRESHOLD_BYTES`]) while fewer than `keep` outputs follow it, and a quoted one of any
/// size while fewer than [`QUOTED_KEEP_FACTOR`] × `keep` do. A large result nobody quoted
/// is replaced from its third request on, as the fixed rule replaces it, when that pays.
pub fn keeps_recent(text_bytes: u64, newer_outputs: u32, quoted: bool, keep: u32) -> bool {
    (text_bytes <= THRESHOLD_BYTES && newer_outputs < keep)
        || (quoted && newer_outputs < keep.saturating_mul(QUOTED_KEEP_FACTOR))
}

/// What the provider reported reading for a reply's request, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReportedInput {
    /// All its input: uncached, read from the cache and written to it.
    pub all_input: u64,
    /// The part read from the cache.
    pub cache_read: u64,
}

/// What the host knows of a request's start, from its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PromptFacts {
    /// A user message follows the newest assistant message: the request starts a prompt.
    pub starts_prompt: bool,
    /// That prompt was sent longer than the provider's cache lifetime after the newest
    /// message before it: the cache has expired and every waiting replacement rides along.
    pub expired: bool,
}

/// The recent-outputs placement's memory across requests, kept by the [`Pack`](crate::Pack).
#[derive(Debug, Clone, Default)]
pub(crate) struct RecentOutputs {
    /// `keepRecentOutputs`.
    pub(crate) keep: u32,
    /// Each quotable line of an admitted result, with the results (by index) that hold it.
    lines: BTreeMap<ContentDigest, Vec<usize>>,
    /// Per admitted result: a reply quoted it.
    pub(crate) quoted: Vec<bool>,
    /// How often the provider missed its cache.
    pub(crate) misses: CacheMisses,
    /// The input the provider reported for the previous reply's request.
    last_input: Option<u64>,
    /// The newest request started a prompt.
    pub(crate) last_starts_prompt: bool,
    /// The identity of the newest reply taken ([`Pack::on_newest_reply`](crate::Pack::on_newest_reply)).
    pub(crate) last_reply: Option<ContentDigest>,
}

impl RecentOutputs {
    pub(crate) fn new(keep: u32) -> RecentOutputs {
        RecentOutputs {
            keep,
            ..RecentOutputs::default()
        }
    }

    /// A result was admitted at `index` with these quotable lines.
    pub(crate) fn admitted(&mut self, index: usize, lines: &[ContentDigest]) {
        for line in lines {
            let holders = self.lines.entry(*line).or_default();
            if holders.last() != Some(&index) {
                holders.push(index);
            }
        }
        if self.quoted.len() <= index {
            self.quoted.resize(index + 1, false);
        }
    }

    /// A reply quoted `quotes`; the provider reported `reported` for its request.
    pub(crate) fn replied(&mut self, quotes: &[ContentDigest], reported: Option<ReportedInput>) {
        for quote in quotes {
            for &index in self.lines.get(quote).map(Vec::as_slice).unwrap_or_default() {
                self.quoted[index] = true;
            }
        }
        if let Some(report) = reported {
            if let Some(previous) = self.last_input {
                let missed = CacheMisses::missed(previous, report.cache_read);
                self.misses.observe(self.last_starts_prompt, missed);
            }
            self.last_input = Some(report.all_input);
        }
    }

    /// The chance the provider misses the cache of a request that starts as `prompt` says:
    /// learned at prompts once a report came, 0 elsewhere (a turn's requests follow each
    /// other within seconds).
    pub(crate) fn miss_chance(&self, prompt: PromptFacts) -> f64 {
        match prompt.starts_prompt && self.last_input.is_some() {
            true => self.misses.miss_chance(true),
            false => 0.0,
        }
    }
}

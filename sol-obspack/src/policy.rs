//! The numbers ObservationPack runs on, and the send decision built from them.
//!
//! A large tool result is part of every provider request from the one right after the tool
//! ran. Its first [`FULL_SENDS`] requests carry it in full; every later request carries the
//! placeholder instead. The host does not store send counts: for each message it counts the
//! assistant messages after it in the current branch (`prior_requests`, the requests that
//! already carried it) and asks [`decide`]. Counts therefore follow the session tree by
//! construction: a branch sees only its own history.
//!
//! ```
//! use sol_obspack::policy::{decide, SendDecision};
//!
//! assert_eq!(decide(0), SendDecision::Full { send_number: 1 });
//! assert_eq!(decide(1), SendDecision::Full { send_number: 2 });
//! assert_eq!(decide(2), SendDecision::Replace { first_replacement: true });
//! assert_eq!(decide(7), SendDecision::Replace { first_replacement: false });
//! ```

/// A result participates only when its UTF-8 size is strictly greater than this.
pub const THRESHOLD_BYTES: u64 = 10 * 1024;

/// The smallest result (in UTF-8 bytes, exclusive) the recent-outputs placement
/// (`keepRecentOutputs`) considers; it packs only those its compact placeholder halves
/// ([`compact_pays`](crate::compact_pays)), which no result this small is.
pub const MEDIUM_THRESHOLD_BYTES: u64 = 256;

/// How many of the newest tool outputs the recent-outputs placement keeps in full when
/// `keepRecentOutputs` is `true` (the configuration's number).
pub const DEFAULT_KEEP_RECENT_OUTPUTS: u32 = sol_core::config::DEFAULT_KEEP_RECENT_OUTPUTS;

/// How many provider requests carry a large result in full before it is replaced.
pub const FULL_SENDS: u32 = 2;

/// Budget of the placeholder's head excerpt, in bytes.
pub const EXCERPT_HEAD_BYTES: usize = 512;

/// Budget of the placeholder's tail excerpt, in bytes.
pub const EXCERPT_TAIL_BYTES: usize = 512;

/// Hard limit on the whole text of one `obs_recall` result, in bytes.
pub const RECALL_MAX_BYTES: usize = 16 * 1024;

/// Hard limit on the whole text of one `obs_recall` result, in lines.
pub const RECALL_MAX_LINES: usize = 400;

/// Bytes of [`RECALL_MAX_BYTES`] kept for the header lines of a recall page.
pub const RECALL_HEADER_RESERVE_BYTES: usize = 512;

/// Lines of [`RECALL_MAX_LINES`] kept for the header lines of a recall page.
pub const RECALL_HEADER_RESERVE_LINES: usize = 2;

/// Most bytes of original text on one recall page (15872).
pub const RECALL_CHUNK_MAX_BYTES: usize = RECALL_MAX_BYTES - RECALL_HEADER_RESERVE_BYTES;

/// Most lines of original text on one recall page (398).
pub const RECALL_CHUNK_MAX_LINES: usize = RECALL_MAX_LINES - RECALL_HEADER_RESERVE_LINES;

/// Longest accepted `query` of a literal search, in UTF-8 bytes.
pub const QUERY_MAX_BYTES: usize = 256;

/// Most matches reported on one search page.
pub const QUERY_MAX_MATCHES: usize = 20;

/// Most bytes of context shown on each side of a match, within the match's own lines.
pub const SEARCH_CONTEXT_BYTES: usize = 80;

/// A line that marks an Evidence-Preserving Reducer receipt. A text containing it as a whole
/// line is already reduced and is never packed.
pub const RECEIPT_MARKER_LINE: &str = "sol_pi_evidence_receipt_v1";

/// Characters (UTF-16 code units, as JavaScript counts them) per estimated token.
pub const CHARS_PER_TOKEN: u64 = 4;

/// What to send for a packable result on the next provider request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SendDecision {
    /// Send the original text unchanged.
    Full {
        /// Which full send this is: 1 or 2 (`prior_requests + 1`), for the `full` ledger record.
        send_number: u32,
    },
    /// Send the placeholder instead.
    Replace {
        /// True exactly once per observation and branch: on the request right after the last
        /// full send. The host announces the saving then, and only then.
        first_replacement: bool,
    },
}

/// The decision for a result that `prior_requests` provider requests already carried.
///
/// Below [`FULL_SENDS`] the result goes in full; from then on it is replaced, and the
/// replacement at exactly [`FULL_SENDS`] is the first one.
pub fn decide(prior_requests: u32) -> SendDecision {
    if prior_requests < FULL_SENDS {
        SendDecision::Full {
            send_number: prior_requests + 1,
        }
    } else {
        SendDecision::Replace {
            first_replacement: prior_requests == FULL_SENDS,
        }
    }
}

//! # sol-obspack: ObservationPack
//!
//! ObservationPack is one of the four SoL-Pi token-efficiency mechanisms. A large text tool
//! result (over 10 KiB) goes to the model in full on the first two provider requests that
//! carry it; from the third on, the request carries a short placeholder instead: size,
//! head and tail lines, and how to read the rest. The original is archived byte for byte,
//! and the `obs_recall` tool reads it back exactly, page by page, or searches it for a
//! literal text. Stored session history is never edited; only what is sent changes.
//!
//! This crate holds the whole policy:
//!
//! - [`policy`]: the numbers, and [`decide`] (full send or placeholder, from how many
//!   requests already carried the result);
//! - [`placement`]: the cache-aware placement (`cacheAware`), and [`recent`], the
//!   recent-outputs placement built for real sessions (`keepRecentOutputs`), with
//!   [`quote`], the lines a reply quoted;
//! - [`observation`]: [`is_packable`], and [`observe`], the content-addressed
//!   [`ObservationId`] and sizes of a result;
//! - [`pack`]: the `context` step, [`Pack`]: which results a request sends as their
//!   placeholders, the ledger records of the sends and what the request saved;
//! - [`placeholder`](mod@placeholder): the byte-stable replacement text;
//! - [`recall`]: [`recall_page`], one page of the original;
//! - [`search`]: [`search_page`], literal matches with line numbers and context;
//! - [`ledger`]: the JSONL records of every send and recall;
//! - [`store`]: [`ObservationStore`], the archive and ledger over the
//!   [`FileSystem`](sol_core::FileSystem) port, with size and hash checks;
//! - [`text`]: the notice, status, badge and labels a person sees, and the tool
//!   description the model reads.
//!
//! # What it never does
//!
//! It never touches the file system itself: archive and ledger go through the `FileSystem`
//! port that the host implements (`sol_core::testing::MemoryFileSystem` in tests). It reads
//! no clock (ledger timestamps are passed in), no environment and starts no process. Its
//! only state is a [`Pack`], which the host owns: the host counts requests (`prior_requests`
//! is the number of assistant messages after the result in the current branch) and
//! remembers which content it admitted under which [`Handle`], since only the host sees
//! Pi's message objects. `clippy.toml` at the workspace root forbids the std functions that would break this.
//!
//! The mechanism is opt-in: it is active only when `sol-pi.json` sets `observationPack` to
//! `true` ([`is_enabled`]).
//!
//! # Example: one large result in a Rust harness
//!
//! ```
//! use sol_core::SolPiConfig;
//! use sol_obspack::{decide, is_packable, observe, placeholder, recall_page, SendDecision};
//!
//! let config = SolPiConfig { observation_pack: true, ..SolPiConfig::default() };
//! assert!(sol_obspack::is_enabled(&config));
//!
//! // A successful, text-only tool result.
//! let log: String = (1..=600).map(|n| format!("test case_{n} ... ok\n")).collect();
//! assert!(is_packable(&log));
//! let obs = observe("bash", "call_42", &log);
//! // A host archives it now: ObservationStore::ensure_stored(&obs, &log).
//!
//! // Requests 1 and 2 after the tool ran carry it in full; request 3 replaces it.
//! assert_eq!(decide(0), SendDecision::Full { send_number: 1 });
//! assert_eq!(decide(1), SendDecision::Full { send_number: 2 });
//! assert_eq!(decide(2), SendDecision::Replace { first_replacement: true });
//! let replacement = placeholder(&obs, &log);
//! assert!(replacement.len() < 2_000);
//! assert!(replacement.contains(&format!("id: {}\n", obs.id)));
//! // Later requests carry the identical text, so the provider's prompt cache still hits.
//! assert_eq!(placeholder(&obs, &log), replacement);
//!
//! // The model calls obs_recall {"id": …, "offset": 0}; the host reads the archive
//! // (ObservationStore::read_verified) and returns pages until eof.
//! let mut offset = 0;
//! let mut recalled = String::new();
//! loop {
//!     let page = recall_page(&obs.id, log.as_bytes(), offset)?;
//!     recalled.push_str(page.chunk());
//!     if page.details.eof {
//!         break;
//!     }
//!     offset = page.details.next_offset;
//! }
//! assert_eq!(recalled, log);
//! # Ok::<(), sol_obspack::RecallError>(())
//! ```
//!
//! [`store`] shows the archive over a `FileSystem`.
//!
//! # One dependency
//!
//! The `sol-core` types (and `camino` paths, where they appear) of this crate's signatures are
//! re-exported, so a host needs no other dependency line for them:
//!
//! ```
//! use sol_obspack::camino::Utf8Path;
//! use sol_obspack::sol_core::StepAccount;
//! assert_eq!(Utf8Path::new("sol-pi/observation-pack").file_name(), Some("observation-pack"));
//! assert!(StepAccount::default().is_empty());
//! ```

// The crates our public signatures use, so that one dependency line is enough.
#[doc(no_inline)]
pub use camino;
#[doc(no_inline)]
pub use serde_json;
#[doc(no_inline)]
pub use sol_core;
/// The real ports over the operating system (`host::OsFileSystem`, ...), for a Rust host
/// that adds this crate with `features = ["host"]`; the mechanism itself never uses them.
#[cfg(feature = "host")]
pub use sol_host as host;

pub mod ledger;
pub mod observation;
pub mod pack;
pub mod placeholder;
pub mod placement;
pub mod policy;
pub mod quote;
pub mod recall;
pub mod recent;
pub mod records;
pub mod request;
pub mod search;
pub mod store;
pub mod text;

use sol_core::{Mechanism, SolPiConfig};

pub use ledger::{LedgerEntry, LedgerRead, LedgerRecord, SkippedLine, ledger_lines, read_ledger};
pub use observation::{
    Observation, ObservationId, ObservationIdError, count_lines, estimate_tokens, is_packable,
    is_packable_over, is_receipt, observe,
};
pub use pack::{Admitted, Carried, ContextStep, Handle, Pack, Packed, Seen};
pub use placeholder::{
    compact_pays, compact_placeholder_with, placeholder, placeholder_tokens, placeholder_with,
    removed_tokens,
};
pub use placement::{CacheMisses, Placement, PlacementReason, Shape};
pub use policy::{
    DEFAULT_KEEP_RECENT_OUTPUTS, EXCERPT_HEAD_BYTES, EXCERPT_TAIL_BYTES, FULL_SENDS,
    MEDIUM_THRESHOLD_BYTES, QUERY_MAX_BYTES, QUERY_MAX_MATCHES, RECALL_HEADER_RESERVE_BYTES,
    RECALL_HEADER_RESERVE_LINES, RECALL_MAX_BYTES, RECALL_MAX_LINES, RECEIPT_MARKER_LINE,
    SendDecision, THRESHOLD_BYTES, decide,
};
pub use quote::{ContentDigest, quotable_lines, reply_quotes};
pub use recall::{
    MAX_OFFSET, RecallDetails, RecallError, RecallPage, parse_offset, recall_page, recall_page_with,
};
pub use recent::{PromptFacts, QUOTED_KEEP_FACTOR, ReportedInput, keeps_recent};
pub use request::{Located, MessageKind, locate};
pub use search::{MatchDetail, SearchDetails, SearchPage, search_page, search_page_with};
pub use store::{Damage, ObservationStore, StoreError, StoreOutcome};
pub use text::Names;

/// The mechanism this crate implements.
pub const MECHANISM: Mechanism = Mechanism::ObservationPack;

/// Whether the configuration turns this mechanism on.
pub fn is_enabled(config: &SolPiConfig) -> bool {
    config.is_enabled(MECHANISM)
}

/// The README examples, compiled and run as doctests so that they cannot drift (the first
/// is the host example, which uses the real ports of the `host` feature).
#[cfg(all(doctest, feature = "host"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

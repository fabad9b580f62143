//! What SoL-Pi saved on a session, per mechanism, in tokens and in money, computed once from
//! the same facts that changed the requests.
//!
//! # The model
//!
//! Every provider request is described once, as it was sent, together with what each of its
//! parts (messages) was before a mechanism changed it ([`RequestFacts`], [`PartForms`]). From
//! that single description the [`Ledger`] rebuilds five versions of the request, the
//! *layers*: plain Pi (layer 0), then Action Fusion, ObservationPack, the Evidence-Preserving
//! Reducer and Online Context Compact switched on one after another, in that order (layer 4
//! is the request as sent). A request that a mechanism made unnecessary (a fused edit and
//! command saves the model's command turn) exists only in the layers before that mechanism.
//!
//! Each layer is priced as providers bill a prompt cache: the parts a request shares, from
//! the start, with the previous request of the same layer are a cache read, the rest a cache
//! write ([`PriceTable`]). So a placeholder that changes a message in the middle of the
//! conversation is charged the rewrite of everything after it, to the mechanism that placed it.
//!
//! A mechanism's saving is the difference between the layer before it and the layer with it,
//! less the cost of the model calls it made itself (the reducer's receipt writer, a compaction
//! summary: [`StepAccount::model_input_tokens`](crate::StepAccount::model_input_tokens) and
//! [`StepAccount::model_output_tokens`](crate::StepAccount::model_output_tokens)).
//! Because the layers telescope, the four net savings add up exactly to the session's total
//! net saving (money is counted in whole picodollars, never in floating point). A saving can
//! be negative: a mechanism whose cache rewrites cost more than its removed tokens saved shows
//! a loss, not a zero.
//!
//! The totals ([`Savings`]) are what a host persists, as a custom session entry of type
//! [`SAVINGS_ENTRY_TYPE`] (never part of the model's context), and [`restore_savings`] reads a
//! branch's newest one back, naming every newer entry it could not read.
//!
//! # Example
//!
//! ```
//! use sol_core::Mechanism;
//! use sol_core::savings::{Ledger, Part, PartForms, PriceTable, RequestFacts};
//!
//! let system = Part { key: 1, tokens: 2_000 };
//! let log = Part { key: 2, tokens: 12_000 };
//! let placeholder = Part { key: 3, tokens: 150 };
//! let mut ledger = Ledger::new();
//! // Two requests carry the whole log; the third carries ObservationPack's placeholder.
//! for _ in 0..2 {
//!     ledger.record_request(&RequestFacts::sent(vec![
//!         PartForms::unchanged(system),
//!         PartForms::unchanged(log),
//!     ]));
//! }
//! ledger.record_request(&RequestFacts::sent(vec![
//!     PartForms::unchanged(system),
//!     PartForms::changed(Some(log), Mechanism::ObservationPack, Some(placeholder)),
//! ]));
//! let report = ledger.savings().report(&PriceTable::default());
//! let pack = report.row(Mechanism::ObservationPack);
//! assert_eq!(pack.input_tokens_saved, 11_850);
//! assert!(pack.net.is_positive());
//! assert_eq!(report.total_net(), pack.net);
//! ```

mod book;
mod breaks;
mod entry;
mod ledger;
mod own;
mod report;
pub mod session;

pub use crate::price::{MAX_PRICE, Money, PriceError, PriceTable};
pub use book::{Book, ReportedUsage, ResponseUsage, SentPart};
pub use breaks::{
    BreakCause, BreakFacts, CACHE_LIFETIME_MS, CacheBreaks, CauseTotals, LONG_CACHE_LIFETIME_MS,
    break_cause, cache_lifetime_ms, prompt_after_lifetime, rewritten_tokens,
};
pub use entry::{
    RestoredSavings, SAVINGS_ENTRY_TYPE, SAVINGS_ENTRY_VERSION, SavingsEntryError, restore_savings,
};
pub use ledger::{
    ArchiveTotals, Calibration, CallTokens, Change, LAYERS, LayerTokens, Ledger, ModelPrices,
    ModelTotals, Part, PartForms, ReportScale, RequestFacts, Savings, TokenBasis, layer_of,
};
pub use own::{OwnPrompt, ToolCall, own_changes, request_cause};
pub use report::{Report, Row};
pub use session::{Response, SentRequest, SessionBook, Watched, after_cache_lifetime};

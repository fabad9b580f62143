//! Whether a reduction pays for its model call: the reducer's economics, used when a host
//! turns on the cache-aware policies (`cacheAware` in `sol-pi.json`).
//!
//! A receipt replaces a log before the main model ever reads it, so what it removes is
//! never written to the provider's prompt cache and never read back from it on the later
//! requests that carry it. The reducer model, in turn, reads the whole log uncached and
//! writes a reply. In units of one cache-read token of the main model, with `r` the cache
//! write/read price ratio (`cacheWriteReadRatio`), `R` the expected remaining requests
//! ([`sol_core::horizon`]) and `X` the tokens the receipt is expected to remove:
//!
//! ```text
//! saving = (R + r) · X                          written once less, read R times less
//! cost   = (input · p_in + output · p_out) / p_read  the reducer call at the price table
//! ```
//!
//! The reduction goes ahead when `saving ≥ cost`; otherwise the result stays as it is and the
//! journal says why ([`crate::ReasonCode::NotEconomic`]). The reply and the receipt are not
//! known before the call, so both are estimated: the reply at [`EXPECTED_REPLY_TOKENS`], the
//! receipt at that plus [`RECEIPT_FRAME_TOKENS`] for its fixed lines. Token counts are
//! Pi's estimate, a quarter of the UTF-16 length, as everywhere in the accounting.
//!
//! ```
//! use sol_core::savings::PriceTable;
//! use sol_reducer::economics::{Economy, weigh};
//!
//! let economy = Economy { prices: PriceTable::default(), write_read_ratio: 12.5, carried_requests: 30 };
//! // A 5,000-token log (5,500 with the instructions) in a session 30 requests old.
//! let verdict = weigh(5_000, 5_500, economy);
//! assert!(verdict.pays());
//! // The same log in a session that has just begun: two more requests are expected.
//! let young = weigh(5_000, 5_500, Economy { carried_requests: 0, ..economy });
//! assert!(!young.pays());
//! ```

use serde::{Deserialize, Serialize};
use sol_core::horizon::expected_remaining_requests;
use sol_core::savings::PriceTable;

use crate::digest::utf16_len;
use crate::prompt::{SYSTEM_PROMPT, user_text_units};
pub use crate::records::Verdict;
use crate::source::Source;

/// The reply a reducer model is expected to write, in tokens: a receipt of a few quotes.
pub const EXPECTED_REPLY_TOKENS: u64 = 300;
/// The fixed lines of a receipt text (prefix, hashes, sizes, artifact, authority and
/// read-back lines), in tokens.
pub const RECEIPT_FRAME_TOKENS: u64 = 200;

/// What the economics weigh a reduction with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Economy {
    /// Prices per million tokens: the reducer call at `input` and `output`, the main model's
    /// cache reads at `cache_read`.
    pub prices: PriceTable,
    /// The cache write/read price ratio of the main model (`cacheWriteReadRatio`).
    pub write_read_ratio: f64,
    /// The assistant messages the current context carries: the horizon's input.
    pub carried_requests: u32,
}

/// Pi's token estimate of a length in UTF-16 units: a quarter, rounded up.
fn tokens_of_units(units: usize) -> u64 {
    (units as u64).div_ceil(4)
}

/// What a reduction of `source` is weighed on: the tokens of the log the model would read,
/// and the tokens the reducer call reads (the instructions and the framed log).
pub fn source_tokens(source: &Source) -> (u64, u64) {
    let result = tokens_of_units(utf16_len(source.body()));
    let call = tokens_of_units(utf16_len(SYSTEM_PROMPT)) + tokens_of_units(user_text_units(source));
    (result, call)
}

/// [`weigh`] for `source`.
pub fn weigh_source(source: &Source, economy: Economy) -> Verdict {
    let (result, call) = source_tokens(source);
    weigh(result, call, economy)
}

/// Weighs reducing a result the model would read as `result_tokens`, with a reducer call
/// that reads `call_input_tokens` (the framed log and the instructions). Tokens are priced
/// by [`PriceTable::cost`], as the savings accounting prices them; a ratio that is not a
/// finite non-negative number counts as 0.
pub fn weigh(result_tokens: u64, call_input_tokens: u64, economy: Economy) -> Verdict {
    let prices = economy.prices;
    let ratio = economy.write_read_ratio;
    let ratio = if ratio.is_finite() && ratio >= 0.0 {
        ratio
    } else {
        0.0
    };
    let removed = result_tokens.saturating_sub(EXPECTED_REPLY_TOKENS + RECEIPT_FRAME_TOKENS);
    let horizon = expected_remaining_requests(economy.carried_requests);
    let read_once = prices.cost(removed, 0, 0, 0).0;
    let saving = (f64::from(horizon) + ratio) * read_once as f64;
    let cost = prices
        .cost(0, 0, call_input_tokens, EXPECTED_REPLY_TOKENS)
        .0;
    Verdict {
        result_tokens,
        removed_tokens: removed,
        call_input_tokens,
        call_output_tokens: EXPECTED_REPLY_TOKENS,
        horizon_requests: horizon,
        // `as` rounds towards zero and saturates; the amount is never negative.
        saving_picodollars: saving.round() as u64,
        cost_picodollars: u64::try_from(cost).unwrap_or(u64::MAX),
    }
}

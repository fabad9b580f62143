//! The prices a report is made at.

use serde::{Deserialize, Serialize};

use super::Money;

/// US dollars per million tokens, as providers list them.
///
/// The default is a typical frontier model's list price: $3 input, $0.30 cache read (0.1×
/// input), $3.75 cache write (1.25× input) and $15 output. A provider without a prompt
/// cache is priced by setting both cache prices to the input price.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriceTable {
    /// Input tokens the provider does not cache: the model calls a mechanism makes itself.
    pub input: f64,
    /// Input tokens read from the provider's prompt cache (a prefix shared with the
    /// previous request).
    pub cache_read: f64,
    /// Input tokens written to the provider's prompt cache (the rest of a request).
    pub cache_write: f64,
    /// Output tokens.
    pub output: f64,
}

impl Default for PriceTable {
    fn default() -> PriceTable {
        PriceTable {
            input: 3.0,
            cache_read: 0.3,
            cache_write: 3.75,
            output: 15.0,
        }
    }
}

/// The highest price accepted, in dollars per million tokens.
pub const MAX_PRICE: f64 = 1_000_000.0;

/// A price that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "SoL-Pi price {field} must be a number of dollars per million tokens from 0 to 1000000, got {value}"
)]
pub struct PriceError {
    /// The `sol-pi.json` name of the price (`input`, `cacheRead`, `cacheWrite`, `output`).
    pub field: &'static str,
    /// What was given.
    pub value: f64,
}

impl PriceTable {
    /// The table, or the first price (in the order of the fields) that is not a finite
    /// number from 0 to 1,000,000.
    pub fn validated(self) -> Result<PriceTable, PriceError> {
        for (field, value) in self.fields() {
            if !(value.is_finite() && (0.0..=MAX_PRICE).contains(&value)) {
                return Err(PriceError { field, value });
            }
        }
        Ok(self)
    }

    /// Whether every price is the default's.
    pub fn is_default(&self) -> bool {
        *self == PriceTable::default()
    }

    /// The price under a `sol-pi.json` key of the `prices` object.
    pub fn field_mut(&mut self, key: &str) -> Option<&mut f64> {
        match key {
            "input" => Some(&mut self.input),
            "cacheRead" => Some(&mut self.cache_read),
            "cacheWrite" => Some(&mut self.cache_write),
            "output" => Some(&mut self.output),
            _ => None,
        }
    }

    fn fields(&self) -> [(&'static str, f64); 4] {
        [
            ("input", self.input),
            ("cacheRead", self.cache_read),
            ("cacheWrite", self.cache_write),
            ("output", self.output),
        ]
    }

    /// The cost of `tokens` cached-read, cache-written, uncached-input and output tokens.
    pub fn cost(&self, cache_read: u64, cache_write: u64, input: u64, output: u64) -> Money {
        Money::of_tokens(cache_read, per_token(self.cache_read))
            + Money::of_tokens(cache_write, per_token(self.cache_write))
            + Money::of_tokens(input, per_token(self.input))
            + Money::of_tokens(output, per_token(self.output))
    }
}

/// Dollars per million tokens as picodollars per token (exact to six decimals; a price
/// outside the validated range saturates rather than wraps).
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "rounded, clamped to the validated range first"
)]
pub(crate) fn per_token(dollars_per_million: f64) -> u64 {
    let clamped = if dollars_per_million.is_finite() {
        dollars_per_million.clamp(0.0, MAX_PRICE)
    } else {
        0.0
    };
    (clamped * 1_000_000.0).round() as u64
}

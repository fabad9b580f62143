//! What a step of a mechanism saved and what it cost, in units all four share.
//!
//! Every step API returns a [`StepAccount`] with its effects, computed from the same
//! decision that changes the context. The savings a session shows, the demo prints and
//! `replay` reports are then one sum over step outputs (`StepAccount` implements `Add` and `Sum`), so the
//! three can never disagree.
//!
//! ```
//! use sol_core::account::StepAccount;
//!
//! let placeholder = StepAccount::removed_text(48_000, 12_000, 600, 150);
//! assert_eq!(placeholder.bytes_removed, 47_400);
//! assert_eq!(placeholder.tokens_removed, 2_962);
//! let fused = StepAccount { requests_avoided: 1, ..StepAccount::default() };
//! let total: StepAccount = [placeholder, fused].into_iter().sum();
//! assert_eq!(total.requests_avoided, 1);
//! assert_eq!(total.tokens_removed, 2_962);
//! ```

use serde::{Deserialize, Serialize};

/// The saving and the cost of one step. All counts are totals, never rates; zero where the
/// step did not touch that unit.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase", default)]
pub struct StepAccount {
    /// UTF-8 bytes removed from what the model is sent (original minus replacement).
    pub bytes_removed: u64,
    /// Tokens removed, by Pi's estimate (`ceil(UTF-16 units / 4)` of each text) of the
    /// original minus that of the replacement.
    pub tokens_removed: u64,
    /// Provider requests the step made unnecessary (a fused edit and command: one).
    pub requests_avoided: u64,
    /// Model calls the mechanism made itself (the reducer model, a compaction summary).
    pub model_calls: u64,
    /// Input tokens of those calls, where the provider reported them.
    pub model_input_tokens: u64,
    /// Output tokens of those calls, where the provider reported them.
    pub model_output_tokens: u64,
}

impl StepAccount {
    /// A text of `original_bytes` / `original_units` (UTF-16 code units, as Pi counts)
    /// replaced by one of `replacement_bytes` / `replacement_units`; never negative.
    pub fn removed_text(
        original_bytes: u64,
        original_units: u64,
        replacement_bytes: u64,
        replacement_units: u64,
    ) -> StepAccount {
        StepAccount {
            bytes_removed: original_bytes.saturating_sub(replacement_bytes),
            tokens_removed: original_units
                .div_ceil(4)
                .saturating_sub(replacement_units.div_ceil(4)),
            ..StepAccount::default()
        }
    }

    /// Whether the step saved and cost nothing.
    pub fn is_empty(&self) -> bool {
        *self == StepAccount::default()
    }
}

/// Field by field, saturating: a total never wraps.
impl std::ops::Add for StepAccount {
    type Output = StepAccount;

    fn add(self, other: StepAccount) -> StepAccount {
        StepAccount {
            bytes_removed: self.bytes_removed.saturating_add(other.bytes_removed),
            tokens_removed: self.tokens_removed.saturating_add(other.tokens_removed),
            requests_avoided: self.requests_avoided.saturating_add(other.requests_avoided),
            model_calls: self.model_calls.saturating_add(other.model_calls),
            model_input_tokens: self
                .model_input_tokens
                .saturating_add(other.model_input_tokens),
            model_output_tokens: self
                .model_output_tokens
                .saturating_add(other.model_output_tokens),
        }
    }
}

impl std::ops::AddAssign for StepAccount {
    fn add_assign(&mut self, other: StepAccount) {
        *self = *self + other;
    }
}

impl std::iter::Sum for StepAccount {
    fn sum<I: Iterator<Item = StepAccount>>(steps: I) -> StepAccount {
        steps.fold(StepAccount::default(), |total, step| total + step)
    }
}

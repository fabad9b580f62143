//! Money in whole picodollars, so sums and differences are exact.

use serde::{Deserialize, Serialize};

/// An amount of US dollars, counted in picodollars (10⁻¹² USD). One token at $3 per million
/// tokens is 3,000,000 picodollars, so every price with up to six decimals per million tokens
/// is exact, and no sum of a session's requests loses a cent to rounding.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Money(pub i128);

/// Picodollars in one dollar.
const PER_DOLLAR: i128 = 1_000_000_000_000;

impl Money {
    /// Nothing.
    pub const ZERO: Money = Money(0);

    /// `tokens` at `picodollars_per_token` each.
    pub fn of_tokens(tokens: u64, picodollars_per_token: u64) -> Money {
        Money(i128::from(tokens) * i128::from(picodollars_per_token))
    }

    /// Whether the amount is nothing.
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }

    /// Whether the amount is above zero.
    pub fn is_positive(self) -> bool {
        self.0 > 0
    }

    /// `self` as a share of `whole`, in tenths of a percent, rounded half away from zero;
    /// `None` when `whole` is not positive.
    pub fn per_mille_of(self, whole: Money) -> Option<i128> {
        per_mille(self.0, whole.0)
    }
}

impl std::ops::Add for Money {
    type Output = Money;
    fn add(self, other: Money) -> Money {
        Money(self.0 + other.0)
    }
}

impl std::ops::Sub for Money {
    type Output = Money;
    fn sub(self, other: Money) -> Money {
        Money(self.0 - other.0)
    }
}

impl std::iter::Sum for Money {
    fn sum<I: Iterator<Item = Money>>(iter: I) -> Money {
        iter.fold(Money::ZERO, |a, b| a + b)
    }
}

/// `$1.23` from one dollar up, `$0.0123` below it (a short session's figures are cents),
/// with a leading minus for a loss; rounded half away from zero.
impl std::fmt::Display for Money {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let magnitude = self.0.unsigned_abs();
        let rounded = |decimals: u32| {
            let unit = PER_DOLLAR.unsigned_abs() / 10u128.pow(decimals);
            (magnitude + unit / 2) / unit
        };
        // Four decimals only while the amount, rounded to them, stays below a dollar.
        let decimals: u32 = if rounded(4) < 10_000 { 4 } else { 2 };
        let scaled = rounded(decimals);
        let scale = 10u128.pow(decimals);
        // A loss that rounds to nothing is shown as nothing, without a minus.
        let sign = if self.0 < 0 && scaled > 0 { "-" } else { "" };
        let whole = scaled / scale;
        let fraction = scaled % scale;
        write!(
            f,
            "{sign}${}.{fraction:0width$}",
            crate::tui::group_digits(whole),
            width = decimals as usize
        )
    }
}

/// `part` as a share of `whole`, in tenths of a percent, rounded half away from zero;
/// `None` when `whole` is not positive. The one rule for every percentage a report shows.
pub(crate) fn per_mille(part: i128, whole: i128) -> Option<i128> {
    (whole > 0).then(|| div_round(part * 1000, whole))
}

/// `numerator / denominator` rounded half away from zero (`denominator > 0`).
fn div_round(numerator: i128, denominator: i128) -> i128 {
    let half = denominator / 2;
    if numerator >= 0 {
        (numerator + half) / denominator
    } else {
        (numerator - half) / denominator
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Money, per_mille};

    proptest! {
        #[test]
        fn per_mille_rounds_half_away_from_zero(
            part in -(1i128 << 90)..(1i128 << 90),
            whole in prop_oneof![-3i128..=0, 1i128..=2000, 1i128..(1i128 << 90)],
        ) {
            let share = per_mille(part, whole);
            prop_assert_eq!(Money(part).per_mille_of(Money(whole)), share);
            let Some(share) = share else {
                prop_assert!(whole <= 0);
                return Ok(());
            };
            prop_assert!(whole > 0);
            // Within half a tenth of a percent of the exact share, and a tie rounds outwards.
            let exact = part * 1000;
            let error = (exact - share * whole).abs() * 2;
            prop_assert!(error <= whole, "{share} for {part}/{whole}");
            if error == whole {
                prop_assert!((share * whole).abs() > exact.abs());
            }
        }
    }

    #[test]
    fn per_mille_examples() {
        assert_eq!(per_mille(-380, 1000), Some(-380));
        assert_eq!(per_mille(1, 2000), Some(1));
        assert_eq!(per_mille(-1, 2000), Some(-1));
        assert_eq!(per_mille(1, 2001), Some(0));
        assert_eq!(per_mille(5, 0), None);
    }
}

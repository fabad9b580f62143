//! Prices and money: a price table (dollars per million tokens of input, cache read, cache
//! write and output) and [`Money`], counted in whole picodollars. The configuration reads a
//! table and the savings engine prices with it; neither depends on the other through it.

mod money;
mod table;

pub use money::Money;
pub(crate) use money::per_mille;
pub(crate) use table::per_token;
pub use table::{MAX_PRICE, PriceError, PriceTable};

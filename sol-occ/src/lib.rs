//! # sol-occ: Online Context Compact
//!
//! Online Context Compact is one of the four SoL-Pi token-efficiency mechanisms: `update_plan` marks completed plan steps as points where the host's native compaction may run when the cache economics say it pays.
//!
//! This crate is sans-IO. It never compacts, aborts or sends messages itself: it returns decisions that the host carries out. It reads no clock, no environment
//! and spawns no process; everything it needs arrives as input.
//!
//! The mechanism is opt-in: it is active only when `sol-pi.json` sets
//! `onlineContextCompact` to `true`.
//!
//! ```
//! use sol_core::SolPiConfig;
//!
//! let config = SolPiConfig { online_context_compact: true, ..SolPiConfig::default() };
//! assert!(sol_occ::is_enabled(&config));
//! assert!(!sol_occ::is_enabled(&SolPiConfig::default()));
//! ```

use sol_core::{Mechanism, SolPiConfig};

/// The mechanism this crate implements.
pub const MECHANISM: Mechanism = Mechanism::OnlineContextCompact;

/// Whether the configuration turns this mechanism on.
pub fn is_enabled(config: &SolPiConfig) -> bool {
    config.is_enabled(MECHANISM)
}

//! # sol-fusion: Action Fusion
//!
//! Action Fusion is one of the four SoL-Pi token-efficiency mechanisms: `edit` and `write` accept an optional `then_run` follow-up command that runs in the same tool call.
//!
//! This crate is sans-IO. It never mutates files or runs commands itself: the host performs the mutation with its own edit/write tool and runs the follow-up through its own shell. It reads no clock, no environment
//! and spawns no process; everything it needs arrives as input.
//!
//! The mechanism is opt-in: it is active only when `sol-pi.json` sets
//! `actionFusion` to `true`.
//!
//! ```
//! use sol_core::SolPiConfig;
//!
//! let config = SolPiConfig { action_fusion: true, ..SolPiConfig::default() };
//! assert!(sol_fusion::is_enabled(&config));
//! assert!(!sol_fusion::is_enabled(&SolPiConfig::default()));
//! ```

use sol_core::{Mechanism, SolPiConfig};

/// The mechanism this crate implements.
pub const MECHANISM: Mechanism = Mechanism::ActionFusion;

/// Whether the configuration turns this mechanism on.
pub fn is_enabled(config: &SolPiConfig) -> bool {
    config.is_enabled(MECHANISM)
}

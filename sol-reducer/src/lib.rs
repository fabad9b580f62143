//! # sol-reducer: Evidence-Preserving Reducer
//!
//! Evidence-Preserving Reducer is one of the four SoL-Pi token-efficiency mechanisms: long build and test logs are replaced by a model-written receipt, accepted only when every quote is found byte for byte in the archived log.
//!
//! This crate is sans-IO. It never calls a model or reads a file itself: the model call goes through the `sol_core::ModelClient` port and archives through `sol_core::FileSystem`. It reads no clock, no environment
//! and spawns no process; everything it needs arrives as input.
//!
//! The mechanism is opt-in: it is active only when `sol-pi.json` sets
//! `evidencePreservingReducer` to `true`.
//!
//! ```
//! use sol_core::SolPiConfig;
//!
//! let config = SolPiConfig { evidence_preserving_reducer: true, ..SolPiConfig::default() };
//! assert!(sol_reducer::is_enabled(&config));
//! assert!(!sol_reducer::is_enabled(&SolPiConfig::default()));
//! ```

use sol_core::{Mechanism, SolPiConfig};

/// The mechanism this crate implements.
pub const MECHANISM: Mechanism = Mechanism::EvidencePreservingReducer;

/// Whether the configuration turns this mechanism on.
pub fn is_enabled(config: &SolPiConfig) -> bool {
    config.is_enabled(MECHANISM)
}

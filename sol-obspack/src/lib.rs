//! # sol-obspack: ObservationPack
//!
//! ObservationPack is one of the four SoL-Pi token-efficiency mechanisms: large text tool results are sent in full twice, then replaced by a stable placeholder with exact paged recall through `obs_recall`.
//!
//! This crate is sans-IO. It never touches the file system directly: archive and ledger writes go through the `sol_core::FileSystem` port. It reads no clock, no environment
//! and spawns no process; everything it needs arrives as input.
//!
//! The mechanism is opt-in: it is active only when `sol-pi.json` sets
//! `observationPack` to `true`.
//!
//! ```
//! use sol_core::SolPiConfig;
//!
//! let config = SolPiConfig { observation_pack: true, ..SolPiConfig::default() };
//! assert!(sol_obspack::is_enabled(&config));
//! assert!(!sol_obspack::is_enabled(&SolPiConfig::default()));
//! ```

use sol_core::{Mechanism, SolPiConfig};

/// The mechanism this crate implements.
pub const MECHANISM: Mechanism = Mechanism::ObservationPack;

/// Whether the configuration turns this mechanism on.
pub fn is_enabled(config: &SolPiConfig) -> bool {
    config.is_enabled(MECHANISM)
}

//! # sol-napi: the Node-API addon behind the SoL-Pi Pi extension
//!
//! This crate assembles the pure SoL-Pi crates for Pi. It is the only crate that
//! touches the host: it converts between JavaScript values and the `sol-core`
//! vocabulary, implements the `sol_core::FileSystem` port over `std::fs`
//! ([`NativeFileSystem`]), and exports a small set of coarse functions to the
//! TypeScript extension in `sol-napi/extension/`.
//!
//! What it never does: hold policy. Every decision about meaning lives in the
//! pure crates, where property and snapshot tests reach it; this crate only
//! carries data across. Every export is wrapped in `catch_unwind`, so a Rust
//! panic becomes a JavaScript error instead of aborting Pi. Expected outcomes
//! (an invalid config, say) cross as data; only contract violations throw.
//!
//! The Rust side can be used without Node:
//!
//! ```
//! use camino::Utf8Path;
//! use sol_core::{load_config, ConfigSearch, ConfigSource};
//! use sol_napi::NativeFileSystem;
//!
//! let empty = std::env::temp_dir();
//! let cwd = Utf8Path::from_path(&empty).expect("temp dir is UTF-8");
//! let search = ConfigSearch {
//!     cwd,
//!     agent_dir: &cwd.join("no-such-agent-dir"),
//!     project_trusted: false,
//! };
//! let loaded = load_config(&NativeFileSystem, &search).expect("defaults load");
//! assert_eq!(loaded.source, ConfigSource::Defaults);
//! ```

mod config;
mod fs;

pub use config::{
    ConfigFailure, ConfigRequest, EffectiveConfig, LoadConfigOutcome, load_config_outcome,
};
pub use fs::NativeFileSystem;

/// Runs when Node loads the addon. Panics are caught at every export and
/// returned to JavaScript as errors carrying the panic message; the default
/// hook would also print them to stderr, which corrupts Pi's terminal UI.
#[napi_derive::module_init]
fn silence_panic_output() {
    std::panic::set_hook(Box::new(|_| {}));
}

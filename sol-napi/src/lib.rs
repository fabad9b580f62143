//! # sol-napi: the Node-API addon behind the SoL-Pi Pi extension
//!
//! This crate assembles the pure SoL-Pi crates for Pi. It is the only crate that
//! touches the host: it converts between JavaScript values and the `sol-core`
//! vocabulary, uses the real ports of `sol-host` (the file system, the storage
//! layout, file digests; [`NativeFileSystem`] is `sol_host::OsFileSystem`), and
//! exports a small set of coarse functions to the TypeScript extension in
//! `sol-napi/sol-pi/`.
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

mod account;
mod boundary;
mod config;
pub mod engine;
pub mod frame;
pub mod fusion;
pub mod obspack;
pub mod occ;
pub mod reducer;
pub mod replay;
pub mod savings;
pub mod storage;
#[cfg(feature = "test-hooks")]
pub mod test_hooks;

pub use account::JsStepAccount;
pub use config::{
    ConfigFailure, ConfigOrigin, ConfigRequest, EffectiveConfig, LoadConfigOutcome,
    internal_error_message, internal_error_notice, load_config_outcome, load_config_with,
};
/// The file system of every export: `sol_host::OsFileSystem`, under the name the
/// addon's modules use.
pub use sol_host::OsFileSystem as NativeFileSystem;

/// Installed when the library loads. Panics inside an export are caught there
/// and returned to JavaScript as errors carrying the panic message; printing
/// them as well would corrupt Pi's terminal UI, so the hook stays quiet while an
/// export runs ([`boundary::quiet`]) and defers to the previous hook otherwise
/// (Rust test binaries that link this crate keep their panic output).
#[napi_derive::module_init]
fn install_panic_hook() {
    boundary::install_quiet_hook();
}

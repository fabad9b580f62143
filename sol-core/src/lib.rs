//! Shared vocabulary of SoL-Pi in Rust: the token-efficiency mechanisms for the Pi coding agent.
//!
//! This crate is what every other SoL-Pi crate speaks:
//!
//! - [`account`]: what a step of a mechanism saved and cost ([`StepAccount`]), the unit
//!   every savings figure is a fold of;
//! - [`savings`]: the session's savings per mechanism, in tokens and in money with the prompt
//!   cache priced, from one description of each request, and the `/sol-pi` table;
//! - [`config`]: the `sol-pi.json` schema, its validation (exact order and messages), the
//!   search order (trusted project, then agent directory, then defaults) and the one-line
//!   startup notice;
//! - [`ids`]: the session id that may become a directory name, and tool call ids;
//! - [`message`]: serde types for the messages Pi hands to extensions, lossless for the
//!   fields they do not model, and Pi's token estimate of a message;
//! - [`session`]: serde types for Pi's session entries and the 1.x session projection,
//!   lossless like the messages, with the ISO timestamp parse;
//! - [`ports`]: the four synchronous, object-safe traits through which a host does the I/O
//!   ([`FileSystem`], [`SessionStore`], [`Shell`], [`ModelClient`]), with their errors;
//! - `testing` (feature `testing`): in-memory doubles of those ports.
//!
//! # What it never does
//!
//! sol-core performs no I/O of its own: it never touches the file system, reads no clock and
//! no environment variable, starts no process and uses no hash-ordered collection. Every such
//! effect goes through a port that the host implements. `clippy.toml` in this crate forbids
//! the std functions and types that would break this.
//!
//! # Example
//!
//! ```
//! use camino::Utf8Path;
//! use sol_core::{parse_config, ConfigError, Mechanism};
//!
//! let path = Utf8Path::new("/work/app/.pi/sol-pi.json");
//! let config = parse_config(br#"{"version": 1, "observationPack": true}"#, path)?;
//! assert_eq!(config.enabled_mechanisms(), vec![Mechanism::ObservationPack]);
//! assert_eq!(config.cache_write_read_ratio, 12.5);
//!
//! let error = parse_config(br#"{"version": 1, "actionFussion": true}"#, path).unwrap_err();
//! assert_eq!(error.code(), "unknown_key");
//! assert_eq!(error.key(), Some("actionFussion"));
//! assert_eq!(
//!     error.to_string(),
//!     "Unknown SoL-Pi config key: actionFussion (in /work/app/.pi/sol-pi.json)"
//! );
//! # Ok::<(), ConfigError>(())
//! ```
//!
//! Loading goes through a [`FileSystem`], so the same search runs over the real disk in a
//! host and over `testing::MemoryFileSystem` in tests (see [`load_config`]).

pub mod account;
pub mod config;
pub mod horizon;
pub mod ids;
pub mod message;
pub mod ports;
pub mod price;
pub mod savings;
pub mod session;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tui;

pub use account::StepAccount;
// The crates our public signatures use (paths, JSON values), so a host needs no other line.
#[doc(no_inline)]
pub use camino;
pub use config::{
    CONFIG_FILE_NAME, ConfigError, ConfigSearch, ConfigSource, LoadedConfig, MAX_CONFIG_BYTES,
    Mechanism, PROJECT_CONFIG_DIR, SolPiConfig, load_config, parse_config, validate_config,
};
pub use ids::{SessionId, SessionIdError, ToolCallId};
pub use ports::{
    FileKind, FileMetadata, FileSystem, FsError, FsErrorKind, ModelClient, ModelError, ModelReply,
    ModelRequest, ModelUsage, SessionStore, SessionStoreError, Shell, ShellError, ShellExit,
    ShellOutcome, ShellRequest, append_needs_line_break,
};
#[doc(no_inline)]
pub use serde_json;

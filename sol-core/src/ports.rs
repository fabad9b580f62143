//! The ports: synchronous, object-safe traits through which a host performs the I/O that
//! SoL-Pi needs. sol-core and the mechanism crates only ever see `&dyn` references to them.
//!
//! - [`FileSystem`]: archives and ledgers under the session's storage directory;
//! - [`SessionStore`]: custom entries in Pi's session log;
//! - [`Shell`]: follow-up commands of Action Fusion;
//! - [`ModelClient`]: the reducer's model call.
//!
//! Inside Pi these are carried out by the TypeScript extension with Pi's own APIs; a Rust
//! host implements the traits itself. The `testing` feature provides in-memory doubles.

mod fs;
mod millis;
mod model;
mod session;
mod shell;

pub use fs::{FileKind, FileMetadata, FileSystem, FsError, FsErrorKind, append_needs_line_break};
pub use model::{ModelClient, ModelError, ModelReply, ModelRequest, ModelUsage};
pub use session::{SessionStore, SessionStoreError};
pub use shell::{Shell, ShellError, ShellExit, ShellOutcome, ShellRequest};

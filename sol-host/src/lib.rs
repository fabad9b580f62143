//! # sol-host: the real ports for a Rust host of the SoL-Pi mechanisms
//!
//! The mechanism crates (`sol-fusion`, `sol-obspack`, `sol-reducer`, `sol-occ`) are
//! sans-IO: they reach files and processes only through the ports of
//! [`sol_core::ports`]. This crate implements those ports over the operating system, so a
//! harness that is not Pi does not have to write them again, and the Pi addon (`sol-napi`)
//! uses the same code:
//!
//! - [`OsFileSystem`]: [`sol_core::FileSystem`] over `std::fs`, with private modes,
//!   exclusive creation, no-follow opens, FIFO-safe bounded reads and atomic replace.
//! - [`OsShell`]: [`sol_core::Shell`] over `std::process` (`sh -c`, output joined and
//!   bounded, a process group killed whole on timeout).
//! - [`storage`]: where a session's files live (`<sessionDir>/sol-pi/<sessionId>`, or a
//!   private temp folder), with the session id checked by [`sol_core::SessionId`].
//! - [`digest`]: a bounded SHA-256 look at a file that never opens a FIFO or a device.
//!
//! A mechanism crate built with its `host` feature re-exports this crate as `host`, so
//! `sol-obspack = { version = "0.1", features = ["host"] }` is the one dependency line of
//! a host that wants the real ports (`sol_obspack::host::OsFileSystem`).
//!
//! ```
//! use sol_host::OsFileSystem;
//! use sol_host::camino::Utf8Path;
//! use sol_host::sol_core::FileSystem;
//!
//! assert_eq!(OsFileSystem.metadata(Utf8Path::new("/no/such/file")).expect("lstat"), None);
//! ```

pub mod digest;
mod fs;
mod shell;
pub mod storage;

/// The UTF-8 paths the ports take, re-exported so a host needs no dependency line of its own.
pub use camino;
/// The port traits and vocabulary this crate implements, re-exported for the same reason.
pub use sol_core;

pub use fs::OsFileSystem;
pub use shell::{DEFAULT_OUTPUT_LIMIT, OsShell};

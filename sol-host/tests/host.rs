//! The sol-host test suite: one binary, one module per area (under `tests/host/`).
//!
//! These tests run the ports for real, on throw-away directories.

#[path = "host/support.rs"]
mod support;

#[cfg(unix)]
#[path = "host/os_fs.rs"]
mod os_fs;
#[cfg(unix)]
#[path = "host/parity.rs"]
mod parity;

//! The sol-host test suite: one binary, one module per area (under `tests/host/`).
//!
//! These tests run the ports for real, on throw-away directories and real processes.

#[macro_use]
extern crate sol_testkit;

#[path = "host/support.rs"]
mod support;

#[cfg(unix)]
#[path = "host/digest.rs"]
mod digest;
#[cfg(unix)]
#[path = "host/os_fs.rs"]
mod os_fs;
#[cfg(unix)]
#[path = "host/os_shell.rs"]
mod os_shell;
#[cfg(unix)]
#[path = "host/parity.rs"]
mod parity;
#[path = "host/readme.rs"]
mod readme;
#[cfg(unix)]
#[path = "host/storage.rs"]
mod storage;

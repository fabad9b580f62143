//! The sol-napi test suite: one binary, one module per area (under `tests/host/`).
//!
//! These tests run the host side for real: config loading through `load_config_outcome` as
//! the extension calls it, the session engine's lifecycle, and the workspace rules that keep
//! the pure crates pure. No Node is
//! needed: napi is linked with `dyn-symbols`, so only the JavaScript registration of the exports is inert here.

#[macro_use]
extern crate sol_testkit;

#[path = "host/support.rs"]
mod support;

#[path = "host/config.rs"]
mod config;
#[path = "host/engine.rs"]
mod engine;
#[path = "host/shell.rs"]
mod shell;
#[path = "host/snapshots.rs"]
mod snapshots;
#[path = "host/workspace_layout.rs"]
mod workspace_layout;

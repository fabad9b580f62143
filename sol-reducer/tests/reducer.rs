//! The sol-reducer test suite: one binary, one module per area (under `tests/reducer/`).
//!
//! Run with `cargo test -p sol-reducer`. Snapshots live in `tests/snapshots/`; the realistic
//! logs and scripted receipts are in `fixtures/reducer/` at the repository root.

#[macro_use]
extern crate sol_testkit;

#[path = "reducer/support.rs"]
mod support;

#[path = "reducer/adversarial.rs"]
mod adversarial;
#[path = "reducer/archive.rs"]
mod archive;
#[path = "reducer/cache.rs"]
mod cache;
#[path = "reducer/candidate.rs"]
mod candidate;
#[path = "reducer/driver.rs"]
mod driver;
#[path = "reducer/economics.rs"]
mod economics;
#[path = "reducer/exit.rs"]
mod exit;
#[path = "reducer/failure.rs"]
mod failure;
#[path = "reducer/fixtures.rs"]
mod fixtures;
#[path = "reducer/host_api.rs"]
mod host_api;
#[path = "reducer/oracle.rs"]
mod oracle;
#[path = "reducer/props.rs"]
mod props;
#[path = "reducer/receipt.rs"]
mod receipt;
#[path = "reducer/render.rs"]
mod render;
#[path = "reducer/secret.rs"]
mod secret;
#[path = "reducer/shell.rs"]
mod shell;
#[path = "reducer/snapshots.rs"]
mod snapshots;
#[path = "reducer/source.rs"]
mod source;
#[path = "reducer/step.rs"]
mod step;

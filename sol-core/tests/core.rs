//! The sol-core test suite: one binary, one module per area (under `tests/core/`).
//!
//! Run with `cargo test -p sol-core --all-features`: the port tests and the `load_config`
//! tests use the in-memory doubles of the `testing` feature.

#[macro_use]
extern crate sol_testkit;

#[path = "core/account_props.rs"]
mod account_props;
#[path = "core/book.rs"]
mod book;
#[path = "core/breaks.rs"]
mod breaks;
#[path = "core/config.rs"]
mod config;
#[path = "core/fixtures.rs"]
mod fixtures;
#[path = "core/ids.rs"]
mod ids;
#[path = "core/message.rs"]
mod message;
#[path = "core/own.rs"]
mod own;
#[path = "core/pi_shapes.rs"]
mod pi_shapes;
#[path = "core/props.rs"]
mod props;
#[path = "core/registry.rs"]
mod registry;
#[path = "core/savings.rs"]
mod savings;
#[path = "core/session_props.rs"]
mod session_props;
#[path = "core/snapshots.rs"]
mod snapshots;

#[cfg(feature = "testing")]
#[path = "core/load.rs"]
mod load;
#[cfg(feature = "testing")]
#[path = "core/ports.rs"]
mod ports;

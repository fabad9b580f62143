//! The sol-fusion test suite: one binary, one module per area (under `tests/fusion/`).
//!
//! Run with `cargo test -p sol-fusion`. Snapshots live in `tests/snapshots/`; the path and
//! `then_run` cases shared with the JavaScript host are in `fixtures/fusion/`.

#[macro_use]
extern crate sol_testkit;

#[path = "fusion/driver.rs"]
mod driver;
#[path = "fusion/fused_props.rs"]
mod fused_props;
#[path = "fusion/guard.rs"]
mod guard;
#[path = "fusion/observe.rs"]
mod observe;
#[cfg(feature = "host")]
#[path = "fusion/on_disk.rs"]
mod on_disk;
#[path = "fusion/path_fixtures.rs"]
mod path_fixtures;
#[path = "fusion/path_props.rs"]
mod path_props;
#[path = "fusion/paths.rs"]
mod paths;
#[path = "fusion/snapshots.rs"]
mod snapshots;
#[path = "fusion/text.rs"]
mod text;
#[path = "fusion/then_run.rs"]
mod then_run;
#[path = "fusion/then_run_fixtures.rs"]
mod then_run_fixtures;
#[path = "fusion/then_run_props.rs"]
mod then_run_props;

//! The sol-obspack test suite: one binary, one module per area (under `tests/obspack/`).
//!
//! Run with `cargo test -p sol-obspack`. Snapshots live in `tests/snapshots/`; the sample
//! logs are in `fixtures/obspack/` at the repository root.

#[macro_use]
extern crate sol_testkit;

#[path = "obspack/fixtures.rs"]
mod fixtures;
#[path = "obspack/host_steps.rs"]
mod host_steps;
#[path = "obspack/identity.rs"]
mod identity;
#[path = "obspack/ledger.rs"]
mod ledger;
#[path = "obspack/names.rs"]
mod names;
#[path = "obspack/pack_props.rs"]
mod pack_props;
#[path = "obspack/placeholder.rs"]
mod placeholder;
#[path = "obspack/placement.rs"]
mod placement;
#[path = "obspack/policy.rs"]
mod policy;
#[path = "obspack/props.rs"]
mod props;
#[path = "obspack/recall.rs"]
mod recall;
#[path = "obspack/recent.rs"]
mod recent;
#[path = "obspack/request.rs"]
mod request;
#[path = "obspack/search.rs"]
mod search;
#[path = "obspack/snapshots.rs"]
mod snapshots;
#[path = "obspack/store.rs"]
mod store;
#[path = "obspack/text.rs"]
mod text;

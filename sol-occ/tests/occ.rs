//! The sol-occ test suite: one binary, one module per area (under `tests/occ/`).
//!
//! Run with `cargo test -p sol-occ`. Snapshots live in `tests/snapshots/`; the recorded Pi
//! messages and entries some modules read are in `fixtures/occ/`.

#[macro_use]
extern crate sol_testkit;

#[path = "occ/economics.rs"]
mod economics;
#[path = "occ/economics_props.rs"]
mod economics_props;
#[path = "occ/estimate.rs"]
mod estimate;
#[path = "occ/estimate_props.rs"]
mod estimate_props;
#[path = "occ/instructions.rs"]
mod instructions;
#[path = "occ/oracle.rs"]
mod oracle;
#[path = "occ/plan.rs"]
mod plan;
#[path = "occ/plan_props.rs"]
mod plan_props;
#[path = "occ/session.rs"]
mod session;
#[path = "occ/session_props.rs"]
mod session_props;
#[path = "occ/settings.rs"]
mod settings;
#[path = "occ/snapshots.rs"]
mod snapshots;
#[path = "occ/state.rs"]
mod state;
#[path = "occ/step.rs"]
mod step;
#[path = "occ/step_props.rs"]
mod step_props;
#[path = "occ/support.rs"]
mod support;
#[path = "occ/vocab_props.rs"]
mod vocab_props;

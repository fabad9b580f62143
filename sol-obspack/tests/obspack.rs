//! The sol-obspack test suite: one binary, one module per area (under `tests/obspack/`).
//!
//! Run with `cargo test -p sol-obspack`. Snapshots live in `tests/snapshots/`; the sample
//! logs are in `fixtures/obspack/` at the repository root.

/// Asserts a text snapshot stored under `tests/snapshots/`, whatever module it is called from.
macro_rules! assert_text_snapshot {
    ($name:expr, $text:expr) => {{
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!($name, $text));
    }};
}

#[path = "obspack/fixtures.rs"]
mod fixtures;
#[path = "obspack/identity.rs"]
mod identity;
#[path = "obspack/ledger.rs"]
mod ledger;
#[path = "obspack/placeholder.rs"]
mod placeholder;
#[path = "obspack/policy.rs"]
mod policy;
#[path = "obspack/props.rs"]
mod props;
#[path = "obspack/recall.rs"]
mod recall;
#[path = "obspack/search.rs"]
mod search;
#[path = "obspack/snapshots.rs"]
mod snapshots;
#[path = "obspack/store.rs"]
mod store;
#[path = "obspack/text.rs"]
mod text;

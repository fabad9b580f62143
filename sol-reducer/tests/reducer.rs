//! The sol-reducer test suite: one binary, one module per area (under `tests/reducer/`).
//!
//! Run with `cargo test -p sol-reducer`. Snapshots live in `tests/snapshots/`; the realistic
//! logs and scripted receipts are in `fixtures/reducer/` at the repository root.

/// Asserts a text snapshot stored under `tests/snapshots/`, whatever module it is called from.
macro_rules! assert_text_snapshot {
    ($name:expr, $text:expr) => {{
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!($name, $text));
    }};
}

/// Asserts a JSON snapshot stored under `tests/snapshots/` (keys in their own order).
macro_rules! assert_json_value_snapshot {
    ($name:expr, $value:expr) => {{
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_sort_maps(false);
        settings.bind(|| insta::assert_json_snapshot!($name, $value));
    }};
}

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
#[path = "reducer/exit.rs"]
mod exit;
#[path = "reducer/failure.rs"]
mod failure;
#[path = "reducer/fixtures.rs"]
mod fixtures;
#[path = "reducer/props.rs"]
mod props;
#[path = "reducer/receipt.rs"]
mod receipt;
#[path = "reducer/render.rs"]
mod render;
#[path = "reducer/secret.rs"]
mod secret;
#[path = "reducer/snapshots.rs"]
mod snapshots;
#[path = "reducer/source.rs"]
mod source;

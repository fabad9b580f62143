//! The sol-core test suite: one binary, one module per area (under `tests/core/`).
//!
//! Run with `cargo test -p sol-core --all-features`: the port tests and the `load_config`
//! tests use the in-memory doubles of the `testing` feature.

/// Asserts a text snapshot stored under `tests/snapshots/`, whatever module it is called from.
macro_rules! assert_text_snapshot {
    ($name:expr, $text:expr) => {{
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!($name, $text));
    }};
}

#[path = "core/config.rs"]
mod config;
#[path = "core/fixtures.rs"]
mod fixtures;
#[path = "core/ids.rs"]
mod ids;
#[path = "core/message.rs"]
mod message;
#[path = "core/props.rs"]
mod props;
#[path = "core/snapshots.rs"]
mod snapshots;

#[cfg(feature = "testing")]
#[path = "core/load.rs"]
mod load;
#[cfg(feature = "testing")]
#[path = "core/ports.rs"]
mod ports;

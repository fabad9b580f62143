//! The sol-napi test suite: one binary, one module per area (under `tests/host/`).
//!
//! These tests run the host side for real: `NativeFileSystem` on throw-away directories,
//! config loading through `load_config_outcome` as the extension calls it, and the
//! workspace rules that keep the pure crates pure. No Node is needed: napi is linked with
//! `dyn-symbols`, so only the JavaScript registration of the exports is inert here.

/// Asserts a text snapshot stored under `tests/snapshots/`, with every occurrence of the
/// temporary directory `$tmp` replaced by `[TMP]` so the snapshot is the same on every run.
macro_rules! assert_text_snapshot {
    ($name:expr, $text:expr, $tmp:expr) => {{
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.add_filter(&$crate::support::literal_pattern($tmp), "[TMP]");
        settings.bind(|| insta::assert_snapshot!($name, $text));
    }};
}

#[path = "host/support.rs"]
mod support;

#[path = "host/config.rs"]
mod config;
#[cfg(unix)]
#[path = "host/native_fs.rs"]
mod native_fs;
#[cfg(unix)]
#[path = "host/parity.rs"]
mod parity;
#[path = "host/snapshots.rs"]
mod snapshots;
#[path = "host/workspace_layout.rs"]
mod workspace_layout;

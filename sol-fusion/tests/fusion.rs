//! The sol-fusion test suite: one binary, one module per area (under `tests/fusion/`).
//!
//! Run with `cargo test -p sol-fusion`. Snapshots live in `tests/snapshots/`; the path and
//! `then_run` cases shared with the JavaScript host are in `fixtures/fusion/`.

/// Asserts a text snapshot stored under `tests/snapshots/`, whatever module it is called from.
macro_rules! assert_text_snapshot {
    ($name:expr, $text:expr) => {{
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!($name, $text));
    }};
}

#[path = "fusion/guard.rs"]
mod guard;
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

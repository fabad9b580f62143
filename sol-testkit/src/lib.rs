//! Test support shared by the test binaries of the SoL-Pi crates: the snapshot macros.
//!
//! Every crate keeps its snapshots in its own `tests/snapshots/` directory, named by the
//! snapshot alone (not by the module that asserts it), so a test can move between modules
//! without renaming its snapshot. Use it from a test binary's root with
//! `#[macro_use] extern crate sol_testkit;`; the macros are then in scope in every module.

#[doc(hidden)]
pub use insta;

/// Asserts a text snapshot stored under the calling crate's `tests/snapshots/`; each
/// `pattern => replacement` that follows is applied to the text first (a temporary
/// directory's path, say, so the snapshot is the same on every run).
#[macro_export]
macro_rules! assert_text_snapshot {
    ($name:expr, $text:expr $(, $pattern:expr => $replacement:expr)* $(,)?) => {{
        let mut settings = $crate::insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        $(settings.add_filter(&$pattern, $replacement);)*
        settings.bind(|| $crate::insta::assert_snapshot!($name, $text));
    }};
}

/// Asserts a JSON snapshot stored under the calling crate's `tests/snapshots/`, with the
/// keys of objects in their own order.
#[macro_export]
macro_rules! assert_json_value_snapshot {
    ($name:expr, $value:expr) => {{
        let mut settings = $crate::insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_sort_maps(false);
        settings.bind(|| $crate::insta::assert_json_snapshot!($name, $value));
    }};
}

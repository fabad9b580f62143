//! The sample results from `fixtures/obspack/`, and a few built ones.

use sol_obspack::{Observation, observe};

/// A failing `cargo test` run: 28,231 bytes, 487 lines, ends with LF.
pub(crate) const CARGO_TEST_LOG: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../fixtures/obspack/cargo-test.log"
));

/// Multi-byte prose: 20,005 bytes, 179 lines, no final LF.
pub(crate) const MULTIBYTE_TEXT: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../fixtures/obspack/multibyte-no-final-newline.txt"
));

/// The tool call id used for the fixtures.
pub(crate) const CALL_ID: &str = "toolu_01A9kqZ3";

/// The observation of `text` as a `bash` result of [`CALL_ID`].
pub(crate) fn bash(text: &str) -> Observation {
    observe("bash", CALL_ID, text)
}

/// One minified JSON line of about 12 KB with multi-byte names: no complete line fits
/// either excerpt, and no LF at all.
pub(crate) fn minified_json() -> String {
    let items: Vec<String> = (0..160)
        .map(|n| format!(r#"{{"id":{n},"name":"Größe-{n}-東京","tags":["α","β","🦀"],"ok":true}}"#))
        .collect();
    format!("[{}]", items.join(","))
}

#[test]
fn the_fixtures_have_the_documented_shape() {
    assert_eq!(CARGO_TEST_LOG.len(), 28_231);
    assert_eq!(CARGO_TEST_LOG.matches('\n').count(), 487);
    assert!(CARGO_TEST_LOG.ends_with('\n'));
    assert_eq!(MULTIBYTE_TEXT.len(), 20_005);
    assert_eq!(bash(MULTIBYTE_TEXT).lines, 179);
    assert!(!MULTIBYTE_TEXT.ends_with('\n'));
    let json = minified_json();
    assert!(
        json.len() > 10_240 && !json.contains('\n'),
        "{}",
        json.len()
    );
}

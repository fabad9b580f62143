//! Observation ids, sizes, token estimates and eligibility.

use sol_obspack::{
    ObservationId, RECEIPT_MARKER_LINE, RecallError, THRESHOLD_BYTES, count_lines, estimate_tokens,
    is_packable, observe,
};

use crate::fixtures::{CARGO_TEST_LOG, bash};

#[test]
fn the_id_hashes_tool_and_content_hash_with_a_nul_separator() {
    // Expected values computed independently with Python's hashlib:
    // sha256(b"bash\0" + content_hash.encode()).hexdigest()[:24].
    let obs = observe("bash", "call_1", "hello\n");
    assert_eq!(
        obs.content_hash,
        "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
    );
    assert_eq!(obs.id.as_str(), "obs_8cc4fdccd37f6db57e578b70");
    assert_eq!(
        bash(CARGO_TEST_LOG).content_hash,
        "5c183c89fad8a90e5db081b2b023fda5bb72a9a1bfaa8228547ec81f7b81afdc"
    );
    assert_eq!(
        bash(CARGO_TEST_LOG).id.as_str(),
        "obs_1daf50632a8fe086bcd67602"
    );
}

#[test]
fn the_id_changes_with_tool_and_content_never_with_the_call_id() {
    let base = observe("bash", "call_1", "hello\n");
    assert_ne!(observe("read", "call_1", "hello\n").id, base.id);
    assert_ne!(observe("bash", "call_1", "hello!\n").id, base.id);
    // Providers reuse ids (`call_0` every turn) or send none (""): the id ignores them.
    for call in ["call_2", "call_0", "", "toolu_01A9kqZ3"] {
        assert_eq!(observe("bash", call, "hello\n").id, base.id, "{call:?}");
    }
    // Two different texts under one reused call id stay apart.
    assert_ne!(
        observe("bash", "call_0", "hello\n").id,
        observe("bash", "call_0", "hallo\n").id
    );
}

#[test]
fn observe_records_its_inputs() {
    let obs = observe("grep", "call_7", "a\nb");
    assert_eq!(obs.tool_name, "grep");
    assert_eq!(obs.tool_call_id, "call_7");
    assert_eq!((obs.bytes, obs.lines, obs.tokens), (3, 2, 1));
}

#[test]
fn lines_count_line_feeds_and_an_unterminated_last_line() {
    assert_eq!(count_lines(b""), 0);
    assert_eq!(count_lines(b"\n"), 1);
    assert_eq!(count_lines(b"a"), 1);
    assert_eq!(count_lines(b"a\n"), 1);
    assert_eq!(count_lines(b"a\nb"), 2);
    assert_eq!(count_lines(b"\n\n\n"), 3);
    assert_eq!(count_lines(b"a\r\nb\r\n"), 2);
}

#[test]
fn tokens_are_utf16_units_over_four_rounded_up() {
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("abc"), 1);
    assert_eq!(estimate_tokens("abcd"), 1);
    assert_eq!(estimate_tokens("abcde"), 2);
    // 'a' 1 unit, '😀' 2 units (a surrogate pair), 'é' 1 unit: 4 units.
    assert_eq!(estimate_tokens("a😀é"), 1);
    assert_eq!(estimate_tokens("😀😀😀"), 2);
    // Bytes do not matter: 4 three-byte characters are 4 units.
    assert_eq!(estimate_tokens("東京東京"), 1);
}

#[test]
fn ids_are_obs_and_24_lower_case_hex_digits() {
    for good in [
        "obs_0123456789abcdef01234567",
        "obs_000000000000000000000000",
    ] {
        assert_eq!(
            ObservationId::parse(good).map(|id| id.to_string()),
            Ok(good.to_owned())
        );
    }
    for bad in [
        "",
        "obs_",
        "obs_0123456789abcdef0123456",
        "obs_0123456789abcdef012345678",
        "obs_0123456789ABCDEF01234567",
        "OBS_0123456789abcdef01234567",
        "obs-0123456789abcdef01234567",
        " obs_0123456789abcdef01234567",
        "obs_0123456789abcdef01234567\n",
        "obs_0123456789abcdeg01234567",
        "obs_٠١٢٣٤٥٦٧٨٩abcdef01234567",
        "../obs_0123456789abcdef01234567",
    ] {
        let error = ObservationId::parse(bad).expect_err(bad);
        assert_eq!(error.rejected_id(), bad);
        assert_eq!(error.code(), "unknown_id");
        assert_eq!(RecallError::from(error).code(), "unknown_id");
    }
}

#[test]
fn ids_cross_serde_as_strings_and_are_checked_on_the_way_in() {
    let id = ObservationId::parse("obs_0123456789abcdef01234567").expect("well-formed");
    let json = serde_json::to_string(&id).expect("serializes");
    assert_eq!(json, r#""obs_0123456789abcdef01234567""#);
    assert_eq!(
        serde_json::from_str::<ObservationId>(&json).ok(),
        Some(id.clone())
    );
    assert!(serde_json::from_str::<ObservationId>(r#""obs_nothex""#).is_err());
    assert_eq!(
        "obs_0123456789abcdef01234567".parse::<ObservationId>(),
        Ok(id)
    );
}

#[test]
fn only_results_strictly_over_the_threshold_are_packable() {
    let threshold = usize::try_from(THRESHOLD_BYTES).expect("fits");
    assert!(!is_packable(&"x".repeat(threshold)));
    assert!(is_packable(&"x".repeat(threshold + 1)));
    // Bytes, not characters: 3,414 three-byte characters are 10,242 bytes.
    assert!(is_packable(&"東".repeat(3_414)));
    assert!(!is_packable(""));
}

#[test]
fn a_reducer_receipt_is_never_packable() {
    let body = "x".repeat(11_000);
    assert!(!is_packable(&format!("{RECEIPT_MARKER_LINE}\n{body}")));
    assert!(!is_packable(&format!("{body}\n{RECEIPT_MARKER_LINE}")));
    assert!(!is_packable(&format!(
        "written\n[then_run:succeeded]\n{RECEIPT_MARKER_LINE}\n{body}"
    )));
    assert!(!is_packable(&format!(
        "{body}\r\n{RECEIPT_MARKER_LINE}\r\nsummary"
    )));
    // Only a whole line counts.
    assert!(is_packable(&format!("{body}\n {RECEIPT_MARKER_LINE}")));
    assert!(is_packable(&format!("{body}\n{RECEIPT_MARKER_LINE}_v2")));
    assert!(is_packable(&format!("{body} {RECEIPT_MARKER_LINE}")));
}

#[test]
fn the_fixture_log_is_packable() {
    assert!(is_packable(CARGO_TEST_LOG));
    let obs = bash(CARGO_TEST_LOG);
    assert_eq!((obs.bytes, obs.lines, obs.tokens), (28_231, 487, 7_058));
}

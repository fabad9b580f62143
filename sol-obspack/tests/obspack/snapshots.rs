//! Snapshots of every text a model or a person reads.

use camino::Utf8PathBuf;
use sol_core::{FsError, FsErrorKind};
use sol_obspack::{
    Damage, LedgerRecord, ObservationId, RecallError, StoreError, compact_placeholder_with,
    ledger_lines, observe, placeholder, recall_page, search_page, text,
};

use crate::fixtures::{CARGO_TEST_LOG, MULTIBYTE_TEXT, bash, minified_json};
use crate::recall::all_pages;

#[test]
fn placeholder_for_a_cargo_test_log() {
    assert_text_snapshot!(
        "placeholder_cargo_test_log",
        placeholder(&bash(CARGO_TEST_LOG), CARGO_TEST_LOG)
    );
}

#[test]
fn placeholder_for_multi_byte_text_without_final_newline() {
    assert_text_snapshot!(
        "placeholder_multibyte_no_final_newline",
        placeholder(&bash(MULTIBYTE_TEXT), MULTIBYTE_TEXT)
    );
}

#[test]
fn placeholder_when_no_complete_line_fits() {
    let json = minified_json();
    assert_text_snapshot!(
        "placeholder_no_complete_line_fits",
        placeholder(&observe("read", "toolu_01Read", &json), &json)
    );
}

#[test]
fn compact_placeholders_for_a_log_multi_byte_text_and_one_long_line() {
    let json = minified_json();
    let names = text::Names::default();
    let texts = [
        ("bash", CARGO_TEST_LOG.to_owned()),
        ("bash", MULTIBYTE_TEXT.to_owned()),
        ("read", json),
        ("bash", format!("\n\n  \t\n{}", "x\u{7}y ".repeat(40))),
    ];
    let shown: Vec<String> = texts
        .iter()
        .map(|(tool, text)| compact_placeholder_with(&observe(tool, "call_1", text), text, &names))
        .collect();
    assert_text_snapshot!("compact_placeholders", shown.join("\n---\n"));
}

/// The two header lines of every page of `text`.
fn headers(text: &str) -> String {
    let obs = bash(text);
    all_pages(&obs.id, text.as_bytes())
        .iter()
        .map(|page| page.text[..page.text.len() - page.chunk().len()].to_owned())
        .collect::<Vec<_>>()
        .join("---\n")
}

#[test]
fn recall_page_headers() {
    let text = format!(
        "cargo-test.log:\n{}\nmultibyte-no-final-newline.txt:\n{}",
        headers(CARGO_TEST_LOG),
        headers(MULTIBYTE_TEXT)
    );
    assert_text_snapshot!("recall_page_headers", text);
}

#[test]
fn recall_last_page_of_the_log() {
    let obs = bash(CARGO_TEST_LOG);
    let offset = CARGO_TEST_LOG.len() as u64 - 312;
    let page = recall_page(&obs.id, CARGO_TEST_LOG.as_bytes(), offset).expect("a page");
    assert_text_snapshot!("recall_last_page", page.text);
}

#[test]
fn search_pages() {
    let log = bash(CARGO_TEST_LOG);
    let multibyte = bash(MULTIBYTE_TEXT);
    let pages = [
        search_page(&log.id, CARGO_TEST_LOG.as_bytes(), "FAILED", 0),
        search_page(&log.id, CARGO_TEST_LOG.as_bytes(), "failures:\n\n", 0),
        search_page(&log.id, CARGO_TEST_LOG.as_bytes(), "test ", 20_000),
        search_page(&multibyte.id, MULTIBYTE_TEXT.as_bytes(), "🦀 rust", 0),
        search_page(&log.id, CARGO_TEST_LOG.as_bytes(), "no such text\0", 0),
    ];
    let texts: Vec<String> = pages
        .into_iter()
        .map(|page| page.expect("a page").text)
        .collect();
    assert_text_snapshot!("search_pages", texts.join("\n---\n"));
}

#[test]
fn error_messages() {
    let id = ObservationId::parse("obs_0123456789abcdef01234567").expect("well-formed");
    let fs_error = |kind, message: &str| {
        FsError::new(
            kind,
            Utf8PathBuf::from("/s/sol-pi/s1/observation-pack/ledger.jsonl"),
            message,
        )
    };
    let mut errors: Vec<(&str, String)> = vec![];
    for bad in [
        "obs_123",
        "../../etc/passwd",
        "obs_0123456789ABCDEF01234567\n",
        &"x".repeat(120),
    ] {
        let error = ObservationId::parse(bad).expect_err("malformed");
        errors.push((error.code(), error.to_string()));
    }
    let recall_errors = [
        RecallError::UnknownId { id: id.to_string() },
        RecallError::OffsetBeyondSize {
            offset: 40_000,
            size: 28_231,
        },
        RecallError::OffsetInsideCharacter {
            id: id.clone(),
            offset: 17,
            recall_tool: text::TOOL_NAME.to_owned(),
        },
        RecallError::InvalidOffset {
            offset: "1.5".to_owned(),
            recall_tool: text::TOOL_NAME.to_owned(),
        },
        RecallError::OutputTooLarge,
        RecallError::EmptyQuery,
        RecallError::QueryTooLong { bytes: 300 },
        RecallError::NotText { id: id.clone() },
        RecallError::DamagedNotRebuilt {
            id: id.clone(),
            damage: Damage::RecordMissing,
        },
    ];
    for error in recall_errors {
        errors.push((error.code(), error.to_string()));
    }
    let store_errors = [
        StoreError::DirectoryNotRegular {
            id: id.clone(),
            reason: "/work/session/sol-pi is a symbolic link, and links in SoL-Pi's storage path are refused".to_owned(),
        },
        StoreError::ObjectSymlink { id: id.clone() },
        StoreError::ObjectNotRegularFile { id: id.clone() },
        StoreError::Damaged {
            id: id.clone(),
            damage: Damage::RecordMissing,
        },
        StoreError::Damaged {
            id: id.clone(),
            damage: Damage::RecordInvalid {
                reason: "it describes another observation".to_owned(),
            },
        },
        StoreError::Damaged {
            id: id.clone(),
            damage: Damage::ObjectMissing,
        },
        StoreError::Damaged {
            id: id.clone(),
            damage: Damage::SizeMismatch {
                expected: 28_231,
                found: Some(1_000),
                unvouched: false,
            },
        },
        StoreError::Damaged {
            id: id.clone(),
            damage: Damage::SizeMismatch {
                expected: 28_231,
                found: None,
                unvouched: true,
            },
        },
        StoreError::Damaged {
            id: id.clone(),
            damage: Damage::HashMismatch,
        },
        StoreError::RecordInvalid {
            id: id.clone(),
            reason: "it describes another observation".to_owned(),
        },
        StoreError::ObservationMismatch { id: id.clone() },
        StoreError::Io {
            id: id.clone(),
            source: FsError::new(
                FsErrorKind::PermissionDenied,
                format!("/s/sol-pi/s1/observation-pack/objects/{id}.txt"),
                "permission denied",
            ),
        },
        StoreError::LedgerAppend {
            source: fs_error(FsErrorKind::SymlinkRefused, "refusing to follow a symlink"),
        },
    ];
    for error in store_errors {
        let wrapped = RecallError::Store(error.clone());
        assert_eq!(
            (wrapped.code(), wrapped.to_string()),
            (error.code(), error.to_string())
        );
        errors.push((error.code(), error.to_string()));
    }
    let text: Vec<String> = errors
        .iter()
        .map(|(code, message)| format!("{code}: {message}"))
        .collect();
    assert_text_snapshot!("error_messages", text.join("\n"));
}

#[test]
fn ledger_lines_of_each_event() {
    let obs = bash(CARGO_TEST_LOG);
    let replacement = placeholder(&obs, CARGO_TEST_LOG);
    let page = recall_page(&obs.id, CARGO_TEST_LOG.as_bytes(), 0).expect("a page");
    let search = search_page(&obs.id, CARGO_TEST_LOG.as_bytes(), "FAILED", 0).expect("a page");
    let records = [
        LedgerRecord::full(&obs, 1, 1),
        LedgerRecord::full(&obs, 2, 2),
        LedgerRecord::placeholder(&obs, 3, 3, &replacement),
        LedgerRecord::recall(&page.details),
        LedgerRecord::search(&search.details),
        LedgerRecord::repaired(
            &obs.id,
            &Damage::SizeMismatch {
                expected: 28_231,
                found: Some(0),
                unvouched: true,
            },
        ),
    ];
    assert_text_snapshot!(
        "ledger_lines",
        ledger_lines(&records, "2025-06-01T12:00:00.000Z")
    );
}

#[test]
fn tui_texts() {
    let texts = [
        text::savings_notice(6_791),
        text::status_text(6_791),
        text::savings_notice(1_234_567),
        text::badge_title(),
        text::recall_badge_saving(),
        text::recall_call_label("obs_0123456789abcdef01234567", 15_872),
        text::search_call_label("obs_0123456789abcdef01234567", "FAILED", 0),
        text::RECALL_PARTIAL_LABEL.to_owned(),
        text::recall_result_label(15_872, 398),
        text::search_result_label(3, 28_231),
        text::fail_open(
            "Content-addressed observation hash mismatch for obs_0123456789abcdef01234567",
        ),
        text::unavailable("SoL-Pi requires a persistent Pi session directory"),
    ];
    assert_text_snapshot!("tui_texts", texts.join("\n---\n"));
}

#[test]
fn tool_texts() {
    let texts = [
        format!("name: {}", text::TOOL_NAME),
        format!("label: {}", text::TOOL_LABEL),
        format!("description: {}", text::tool_description()),
        format!("prompt snippet: {}", text::prompt_snippet()),
        format!("id: {}", text::id_description()),
        format!("offset: {}", text::offset_description()),
        format!("query: {}", text::query_description()),
    ];
    assert_text_snapshot!("tool_texts", texts.join("\n"));
}

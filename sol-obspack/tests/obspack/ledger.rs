//! Ledger records and their JSON lines.

use sol_obspack::{LedgerRecord, ledger_lines, placeholder, recall_page, search_page};

use crate::fixtures::{CARGO_TEST_LOG, bash};

const STAMP: &str = "2025-06-01T12:00:00.000Z";

#[test]
fn every_line_starts_with_timestamp_and_event_then_fields_in_declared_order() {
    let obs = bash(CARGO_TEST_LOG);
    let text = placeholder(&obs, CARGO_TEST_LOG);
    let page = recall_page(&obs.id, CARGO_TEST_LOG.as_bytes(), 0).expect("a page");
    let search = search_page(&obs.id, CARGO_TEST_LOG.as_bytes(), "FAILED", 0).expect("a page");
    let records = [
        LedgerRecord::full(&obs, 1, 1),
        LedgerRecord::placeholder(&obs, 3, 3, &text),
        LedgerRecord::recall(&page.details),
        LedgerRecord::search(&search.details),
    ];
    let lines = ledger_lines(&records, STAMP);
    let keys: Vec<Vec<String>> = lines
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
            value
                .as_object()
                .expect("an object")
                .keys()
                .cloned()
                .collect()
        })
        .collect();
    let expected: [&[&str]; 4] = [
        &[
            "timestamp",
            "event",
            "id",
            "request",
            "sendNumber",
            "tool",
            "originalBytes",
            "originalLines",
            "originalTokens",
            "contentHash",
        ],
        &[
            "timestamp",
            "event",
            "id",
            "request",
            "sendNumber",
            "tool",
            "originalBytes",
            "originalLines",
            "originalTokens",
            "placeholderBytes",
            "placeholderTokens",
            "removedTokens",
        ],
        &[
            "timestamp",
            "event",
            "id",
            "offset",
            "bytes",
            "lines",
            "nextOffset",
            "eof",
        ],
        &[
            "timestamp",
            "event",
            "id",
            "offset",
            "queryBytes",
            "matches",
            "scannedBytes",
            "nextOffset",
            "eof",
        ],
    ];
    assert_eq!(
        keys,
        expected.map(|keys| keys.iter().map(|k| k.to_string()).collect::<Vec<_>>())
    );
    assert!(lines.ends_with('\n'));
    assert_eq!(lines.matches('\n').count(), 4);
}

#[test]
fn records_read_back_equal() {
    let obs = bash(CARGO_TEST_LOG);
    let text = placeholder(&obs, CARGO_TEST_LOG);
    let records = vec![
        LedgerRecord::full(&obs, 2, 2),
        LedgerRecord::placeholder(&obs, 4, 4, &text),
    ];
    let lines = ledger_lines(&records, STAMP);
    let read: Vec<LedgerRecord> = lines
        .lines()
        .map(|line| serde_json::from_str(line).expect("a record"))
        .collect();
    assert_eq!(read, records);
    assert_eq!(read[0].id(), &obs.id);
}

#[test]
fn the_placeholder_record_carries_the_savings() {
    let obs = bash(CARGO_TEST_LOG);
    let text = placeholder(&obs, CARGO_TEST_LOG);
    let LedgerRecord::Placeholder {
        placeholder_bytes,
        placeholder_tokens,
        removed_tokens,
        original_tokens,
        ..
    } = LedgerRecord::placeholder(&obs, 3, 3, &text)
    else {
        panic!("a placeholder record");
    };
    assert_eq!(placeholder_bytes, text.len() as u64);
    assert_eq!(original_tokens, obs.tokens);
    assert_eq!(removed_tokens, original_tokens - placeholder_tokens);
}

#[test]
fn no_records_no_text_and_the_timestamp_is_escaped() {
    assert_eq!(ledger_lines(&[], STAMP), "");
    let obs = bash(CARGO_TEST_LOG);
    let lines = ledger_lines(&[LedgerRecord::full(&obs, 1, 1)], "a\"b\nc");
    assert!(lines.starts_with(r#"{"timestamp":"a\"b\nc","#), "{lines}");
    assert_eq!(lines.matches('\n').count(), 1);
}

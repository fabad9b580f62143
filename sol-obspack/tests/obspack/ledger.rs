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

mod torn {
    use proptest::prelude::*;
    use sol_core::FileSystem;
    use sol_core::testing::MemoryFileSystem;
    use sol_obspack::store::ObservationStore;
    use sol_obspack::{LedgerRecord, ledger_lines, observe, read_ledger};

    const DIR: &str = "/sessions/s1/sol-pi/s1/observation-pack";

    fn record(request: u32) -> LedgerRecord {
        let obs = observe("bash", "call_1", &format!("{request}\n").repeat(6_000));
        LedgerRecord::full(&obs, request, 1)
    }

    /// The ledger after a crash cut its last record `keep` bytes in (`None`: only the LF lost),
    /// then one more batch appended through the store.
    fn torn_then_appended(keep: Option<usize>) -> (MemoryFileSystem, String, String) {
        let fs = MemoryFileSystem::new();
        let store = ObservationStore::new(&fs, DIR);
        store.append_ledger(&[record(1)], "t1").expect("first");
        store.append_ledger(&[record(2)], "t2").expect("second");
        let whole = fs.file(store.ledger_path()).expect("a ledger");
        let first_len = ledger_lines(&[record(1)], "t1").len();
        let cut = match keep {
            None => whole.len() - 1,
            Some(keep) => first_len + keep,
        };
        fs.replace_private(&store.ledger_path(), &whole[..cut])
            .expect("torn");
        store
            .append_ledger(&[record(3)], "t3")
            .expect("after the resume");
        let text =
            String::from_utf8(fs.file(store.ledger_path()).expect("a ledger")).expect("UTF-8");
        let second = ledger_lines(&[record(2)], "t2");
        (fs, text, second)
    }

    #[test]
    fn the_record_appended_after_a_lost_line_end_is_whole_and_both_read() {
        let (fs, text, _) = torn_then_appended(None);
        let read = read_ledger(&text);
        let stamps: Vec<&str> = read.entries.iter().map(|e| e.timestamp.as_str()).collect();
        assert_eq!(stamps, ["t1", "t2", "t3"], "nothing glued, nothing lost");
        assert!(read.skipped.is_empty());
        assert_eq!(read.entries[2].record, record(3));
        let through_store = ObservationStore::new(&fs, DIR)
            .read_ledger(1 << 20)
            .expect("read");
        assert_eq!(through_store, read);
    }

    #[test]
    fn a_record_cut_mid_way_is_skipped_and_the_next_one_reads() {
        let (_, text, _) = torn_then_appended(Some(30));
        let read = read_ledger(&text);
        let stamps: Vec<&str> = read.entries.iter().map(|e| e.timestamp.as_str()).collect();
        assert_eq!(stamps, ["t1", "t3"]);
        assert_eq!(read.skipped.len(), 1);
        assert_eq!(read.skipped[0].line, 2);
        assert!(read.skipped[0].reason.starts_with("not a ledger record: "));
        assert_eq!(read.entries[1].record, record(3));
    }

    #[test]
    fn no_ledger_reads_as_empty() {
        let fs = MemoryFileSystem::new();
        let read = ObservationStore::new(&fs, DIR)
            .read_ledger(1 << 20)
            .expect("read");
        assert!(read.entries.is_empty() && read.skipped.is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Wherever a crash cuts the last record, the records before it and every record
        /// appended after it read back exactly; at most the cut one is skipped.
        #[test]
        fn any_cut_loses_at_most_the_cut_record(at in any::<proptest::sample::Index>()) {
            let line = ledger_lines(&[record(2)], "t2");
            let keep = at.index(line.len());
            let (_, text, _) = torn_then_appended(Some(keep));
            let read = read_ledger(&text);
            let stamps: Vec<&str> = read.entries.iter().map(|e| e.timestamp.as_str()).collect();
            prop_assert!(read.skipped.len() <= 1);
            if read.skipped.is_empty() {
                // Nothing of the cut record was left (keep 0) or it only lost its LF.
                prop_assert!(stamps == ["t1", "t3"] || stamps == ["t1", "t2", "t3"], "{stamps:?}");
            } else {
                prop_assert_eq!(stamps, ["t1", "t3"]);
            }
            prop_assert_eq!(&read.entries.last().expect("t3").record, &record(3));
        }

        /// Any text reads without a panic; each line is a record or skipped, never both.
        #[test]
        fn any_text_reads(text in "(\\PC{0,40}\n?){0,6}") {
            let read = read_ledger(&text);
            let lines = text.split('\n').filter(|line| !line.trim().is_empty()).count();
            prop_assert_eq!(read.entries.len() + read.skipped.len(), lines);
        }
    }
}

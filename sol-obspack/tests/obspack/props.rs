//! Properties: exact reassembly, bounded pages, sound and complete search, determinism, no
//! panics on any input.

use proptest::prelude::*;
use proptest::sample::select;
use sol_core::testing::MemoryFileSystem;
use sol_obspack::store::{ObservationStore, StoreOutcome};
use sol_obspack::{
    LedgerRecord, ObservationId, RECALL_MAX_BYTES, RECALL_MAX_LINES, SendDecision, count_lines,
    decide, ledger_lines, observe, placeholder, recall_page, search_page, text,
};

const STORE: &str = "/sessions/s1/sol-pi/s1/observation-pack";

fn id() -> ObservationId {
    ObservationId::parse("obs_0123456789abcdef01234567").expect("well-formed")
}

/// Text made of pieces that stress the cuts: multi-byte characters of every width, line
/// feeds, CRLF, long runs without a line feed, and arbitrary characters.
fn tricky_text(max_pieces: usize) -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        8 => select(vec![
            "a", "line of log output\n", "\n", "\r\n", "é", "東京", "🦀", "👩\u{200d}💻", "\u{0}",
            "ok\n", "error: x\n",
        ])
        .prop_map(str::to_owned),
        // Long runs without a line feed, of characters of every width.
        1 => (100usize..700, select(vec!["a", "é", "東", "🦀"])).prop_map(|(n, c)| c.repeat(n)),
        1 => (10usize..60).prop_map(|n| "\n".repeat(n)),
        1 => "\\PC{0,8}",
    ];
    prop::collection::vec(piece, 0..max_pieces).prop_map(|pieces| pieces.concat())
}

fn small_alphabet_text() -> impl Strategy<Value = String> {
    prop::collection::vec(select(vec!["a", "b", "é", "\n", "ab", "ba"]), 0..3_000)
        .prop_map(|pieces| pieces.concat())
}

fn small_alphabet_query() -> impl Strategy<Value = String> {
    prop::collection::vec(select(vec!["a", "b", "é", "\n"]), 1..4)
        .prop_map(|pieces| pieces.concat())
}

/// Byte offsets of every (overlapping) occurrence of `query` in `text`.
fn naive_occurrences(text: &[u8], query: &[u8]) -> Vec<u64> {
    (0..text.len())
        .filter(|&at| text[at..].starts_with(query))
        .map(|at| at as u64)
        .collect()
}

fn assert_page_within_limits(text: &str) {
    assert!(text.len() <= RECALL_MAX_BYTES, "{} bytes", text.len());
    assert!(count_lines(text.as_bytes()) <= RECALL_MAX_LINES as u64);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// The compact placeholder has its three lines whatever the text, is small and a pure
    /// function of the text, and names the observation it stands for.
    #[test]
    fn compact_placeholders_keep_their_layout(text in tricky_text(2_500)) {
        let obs = observe("bash", "call", &text);
        let names = sol_obspack::text::Names::default();
        let shown = sol_obspack::compact_placeholder_with(&obs, &text, &names);
        prop_assert_eq!(&shown, &sol_obspack::compact_placeholder_with(&obs, &text, &names));
        let lines: Vec<&str> = shown.split('\n').collect();
        prop_assert_eq!(lines.len(), 3);
        prop_assert!(lines[0].starts_with("[tool output archived: "));
        prop_assert!(lines[1].starts_with("first line: "));
        prop_assert!(lines[1].len() <= "first line: ".len() + sol_obspack::placeholder::COMPACT_FIRST_LINE_BYTES);
        prop_assert!(!lines[1].chars().any(char::is_control));
        prop_assert!(lines[2].contains(obs.id.as_str()));
    }

    #[test]
    fn recall_pages_reassemble_the_original_exactly(text in tricky_text(2_500)) {
        let obs = observe("bash", "call", &text);
        let mut offset = 0;
        let mut joined: Vec<u8> = Vec::new();
        loop {
            let page = recall_page(&obs.id, text.as_bytes(), offset).expect("a page");
            assert_page_within_limits(&page.text);
            let chunk = page.chunk();
            prop_assert!(chunk.len() <= 15_872);
            prop_assert!(count_lines(chunk.as_bytes()) <= 398);
            prop_assert_eq!(page.details.bytes, chunk.len() as u64);
            prop_assert_eq!(page.details.lines, count_lines(chunk.as_bytes()));
            prop_assert_eq!(page.details.offset, offset);
            prop_assert_eq!(page.details.next_offset, offset + chunk.len() as u64);
            // The chunk is exactly the original bytes there, and a whole-character slice.
            let start = usize::try_from(offset).expect("fits");
            prop_assert_eq!(&text.as_bytes()[start..start + chunk.len()], chunk.as_bytes());
            prop_assert!(text.is_char_boundary(start + chunk.len()));
            joined.extend_from_slice(chunk.as_bytes());
            if page.details.eof {
                prop_assert_eq!(page.details.next_offset, text.len() as u64);
                break;
            }
            prop_assert!(!chunk.is_empty(), "a page before the end must make progress");
            offset = page.details.next_offset;
        }
        prop_assert_eq!(joined, text.as_bytes());
    }

    #[test]
    fn recall_never_panics_on_any_bytes_or_offset(
        bytes in prop::collection::vec(any::<u8>(), 0..40_000),
        offset in prop_oneof![any::<u64>(), 0u64..40_010],
    ) {
        if let Ok(page) = recall_page(&id(), &bytes, offset) {
            assert_page_within_limits(&page.text);
            prop_assert!(page.details.next_offset <= bytes.len() as u64);
        }
    }

    #[test]
    fn search_finds_exactly_the_occurrences_a_naive_scan_finds(
        text in small_alphabet_text(),
        query in small_alphabet_query(),
    ) {
        let mut offset = 0;
        let mut found = Vec::new();
        loop {
            let page = search_page(&id(), text.as_bytes(), &query, offset).expect("a page");
            assert_page_within_limits(&page.text);
            let details = &page.details;
            prop_assert!(details.matches.len() <= 20);
            prop_assert_eq!(details.scanned_bytes, details.next_offset - offset);
            for detail in &details.matches {
                let at = usize::try_from(detail.byte_offset).expect("fits");
                // A real occurrence, inside the page, with a true line number and context.
                prop_assert!(text.as_bytes()[at..].starts_with(query.as_bytes()));
                prop_assert!(detail.byte_offset >= offset && detail.byte_offset < details.next_offset);
                prop_assert_eq!(detail.line, 1 + text[..at].matches('\n').count() as u64);
                let (start, end) = (
                    usize::try_from(detail.context_start).expect("fits"),
                    usize::try_from(detail.context_end).expect("fits"),
                );
                prop_assert!(start <= at && at + query.len() <= end);
                prop_assert_eq!(&text[start..end], detail.context.as_str());
                found.push(detail.byte_offset);
            }
            if details.eof {
                prop_assert_eq!(details.next_offset, text.len() as u64);
                break;
            }
            prop_assert!(details.next_offset > offset, "a page before the end must advance");
            offset = details.next_offset;
        }
        prop_assert_eq!(found, naive_occurrences(text.as_bytes(), query.as_bytes()));
    }

    #[test]
    fn search_never_panics_on_any_bytes_query_or_offset(
        bytes in prop::collection::vec(any::<u8>(), 0..20_000),
        query in "\\PC{0,70}|[\\x00-\\x7f]{0,300}",
        offset in prop_oneof![any::<u64>(), 0u64..20_010],
    ) {
        if let Ok(page) = search_page(&id(), &bytes, &query, offset) {
            assert_page_within_limits(&page.text);
            for detail in &page.details.matches {
                let at = usize::try_from(detail.byte_offset).expect("fits");
                prop_assert!(bytes[at..].starts_with(query.as_bytes()));
            }
        }
    }

    #[test]
    fn placeholder_is_total_and_deterministic(
        text in tricky_text(1_500),
        tool in "\\PC{0,12}|[\\x00-\\x1f]{0,4}",
        call in "\\PC{0,12}",
    ) {
        let obs = observe(&tool, &call, &text);
        let first = placeholder(&obs, &text);
        prop_assert_eq!(&placeholder(&observe(&tool, &call, &text), &text), &first);
        prop_assert!(first.starts_with("[large tool result replaced after its first 2 provider requests]\n"));
        prop_assert!(first.ends_with(" original bytes omitted]"));
        // Seven fixed lines, whatever the tool name holds.
        let fixed: Vec<&str> = first.splitn(8, '\n').collect();
        prop_assert!(fixed[2].starts_with("tool: "));
        prop_assert!(fixed[6].starts_with("retrieve: call obs_recall with"));
        // Excerpts never exceed their budgets: the placeholder stays small.
        prop_assert!(first.len() <= 1_024 + 1_024 + tool.len() * 3);
    }

    #[test]
    fn observe_is_deterministic_and_consistent(
        text in tricky_text(400),
        call in "\\PC{0,16}",
        other_call in "\\PC{0,16}",
    ) {
        let obs = observe("bash", &call, &text);
        prop_assert_eq!(&observe("bash", &call, &text), &obs);
        // The identity is the content's: another (or a reused, or an empty) call id gives
        // the same id.
        prop_assert_eq!(&observe("bash", &other_call, &text).id, &obs.id);
        prop_assert!(ObservationId::parse(obs.id.as_str()).is_ok());
        prop_assert_eq!(obs.bytes, text.len() as u64);
        prop_assert_eq!(obs.lines, count_lines(text.as_bytes()));
        prop_assert_eq!(obs.tokens, (text.encode_utf16().count() as u64).div_ceil(4));
        prop_assert_eq!(obs.content_hash.len(), 64);
    }

    #[test]
    fn decide_sends_twice_then_replaces(prior in any::<u32>()) {
        match decide(prior) {
            SendDecision::Full { send_number } => {
                prop_assert!(prior < 2);
                prop_assert_eq!(send_number, prior + 1);
            }
            SendDecision::Replace { first_replacement } => {
                prop_assert!(prior >= 2);
                prop_assert_eq!(first_replacement, prior == 2);
            }
        }
    }

    #[test]
    fn counts_format_with_groups_of_three(n in any::<u64>()) {
        let shown = text::format_count(n);
        prop_assert_eq!(shown.replace(',', ""), n.to_string());
        let groups: Vec<&str> = shown.split(',').collect();
        prop_assert!(!groups[0].is_empty() && groups[0].len() <= 3);
        prop_assert!(groups[1..].iter().all(|group| group.len() == 3));
    }

    #[test]
    fn ledger_lines_read_back(tool in "\\PC{0,12}", stamp in "\\PC{0,30}", request in any::<u32>()) {
        let text = "x".repeat(11_000);
        let obs = observe(&tool, "call", &text);
        let records = vec![
            LedgerRecord::full(&obs, request, 1),
            LedgerRecord::placeholder(&obs, request, 3, &placeholder(&obs, &text)),
        ];
        let lines = ledger_lines(&records, &stamp);
        prop_assert_eq!(lines.matches('\n').count(), 2);
        for (line, record) in lines.lines().zip(&records) {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
            prop_assert_eq!(value["timestamp"].as_str(), Some(stamp.as_str()));
            let read: LedgerRecord = serde_json::from_str(line).expect("a record");
            prop_assert_eq!(&read, record);
        }
    }

    #[test]
    fn any_damage_heals_from_the_original_and_recall_never_returns_other_bytes(
        body in tricky_text(200),
        object_damage in 0u8..5,
        record_damage in 0u8..3,
        at in any::<proptest::sample::Index>(),
    ) {
        let text = format!("{body}{}", "padding line of a large result\n".repeat(340));
        let obs = observe("bash", "call_0", &text);
        let clean = MemoryFileSystem::new();
        ObservationStore::new(&clean, STORE).ensure_stored(&obs, &text).expect("stored");
        let store = ObservationStore::new(&clean, STORE);
        let (object, record) = (store.object_path(&obs.id), store.record_path(&obs.id));
        let original_record = clean.file(&record).expect("a record");

        // Rebuild the files as a crash or a hand edit could leave them.
        let mut fs = MemoryFileSystem::new().with_dir(format!("{STORE}/objects"));
        let cut = at.index(text.len());
        let mut flipped = text.clone().into_bytes();
        flipped[cut] ^= 0x01;
        let damaged_object: Option<Vec<u8>> = match object_damage {
            0 => Some(text.clone().into_bytes()),
            1 => Some(text.as_bytes()[..cut].to_vec()),
            2 => Some(flipped),
            3 => Some(format!("{text}junk").into_bytes()),
            _ => None,
        };
        if let Some(bytes) = &damaged_object {
            fs = fs.with_file(&object, bytes.clone());
        }
        match record_damage {
            0 => fs = fs.with_file(&record, original_record.clone()),
            1 => {}
            _ => fs = fs.with_file(&record, &b"{\"id\": tru"[..]),
        }
        let store = ObservationStore::new(&fs, STORE);
        if let Ok(bytes) = store.read_verified(&obs.id) {
            prop_assert_eq!(bytes, text.as_bytes(), "only the exact original is ever returned");
        }
        let intact = object_damage == 0 && record_damage == 0;
        let outcome = store.ensure_stored(&obs, &text).expect("healed");
        prop_assert_eq!(intact, outcome == StoreOutcome::Reused, "{:?}", outcome);
        let nothing_there = damaged_object.is_none() && record_damage == 1;
        prop_assert_eq!(nothing_there, outcome == StoreOutcome::Created, "{:?}", outcome);
        prop_assert_eq!(store.read_verified(&obs.id).expect("verified"), text.as_bytes());
        prop_assert_eq!(fs.file(&record), Some(original_record));
        // A rebuilt object is private; an intact one is left as it was.
        let expected_mode = if object_damage == 0 { 0o644 } else { 0o600 };
        prop_assert_eq!(fs.mode(&object), Some(expected_mode));
    }
}

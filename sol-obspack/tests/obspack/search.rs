//! Literal search: matches, overlap, paging, context and errors.

use sol_obspack::{MatchDetail, ObservationId, RecallError, SearchPage, search_page};

use crate::fixtures::{CARGO_TEST_LOG, MULTIBYTE_TEXT, bash};

fn id() -> ObservationId {
    ObservationId::parse("obs_0123456789abcdef01234567").expect("well-formed")
}

/// Every page of matches of `query` in `text`, from offset 0 until eof.
pub(crate) fn all_search_pages(id: &ObservationId, text: &[u8], query: &str) -> Vec<SearchPage> {
    let mut pages = Vec::new();
    let mut offset = 0;
    loop {
        let page = search_page(id, text, query, offset).expect("a page");
        let done = page.details.eof;
        offset = page.details.next_offset;
        pages.push(page);
        if done {
            return pages;
        }
        assert!(pages.len() < 100_000, "search does not advance");
    }
}

fn offsets(pages: &[SearchPage]) -> Vec<u64> {
    pages
        .iter()
        .flat_map(|page| page.details.matches.iter().map(|m| m.byte_offset))
        .collect()
}

#[test]
fn a_search_reports_line_offset_and_the_line_around_the_match() {
    let text = "first line\nsecond: error here\nthird\n";
    let page = search_page(&id(), text.as_bytes(), "error", 0).expect("a page");
    assert_eq!(
        page.details.matches,
        [MatchDetail {
            byte_offset: 19,
            line: 2,
            context_start: 11,
            context_end: 29,
            context: "second: error here".to_owned(),
        }]
    );
    assert!(page.details.eof);
    assert_eq!(page.details.next_offset, text.len() as u64);
    assert_eq!(page.details.scanned_bytes, text.len() as u64);
    assert_eq!(
        page.text,
        "[obs_recall id=obs_0123456789abcdef01234567 query=\"error\" offset=0 next_offset=36 eof=true matches=1]\n\
         [scanned_bytes=36; one match per line: line <n> byte <offset>: <context as a JSON string>; use next_offset with the same query to continue]\n\
         line 2 byte 19: \"second: error here\""
    );
}

#[test]
fn the_search_is_case_sensitive_and_literal() {
    let text = "Error error ERROR e.r.r.o.r err.r";
    let page = search_page(&id(), text.as_bytes(), "error", 0).expect("a page");
    assert_eq!(page.details.matches.len(), 1);
    let page = search_page(&id(), text.as_bytes(), "err.r", 0).expect("a page");
    assert_eq!(page.details.matches.len(), 1);
    assert_eq!(page.details.matches[0].byte_offset, 28);
}

#[test]
fn matches_may_overlap() {
    let page = search_page(&id(), b"aaaa", "aa", 0).expect("a page");
    let found: Vec<u64> = page.details.matches.iter().map(|m| m.byte_offset).collect();
    assert_eq!(found, [0, 1, 2]);
    let page = search_page(&id(), "ééé".as_bytes(), "éé", 0).expect("a page");
    let found: Vec<u64> = page.details.matches.iter().map(|m| m.byte_offset).collect();
    assert_eq!(found, [0, 2]);
}

#[test]
fn queries_may_hold_spaces_nul_and_line_breaks() {
    let text = "a\0b\nfailures:\n\n    ledger::x\n  two  spaces";
    for (query, at, line) in [("\0b", 1, 1), ("failures:\n\n", 4, 2), ("  two  ", 29, 5)] {
        let page = search_page(&id(), text.as_bytes(), query, 0).expect("a page");
        assert_eq!(page.details.matches.len(), 1, "{query:?}");
        assert_eq!(page.details.matches[0].byte_offset, at, "{query:?}");
        assert_eq!(page.details.matches[0].line, line, "{query:?}");
        // One line per match, whatever the context holds.
        assert_eq!(page.text.matches('\n').count(), 2, "{}", page.text);
    }
}

#[test]
fn a_line_feed_belongs_to_the_line_it_ends() {
    let page = search_page(&id(), b"one\ntwo\n", "\n", 0).expect("a page");
    let lines: Vec<u64> = page.details.matches.iter().map(|m| m.line).collect();
    assert_eq!(lines, [1, 2]);
}

#[test]
fn context_is_clipped_to_80_bytes_each_side_within_the_lines() {
    let text = format!("{}NEEDLE{}\nnext", "a".repeat(200), "b".repeat(200));
    let page = search_page(&id(), text.as_bytes(), "NEEDLE", 0).expect("a page");
    let found = &page.details.matches[0];
    assert_eq!((found.context_start, found.context_end), (120, 286));
    assert_eq!(
        found.context,
        format!("{}NEEDLE{}", "a".repeat(80), "b".repeat(80))
    );

    // Multi-byte characters at the edges are left out whole, never split.
    let text = format!("{}NEEDLE{}", "é".repeat(100), "東".repeat(100));
    let page = search_page(&id(), text.as_bytes(), "NEEDLE", 0).expect("a page");
    let found = &page.details.matches[0];
    assert_eq!(
        found.context,
        format!("{}NEEDLE{}", "é".repeat(40), "東".repeat(26))
    );
}

#[test]
fn twenty_matches_per_page_and_next_offset_is_the_first_unreported_match() {
    let text = "hit\n".repeat(45);
    let pages = all_search_pages(&id(), text.as_bytes(), "hit");
    let counts: Vec<usize> = pages.iter().map(|p| p.details.matches.len()).collect();
    assert_eq!(counts, [20, 20, 5]);
    assert_eq!(pages[0].details.next_offset, 80);
    assert!(!pages[0].details.eof && !pages[1].details.eof && pages[2].details.eof);
    assert_eq!(pages[1].details.matches[0].line, 21);
    let expected: Vec<u64> = (0..45).map(|n| n * 4).collect();
    assert_eq!(offsets(&pages), expected);
    // Exactly 20 matches: the first page already knows it is the last.
    let text = "hit\n".repeat(20);
    let pages = all_search_pages(&id(), text.as_bytes(), "hit");
    assert_eq!(pages.len(), 1);
    assert!(pages[0].details.eof);
}

#[test]
fn the_byte_limit_ends_a_page_before_twenty_matches() {
    // Each match context is a JSON string full of escapes: about 1 KB per match line.
    let line = format!("{}X{}\n", "\u{1}".repeat(80), "\u{1}".repeat(80));
    let text = line.repeat(40);
    let pages = all_search_pages(&id(), text.as_bytes(), "X");
    assert!(
        pages[0].details.matches.len() < 20,
        "{}",
        pages[0].details.matches.len()
    );
    for page in &pages {
        assert!(page.text.len() <= 16_384, "{}", page.text.len());
    }
    assert_eq!(offsets(&pages).len(), 40);
}

#[test]
fn the_fixture_log_search_finds_every_failure() {
    let obs = bash(CARGO_TEST_LOG);
    let pages = all_search_pages(&obs.id, CARGO_TEST_LOG.as_bytes(), "FAILED");
    let found = offsets(&pages);
    let expected: Vec<u64> = CARGO_TEST_LOG
        .match_indices("FAILED")
        .map(|(at, _)| at as u64)
        .collect();
    assert_eq!(found, expected);
    assert_eq!(found.len(), 3);
}

#[test]
fn searching_multi_byte_text_from_an_offset_numbers_lines_from_the_start() {
    let obs = bash(MULTIBYTE_TEXT);
    let offset = MULTIBYTE_TEXT.find("0100 · ").expect("line 100") as u64;
    let page = search_page(&obs.id, MULTIBYTE_TEXT.as_bytes(), "🦀", offset).expect("a page");
    let first = &page.details.matches[0];
    assert!(first.byte_offset >= offset);
    assert_eq!(first.line, 104);
    assert!(
        first.context.starts_with("0104 · Emoji status"),
        "{}",
        first.context
    );
}

#[test]
fn bad_queries_and_offsets_are_refused() {
    let text = "aé".repeat(10);
    let error = search_page(&id(), text.as_bytes(), "", 0).expect_err("empty");
    assert_eq!(error, RecallError::EmptyQuery);
    let long = "q".repeat(257);
    let error = search_page(&id(), text.as_bytes(), &long, 0).expect_err("too long");
    assert_eq!(error, RecallError::QueryTooLong { bytes: 257 });
    assert!(search_page(&id(), text.as_bytes(), &"q".repeat(256), 0).is_ok());
    // 86 three-byte characters are 258 bytes.
    let error = search_page(&id(), text.as_bytes(), &"東".repeat(86), 0).expect_err("bytes");
    assert_eq!(error.code(), "query_too_long");
    let error = search_page(&id(), text.as_bytes(), "a", 31).expect_err("past the end");
    assert_eq!(error.code(), "offset_beyond_size");
    let error = search_page(&id(), text.as_bytes(), "a", 2).expect_err("inside é");
    assert_eq!(error.code(), "offset_inside_character");
    let error = search_page(&id(), b"\xc3", "a", 0).expect_err("not text");
    assert_eq!(error.code(), "not_text");
}

#[test]
fn a_search_from_the_end_is_an_empty_final_page() {
    let page = search_page(&id(), b"abc", "b", 3).expect("a page");
    assert!(page.details.matches.is_empty());
    assert!(page.details.eof);
    assert_eq!(page.details.scanned_bytes, 0);
    let page = search_page(&id(), b"abc", "zzz", 0).expect("a page");
    assert!(page.details.matches.is_empty() && page.details.eof);
}

#[test]
fn search_details_serialize_in_camel_case() {
    let page = search_page(&id(), b"ab\nab", "b", 0).expect("a page");
    let json = serde_json::to_value(&page.details).expect("serializes");
    assert_eq!(
        json,
        serde_json::json!({
            "id": "obs_0123456789abcdef01234567",
            "query": "b",
            "offset": 0,
            "matches": [
                {"byteOffset": 1, "line": 1, "contextStart": 0, "contextEnd": 2, "context": "ab"},
                {"byteOffset": 4, "line": 2, "contextStart": 3, "contextEnd": 5, "context": "ab"}
            ],
            "scannedBytes": 5,
            "nextOffset": 5,
            "eof": true
        })
    );
}

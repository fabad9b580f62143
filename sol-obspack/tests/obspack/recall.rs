//! Paged recall over the fixtures and at the edges.

use sol_obspack::{ObservationId, RecallError, RecallPage, recall_page};

use crate::fixtures::{CARGO_TEST_LOG, MULTIBYTE_TEXT, bash};

/// Every page of `text`, from offset 0 until eof.
pub(crate) fn all_pages(id: &ObservationId, text: &[u8]) -> Vec<RecallPage> {
    let mut pages = Vec::new();
    let mut offset = 0;
    loop {
        let page = recall_page(id, text, offset).expect("a page");
        let done = page.details.eof;
        offset = page.details.next_offset;
        pages.push(page);
        if done {
            return pages;
        }
        assert!(pages.len() < 10_000, "recall does not advance");
    }
}

fn id() -> ObservationId {
    ObservationId::parse("obs_0123456789abcdef01234567").expect("well-formed")
}

#[test]
fn the_log_comes_back_exactly_in_two_pages() {
    let obs = bash(CARGO_TEST_LOG);
    let pages = all_pages(&obs.id, CARGO_TEST_LOG.as_bytes());
    assert_eq!(pages.len(), 2);
    let first = &pages[0].details;
    assert_eq!(first.offset, 0);
    // ASCII lines of about 58 bytes: the byte budget ends the page before 398 lines do.
    assert_eq!(first.bytes, 15_872);
    assert!(first.lines < 398);
    assert!(!first.eof);
    assert_eq!(pages[1].details.offset, first.next_offset);
    assert!(pages[1].details.eof);
    assert_eq!(pages[1].details.next_offset, CARGO_TEST_LOG.len() as u64);
    let joined: String = pages.iter().map(RecallPage::chunk).collect();
    assert_eq!(joined, CARGO_TEST_LOG);
}

#[test]
fn short_lines_end_a_page_after_398_lines() {
    let text = "test ledger::ok ... ok\n".repeat(1_000);
    let pages = all_pages(&id(), text.as_bytes());
    let lines: Vec<u64> = pages.iter().map(|page| page.details.lines).collect();
    assert_eq!(lines, [398, 398, 204]);
    assert!(pages.iter().all(|page| page.chunk().ends_with('\n')));
    assert_eq!(pages[0].details.bytes, 398 * 23);
    assert_eq!(pages[0].text.matches('\n').count(), 400);
}

#[test]
fn multi_byte_text_is_cut_on_character_boundaries() {
    let obs = bash(MULTIBYTE_TEXT);
    let pages = all_pages(&obs.id, MULTIBYTE_TEXT.as_bytes());
    assert_eq!(pages.len(), 2);
    let first = &pages[0].details;
    assert!(
        first.bytes <= 15_872 && first.bytes >= 15_869,
        "{}",
        first.bytes
    );
    let cut = usize::try_from(first.next_offset).expect("fits");
    assert!(MULTIBYTE_TEXT.is_char_boundary(cut));
    let last = &pages[1];
    assert!(last.details.eof);
    assert!(!last.chunk().ends_with('\n'));
    // The last line has no LF and still counts.
    assert_eq!(
        last.details.lines,
        last.chunk().matches('\n').count() as u64 + 1
    );
    let joined: String = pages.iter().map(RecallPage::chunk).collect();
    assert_eq!(joined, MULTIBYTE_TEXT);
}

#[test]
fn a_page_has_two_header_lines_then_the_chunk() {
    let text = "alpha\nbeta\ngamma";
    let page = recall_page(&id(), text.as_bytes(), 6).expect("a page");
    assert_eq!(
        page.text,
        "[obs_recall id=obs_0123456789abcdef01234567 offset=6 next_offset=16 eof=true]\n\
         [chunk_bytes=10 chunk_lines=2; use next_offset to continue]\n\
         beta\ngamma"
    );
    assert_eq!(page.chunk(), "beta\ngamma");
    let details = serde_json::to_value(&page.details).expect("serializes");
    assert_eq!(
        details,
        serde_json::json!({
            "id": "obs_0123456789abcdef01234567",
            "offset": 6, "bytes": 10, "lines": 2, "nextOffset": 16, "eof": true
        })
    );
}

#[test]
fn the_offset_at_the_end_gives_an_empty_final_page() {
    let text = "x".repeat(20_000);
    let page = recall_page(&id(), text.as_bytes(), 20_000).expect("a page");
    assert_eq!(page.chunk(), "");
    assert_eq!(
        (
            page.details.bytes,
            page.details.lines,
            page.details.next_offset,
            page.details.eof
        ),
        (0, 0, 20_000, true)
    );
    assert!(
        page.text
            .ends_with("chunk_lines=0; use next_offset to continue]\n")
    );
    let empty = recall_page(&id(), b"", 0).expect("a page");
    assert!(empty.details.eof);
}

#[test]
fn an_offset_past_the_end_is_refused() {
    let error = recall_page(&id(), b"abc", 4).expect_err("past the end");
    assert_eq!(error, RecallError::OffsetBeyondSize { offset: 4, size: 3 });
    assert_eq!(error.to_string(), "Offset 4 exceeds observation size 3");
    assert_eq!(error.code(), "offset_beyond_size");
    let error = recall_page(&id(), b"abc", u64::MAX).expect_err("far past the end");
    assert_eq!(error.code(), "offset_beyond_size");
}

#[test]
fn an_offset_inside_a_character_is_refused() {
    let text = "aé";
    let error = recall_page(&id(), text.as_bytes(), 2).expect_err("inside é");
    assert_eq!(error.code(), "offset_inside_character");
    assert!(recall_page(&id(), text.as_bytes(), 1).is_ok());
    assert!(recall_page(&id(), text.as_bytes(), 3).is_ok());
}

#[test]
fn bytes_that_are_not_utf8_are_refused() {
    let error = recall_page(&id(), b"ok\xff\xfe", 0).expect_err("not text");
    assert_eq!(error.code(), "not_text");
}

#[test]
fn a_page_never_exceeds_the_hard_limits() {
    let cases = [
        "\n".repeat(5_000),
        "é".repeat(30_000),
        "🦀\n".repeat(3_000),
        "x".repeat(15_871) + "東京",
        CARGO_TEST_LOG.repeat(3),
    ];
    for text in cases {
        let pages = all_pages(&id(), text.as_bytes());
        for page in &pages {
            assert!(page.text.len() <= 16_384, "{}", page.text.len());
            assert!(page.text.matches('\n').count() <= 400);
            assert!(page.details.bytes <= 15_872 && page.details.lines <= 398);
        }
        let joined: String = pages.iter().map(RecallPage::chunk).collect();
        assert_eq!(joined, text);
    }
}

#[test]
fn a_chunk_full_of_line_feeds_stops_after_exactly_398() {
    let text = "\n".repeat(1_000);
    let page = recall_page(&id(), text.as_bytes(), 0).expect("a page");
    assert_eq!((page.details.bytes, page.details.lines), (398, 398));
    assert_eq!(page.text.matches('\n').count(), 400);
}

#[test]
fn the_byte_budget_moves_back_to_the_start_of_a_split_character() {
    // 15,871 ASCII bytes, then a 4-byte character straddling the 15,872-byte budget.
    let text = "x".repeat(15_871) + "🦀" + "tail";
    let page = recall_page(&id(), text.as_bytes(), 0).expect("a page");
    assert_eq!(page.details.next_offset, 15_871);
    let next = recall_page(&id(), text.as_bytes(), 15_871).expect("a page");
    assert_eq!(next.chunk(), "🦀tail");
}

mod offsets {
    use proptest::prelude::*;
    use sol_obspack::{MAX_OFFSET, Names, RecallError, parse_offset};

    fn refused(offset: f64) -> String {
        match parse_offset(Some(offset), &Names::default()) {
            Err(error @ RecallError::InvalidOffset { .. }) => error.to_string(),
            other => panic!("{offset:?} was not refused: {other:?}"),
        }
    }

    #[test]
    fn fractions_and_tiny_numbers_are_refused_not_rounded() {
        assert_eq!(
            refused(1.5),
            "Offset 1.5 is not a byte offset: give a whole number from 0 to 9007199254740991, \
             such as 0 or a next_offset returned by obs_recall"
        );
        assert!(refused(1e-300).starts_with("Offset 1e-300 is not a byte offset"));
        assert!(refused(-1.0).starts_with("Offset -1 is not a byte offset"));
        assert!(refused(f64::NAN).starts_with("Offset NaN is not"));
        assert!(refused(f64::INFINITY).starts_with("Offset inf is not"));
        assert!(refused(1e300).starts_with("Offset 1e300 is not"));
        assert!(refused(MAX_OFFSET as f64 + 1.0).starts_with("Offset 9007199254740992 is not"));
        let named = parse_offset(Some(0.5), &Names::new("recall_original").expect("a name"));
        assert!(
            named
                .expect_err("refused")
                .to_string()
                .ends_with("returned by recall_original")
        );
    }

    #[test]
    fn absent_zero_and_whole_numbers_are_offsets() {
        let names = Names::default();
        assert_eq!(parse_offset(None, &names), Ok(0));
        assert_eq!(parse_offset(Some(0.0), &names), Ok(0));
        assert_eq!(parse_offset(Some(-0.0), &names), Ok(0));
        assert_eq!(parse_offset(Some(15_872.0), &names), Ok(15_872));
        assert_eq!(
            parse_offset(Some(MAX_OFFSET as f64), &names),
            Ok(MAX_OFFSET)
        );
    }

    proptest! {
        /// Every whole number in range is accepted exactly.
        #[test]
        fn whole_numbers_round_trip(n in 0..=MAX_OFFSET) {
            prop_assert_eq!(parse_offset(Some(n as f64), &Names::default()), Ok(n));
        }

        /// Any double is an offset only when it is that very whole number; anything else is
        /// refused, never rounded, and the error names the offset and the tool.
        #[test]
        fn any_double_is_the_offset_it_is_or_refused(bits in any::<u64>()) {
            let value = f64::from_bits(bits);
            match parse_offset(Some(value), &Names::default()) {
                Ok(offset) => {
                    prop_assert!(offset <= MAX_OFFSET);
                    prop_assert!(offset as f64 == value, "{value:?} became {offset}");
                }
                Err(error) => {
                    prop_assert_eq!(error.code(), "invalid_offset");
                    prop_assert!(!(value.fract() == 0.0 && (0.0..=MAX_OFFSET as f64).contains(&value)));
                    prop_assert!(error.to_string().contains("obs_recall"));
                }
            }
        }

        /// Fractions between whole numbers are refused.
        #[test]
        fn fractions_are_refused(n in 0..MAX_OFFSET / 2, frac in 0.001f64..0.999) {
            prop_assert!(parse_offset(Some(n as f64 + frac), &Names::default()).is_err() || (n as f64 + frac).fract() == 0.0);
        }
    }
}

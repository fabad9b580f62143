//! The texts a person sees and the tool texts the model reads.

use sol_obspack::text;

#[test]
fn counts_use_en_us_thousands_separators() {
    for (n, shown) in [
        (0, "0"),
        (7, "7"),
        (999, "999"),
        (1_000, "1,000"),
        (12_345, "12,345"),
        (999_999, "999,999"),
        (1_000_000, "1,000,000"),
        (u64::MAX, "18,446,744,073,709,551,615"),
    ] {
        assert_eq!(text::format_count(n), shown);
    }
}

#[test]
fn the_notice_and_status_name_the_saving() {
    assert_eq!(
        text::savings_notice(6_791),
        "\u{26A1} SoL-Pi \u{00B7} Observation Pack\nMoney saved \u{00B7} 6,791 context tokens avoided"
    );
    assert_eq!(
        text::status_text(6_791),
        "\u{26A1} Observation Pack \u{00B7} 6,791 context tokens avoided"
    );
    assert_eq!(text::tokens_saving(0), "0 context tokens avoided");
}

#[test]
fn the_recall_badge_and_labels() {
    assert_eq!(text::badge_title(), "⚡ SoL-Pi · Observation Pack");
    assert_eq!(
        text::recall_badge_saving(),
        "Money saved · full observation replay avoided"
    );
    assert_eq!(
        text::recall_call_label("obs_0123456789abcdef01234567", 0),
        "Recall obs_0123456789abcdef01234567 from byte 0"
    );
    assert_eq!(
        text::recall_call_label("bad\nid", 5),
        "Recall bad id from byte 5"
    );
    assert_eq!(
        text::recall_result_label(15_872, 398),
        "Recalled 15872 bytes across 398 lines"
    );
    assert_eq!(
        text::RECALL_PARTIAL_LABEL,
        "Recalling the requested slice..."
    );
    assert_eq!(
        text::search_call_label("obs_0123456789abcdef01234567", "a\"b\n", 12),
        "Search obs_0123456789abcdef01234567 for \"a\\\"b\\n\" from byte 12"
    );
    assert_eq!(
        text::search_result_label(1, 30),
        "Found 1 match in 30 bytes"
    );
    assert_eq!(
        text::search_result_label(20, 4_096),
        "Found 20 matches in 4096 bytes"
    );
}

#[test]
fn the_tool_texts_mention_what_the_model_needs() {
    assert_eq!(text::TOOL_NAME, "obs_recall");
    assert_eq!(text::TOOL_LABEL, "Recall Observation");
    let description = text::tool_description();
    for needle in [
        "id",
        "offset",
        "next_offset",
        "eof",
        "query",
        "case-sensitive",
        "15872",
        "398",
        "20",
    ] {
        assert!(description.contains(needle), "{needle}: {description}");
    }
    assert!(text::offset_description().contains("next_offset"));
    assert!(text::query_description().contains("256"));
    assert!(text::id_description().contains("obs_"));
    assert!(!text::prompt_snippet().contains('\n'));
}

#[test]
fn fail_open_messages_stay_on_one_line() {
    assert_eq!(
        text::fail_open(
            "Content-addressed observation hash mismatch for obs_0123456789abcdef01234567"
        ),
        "SoL-Pi ObservationPack [observationpack] fail-open: Content-addressed observation hash mismatch for obs_0123456789abcdef01234567; the result is sent in full and nothing is lost"
    );
    assert_eq!(
        text::fail_open("a\nb"),
        "SoL-Pi ObservationPack [observationpack] fail-open: a b; the result is sent in full and nothing is lost"
    );
    let message = text::unavailable("SoL-Pi requires a safe Pi session id");
    assert!(message.starts_with(
        "SoL-Pi ObservationPack [observationpack] fail-open: no storage directory for this session ("
    ));
    assert!(!text::unavailable("x\ny").contains('\n'));
}

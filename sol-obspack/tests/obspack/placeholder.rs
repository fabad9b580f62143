//! The placeholder layout, its excerpts and its token counts.

use sol_obspack::{observe, placeholder, placeholder_tokens, removed_tokens};

use crate::fixtures::{CARGO_TEST_LOG, MULTIBYTE_TEXT, bash, minified_json};

/// The parts of a placeholder after its seven fixed lines.
struct Parts {
    fixed: Vec<String>,
    head_header: String,
    head: String,
    tail_header: String,
    tail: String,
    omitted: u64,
}

fn split(text: &str) -> Parts {
    let mut lines = text.splitn(9, '\n');
    let fixed: Vec<String> = lines.by_ref().take(7).map(str::to_owned).collect();
    let head_header = lines.next().expect("head header").to_owned();
    let rest = lines.next().expect("rest");
    let (head, rest) = rest.split_once("\n[middle omitted; ").expect("tail header");
    let (tail_header_rest, rest) = rest.split_once('\n').expect("tail");
    let (tail, last) = rest.rsplit_once('\n').expect("omitted line");
    let omitted = last
        .strip_prefix('[')
        .and_then(|line| line.strip_suffix(" original bytes omitted]"))
        .expect("omitted line")
        .parse()
        .expect("a number");
    Parts {
        fixed,
        head_header,
        head: head.to_owned(),
        tail_header: format!("[middle omitted; {tail_header_rest}"),
        tail: tail.to_owned(),
        omitted,
    }
}

#[test]
fn the_fixed_lines_describe_the_observation() {
    let obs = bash(CARGO_TEST_LOG);
    let text = placeholder(&obs, CARGO_TEST_LOG);
    let parts = split(&text);
    let id = obs.id.as_str();
    assert_eq!(
        parts.fixed,
        [
            "[large tool result replaced after its first 2 provider requests]".to_owned(),
            format!("id: {id}"),
            "tool: bash".to_owned(),
            "original_bytes: 28231".to_owned(),
            "original_lines: 487".to_owned(),
            "estimated_tokens: 7058".to_owned(),
            format!(
                "retrieve: call obs_recall with {{\"id\":\"{id}\",\"offset\":0}}; continue with returned next_offset; add \"query\" for a case-sensitive literal search"
            ),
        ]
    );
}

#[test]
fn excerpts_are_the_longest_runs_of_whole_lines_that_fit() {
    let obs = bash(CARGO_TEST_LOG);
    let parts = split(&placeholder(&obs, CARGO_TEST_LOG));
    assert_eq!(parts.head_header, "[first complete lines, up to 512 bytes]");
    assert_eq!(
        parts.tail_header,
        "[middle omitted; last complete lines, up to 512 bytes]"
    );

    let head = format!("{}\n", parts.head);
    assert!(CARGO_TEST_LOG.starts_with(&head));
    assert!(head.len() <= 512);
    let next_line_end = head.len() + CARGO_TEST_LOG[head.len()..].find('\n').expect("more") + 1;
    assert!(next_line_end > 512, "one more line would have fit");

    let tail = format!("{}\n", parts.tail);
    assert!(CARGO_TEST_LOG.ends_with(&tail));
    assert!(tail.len() <= 512);
    let before = &CARGO_TEST_LOG[..CARGO_TEST_LOG.len() - tail.len()];
    let previous_line = before[..before.len() - 1].rfind('\n').map_or(0, |i| i + 1);
    assert!(
        CARGO_TEST_LOG.len() - previous_line > 512,
        "one more line would have fit"
    );

    assert_eq!(
        parts.omitted,
        (CARGO_TEST_LOG.len() - head.len() - tail.len()) as u64
    );
    assert!(
        parts
            .tail
            .ends_with("error: test failed, to rerun pass `-p inventory-core --lib`")
    );
}

#[test]
fn a_last_line_without_line_feed_counts_as_a_line() {
    let obs = bash(MULTIBYTE_TEXT);
    let parts = split(&placeholder(&obs, MULTIBYTE_TEXT));
    assert_eq!(
        parts.tail_header,
        "[middle omitted; last complete lines, up to 512 bytes]"
    );
    assert!(MULTIBYTE_TEXT.ends_with(&parts.tail));
    let tail_start = MULTIBYTE_TEXT.len() - parts.tail.len();
    assert_eq!(&MULTIBYTE_TEXT[tail_start - 1..tail_start], "\n");
    assert!(parts.tail.len() <= 512);
    let head = format!("{}\n", parts.head);
    assert!(MULTIBYTE_TEXT.starts_with(&head));
    assert_eq!(
        parts.omitted,
        (MULTIBYTE_TEXT.len() - head.len() - parts.tail.len()) as u64
    );
}

#[test]
fn without_a_fitting_line_both_sides_show_512_bytes_cut_on_characters() {
    let json = minified_json();
    let obs = observe("read", "call_9", &json);
    let parts = split(&placeholder(&obs, &json));
    assert_eq!(
        parts.head_header,
        "[no complete line fits; first 512 bytes]"
    );
    assert_eq!(
        parts.tail_header,
        "[middle omitted; no complete line fits; last 512 bytes]"
    );
    assert!(json.starts_with(&parts.head));
    assert!(json.ends_with(&parts.tail));
    // Cut on a character boundary: at most 3 bytes short of the budget.
    assert!(
        (509..=512).contains(&parts.head.len()),
        "{}",
        parts.head.len()
    );
    assert!(
        (509..=512).contains(&parts.tail.len()),
        "{}",
        parts.tail.len()
    );
    assert!(!parts.head.contains('\u{FFFD}') && !parts.tail.contains('\u{FFFD}'));
    assert_eq!(
        parts.omitted,
        (json.len() - parts.head.len() - parts.tail.len()) as u64
    );
}

#[test]
fn each_side_falls_back_on_its_own() {
    let text = format!("{}\n{}", "h".repeat(600), "short line\n".repeat(1_000));
    let parts = split(&placeholder(&observe("bash", "c", &text), &text));
    assert_eq!(
        parts.head_header,
        "[no complete line fits; first 512 bytes]"
    );
    assert_eq!(parts.head, "h".repeat(512));
    assert_eq!(
        parts.tail_header,
        "[middle omitted; last complete lines, up to 512 bytes]"
    );
    // 46 lines of 11 bytes fit 512.
    assert_eq!(parts.tail, "short line\n".repeat(46).trim_end_matches('\n'));

    let text = format!("{}\n{}", "short line\n".repeat(1_000), "t".repeat(600));
    let parts = split(&placeholder(&observe("bash", "c", &text), &text));
    assert_eq!(parts.head_header, "[first complete lines, up to 512 bytes]");
    assert_eq!(
        parts.tail_header,
        "[middle omitted; no complete line fits; last 512 bytes]"
    );
    assert_eq!(parts.tail, "t".repeat(512));
}

#[test]
fn a_line_of_exactly_512_bytes_fits() {
    let line = format!("{}\n", "a".repeat(511));
    let text = line.repeat(30);
    let parts = split(&placeholder(&observe("bash", "c", &text), &text));
    assert_eq!(parts.head_header, "[first complete lines, up to 512 bytes]");
    assert_eq!(format!("{}\n", parts.head), line);
    assert_eq!(format!("{}\n", parts.tail), line);
    assert_eq!(parts.omitted, 28 * 512);
}

#[test]
fn control_characters_in_the_tool_name_do_not_break_the_layout() {
    let text = "line\n".repeat(3_000);
    let obs = observe("evil\ntool\u{1b}[2J", "c", &text);
    let placeholder = placeholder(&obs, &text);
    assert!(
        placeholder.contains("\ntool: evil tool [2J\n"),
        "{placeholder}"
    );
    assert_eq!(obs.tool_name, "evil\ntool\u{1b}[2J");
}

#[test]
fn the_placeholder_is_the_same_on_every_request() {
    let obs = bash(CARGO_TEST_LOG);
    let first = placeholder(&obs, CARGO_TEST_LOG);
    for _ in 0..3 {
        assert_eq!(placeholder(&obs, CARGO_TEST_LOG), first);
    }
    assert_eq!(placeholder(&bash(CARGO_TEST_LOG), CARGO_TEST_LOG), first);
}

#[test]
fn tokens_saved_are_original_minus_placeholder_never_negative() {
    let obs = bash(CARGO_TEST_LOG);
    let text = placeholder(&obs, CARGO_TEST_LOG);
    let tokens = placeholder_tokens(&text);
    assert_eq!(tokens, (text.encode_utf16().count() as u64).div_ceil(4));
    assert!(tokens < 500, "{tokens}");
    assert_eq!(removed_tokens(obs.tokens, tokens), obs.tokens - tokens);
    assert_eq!(removed_tokens(10, 25), 0);
    assert_eq!(removed_tokens(25, 25), 0);
}

#[test]
fn tiny_texts_still_give_a_placeholder() {
    // Never packed in practice, but the function is total.
    for text in ["", "a", "a\n", "\n\n", "é"] {
        let obs = observe("bash", "c", text);
        let placeholder = placeholder(&obs, text);
        assert!(
            placeholder.ends_with("[0 original bytes omitted]"),
            "{placeholder}"
        );
    }
}

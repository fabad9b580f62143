//! The recent-outputs placement on sessions built here, where the answer is known: the
//! newest outputs stay in full, an older medium one goes as its compact placeholder when a
//! prompt comes after the cache lifetime (the provider writes the whole prefix again then
//! anyway), one its placeholder would not halve never does, and nothing moves without a reason to.

use serde_json::{Value, json};
use sol_replay::reader::read_session;
use sol_replay::replay::{Policy, PolicyRow, ReplayOptions, replay_session};

const MINUTE_MS: i64 = 60_000;

/// A session: a prompt, then one `bash` call per entry of `sizes` (its result that many bytes
/// of distinct lines), each answered a second later, then a second prompt `pause_ms` after
/// the last result, and a final reply.
fn session(sizes: &[usize], pause_ms: i64) -> String {
    let start = 1_772_442_000_000_i64;
    let mut at = start;
    let mut messages: Vec<(Value, i64)> =
        vec![(json!({"role": "user", "content": "Check the build."}), at)];
    for (n, size) in sizes.iter().enumerate() {
        at += 1_000;
        messages.push((json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("c{n}"), "name": "bash", "arguments": {"command": format!("make step{n}")}}], "stopReason": "toolUse"}), at));
        let mut text = String::new();
        let mut line = 0;
        while text.len() < *size {
            text.push_str(&format!(
                "step {n} line {line}: compiled module_{n}_{line} in 0.{line:03}s\n"
            ));
            line += 1;
        }
        text.truncate(*size);
        messages.push((json!({"role": "toolResult", "toolCallId": format!("c{n}"), "toolName": "bash", "content": [{"type": "text", "text": text}], "isError": false}), at));
    }
    at += pause_ms;
    messages.push((json!({"role": "user", "content": "And now?"}), at));
    at += 1_000;
    messages.push((json!({"role": "assistant", "content": [{"type": "text", "text": "All built."}], "stopReason": "stop"}), at));
    let mut out = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/p"}"#.to_owned();
    out.push('\n');
    for (index, (mut message, stamp)) in messages.into_iter().enumerate() {
        message["timestamp"] = json!(stamp);
        let parent = index.checked_sub(1).map(|before| format!("e{before}"));
        let entry = json!({"type": "message", "id": format!("e{index}"), "parentId": parent, "timestamp": "2026-03-02T09:00:00.000Z", "message": message});
        out.push_str(&entry.to_string());
        out.push('\n');
    }
    out
}

fn rows(sizes: &[usize], pause_ms: i64, keep: u32) -> (PolicyRow, PolicyRow) {
    let text = session(sizes, pause_ms);
    let session = read_session("built.jsonl", text.as_bytes()).expect("a session");
    let options = ReplayOptions {
        keep_recent_outputs: keep,
        ..ReplayOptions::default()
    };
    let replayed = replay_session(&session, &options);
    let branch = &replayed.branches[0];
    (
        branch.row(Policy::PlainPi).clone(),
        branch.row(Policy::RecentPack).clone(),
    )
}

#[test]
fn after_the_cache_lifetime_every_medium_output_but_the_newest_goes_as_its_placeholder() {
    // Twelve 3 KB outputs, then a prompt ten minutes later: all but the newest four go.
    let sizes = [3_000; 12];
    let (plain, recent) = rows(&sizes, 10 * MINUTE_MS, 4);
    assert_eq!(recent.results_replaced, 8);
    assert!(recent.input_tokens < plain.input_tokens);
    assert!(
        recent.cost < plain.cost,
        "{} >= {}",
        recent.cost,
        plain.cost
    );
    // Keeping twelve keeps them all.
    let (_, all_kept) = rows(&sizes, 10 * MINUTE_MS, 12);
    assert_eq!(all_kept.results_replaced, 0);
    assert_eq!(all_kept.cost, plain.cost);
}

#[test]
fn small_outputs_stay_and_a_short_session_without_a_pause_moves_nothing() {
    // Outputs whose compact placeholder would not halve them are never packed.
    let (plain, small) = rows(&[300; 12], 10 * MINUTE_MS, 4);
    assert_eq!(small.results_replaced, 0);
    assert_eq!(small.cost, plain.cost);
    // 1 KB ones are, after the cache lifetime: all but the newest four.
    let (plain, medium) = rows(&[1_000; 12], 10 * MINUTE_MS, 4);
    assert_eq!(medium.results_replaced, 8);
    assert!(medium.cost < plain.cost);
    // Without the pause the cache still holds: a short session gives no rewrite reason to
    // pay for, so nothing is replaced.
    let (plain, quick) = rows(&[3_000; 12], 1_000, 4);
    assert_eq!(quick.results_replaced, 0);
    assert_eq!(quick.cost, plain.cost);
}

//! The recent-outputs placement on sessions built here, where the answer is known: the
//! newest outputs stay in full, an older medium one goes as its compact placeholder when a
//! prompt comes after the cache lifetime (the provider writes the whole prefix again then
//! anyway), and so does one when another model answers; one its placeholder would not halve
//! never does, and nothing moves without a reason to.

use serde_json::{Value, json};
use sol_replay::reader::read_session;
use sol_replay::replay::{Policy, PolicyRow, ReplayOptions, replay_session};

const MINUTE_MS: i64 = 60_000;

/// A session: a prompt, then one `bash` call per entry of `sizes` (its result that many bytes
/// of distinct lines), each answered a second later, then a second prompt `pause_ms` after
/// the last result, and a final reply.
fn session(sizes: &[usize], pause_ms: i64) -> String {
    session_answered_by(sizes, pause_ms, None, false)
}

/// [`session`], each reply answered by a model, the final one by `last_model` when given;
/// `reported`: each with the usage its provider reported, everything before the request read
/// from the cache, except where another model answered (nothing read, all written).
fn session_answered_by(
    sizes: &[usize],
    pause_ms: i64,
    last_model: Option<&str>,
    reported: bool,
) -> String {
    let start = 1_772_442_000_000_i64;
    let mut at = start;
    let mut messages: Vec<(Value, i64)> =
        vec![(json!({"role": "user", "content": "Check the build."}), at)];
    // Roughly the request's tokens (a quarter of its bytes), for the reported usage.
    let mut total = 100;
    let mut usage = |grown: usize, switched: bool| {
        let before = total;
        total += grown / 4 + 20;
        let read = if switched { 0 } else { before };
        reported.then(|| json!({"input": 10, "output": 20, "cacheRead": read, "cacheWrite": total - read - 10}))
    };
    let answer = |mut message: Value, usage: Option<Value>| {
        if let Some(usage) = usage {
            message["usage"] = usage;
        }
        message
    };
    for (n, size) in sizes.iter().enumerate() {
        at += 1_000;
        let grown = if n == 0 { 0 } else { sizes[n - 1] };
        let call = json!({"role": "assistant", "content": [{"type": "toolCall", "id": format!("c{n}"), "name": "bash", "arguments": {"command": format!("make step{n}")}}], "stopReason": "toolUse", "provider": "anthropic", "model": "claude-sonnet-4-5"});
        messages.push((answer(call, usage(grown, false)), at));
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
    let last = usage(sizes.last().copied().unwrap_or(0), last_model.is_some());
    let done = json!({"role": "assistant", "content": [{"type": "text", "text": "All built."}], "stopReason": "stop", "provider": "anthropic", "model": last_model.unwrap_or("claude-sonnet-4-5")});
    messages.push((answer(done, last), at));
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
    rows_of(&session(sizes, pause_ms), keep)
}

fn rows_of(text: &str, keep: u32) -> (PolicyRow, PolicyRow) {
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

#[test]
fn another_model_rewrites_the_cache_so_the_waiting_outputs_ride_along() {
    // No pause: the cache still holds while the same model answers, so nothing moves...
    let sizes = [3_000; 12];
    let (plain, same) = rows_of(&session_answered_by(&sizes, 1_000, None, true), 4);
    assert_eq!(same.results_replaced, 0);
    assert_eq!(same.cost, plain.cost);
    // ...but the final request goes to another model, whose cache holds none of the prefix:
    // all but the newest four go as their placeholders with it.
    let (plain, switched) = rows_of(
        &session_answered_by(&sizes, 1_000, Some("claude-opus-4-5"), true),
        4,
    );
    assert_eq!(switched.results_replaced, 8);
    assert!(
        switched.cost < plain.cost,
        "{} >= {}",
        switched.cost,
        plain.cost
    );
}

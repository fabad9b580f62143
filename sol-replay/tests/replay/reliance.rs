//! "Recalls needed": a result a policy replaced that a later reply quoted (one of its lines
//! repeated as a line of the reply) while no message still sent in full held the line. Checked on sessions built here, where the answer
//! is known: a quote after the replacement counts once; a quote while the result is still
//! in full, or of a line an earlier reply already repeated, does not.

use serde_json::{Value, json};
use sol_replay::reader::read_session;
use sol_replay::replay::{Policy, ReplayOptions, replay_session};

const LINE: &str = "src/pricing.rs:42: apply_discount returns the discount, not the price";

/// A session: a prompt, a `bash` call whose 20 KB result holds `LINE`, then one reply per
/// entry of `replies` (each a text, quoting `LINE` or not), each after a prompt.
fn session(replies: &[&str]) -> String {
    let mut messages: Vec<Value> = vec![json!({"role": "user", "content": "Find the bug."})];
    messages.push(json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "grep -rn discount ."}}], "stopReason": "toolUse"}));
    let filler: String = (0..400)
        .map(|n| format!("src/other.rs:{n}: nothing to see in this line here\n"))
        .collect();
    messages.push(json!({"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": format!("{filler}{LINE}\n{filler}")}], "isError": false}));
    for reply in replies {
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": reply}], "stopReason": "stop"}));
        messages.push(json!({"role": "user", "content": "Go on."}));
    }
    let mut text = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/p"}"#.to_owned();
    text.push('\n');
    for (index, message) in messages.into_iter().enumerate() {
        let parent = index.checked_sub(1).map(|before| format!("e{before}"));
        let entry = json!({"type": "message", "id": format!("e{index}"), "parentId": parent, "timestamp": "2026-03-02T09:00:00.000Z", "message": message});
        text.push_str(&entry.to_string());
        text.push('\n');
    }
    text
}

fn needed(replies: &[&str], policy: Policy) -> u64 {
    let text = session(replies);
    let session = read_session("built.jsonl", text.as_bytes()).expect("a session");
    let options = ReplayOptions {
        mask_keep: 0,
        ..ReplayOptions::default()
    };
    let replayed = replay_session(&session, &options);
    replayed.branches[0].row(policy).recalls_needed
}

#[test]
fn a_quote_after_the_replacement_needs_one_recall() {
    let quote = format!("The bug is here:\n{LINE}");
    // The result is sent in full twice (the replies 1 and 2), then as its placeholder.
    let late = ["Looking.", "Still looking.", &quote];
    assert_eq!(needed(&late, Policy::ObservationPack), 1);
    // The cache-aware placement replaces it by then too.
    assert_eq!(needed(&late, Policy::CacheAwarePack), 1);
    // Masking keeping no output hides it from its first reply on.
    assert_eq!(needed(&late, Policy::ObservationMasking), 1);
    // Quoted twice: still one result, one recall.
    let twice = ["Looking.", "Still looking.", &quote, &quote];
    assert_eq!(needed(&twice, Policy::ObservationPack), 1);
    // Plain Pi replaces nothing.
    assert_eq!(needed(&late, Policy::PlainPi), 0);
}

#[test]
fn a_quote_while_the_result_is_in_full_or_already_repeated_needs_none() {
    let quote = format!("The bug is here:\n{LINE}");
    // Quoted in the first reply, while the result is still sent in full.
    assert_eq!(needed(&[&quote], Policy::ObservationPack), 0);
    // Quoted early, then again after the replacement: the early reply still holds the line.
    let again = [quote.as_str(), "Looking.", "Still looking.", &quote];
    assert_eq!(needed(&again, Policy::ObservationPack), 0);
    // A short line is no quote.
    let short = ["Looking.", "Still looking.", "apply_discount"];
    assert_eq!(needed(&short, Policy::ObservationPack), 0);
}

//! The native-cut estimate: Pi's cut point, pricing from the observed context, and the
//! projection of raw and 1.x session data.

use serde_json::json;
use sol_core::message::AgentMessage;
use sol_core::session::{SessionEntry, SessionProjection};
use sol_occ::estimate::{
    EntryKind, NativeProjection, ObservedContext, estimate_native_cut, iso_to_epoch_ms,
    naive_archive_tokens,
};
use sol_occ::tokens::{SizedMessage, estimate_message_tokens, js_length};

use crate::support::{assistant, branch_of, entry, message, tool_result, user, with_field};

fn observed(messages: &[AgentMessage]) -> ObservedContext {
    ObservedContext::new(&SizedMessage::from_messages(messages))
}

#[test]
fn one_huge_recent_message_leaves_a_tiny_removable_prefix() {
    // Issue #5: 25 + 25,000 tokens with a 20,000-token tail.
    let messages = vec![user(1, 100), assistant(2, 100_000)];
    let total: u64 = messages.iter().map(estimate_message_tokens).sum();
    assert_eq!(total, 25_025);
    assert_eq!(naive_archive_tokens(total, 0, 20_000), 5_025);
    let projection = NativeProjection::from_branch(&branch_of(&messages));
    let estimate = estimate_native_cut(&projection, 20_000, &observed(&messages));
    assert_eq!(estimate.removable_tokens, 25);
    assert_eq!(estimate.removed_messages, 1);
    assert_eq!(estimate.first_kept_entry_id.as_deref(), Some("e1"));
    assert!(estimate.compactable);
}

#[test]
fn an_initial_compaction_removes_everything_before_the_cut() {
    let messages = vec![
        user(1, 400),
        assistant(2, 400),
        tool_result(3, "c1", 4_000),
        assistant(4, 400),
        user(5, 400),
        assistant(6, 400),
    ];
    let projection = NativeProjection::from_branch(&branch_of(&messages));
    // Walking back: 100 + 100 = 200 ≥ 150 at index 4, a user message.
    let estimate = estimate_native_cut(&projection, 150, &observed(&messages));
    assert_eq!(estimate.first_kept_index, 4);
    assert_eq!(estimate.removable_tokens, 100 + 100 + 1_000 + 100);
    assert_eq!(estimate.removed_messages, 4);
    assert_eq!(estimate.previous_summary_tokens, 0);
}

#[test]
fn a_cut_never_lands_on_a_tool_result() {
    let messages = vec![user(1, 40), assistant(2, 40), tool_result(3, "c1", 8_000)];
    let projection = NativeProjection::from_branch(&branch_of(&messages));
    // The tool result alone exceeds the tail; Pi keeps its call with it.
    let estimate = estimate_native_cut(&projection, 150, &observed(&messages));
    assert_eq!(estimate.first_kept_index, 1);
    assert_eq!(estimate.removable_tokens, 10);
}

fn compacted_branch() -> (Vec<SessionEntry>, Vec<AgentMessage>) {
    let messages = [
        user(1, 4_000),
        assistant(2, 400),
        user(3, 400),
        assistant(4, 400),
        user(5, 400),
        assistant(6, 400),
    ];
    let mut branch = branch_of(&messages[..4]);
    branch.push(entry(
        json!({"type": "compaction", "id": "c", "parentId": "e3",
        "timestamp": "2026-03-02T09:00:00.000Z", "summary": "s".repeat(2_000),
        "firstKeptEntryId": "e2", "tokensBefore": 1_300}),
    ));
    for (i, message) in messages[4..].iter().enumerate() {
        branch.push(entry(
            json!({"type": "message", "id": format!("n{i}"), "message": message}),
        ));
    }
    // What a context handler sees after the compaction.
    let summary = message(
        json!({"role": "compactionSummary", "summary": "s".repeat(2_000),
                         "timestamp": iso_to_epoch_ms("2026-03-02T09:00:00.000Z")}),
    );
    let mut seen = vec![summary];
    seen.extend(messages[2..].iter().cloned());
    (branch, seen)
}

#[test]
fn a_repeated_compaction_removes_the_previous_summary_with_the_new_history() {
    let (branch, seen) = compacted_branch();
    let projection = NativeProjection::from_branch(&branch);
    let kinds: Vec<EntryKind> = projection.entries.iter().map(|entry| entry.kind).collect();
    assert_eq!(
        kinds,
        [
            EntryKind::Compaction,
            EntryKind::Message,
            EntryKind::Message,
            EntryKind::Message,
            EntryKind::Message
        ]
    );
    assert_eq!(projection.history_start(), 1);
    let estimate = estimate_native_cut(&projection, 150, &observed(&seen));
    // Kept: the new user message and the reply (200 ≥ 150); removed: the first kept pair of
    // the previous compaction, plus the previous summary (500 tokens).
    assert_eq!(estimate.first_kept_entry_id.as_deref(), Some("n0"));
    assert_eq!(estimate.previous_summary_tokens, 500);
    assert_eq!(estimate.removable_tokens, 500 + 100 + 100);
    assert!(estimate.compactable);
}

#[test]
fn nothing_new_after_a_compaction_removes_nothing() {
    let (branch, seen) = compacted_branch();
    let projection = NativeProjection::from_branch(&branch);
    let estimate = estimate_native_cut(&projection, 100_000, &observed(&seen));
    assert_eq!(estimate.first_kept_index, 1);
    assert_eq!(
        (estimate.removable_tokens, estimate.removed_messages),
        (0, 0)
    );
    assert_eq!(estimate.previous_summary_tokens, 0);
    assert!(!estimate.compactable);
}

#[test]
fn a_branch_ending_with_a_compaction_is_already_compacted() {
    let (branch, seen) = compacted_branch();
    let projection = NativeProjection::from_branch(&branch[..5]);
    assert!(projection.leaf_is_compaction);
    assert!(!estimate_native_cut(&projection, 10, &observed(&seen)).compactable);
}

#[test]
fn a_leading_system_message_is_never_removable() {
    let system = message(json!({"role": "system", "content": "x".repeat(40_000), "timestamp": 0}));
    let messages = vec![system, user(1, 40)];
    let projection = NativeProjection::from_branch(&branch_of(&messages));
    let estimate = estimate_native_cut(&projection, 20_000, &observed(&messages));
    assert_eq!(estimate.first_kept_index, 1);
    assert_eq!(estimate.removed_messages, 0);
    assert!(
        !estimate.compactable,
        "Pi would say the session is too small"
    );
}

#[test]
fn savings_are_priced_at_the_projected_size() {
    let canonical = vec![
        user(1, 40),
        assistant(2, 40),
        tool_result(3, "c1", 40_000),
        user(4, 800),
    ];
    let mut projected = canonical.clone();
    // ObservationPack replaced the large result with a placeholder.
    projected[2] = with_field(
        &projected[2],
        "content",
        Some(json!([{"type": "text", "text": "p".repeat(400)}])),
    );
    let projection = NativeProjection::from_branch(&branch_of(&canonical));
    let estimate = estimate_native_cut(&projection, 150, &observed(&projected));
    assert_eq!(estimate.canonical_removed_tokens, 10 + 10 + 10_000);
    assert_eq!(estimate.removable_tokens, 10 + 10 + 100);
}

#[test]
fn dropped_unseen_and_ambiguous_messages_contribute_nothing() {
    let canonical = vec![
        user(1, 400),
        assistant(2, 400),
        user(3, 400),
        assistant(4, 400),
        user(5, 800),
    ];
    let projection = NativeProjection::from_branch(&branch_of(&canonical));
    let all = estimate_native_cut(&projection, 150, &observed(&canonical));
    assert_eq!((all.removable_tokens, all.priced_messages), (400, 4));

    // A transformer dropped the first message; the last context predates the fourth.
    let seen = vec![canonical[1].clone(), canonical[2].clone()];
    let partial = estimate_native_cut(&projection, 150, &observed(&seen));
    assert_eq!(
        (
            partial.removable_tokens,
            partial.removed_messages,
            partial.priced_messages
        ),
        (200, 4, 2)
    );

    // The context holds two messages with an identity the projection has once: the group
    // disagrees between the views and none of it is trusted.
    let twin = with_field(
        &canonical[1],
        "content",
        Some(json!([{"type": "text", "text": "short"}])),
    );
    let ambiguous = vec![
        canonical[0].clone(),
        canonical[1].clone(),
        twin,
        canonical[2].clone(),
    ];
    let estimate = estimate_native_cut(&projection, 150, &observed(&ambiguous));
    assert_eq!(estimate.removable_tokens, 200);

    // Messages without a timestamp are identified by their content: observed unchanged,
    // they are priced as the stamped ones are.
    let stamped = estimate_native_cut(
        &NativeProjection::from_branch(&branch_of(&canonical)),
        150,
        &observed(&canonical),
    );
    let anonymous: Vec<AgentMessage> = canonical
        .iter()
        .map(|message| with_field(message, "timestamp", None))
        .collect();
    let projection = NativeProjection::from_branch(&branch_of(&anonymous));
    let estimate = estimate_native_cut(&projection, 150, &observed(&anonymous));
    assert!(estimate.removable_tokens > 0);
    assert_eq!(
        (estimate.removable_tokens, estimate.priced_messages),
        (stamped.removable_tokens, stamped.priced_messages)
    );
}

#[test]
fn metadata_entries_before_the_cut_stay_with_the_tail() {
    let messages = vec![user(1, 400), assistant(2, 400), user(3, 800)];
    let mut branch = branch_of(&messages);
    branch.insert(
        2,
        entry(json!({"type": "custom", "id": "meta", "customType": "x", "data": {}})),
    );
    branch.insert(
        2,
        entry(json!({"type": "label", "id": "label", "label": "checkpoint"})),
    );
    let projection = NativeProjection::from_branch(&branch);
    let estimate = estimate_native_cut(&projection, 150, &observed(&messages));
    assert_eq!(estimate.first_kept_entry_id.as_deref(), Some("label"));
    assert_eq!(estimate.removable_tokens, 200);
}

#[test]
fn custom_messages_and_branch_summaries_are_projected_and_cut_points() {
    let branch = SessionEntry::from_values([
        json!({"type": "custom_message", "id": "r", "customType": "sol-pi-online-context-compact",
               "content": "c".repeat(400), "display": false, "timestamp": "2026-03-02T09:00:00.000Z"}),
        json!({"type": "branch_summary", "id": "b", "summary": "b".repeat(400), "fromId": "x",
               "timestamp": "2026-03-02T09:00:01.000Z"}),
        json!({"type": "message", "id": "u", "message": user(9, 800)}),
    ]);
    let projection = NativeProjection::from_branch(&branch);
    let roles: Vec<&str> = projection.messages().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["custom", "branchSummary", "user"]);
    assert_eq!(projection.total_tokens(), 100 + 100 + 200);
    let seen: Vec<SizedMessage> = projection.messages().cloned().collect();
    let estimate = estimate_native_cut(&projection, 150, &ObservedContext::new(&seen));
    assert_eq!(estimate.removable_tokens, 200);
}

#[test]
fn the_pi_1x_projection_is_read_from_its_json() {
    let projection = json!({"entries": [
        {"sourceEntry": {"type": "compaction", "id": "c"}, "messages": [
            {"role": "compactionSummary", "summary": "s".repeat(400), "timestamp": 10}]},
        {"sourceEntry": {"type": "message", "id": "m1"}, "messages": [user(11, 400)]},
        {"sourceEntry": {"type": "context_edit", "id": "edit"}, "messages": []},
        {"sourceEntry": {"type": "message", "id": "m2"}, "messages": [assistant(12, 800)]},
    ], "messages": []});
    let projection = SessionProjection::from_value(&projection).expect("a projection");
    let projection = NativeProjection::from_session_projection(&projection, false);
    assert_eq!(projection.entries.len(), 4);
    assert_eq!(projection.entries[2].kind, EntryKind::Other);
    let seen: Vec<SizedMessage> = projection.messages().cloned().collect();
    let estimate = estimate_native_cut(&projection, 150, &ObservedContext::new(&seen));
    assert_eq!(estimate.first_kept_entry_id.as_deref(), Some("edit"));
    assert_eq!(estimate.removable_tokens, 100 + 100);
}

#[test]
fn token_estimates_follow_pi() {
    assert_eq!(js_length("\u{1F680}"), 2, "UTF-16 code units");
    let assistant = message(json!({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "abcd"},
        {"type": "text", "text": "efgh"},
        {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "a"}},
    ]}));
    // 4 + 4 + 4 + len({"path":"a"}) = 12 + 12 = 24 → 6.
    assert_eq!(estimate_message_tokens(&assistant), 6);
    let image = message(
        json!({"role": "user", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]}),
    );
    assert_eq!(estimate_message_tokens(&image), 1_200);
    let bash = message(json!({"role": "bashExecution", "command": "ls", "output": "a\nb"}));
    assert_eq!(estimate_message_tokens(&bash), 2);
    let system = message(
        json!({"role": "system", "content": "ab", "sections": {"x": "cd"}, "toolsAdded": []}),
    );
    assert_eq!(estimate_message_tokens(&system), 2);
    assert_eq!(
        estimate_message_tokens(&message(json!({"role": "future"}))),
        0
    );
}

#[test]
fn iso_timestamps_become_epoch_milliseconds() {
    assert_eq!(iso_to_epoch_ms("1970-01-01T00:00:00.000Z"), Some(0));
    assert_eq!(
        iso_to_epoch_ms("2026-03-02T09:15:24.294Z"),
        Some(1_772_442_924_294)
    );
    assert_eq!(
        iso_to_epoch_ms("2000-02-29T12:00:00Z"),
        Some(951_825_600_000)
    );
    assert_eq!(iso_to_epoch_ms("2026-13-02T09:15:24.294Z"), None);
    assert_eq!(iso_to_epoch_ms("yesterday"), None);
}

#[test]
fn messages_made_in_the_same_millisecond_are_priced_in_order() {
    // A fast provider: the assistant turns and their results all carry one timestamp, and a
    // provider that omits tool-call ids gives every result the same empty id.
    let canonical = vec![
        user(1, 400),
        assistant(2, 400),
        tool_result(2, "", 1_200),
        assistant(2, 800),
        tool_result(2, "", 2_000),
        user(3, 800),
    ];
    let mut projected = canonical.clone();
    // ObservationPack replaced the second result in the context view.
    projected[4] = with_field(
        &projected[4],
        "content",
        Some(json!([{"type": "text", "text": "p".repeat(40)}])),
    );
    let projection = NativeProjection::from_branch(&branch_of(&canonical));
    let estimate = estimate_native_cut(&projection, 150, &observed(&projected));
    assert_eq!(estimate.removed_messages, 5);
    assert_eq!(estimate.priced_messages, 5);
    assert_eq!(estimate.removable_tokens, 100 + 100 + 300 + 200 + 10);
}

#[test]
fn same_millisecond_messages_added_after_the_last_context_are_not_priced() {
    let canonical = vec![
        user(1, 400),
        assistant(2, 400),
        tool_result(2, "", 1_200),
        assistant(2, 800),
        user(3, 800),
    ];
    // The last context event predates the second assistant message of the group.
    let seen = canonical[..3].to_vec();
    let projection = NativeProjection::from_branch(&branch_of(&canonical));
    let estimate = estimate_native_cut(&projection, 150, &observed(&seen));
    assert_eq!(estimate.removed_messages, 4);
    assert_eq!(estimate.priced_messages, 3);
    assert_eq!(estimate.removable_tokens, 100 + 100 + 300);
}

#[test]
fn messages_without_a_timestamp_are_identified_by_their_content_and_priced() {
    // A harness that stamps no message: the removed prefix is still priced from the
    // observed context, because each message's identity comes from its content. A message
    // a transformer changed matches nothing and is not priced (never priced wrongly).
    let stamped = [
        user(1, 4_000),
        assistant(2, 400),
        user(3, 4_004),
        assistant(4, 404),
    ];
    let messages: Vec<AgentMessage> = stamped
        .iter()
        .map(|message| with_field(message, "timestamp", None))
        .collect();
    let projection = NativeProjection::from_branch(&branch_of(&messages));
    let estimate = estimate_native_cut(&projection, 1_000, &observed(&messages));
    assert!(estimate.compactable);
    assert_eq!(estimate.removed_messages, 2);
    assert_eq!(estimate.priced_messages, 2);
    assert_eq!(estimate.removable_tokens, 1_100);

    let mut changed = messages.clone();
    changed[0] = with_field(&changed[0], "content", Some(json!("shortened")));
    let estimate = estimate_native_cut(&projection, 1_000, &observed(&changed));
    assert_eq!(estimate.priced_messages, 1);
    assert_eq!(estimate.removable_tokens, 100);
}

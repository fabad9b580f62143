//! A plain Rust host (no Pi, no session JSON) drives `OccSession` over a plan of three steps:
//! the plan update, requests with a growing context, a step boundary where the policy decides
//! to compact, the compaction's result and the continuation. It prints the effects a harness
//! carries out and the sum of the step accounts.

// A program that prints its results.
#![allow(clippy::print_stdout)]

use sol_occ::estimate::{EntryKind, NativeProjection, ProjectedEntry};
use sol_occ::serde_json::json;
use sol_occ::session::*;
use sol_occ::settings::{OccOptions, resolve_compaction_settings};
use sol_occ::sol_core::StepAccount;
use sol_occ::tokens::{MessageRole, SizedMessage};

fn main() {
    let options = OccOptions {
        cache_write_read_ratio: Some(0.0),
        keep_recent_tokens: Some(3_000),
    };
    let mut occ = OccSession::new(options);
    let mut total = StepAccount::default();
    let mut show = |event: &str, step: Step| {
        let effects: Vec<String> = step.effects.iter().map(describe).collect();
        println!("{event}: [{}]", effects.join(", "));
        total += step.account;
    };
    let plan = |s: [&str; 3]| {
        json!({"steps": [
        {"id": "reproduce", "goal": "Reproduce the parser bug", "status": s[0]},
        {"id": "fix", "goal": "Fix the parser", "status": s[1]},
        {"id": "verify", "goal": "Run the test suite", "status": s[2]}]})
    };
    let (_, step) = occ.on_update_plan(
        "call-1",
        &plan(["in_progress", "pending", "pending"]),
        false,
    );
    show("update_plan", step);
    // Six requests; each adds a message of 2,000 tokens to the conversation.
    let mut conversation = Vec::new();
    for i in 0..6 {
        let role = [MessageRole::User, MessageRole::Assistant][i % 2];
        conversation.push(SizedMessage {
            role,
            tokens: 2_000,
            key: format!("message-{i}"),
        });
        occ.context(ContextEvent::total(
            false,
            2_000 * conversation.len() as u64,
        ));
        show("provider request", occ.on_before_provider_request(None, 0));
        occ.message_end("assistant");
    }
    // The model completes the first step: a boundary, measured when the turn ends.
    let (_, step) = occ.on_update_plan(
        "call-2",
        &plan(["completed", "in_progress", "pending"]),
        false,
    );
    show("update_plan", step);
    let call = TurnToolResult {
        tool_call_id: "call-2".into(),
        tool_name: "update_plan".into(),
        is_error: false,
    };
    let turn = TurnEnd {
        stop_reason: Some(StopReason::ToolUse),
        tool_results: vec![call],
        ..TurnEnd::default()
    };
    show("turn end", occ.on_turn_end(&turn));
    let entry = |(i, m): (usize, &SizedMessage)| ProjectedEntry {
        id: Some(format!("e{i}")),
        kind: EntryKind::Message,
        messages: vec![m.clone()],
    };
    let projection = NativeProjection {
        entries: conversation.iter().enumerate().map(entry).collect(),
        leaf_is_compaction: false,
    };
    let settings = resolve_compaction_settings(None, None, Some(3_000));
    let observed = Some(conversation);
    let measurement = BoundaryMeasurement {
        reported_tokens: None,
        usage_context_window: Some(200_000.0),
        model_context_window: None,
        system_prompt_tokens: 0,
        projection,
        settings,
        observed,
    };
    show("measurement", occ.on_decide_boundary(&measurement));
    // The host aborted the run; it settles idle, and the host compacts as it was told.
    show("settled", occ.on_agent_settled(true));
    show(
        "compacted",
        occ.on_session_compact(false, Observation::Total(300)),
    );
    let summary = "## Goal\nFix the parser bug.\n## Done\nReproduced it.".to_owned();
    show(
        "compaction finished",
        occ.on_compaction_finished(&CompactionResult::Completed { summary }),
    );
    show("continuation sent", occ.on_continuation_sent(true));
    println!("total: {total:?}");
}

/// One line per effect: what the harness does.
fn describe(effect: &Effect) -> String {
    match effect {
        Effect::AppendEntry(entry) => format!("save {}", entry.custom_type),
        Effect::Decision(evaluation) => format!(
            "decision compact={} reason={} removable_tokens={}",
            evaluation.decision.compact,
            evaluation.decision.reason.code(),
            evaluation.estimate.removable_tokens
        ),
        Effect::Abort => "abort the run".into(),
        Effect::Measure => "measure the context".into(),
        Effect::Compact {
            custom_instructions,
        } => format!(
            "compact ({} chars of instructions)",
            custom_instructions.len()
        ),
        Effect::Warn { text } => format!("warn: {text}"),
        Effect::SavingsNotice(notice) => format!("notice: {}", notice.notice.replace('\n', " / ")),
        Effect::SendMessage(continuation) => format!(
            "send the continuation ({} chars)",
            continuation.content.len()
        ),
        Effect::WaitForContinuation => "wait for the continuation".into(),
        Effect::KeepWaiting => "keep waiting".into(),
        Effect::Fail { error } => format!("fail: {error}"),
    }
}

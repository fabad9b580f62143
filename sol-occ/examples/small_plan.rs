//! A plain Rust host (no Pi, no session JSON) drives `OccSession` over a plan of three steps:
//! the plan update, requests with a growing context, a step boundary where the policy decides
//! to compact, the compaction's result and the continuation. It prints the effects a harness
//! carries out (one line per step) and the sum of the step accounts.

// A program that prints its results.
#![allow(clippy::print_stdout)]

use sol_occ::serde_json::json;
use sol_occ::session::*;
use sol_occ::settings::OccOptions;
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
        println!("{event}: {step}");
        total += step.account;
    };
    // The arguments the model sends to `update_plan`: the whole plan with its statuses.
    let plan = |s: [&str; 3]| {
        json!({"steps": [
        {"id": "reproduce", "goal": "Reproduce the parser bug", "status": s[0]},
        {"id": "fix", "goal": "Fix the parser", "status": s[1]},
        {"id": "verify", "goal": "Run the test suite", "status": s[2]}]})
    };
    let arguments = plan(["in_progress", "pending", "pending"]);
    let (_, step) = occ.on_update_plan("call-1", &arguments, false);
    show("update_plan", step);
    // Six requests; each adds a message of 2,000 tokens to the conversation.
    let mut conversation = Vec::new();
    for i in 0..6 {
        let role = [MessageRole::User, MessageRole::Assistant][i % 2];
        conversation.push(SizedMessage::new(role, 2_000, format!("message-{i}")));
        let context = ContextEvent::total(false, 2_000 * conversation.len() as u64);
        show("provider request", occ.on_request(context, None, 0));
    }
    // The model completes the first step: a boundary, measured when the turn ends.
    let arguments = plan(["completed", "in_progress", "pending"]);
    let (_, step) = occ.on_update_plan("call-2", &arguments, false);
    show("update_plan", step);
    let turn = TurnEnd::after_tools(vec![TurnToolResult::new("call-2", "update_plan", false)]);
    show("turn end", occ.on_turn_end(&turn));
    let measurement = BoundaryMeasurement::from_observed(conversation, 200_000);
    show("measurement", occ.on_decide_boundary(&measurement));
    // The host aborted the run; it settles idle, and the host compacts as it was told.
    show("settled", occ.on_agent_settled(true));
    let step = occ.on_session_compact(false, Observation::Total(300));
    show("compacted", step);
    let summary =
        CompactionResult::completed("## Goal\nFix the parser bug.\n## Done\nReproduced it.");
    show("compaction finished", occ.on_compaction_finished(&summary));
    show("continuation sent", occ.on_continuation_sent(true));
    println!("total: {total:?}");
}

//! Snapshots of every text a model or a person reads.

use serde_json::json;
use sol_occ::economics::{EconomicsInput, EconomicsParams, decide};
use sol_occ::instructions::compaction_instructions;
use sol_occ::plan::TOOL_NAME;
use sol_occ::plan::{
    PlanAdvice, PlanError, PlanStep, ProgressList, ProgressSummary, StepStatus, parse_update_plan,
};
use sol_occ::session::{CompactionResult, Effect, NativeRefusal, OccSession, PlanToolError};
use sol_occ::settings::OptionsError;
use sol_occ::text;

use crate::support::Driver;

fn plan() -> Vec<PlanStep> {
    vec![
        PlanStep::new("1", "Map how segments are written", StepStatus::Completed),
        PlanStep::new("2", "Add a delta journal <v2>", StepStatus::InProgress),
        PlanStep::new("3", "Document \"re-indexing\"", StepStatus::Pending),
    ]
}

#[test]
fn plan_result_texts() {
    let advice = [
        PlanAdvice::GoalChanged { id: "2".into() },
        PlanAdvice::SeveralInProgress {
            ids: vec!["2".into(), "3".into()],
        },
        PlanAdvice::NoneInProgress,
    ];
    let texts = [
        text::plan_snapshot(&plan()),
        text::plan_result_text(&plan(), &advice),
        text::plan_result_text(
            &[PlanStep::new("only", "Ship", StepStatus::Pending)],
            &[PlanAdvice::NoneInProgress],
        ),
    ];
    assert_text_snapshot!("plan_result_texts", texts.join("\n---\n"));
}

#[test]
fn update_plan_tool_result() {
    let mut occ = OccSession::new(sol_occ::settings::OccOptions {
        cache_write_read_ratio: Some(12.5),
        keep_recent_tokens: None,
    });
    occ.on_session_start(&[], Vec::new());
    let (first, _) = occ.on_update_plan(
        "call-1",
        &json!({"steps": [
            {"id": "build", "goal": "Build the parser", "status": "in_progress"},
            {"id": "docs", "goal": "Document it", "status": "pending"},
        ]}),
        false,
    );
    let first = first.expect("valid");
    let (second, _) = occ.on_update_plan("call-2", &json!({"steps": [
        {"id": "build", "goal": "Build the parser", "status": "completed"},
        {"id": "docs", "goal": "Document the parser", "status": "in_progress"},
    ], "progress": {"files_changed": ["src/parser.rs"], "verification": ["cargo test: 31 passed"]}}), false);
    let second = second.expect("valid");
    let render = format!(
        "{}\n{}\n---\ndetails: {}\n---\n{}\n{}",
        first.text,
        text::render_call(first.details.plan.len(), 0),
        serde_json::to_string_pretty(&second.details).expect("json"),
        second.text,
        text::render_call(2, 1),
    );
    assert_text_snapshot!("update_plan_tool_result", render);
}

#[test]
fn tool_description_and_parameters() {
    let mut lines = vec![
        format!("name: {}", sol_occ::plan::TOOL_NAME),
        format!("label: {}", text::TOOL_LABEL),
        format!("description: {}", text::TOOL_DESCRIPTION),
        format!("snippet: {}", text::PROMPT_SNIPPET),
        "guidelines:".to_owned(),
    ];
    lines.extend(
        text::PROMPT_GUIDELINES
            .iter()
            .map(|line| format!("- {line}")),
    );
    lines.push(format!("steps: {}", text::STEPS_DESCRIPTION));
    lines.push(format!("steps[].id: {}", text::STEP_ID_DESCRIPTION));
    lines.push(format!("steps[].goal: {}", text::STEP_GOAL_DESCRIPTION));
    lines.push(format!("steps[].status: {}", text::STEP_STATUS_DESCRIPTION));
    lines.push(format!("progress: {}", text::PROGRESS_DESCRIPTION));
    for list in ProgressList::ALL {
        lines.push(format!(
            "progress.{}: {}",
            list.key(),
            text::progress_list_description(list)
        ));
    }
    lines.push("schema:".to_owned());
    lines.push(serde_json::to_string_pretty(&text::tool_parameters_schema()).expect("json"));
    assert_text_snapshot!("tool_description_and_parameters", lines.join("\n"));
}

#[test]
fn render_and_tui_texts() {
    let texts = [
        format!("badge title: {}", text::badge_title()),
        format!("badge saving: {}", text::badge_saving()),
        format!("call: {}", text::render_call(1, 0)),
        format!("call: {}", text::render_call(8, 3)),
        format!("partial: {}", text::RENDER_PARTIAL),
        format!("boundary: {}", text::RENDER_BOUNDARY),
        format!("plan: {}", text::RENDER_PLAN),
        format!("notice:\n{}", text::savings_notice(48_213)),
        format!("notice:\n{}", text::savings_notice(7)),
        format!(
            "status [{}] for {} ms: {}",
            text::STATUS_KEY,
            text::STATUS_CLEAR_MS,
            text::status_text(1_234_567)
        ),
        format!(
            "warning:\n{}",
            text::skip_warning("Nothing to compact (session too small)")
        ),
        format!(
            "error: {}",
            text::compaction_failed_error("Summarization failed: 529\noverloaded")
        ),
    ];
    assert_text_snapshot!("render_and_tui_texts", texts.join("\n"));
}

#[test]
fn continuation_reminders() {
    let texts = [
        text::continuation_after_compaction(&plan(), TOOL_NAME),
        text::continuation_after_compaction(&[], TOOL_NAME),
        text::continuation_after_failure(&plan(), TOOL_NAME),
        text::continuation_after_skip(
            NativeRefusal::NothingToCompact.describe(),
            &plan(),
            TOOL_NAME,
        ),
        text::continuation_after_skip(NativeRefusal::AlreadyCompacted.describe(), &[], TOOL_NAME),
        text::continuation_after_skip(NativeRefusal::SummaryTokenCap.describe(), &[], TOOL_NAME),
    ];
    assert_text_snapshot!("continuation_reminders", texts.join("\n---\n"));
}

#[test]
fn compaction_instructions_texts() {
    let older = ProgressSummary {
        step_id: "1".into(),
        goal: "Map how segments are written".into(),
        files_changed: vec!["src/index/writer.rs".into()],
        verification: vec![],
        decisions: vec!["Keep merges behind the <commit> lease".into()],
        next_work: vec!["Add a delta journal".into(), "Document it".into()],
    };
    let newer = ProgressSummary {
        step_id: "2".into(),
        goal: "Add a delta journal".into(),
        files_changed: vec!["src/journal/log.rs".into(), "src/index/writer.rs".into()],
        verification: vec!["cargo test -p search-index: 88 passed".into()],
        decisions: vec![],
        next_work: vec!["Document it".into()],
    };
    let texts = [
        compaction_instructions(&[]),
        compaction_instructions(&[older, newer]),
    ];
    assert_text_snapshot!("compaction_instructions", texts.join("\n---\n"));
}

#[test]
fn skip_entry() {
    let mut d = Driver::new(Some(0.0));
    d.request(8_000);
    d.plan("p1", &[("a", "in_progress"), ("b", "pending")]);
    d.request(8_000);
    d.request(8_000);
    d.plan("p2", &[("a", "completed"), ("b", "in_progress")]);
    d.turn_end("p2");
    assert!(d.decide().expect("evaluated").abort);
    assert!(matches!(
        d.occ.on_agent_settled(true).effects.as_slice(),
        [Effect::Compact { .. }]
    ));
    // The step of the refusal: the skip record, the warning and the continuation, in order.
    let step = d.occ.on_compaction_finished(&CompactionResult::Failed {
        name: None,
        message: "Summarization failed: generation hit the token cap and the summary is incomplete"
            .into(),
    });
    let value = serde_json::to_string_pretty(&step).expect("json");
    assert_text_snapshot!("skip_entry", value);
}

#[test]
fn error_messages() {
    let plan_errors = [
        json!(null),
        json!({"steps": [], "note": 1}),
        json!({}),
        json!({"steps": "1. build"}),
        json!({"steps": (0..129).map(|i| json!({"id": i.to_string(), "goal": "g", "status": "pending"})).collect::<Vec<_>>()}),
        json!({"steps": [7]}),
        json!({"steps": [{"id": "1", "goal": "g", "status": "pending", "owner": "me"}]}),
        json!({"steps": [{"goal": "g", "status": "pending"}]}),
        json!({"steps": [{"id": 1, "goal": "g", "status": "pending"}]}),
        json!({"steps": [{"id": "1", "goal": "", "status": "pending"}]}),
        json!({"steps": [{"id": "1", "goal": "x".repeat(16_385), "status": "pending"}]}),
        json!({"steps": [{"id": "1", "goal": "g", "status": "done"}]}),
        json!({"steps": [{"id": "1", "goal": "g", "status": "pending"}, {"id": "1", "goal": "h", "status": "pending"}]}),
        json!({"steps": [{"id": "1", "goal": "g", "status": "pending"}], "progress": []}),
        json!({"steps": [{"id": "1", "goal": "g", "status": "pending"}], "progress": {"tests": []}}),
        json!({"steps": [{"id": "1", "goal": "g", "status": "pending"}], "progress": {"verification": "ok"}}),
        json!({"steps": [{"id": "1", "goal": "g", "status": "pending"}], "progress": {"decisions": vec!["d"; 65]}}),
        json!({"steps": [{"id": "1", "goal": "g", "status": "pending"}], "progress": {"files_changed": [null]}}),
        json!({"steps": [{"id": "1", "goal": "g", "status": "pending"}], "progress": {"files_changed": ["f".repeat(1001)]}}),
    ];
    let mut lines: Vec<String> = plan_errors
        .iter()
        .map(|args| {
            let error: PlanError = parse_update_plan(args).expect_err("invalid");
            format!("{}: {error}", error.code())
        })
        .collect();
    lines.push(format!("aborted: {}", PlanToolError::Aborted));
    lines.push(format!(
        "{}: {}",
        OptionsError::InvalidRatio.code(),
        OptionsError::InvalidRatio
    ));
    lines.push(format!(
        "{}: {}",
        OptionsError::InvalidKeepRecentTokens.code(),
        OptionsError::InvalidKeepRecentTokens
    ));
    assert_text_snapshot!("error_messages", lines.join("\n"));
}

#[test]
fn decision_record() {
    let input = EconomicsInput {
        write_tokens: 80_000,
        archive_tokens: 60_000,
        memo_tokens: 1_000,
        context_tokens: 80_000,
        completed_boundary_request_counts: Some(vec![4, 6, 5]),
        remaining_boundaries: 4,
        average_context_token_increment: Some(2_000.0),
        context_window_tokens: Some(200_000),
        prior_compaction_count: 1,
        carried_debt_tokens: 2_000_000.0,
        cache_debt_repayment_tokens: 0.0,
        cache_write_read_ratio: Some(2.0),
        requests_since_last_compaction: Some(9),
    };
    let decision = decide(&input, &EconomicsParams::default());
    assert_text_snapshot!(
        "decision_record",
        serde_json::to_string_pretty(&decision).expect("json")
    );
}

#[test]
fn unreadable_state_warnings() {
    use sol_occ::state::StateError;
    let texts = [
        text::unreadable_state_warning(&[StateError::Version(2)]),
        text::unreadable_state_warning(&[
            StateError::Plan("steps[0].id must not be empty".into()),
            StateError::Malformed("invalid type: string \"x\",\nexpected u64".into()),
            StateError::Bare,
        ]),
    ];
    assert_text_snapshot!("unreadable_state_warnings", texts.join("\n---\n"));
}

#[test]
fn prompt_guidelines_for_another_tool_name() {
    let lines: Vec<String> = text::prompt_guidelines("plan")
        .iter()
        .map(|line| format!("- {line}"))
        .collect();
    assert_text_snapshot!("prompt_guidelines_other_name", lines.join("\n"));
}

#[test]
fn plan_errors_for_another_tool_name() {
    // A host that registers the plan tool as `set_plan`: the errors the model reads name it so.
    let mut occ = OccSession::new(Default::default()).with_plan_tool_name("set_plan");
    let lines: Vec<String> = [json!(null), json!({"plan": [], "steps": []})]
        .iter()
        .map(|args| {
            let (result, _) = occ.on_update_plan("call-1", args, false);
            let error = result.expect_err("invalid");
            format!("{}: {error}", error.code())
        })
        .collect();
    assert_text_snapshot!("plan_errors_other_name", lines.join("\n"));
}

/// A boundary driven with the host conveniences up to the selection (`abort`).
fn selected_boundary(lines: &mut Vec<String>) -> OccSession {
    use sol_occ::session::{BoundaryMeasurement, ContextEvent, TurnEnd, TurnToolResult};
    use sol_occ::settings::OccOptions;
    use sol_occ::tokens::{MessageRole, SizedMessage};
    let options = OccOptions {
        cache_write_read_ratio: Some(0.0),
        keep_recent_tokens: Some(3_000),
    };
    let mut occ = OccSession::new(options);
    let plan = |first: &str, second: &str| {
        json!({"steps": [{"id": "a", "goal": "Build it", "status": first},
            {"id": "b", "goal": "Ship it", "status": second}]})
    };
    let mut show = |event: &str, step: sol_occ::session::Step| {
        lines.push(format!("{event}: {step}"));
    };
    show(
        "update_plan",
        occ.on_update_plan("p1", &plan("in_progress", "pending"), false)
            .1,
    );
    let mut conversation = Vec::new();
    for i in 0..6u64 {
        let role = [MessageRole::User, MessageRole::Assistant][i as usize % 2];
        conversation.push(SizedMessage::new(role, 2_000, format!("m{i}")));
        let context = ContextEvent::total(false, 2_000 * (i + 1));
        show("request", occ.on_request(context, None, 0));
    }
    show(
        "update_plan",
        occ.on_update_plan("p2", &plan("completed", "in_progress"), false)
            .1,
    );
    let turn = TurnEnd::after_tools(vec![TurnToolResult::new("p2", "update_plan", false)]);
    show("turn end", occ.on_turn_end(&turn));
    let measurement = BoundaryMeasurement::from_observed(conversation, 200_000);
    show("measurement", occ.on_decide_boundary(&measurement));
    occ
}

#[test]
fn effect_and_step_lines() {
    use sol_occ::session::{Effect, Step};
    let mut lines = Vec::new();
    let mut completed = selected_boundary(&mut lines);
    lines.push(format!("settled: {}", completed.on_agent_settled(true)));
    lines.push(format!(
        "nested settlement: {}",
        completed.on_agent_settled(true)
    ));
    lines.push(format!(
        "completed: {}",
        completed.on_compaction_finished(&CompactionResult::completed("## Goal\nShip it."))
    ));
    lines.push(format!(
        "sent, busy: {}",
        completed.on_continuation_sent(false)
    ));
    for (label, name, message) in [
        ("refused", None, "Nothing to compact (session too small)"),
        (
            "failed",
            Some("Error"),
            "provider returned 500\nretry later",
        ),
    ] {
        let mut occ = selected_boundary(&mut Vec::new());
        occ.on_agent_settled(true);
        let result = CompactionResult::Failed {
            name: name.map(str::to_owned),
            message: message.to_owned(),
        };
        lines.push(format!("{label}: {}", occ.on_compaction_finished(&result)));
        lines.push(format!("{label}, sent: {}", occ.on_continuation_sent(true)));
    }
    let mut dropped = selected_boundary(&mut Vec::new());
    lines.push(format!("settled busy: {}", dropped.on_agent_settled(false)));
    let warn = Step {
        effects: vec![Effect::Warn {
            text: "first line\nsecond line".into(),
        }],
        ..Step::default()
    };
    lines.push(format!("warning: {warn}"));
    lines.push(format!("nothing: {}", Step::default()));
    assert_text_snapshot!("effect_and_step_lines", lines.join("\n"));
}

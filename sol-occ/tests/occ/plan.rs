//! The plan model: argument validation with the schema's bounds, and transition analysis.

use serde_json::{Value, json};
use sol_occ::plan::{
    self, MAX_PROGRESS_ITEM_CHARS, MAX_STEP_TEXT_CHARS, MAX_STEPS, PlanAdvice, PlanError, PlanStep,
    StepStatus, analyze_transition, parse_plan_steps, parse_update_plan,
};

fn steps(list: &[(&str, StepStatus)]) -> Vec<PlanStep> {
    list.iter()
        .map(|(id, status)| PlanStep::new(id, &format!("goal {id}"), *status))
        .collect()
}

fn step_json(id: &str, goal: &str, status: &str) -> Value {
    json!({"id": id, "goal": goal, "status": status})
}

fn code(args: Value) -> &'static str {
    parse_update_plan(&args).expect_err("invalid").code()
}

#[test]
fn an_empty_stored_plan_parses_but_the_tool_rejects_it() {
    assert_eq!(parse_plan_steps(&json!([])), Ok(Vec::new()));
    let error = parse_update_plan(&json!({"steps": []})).expect_err("empty");
    assert_eq!(error, PlanError::NoSteps);
    assert!(
        error
            .to_string()
            .starts_with("Plan must contain at least one valid step")
    );
    assert_eq!(code(json!({})), "no_steps");
}

#[test]
fn missing_id_unknown_status_and_duplicate_ids_are_rejected() {
    assert_eq!(
        code(json!({"steps": [{"goal": "g", "status": "pending"}]})),
        "missing_step_field"
    );
    let error = parse_update_plan(&json!({"steps": [step_json("1", "g", "done")]}))
        .expect_err("bad status");
    assert_eq!(error.code(), "invalid_status");
    assert_eq!(
        error.to_string(),
        "steps[0].status must be \"pending\", \"in_progress\" or \"completed\", got \"done\"; the plan was not changed"
    );
    let error = parse_update_plan(&json!({"steps": [
        step_json("a", "one", "pending"), step_json("a", "two", "pending")
    ]}))
    .expect_err("duplicate");
    assert_eq!(
        error,
        PlanError::DuplicateStepId {
            index: 1,
            id: "a".into()
        }
    );
}

#[test]
fn a_valid_plan_round_trips() {
    let args = json!({"steps": [
        step_json("1", "Build", "completed"),
        step_json("2", "Test", "in_progress"),
        step_json("3", "Ship", "pending"),
    ], "progress": {"files_changed": ["src/a.rs"], "verification": ["cargo test: ok"], "decisions": []}});
    let update = parse_update_plan(&args).expect("valid");
    assert_eq!(
        serde_json::to_value(&update.steps).expect("json"),
        args["steps"]
    );
    let progress = update.progress.expect("progress");
    assert_eq!(progress.files_changed, vec!["src/a.rs"]);
    assert!(progress.decisions.is_empty());
    assert_eq!(parse_plan_steps(&args["steps"]), Ok(update.steps));
}

#[test]
fn the_shape_is_checked_like_the_schema() {
    assert_eq!(code(json!([])), "arguments_not_object");
    assert_eq!(code(json!({"steps": [], "extra": 1})), "unknown_argument");
    assert_eq!(code(json!({"steps": {}})), "steps_not_array");
    assert_eq!(code(json!({"steps": ["x"]})), "step_not_object");
    assert_eq!(
        code(json!({"steps": [{"id": "1", "goal": "g", "status": "pending", "note": ""}]})),
        "unknown_step_key"
    );
    assert_eq!(
        code(json!({"steps": [step_json("", "g", "pending")]})),
        "empty_step_field"
    );
    assert_eq!(
        code(json!({"steps": [{"id": 1, "goal": "g", "status": "pending"}]})),
        "step_field_not_string"
    );
    assert_eq!(
        code(json!({"steps": [{"id": "1", "goal": "g", "status": 2}]})),
        "invalid_status"
    );
    let one = json!([step_json("1", "g", "pending")]);
    assert_eq!(
        code(json!({"steps": one, "progress": null})),
        "progress_not_object"
    );
    assert_eq!(
        code(json!({"steps": one, "progress": {"notes": []}})),
        "unknown_progress_key"
    );
    assert_eq!(
        code(json!({"steps": one, "progress": {"decisions": "x"}})),
        "progress_list_not_array"
    );
    assert_eq!(
        code(json!({"steps": one, "progress": {"verification": [1]}})),
        "progress_item_not_string"
    );
}

#[test]
fn step_count_is_bounded_at_128() {
    let many = |n: usize| -> Value {
        json!({"steps": (0..n).map(|i| step_json(&i.to_string(), "g", "pending")).collect::<Vec<_>>()})
    };
    assert_eq!(
        parse_update_plan(&many(MAX_STEPS))
            .expect("128")
            .steps
            .len(),
        128
    );
    assert_eq!(
        parse_update_plan(&many(MAX_STEPS + 1)).expect_err("129"),
        PlanError::TooManySteps { count: 129 }
    );
}

#[test]
fn astral_code_points_count_once_not_by_bytes() {
    let goal = "\u{1F680}".repeat(MAX_STEP_TEXT_CHARS);
    assert_eq!(goal.len(), 4 * MAX_STEP_TEXT_CHARS);
    assert!(parse_update_plan(&json!({"steps": [step_json("1", &goal, "pending")]})).is_ok());
    let longer = format!("{goal}\u{1F680}");
    assert_eq!(
        parse_update_plan(&json!({"steps": [step_json("1", &longer, "pending")]})),
        Err(PlanError::StepFieldTooLong {
            index: 0,
            field: "goal",
            chars: 16_385
        })
    );
}

#[test]
fn combining_sequences_count_each_code_point() {
    // "e" + COMBINING ACUTE ACCENT is two code points, three bytes.
    let id = "e\u{301}".repeat(MAX_STEP_TEXT_CHARS / 2);
    assert_eq!(plan::code_points(&id), MAX_STEP_TEXT_CHARS);
    assert!(parse_update_plan(&json!({"steps": [step_json(&id, "g", "pending")]})).is_ok());
    let longer = format!("{id}e");
    assert_eq!(
        parse_update_plan(&json!({"steps": [step_json(&longer, "g", "pending")]}))
            .expect_err("too long")
            .code(),
        "step_field_too_long"
    );
}

#[test]
fn progress_lists_are_bounded_128_64_64_and_1000() {
    let one = json!([step_json("1", "g", "pending")]);
    for (key, max) in [
        ("files_changed", 128),
        ("verification", 64),
        ("decisions", 64),
    ] {
        let ok = json!({"steps": one, "progress": {key: vec!["x"; max]}});
        assert!(parse_update_plan(&ok).is_ok(), "{key} at {max}");
        let over = json!({"steps": one, "progress": {key: vec!["x"; max + 1]}});
        assert_eq!(
            parse_update_plan(&over).expect_err("over").code(),
            "too_many_progress_items"
        );
    }
    let item = "\u{00E9}".repeat(MAX_PROGRESS_ITEM_CHARS);
    let ok = json!({"steps": one, "progress": {"decisions": [item]}});
    assert!(parse_update_plan(&ok).is_ok());
    let over = json!({"steps": one, "progress": {"decisions": [format!("{item}x")]}});
    assert_eq!(
        parse_update_plan(&over).expect_err("long item").to_string(),
        "progress.decisions[0] has 1001 characters, at most 1000 are allowed; the plan was not changed"
    );
}

#[test]
fn only_new_transitions_into_completed_count() {
    use StepStatus::*;
    let open = steps(&[("a", InProgress)]);
    let done = steps(&[("a", Completed)]);
    assert_eq!(
        analyze_transition(&open, &done).completed_step_ids,
        vec!["a"]
    );
    assert!(
        analyze_transition(&done, &done)
            .completed_step_ids
            .is_empty()
    );
    let pending = steps(&[("a", Pending)]);
    assert_eq!(
        analyze_transition(&pending, &done).completed_step_ids,
        vec!["a"]
    );
}

#[test]
fn newly_introduced_completed_ids_are_history() {
    use StepStatus::*;
    // [] -> DONE: nothing was registered.
    assert!(
        analyze_transition(&[], &steps(&[("a", Completed)]))
            .completed_step_ids
            .is_empty()
    );
    // DONE -> the same work under new ids: a re-keyed restatement.
    let done = steps(&[("3", Completed), ("4", Completed), ("5", InProgress)]);
    let rekeyed = steps(&[("p2", Completed), ("p3", Completed), ("p4", InProgress)]);
    assert!(
        analyze_transition(&done, &rekeyed)
            .completed_step_ids
            .is_empty()
    );
    // OPEN -> DONE plus a re-keyed completed id: only the genuine transition counts.
    let open = steps(&[("a", InProgress), ("b", Pending)]);
    let next = steps(&[("a", Completed), ("z", Completed), ("b", InProgress)]);
    assert_eq!(
        analyze_transition(&open, &next).completed_step_ids,
        vec!["a"]
    );
}

#[test]
fn advice_mentions_changed_goals_several_and_no_step_in_progress() {
    use StepStatus::*;
    let before = steps(&[("a", InProgress), ("b", Pending)]);
    let mut after = steps(&[("a", InProgress), ("b", InProgress)]);
    after[0].goal = "something else".into();
    let transition = analyze_transition(&before, &after);
    assert_eq!(
        transition.advice,
        vec![
            PlanAdvice::GoalChanged { id: "a".into() },
            PlanAdvice::SeveralInProgress {
                ids: vec!["a".into(), "b".into()]
            },
        ]
    );
    let texts: Vec<String> = transition.advice.iter().map(PlanAdvice::text).collect();
    assert!(texts[0].contains("changed goal"), "{}", texts[0]);
    assert!(texts[1].contains("at most one"), "{}", texts[1]);
    let idle = steps(&[("a", Completed), ("b", Pending)]);
    assert_eq!(
        analyze_transition(&[], &idle).advice,
        vec![PlanAdvice::NoneInProgress]
    );
    assert!(
        analyze_transition(&[], &steps(&[("a", Completed)]))
            .advice
            .is_empty()
    );
}

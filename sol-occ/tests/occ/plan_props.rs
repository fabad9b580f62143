//! Properties of the plan parser: no panics, code points rather than bytes, round trips,
//! and transitions that only count registered steps.

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value, json};
use sol_occ::plan::{
    MAX_STEP_TEXT_CHARS, PlanStep, StepStatus, analyze_transition, parse_update_plan,
};

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        ".{0,6}".prop_map(Value::String),
        select(vec!["pending", "in_progress", "completed", "done", ""])
            .prop_map(|s| Value::String(s.to_owned())),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(vec!["steps", "progress", "id", "goal", "status", "files_changed",
                         "verification", "decisions"]).prop_map(str::to_owned),
        1 => ".{0,5}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn status() -> impl Strategy<Value = StepStatus> {
    select(StepStatus::ALL.to_vec())
}

fn plan() -> impl Strategy<Value = Vec<PlanStep>> {
    prop::collection::btree_map("[a-z0-9]{1,4}", (".{1,12}", status()), 1..8).prop_map(|map| {
        map.into_iter()
            .map(|(id, (goal, status))| PlanStep { id, goal, status })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_parser_never_panics(value in json_value()) {
        let _ = parse_update_plan(&value);
        let _ = parse_update_plan(&json!({"steps": value.clone()}));
        let _ = parse_update_plan(&json!({"steps": [value]}));
    }

    #[test]
    fn valid_plans_round_trip(steps in plan()) {
        let args = json!({"steps": steps});
        let parsed = parse_update_plan(&args).expect("valid");
        prop_assert_eq!(parsed.steps, steps);
    }

    #[test]
    fn only_registered_unfinished_steps_complete(previous in plan(), next in plan()) {
        let transition = analyze_transition(&previous, &next);
        for id in &transition.completed_step_ids {
            let before = previous.iter().find(|step| &step.id == id).expect("registered");
            prop_assert_ne!(before.status, StepStatus::Completed);
            let after = next.iter().find(|step| &step.id == id).expect("in the new plan");
            prop_assert_eq!(after.status, StepStatus::Completed);
        }
        // Restating a plan never completes anything.
        prop_assert!(analyze_transition(&next, &next).completed_step_ids.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn lengths_are_code_points_not_bytes(
        c in any::<char>(),
        extra in 0usize..4,
        over in any::<bool>(),
    ) {
        let n = if over { MAX_STEP_TEXT_CHARS + 1 + extra } else { MAX_STEP_TEXT_CHARS - extra };
        let text: String = std::iter::repeat_n(c, n).collect();
        let accepted = parse_update_plan(&json!({"steps": [
            {"id": "1", "goal": text, "status": "pending"}
        ]})).is_ok();
        prop_assert_eq!(accepted, !over, "{} code points of {:?} ({} bytes)", n, c, n * c.len_utf8());
    }
}

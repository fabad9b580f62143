//! Properties of `then_run` validation: no panics, sound results, round trips.

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value, json};
use sol_fusion::then_run::{ThenRun, parse_then_run};

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("JSON numbers are finite", |f| {
            Number::from_f64(f).map(Value::Number)
        }),
        ".{0,8}".prop_map(Value::String),
        select(vec!["", " ", "\t\n", "npm test", " x "]).prop_map(|s| Value::String(s.to_owned())),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(vec!["command", "timeout"]).prop_map(str::to_owned),
        1 => ".{0,6}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn command() -> impl Strategy<Value = String> {
    ".{0,40}".prop_filter("not blank", |command| {
        !command
            .chars()
            .all(|c| c.is_whitespace() || c == '\u{feff}')
    })
}

fn timeout() -> impl Strategy<Value = Option<f64>> {
    prop::option::of(prop_oneof![
        (1u32..100_000).prop_map(f64::from),
        (f64::MIN_POSITIVE..1e12f64),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn any_json_value_is_handled_without_panicking(value in json_value()) {
        if let Ok(Some(then_run)) = parse_then_run(Some(&value)) {
            prop_assert!(!then_run.command.trim().is_empty());
            if let Some(seconds) = then_run.timeout_seconds {
                prop_assert!(seconds.is_finite() && seconds > 0.0);
            }
        }
    }

    #[test]
    fn objects_built_from_valid_parts_round_trip(command in command(), timeout in timeout()) {
        let mut object = json!({ "command": command });
        if let Some(seconds) = timeout {
            object["timeout"] = json!(seconds);
        }
        prop_assert_eq!(
            parse_then_run(Some(&object)),
            Ok(Some(ThenRun { command, timeout_seconds: timeout }))
        );
    }
}

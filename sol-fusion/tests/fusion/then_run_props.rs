//! Properties of `then_run` validation: no panics, sound results, round trips.

use std::time::Duration;

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value, json};
use sol_fusion::then_run::{
    MAX_COMMAND_BYTES, MAX_TIMEOUT_MS, ThenRun, ThenRunError, parse_then_run, timeout_duration,
};

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
    ".{0,40}".prop_filter("not blank, no NUL", |command| {
        !command.contains('\0')
            && !command
                .chars()
                .all(|c| c.is_whitespace() || c == '\u{feff}')
    })
}

fn timeout() -> impl Strategy<Value = Option<f64>> {
    prop::option::of(prop_oneof![
        (1u32..100_000).prop_map(f64::from),
        (f64::MIN_POSITIVE..2_147_483.647f64),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn any_json_value_is_handled_without_panicking(value in json_value()) {
        if let Ok(Some(then_run)) = parse_then_run(Some(&value)) {
            prop_assert!(!then_run.command.trim().is_empty());
            prop_assert!(then_run.command.len() <= MAX_COMMAND_BYTES);
            prop_assert!(!then_run.command.contains('\0'));
            if let Some(seconds) = then_run.timeout_seconds {
                prop_assert!(seconds.is_finite() && seconds > 0.0);
                prop_assert!(seconds * 1000.0 <= MAX_TIMEOUT_MS);
            }
            prop_assert_eq!(then_run.timeout, then_run.timeout_seconds.and_then(timeout_duration));
        }
    }

    #[test]
    fn a_timeout_is_accepted_exactly_when_pi_bash_would_accept_it(
        seconds in prop_oneof![
            (f64::MIN_POSITIVE..1e7f64),
            (2_147_483.0f64..2_147_484.0),
            (1e7f64..f64::MAX),
        ]
    ) {
        // Pi: finite, > 0, and seconds * 1000 <= 2^31 - 1.
        let pi_accepts = seconds.is_finite() && seconds > 0.0 && seconds * 1000.0 <= 2_147_483_647.0;
        let parsed = parse_then_run(Some(&json!({"command": "x", "timeout": seconds})));
        prop_assert_eq!(parsed.is_ok(), pi_accepts, "{:?}", parsed);
        if !pi_accepts {
            prop_assert_eq!(parsed.map_err(|e| e.code()), Err("timeout_too_long"));
        }
    }

    #[test]
    fn a_nul_anywhere_in_the_command_is_refused(head in ".{0,20}", tail in ".{0,20}") {
        let command = format!("{head}\0{tail}");
        prop_assert_eq!(
            parse_then_run(Some(&json!({ "command": command }))),
            Err(ThenRunError::CommandHasNul)
        );
    }

    #[test]
    fn the_length_limit_counts_utf8_bytes(
        unit in select(vec!["x", "é", "€", "𝄞"]),
        extra in 0usize..3,
    ) {
        let mut command = unit.repeat(MAX_COMMAND_BYTES / unit.len());
        command.push_str(&"y".repeat(extra));
        let parsed = parse_then_run(Some(&json!({ "command": command })));
        if command.len() <= MAX_COMMAND_BYTES {
            prop_assert!(parsed.is_ok());
        } else {
            prop_assert_eq!(parsed, Err(ThenRunError::CommandTooLong { bytes: command.len() }));
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
            Ok(Some(ThenRun {
                command,
                timeout: timeout.map(|seconds| Duration::from_secs_f64(seconds).max(Duration::from_nanos(1))),
                timeout_seconds: timeout,
            }))
        );
    }

    #[test]
    fn an_accepted_timeout_is_a_positive_duration_within_the_limit_near_the_given_number(
        seconds in prop_oneof![
            (f64::MIN_POSITIVE..1e-6f64),
            (1e-6f64..2_147_483.647f64),
        ]
    ) {
        let then_run = parse_then_run(Some(&json!({"command": "x", "timeout": seconds})))
            .expect("accepted")
            .expect("present");
        prop_assert_eq!(then_run.timeout_seconds, Some(seconds));
        let duration = then_run.timeout.expect("a duration");
        prop_assert!(duration > Duration::ZERO);
        prop_assert!(duration <= Duration::from_millis(2_147_483_647));
        // Within a nanosecond of the number (f64 rounding aside).
        prop_assert!((duration.as_secs_f64() - seconds).abs() <= 1e-9 + seconds * 1e-15);
    }
}

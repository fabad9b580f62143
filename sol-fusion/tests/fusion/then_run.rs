//! Validation of the `then_run` argument.

use std::time::Duration;

use serde_json::{Value, json};
use sol_fusion::FusionError;
use sol_fusion::text;
use sol_fusion::then_run::{
    MAX_COMMAND_BYTES, MAX_TIMEOUT_SECONDS, ThenRun, ThenRunError, parse_then_run,
};

fn parse(value: Value) -> Result<Option<ThenRun>, ThenRunError> {
    parse_then_run(Some(&value))
}

fn code(value: Value) -> &'static str {
    match parse(value.clone()) {
        Ok(parsed) => panic!("{value} was accepted as {parsed:?}"),
        Err(error) => error.code(),
    }
}

#[test]
fn absent_and_null_mean_no_follow_up() {
    assert_eq!(parse_then_run(None), Ok(None));
    assert_eq!(parse(Value::Null), Ok(None));
}

#[test]
fn a_command_alone_has_no_timeout() {
    assert_eq!(
        parse(json!({"command": "npm test"})),
        Ok(Some(ThenRun {
            command: "npm test".to_owned(),
            timeout: None,
            timeout_seconds: None
        }))
    );
}

#[test]
fn timeouts_may_be_integers_or_fractions() {
    for (timeout, seconds) in [(json!(12), 12.0), (json!(0.5), 0.5), (json!(1e6), 1e6)] {
        let parsed = parse(json!({"command": "make", "timeout": timeout}));
        assert_eq!(
            parsed.map(|then_run| then_run.and_then(|t| t.timeout_seconds)),
            Ok(Some(seconds))
        );
    }
}

#[test]
fn the_timeout_is_a_duration_for_rust_hosts_and_the_given_number_for_pi() {
    for (timeout, duration, seconds) in [
        (json!(12), Duration::from_secs(12), 12.0),
        (json!(0.1), Duration::from_millis(100), 0.1),
        (json!(1.5), Duration::from_millis(1500), 1.5),
        (
            json!(2_147_483.647),
            Duration::from_millis(2_147_483_647),
            2_147_483.647,
        ),
        // Below a nanosecond the duration is one nanosecond: never zero, never "no timeout".
        (json!(1e-12), Duration::from_nanos(1), 1e-12),
    ] {
        let parsed = parse(json!({"command": "make", "timeout": timeout}))
            .expect("valid")
            .expect("present");
        assert_eq!(parsed.timeout, Some(duration));
        assert_eq!(parsed.timeout_seconds, Some(seconds));
    }
}

#[test]
fn the_command_is_kept_exactly() {
    let command = "  cd sub && cargo test -- --nocapture\n";
    let parsed = parse(json!({ "timeout": 3, "command": command }));
    assert_eq!(
        parsed.map(|then_run| then_run.map(|t| t.command)),
        Ok(Some(command.to_owned()))
    );
}

#[test]
fn anything_but_an_object_is_rejected() {
    for value in [
        json!(true),
        json!(1),
        json!("npm test"),
        json!(["npm test"]),
    ] {
        assert_eq!(code(value), "not_an_object");
    }
}

#[test]
fn unknown_keys_are_rejected_before_the_command_is_checked() {
    assert_eq!(code(json!({"cmd": "npm test"})), "unknown_key");
    let error = parse(json!({"command": "x", "timeout": 1, "cwd": "/tmp", "env": {}}));
    assert_eq!(
        error,
        Err(ThenRunError::UnknownKey {
            key: "cwd".to_owned()
        })
    );
}

#[test]
fn the_command_must_be_a_non_blank_string() {
    assert_eq!(code(json!({})), "missing_command");
    assert_eq!(code(json!({"timeout": 5})), "missing_command");
    assert_eq!(code(json!({"command": null})), "command_not_string");
    assert_eq!(
        code(json!({"command": ["npm", "test"]})),
        "command_not_string"
    );
    for blank in ["", " ", "\t\n", "\u{3000}", "\u{feff}"] {
        assert_eq!(
            code(json!({ "command": blank })),
            "empty_command",
            "{blank:?}"
        );
    }
}

#[test]
fn the_timeout_must_be_a_positive_number() {
    for timeout in [
        json!(0),
        json!(-0.0),
        json!(-5),
        json!("30"),
        json!(null),
        json!(true),
    ] {
        assert_eq!(
            code(json!({"command": "x", "timeout": timeout})),
            "invalid_timeout",
            "{timeout}"
        );
    }
}

#[test]
fn the_timeout_is_at_most_what_pi_bash_accepts() {
    // Pi's bash refuses `timeout * 1000 > 2^31 - 1`; so does the parser, with the same product.
    let accepted = [2_147_483.0, 2_147_483.647, MAX_TIMEOUT_SECONDS];
    for seconds in accepted {
        let parsed = parse(json!({"command": "x", "timeout": seconds}));
        assert_eq!(
            parsed.map(|then_run| then_run.and_then(|t| t.timeout_seconds)),
            Ok(Some(seconds)),
            "{seconds}"
        );
    }
    for timeout in [
        json!(2_147_483.648),
        json!(2_147_484),
        json!(1e7),
        json!(1e308),
        json!(f64::MAX),
        json!(u64::MAX),
    ] {
        assert_eq!(
            code(json!({"command": "x", "timeout": timeout})),
            "timeout_too_long",
            "{timeout}"
        );
    }
}

#[test]
fn the_command_has_no_nul_and_a_bounded_length() {
    for command in ["\0", "make\0", "echo a\0b", "\0 "] {
        assert_eq!(
            code(json!({ "command": command })),
            "command_has_nul",
            "{command:?}"
        );
    }
    let longest = "x".repeat(MAX_COMMAND_BYTES);
    assert_eq!(
        parse(json!({ "command": longest })).map(|then_run| then_run.map(|t| t.command.len())),
        Ok(Some(MAX_COMMAND_BYTES))
    );
    // The limit counts UTF-8 bytes, not characters.
    for command in [
        "x".repeat(MAX_COMMAND_BYTES + 1),
        "é".repeat(MAX_COMMAND_BYTES / 2 + 1),
        "x".repeat(2 * 1024 * 1024),
    ] {
        assert_eq!(code(json!({ "command": command })), "command_too_long");
    }
    // A command that is too long is reported as such even when it also holds a NUL.
    let both = format!("\0{}", "x".repeat(MAX_COMMAND_BYTES));
    assert_eq!(code(json!({ "command": both })), "command_too_long");
}

#[test]
fn the_schema_descriptions_state_the_limits() {
    assert!(
        text::command_description().contains(&MAX_COMMAND_BYTES.to_string()),
        "{}",
        text::command_description()
    );
    let whole_seconds = MAX_TIMEOUT_SECONDS.floor().to_string();
    assert!(
        text::timeout_description().contains(&whole_seconds),
        "{}",
        text::timeout_description()
    );
}

#[test]
fn every_error_says_the_file_was_not_modified() {
    let values = [
        json!("npm test"),
        json!({"cmd": "x"}),
        json!({}),
        json!({"command": 1}),
        json!({"command": ""}),
        json!({"command": "x", "timeout": -1}),
        json!({"command": "x", "timeout": 1e308}),
        json!({"command": "x\0"}),
        json!({"command": "x".repeat(MAX_COMMAND_BYTES + 1)}),
    ];
    for value in values {
        let message = parse(value).expect_err("invalid").to_string();
        assert!(
            message.ends_with("; the file was not modified"),
            "{message}"
        );
        assert!(message.starts_with("then_run"), "{message}");
    }
}

#[test]
fn fusion_error_keeps_the_code() {
    let error = parse(json!({})).expect_err("missing command");
    assert_eq!(FusionError::from(error).code(), "missing_command");
}

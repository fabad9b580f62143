//! The shared `then_run` cases in `fixtures/fusion/then_run.json`, run through `parse_then_run`.

// Reading the fixture file needs std::fs, which clippy.toml forbids in the library.
#![allow(clippy::disallowed_methods)]

use serde::Deserialize;
use serde_json::{Value, json};
use sol_fusion::then_run::parse_then_run;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    #[serde(default)]
    then_run: Option<Value>,
    #[serde(default)]
    command_bytes: Option<usize>,
    error_code: Option<String>,
}

impl Case {
    fn value(&self) -> Value {
        match (&self.then_run, self.command_bytes) {
            (Some(value), None) => value.clone(),
            (None, Some(bytes)) => json!({ "command": "x".repeat(bytes) }),
            // `"then_run": null` deserializes as absent: the null argument.
            (None, None) => Value::Null,
            (Some(_), Some(_)) => panic!("{self:?}: give then_run or command_bytes, not both"),
        }
    }
}

#[test]
fn every_then_run_fixture_gives_its_expected_result() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/fusion/then_run.json"
    );
    let text = std::fs::read_to_string(file).expect("fixtures/fusion/then_run.json is readable");
    let cases: Vec<Case> = serde_json::from_str(&text).expect("a list of cases");
    assert!(cases.len() >= 20, "only {} then_run fixtures", cases.len());
    for case in &cases {
        let value = case.value();
        let outcome = parse_then_run(Some(&value)).map_err(|error| error.code().to_owned());
        match &case.error_code {
            None => assert!(outcome.is_ok(), "{case:?}: {outcome:?}"),
            Some(code) => assert_eq!(outcome.as_ref().err(), Some(code), "{case:?}"),
        }
    }
}

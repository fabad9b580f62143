//! Session ids and tool call ids.

use serde_json::json;
use sol_core::{SessionId, ToolCallId};

#[test]
fn safe_session_ids_are_accepted() {
    for id in [
        "a",
        "0",
        "0199a2b3-7c4d-7e8f-9a0b-1c2d3e4f5a6b",
        "Session_2024.01",
        "a..b",
        "x-",
        "ABC",
    ] {
        let parsed = SessionId::parse(id).unwrap_or_else(|error| panic!("{id}: {error}"));
        assert_eq!(parsed.as_str(), id);
        assert_eq!(parsed.to_string(), id);
    }
}

#[test]
fn unsafe_session_ids_are_rejected() {
    for id in [
        "", ".", "..", ".hidden", "-x", "_x", "a/b", "../etc", "a b", "a\\b", "é", "a\0", "a\n",
        "ａ",
    ] {
        let error = SessionId::parse(id).expect_err(id);
        assert_eq!(error.rejected_id(), id);
    }
}

#[test]
fn session_id_serde_validates() {
    let id = SessionId::parse("s-1").expect("safe");
    assert_eq!(
        serde_json::to_value(&id).expect("serializable"),
        json!("s-1")
    );
    let back: SessionId = serde_json::from_value(json!("s-1")).expect("safe");
    assert_eq!(back, id);
    let error = serde_json::from_value::<SessionId>(json!("../x")).expect_err("unsafe");
    assert!(error.to_string().contains("safe Pi session id"), "{error}");
}

#[test]
fn tool_call_id_is_a_transparent_string() {
    let id = ToolCallId::from("call_1");
    assert_eq!(id.as_str(), "call_1");
    assert_eq!(id.to_string(), "call_1");
    assert_eq!(
        serde_json::to_value(&id).expect("serializable"),
        json!("call_1")
    );
    let back: ToolCallId = serde_json::from_value(json!("call_1")).expect("a string");
    assert_eq!(back, id);
    assert_eq!(
        ToolCallId::from(String::from("x")),
        ToolCallId("x".to_owned())
    );
}

//! Pi messages: typed where SoL-Pi reads them, lossless everywhere.

use serde_json::{Value, json};
use sol_core::ToolCallId;
use sol_core::message::{
    AgentMessage, AssistantBlock, ContentBlock, ToolResultMessage, UserContent,
};

fn usage() -> Value {
    json!({
        "input": 1200, "output": 85, "cacheRead": 1024, "cacheWrite": 0, "totalTokens": 1285,
        "cost": {"input": 0.0012, "output": 0.00085, "cacheRead": 0.0001, "cacheWrite": 0, "total": 0.00215}
    })
}

fn user_with_string() -> Value {
    json!({"role": "user", "content": "Fix the failing test in src/lib.rs", "timestamp": 1_733_000_000_000_i64})
}

fn user_with_blocks() -> Value {
    json!({
        "role": "user",
        "content": [
            {"type": "text", "text": "What is wrong in this screenshot?"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        ],
        "timestamp": 1_733_000_000_100_i64
    })
}

fn assistant_with_tool_call() -> Value {
    json!({
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Run the tests first.", "thinkingSignature": "sig-abc"},
            {"type": "text", "text": "Let me run the tests."},
            {"type": "toolCall", "id": "call_01", "name": "bash",
             "arguments": {"command": "cargo test", "timeout": 120}, "thoughtSignature": "ts"}
        ],
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-5",
        "usage": usage(),
        "stopReason": "toolUse",
        "timestamp": 1_733_000_000_200_i64,
        "durationMs": 812
    })
}

fn tool_result_text() -> Value {
    json!({
        "role": "toolResult",
        "toolCallId": "call_01",
        "toolName": "bash",
        "content": [{"type": "text", "text": "running 3 tests\n"}, {"type": "text", "text": "test result: ok"}],
        "details": {"exitCode": 0, "truncation": null, "fullOutputPath": "/tmp/pi-bash-1.log"},
        "isError": false,
        "timestamp": 1_733_000_001_000_i64
    })
}

fn tool_result_image() -> Value {
    json!({
        "role": "toolResult",
        "toolCallId": "call_02",
        "toolName": "read",
        "content": [
            {"type": "text", "text": "Read image file [image/png]"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        ],
        "isError": false,
        "timestamp": 1_733_000_002_000_i64
    })
}

fn custom_message() -> Value {
    json!({
        "role": "custom",
        "customType": "sol-pi-online-context-compact",
        "content": "Continue with the next plan step.",
        "display": true,
        "details": {"step": 2},
        "timestamp": 1_733_000_003_000_i64
    })
}

fn bash_execution() -> Value {
    json!({
        "role": "bashExecution",
        "command": "ls -la",
        "output": "total 0\n",
        "exitCode": 0,
        "cancelled": false,
        "truncated": false,
        "timestamp": 1_733_000_004_000_i64,
        "excludeFromContext": true
    })
}

fn samples() -> Vec<(&'static str, Value)> {
    vec![
        ("user with string", user_with_string()),
        ("user with blocks", user_with_blocks()),
        ("assistant with tool call", assistant_with_tool_call()),
        ("tool result text", tool_result_text()),
        ("tool result image", tool_result_image()),
        ("custom", custom_message()),
        ("bash execution", bash_execution()),
        (
            "branch summary",
            json!({"role": "branchSummary", "summary": "s", "fromId": null, "timestamp": 1}),
        ),
        (
            "compaction summary",
            json!({"role": "compactionSummary", "summary": "s", "tokensBefore": 50_000, "timestamp": 2}),
        ),
        (
            "system",
            json!({"role": "system", "content": "You are Pi.", "timestamp": 0}),
        ),
    ]
}

fn round_trip(value: &Value) -> (AgentMessage, Value) {
    let message: AgentMessage = serde_json::from_value(value.clone()).expect("never fails");
    let back = serde_json::to_value(&message).expect("serializable");
    (message, back)
}

#[test]
fn every_sample_round_trips_losslessly() {
    for (name, value) in samples() {
        let (message, back) = round_trip(&value);
        assert_eq!(back, value, "{name}");
        assert_eq!(message.to_value(), value, "{name}");
        // Through text as well, as the host would send it.
        let text = serde_json::to_string(&message).expect("serializable");
        let reparsed: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(reparsed, value, "{name}");
    }
}

#[test]
fn known_roles_are_typed_and_others_are_kept() {
    let kinds: Vec<(&str, Option<String>)> = samples()
        .into_iter()
        .map(|(_, value)| {
            let message = AgentMessage::from_value(value);
            let kind = match &message {
                AgentMessage::User(_) => "user",
                AgentMessage::Assistant(_) => "assistant",
                AgentMessage::ToolResult(_) => "toolResult",
                AgentMessage::Other(_) => "other",
            };
            (kind, message.role().map(str::to_owned))
        })
        .collect();
    let kind_names: Vec<&str> = kinds.iter().map(|(kind, _)| *kind).collect();
    assert_eq!(
        kind_names,
        [
            "user",
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "other",
            "other",
            "other",
            "other",
            "other"
        ]
    );
    let roles: Vec<&str> = kinds
        .iter()
        .filter_map(|(_, role)| role.as_deref())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "custom",
            "bashExecution",
            "branchSummary",
            "compactionSummary",
            "system"
        ]
    );
}

#[test]
fn user_content_forms() {
    let AgentMessage::User(user) = AgentMessage::from_value(user_with_string()) else {
        panic!("a user message");
    };
    assert_eq!(
        user.content,
        UserContent::Text("Fix the failing test in src/lib.rs".to_owned())
    );
    assert_eq!(user.timestamp, Some(1_733_000_000_000));

    let AgentMessage::User(user) = AgentMessage::from_value(user_with_blocks()) else {
        panic!("a user message");
    };
    assert_eq!(
        user.content,
        UserContent::Blocks(vec![
            ContentBlock::text("What is wrong in this screenshot?"),
            ContentBlock::image("iVBORw0KGgo=", "image/png"),
        ])
    );
}

#[test]
fn assistant_blocks_keep_signatures() {
    let AgentMessage::Assistant(assistant) = AgentMessage::from_value(assistant_with_tool_call())
    else {
        panic!("an assistant message");
    };
    assert_eq!(assistant.stop_reason.as_deref(), Some("toolUse"));
    assert_eq!(assistant.provider.as_deref(), Some("openai"));
    assert_eq!(assistant.model.as_deref(), Some("gpt-5"));
    assert_eq!(assistant.extra["usage"], usage());
    let AssistantBlock::Thinking { thinking, extra } = &assistant.content[0] else {
        panic!("a thinking block");
    };
    assert_eq!(thinking, "Run the tests first.");
    assert_eq!(extra["thinkingSignature"], json!("sig-abc"));
    assert!(!extra.contains_key("type"));
    let calls: Vec<_> = assistant.tool_calls().collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0, &ToolCallId::from("call_01"));
    assert_eq!(calls[0].1, "bash");
    assert_eq!(calls[0].2["command"], json!("cargo test"));
}

#[test]
fn unknown_assistant_blocks_are_kept_verbatim() {
    let value = json!({
        "role": "assistant",
        "content": [
            {"type": "redactedThinking", "data": "xyz"},
            {"type": "text", "text": 5},
            {"type": "toolCall", "id": "c", "name": "n"}
        ],
        "stopReason": "stop"
    });
    let (message, back) = round_trip(&value);
    assert_eq!(back, value);
    let AgentMessage::Assistant(assistant) = message else {
        panic!("still an assistant message");
    };
    assert!(
        assistant
            .content
            .iter()
            .all(|block| matches!(block, AssistantBlock::Other(_)))
    );
}

#[test]
fn tool_result_fields_and_helpers() {
    let AgentMessage::ToolResult(result) = AgentMessage::from_value(tool_result_text()) else {
        panic!("a tool result");
    };
    assert_eq!(result.tool_call_id, ToolCallId::from("call_01"));
    assert_eq!(result.tool_name, "bash");
    assert!(!result.is_error);
    assert_eq!(
        result.details.as_ref().expect("details")["exitCode"],
        json!(0)
    );
    assert_eq!(
        result.text_only().as_deref(),
        Some("running 3 tests\n\ntest result: ok")
    );
    assert_eq!(
        result.text_len_bytes(),
        "running 3 tests\n\ntest result: ok".len()
    );

    let AgentMessage::ToolResult(result) = AgentMessage::from_value(tool_result_image()) else {
        panic!("a tool result");
    };
    assert_eq!(result.text_only(), None);
    assert_eq!(result.text_len_bytes(), "Read image file [image/png]".len());

    let empty: ToolResultMessage = serde_json::from_value(json!({
        "toolCallId": "c", "toolName": "t", "content": [], "isError": true
    }))
    .expect("a tool result");
    assert_eq!(empty.text_only(), None);
    assert_eq!(empty.text_len_bytes(), 0);
    assert_eq!(empty.details, None);
}

#[test]
fn null_details_are_kept_as_null() {
    let value = json!({
        "role": "toolResult", "toolCallId": "c", "toolName": "t",
        "content": [{"type": "text", "text": "x"}], "isError": false, "details": null
    });
    let (message, back) = round_trip(&value);
    assert_eq!(back, value);
    let result = message.as_tool_result().expect("typed");
    assert_eq!(result.details, Some(Value::Null));
}

#[test]
fn unexpected_shapes_of_known_roles_stay_verbatim() {
    for value in [
        // A text block with a field ContentBlock does not model.
        json!({"role": "toolResult", "toolCallId": "c", "toolName": "t", "isError": false,
               "content": [{"type": "text", "text": "x", "textSignature": "s"}]}),
        // An unknown block type.
        json!({"role": "toolResult", "toolCallId": "c", "toolName": "t", "isError": false,
               "content": [{"type": "audio", "data": "..."}]}),
        // A missing required field.
        json!({"role": "toolResult", "toolCallId": "c", "content": [], "isError": false}),
        json!({"role": "user"}),
        json!({"role": "user", "content": "x", "timestamp": 1.5}),
        json!({"role": "assistant", "content": "not blocks"}),
        json!({"role": 7}),
        json!({"no": "role"}),
        json!("not even an object"),
        json!(null),
    ] {
        let (message, back) = round_trip(&value);
        assert!(matches!(message, AgentMessage::Other(_)), "{value}");
        assert_eq!(back, value);
    }
}

#[test]
fn content_blocks_serialize_in_pi_form() {
    assert_eq!(
        serde_json::to_value(ContentBlock::text("hi")).expect("serializable"),
        json!({"type": "text", "text": "hi"})
    );
    assert_eq!(
        serde_json::to_value(ContentBlock::image("AA==", "image/jpeg")).expect("serializable"),
        json!({"type": "image", "data": "AA==", "mimeType": "image/jpeg"})
    );
    assert_eq!(
        serde_json::to_value(AssistantBlock::tool_call(
            "c1",
            "edit",
            json!({"path": "a"})
        ))
        .expect("serializable"),
        json!({"type": "toolCall", "id": "c1", "name": "edit", "arguments": {"path": "a"}})
    );
    assert_eq!(
        serde_json::to_value(AssistantBlock::text("t")).expect("serializable"),
        json!({"type": "text", "text": "t"})
    );
}

#[test]
fn a_whole_conversation_deserializes() {
    let conversation = Value::Array(samples().into_iter().map(|(_, value)| value).collect());
    let messages: Vec<AgentMessage> =
        serde_json::from_value(conversation.clone()).expect("never fails");
    assert_eq!(messages.len(), 10);
    assert_eq!(
        serde_json::to_value(&messages).expect("serializable"),
        conversation
    );
}

/// Every number of the shared fixture (edge cases and seeded random ones, written by Node's
/// `JSON.stringify`) counts as long as JavaScript writes it, inside arguments too.
#[test]
fn numbers_count_as_javascript_writes_them() {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/js-numbers.json"
    ));
    let file: serde_json::Value = serde_json::from_str(text).expect("JSON");
    let cases = file["cases"].as_array().expect("cases");
    assert!(cases.len() >= 200);
    for case in cases {
        let written = case["written"].as_str().expect("written");
        let number = &case["number"];
        assert_eq!(
            sol_core::message::js_json_length(number),
            written.len() as u64,
            "{written}"
        );
        let arguments = serde_json::json!({ "n": number, "list": [number, number] });
        assert_eq!(
            sol_core::message::js_json_length(&arguments),
            format!("{{\"n\":{written},\"list\":[{written},{written}]}}").len() as u64
        );
    }
}

/// A system message counts as Pi's `estimateTokens` counts it: every section's `length` (a
/// text's characters, a list's items; any other value nothing), and the tool declarations'
/// JSON only when JavaScript finds them there (not `null`, `false`, `0` or `""`).
#[test]
fn system_messages_count_as_pi_counts_them() {
    let tokens = |message: Value| AgentMessage::from_value(message).estimated_chars();
    let content = "abcd";
    assert_eq!(tokens(json!({"role": "system", "content": content})), 4);
    let sections = json!({"tools": "12345678", "list": ["a", "b", "c"], "n": 3, "o": {"k": "v"}});
    assert_eq!(
        tokens(json!({"role": "system", "content": content, "sections": sections})),
        4 + 8 + 3
    );
    // `Object.values` of a list is its items, of a text its characters.
    assert_eq!(
        tokens(json!({"role": "system", "content": content, "sections": ["ab", "cde"]})),
        4 + 5
    );
    assert_eq!(
        tokens(json!({"role": "system", "content": content, "sections": "xyz"})),
        4 + 3
    );
    for absent in [json!(null), json!(false), json!(0), json!(""), json!(0.0)] {
        let message = json!({"role": "system", "content": content, "toolsAdded": absent});
        assert_eq!(tokens(message), 4, "{absent}");
    }
    for present in [json!([]), json!({}), json!(true), json!(1), json!("x")] {
        let message = json!({"role": "system", "content": content, "toolsAdded": present});
        let written = serde_json::to_string(&present).expect("JSON").len() as u64;
        assert_eq!(tokens(message), 4 + written, "{present}");
    }
}

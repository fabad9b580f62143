//! The decisions the TypeScript shell hands to the addon: which results the walks skip,
//! how Pi's values are read (a reply, a tool result, a call's arguments), defaults, caps,
//! the storage root of a session, and the config outcome when the search itself fails.

use proptest::prelude::*;
use serde_json::{Value, json};
use sol_core::savings::ReportedUsage;
use sol_napi::obspack::{
    Joined, ObsCandidate, min_candidate_units, obs_recall_call_label, obs_recall_result_label,
};
use sol_napi::reducer::{CANDIDATE_TOOLS, exit_code, output_cap, reply_from_message};
use sol_napi::savings::PiUsage;
use sol_napi::storage::{RuntimeRootOutcome, RuntimeRootRequest, runtime_root};
use sol_napi::{ConfigRequest, LoadConfigOutcome, load_config_with};
use sol_obspack::text::{RECALL_PARTIAL_LABEL, recall_call_label, recall_result_label};
use sol_reducer::{ReasonCode, Route, ToolResultView, select_candidate};

use crate::support::{Sandbox, literal_pattern};

/// A value a `usage` field may hold: a count, a fraction, a negative, a huge number, a text,
/// null, a boolean or an object.
fn usage_field() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0u64..2_000_000).prop_map(|n| json!(n)),
        (-1e6f64..1e12).prop_map(|n| json!(n)),
        Just(json!(1e300)),
        "[0-9]{1,6}".prop_map(Value::String),
        Just(Value::Null),
        Just(json!(true)),
        Just(json!({"total": 3})),
    ]
}

proptest! {
    /// Only four fields of a `usage` object cross (`PiUsage`), and they give the report the
    /// whole object gives, whatever the fields hold and whatever else the object has.
    #[test]
    fn the_four_usage_fields_read_as_the_whole_object(
        fields in prop::collection::vec(prop::option::of(usage_field()), 4),
        cost in usage_field(),
    ) {
        let keys = ["input", "output", "cacheRead", "cacheWrite"];
        let mut whole = serde_json::Map::new();
        for (key, value) in keys.iter().zip(&fields) {
            if let Some(value) = value {
                whole.insert((*key).to_owned(), value.clone());
            }
        }
        whole.insert("cost".to_owned(), cost);
        whole.insert("totalTokens".to_owned(), json!(12));
        let crossed = PiUsage {
            input: fields[0].clone(),
            output: fields[1].clone(),
            cache_read: fields[2].clone(),
            cache_write: fields[3].clone(),
        };
        prop_assert_eq!(crossed.reported(), ReportedUsage::from_pi_usage(&Value::Object(whole)));
    }

    /// A text with fewer UTF-16 units than the bound can never exceed the threshold in
    /// UTF-8, and the bound is tight: that many 3-byte units do exceed it.
    #[test]
    fn the_walks_unit_bound_never_skips_a_packable_text(threshold in 0u32..40_000, text in "\\PC{0,200}") {
        let bound = min_candidate_units(threshold);
        if (text.encode_utf16().count() as u32) < bound {
            prop_assert!(text.len() as u64 <= u64::from(threshold));
        }
        let widest = "\u{20ac}".repeat(bound as usize);
        prop_assert!(widest.len() as u64 > u64::from(threshold));
    }

    /// The host skips every result of a tool outside the list without asking; the
    /// reducer would have refused each of them for its tool alone.
    #[test]
    fn only_the_listed_tools_can_be_candidates(tool in "[a-z_]{1,12}") {
        let input = json!({ "command": "cargo test", "then_run": { "command": "cargo test" } });
        let view = ToolResultView { tool_name: &tool, input: &input, ..ToolResultView::default() };
        let refused_for_the_tool = matches!(select_candidate(&view), Err(f) if f.reason == ReasonCode::IneligibleTool);
        prop_assert_eq!(refused_for_the_tool, !CANDIDATE_TOOLS.contains(&tool.as_str()));
    }

    /// The cap never exceeds the request, and is the model's limit when that is lower.
    #[test]
    fn the_output_cap_is_the_lower_limit(requested in 0u32..100_000, limit in proptest::option::of(0u32..200_000)) {
        let cap = output_cap(requested, limit.map(f64::from));
        prop_assert_eq!(cap, limit.map_or(requested, |limit| requested.min(limit)));
    }
}

#[test]
fn listed_tools_are_not_refused_for_their_name() {
    let input = json!({ "command": "cargo test", "then_run": { "command": "cargo test" } });
    for tool in CANDIDATE_TOOLS {
        let view = ToolResultView {
            tool_name: tool,
            input: &input,
            ..ToolResultView::default()
        };
        assert!(
            !matches!(select_candidate(&view), Err(f) if f.reason == ReasonCode::IneligibleTool),
            "{tool}"
        );
    }
    assert_eq!(output_cap(2048, Some(f64::NAN)), 2048);
    assert_eq!(output_cap(2048, Some(-1.0)), 2048);
}

#[test]
fn a_candidate_is_joined_named_and_an_error_result_is_never_packed() {
    let candidate = |is_error, tool_name: Option<&str>| ObsCandidate {
        tool_call_id: None,
        tool_name: tool_name.map(str::to_owned),
        is_error,
        texts: vec!["a".to_owned(), "b".to_owned(), String::new()],
    };
    let joined = Joined::from(&candidate(None, None));
    assert_eq!(joined.text.as_deref(), Some("a\nb\n"));
    assert_eq!(joined.tool_name, "unknown");
    assert_eq!(joined.tool_call_id, "");
    let named = Joined::from(&candidate(Some(false), Some("bash")));
    assert_eq!(
        (named.tool_name.as_str(), named.text.as_deref()),
        ("bash", Some("a\nb\n"))
    );
    assert_eq!(
        Joined::from(&candidate(Some(true), Some("bash"))).text,
        None
    );
}

#[test]
fn recall_labels_read_partial_arguments_and_details() {
    assert_eq!(
        obs_recall_call_label(Some(json!({ "id": "obs_1", "offset": 40 }))),
        recall_call_label("obs_1", 40)
    );
    assert_eq!(
        obs_recall_call_label(Some(json!({ "offset": -3 }))),
        recall_call_label("", 0)
    );
    assert_eq!(obs_recall_call_label(None), recall_call_label("", 0));
    assert_eq!(
        obs_recall_result_label(true, Some(json!({ "bytes": 9 }))),
        RECALL_PARTIAL_LABEL
    );
    assert_eq!(
        obs_recall_result_label(false, Some(json!({ "bytes": 9, "lines": 2 }))),
        recall_result_label(9, 2)
    );
    assert_eq!(
        obs_recall_result_label(false, None),
        recall_result_label(0, 0)
    );
}

#[test]
fn a_reply_is_read_from_pis_assistant_message() {
    let route = Route::new("faux".to_owned(), "luna".to_owned());
    let message = json!({
        "role": "assistant",
        "content": [
            { "type": "thinking", "thinking": "hm" },
            { "type": "text", "text": "{\"a\":" },
            { "type": "toolCall", "id": "x", "name": "y", "arguments": {} },
            { "type": "text", "text": "1}" }
        ],
        "provider": "other",
        "stopReason": "stop",
        "usage": { "input": 1200, "output": 80.0, "cacheRead": -4, "totalTokens": 1280 }
    });
    let reply = reply_from_message(&message, &route);
    assert_eq!(reply.text, "{\"a\":1}");
    assert_eq!(
        (reply.provider.as_str(), reply.model.as_str()),
        ("other", "luna")
    );
    assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
    assert_eq!(reply.error_message, None);
    assert_eq!(
        (
            reply.usage.input,
            reply.usage.output,
            reply.usage.cache_read,
            reply.usage.cache_write,
            reply.usage.total_tokens
        ),
        (1200, 80, 0, 0, 1280)
    );
    let empty = reply_from_message(&Value::Null, &route);
    assert_eq!((empty.text.as_str(), empty.provider.as_str()), ("", "faux"));
}

#[test]
fn the_exit_code_is_a_finite_number_of_structured_content() {
    assert_eq!(exit_code(Some(&json!({ "exit_code": 101 }))), Some(101));
    assert_eq!(exit_code(Some(&json!({ "exit_code": "1" }))), None);
    assert_eq!(exit_code(Some(&json!({}))), None);
    assert_eq!(exit_code(None), None);
}

#[test]
fn fused_results_are_read_by_their_text_blocks() {
    let result = json!({
        "content": [{ "type": "text", "text": "one" }, { "type": "image", "data": "", "mimeType": "image/png" }, { "type": "text", "text": "two" }],
        "isError": true
    });
    assert_eq!(sol_napi::fusion::texts_of(&result), ["one", "two"]);
    assert_eq!(sol_napi::fusion::texts_of(&json!({})), Vec::<String>::new());
}

fn root(session_dir: Option<String>, session_id: &str, temp_dir: &str) -> RuntimeRootOutcome {
    runtime_root(RuntimeRootRequest {
        session_dir,
        session_id: session_id.to_owned(),
        temp_dir: temp_dir.to_owned(),
    })
}

#[cfg(unix)]
#[test]
fn a_session_without_a_directory_gets_one_private_temp_folder() {
    let sandbox = Sandbox::new();
    let temp = sandbox.root().to_string();
    let id = "0f6c1f8e-shell-test-a";
    let RuntimeRootOutcome::Root { root: first } = root(Some(String::new()), id, &temp) else {
        panic!("a root");
    };
    let name = first.rsplit('/').next().expect("a name");
    assert!(name.starts_with(&format!("sol-pi-{id}-")), "{first}");
    assert!(
        first.starts_with(
            sandbox
                .root()
                .canonicalize_utf8()
                .expect("canonical")
                .as_str()
        )
    );
    assert_eq!(
        crate::support::mode(camino::Utf8Path::new(&first)) & 0o777,
        0o700
    );
    assert_eq!(
        root(None, id, &temp),
        RuntimeRootOutcome::Root { root: first }
    );
    let entries = std::fs::read_dir(sandbox.root()).expect("read").count();
    assert_eq!(entries, 1, "made once");
}

#[test]
fn a_session_directory_gives_its_canonical_sol_pi_folder() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("sessions");
    let dir = sandbox.path("sessions").to_string();
    let canonical = sandbox
        .path("sessions")
        .canonicalize_utf8()
        .expect("canonical");
    assert_eq!(
        root(Some(dir.clone()), "session-b", "/nonexistent"),
        RuntimeRootOutcome::Root {
            root: canonical.join("sol-pi").join("session-b").to_string()
        }
    );
    let RuntimeRootOutcome::Unavailable { error } = root(Some(dir), "../escape", "/nonexistent")
    else {
        panic!("an unsafe id has no root");
    };
    assert!(!error.is_empty());
    let RuntimeRootOutcome::Unavailable { error } =
        root(Some("relative/dir".to_owned()), "session-c", "/nonexistent")
    else {
        panic!("a relative directory has no root");
    };
    assert_text_snapshot!("runtime_root_relative_dir", error);
}

#[test]
fn a_panic_in_the_config_search_is_an_invalid_outcome_with_one_message() {
    let sandbox = Sandbox::new();
    let request = ConfigRequest {
        cwd: sandbox.path("project").to_string(),
        agent_dir: sandbox.path("agent").to_string(),
        project_trusted: true,
    };
    let outcome = load_config_with(&request, |_| panic!("search exploded"));
    let LoadConfigOutcome::Invalid { error } = outcome else {
        panic!("expected invalid, got {outcome:?}");
    };
    assert_eq!((error.code.as_str(), error.key), ("internal", None));
    assert_text_snapshot!("config_internal_error", error.message, literal_pattern(sandbox.root()) => "[TMP]");
}

#[test]
fn shell_texts() {
    use sol_napi::fusion::{FusionSettingsError, fusion_settings_unreadable};
    let errors = [
        FusionSettingsError {
            scope: "global".to_owned(),
            path: Some("/home/u/.pi/agent/settings.json".to_owned()),
            message: "Unexpected token".to_owned(),
        },
        FusionSettingsError {
            scope: "project".to_owned(),
            path: None,
            message: "EACCES".to_owned(),
        },
    ];
    let text = [
        fusion_settings_unreadable(errors.into()),
        sol_napi::internal_error_notice("ObservationPack".to_owned(), "boom".to_owned()),
    ];
    assert_text_snapshot!("shell_texts", text.join("\n"));
}

#[test]
fn the_badge_follows_javascript_truthiness_and_the_error_flag() {
    use sol_napi::fusion::fusion_shows_badge;
    for (then_run, shown) in [
        (json!({ "command": "make" }), true),
        (json!({}), true),
        (json!("x"), true),
        (json!(1), true),
        (json!(null), false),
        (json!(false), false),
        (json!(0), false),
        (json!(""), false),
    ] {
        assert_eq!(
            fusion_shows_badge(Some(then_run.clone()), None),
            shown,
            "{then_run}"
        );
        assert_eq!(
            fusion_shows_badge(Some(then_run.clone()), Some(false)),
            shown,
            "{then_run}"
        );
        assert!(!fusion_shows_badge(Some(then_run), Some(true)));
    }
    assert!(!fusion_shows_badge(None, None));
}

//! The typed readers of Pi's JSON against the hand-parsed ones they replaced
//! (`oracle.rs`): for messages, branches, 1.x projections and state snapshots in the shapes
//! Pi writes, the same sizes, identities, projections, estimates and restored state.

use proptest::prelude::*;
use serde_json::{Value, json};
use sol_core::message::AgentMessage;
use sol_core::session::{SessionEntry, SessionProjection};
use sol_occ::estimate::{NativeProjection, ObservedContext, estimate_native_cut};
use sol_occ::state::{OccState, STATE_ENTRY_TYPE, StateError, latest_state};
use sol_occ::tokens::{SizedMessage, estimate_message_tokens, message_key};

#[path = "../../../sol-core/tests/core/pi_shapes.rs"]
mod pi_shapes;

use crate::oracle;
use pi_shapes::{branch_values, json_value, message_value, projection_value};

fn typed_messages(values: &[Value]) -> Vec<AgentMessage> {
    values
        .iter()
        .cloned()
        .map(AgentMessage::from_value)
        .collect()
}

/// A branch with state snapshots among its entries, some valid, some not.
fn branch_with_states() -> impl Strategy<Value = Vec<Value>> {
    let snapshot = prop_oneof![
        (0u64..9).prop_map(|count| {
            let state = OccState {
                request_count: count,
                ..OccState::default()
            };
            state.to_value()
        }),
        Just(json!({"version": 2, "plan": []})),
        json_value(),
    ];
    (
        branch_values(5),
        prop::collection::vec((0usize..6, snapshot), 0..4),
    )
        .prop_map(|(mut branch, snapshots)| {
            for (at, data) in snapshots {
                let at = at.min(branch.len());
                branch.insert(
                    at,
                    json!({"type": "custom", "id": format!("s{at}"), "customType": STATE_ENTRY_TYPE,
                           "timestamp": "2026-03-02T09:00:00.000Z", "data": data}),
                );
            }
            branch
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn typed_messages_are_sized_and_identified_like_their_json(
        value in prop_oneof![4 => message_value(), 1 => json_value()],
    ) {
        let message = AgentMessage::from_value(value.clone());
        prop_assert_eq!(estimate_message_tokens(&message), oracle::estimate_message_tokens(&value));
        prop_assert_eq!(message_key(&message), oracle::message_key(&value));
        prop_assert_eq!(SizedMessage::from_message(&message), oracle::sized(&value));
    }

    #[test]
    fn typed_branches_project_and_estimate_like_their_json(
        branch in branch_values(10),
        keep_recent in 0u64..400,
    ) {
        let typed = SessionEntry::from_values(branch.clone());
        let projection = NativeProjection::from_branch(&typed);
        prop_assert_eq!(&projection, &oracle::from_branch(&branch));
        let seen: Vec<SizedMessage> = projection.messages().cloned().collect();
        let observed = ObservedContext::new(&seen);
        prop_assert_eq!(
            estimate_native_cut(&projection, keep_recent, &observed),
            estimate_native_cut(&oracle::from_branch(&branch), keep_recent, &observed)
        );
    }

    #[test]
    fn typed_projections_read_like_their_json(value in projection_value(), leaf in any::<bool>()) {
        let typed = SessionProjection::from_value(&value).expect("Pi's shape");
        prop_assert_eq!(
            NativeProjection::from_session_projection(&typed, leaf),
            oracle::from_session_projection(&value, leaf)
        );
    }

    #[test]
    fn typed_branches_restore_the_same_state(branch in branch_with_states()) {
        let typed = SessionEntry::from_values(branch.clone());
        prop_assert_eq!(latest_state(&typed), oracle::latest_state(&branch));
    }

    #[test]
    fn restoring_reports_every_newer_snapshot_it_could_not_read(branch in branch_with_states()) {
        // The same state as the silent reader, and one error per snapshot entry newer than
        // the restored one: none is passed over without the host hearing of it.
        let typed = SessionEntry::from_values(branch.clone());
        let restored = sol_occ::state::restore_from_branch(&typed);
        prop_assert_eq!(&restored.state, &oracle::restore_state(&branch));
        let newer = typed
            .iter()
            .rev()
            .map_while(|entry| match OccState::from_entry(entry) {
                Some(Ok(_)) => None,
                Some(Err(error)) => Some(Some(error)),
                None => Some(None),
            })
            .flatten()
            .collect::<Vec<StateError>>();
        prop_assert_eq!(&restored.rejected, &newer);
        // The effect step says so exactly when something was rejected.
        let mut occ = sol_occ::OccSession::new(sol_occ::settings::OccOptions::default());
        let step = occ.on_session_start(&typed, Vec::new());
        prop_assert_eq!(step.effects.len(), usize::from(!newer.is_empty()));
        prop_assert_eq!(occ.state(), &restored.state);
    }

    #[test]
    fn context_messages_are_sized_once_in_either_form(values in prop::collection::vec(message_value(), 0..6)) {
        let typed = typed_messages(&values);
        let sized = SizedMessage::from_messages(&typed);
        let expected: Vec<SizedMessage> = values.iter().map(oracle::sized).collect();
        prop_assert_eq!(sized, expected);
    }
}

#[test]
fn a_bare_snapshot_is_an_error_not_silence() {
    let bare = SessionEntry::from_value(OccState::default().to_value());
    assert_eq!(OccState::from_entry(&bare), Some(Err(StateError::Bare)));
    assert_eq!(StateError::Bare.code(), "bare_state");
    assert_text_snapshot!("bare_state_error", StateError::Bare.to_string());
    let wrapped = SessionEntry::from_value(
        json!({"type": "custom", "customType": STATE_ENTRY_TYPE, "data": OccState::default().to_value()}),
    );
    assert_eq!(
        OccState::from_entry(&wrapped),
        Some(Ok(OccState::default()))
    );
    let missing =
        SessionEntry::from_value(json!({"type": "custom", "customType": STATE_ENTRY_TYPE}));
    assert!(matches!(
        OccState::from_entry(&missing),
        Some(Err(StateError::Malformed(_)))
    ));
    let other = SessionEntry::from_value(json!({"type": "custom", "customType": "x", "data": {}}));
    assert_eq!(OccState::from_entry(&other), None);
    // Restoring skips it like any invalid snapshot.
    assert_eq!(latest_state(&[wrapped, bare]), Some(OccState::default()));
}

/// What Pi's own `SessionManager` wrote for one scripted session
/// (`fixtures/occ/pi-entries/capture.mjs`), per Pi version.
const RECORDED: [(&str, &str); 4] = [
    (
        "0.84.2",
        include_str!("../../../fixtures/occ/pi-entries/pi-0.84.2.json"),
    ),
    (
        "1.0.3",
        include_str!("../../../fixtures/occ/pi-entries/pi-1.0.3.json"),
    ),
    (
        "1.3.0",
        include_str!("../../../fixtures/occ/pi-entries/pi-1.3.0.json"),
    ),
    (
        "1.6.0",
        include_str!("../../../fixtures/occ/pi-entries/pi-1.6.0.json"),
    ),
];

#[test]
fn recorded_pi_entries_are_typed_and_read_like_their_json() {
    let mut kinds = Vec::new();
    for (version, text) in RECORDED {
        let capture: Value = serde_json::from_str(text).expect("a capture");
        let branch = capture["branch"].as_array().expect("a branch").clone();
        let typed = SessionEntry::from_values(branch.clone());
        for (entry, value) in typed.iter().zip(&branch) {
            assert_eq!(&entry.to_value(), value, "{version}: lossless");
            let variant = match entry {
                SessionEntry::Message(message) => match &message.message {
                    AgentMessage::Other(_) => "Message(Other)",
                    _ => "Message(typed)",
                },
                SessionEntry::Compaction(_) => "Compaction",
                SessionEntry::Custom(_) => "Custom",
                SessionEntry::CustomMessage(_) => "CustomMessage",
                SessionEntry::BranchSummary(_) => "BranchSummary",
                SessionEntry::ContextEdit(_) => "ContextEdit",
                SessionEntry::Other(_) => "Other",
            };
            let header = entry.header();
            assert!(
                header.is_none_or(|h| h.epoch_ms().is_some() && h.id.is_some()),
                "{version}: {value}"
            );
            kinds.push(format!(
                "{version} {:<22} {variant}",
                entry.entry_type().unwrap_or("?")
            ));
        }
        assert_eq!(
            NativeProjection::from_branch(&typed),
            oracle::from_branch(&branch),
            "{version}"
        );
        assert_eq!(latest_state(&typed), oracle::latest_state(&branch));
        assert_eq!(latest_state(&typed).map(|s| s.request_count), Some(1));
        if let Some(projection) = capture.get("projection").filter(|p| !p.is_null()) {
            let typed = SessionProjection::from_value(projection).expect("Pi's projection");
            assert_eq!(&typed.to_value(), projection, "{version}: lossless");
            assert_eq!(
                NativeProjection::from_session_projection(&typed, false),
                oracle::from_session_projection(projection, false),
                "{version}"
            );
        }
    }
    assert_text_snapshot!("recorded_pi_entry_kinds", kinds.join("\n"));
}

/// Pi's stop reasons and any other string a host may name.
fn stop_reason_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec!["toolUse", "stop", "length", "error", "aborted"])
            .prop_map(str::to_owned),
        ".{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn stop_reasons_parse_and_name_round_trip(name in stop_reason_name()) {
        use sol_occ::session::StopReason;
        let reason = StopReason::parse(&name);
        prop_assert_eq!(reason.name(), name.as_str());
        prop_assert_eq!(StopReason::parse(reason.name()), reason.clone());
        // The serde form is the name.
        let json = serde_json::to_value(&reason).expect("a string");
        prop_assert_eq!(&json, &json!(name));
        prop_assert_eq!(serde_json::from_value::<StopReason>(json).expect("a reason"), reason);
    }

    #[test]
    fn host_sized_messages_are_identified_as_the_whole_message_is(value in message_value()) {
        // The host hands over the raw role and timestamp, and the whole message only when
        // the timestamp is not a number or a string: the identity is the same.
        let message = AgentMessage::from_value(value.clone());
        let whole = SizedMessage::from_message(&message);
        let role = value.get("role").and_then(Value::as_str).unwrap_or("");
        let timestamp = value.get("timestamp").filter(|t| t.is_number() || t.is_string());
        let content = timestamp.is_none().then_some(&message);
        let parts = SizedMessage::from_parts(role, whole.tokens, timestamp, content);
        prop_assert_eq!(parts, whole);
    }

    #[test]
    fn content_keys_ignore_the_order_of_object_fields(value in json_value()) {
        fn reversed(value: &Value) -> Value {
            match value {
                Value::Object(fields) => Value::Object(
                    fields.iter().rev().map(|(k, v)| (k.clone(), reversed(v))).collect(),
                ),
                Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
                other => other.clone(),
            }
        }
        use sol_occ::tokens::content_key;
        prop_assert_eq!(content_key("user", &value), content_key("user", &reversed(&value)));
    }
}

//! Properties of the session vocabulary: entries, projections and timestamps parse from any
//! JSON without panicking and serialize back to the same value; the shapes Pi writes are
//! typed; a typed message is sized exactly like its JSON.

use proptest::prelude::*;
use serde_json::{Value, json};
use sol_core::message::AgentMessage;
use sol_core::session::{SessionEntry, SessionProjection, iso_to_epoch_ms, newest_readable};

use crate::pi_shapes::{
    branch_values, entry_value, iso_millis, iso_of, json_value, message_value, projection_value,
};

const MODELLED: [&str; 6] = [
    "message",
    "compaction",
    "custom",
    "custom_message",
    "branch_summary",
    "context_edit",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn newest_readable_is_the_last_readable_entry_with_the_newer_rejects(
        kinds in prop::collection::vec((0..3_u8, any::<u16>()), 0..12),
    ) {
        // A `probe` custom entry that reads (`ok`), one that does not (`err`), or another
        // entry that is not sought at all.
        let branch: Vec<SessionEntry> = kinds
            .iter()
            .enumerate()
            .map(|(index, (kind, n))| {
                SessionEntry::from_value(match kind {
                    0 => json!({"type": "custom", "id": index.to_string(), "customType": "probe", "data": {"ok": n}}),
                    1 => json!({"type": "custom", "id": index.to_string(), "customType": "probe", "data": {"err": n}}),
                    _ => json!({"type": "label", "id": index.to_string(), "label": n.to_string()}),
                })
            })
            .collect();
        let mut visited = Vec::new();
        let (newest, rejected) = newest_readable(&branch, |entry| {
            visited.push(entry.id().map(str::to_owned));
            let SessionEntry::Custom(custom) = entry else { return None };
            let data = custom.data.as_ref().expect("data");
            Some(match data.get("ok") {
                Some(n) => Ok(n.as_u64().expect("a number")),
                None => Err(data["err"].as_u64().expect("a number")),
            })
        });
        let found = kinds.iter().rposition(|(kind, _)| *kind == 0);
        prop_assert_eq!(newest, found.map(|index| u64::from(kinds[index].1)));
        let newer = found.map_or(0, |index| index + 1);
        let want: Vec<u64> = kinds[newer..]
            .iter()
            .rev()
            .filter(|(kind, _)| *kind == 1)
            .map(|(_, n)| u64::from(*n))
            .collect();
        prop_assert_eq!(rejected, want);
        // Newest first, and nothing older than the entry found is read.
        let want_visited: Vec<Option<String>> =
            (found.unwrap_or(0)..branch.len()).rev().map(|index| Some(index.to_string())).collect();
        prop_assert_eq!(visited, want_visited);
    }

    #[test]
    fn any_json_is_an_entry_that_round_trips(value in prop_oneof![json_value(), entry_value(2)]) {
        let entry: SessionEntry = serde_json::from_value(value.clone()).expect("never fails");
        prop_assert_eq!(&entry, &SessionEntry::from_value(value.clone()));
        prop_assert_eq!(entry.to_value(), value.clone());
        prop_assert_eq!(entry.entry_type(), value.get("type").and_then(Value::as_str));
        prop_assert_eq!(entry.id(), value.get("id").and_then(Value::as_str));
    }

    #[test]
    fn the_entries_pi_writes_are_typed(branch in branch_values(8)) {
        for value in branch {
            let entry = SessionEntry::from_value(value.clone());
            let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
            prop_assert_eq!(
                matches!(entry, SessionEntry::Other(_)),
                !MODELLED.contains(&kind),
                "{}", value
            );
            prop_assert_eq!(entry.to_value(), value.clone());
            if let Some(header) = entry.header() {
                let parent = value.get("parentId").map(|p| p.as_str().map(str::to_owned));
                prop_assert_eq!(header.parent_id.clone(), parent);
                let millis = value
                    .get("timestamp")
                    .and_then(|t| t.as_str().map(iso_to_epoch_ms).unwrap_or_else(|| t.as_i64()));
                prop_assert_eq!(header.epoch_ms(), millis);
            }
        }
    }

    #[test]
    fn projections_round_trip(value in projection_value()) {
        let projection = SessionProjection::from_value(&value).expect("Pi's shape");
        prop_assert_eq!(projection.to_value(), value.clone());
        prop_assert_eq!(projection.entries.len(), value["entries"].as_array().map_or(0, Vec::len));
    }

    #[test]
    fn any_json_projection_is_read_or_refused_without_panicking(value in json_value()) {
        if let Some(projection) = SessionProjection::from_value(&value) {
            prop_assert_eq!(projection.to_value(), value);
        }
    }

    #[test]
    fn iso_timestamps_parse_back_to_their_milliseconds(millis in iso_millis()) {
        let text = iso_of(millis);
        prop_assert_eq!(iso_to_epoch_ms(&text), Some(millis), "{}", text);
        // Without the fraction, and with more digits than milliseconds (cut, not rounded).
        let seconds = format!("{}Z", &text[..19]);
        prop_assert_eq!(iso_to_epoch_ms(&seconds), Some(millis - millis.rem_euclid(1000)));
        let micros = format!("{}999Z", &text[..23]);
        prop_assert_eq!(iso_to_epoch_ms(&micros), Some(millis));
    }

    #[test]
    fn any_text_parses_or_is_refused_without_panicking(
        millis in iso_millis(),
        at in 0usize..24,
        insert in ".",
        text in ".{0,30}",
    ) {
        let _ = iso_to_epoch_ms(&text);
        let mut mangled = iso_of(millis);
        let at = (0..=at.min(mangled.len())).rev().find(|&i| mangled.is_char_boundary(i)).unwrap_or(0);
        mangled.insert_str(at, &insert);
        if let Some(parsed) = iso_to_epoch_ms(&mangled) {
            // Only a digit where a digit was (or a fraction digit) can still parse.
            prop_assert!(insert.chars().all(|c| c.is_ascii_digit()), "{} -> {}", mangled, parsed);
        }
    }

    #[test]
    fn a_typed_message_is_sized_like_its_json(value in message_value()) {
        let typed = AgentMessage::from_value(value.clone());
        let raw = AgentMessage::Other(value);
        prop_assert_eq!(typed.estimated_tokens(), raw.estimated_tokens());
        prop_assert_eq!(typed.estimated_chars(), raw.estimated_chars());
        prop_assert_eq!(typed.timestamp_text(), raw.timestamp_text());
        prop_assert_eq!(typed.role(), raw.role());
    }
}

//! Strategies for the JSON Pi hands to extensions: messages, session entries, branches and
//! 1.x projections, in the shapes Pi writes (field types as Pi writes them, values and
//! optional fields arbitrary, extra fields added), plus arbitrary JSON.
//!
//! Shared by the sol-core and sol-occ property tests (sol-occ includes this file).

#![allow(dead_code)]

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value, json};

/// Short text with multi-byte and astral characters (UTF-16 lengths differ from bytes).
pub(crate) fn text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => "[a-z ]{0,12}",
        1 => "[é🚀\"\\\\\n]{0,6}",
        1 => ".{0,8}",
    ]
    .boxed()
}

pub(crate) fn json_leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        select(vec![json!(1), json!(1.0), json!(-1), json!(1.5e300)]),
        text().prop_map(Value::String),
    ]
    .boxed()
}

pub(crate) fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(vec![
            "role", "content", "timestamp", "type", "text", "thinking", "id", "name",
            "arguments", "toolCallId", "toolName", "isError", "details", "summary", "command",
            "output", "sections", "toolsAdded", "customType", "data", "parentId", "message",
            "firstKeptEntryId", "sourceEntry", "messages", "entries", "mimeType",
        ])
        .prop_map(str::to_owned),
        1 => "[a-zA-Z]{0,8}",
    ]
}

pub(crate) fn object_of(
    value: impl Strategy<Value = Value>,
    max: usize,
) -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((key(), value), 0..max).prop_map(|pairs| pairs.into_iter().collect())
}

/// Any JSON value, biased to the keys Pi's objects use.
pub(crate) fn json_value() -> BoxedStrategy<Value> {
    json_leaf()
        .prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                object_of(inner, 6).prop_map(Value::Object),
            ]
        })
        .boxed()
}

/// Fields Pi's types do not model here, added to an object.
fn with_extra(mut object: Map<String, Value>, extra: Map<String, Value>) -> Value {
    for (key, value) in extra {
        object.entry(key).or_insert(value);
    }
    Value::Object(object)
}

fn extra() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec(("[a-z]{1,6}Extra", json_leaf()), 0..3)
        .prop_map(|pairs| pairs.into_iter().collect())
}

/// A message's `timestamp`: absent, Unix milliseconds (as Pi writes them, or as the addon
/// converts them: floats beyond 32 bits), or an odd value.
pub(crate) fn message_timestamp() -> BoxedStrategy<Option<Value>> {
    prop_oneof![
        2 => Just(None),
        4 => (0i64..40).prop_map(|t| Some(json!(t))),
        1 => (1_700_000_000_000i64..1_800_000_000_000).prop_map(|t| Some(json!(t as f64))),
        1 => select(vec![json!(1.5), json!("7"), Value::Null, json!(u64::MAX)]).prop_map(Some),
    ]
    .boxed()
}

fn content_block() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => text().prop_map(|text| json!({"type": "text", "text": text})),
        1 => Just(json!({"type": "image", "data": "AAAA", "mimeType": "image/png"})),
        1 => (text(), json_leaf()).prop_map(|(text, odd)| json!({"type": "text", "text": text, "cache": odd})),
        1 => json_leaf().prop_map(|odd| json!({"type": "text", "text": odd})),
        1 => json_value(),
    ]
    .boxed()
}

fn content() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => text().prop_map(Value::String),
        3 => prop::collection::vec(content_block(), 0..4).prop_map(Value::Array),
        1 => json_leaf(),
    ]
    .boxed()
}

fn assistant_block() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => (text(), prop::option::of(text())).prop_map(|(text, signature)| {
            let mut block = json!({"type": "text", "text": text});
            if let Some(signature) = signature {
                block["textSignature"] = json!(signature);
            }
            block
        }),
        2 => text().prop_map(|thinking| json!({"type": "thinking", "thinking": thinking, "thinkingSignature": "s"})),
        3 => ("[a-z0-9]{0,4}", text(), json_value()).prop_map(|(id, name, arguments)| {
            json!({"type": "toolCall", "id": id, "name": name, "arguments": arguments})
        }),
        1 => text().prop_map(|name| json!({"type": "toolCall", "id": "c", "name": name})),
        1 => json_value(),
    ]
    .boxed()
}

fn set(object: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        object.insert(key.to_owned(), value);
    }
}

/// A message of any role Pi has, mostly in Pi's shapes.
pub(crate) fn message_value() -> BoxedStrategy<Value> {
    let user = (content(), message_timestamp(), extra()).prop_map(|(content, timestamp, extra)| {
        let mut object = Map::new();
        object.insert("role".into(), json!("user"));
        object.insert("content".into(), content);
        set(&mut object, "timestamp", timestamp);
        with_extra(object, extra)
    });
    let assistant = (
        prop::collection::vec(assistant_block(), 0..4),
        prop::option::of(select(vec!["stop", "toolUse", "error"])),
        message_timestamp(),
        extra(),
    )
        .prop_map(|(content, stop, timestamp, extra)| {
            let mut object = Map::new();
            object.insert("role".into(), json!("assistant"));
            object.insert("content".into(), Value::Array(content));
            set(&mut object, "stopReason", stop.map(|s| json!(s)));
            set(&mut object, "timestamp", timestamp);
            with_extra(object, extra)
        });
    let tool_result = (
        "[a-z0-9]{0,4}",
        prop::collection::vec(content_block(), 0..4),
        any::<bool>(),
        prop::option::of(json_value()),
        message_timestamp(),
        extra(),
    )
        .prop_map(|(call, content, is_error, details, timestamp, extra)| {
            let mut object = Map::new();
            object.insert("role".into(), json!("toolResult"));
            object.insert("toolCallId".into(), json!(call));
            object.insert("toolName".into(), json!("bash"));
            object.insert("content".into(), Value::Array(content));
            object.insert("isError".into(), json!(is_error));
            set(&mut object, "details", details);
            set(&mut object, "timestamp", timestamp);
            with_extra(object, extra)
        });
    let other = (
        select(vec![
            "system",
            "custom",
            "bashExecution",
            "branchSummary",
            "compactionSummary",
            "future",
        ]),
        content(),
        text(),
        text(),
        prop::option::of(json_value()),
        message_timestamp(),
    )
        .prop_map(|(role, content, first, second, tools, timestamp)| {
            let mut object = Map::new();
            object.insert("role".into(), json!(role));
            object.insert("content".into(), content);
            object.insert("summary".into(), json!(first));
            object.insert("command".into(), json!(first));
            object.insert("output".into(), json!(second));
            object.insert("sections".into(), json!({"a": first, "b": 3}));
            set(&mut object, "toolsAdded", tools);
            set(&mut object, "timestamp", timestamp);
            Value::Object(object)
        });
    prop_oneof![
        3 => user,
        3 => assistant,
        3 => tool_result,
        2 => other,
        1 => json_value(),
    ]
    .boxed()
}

/// `Date.prototype.toISOString()` of Unix milliseconds (years 0 to 9999).
pub(crate) fn iso_of(millis: i64) -> String {
    let days = millis.div_euclid(86_400_000);
    let in_day = millis.rem_euclid(86_400_000);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

/// Milliseconds from year 0 to the end of year 9999.
pub(crate) fn iso_millis() -> impl Strategy<Value = i64> {
    -62_167_219_200_000i64..253_402_300_800_000
}

/// An entry's `timestamp` as Pi writes it (ISO text), or absent, other text, a number.
pub(crate) fn entry_timestamp() -> BoxedStrategy<Option<Value>> {
    prop_oneof![
        1 => Just(None),
        5 => (1_772_442_000_000i64..1_772_442_100_000).prop_map(|t| Some(json!(iso_of(t)))),
        1 => select(vec![json!("yesterday"), json!("2026-13-02T09:15:24.294Z"), json!(-3), json!(2.5)])
            .prop_map(Some),
    ]
    .boxed()
}

/// The body of one session entry (everything but `id` and `parentId`), of every kind
/// SoL-Pi reads and some it does not. `ids` are the ids of the entries before it.
pub(crate) fn entry_body(ids: Vec<String>) -> impl Strategy<Value = Map<String, Value>> {
    let earlier = if ids.is_empty() {
        Just("none".to_owned()).boxed()
    } else {
        prop_oneof![4 => select(ids), 1 => Just("missing".to_owned())].boxed()
    };
    let state_type = "sol-pi-online-context-state-v1";
    prop_oneof![
        6 => message_value().prop_map(|message| {
            let mut object = Map::new();
            object.insert("type".into(), json!("message"));
            object.insert("message".into(), message);
            object
        }),
        1 => (text(), prop::option::of(earlier), 0u64..100_000).prop_map(|(summary, kept, before)| {
            let mut object = Map::new();
            object.insert("type".into(), json!("compaction"));
            object.insert("summary".into(), json!(summary));
            set(&mut object, "firstKeptEntryId", kept.map(Value::String));
            object.insert("tokensBefore".into(), json!(before));
            object
        }),
        1 => (select(vec![state_type, "other-ext"]), prop::option::of(json_value())).prop_map(
            |(custom_type, data)| {
                let mut object = Map::new();
                object.insert("type".into(), json!("custom"));
                object.insert("customType".into(), json!(custom_type));
                set(&mut object, "data", data);
                object
            }
        ),
        1 => (text(), content(), any::<bool>()).prop_map(|(custom_type, content, display)| {
            let mut object = Map::new();
            object.insert("type".into(), json!("custom_message"));
            object.insert("customType".into(), json!(custom_type));
            object.insert("content".into(), content);
            object.insert("display".into(), json!(display));
            object
        }),
        1 => text().prop_map(|summary| {
            let mut object = Map::new();
            object.insert("type".into(), json!("branch_summary"));
            object.insert("summary".into(), json!(summary));
            object.insert("fromId".into(), json!("x"));
            object
        }),
        1 => select(vec!["context_edit", "label", "model_change", "usage"]).prop_map(|kind| {
            let mut object = Map::new();
            object.insert("type".into(), json!(kind));
            object.insert("edits".into(), json!([]));
            object
        }),
    ]
}

/// One entry with its header: `id` `e<index>`, the previous id (or `null`) as `parentId`.
pub(crate) fn entry_value(index: usize) -> BoxedStrategy<Value> {
    let ids: Vec<String> = (0..index).map(|i| format!("e{i}")).collect();
    (entry_body(ids), entry_timestamp(), extra())
        .prop_map(move |(mut body, timestamp, extra)| {
            body.insert("id".into(), json!(format!("e{index}")));
            let parent = if index == 0 {
                Value::Null
            } else {
                json!(format!("e{}", index - 1))
            };
            body.insert("parentId".into(), parent);
            set(&mut body, "timestamp", timestamp);
            with_extra(body, extra)
        })
        .boxed()
}

/// A branch of up to `max` entries, root first.
pub(crate) fn branch_values(max: usize) -> impl Strategy<Value = Vec<Value>> {
    (0..=max).prop_flat_map(|len| (0..len).map(entry_value).collect::<Vec<_>>())
}

/// A Pi 1.x `buildSessionProjection()` value.
pub(crate) fn projection_value() -> impl Strategy<Value = Value> {
    let entry = (
        prop::option::of(prop_oneof![4 => entry_value(3), 1 => json_value()]),
        prop::collection::vec(message_value(), 0..3),
    )
        .prop_map(|(source, messages)| {
            let mut object = Map::new();
            set(&mut object, "sourceEntry", source);
            object.insert("messages".into(), Value::Array(messages));
            Value::Object(object)
        });
    (prop::collection::vec(entry, 0..8), any::<bool>()).prop_map(|(entries, model)| {
        let mut projection = json!({"entries": entries, "messages": [], "thinkingLevel": "off"});
        if model {
            projection["model"] = json!({"provider": "faux", "modelId": "m"});
        }
        projection
    })
}

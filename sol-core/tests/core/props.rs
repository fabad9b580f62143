//! Properties of the parsers: no panics, sound errors, round trips, reference oracles.

use camino::Utf8Path;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value, json};
use sol_core::config::CONFIG_KEYS;
use sol_core::message::AgentMessage;
use sol_core::{ConfigError, Mechanism, SessionId, SolPiConfig, parse_config, validate_config};

const PATH: &str = "/p/.pi/sol-pi.json";

fn path() -> &'static Utf8Path {
    Utf8Path::new(PATH)
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("JSON numbers are finite", |f| {
            Number::from_f64(f).map(Value::Number)
        }),
        select(vec![
            json!(1),
            json!(1.0),
            json!(0),
            json!(-1),
            json!(12.5),
            json!(-0.0)
        ]),
        ".{0,8}".prop_map(Value::String),
        select(vec!["", " ", "\t\n", "x", " x "]).prop_map(|s| Value::String(s.to_owned())),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(CONFIG_KEYS.to_vec()).prop_map(str::to_owned),
        1 => "[a-zA-Z]{0,12}",
        1 => ".{0,6}",
    ]
}

fn object_of(value: impl Strategy<Value = Value>, max: usize) -> impl Strategy<Value = Value> {
    prop::collection::vec((key(), value), 0..max)
        .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<String, Value>>()))
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            object_of(inner, 8),
        ]
    })
}

/// Objects that look like configuration files, so validation reaches its later checks.
fn config_like() -> impl Strategy<Value = Value> {
    (
        object_of(json_leaf(), 9),
        prop::option::of(json_leaf()),
        any::<bool>(),
    )
        .prop_map(|(mut object, version, force_version)| {
            if let Value::Object(map) = &mut object {
                if force_version {
                    map.insert("version".to_owned(), json!(1));
                } else if let Some(version) = version {
                    map.insert("version".to_owned(), version);
                }
            }
            object
        })
}

fn check_outcome(value: &Value, outcome: Result<SolPiConfig, ConfigError>) {
    match outcome {
        Ok(config) => {
            let object = value.as_object().expect("only objects validate");
            assert_eq!(object["version"].as_f64(), Some(1.0));
            assert!(object.keys().all(|key| CONFIG_KEYS.contains(&key.as_str())));
            for mechanism in Mechanism::ALL {
                let flag = object.get(mechanism.config_key()).and_then(Value::as_bool);
                assert_eq!(config.is_enabled(mechanism), flag.unwrap_or(false));
            }
            assert!(config.cache_write_read_ratio.is_finite());
            assert!(config.cache_write_read_ratio >= 0.0);
            assert!(
                !config
                    .evidence_preserving_reducer_provider
                    .trim()
                    .is_empty()
            );
            assert!(!config.evidence_preserving_reducer_model.trim().is_empty());
            assert_eq!(config.prices.validated(), Ok(config.prices));
            if !object.contains_key("prices") {
                assert!(config.prices.is_default());
            }
            let keep = match object.get("keepRecentOutputs") {
                None | Some(Value::Bool(false)) => 0.0,
                Some(Value::Bool(true)) => 10.0,
                Some(number) => number.as_f64().expect("only a number is accepted"),
            };
            assert_eq!(f64::from(config.keep_recent_outputs), keep);
        }
        Err(error) => {
            assert_eq!(error.path(), path());
            match &error {
                ConfigError::NotAnObject { .. } => assert!(!value.is_object()),
                ConfigError::UnsupportedVersion { .. } => {
                    let object = value.as_object().expect("an object");
                    assert_ne!(object.get("version").and_then(Value::as_f64), Some(1.0));
                }
                ConfigError::Unreadable { .. } => panic!("validate_config never reads"),
                ConfigError::DuplicateKey { .. } => panic!("a Value holds each key once"),
                _ => {
                    let key = error.key().expect("a key");
                    let object = value.as_object().expect("an object");
                    assert!(object.contains_key(key), "{error} names an absent key");
                }
            }
        }
    }
}

fn valid_string() -> impl Strategy<Value = String> {
    "\\PC{1,24}".prop_filter("trimmed and non-blank", |s| {
        let trimmed = s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        !trimmed.is_empty() && trimmed.len() == s.len()
    })
}

fn valid_config() -> impl Strategy<Value = SolPiConfig> {
    let ratio = prop_oneof![
        Just(0.0),
        Just(12.5),
        0.0..1e6_f64,
        (prop::num::f64::POSITIVE | prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL)
            .prop_filter("finite", |f| f.is_finite()),
    ];
    let price = || prop_oneof![Just(0.0), Just(3.0), 0.0..=1e6_f64];
    let prices = (price(), price(), price(), price()).prop_map(|(input, read, write, output)| {
        sol_core::savings::PriceTable {
            input,
            cache_read: read,
            cache_write: write,
            output,
        }
    });
    (
        any::<[bool; 5]>(),
        valid_string(),
        valid_string(),
        ratio,
        prices,
        0u32..=1000,
    )
        .prop_map(
            |(flags, provider, model, ratio, prices, keep)| SolPiConfig {
                version: 1,
                action_fusion: flags[0],
                observation_pack: flags[1],
                evidence_preserving_reducer: flags[2],
                evidence_preserving_reducer_provider: provider,
                evidence_preserving_reducer_model: model,
                online_context_compact: flags[3],
                cache_write_read_ratio: ratio,
                cache_aware: flags[4],
                keep_recent_outputs: keep,
                prices,
            },
        )
}

fn reference_is_safe_session_id(id: &str) -> bool {
    let lower = id.to_ascii_lowercase();
    let mut chars = lower.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    first_ok && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
}

proptest! {
    #[test]
    fn any_json_value_validates_or_names_a_present_key(value in prop_oneof![json_value(), config_like()]) {
        let outcome = validate_config(&value, path());
        check_outcome(&value, outcome);
    }

    #[test]
    fn valid_configs_round_trip_through_json(config in valid_config()) {
        let bytes = serde_json::to_vec_pretty(&config).expect("serializable");
        let parsed = parse_config(&bytes, path()).expect("a valid config");
        prop_assert_eq!(parsed, config);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Err(error) = parse_config(&bytes, path()) {
            prop_assert!(error.to_string().contains(PATH));
        }
    }

    #[test]
    fn mangled_config_bytes_never_panic(
        config in valid_config(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = serde_json::to_vec(&config).expect("serializable");
        for (index, byte) in edits {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        if let Ok(parsed) = parse_config(&bytes, path()) {
            prop_assert_eq!(parsed.version, 1);
        }
    }

    #[test]
    fn a_leading_byte_order_mark_changes_nothing(
        text in prop_oneof![
            config_like().prop_map(|value| value.to_string()),
            valid_config().prop_map(|config| serde_json::to_string_pretty(&config).expect("json")),
            json_value().prop_map(|value| value.to_string()),
            "\\PC{0,40}",
        ],
    ) {
        let with_mark = format!("\u{feff}{text}");
        prop_assert_eq!(
            parse_config(with_mark.as_bytes(), path()),
            parse_config(text.as_bytes(), path())
        );
    }

    #[test]
    fn a_repeated_top_level_key_is_named_unless_an_unknown_key_comes_first(
        entries in prop::collection::vec((key(), json_leaf()), 0..10),
        force_version in any::<bool>(),
    ) {
        let mut entries = entries;
        if force_version {
            entries.insert(0, ("version".to_owned(), json!(1)));
        }
        let text = format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(key, value)| format!("{}: {value}", Value::from(key.as_str())))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let outcome = parse_config(text.as_bytes(), path());
        let unknown = entries.iter().map(|(key, _)| key).find(|key| !CONFIG_KEYS.contains(&key.as_str()));
        let repeated = entries
            .iter()
            .enumerate()
            .find(|(index, (key, _))| entries[..*index].iter().any(|(earlier, _)| earlier == key))
            .map(|(_, (key, _))| key);
        match (unknown, repeated) {
            (Some(key), _) => prop_assert_eq!(
                outcome,
                Err(ConfigError::UnknownKey { path: path().to_owned(), key: key.clone() })
            ),
            (None, Some(key)) => prop_assert_eq!(
                outcome,
                Err(ConfigError::DuplicateKey { path: path().to_owned(), key: key.clone() })
            ),
            (None, None) => {
                let object: Map<String, Value> = entries.into_iter().collect();
                prop_assert_eq!(outcome, validate_config(&Value::Object(object), path()));
            }
        }
    }

    #[test]
    fn a_prices_object_is_accepted_exactly_when_every_given_price_is_in_range(
        given in prop::collection::vec(
            (
                select(sol_core::config::PRICE_KEYS.to_vec()),
                prop_oneof![
                    3 => (-10.0..1.1e6_f64).prop_map(Value::from),
                    1 => select(vec![json!(0), json!(-0.0), json!(1_000_000), json!(1_000_000.5), json!(-1)]),
                    1 => json_leaf(),
                ],
            ),
            0..6,
        ),
    ) {
        let prices: Map<String, Value> =
            given.into_iter().map(|(key, value)| (key.to_owned(), value)).collect();
        let outcome = validate_config(&json!({"version": 1, "prices": prices}), path());
        // The reference: the first price, in the order of the fields, that is not a JSON
        // number from 0 to 1,000,000.
        let first_bad = sol_core::config::PRICE_KEYS.into_iter().find(|key| {
            prices.get(*key).is_some_and(|value| {
                !value.as_f64().is_some_and(|price| (0.0..=1_000_000.0).contains(&price))
            })
        });
        match (first_bad, outcome) {
            (None, Ok(config)) => {
                prop_assert_eq!(config.prices.validated(), Ok(config.prices));
                let mut want = sol_core::savings::PriceTable::default();
                for (key, value) in &prices {
                    *want.field_mut(key).expect("a price key") = value.as_f64().expect("a number");
                }
                prop_assert_eq!(config.prices, want);
            }
            (Some(key), Err(ConfigError::InvalidPrices { reason, .. })) => {
                prop_assert_eq!(reason, format!("{key} must be a number from 0 to 1000000"));
            }
            (first_bad, outcome) => {
                prop_assert!(false, "first bad price {:?}, outcome {:?}", first_bad, outcome);
            }
        }
    }

    #[test]
    fn session_id_parse_matches_the_reference(
        id in prop_oneof![any::<String>(), "[a-zA-Z0-9._/ -]{0,10}", "\\PC{0,4}"],
    ) {
        let parsed = SessionId::parse(&id);
        prop_assert_eq!(parsed.is_ok(), reference_is_safe_session_id(&id));
        match parsed {
            Ok(session) => prop_assert_eq!(session.as_str(), id.as_str()),
            Err(error) => {
                let message = error.to_string();
                prop_assert!(!message.contains('\n'));
                prop_assert!(message.starts_with("SoL-Pi requires a safe Pi session id, got \""));
            }
        }
    }

    #[test]
    fn any_message_value_round_trips(
        role in prop::option::of(select(vec!["user", "assistant", "toolResult", "custom"])),
        body in object_of(json_value(), 6),
    ) {
        let mut value = body;
        if let (Some(role), Value::Object(map)) = (role, &mut value) {
            map.insert("role".to_owned(), json!(role));
        }
        let message: AgentMessage = serde_json::from_value(value.clone()).expect("never fails");
        prop_assert_eq!(message.to_value(), value);
    }
}

proptest! {
    /// `js_length` is JavaScript's `length`: the UTF-16 code units of the text, for ASCII
    /// (its fast path), any Unicode, and the two mixed.
    #[test]
    fn js_length_counts_utf16_units(
        ascii in "[ -~\t\n]{0,64}",
        any_text in any::<String>(),
        astral in "[\u{10000}-\u{10FFFF}]{0,4}",
    ) {
        for text in [ascii.clone(), any_text.clone(), format!("{ascii}{astral}{any_text}")] {
            prop_assert_eq!(
                sol_core::message::js_length(&text),
                text.encode_utf16().count() as u64,
                "{:?}", text
            );
        }
    }
}

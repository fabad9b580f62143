//! Validation of `sol-pi.json` documents, and the config vocabulary.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Value, json};
use sol_core::config::{CONFIG_KEYS, DEFAULT_CACHE_WRITE_READ_RATIO};
use sol_core::{
    ConfigError, ConfigSource, LoadedConfig, Mechanism, SolPiConfig, parse_config, validate_config,
};

const PATH: &str = "/home/u/.pi/agent/sol-pi.json";

fn validate(value: Value) -> Result<SolPiConfig, ConfigError> {
    validate_config(&value, Utf8Path::new(PATH))
}

fn rejected(value: Value) -> ConfigError {
    validate(value).expect_err("the document must be rejected")
}

fn accepted(value: Value) -> SolPiConfig {
    validate(value).expect("the document must be accepted")
}

#[test]
fn defaults_match_the_schema() {
    let defaults = SolPiConfig::default();
    assert_eq!(defaults.version, 1);
    assert!(defaults.enabled_mechanisms().is_empty());
    assert_eq!(
        defaults.evidence_preserving_reducer_provider,
        "openai-codex"
    );
    assert_eq!(defaults.evidence_preserving_reducer_model, "gpt-5.6-luna");
    assert_eq!(defaults.cache_write_read_ratio, 12.5);
    assert_eq!(DEFAULT_CACHE_WRITE_READ_RATIO, 12.5);
    assert_eq!(accepted(json!({"version": 1})), defaults);
}

#[test]
fn serializes_with_the_file_keys_in_schema_order() {
    let keys_of = |config: SolPiConfig| -> Vec<String> {
        let value = serde_json::to_value(config).expect("serializable");
        value
            .as_object()
            .expect("an object")
            .keys()
            .cloned()
            .collect()
    };
    // `keepRecentOutputs` is left out while it is 0 and `prices` while it is the default;
    // otherwise they come last, in this order.
    assert_eq!(
        keys_of(SolPiConfig::default()),
        CONFIG_KEYS[..CONFIG_KEYS.len() - 2]
    );
    let priced = SolPiConfig {
        keep_recent_outputs: 4,
        prices: sol_core::savings::PriceTable {
            output: 10.0,
            ..Default::default()
        },
        ..SolPiConfig::default()
    };
    assert_eq!(keys_of(priced), CONFIG_KEYS);
}

#[test]
fn prices_overlay_the_default_table() {
    let config = accepted(json!({"version": 1, "prices": {"output": 10, "cacheRead": -0.0}}));
    let want = sol_core::savings::PriceTable {
        output: 10.0,
        cache_read: 0.0,
        ..Default::default()
    };
    assert_eq!(config.prices, want);
    assert!(config.prices.cache_read.is_sign_positive());
    assert_eq!(
        accepted(json!({"version": 1, "prices": {}})).prices,
        Default::default()
    );
}

#[test]
fn the_first_bad_price_in_field_order_is_named_whatever_is_wrong_with_it() {
    let reason = |prices: Value| match rejected(json!({"version": 1, "prices": prices})) {
        ConfigError::InvalidPrices { reason, .. } => reason,
        other => panic!("not a price error: {other}"),
    };
    // Out of range before a non-number, and the other way round, in either document order.
    assert_eq!(
        reason(json!({"cacheRead": "0.3", "input": -1})),
        "input must be a number from 0 to 1000000"
    );
    assert_eq!(
        reason(json!({"output": 1_000_001, "cacheWrite": null})),
        "cacheWrite must be a number from 0 to 1000000"
    );
    // The cap itself is a price; a JSON number just above it is not.
    assert_eq!(
        accepted(json!({"version": 1, "prices": {"output": 1_000_000}}))
            .prices
            .output,
        1_000_000.0
    );
    assert_eq!(
        reason(json!({"output": 1_000_000.000_001})),
        "output must be a number from 0 to 1000000"
    );
}

#[test]
fn mechanisms_in_registration_order() {
    assert_eq!(
        Mechanism::ALL,
        [
            Mechanism::ActionFusion,
            Mechanism::ObservationPack,
            Mechanism::EvidencePreservingReducer,
            Mechanism::OnlineContextCompact,
        ]
    );
    let keys: Vec<&str> = Mechanism::ALL.iter().map(|m| m.config_key()).collect();
    assert_eq!(
        keys,
        [
            "actionFusion",
            "observationPack",
            "evidencePreservingReducer",
            "onlineContextCompact"
        ]
    );
    for key in keys {
        assert!(CONFIG_KEYS.contains(&key));
    }
    let labels: Vec<&str> = Mechanism::ALL.iter().map(|m| m.label()).collect();
    assert_eq!(
        labels,
        [
            "Action Fusion",
            "ObservationPack",
            "Evidence-Preserving Reducer",
            "Online Context Compact"
        ]
    );
}

#[test]
fn enabled_mechanisms_follow_registration_order_not_file_order() {
    let config = accepted(json!({
        "onlineContextCompact": true,
        "version": 1,
        "actionFusion": true,
    }));
    assert_eq!(
        config.enabled_mechanisms(),
        vec![Mechanism::ActionFusion, Mechanism::OnlineContextCompact]
    );
    assert!(config.is_enabled(Mechanism::ActionFusion));
    assert!(!config.is_enabled(Mechanism::ObservationPack));
    assert!(!config.is_enabled(Mechanism::EvidencePreservingReducer));
    assert!(config.is_enabled(Mechanism::OnlineContextCompact));

    for mechanism in Mechanism::ALL {
        let mut document = json!({"version": 1});
        document[mechanism.config_key()] = json!(true);
        assert_eq!(accepted(document).enabled_mechanisms(), vec![mechanism]);
    }
}

#[test]
fn unknown_key_is_reported_with_its_name() {
    let error = rejected(json!({"version": 1, "actionFussion": true}));
    assert_eq!(
        error,
        ConfigError::UnknownKey {
            path: PATH.into(),
            key: "actionFussion".to_owned()
        }
    );
    assert_eq!(
        error.to_string(),
        format!("Unknown SoL-Pi config key: actionFussion (in {PATH})")
    );
}

#[test]
fn unknown_key_is_checked_before_version() {
    assert_eq!(rejected(json!({"provider": "x"})).code(), "unknown_key");
    assert_eq!(
        rejected(json!({"version": "one", "trajectoryInspector": true})).key(),
        Some("trajectoryInspector")
    );
}

#[test]
fn first_unknown_key_in_document_order_wins() {
    let document: Value =
        serde_json::from_str(r#"{"zz": 1, "version": 1, "aa": 2}"#).expect("valid JSON");
    assert_eq!(rejected(document).key(), Some("zz"));
}

#[test]
fn version_must_be_numerically_one() {
    for bad in [
        json!({}),
        json!({"version": 2}),
        json!({"version": "1"}),
        json!({"version": null}),
        json!({"version": true}),
        json!({"version": 0.5}),
    ] {
        let error = rejected(bad.clone());
        assert_eq!(
            error,
            ConfigError::UnsupportedVersion { path: PATH.into() },
            "{bad}"
        );
        assert_eq!(error.key(), Some("version"));
    }
    assert_eq!(accepted(json!({"version": 1.0})), SolPiConfig::default());
}

#[test]
fn feature_flags_must_be_boolean() {
    for (key, bad) in [
        ("actionFusion", json!("yes")),
        ("observationPack", json!(1)),
        ("evidencePreservingReducer", json!(null)),
        ("onlineContextCompact", json!({"on": true})),
    ] {
        let mut document = json!({"version": 1});
        document[key] = bad;
        let error = rejected(document);
        assert_eq!(
            error,
            ConfigError::NotBoolean {
                path: PATH.into(),
                key: key.to_owned()
            }
        );
        assert_eq!(
            error.to_string(),
            format!("SoL-Pi config {key} must be boolean: {PATH}")
        );
    }
}

#[test]
fn ratio_zero_and_fractions_load_exactly() {
    assert_eq!(
        accepted(json!({"version": 1, "cacheWriteReadRatio": 0})).cache_write_read_ratio,
        0.0
    );
    assert_eq!(
        accepted(json!({"version": 1, "cacheWriteReadRatio": 3.25})).cache_write_read_ratio,
        3.25
    );
    assert_eq!(
        accepted(json!({"version": 1, "cacheWriteReadRatio": 1e300})).cache_write_read_ratio,
        1e300
    );
    let negative_zero = accepted(json!({"version": 1, "cacheWriteReadRatio": -0.0}));
    assert!(negative_zero.cache_write_read_ratio.is_sign_positive());
}

#[test]
fn ratio_must_be_finite_and_not_negative() {
    for bad in [
        json!(null),
        json!("12.5"),
        json!(-1),
        json!(-0.001),
        json!(true),
        json!([1]),
    ] {
        let error = rejected(json!({"version": 1, "cacheWriteReadRatio": bad}));
        assert_eq!(
            error,
            ConfigError::InvalidRatio { path: PATH.into() },
            "{bad}"
        );
        assert_eq!(error.key(), Some("cacheWriteReadRatio"));
    }
    // JSON has no infinity: a literal beyond f64 cannot even be parsed.
    let error = parse_config(
        br#"{"version": 1, "cacheWriteReadRatio": 1e400}"#,
        PATH.into(),
    )
    .expect_err("out of range");
    assert_eq!(error.code(), "unreadable");
}

#[test]
fn reducer_route_must_be_non_blank_strings() {
    for key in [
        "evidencePreservingReducerProvider",
        "evidencePreservingReducerModel",
    ] {
        for bad in [
            json!(""),
            json!(12),
            json!("   "),
            json!(null),
            json!("\t\n"),
        ] {
            let mut document = json!({"version": 1});
            document[key] = bad.clone();
            let error = rejected(document);
            assert_eq!(
                error,
                ConfigError::EmptyString {
                    path: PATH.into(),
                    key: key.to_owned()
                },
                "{key} = {bad}"
            );
        }
    }
}

#[test]
fn explicit_reducer_route_loads_trimmed() {
    let config = accepted(json!({
        "version": 1,
        "evidencePreservingReducerProvider": "  openrouter ",
        "evidencePreservingReducerModel": "\u{feff}tiny\u{a0}",
    }));
    assert_eq!(config.evidence_preserving_reducer_provider, "openrouter");
    assert_eq!(config.evidence_preserving_reducer_model, "tiny");
    let inner = accepted(json!({"version": 1, "evidencePreservingReducerModel": "a b"}));
    assert_eq!(inner.evidence_preserving_reducer_model, "a b");
}

#[test]
fn checks_run_in_the_documented_order() {
    let everything_wrong = json!({
        "evidencePreservingReducerModel": "",
        "cacheWriteReadRatio": -1,
        "keepRecentOutputs": -1,
        "actionFusion": "yes",
        "version": 2,
        "nope": true,
    });
    let mut document = everything_wrong.as_object().expect("an object").clone();
    let mut codes = Vec::new();
    loop {
        match validate(Value::Object(document.clone())) {
            Ok(_) => break,
            Err(error) => {
                codes.push(error.code());
                match error {
                    ConfigError::UnknownKey { key, .. }
                    | ConfigError::NotBoolean { key, .. }
                    | ConfigError::EmptyString { key, .. } => {
                        document.remove(&key);
                    }
                    ConfigError::UnsupportedVersion { .. } => {
                        document.insert("version".to_owned(), json!(1));
                    }
                    ConfigError::InvalidRatio { .. } => {
                        document.remove("cacheWriteReadRatio");
                    }
                    ConfigError::InvalidKeepRecentOutputs { .. } => {
                        document.remove("keepRecentOutputs");
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
    }
    assert_eq!(
        codes,
        [
            "unknown_key",
            "unsupported_version",
            "not_boolean",
            "invalid_ratio",
            "invalid_keep_recent_outputs",
            "empty_string"
        ]
    );
}

#[test]
fn not_an_object_is_rejected() {
    for bad in [
        json!(null),
        json!([]),
        json!(3),
        json!("x"),
        json!(true),
        json!([{"version": 1}]),
    ] {
        assert_eq!(
            rejected(bad),
            ConfigError::NotAnObject { path: PATH.into() }
        );
    }
}

#[test]
fn unreadable_bytes_name_the_file() {
    let path = Utf8Path::new(PATH);
    for bytes in [&b"{"[..], b"", b"{\"version\": 1,}", b"\xff", b"{} {}"] {
        let error = parse_config(bytes, path).expect_err("unreadable");
        assert_eq!(error.code(), "unreadable");
        assert_eq!(error.path(), path);
        assert_eq!(error.key(), None);
        assert!(
            error
                .to_string()
                .starts_with(&format!("Unable to read SoL-Pi config {PATH}: "))
        );
    }
}

#[test]
fn error_accessors_agree_with_each_variant() {
    let path = Utf8PathBuf::from(PATH);
    let cases = [
        (
            ConfigError::Unreadable {
                path: path.clone(),
                reason: "r".to_owned(),
            },
            "unreadable",
            None,
        ),
        (
            ConfigError::NotAnObject { path: path.clone() },
            "not_an_object",
            None,
        ),
        (
            ConfigError::UnknownKey {
                path: path.clone(),
                key: "k".to_owned(),
            },
            "unknown_key",
            Some("k"),
        ),
        (
            ConfigError::UnsupportedVersion { path: path.clone() },
            "unsupported_version",
            Some("version"),
        ),
        (
            ConfigError::NotBoolean {
                path: path.clone(),
                key: "actionFusion".to_owned(),
            },
            "not_boolean",
            Some("actionFusion"),
        ),
        (
            ConfigError::InvalidRatio { path: path.clone() },
            "invalid_ratio",
            Some("cacheWriteReadRatio"),
        ),
        (
            ConfigError::EmptyString {
                path: path.clone(),
                key: "evidencePreservingReducerModel".to_owned(),
            },
            "empty_string",
            Some("evidencePreservingReducerModel"),
        ),
    ];
    for (error, code, key) in cases {
        assert_eq!(error.code(), code);
        assert_eq!(error.key(), key);
        assert_eq!(error.path(), path);
        assert!(error.to_string().contains(PATH), "{error}");
        assert!(!error.detail().contains(PATH), "{}", error.detail());
    }
}

#[test]
fn source_and_loaded_config_serialize_for_the_host() {
    let project = ConfigSource::Project("/p/.pi/sol-pi.json".into());
    assert_eq!(
        serde_json::to_value(&project).expect("serializable"),
        json!({"kind": "project", "path": "/p/.pi/sol-pi.json"})
    );
    assert_eq!(
        serde_json::to_value(ConfigSource::AgentDir("/a/sol-pi.json".into()))
            .expect("serializable"),
        json!({"kind": "agentDir", "path": "/a/sol-pi.json"})
    );
    assert_eq!(
        serde_json::to_value(ConfigSource::Defaults).expect("serializable"),
        json!({"kind": "defaults"})
    );
    assert_eq!(ConfigSource::Defaults.path(), None);
    assert_eq!(project.path(), Some(Utf8Path::new("/p/.pi/sol-pi.json")));

    let loaded = LoadedConfig {
        config: SolPiConfig::default(),
        source: ConfigSource::Defaults,
        ignored_untrusted_project: Some("/p/.pi/sol-pi.json".into()),
    };
    let value = serde_json::to_value(&loaded).expect("serializable");
    assert_eq!(value["source"], json!({"kind": "defaults"}));
    assert_eq!(
        value["ignoredUntrustedProject"],
        json!("/p/.pi/sol-pi.json")
    );
    assert_eq!(value["config"]["cacheWriteReadRatio"], json!(12.5));
}

#[test]
fn full_config_deserializes_strictly() {
    let value = serde_json::to_value(SolPiConfig::default()).expect("serializable");
    let back: SolPiConfig = serde_json::from_value(value.clone()).expect("round trip");
    assert_eq!(back, SolPiConfig::default());
    let mut extra = value;
    extra["bogus"] = json!(1);
    assert!(serde_json::from_value::<SolPiConfig>(extra).is_err());
}

//! Factory options and Pi's compaction settings.

use serde_json::json;
use sol_core::SolPiConfig;
use sol_occ::settings::{
    ModelRef, OccOptions, OptionsError, SettingSource, non_negative_safe_integer,
    positive_safe_integer, resolve_compaction_settings,
};

fn model() -> ModelRef {
    ModelRef {
        provider: "anthropic".into(),
        id: "claude-sonnet-4-5".into(),
    }
}

#[test]
fn defaults_apply_without_settings() {
    let settings = resolve_compaction_settings(None, Some(&model()), None);
    assert_eq!(
        (settings.keep_recent_tokens, settings.reserve_tokens),
        (20_000, 16_384)
    );
    assert_eq!(settings.keep_recent_source, SettingSource::Default);
    let empty = resolve_compaction_settings(Some(&json!({})), Some(&model()), None);
    assert_eq!(empty, settings);
}

#[test]
fn ordinary_settings_then_model_overrides_then_the_explicit_tail() {
    let settings = json!({"compaction": {
        "keepRecentTokens": 30_000,
        "reserveTokens": 12_000,
        "modelOverrides": {
            "anthropic/claude-sonnet-4-5": {"keepRecentTokens": 8_000},
            "openai/gpt-5": {"reserveTokens": 1},
        },
    }});
    let resolved = resolve_compaction_settings(Some(&settings), Some(&model()), None);
    assert_eq!(
        (resolved.keep_recent_tokens, resolved.reserve_tokens),
        (8_000, 12_000)
    );
    assert_eq!(resolved.keep_recent_source, SettingSource::ModelOverride);
    assert_eq!(resolved.reserve_source, SettingSource::Settings);

    let other = ModelRef {
        provider: "openai".into(),
        id: "gpt-5".into(),
    };
    let resolved = resolve_compaction_settings(Some(&settings), Some(&other), None);
    assert_eq!(
        (resolved.keep_recent_tokens, resolved.reserve_tokens),
        (30_000, 1)
    );

    let no_model = resolve_compaction_settings(Some(&settings), None, None);
    assert_eq!(
        (no_model.keep_recent_tokens, no_model.reserve_tokens),
        (30_000, 12_000)
    );

    let explicit = resolve_compaction_settings(Some(&settings), Some(&model()), Some(50));
    assert_eq!(
        (explicit.keep_recent_tokens, explicit.keep_recent_source),
        (50, SettingSource::Explicit)
    );
    assert_eq!(explicit.reserve_tokens, 12_000);
}

#[test]
fn invalid_values_are_skipped() {
    let settings = json!({"compaction": {
        "keepRecentTokens": -1,
        "reserveTokens": 1.5,
        "modelOverrides": {"anthropic/claude-sonnet-4-5": {"keepRecentTokens": "8000", "reserveTokens": 0}},
    }});
    let resolved = resolve_compaction_settings(Some(&settings), Some(&model()), None);
    assert_eq!(
        (resolved.keep_recent_tokens, resolved.reserve_tokens),
        (20_000, 0)
    );
    let not_an_object =
        json!({"compaction": {"modelOverrides": {"anthropic/claude-sonnet-4-5": 5}}});
    let resolved = resolve_compaction_settings(Some(&not_an_object), Some(&model()), None);
    assert_eq!(resolved.keep_recent_tokens, 20_000);
}

#[test]
fn factory_options_are_validated() {
    assert_eq!(
        OccOptions::new(Some(12.5), None),
        Ok(OccOptions {
            cache_write_read_ratio: Some(12.5),
            keep_recent_tokens: None
        })
    );
    assert_eq!(
        OccOptions::new(None, Some(50.0))
            .expect("50")
            .keep_recent_tokens,
        Some(50)
    );
    let zero = OccOptions::new(None, Some(0.0)).expect_err("0");
    assert_eq!(zero, OptionsError::InvalidKeepRecentTokens);
    assert!(zero.to_string().contains("positive safe integer"));
    assert_eq!(
        OccOptions::new(None, Some(1.5)),
        Err(OptionsError::InvalidKeepRecentTokens)
    );
    assert_eq!(
        OccOptions::new(None, Some(9_007_199_254_740_992.0)),
        Err(OptionsError::InvalidKeepRecentTokens)
    );
    for ratio in [-1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(
            OccOptions::new(Some(ratio), None),
            Err(OptionsError::InvalidRatio)
        );
    }
    assert_eq!(
        OptionsError::InvalidRatio.to_string(),
        "Online Context Compact cacheWriteReadRatio must be finite and non-negative"
    );
    assert!(OccOptions::new(Some(0.0), None).is_ok());
    let config = SolPiConfig {
        online_context_compact: true,
        ..SolPiConfig::default()
    };
    assert_eq!(
        OccOptions::from_config(&config).cache_write_read_ratio,
        Some(12.5)
    );
}

#[test]
fn reported_numbers_must_be_safe_integers() {
    assert_eq!(positive_safe_integer(0.0), None);
    assert_eq!(positive_safe_integer(12.0), Some(12));
    assert_eq!(positive_safe_integer(f64::NAN), None);
    assert_eq!(non_negative_safe_integer(0.0), Some(0));
    assert_eq!(non_negative_safe_integer(-0.5), None);
    assert_eq!(
        non_negative_safe_integer(9_007_199_254_740_991.0),
        Some(9_007_199_254_740_991)
    );
}

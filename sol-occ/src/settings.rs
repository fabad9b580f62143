//! Options of the mechanism and Pi's compaction settings.
//!
//! Pi 1.x exposes its effective settings (`pi.getSettings()`); Online Context Compact reads
//! `compaction.keepRecentTokens` (the retained tail, which decides Pi's cut point) and
//! `compaction.reserveTokens` (the window reserve that triggers window protection), with a
//! `compaction.modelOverrides["<provider>/<model>"]` entry for the current model taking
//! precedence, as in Pi. Older Pi versions have no such call; the documented defaults
//! apply. A retained tail given to the factory explicitly wins over all of them.
//!
//! ```
//! use serde_json::json;
//! use sol_occ::settings::{resolve_compaction_settings, ModelRef};
//!
//! let settings = json!({"compaction": {
//!     "keepRecentTokens": 30000,
//!     "modelOverrides": {"anthropic/claude-sonnet-4-5": {"reserveTokens": 8192}},
//! }});
//! let model = ModelRef { provider: "anthropic".into(), id: "claude-sonnet-4-5".into() };
//! let resolved = resolve_compaction_settings(Some(&settings), Some(&model), None);
//! assert_eq!((resolved.keep_recent_tokens, resolved.reserve_tokens), (30_000, 8_192));
//!
//! let defaults = resolve_compaction_settings(None, None, None);
//! assert_eq!((defaults.keep_recent_tokens, defaults.reserve_tokens), (20_000, 16_384));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Pi's default retained tail, in tokens.
pub const DEFAULT_KEEP_RECENT_TOKENS: u64 = 20_000;
/// Pi's default reserve below the context window, in tokens.
pub const DEFAULT_RESERVE_TOKENS: u64 = 16_384;
/// The largest integer a JavaScript number holds exactly.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A model, as Pi names it in `modelOverrides` keys (`<provider>/<id>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRef {
    /// Provider id, such as `anthropic`.
    pub provider: String,
    /// Model id, such as `claude-sonnet-4-5`.
    pub id: String,
}

impl ModelRef {
    /// The `modelOverrides` key of this model.
    pub fn key(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }
}

/// Where a resolved setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingSource {
    /// The factory option.
    Explicit,
    /// `compaction.modelOverrides["<provider>/<model>"]`.
    ModelOverride,
    /// `compaction.<field>`.
    Settings,
    /// Pi's documented default.
    Default,
}

/// The compaction settings Online Context Compact works with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSettings {
    /// Pi's retained tail.
    pub keep_recent_tokens: u64,
    /// Pi's reserve below the context window.
    pub reserve_tokens: u64,
    /// Where `keep_recent_tokens` came from.
    pub keep_recent_source: SettingSource,
    /// Where `reserve_tokens` came from.
    pub reserve_source: SettingSource,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            keep_recent_tokens: DEFAULT_KEEP_RECENT_TOKENS,
            reserve_tokens: DEFAULT_RESERVE_TOKENS,
            keep_recent_source: SettingSource::Default,
            reserve_source: SettingSource::Default,
        }
    }
}

/// Resolves the compaction settings from Pi's settings object (`pi.getSettings()`, or
/// `None` where Pi has no such call), the current model and the factory's explicit
/// retained tail.
///
/// Each field is taken from the first of: the explicit value (retained tail only), the
/// current model's `modelOverrides` entry, the ordinary `compaction` field, the default.
/// A value that is not a non-negative safe integer is skipped, as if absent; Pi itself
/// rejects such settings when it compacts.
pub fn resolve_compaction_settings(
    settings: Option<&Value>,
    model: Option<&ModelRef>,
    explicit_keep_recent_tokens: Option<u64>,
) -> CompactionSettings {
    let compaction = settings.and_then(|settings| settings.get("compaction"));
    let model_key = model.map(ModelRef::key);
    let overrides = compaction
        .and_then(|compaction| compaction.get("modelOverrides"))
        .and_then(|overrides| overrides.get(model_key.as_deref()?));
    let lookup = |field: &str, default: u64| -> (u64, SettingSource) {
        if let Some(value) = overrides.and_then(|entry| token_setting(entry.get(field))) {
            return (value, SettingSource::ModelOverride);
        }
        if let Some(value) = compaction.and_then(|entry| token_setting(entry.get(field))) {
            return (value, SettingSource::Settings);
        }
        (default, SettingSource::Default)
    };
    let (keep_recent_tokens, keep_recent_source) = match explicit_keep_recent_tokens {
        Some(value) => (value, SettingSource::Explicit),
        None => lookup("keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS),
    };
    let (reserve_tokens, reserve_source) = lookup("reserveTokens", DEFAULT_RESERVE_TOKENS);
    CompactionSettings {
        keep_recent_tokens,
        reserve_tokens,
        keep_recent_source,
        reserve_source,
    }
}

fn token_setting(value: Option<&Value>) -> Option<u64> {
    let number = value?.as_f64()?;
    non_negative_safe_integer(number)
}

/// `Some(n)` when `value` is an integer in `0..=MAX_SAFE_INTEGER`.
pub fn non_negative_safe_integer(value: f64) -> Option<u64> {
    let in_range = value.is_finite() && value >= 0.0 && value <= MAX_SAFE_INTEGER as f64;
    (in_range && value.fract() == 0.0).then_some(value as u64)
}

/// `Some(n)` when `value` is an integer in `1..=MAX_SAFE_INTEGER`: how Pi's reported
/// sizes and windows are accepted.
pub fn positive_safe_integer(value: f64) -> Option<u64> {
    non_negative_safe_integer(value).filter(|&n| n > 0)
}

/// The options of the mechanism, given once when the extension is created.
/// The default knows no cache price and takes the retained tail from Pi's settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OccOptions {
    /// Price of a cache write relative to a cache read; `None` means unknown, and then
    /// only window protection can compact.
    pub cache_write_read_ratio: Option<f64>,
    /// A retained tail that overrides Pi's settings.
    pub keep_recent_tokens: Option<u64>,
}

/// Why the factory options were rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// The ratio is negative, infinite or NaN.
    #[error("Online Context Compact cacheWriteReadRatio must be finite and non-negative")]
    InvalidRatio,
    /// The retained tail is not a positive safe integer.
    #[error("Online Context Compact keepRecentTokens must be a positive safe integer")]
    InvalidKeepRecentTokens,
}

impl OptionsError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            OptionsError::InvalidRatio => "invalid_cache_write_read_ratio",
            OptionsError::InvalidKeepRecentTokens => "invalid_keep_recent_tokens",
        }
    }
}

impl OccOptions {
    /// Validates the factory options as JavaScript numbers.
    ///
    /// # Errors
    ///
    /// [`OptionsError::InvalidRatio`] for a negative or non-finite ratio,
    /// [`OptionsError::InvalidKeepRecentTokens`] for a retained tail that is not a positive
    /// safe integer.
    pub fn new(
        cache_write_read_ratio: Option<f64>,
        keep_recent_tokens: Option<f64>,
    ) -> Result<OccOptions, OptionsError> {
        if let Some(ratio) = cache_write_read_ratio
            && !(ratio.is_finite() && ratio >= 0.0)
        {
            return Err(OptionsError::InvalidRatio);
        }
        let keep_recent_tokens = match keep_recent_tokens {
            None => None,
            Some(value) => {
                Some(positive_safe_integer(value).ok_or(OptionsError::InvalidKeepRecentTokens)?)
            }
        };
        Ok(OccOptions {
            cache_write_read_ratio,
            keep_recent_tokens,
        })
    }

    /// The options the standalone entry uses: the ratio from `sol-pi.json`, Pi's retained
    /// tail.
    pub fn from_config(config: &sol_core::SolPiConfig) -> OccOptions {
        OccOptions {
            cache_write_read_ratio: Some(config.cache_write_read_ratio),
            keep_recent_tokens: None,
        }
    }
}

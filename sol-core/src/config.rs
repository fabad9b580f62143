//! The `sol-pi.json` configuration: schema, defaults, validation and search.
//!
//! A missing file leaves every mechanism disabled. Exactly one file is effective (a trusted
//! project's `.pi/sol-pi.json`, else the agent directory's `sol-pi.json`); files are never
//! merged, and keys a file leaves out take the built-in defaults, not another file's values.

mod error;
mod load;
mod validate;

use serde::{Deserialize, Serialize};

use crate::price::PriceTable;

pub use error::ConfigError;
pub use load::{ConfigSearch, ConfigSource, LoadedConfig, load_config};
pub use validate::{parse_config, validate_config};

/// File name of the configuration, both in a project's `.pi` directory and in the agent
/// directory.
pub const CONFIG_FILE_NAME: &str = "sol-pi.json";
/// Directory inside a project that holds the project configuration.
pub const PROJECT_CONFIG_DIR: &str = ".pi";
/// Largest configuration file that is read; anything larger is rejected as unreadable.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// The only supported value of the `version` key.
pub const CONFIG_VERSION: u32 = 1;
/// Provider id the Evidence-Preserving Reducer uses when the file names none.
pub const DEFAULT_REDUCER_PROVIDER: &str = "openai-codex";
/// Model id the Evidence-Preserving Reducer uses when the file names none.
pub const DEFAULT_REDUCER_MODEL: &str = "gpt-5.6-luna";
/// Default price ratio of a cache write to a cache read, used by Online Context Compact.
pub const DEFAULT_CACHE_WRITE_READ_RATIO: f64 = 12.5;

/// JSON key of the schema version.
pub const KEY_VERSION: &str = "version";
/// JSON key of the reducer's provider id.
pub const KEY_REDUCER_PROVIDER: &str = "evidencePreservingReducerProvider";
/// JSON key of the reducer's model id.
pub const KEY_REDUCER_MODEL: &str = "evidencePreservingReducerModel";
/// JSON key of the cache write/read price ratio.
pub const KEY_CACHE_WRITE_READ_RATIO: &str = "cacheWriteReadRatio";
/// JSON key of the cache-aware policy switch.
pub const KEY_CACHE_AWARE: &str = "cacheAware";
/// JSON key of the recent-outputs placement's setting (ObservationPack).
pub const KEY_KEEP_RECENT_OUTPUTS: &str = "keepRecentOutputs";
/// The `keepRecentOutputs` that `true` stands for: the newest tool outputs kept in full.
pub const DEFAULT_KEEP_RECENT_OUTPUTS: u32 = 10;
/// The largest `keepRecentOutputs` a file may give.
pub const MAX_KEEP_RECENT_OUTPUTS: u32 = 1000;
/// JSON key of the price table the savings report uses.
pub const KEY_PRICES: &str = "prices";
/// The keys of the `prices` object, each in dollars per million tokens.
pub const PRICE_KEYS: [&str; 4] = ["input", "cacheRead", "cacheWrite", "output"];

/// Every key a configuration file may contain, in the order of [`SolPiConfig`]'s fields.
pub const CONFIG_KEYS: [&str; 11] = [
    KEY_VERSION,
    "actionFusion",
    "observationPack",
    "evidencePreservingReducer",
    KEY_REDUCER_PROVIDER,
    KEY_REDUCER_MODEL,
    "onlineContextCompact",
    KEY_CACHE_WRITE_READ_RATIO,
    KEY_CACHE_AWARE,
    KEY_KEEP_RECENT_OUTPUTS,
    KEY_PRICES,
];

/// The effective configuration: defaults overlaid with the keys of one file.
///
/// Serializes to the camelCase keys of `sol-pi.json`. Deserializing this type directly expects
/// every key and accepts no other; files written by people go through [`validate_config`],
/// which fills defaults and reports errors with the exact messages users see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SolPiConfig {
    /// Schema version; always [`CONFIG_VERSION`] once validated.
    pub version: u32,
    /// Enables Action Fusion (`then_run` on `edit` and `write`).
    pub action_fusion: bool,
    /// Enables ObservationPack (placeholders and `obs_recall` for large tool results).
    pub observation_pack: bool,
    /// Enables the Evidence-Preserving Reducer (verified receipts for long logs).
    pub evidence_preserving_reducer: bool,
    /// Provider id of the reducer's model, looked up in Pi's model registry; trimmed.
    pub evidence_preserving_reducer_provider: String,
    /// Model id of the reducer's model; trimmed.
    pub evidence_preserving_reducer_model: String,
    /// Enables Online Context Compact (`update_plan` and plan-boundary compaction).
    pub online_context_compact: bool,
    /// Price of a cache write relative to a cache read; finite and non-negative.
    pub cache_write_read_ratio: f64,
    /// Opts in to the cache-aware policies (off by default, which keeps the requirement's
    /// fixed rules): ObservationPack replaces large results in batches when the saving over
    /// the expected remaining requests beats the cache rewrite it causes, and the reducer
    /// reads what the model saw and runs only when its model call pays for itself.
    pub cache_aware: bool,
    /// Opts ObservationPack in to the recent-outputs placement, built for real sessions
    /// (0, the default, keeps the requirement's fixed rule, or the cache-aware placement
    /// with `cacheAware`): results whose compact placeholder is at most half their size are
    /// packed, each
    /// stays in full while it is one of this many newest tool outputs (longer once the
    /// model quoted it), and the rest are replaced when the provider rewrites its cache
    /// anyway or when the saving beats the rewrite. The file gives `true` (10), `false`
    /// (0) or a whole number up to [`MAX_KEEP_RECENT_OUTPUTS`]. Left out when serialized
    /// while it is 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub keep_recent_outputs: u32,
    /// The prices the savings report is made at (dollars per million tokens); a file may
    /// give any of the four and the others keep their defaults. Left out when serialized
    /// while it is the default.
    #[serde(default, skip_serializing_if = "PriceTable::is_default")]
    pub prices: PriceTable,
}

impl Default for SolPiConfig {
    fn default() -> Self {
        Self {
            version: CONFIG_VERSION,
            action_fusion: false,
            observation_pack: false,
            evidence_preserving_reducer: false,
            evidence_preserving_reducer_provider: DEFAULT_REDUCER_PROVIDER.to_owned(),
            evidence_preserving_reducer_model: DEFAULT_REDUCER_MODEL.to_owned(),
            online_context_compact: false,
            cache_write_read_ratio: DEFAULT_CACHE_WRITE_READ_RATIO,
            cache_aware: false,
            keep_recent_outputs: 0,
            prices: PriceTable::default(),
        }
    }
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

impl SolPiConfig {
    /// Whether `mechanism` is switched on.
    pub fn is_enabled(&self, mechanism: Mechanism) -> bool {
        match mechanism {
            Mechanism::ActionFusion => self.action_fusion,
            Mechanism::ObservationPack => self.observation_pack,
            Mechanism::EvidencePreservingReducer => self.evidence_preserving_reducer,
            Mechanism::OnlineContextCompact => self.online_context_compact,
        }
    }

    /// The enabled mechanisms, in registration order.
    pub fn enabled_mechanisms(&self) -> Vec<Mechanism> {
        Mechanism::ALL
            .into_iter()
            .filter(|mechanism| self.is_enabled(*mechanism))
            .collect()
    }

    fn flag_mut(&mut self, mechanism: Mechanism) -> &mut bool {
        match mechanism {
            Mechanism::ActionFusion => &mut self.action_fusion,
            Mechanism::ObservationPack => &mut self.observation_pack,
            Mechanism::EvidencePreservingReducer => &mut self.evidence_preserving_reducer,
            Mechanism::OnlineContextCompact => &mut self.online_context_compact,
        }
    }
}

/// One of the four opt-in mechanisms.
///
/// The declaration order is the registration order: Online Context Compact comes last so
/// that it sees the context after the other mechanisms have transformed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Mechanism {
    /// `then_run` follow-up commands on `edit` and `write`.
    ActionFusion,
    /// Placeholders and exact paged recall for large tool results.
    ObservationPack,
    /// Model-written receipts for long logs, checked against the archived original.
    EvidencePreservingReducer,
    /// Plan-driven compaction at plan-step boundaries.
    OnlineContextCompact,
}

impl Mechanism {
    /// Every mechanism, in registration order.
    pub const ALL: [Mechanism; 4] = [
        Mechanism::ActionFusion,
        Mechanism::ObservationPack,
        Mechanism::EvidencePreservingReducer,
        Mechanism::OnlineContextCompact,
    ];

    /// The `sol-pi.json` key of this mechanism's on/off flag.
    pub fn config_key(self) -> &'static str {
        match self {
            Mechanism::ActionFusion => "actionFusion",
            Mechanism::ObservationPack => "observationPack",
            Mechanism::EvidencePreservingReducer => "evidencePreservingReducer",
            Mechanism::OnlineContextCompact => "onlineContextCompact",
        }
    }

    /// The name shown to people.
    pub fn label(self) -> &'static str {
        match self {
            Mechanism::ActionFusion => "Action Fusion",
            Mechanism::ObservationPack => "ObservationPack",
            Mechanism::EvidencePreservingReducer => "Evidence-Preserving Reducer",
            Mechanism::OnlineContextCompact => "Online Context Compact",
        }
    }
}

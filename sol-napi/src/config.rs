//! Configuration loading for the extension: the search of `sol-pi.json`,
//! validated by `sol-core` over the native file system, returned as data.

use camino::Utf8Path;
use napi_derive::napi;
use sol_core::{
    ConfigError, ConfigSearch, ConfigSource, FileKind, FileSystem, FsErrorKind, LoadedConfig,
    MAX_CONFIG_BYTES, Mechanism, SolPiConfig, load_config, parse_config,
};

use crate::NativeFileSystem;
use crate::boundary::quiet;

/// Where to look for `sol-pi.json`, as the extension reads it from Pi.
#[napi(object)]
#[derive(Debug, Clone)]
pub struct ConfigRequest {
    /// Pi's working directory (`ctx.cwd`).
    pub cwd: String,
    /// Pi's agent directory (`getAgentDir()`).
    pub agent_dir: String,
    /// `ctx.isProjectTrusted()`: an untrusted project's file is ignored.
    pub project_trusted: bool,
}

/// The effective configuration, every key filled in.
#[napi(object)]
#[derive(Debug, Clone, PartialEq)]
pub struct EffectiveConfig {
    /// Always 1.
    pub version: u32,
    /// Action Fusion on.
    pub action_fusion: bool,
    /// ObservationPack on.
    pub observation_pack: bool,
    /// Evidence-Preserving Reducer on.
    pub evidence_preserving_reducer: bool,
    /// Provider id of the reducer model.
    pub evidence_preserving_reducer_provider: String,
    /// Model id of the reducer model.
    pub evidence_preserving_reducer_model: String,
    /// Online Context Compact on.
    pub online_context_compact: bool,
    /// Price of a cache write relative to a cache read.
    pub cache_write_read_ratio: f64,
    /// The cache-aware policies on (ObservationPack's placement, the reducer's economics).
    pub cache_aware: bool,
    /// ObservationPack's recent-outputs placement: the newest tool outputs kept in full
    /// (`keepRecentOutputs`), when it is on (absent, as in the file's effective JSON, when 0).
    pub keep_recent_outputs: Option<u32>,
    /// The price table of `prices`, when the file sets one (the savings use the default
    /// table otherwise).
    pub prices: Option<crate::savings::SavingsPrices>,
}

impl From<&SolPiConfig> for EffectiveConfig {
    fn from(config: &SolPiConfig) -> Self {
        Self {
            version: config.version,
            action_fusion: config.action_fusion,
            observation_pack: config.observation_pack,
            evidence_preserving_reducer: config.evidence_preserving_reducer,
            evidence_preserving_reducer_provider: config
                .evidence_preserving_reducer_provider
                .clone(),
            evidence_preserving_reducer_model: config.evidence_preserving_reducer_model.clone(),
            online_context_compact: config.online_context_compact,
            cache_write_read_ratio: config.cache_write_read_ratio,
            cache_aware: config.cache_aware,
            keep_recent_outputs: (config.keep_recent_outputs > 0)
                .then_some(config.keep_recent_outputs),
            prices: (config.prices != sol_core::savings::PriceTable::default())
                .then(|| config.prices.into()),
        }
    }
}

/// Why the configuration could not be used.
#[napi(object)]
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigFailure {
    /// Stable code (`unknown_key`, `not_boolean`, ...).
    pub code: String,
    /// The offending key, when one is to blame.
    pub key: Option<String>,
    /// The file that holds the error.
    pub path: String,
    /// The one message shown to the user: names the file and the key.
    pub message: String,
}

/// Which file the configuration came from.
#[napi(string_enum = "camelCase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigOrigin {
    /// The trusted project's `.pi/sol-pi.json`.
    Project,
    /// The agent directory's `sol-pi.json`.
    AgentDir,
}

/// Result of [`load_config_outcome`]: a file's config, the defaults, or why SoL-Pi stops.
#[napi(discriminant = "kind", discriminant_case = "camelCase")]
#[derive(Debug, Clone, PartialEq)]
pub enum LoadConfigOutcome {
    /// A file was found and is valid.
    Loaded {
        /// The effective configuration.
        config: EffectiveConfig,
        /// Which file it came from.
        source: ConfigOrigin,
        /// That file.
        source_path: String,
        /// Config keys of the enabled mechanisms, in registration order.
        enabled: Vec<String>,
        /// The one-line notice for the interactive terminal.
        notice: String,
    },
    /// No file was found: every key has its default.
    Defaults {
        /// The effective configuration.
        config: EffectiveConfig,
        /// Config keys of the enabled mechanisms (none by default).
        enabled: Vec<String>,
        /// The one-line notice for the interactive terminal.
        notice: String,
    },
    /// SoL-Pi stays off for this session: `error.message` is the one message to show.
    Invalid {
        /// What is wrong, and where.
        error: ConfigFailure,
    },
}

impl LoadConfigOutcome {
    /// The effective configuration, when SoL-Pi can start.
    pub fn config(&self) -> Option<&EffectiveConfig> {
        match self {
            LoadConfigOutcome::Loaded { config, .. }
            | LoadConfigOutcome::Defaults { config, .. } => Some(config),
            LoadConfigOutcome::Invalid { .. } => None,
        }
    }
}

/// The message the user sees when a config error stops SoL-Pi.
fn disabled_message(error: &ConfigError) -> String {
    format!(
        "SoL-Pi is disabled for this session: {error}. Fix or remove that file; Pi itself keeps working."
    )
}

/// The message the user sees when loading the config failed inside SoL-Pi itself.
pub fn internal_error_message(reason: &str) -> String {
    format!(
        "SoL-Pi is disabled for this session: internal error while loading its config ({reason}). Pi itself keeps working."
    )
}

fn success(loaded: &LoadedConfig, search: &ConfigSearch<'_>) -> LoadConfigOutcome {
    let config = EffectiveConfig::from(&loaded.config);
    let enabled = loaded
        .config
        .enabled_mechanisms()
        .into_iter()
        .map(|mechanism| mechanism.config_key().to_owned())
        .collect();
    let notice = loaded.startup_notice(search);
    let (source, path) = match &loaded.source {
        ConfigSource::Project(path) => (ConfigOrigin::Project, path),
        ConfigSource::AgentDir(path) => (ConfigOrigin::AgentDir, path),
        ConfigSource::Defaults => {
            return LoadConfigOutcome::Defaults {
                config,
                enabled,
                notice,
            };
        }
    };
    LoadConfigOutcome::Loaded {
        config,
        source,
        source_path: path.to_string(),
        enabled,
        notice,
    }
}

fn failure(error: &ConfigError) -> LoadConfigOutcome {
    LoadConfigOutcome::Invalid {
        error: ConfigFailure {
            code: error.code().to_owned(),
            key: error.key().map(str::to_owned),
            path: error.path().to_string(),
            message: disabled_message(error),
        },
    }
}

/// The outcome when the search itself panicked: SoL-Pi stays off with one message.
fn internal_failure(reason: &str, search: &ConfigSearch<'_>) -> LoadConfigOutcome {
    LoadConfigOutcome::Invalid {
        error: ConfigFailure {
            code: "internal".to_owned(),
            key: None,
            path: search.cwd.to_string(),
            message: internal_error_message(reason),
        },
    }
}

/// The text of a caught panic.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Finds, reads and validates `sol-pi.json` (trusted project, then agent
/// directory, then defaults; never merged). Never throws for what it finds: a panic
/// inside the search is an `invalid` outcome with code `internal`.
#[napi(catch_unwind, js_name = "loadConfig")]
pub fn load_config_outcome(request: ConfigRequest) -> LoadConfigOutcome {
    load_config_with(&request, |search| load_config(&NativeFileSystem, search))
}

/// [`load_config_outcome`] over any search (the tests give one that panics).
pub fn load_config_with(
    request: &ConfigRequest,
    load: impl FnOnce(&ConfigSearch<'_>) -> Result<LoadedConfig, ConfigError>,
) -> LoadConfigOutcome {
    let search = ConfigSearch {
        cwd: Utf8Path::new(&request.cwd),
        agent_dir: Utf8Path::new(&request.agent_dir),
        project_trusted: request.project_trusted,
    };
    quiet(
        || match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| load(&search))) {
            Ok(Ok(loaded)) => success(&loaded, &search),
            Ok(Err(error)) => failure(&error),
            Err(panic) => internal_failure(&panic_text(panic.as_ref()), &search),
        },
    )
}

/// Why one configuration file failed validation, for the preflight check.
#[napi(object)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConfigFileFailure {
    /// Stable code (`unknown_key`, `not_boolean`, ...), as in [`ConfigFailure`].
    pub code: String,
    /// The offending key, when one is to blame.
    pub key: Option<String>,
    /// The error without the path, lower-case (`unknown key: provider`).
    pub detail: String,
    /// The full message, naming the file, as the extension would show it.
    pub message: String,
}

/// Result of [`validate_config_file`].
#[napi(object)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConfigFileOutcome {
    /// True when `config` is set.
    pub ok: bool,
    /// The effective configuration.
    pub config: Option<EffectiveConfig>,
    /// True when every mechanism flag is on.
    pub all_enabled: bool,
    /// Config keys of the mechanisms that are off, in registration order.
    pub disabled: Vec<String>,
    /// Set when `ok` is false.
    pub error: Option<ConfigFileFailure>,
}

/// Reads one named file the way the extension's loader reads a candidate, then validates it.
fn read_and_parse(path: &Utf8Path) -> Result<SolPiConfig, ConfigError> {
    let fs = NativeFileSystem;
    let unreadable = |reason: String| ConfigError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    match fs
        .metadata(path)
        .map_err(|error| unreadable(error.message))?
    {
        None => return Err(unreadable("no such file".to_owned())),
        Some(metadata) => match metadata.kind {
            FileKind::Dir => return Err(unreadable("is a directory".to_owned())),
            FileKind::Other => return Err(unreadable("is not a regular file".to_owned())),
            FileKind::File | FileKind::Symlink => {}
        },
    }
    match fs.read(path, MAX_CONFIG_BYTES) {
        Ok(bytes) => parse_config(&bytes, path),
        Err(error) if error.kind == FsErrorKind::NotFound => {
            Err(unreadable("no such file".to_owned()))
        }
        Err(error) => Err(unreadable(error.message)),
    }
}

/// Validates the configuration file at `path` with the same `sol-core` rules the
/// extension applies to `sol-pi.json` (used by `scripts/check-sol-pi-config.mjs`).
/// Unlike [`load_config_outcome`] there is no search: a missing file is an error.
// Only Node calls this; the napi macro registers it outside test builds.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind, js_name = "validateConfigFile")]
pub(crate) fn validate_config_file(path: String) -> ConfigFileOutcome {
    quiet(|| match read_and_parse(Utf8Path::new(&path)) {
        Ok(config) => {
            let disabled: Vec<String> = Mechanism::ALL
                .into_iter()
                .filter(|mechanism| !config.is_enabled(*mechanism))
                .map(|mechanism| mechanism.config_key().to_owned())
                .collect();
            ConfigFileOutcome {
                ok: true,
                config: Some(EffectiveConfig::from(&config)),
                all_enabled: disabled.is_empty(),
                disabled,
                error: None,
            }
        }
        Err(error) => ConfigFileOutcome {
            ok: false,
            config: None,
            all_enabled: false,
            disabled: Vec::new(),
            error: Some(ConfigFileFailure {
                code: error.code().to_owned(),
                key: error.key().map(str::to_owned),
                detail: error.detail(),
                message: error.to_string(),
            }),
        },
    })
}

/// The warning when one step of a mechanism failed inside SoL-Pi (a Rust panic) and the
/// extension went on without it.
#[napi(catch_unwind)]
pub fn internal_error_notice(mechanism: String, detail: String) -> String {
    quiet(|| {
        format!(
            "SoL-Pi {mechanism}: internal error ({detail}); nothing was changed this time and Pi keeps working."
        )
    })
}

/// The addon's version, compared by the extension with its own to catch a stale build.
// Only Node calls these; the napi macro registers them outside test builds.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub(crate) fn addon_version() -> String {
    quiet(|| env!("CARGO_PKG_VERSION").to_owned())
}

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

/// Result of [`load_config_outcome`]: either a usable config or a failure.
#[napi(object)]
#[derive(Debug, Clone, PartialEq)]
pub struct LoadConfigOutcome {
    /// True when `config` is set.
    pub ok: bool,
    /// The effective configuration.
    pub config: Option<EffectiveConfig>,
    /// `project`, `agentDir` or `defaults`.
    pub source: Option<String>,
    /// The file the config came from (absent for defaults).
    pub source_path: Option<String>,
    /// Config keys of the enabled mechanisms, in registration order.
    pub enabled: Vec<String>,
    /// The one-line notice for the interactive terminal.
    pub notice: Option<String>,
    /// Set when `ok` is false.
    pub error: Option<ConfigFailure>,
}

/// The message the user sees when a config error stops SoL-Pi.
fn disabled_message(error: &ConfigError) -> String {
    format!(
        "SoL-Pi is disabled for this session: {error}. Fix or remove that file; Pi itself keeps working."
    )
}

fn success(loaded: &LoadedConfig, search: &ConfigSearch<'_>) -> LoadConfigOutcome {
    let (source, source_path) = match &loaded.source {
        ConfigSource::Project(path) => ("project", Some(path.to_string())),
        ConfigSource::AgentDir(path) => ("agentDir", Some(path.to_string())),
        ConfigSource::Defaults => ("defaults", None),
    };
    LoadConfigOutcome {
        ok: true,
        config: Some(EffectiveConfig::from(&loaded.config)),
        source: Some(source.to_owned()),
        source_path,
        enabled: loaded
            .config
            .enabled_mechanisms()
            .into_iter()
            .map(|mechanism| mechanism.config_key().to_owned())
            .collect(),
        notice: Some(loaded.startup_notice(search)),
        error: None,
    }
}

fn failure(error: &ConfigError) -> LoadConfigOutcome {
    LoadConfigOutcome {
        ok: false,
        config: None,
        source: None,
        source_path: None,
        enabled: Vec::new(),
        notice: None,
        error: Some(ConfigFailure {
            code: error.code().to_owned(),
            key: error.key().map(str::to_owned),
            path: error.path().to_string(),
            message: disabled_message(error),
        }),
    }
}

/// Finds, reads and validates `sol-pi.json` (trusted project, then agent
/// directory, then defaults; never merged).
#[napi(catch_unwind, js_name = "loadConfig")]
pub fn load_config_outcome(request: ConfigRequest) -> LoadConfigOutcome {
    let search = ConfigSearch {
        cwd: Utf8Path::new(&request.cwd),
        agent_dir: Utf8Path::new(&request.agent_dir),
        project_trusted: request.project_trusted,
    };
    quiet(|| match load_config(&NativeFileSystem, &search) {
        Ok(loaded) => success(&loaded, &search),
        Err(error) => failure(&error),
    })
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

/// The addon's version, compared by the extension with its own to catch a stale build.
// Only Node calls these; the napi macro registers them outside test builds.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind)]
pub(crate) fn addon_version() -> String {
    quiet(|| env!("CARGO_PKG_VERSION").to_owned())
}

/// Panics on purpose, so the tests can prove a Rust panic reaches JavaScript as
/// an error and leaves the process running. Never called by the extension.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind, js_name = "__panicForTests")]
pub(crate) fn panic_for_tests(message: String) {
    quiet(|| panic!("{message}"));
}

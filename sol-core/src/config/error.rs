use camino::{Utf8Path, Utf8PathBuf};

use super::{KEY_CACHE_WRITE_READ_RATIO, KEY_KEEP_RECENT_OUTPUTS, KEY_PRICES, KEY_VERSION};

/// Why a configuration file was rejected. Every variant names the file.
///
/// The `Display` text is the message shown when loading stops; [`ConfigError::detail`] is
/// the same fact without the path, in the lower-case form of the preflight check, and
/// [`ConfigError::code`] is a stable identifier for programs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read, was too large, was not UTF-8 or was not JSON.
    #[error("Unable to read SoL-Pi config {path}: {reason}")]
    Unreadable {
        /// The configuration file.
        path: Utf8PathBuf,
        /// What went wrong, lower-case, without the path.
        reason: String,
    },
    /// The JSON document is not an object (null, an array or a scalar).
    #[error("SoL-Pi config must be a JSON object: {path}")]
    NotAnObject {
        /// The configuration file.
        path: Utf8PathBuf,
    },
    /// The object has a key outside the schema (the first such key in document order).
    #[error("Unknown SoL-Pi config key: {key} (in {path})")]
    UnknownKey {
        /// The configuration file.
        path: Utf8PathBuf,
        /// The unknown key.
        key: String,
    },
    /// A top-level key appears more than once (the first key repeated, in document order).
    /// JSON parsers disagree on which value wins, so neither is guessed.
    #[error("Duplicate SoL-Pi config key: {key} (in {path})")]
    DuplicateKey {
        /// The configuration file.
        path: Utf8PathBuf,
        /// The repeated key.
        key: String,
    },
    /// `version` is missing or not 1.
    #[error("SoL-Pi config version must be 1: {path}")]
    UnsupportedVersion {
        /// The configuration file.
        path: Utf8PathBuf,
    },
    /// A mechanism flag is present but not `true` or `false`.
    #[error("SoL-Pi config {key} must be boolean: {path}")]
    NotBoolean {
        /// The configuration file.
        path: Utf8PathBuf,
        /// The flag's key.
        key: String,
    },
    /// `cacheWriteReadRatio` is present but not a finite number greater than or equal to 0.
    #[error("SoL-Pi config cacheWriteReadRatio must be a finite non-negative number: {path}")]
    InvalidRatio {
        /// The configuration file.
        path: Utf8PathBuf,
    },
    /// `keepRecentOutputs` is present but not `true`, `false` or a whole number from 0 to
    /// [`MAX_KEEP_RECENT_OUTPUTS`](super::MAX_KEEP_RECENT_OUTPUTS).
    #[error(
        "SoL-Pi config keepRecentOutputs must be true, false or a whole number from 0 to 1000: {path}"
    )]
    InvalidKeepRecentOutputs {
        /// The configuration file.
        path: Utf8PathBuf,
    },
    /// The reducer's provider or model is present but not a string, or blank.
    #[error("SoL-Pi config {key} must be a non-empty string: {path}")]
    EmptyString {
        /// The configuration file.
        path: Utf8PathBuf,
        /// `evidencePreservingReducerProvider` or `evidencePreservingReducerModel`.
        key: String,
    },
    /// `prices` is not an object of known prices, each a number of dollars per million
    /// tokens from 0 to 1,000,000.
    #[error("SoL-Pi config prices {reason} (in {path})")]
    InvalidPrices {
        /// The configuration file.
        path: Utf8PathBuf,
        /// What is wrong, lower-case, starting with the verb: `must be an object`, `has an
        /// unknown key: inptu`, `has a duplicate key: input`, `cacheWrite must be a number
        /// from 0 to 1000000`.
        reason: String,
    },
}

impl ConfigError {
    /// The configuration file the error is about.
    pub fn path(&self) -> &Utf8Path {
        match self {
            ConfigError::Unreadable { path, .. }
            | ConfigError::NotAnObject { path }
            | ConfigError::UnknownKey { path, .. }
            | ConfigError::DuplicateKey { path, .. }
            | ConfigError::UnsupportedVersion { path }
            | ConfigError::NotBoolean { path, .. }
            | ConfigError::InvalidRatio { path }
            | ConfigError::InvalidKeepRecentOutputs { path }
            | ConfigError::EmptyString { path, .. }
            | ConfigError::InvalidPrices { path, .. } => path,
        }
    }

    /// The offending key, when the error is about one key.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::UnknownKey { key, .. }
            | ConfigError::DuplicateKey { key, .. }
            | ConfigError::NotBoolean { key, .. }
            | ConfigError::EmptyString { key, .. } => Some(key),
            ConfigError::UnsupportedVersion { .. } => Some(KEY_VERSION),
            ConfigError::InvalidRatio { .. } => Some(KEY_CACHE_WRITE_READ_RATIO),
            ConfigError::InvalidKeepRecentOutputs { .. } => Some(KEY_KEEP_RECENT_OUTPUTS),
            ConfigError::InvalidPrices { .. } => Some(KEY_PRICES),
            ConfigError::Unreadable { .. } | ConfigError::NotAnObject { .. } => None,
        }
    }

    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::Unreadable { .. } => "unreadable",
            ConfigError::NotAnObject { .. } => "not_an_object",
            ConfigError::UnknownKey { .. } => "unknown_key",
            ConfigError::DuplicateKey { .. } => "duplicate_key",
            ConfigError::UnsupportedVersion { .. } => "unsupported_version",
            ConfigError::NotBoolean { .. } => "not_boolean",
            ConfigError::InvalidRatio { .. } => "invalid_ratio",
            ConfigError::InvalidKeepRecentOutputs { .. } => "invalid_keep_recent_outputs",
            ConfigError::EmptyString { .. } => "empty_string",
            ConfigError::InvalidPrices { .. } => "invalid_prices",
        }
    }

    /// The error without the path, in lower case, as a preflight check reports it.
    pub fn detail(&self) -> String {
        match self {
            ConfigError::Unreadable { reason, .. } => format!("unable to read config: {reason}"),
            ConfigError::NotAnObject { .. } => "config must be a JSON object".to_owned(),
            ConfigError::UnknownKey { key, .. } => format!("unknown key: {key}"),
            ConfigError::DuplicateKey { key, .. } => format!("duplicate key: {key}"),
            ConfigError::UnsupportedVersion { .. } => "version must be 1".to_owned(),
            ConfigError::NotBoolean { key, .. } => format!("{key} must be boolean"),
            ConfigError::InvalidRatio { .. } => {
                "cacheWriteReadRatio must be a finite non-negative number".to_owned()
            }
            ConfigError::InvalidKeepRecentOutputs { .. } => {
                "keepRecentOutputs must be true, false or a whole number from 0 to 1000".to_owned()
            }
            ConfigError::EmptyString { key, .. } => format!("{key} must be a non-empty string"),
            ConfigError::InvalidPrices { reason, .. } => format!("prices {reason}"),
        }
    }
}

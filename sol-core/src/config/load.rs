use camino::{Utf8Path, Utf8PathBuf};
use serde::{Serialize, Serializer};

use super::{
    CONFIG_FILE_NAME, ConfigError, MAX_CONFIG_BYTES, PROJECT_CONFIG_DIR, SolPiConfig, parse_config,
};
use crate::ports::{FileKind, FileSystem, FsErrorKind};

/// Where to look for the configuration. The host supplies every input; nothing is read
/// from the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigSearch<'a> {
    /// The session's working directory; the project file is `<cwd>/.pi/sol-pi.json`.
    pub cwd: &'a Utf8Path,
    /// Pi's agent directory (usually `~/.pi/agent`); holds the user-wide `sol-pi.json`.
    pub agent_dir: &'a Utf8Path,
    /// Whether Pi trusts the project. An untrusted project's file is never read, because it
    /// could switch on file mutation, shell commands and remote log reduction.
    pub project_trusted: bool,
}

impl ConfigSearch<'_> {
    /// `<cwd>/.pi`.
    pub fn project_dir(&self) -> Utf8PathBuf {
        self.cwd.join(PROJECT_CONFIG_DIR)
    }

    /// `<cwd>/.pi/sol-pi.json`.
    pub fn project_file(&self) -> Utf8PathBuf {
        self.project_dir().join(CONFIG_FILE_NAME)
    }

    /// `<agent_dir>/sol-pi.json`.
    pub fn agent_file(&self) -> Utf8PathBuf {
        self.agent_dir.join(CONFIG_FILE_NAME)
    }
}

/// Which file the effective configuration came from.
///
/// Serializes as `{"kind":"project","path":"…"}`, `{"kind":"agentDir","path":"…"}` or
/// `{"kind":"defaults"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// The trusted project's `.pi/sol-pi.json`.
    Project(Utf8PathBuf),
    /// The agent directory's `sol-pi.json`.
    AgentDir(Utf8PathBuf),
    /// No file was found; built-in defaults apply.
    Defaults,
}

impl ConfigSource {
    /// The file that was loaded, if any.
    pub fn path(&self) -> Option<&Utf8Path> {
        match self {
            ConfigSource::Project(path) | ConfigSource::AgentDir(path) => Some(path),
            ConfigSource::Defaults => None,
        }
    }

    /// `"project"`, `"agentDir"` or `"defaults"`, as in the serialized form.
    pub fn kind(&self) -> &'static str {
        match self {
            ConfigSource::Project(_) => "project",
            ConfigSource::AgentDir(_) => "agentDir",
            ConfigSource::Defaults => "defaults",
        }
    }
}

impl Serialize for ConfigSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tagged<'a> {
            kind: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            path: Option<&'a Utf8Path>,
        }
        Tagged {
            kind: self.kind(),
            path: self.path(),
        }
        .serialize(serializer)
    }
}

/// The outcome of [`load_config`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadedConfig {
    /// The effective configuration.
    pub config: SolPiConfig,
    /// Where it came from.
    pub source: ConfigSource,
    /// A project file that exists but was not read because the project is not trusted.
    pub ignored_untrusted_project: Option<Utf8PathBuf>,
}

impl LoadedConfig {
    /// One line for the user: which mechanisms are enabled and which file said so.
    ///
    /// `search` must be the search that produced this result; it names the directories that
    /// were searched when no file was found (the project's only when it is trusted).
    pub fn startup_notice(&self, search: &ConfigSearch<'_>) -> String {
        let labels: Vec<&str> = self
            .config
            .enabled_mechanisms()
            .into_iter()
            .map(|mechanism| mechanism.label())
            .collect();
        let active = if labels.is_empty() {
            "no mechanism enabled".to_owned()
        } else {
            format!("{} enabled", labels.join(", "))
        };
        let origin = match &self.source {
            ConfigSource::Project(path) | ConfigSource::AgentDir(path) => {
                format!("config: {path}")
            }
            // An untrusted project's directory is not searched, so it is not named here.
            ConfigSource::Defaults if search.project_trusted => format!(
                "no {CONFIG_FILE_NAME} in {} or {}",
                search.project_dir(),
                search.agent_dir
            ),
            ConfigSource::Defaults => format!("no {CONFIG_FILE_NAME} in {}", search.agent_dir),
        };
        let mut notice = format!("SoL-Pi: {active} ({origin})");
        if let Some(ignored) = &self.ignored_untrusted_project {
            notice.push_str(&format!(
                "; {ignored} ignored because the project is not trusted"
            ));
        }
        notice
    }
}

/// Finds and validates the one effective configuration file.
///
/// Order: `<cwd>/.pi/sol-pi.json` when the project is trusted and the file exists, else
/// `<agent_dir>/sol-pi.json` when it exists, else the defaults. The first file found is
/// the whole configuration: it is never merged with the other one. Existence is decided by
/// [`FileSystem::metadata`]; a symlink is followed when read, and one whose target is
/// missing counts as no file. A directory or other non-file at a candidate path, a file over
/// [`MAX_CONFIG_BYTES`], or any other read failure is [`ConfigError::Unreadable`].
pub fn load_config(
    fs: &dyn FileSystem,
    search: &ConfigSearch<'_>,
) -> Result<LoadedConfig, ConfigError> {
    let project_file = search.project_file();
    let mut ignored_untrusted_project = None;

    if search.project_trusted {
        if let Some(config) = read_candidate(fs, &project_file)? {
            return Ok(LoadedConfig {
                config,
                source: ConfigSource::Project(project_file),
                ignored_untrusted_project,
            });
        }
    } else if let Ok(Some(_)) = fs.metadata(&project_file) {
        // Only its existence is looked at, to tell the user why it had no effect.
        ignored_untrusted_project = Some(project_file);
    }

    let agent_file = search.agent_file();
    if let Some(config) = read_candidate(fs, &agent_file)? {
        return Ok(LoadedConfig {
            config,
            source: ConfigSource::AgentDir(agent_file),
            ignored_untrusted_project,
        });
    }

    Ok(LoadedConfig {
        config: SolPiConfig::default(),
        source: ConfigSource::Defaults,
        ignored_untrusted_project,
    })
}

/// The validated configuration at `path`, or `None` when there is no file there.
fn read_candidate(
    fs: &dyn FileSystem,
    path: &Utf8Path,
) -> Result<Option<SolPiConfig>, ConfigError> {
    let unreadable = |reason: String| ConfigError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    let metadata = fs
        .metadata(path)
        .map_err(|error| unreadable(error.message))?;
    match metadata.map(|metadata| metadata.kind) {
        None => return Ok(None),
        Some(FileKind::Dir) => return Err(unreadable("is a directory".to_owned())),
        Some(FileKind::Other) => return Err(unreadable("is not a regular file".to_owned())),
        Some(FileKind::File | FileKind::Symlink) => {}
    }
    match fs.read(path, MAX_CONFIG_BYTES) {
        Ok(bytes) => parse_config(&bytes, path).map(Some),
        // A dangling symlink, or a file removed since `metadata`: there is no file.
        Err(error) if error.kind == FsErrorKind::NotFound => Ok(None),
        Err(error) => Err(unreadable(error.message)),
    }
}

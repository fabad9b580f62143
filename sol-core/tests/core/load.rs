//! The config search over the in-memory file system.

use camino::{Utf8Path, Utf8PathBuf};
use sol_core::testing::MemoryFileSystem;
use sol_core::{
    ConfigError, ConfigSearch, ConfigSource, FsErrorKind, MAX_CONFIG_BYTES, Mechanism, SolPiConfig,
    load_config,
};

const CWD: &str = "/work/app";
const AGENT_DIR: &str = "/home/u/.pi/agent";
const PROJECT_FILE: &str = "/work/app/.pi/sol-pi.json";
const AGENT_FILE: &str = "/home/u/.pi/agent/sol-pi.json";

fn search(project_trusted: bool) -> ConfigSearch<'static> {
    ConfigSearch {
        cwd: Utf8Path::new(CWD),
        agent_dir: Utf8Path::new(AGENT_DIR),
        project_trusted,
    }
}

#[test]
fn defaults_when_no_file_exists() {
    let fs = MemoryFileSystem::new();
    let loaded = load_config(&fs, &search(true)).expect("defaults");
    assert_eq!(loaded.config, SolPiConfig::default());
    assert_eq!(loaded.source, ConfigSource::Defaults);
    assert_eq!(loaded.ignored_untrusted_project, None);
    assert!(fs.reads().is_empty());
}

#[test]
fn agent_file_is_the_fallback_and_unspecified_keys_keep_defaults() {
    let fs = MemoryFileSystem::new().with_file(
        AGENT_FILE,
        r#"{"version": 1, "observationPack": true, "cacheWriteReadRatio": 2}"#,
    );
    let loaded = load_config(&fs, &search(true)).expect("agent file");
    assert_eq!(loaded.source, ConfigSource::AgentDir(AGENT_FILE.into()));
    assert_eq!(
        loaded.config,
        SolPiConfig {
            observation_pack: true,
            cache_write_read_ratio: 2.0,
            ..SolPiConfig::default()
        }
    );
}

#[test]
fn project_file_replaces_the_agent_file_without_merging() {
    let fs = MemoryFileSystem::new()
        .with_file(
            AGENT_FILE,
            r#"{"version": 1, "actionFusion": true, "observationPack": true,
                "evidencePreservingReducerModel": "global-model", "cacheWriteReadRatio": 1}"#,
        )
        .with_file(PROJECT_FILE, r#"{"version": 1}"#);
    let loaded = load_config(&fs, &search(true)).expect("project file");
    assert_eq!(loaded.source, ConfigSource::Project(PROJECT_FILE.into()));
    assert_eq!(loaded.config, SolPiConfig::default());
    assert_eq!(fs.reads(), vec![Utf8PathBuf::from(PROJECT_FILE)]);
}

#[test]
fn untrusted_project_file_is_never_read() {
    // Were the project file read, its content would be an error.
    let fs = MemoryFileSystem::new()
        .with_file(
            AGENT_FILE,
            r#"{"version": 1, "onlineContextCompact": true}"#,
        )
        .with_file(PROJECT_FILE, "this is not JSON");
    let loaded = load_config(&fs, &search(false)).expect("agent file");
    assert_eq!(loaded.source, ConfigSource::AgentDir(AGENT_FILE.into()));
    assert_eq!(
        loaded.config.enabled_mechanisms(),
        vec![Mechanism::OnlineContextCompact]
    );
    assert_eq!(
        loaded.ignored_untrusted_project,
        Some(Utf8PathBuf::from(PROJECT_FILE))
    );
    assert_eq!(fs.reads(), vec![Utf8PathBuf::from(AGENT_FILE)]);
}

#[test]
fn untrusted_project_without_a_file_reports_nothing_ignored() {
    let fs = MemoryFileSystem::new().with_dir("/work/app/.pi");
    let loaded = load_config(&fs, &search(false)).expect("defaults");
    assert_eq!(loaded.source, ConfigSource::Defaults);
    assert_eq!(loaded.ignored_untrusted_project, None);
}

#[test]
fn untrusted_project_falls_back_to_defaults_and_still_reports_the_file() {
    let fs =
        MemoryFileSystem::new().with_file(PROJECT_FILE, r#"{"version": 1, "actionFusion": true}"#);
    let loaded = load_config(&fs, &search(false)).expect("defaults");
    assert_eq!(loaded.source, ConfigSource::Defaults);
    assert_eq!(loaded.config, SolPiConfig::default());
    assert_eq!(
        loaded.ignored_untrusted_project,
        Some(Utf8PathBuf::from(PROJECT_FILE))
    );
    assert!(fs.reads().is_empty());
}

#[test]
fn invalid_effective_file_is_an_error_even_if_the_other_is_valid() {
    let fs = MemoryFileSystem::new()
        .with_file(AGENT_FILE, r#"{"version": 1}"#)
        .with_file(PROJECT_FILE, r#"{"version": 1, "actionFussion": true}"#);
    let error = load_config(&fs, &search(true)).expect_err("project file is invalid");
    assert_eq!(
        error,
        ConfigError::UnknownKey {
            path: PROJECT_FILE.into(),
            key: "actionFussion".to_owned()
        }
    );
}

#[test]
fn directory_at_a_config_path_is_unreadable() {
    let fs = MemoryFileSystem::new().with_dir(PROJECT_FILE);
    let error = load_config(&fs, &search(true)).expect_err("a directory");
    assert_eq!(
        error,
        ConfigError::Unreadable {
            path: PROJECT_FILE.into(),
            reason: "is a directory".to_owned()
        }
    );

    let fs = MemoryFileSystem::new().with_dir(AGENT_FILE);
    let error = load_config(&fs, &search(true)).expect_err("a directory");
    assert_eq!(error.path(), Utf8Path::new(AGENT_FILE));
    assert_eq!(error.code(), "unreadable");
}

#[test]
fn file_over_one_mebibyte_is_unreadable() {
    let limit = usize::try_from(MAX_CONFIG_BYTES).expect("fits");
    assert_eq!(limit, 1024 * 1024);

    let mut at_limit = br#"{"version": 1}"#.to_vec();
    at_limit.resize(limit, b' ');
    let fs = MemoryFileSystem::new().with_file(AGENT_FILE, at_limit.clone());
    assert!(load_config(&fs, &search(true)).is_ok());

    at_limit.push(b' ');
    let fs = MemoryFileSystem::new().with_file(AGENT_FILE, at_limit);
    let error = load_config(&fs, &search(true)).expect_err("too large");
    assert_eq!(error.code(), "unreadable");
    assert_eq!(
        error.to_string(),
        format!(
            "Unable to read SoL-Pi config {AGENT_FILE}: file is larger than the limit of 1048576 bytes"
        )
    );
}

#[test]
fn other_read_failures_are_unreadable_with_the_file_system_message() {
    let fs = MemoryFileSystem::new()
        .with_file(AGENT_FILE, r#"{"version": 1}"#)
        .with_read_failure(
            AGENT_FILE,
            FsErrorKind::PermissionDenied,
            "permission denied",
        );
    let error = load_config(&fs, &search(true)).expect_err("permission denied");
    assert_eq!(
        error,
        ConfigError::Unreadable {
            path: AGENT_FILE.into(),
            reason: "permission denied".to_owned()
        }
    );
}

#[test]
fn symlinked_config_is_followed_and_a_dangling_one_counts_as_missing() {
    let fs = MemoryFileSystem::new()
        .with_file(
            "/home/u/dotfiles/sol-pi.json",
            r#"{"version": 1, "actionFusion": true}"#,
        )
        .with_symlink(AGENT_FILE, "../../dotfiles/sol-pi.json");
    let loaded = load_config(&fs, &search(true)).expect("through the link");
    assert_eq!(loaded.source, ConfigSource::AgentDir(AGENT_FILE.into()));
    assert!(loaded.config.action_fusion);

    let fs = MemoryFileSystem::new()
        .with_symlink(PROJECT_FILE, "/nowhere/sol-pi.json")
        .with_file(AGENT_FILE, r#"{"version": 1, "observationPack": true}"#);
    let loaded = load_config(&fs, &search(true)).expect("dangling link skipped");
    assert_eq!(loaded.source, ConfigSource::AgentDir(AGENT_FILE.into()));
}

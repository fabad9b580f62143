//! Snapshots of every text a person reads: config errors, startup notices, id errors and
//! port errors.

use camino::{Utf8Path, Utf8PathBuf};
use sol_core::{
    ConfigError, ConfigSearch, ConfigSource, FsError, FsErrorKind, LoadedConfig, ModelError,
    SessionId, SessionStoreError, ShellError, SolPiConfig,
};

fn every_config_error() -> Vec<ConfigError> {
    let path = Utf8PathBuf::from("/home/u/.pi/agent/sol-pi.json");
    vec![
        ConfigError::Unreadable {
            path: path.clone(),
            reason: "invalid JSON: expected value at line 1 column 1".to_owned(),
        },
        ConfigError::NotAnObject { path: path.clone() },
        ConfigError::UnknownKey {
            path: path.clone(),
            key: "actionFussion".to_owned(),
        },
        ConfigError::DuplicateKey {
            path: path.clone(),
            key: "version".to_owned(),
        },
        ConfigError::UnsupportedVersion { path: path.clone() },
        ConfigError::NotBoolean {
            path: path.clone(),
            key: "onlineContextCompact".to_owned(),
        },
        ConfigError::InvalidRatio { path: path.clone() },
        ConfigError::EmptyString {
            path: path.clone(),
            key: "evidencePreservingReducerProvider".to_owned(),
        },
        ConfigError::InvalidPrices {
            path: path.clone(),
            reason: "must be an object".to_owned(),
        },
        ConfigError::InvalidPrices {
            path: path.clone(),
            reason: "has an unknown key: cachewrite".to_owned(),
        },
        ConfigError::InvalidPrices {
            path: path.clone(),
            reason: "has a duplicate key: input".to_owned(),
        },
        ConfigError::InvalidPrices {
            path,
            reason: "cacheWrite must be a number from 0 to 1000000".to_owned(),
        },
    ]
}

#[test]
fn config_error_messages() {
    let text: Vec<String> = every_config_error()
        .iter()
        .map(|error| format!("[{}]\n{error}\n{}\n", error.code(), error.detail()))
        .collect();
    assert_text_snapshot!("config_error_messages", text.join("\n"));
}

#[test]
fn config_error_from_real_parse_failures() {
    let path = Utf8Path::new("/work/app/.pi/sol-pi.json");
    let inputs: [&[u8]; 7] = [
        b"{\"version\": 1,}",
        b"",
        b"\xff{}",
        br#"{"version": 1} x"#,
        // One byte-order mark is skipped; a second one is not JSON.
        b"\xef\xbb\xbf\xef\xbb\xbf{\"version\": 1}",
        br#"{"version": 2, "actionFusion": true, "version": 1}"#,
        b"\xef\xbb\xbf{\"version\": 1, \"actionFusion\": true, \"actionFusion\": false}",
    ];
    let text: Vec<String> = inputs
        .iter()
        .map(|bytes| match sol_core::parse_config(bytes, path) {
            Ok(config) => format!("unexpectedly valid: {config:?}"),
            Err(error) => error.to_string(),
        })
        .collect();
    assert_text_snapshot!("config_unreadable_reasons", text.join("\n"));
}

fn search(project_trusted: bool) -> ConfigSearch<'static> {
    ConfigSearch {
        cwd: Utf8Path::new("/work/app"),
        agent_dir: Utf8Path::new("/home/u/.pi/agent"),
        project_trusted,
    }
}

#[test]
fn startup_notices() {
    let project = ConfigSource::Project("/work/app/.pi/sol-pi.json".into());
    let agent = ConfigSource::AgentDir("/home/u/.pi/agent/sol-pi.json".into());
    let ignored = Some(Utf8PathBuf::from("/work/app/.pi/sol-pi.json"));
    let none = SolPiConfig::default();
    let one = SolPiConfig {
        evidence_preserving_reducer: true,
        ..SolPiConfig::default()
    };
    let two = SolPiConfig {
        action_fusion: true,
        observation_pack: true,
        ..SolPiConfig::default()
    };
    let all = SolPiConfig {
        action_fusion: true,
        observation_pack: true,
        evidence_preserving_reducer: true,
        online_context_compact: true,
        ..SolPiConfig::default()
    };
    let cases = [
        ("project, two", true, two, project.clone(), None),
        ("project, none", true, none.clone(), project, None),
        ("agent dir, one", true, one, agent.clone(), None),
        ("agent dir, all", true, all.clone(), agent.clone(), None),
        (
            "agent dir, untrusted project ignored",
            false,
            all,
            agent,
            ignored.clone(),
        ),
        ("defaults", true, none.clone(), ConfigSource::Defaults, None),
        (
            "defaults, untrusted project without a file",
            false,
            none.clone(),
            ConfigSource::Defaults,
            None,
        ),
        (
            "defaults, untrusted project ignored",
            false,
            none,
            ConfigSource::Defaults,
            ignored,
        ),
    ];
    let text: Vec<String> = cases
        .into_iter()
        .map(
            |(name, trusted, config, source, ignored_untrusted_project)| {
                let loaded = LoadedConfig {
                    config,
                    source,
                    ignored_untrusted_project,
                };
                let notice = loaded.startup_notice(&search(trusted));
                assert!(!notice.contains('\n'), "one line: {notice}");
                format!("{name}:\n{notice}\n")
            },
        )
        .collect();
    assert_text_snapshot!("startup_notices", text.join("\n"));
}

#[test]
fn session_id_errors() {
    let long = "x".repeat(100) + "/";
    let inputs = [
        "",
        "../etc",
        ".hidden",
        "with space",
        "quote\"and\nnewline",
        "é",
        &long,
    ];
    let text: Vec<String> = inputs
        .iter()
        .map(|id| {
            SessionId::parse(id)
                .map(|id| format!("unexpectedly safe: {id}"))
                .unwrap_or_else(|error| error.to_string())
        })
        .collect();
    assert_text_snapshot!("session_id_errors", text.join("\n"));
}

#[test]
fn port_error_messages() {
    let texts = [
        FsError::new(
            FsErrorKind::TooLarge,
            "/s/obj.txt",
            "file is larger than the limit of 16 bytes",
        )
        .to_string(),
        SessionStoreError::NoSession.to_string(),
        SessionStoreError::Failed {
            message: "disk full".to_owned(),
        }
        .to_string(),
        ShellError::Unavailable {
            message: "no shell found".to_owned(),
        }
        .to_string(),
        ShellError::Failed {
            message: "spawn failed".to_owned(),
        }
        .to_string(),
        ModelError::Unavailable {
            provider: "openai-codex".to_owned(),
            model: "gpt-5.6-luna".to_owned(),
        }
        .to_string(),
        ModelError::TimedOut {
            after: std::time::Duration::from_secs(90),
        }
        .to_string(),
        ModelError::Aborted.to_string(),
        ModelError::Failed {
            message: "HTTP 500".to_owned(),
        }
        .to_string(),
    ];
    assert_text_snapshot!("port_error_messages", texts.join("\n"));
}

//! Throw-away directories and small helpers shared by the modules.

use camino::Utf8Path;

pub(crate) use sol_testkit::Sandbox;

/// Permission bits of what is at `path`, without following a final symlink.
#[cfg(unix)]
pub(crate) fn mode(path: &Utf8Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o7777
}

/// A regular expression that matches `text` literally, for insta's filters.
pub(crate) fn literal_pattern(text: impl AsRef<str>) -> String {
    let mut pattern = String::new();
    for c in text.as_ref().chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// Runs `operation` on another thread and returns what it gave, or `None` when it is still
/// blocked after a few seconds (it is then left behind; the test fails anyway).
pub(crate) fn without_blocking<T: Send + 'static>(
    operation: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(operation());
    });
    receive.recv_timeout(std::time::Duration::from_secs(5)).ok()
}

/// A `LoadConfigOutcome` with its variants' fields side by side, for assertions that read
/// one field at a time.
#[derive(Debug)]
pub(crate) struct FlatOutcome {
    pub ok: bool,
    pub config: Option<sol_napi::EffectiveConfig>,
    pub source: Option<String>,
    pub source_path: Option<String>,
    pub enabled: Vec<String>,
    pub notice: Option<String>,
    pub error: Option<sol_napi::ConfigFailure>,
}

/// Loads through `load_config_outcome` and flattens the outcome.
pub(crate) fn load_flat(request: sol_napi::ConfigRequest) -> FlatOutcome {
    use sol_napi::{ConfigOrigin, LoadConfigOutcome};
    match sol_napi::load_config_outcome(request) {
        LoadConfigOutcome::Loaded {
            config,
            source,
            source_path,
            enabled,
            notice,
        } => FlatOutcome {
            ok: true,
            config: Some(config),
            source: Some(
                match source {
                    ConfigOrigin::Project => "project",
                    ConfigOrigin::AgentDir => "agentDir",
                }
                .to_owned(),
            ),
            source_path: Some(source_path),
            enabled,
            notice: Some(notice),
            error: None,
        },
        LoadConfigOutcome::Defaults {
            config,
            enabled,
            notice,
        } => FlatOutcome {
            ok: true,
            config: Some(config),
            source: Some("defaults".to_owned()),
            source_path: None,
            enabled,
            notice: Some(notice),
            error: None,
        },
        LoadConfigOutcome::Invalid { error } => FlatOutcome {
            ok: false,
            config: None,
            source: None,
            source_path: None,
            enabled: Vec::new(),
            notice: None,
            error: Some(error),
        },
    }
}

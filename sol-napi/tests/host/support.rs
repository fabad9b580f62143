//! Throw-away directories and small helpers shared by the modules.

pub(crate) use sol_testkit::Sandbox;

#[cfg(unix)]
pub(crate) use sol_testkit::mode;
pub(crate) use sol_testkit::{literal_pattern, without_blocking};

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

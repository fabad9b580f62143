//! `load_config_outcome` over the real file system: which file wins, what is ignored, and
//! what crosses to JavaScript when a file is broken.

use camino::Utf8Path;
use serde_json::Value;
use sol_napi::{ConfigRequest, EffectiveConfig};

use crate::support::{FlatOutcome, Sandbox, load_flat, without_blocking};

/// A project at `<sandbox>/project` and an agent directory at `<sandbox>/agent`.
struct Layout {
    sandbox: Sandbox,
}

impl Layout {
    fn new() -> Self {
        let sandbox = Sandbox::new();
        sandbox.mkdir("project");
        sandbox.mkdir("agent");
        Layout { sandbox }
    }

    fn project_file(&self, text: impl AsRef<[u8]>) -> String {
        self.sandbox
            .write("project/.pi/sol-pi.json", text)
            .to_string()
    }

    fn agent_file(&self, text: impl AsRef<[u8]>) -> String {
        self.sandbox.write("agent/sol-pi.json", text).to_string()
    }

    fn load(&self, project_trusted: bool) -> FlatOutcome {
        load_flat(ConfigRequest {
            cwd: self.sandbox.path("project").to_string(),
            agent_dir: self.sandbox.path("agent").to_string(),
            project_trusted,
        })
    }
}

fn config(outcome: &FlatOutcome) -> &EffectiveConfig {
    assert!(outcome.ok, "expected a config: {:?}", outcome.error);
    assert_eq!(outcome.error, None);
    outcome.config.as_ref().expect("ok outcomes carry a config")
}

fn defaults() -> EffectiveConfig {
    EffectiveConfig {
        version: 1,
        action_fusion: false,
        observation_pack: false,
        evidence_preserving_reducer: false,
        evidence_preserving_reducer_provider: "openai-codex".to_owned(),
        evidence_preserving_reducer_model: "gpt-5.6-luna".to_owned(),
        online_context_compact: false,
        cache_write_read_ratio: 12.5,
        cache_aware: false,
        keep_recent_outputs: None,
        prices: None,
    }
}

#[test]
fn trusted_project_file_wins_and_is_not_merged() {
    let layout = Layout::new();
    let project = layout.project_file(r#"{"version": 1, "observationPack": true}"#);
    layout.agent_file(r#"{"version": 1, "actionFusion": true, "cacheWriteReadRatio": 2}"#);
    let outcome = layout.load(true);
    let effective = config(&outcome);
    assert_eq!(outcome.source.as_deref(), Some("project"));
    assert_eq!(outcome.source_path.as_deref(), Some(project.as_str()));
    assert_eq!(outcome.enabled, ["observationPack"]);
    // Keys the project file leaves out take the defaults, not the agent file's values.
    assert_eq!(
        *effective,
        EffectiveConfig {
            observation_pack: true,
            ..defaults()
        }
    );
    let notice = outcome.notice.as_deref().expect("notice");
    assert!(notice.contains(&project), "{notice}");
    assert!(!notice.contains("ignored"), "{notice}");
}

#[test]
fn untrusted_project_file_is_ignored_and_named_in_the_notice() {
    let layout = Layout::new();
    // Broken on purpose: reading it would fail the load.
    let project = layout.project_file("{ not json");
    let agent = layout.agent_file(r#"{"version": 1, "actionFusion": true}"#);
    let outcome = layout.load(false);
    config(&outcome);
    assert_eq!(outcome.source.as_deref(), Some("agentDir"));
    assert_eq!(outcome.source_path.as_deref(), Some(agent.as_str()));
    assert_eq!(outcome.enabled, ["actionFusion"]);
    let notice = outcome.notice.as_deref().expect("notice");
    assert!(
        notice.contains(&format!(
            "{project} ignored because the project is not trusted"
        )),
        "{notice}"
    );
}

#[test]
fn untrusted_project_without_agent_file_falls_back_to_defaults() {
    let layout = Layout::new();
    let project = layout.project_file(r#"{"version": 1, "actionFusion": true}"#);
    let outcome = layout.load(false);
    assert_eq!(*config(&outcome), defaults());
    assert_eq!(outcome.source.as_deref(), Some("defaults"));
    assert_eq!(outcome.enabled, Vec::<String>::new());
    let notice = outcome.notice.as_deref().expect("notice");
    assert!(notice.contains(&format!("{project} ignored")), "{notice}");
}

#[test]
fn agent_dir_file_is_the_fallback_of_a_trusted_project() {
    let layout = Layout::new();
    let agent = layout.agent_file(
        r#"{"version": 1, "evidencePreservingReducer": true,
            "evidencePreservingReducerModel": "  small-model  ", "cacheWriteReadRatio": 3.25}"#,
    );
    let outcome = layout.load(true);
    let effective = config(&outcome);
    assert_eq!(outcome.source.as_deref(), Some("agentDir"));
    assert_eq!(outcome.source_path.as_deref(), Some(agent.as_str()));
    assert_eq!(outcome.enabled, ["evidencePreservingReducer"]);
    assert_eq!(
        *effective,
        EffectiveConfig {
            evidence_preserving_reducer: true,
            evidence_preserving_reducer_model: "small-model".to_owned(),
            cache_write_read_ratio: 3.25,
            ..defaults()
        }
    );
}

#[test]
fn no_file_gives_the_defaults() {
    let layout = Layout::new();
    for trusted in [true, false] {
        let outcome = layout.load(trusted);
        assert_eq!(*config(&outcome), defaults());
        assert_eq!(outcome.source.as_deref(), Some("defaults"));
        assert_eq!(outcome.source_path, None);
        assert_eq!(outcome.enabled, Vec::<String>::new());
        let notice = outcome.notice.as_deref().expect("notice");
        assert!(notice.contains("no mechanism enabled"), "{notice}");
        assert!(
            notice.contains(layout.sandbox.path("agent").as_str()),
            "{notice}"
        );
    }
}

#[test]
fn missing_directories_give_the_defaults() {
    let sandbox = Sandbox::new();
    let outcome = load_flat(ConfigRequest {
        cwd: sandbox.path("no/such/project").to_string(),
        agent_dir: sandbox.path("no/such/agent").to_string(),
        project_trusted: true,
    });
    assert_eq!(*config(&outcome), defaults());
    assert_eq!(outcome.source.as_deref(), Some("defaults"));
}

#[test]
fn a_broken_file_is_reported_with_code_key_and_path() {
    let layout = Layout::new();
    let agent = layout.agent_file(r#"{"version": 1, "onlineContextCompact": "yes"}"#);
    let outcome = layout.load(true);
    assert!(!outcome.ok);
    assert_eq!(outcome.config, None);
    assert_eq!(outcome.source, None);
    assert_eq!(outcome.source_path, None);
    assert_eq!(outcome.notice, None);
    assert_eq!(outcome.enabled, Vec::<String>::new());
    let error = outcome.error.expect("error");
    assert_eq!(error.code, "not_boolean");
    assert_eq!(error.key.as_deref(), Some("onlineContextCompact"));
    assert_eq!(error.path, agent);
    assert!(error.message.contains(&agent), "{}", error.message);
    assert!(
        error.message.contains("onlineContextCompact"),
        "{}",
        error.message
    );
}

#[test]
fn a_broken_trusted_project_file_is_not_skipped_for_the_agent_file() {
    let layout = Layout::new();
    let project = layout.project_file(r#"{"version": 2}"#);
    layout.agent_file(r#"{"version": 1, "actionFusion": true}"#);
    let outcome = layout.load(true);
    let error = outcome.error.expect("error");
    assert_eq!(error.code, "unsupported_version");
    assert_eq!(error.key.as_deref(), Some("version"));
    assert_eq!(error.path, project);
}

#[test]
fn a_directory_or_an_oversized_file_is_unreadable() {
    let layout = Layout::new();
    layout.sandbox.mkdir("agent/sol-pi.json");
    let error = layout.load(true).error.expect("a directory");
    assert_eq!(error.code, "unreadable");
    assert_eq!(error.key, None);
    assert!(
        error.message.contains("is a directory"),
        "{}",
        error.message
    );

    let layout = Layout::new();
    let mut huge = b"{\"version\": 1}".to_vec();
    huge.resize(1024 * 1024 + 1, b' ');
    layout.agent_file(&huge);
    let error = layout.load(true).error.expect("too large");
    assert_eq!(error.code, "unreadable");
    assert!(error.message.contains("1048576"), "{}", error.message);
}

#[test]
fn enabled_mechanisms_come_in_registration_order() {
    let layout = Layout::new();
    // Keys in reverse order: the list follows registration order, not the document.
    layout.agent_file(
        r#"{"onlineContextCompact": true, "evidencePreservingReducer": true,
            "observationPack": true, "actionFusion": true, "version": 1}"#,
    );
    let outcome = layout.load(true);
    config(&outcome);
    assert_eq!(
        outcome.enabled,
        [
            "actionFusion",
            "observationPack",
            "evidencePreservingReducer",
            "onlineContextCompact"
        ]
    );

    layout.agent_file(r#"{"version": 1, "onlineContextCompact": true, "actionFusion": true}"#);
    assert_eq!(
        layout.load(true).enabled,
        ["actionFusion", "onlineContextCompact"]
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_config_is_followed_and_a_dangling_one_is_no_file() {
    let layout = Layout::new();
    layout.sandbox.write(
        "dotfiles/sol-pi.json",
        r#"{"version": 1, "observationPack": true}"#,
    );
    let link = layout
        .sandbox
        .symlink("agent/sol-pi.json", "../dotfiles/sol-pi.json");
    let outcome = layout.load(true);
    assert_eq!(outcome.enabled, ["observationPack"]);
    assert_eq!(outcome.source_path.as_deref(), Some(link.as_str()));

    let layout = Layout::new();
    layout.sandbox.symlink("project/.pi/sol-pi.json", "nowhere");
    layout.agent_file(r#"{"version": 1, "actionFusion": true}"#);
    let outcome = layout.load(true);
    assert_eq!(outcome.source.as_deref(), Some("agentDir"));
    assert_eq!(outcome.enabled, ["actionFusion"]);
}

/// A config link to a FIFO passes the metadata check (it is a link); reading must refuse it
/// instead of waiting for a writer, which would freeze Pi at startup.
#[cfg(unix)]
#[test]
fn a_config_linked_to_a_fifo_is_unreadable_without_blocking() {
    let layout = Layout::new();
    if layout.sandbox.fifo("pipe").is_none() {
        return;
    }
    layout.sandbox.symlink("agent/sol-pi.json", "../pipe");
    let outcome = without_blocking(move || layout.load(true)).expect("loading returned");
    let error = outcome.error.expect("unreadable");
    assert_eq!(error.code, "unreadable");
    assert!(
        error.message.contains("not a regular file"),
        "{}",
        error.message
    );
}

/// The shared cases under `fixtures/config/`, loaded from a real agent directory: the
/// napi outcome carries the same result as `sol_core::parse_config`.
#[test]
fn every_config_fixture_loads_through_the_addon() {
    let root = Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/config");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .expect("fixtures/config exists")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 20, "only {} fixtures", cases.len());
    for case in cases {
        let name = case
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(case.join("sol-pi.json")).expect("sol-pi.json");
        let expected: Value = serde_json::from_slice(
            &std::fs::read(case.join("expected.json")).expect("expected.json"),
        )
        .expect("expected.json is JSON");
        let layout = Layout::new();
        let path = layout.agent_file(&bytes);
        let outcome = layout.load(true);
        assert_eq!(Some(outcome.ok), expected["ok"].as_bool(), "{name}");
        if outcome.ok {
            let effective = config(&outcome);
            let want = &expected["config"];
            let mut actual = serde_json::json!({
                "version": effective.version,
                "actionFusion": effective.action_fusion,
                "observationPack": effective.observation_pack,
                "evidencePreservingReducer": effective.evidence_preserving_reducer,
                "evidencePreservingReducerProvider": effective.evidence_preserving_reducer_provider,
                "evidencePreservingReducerModel": effective.evidence_preserving_reducer_model,
                "onlineContextCompact": effective.online_context_compact,
                "cacheWriteReadRatio": effective.cache_write_read_ratio,
                "cacheAware": effective.cache_aware,
            });
            // keepRecentOutputs is there only when it is on, the price table only when the
            // file sets one.
            if let Some(keep) = effective.keep_recent_outputs {
                actual["keepRecentOutputs"] = serde_json::json!(keep);
            }
            if let Some(prices) = effective.prices {
                actual["prices"] = serde_json::json!({
                    "input": prices.input,
                    "cacheRead": prices.cache_read,
                    "cacheWrite": prices.cache_write,
                    "output": prices.output,
                });
            }
            assert_eq!(
                actual.as_object().map(|o| o.len()),
                want.as_object().map(|o| o.len()),
                "{name}"
            );
            for (key, value) in want.as_object().expect("config object") {
                let got = &actual[key];
                assert!(
                    same_value(got, value),
                    "{name}: {key} is {got}, expected {value}"
                );
            }
        } else {
            let error = outcome.error.expect("error");
            assert_eq!(
                Some(error.code.as_str()),
                expected["code"].as_str(),
                "{name}"
            );
            assert_eq!(error.key.as_deref(), expected["key"].as_str(), "{name}");
            assert_eq!(error.path, path, "{name}");
            assert!(error.message.contains(&path), "{name}: {}", error.message);
        }
    }
}

/// JSON values equal as configuration values: numbers by value (`10` is `10.0`), objects
/// key by key.
fn same_value(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && b.iter()
                    .all(|(key, value)| a.get(key).is_some_and(|got| same_value(got, value)))
        }
        _ => got == want,
    }
}

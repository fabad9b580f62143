//! Snapshots of what a person reads from `load_config_outcome`: the message that disables
//! SoL-Pi for each config error code, and the startup notices. Temporary paths read `[TMP]`.

use sol_napi::ConfigRequest;

use crate::support::{FlatOutcome, Sandbox, literal_pattern, load_flat};

/// Loads with the project at `<case>/project` and the agent directory at `<case>/agent`,
/// after writing the given files (relative to `<case>`).
fn load(sandbox: &Sandbox, case: &str, files: &[(&str, &str)], trusted: bool) -> FlatOutcome {
    sandbox.mkdir(&format!("{case}/project"));
    sandbox.mkdir(&format!("{case}/agent"));
    for (path, text) in files {
        sandbox.write(&format!("{case}/{path}"), text);
    }
    load_flat(ConfigRequest {
        cwd: sandbox.path(&format!("{case}/project")).to_string(),
        agent_dir: sandbox.path(&format!("{case}/agent")).to_string(),
        project_trusted: trusted,
    })
}

const AGENT: &str = "agent/sol-pi.json";
const PROJECT: &str = "project/.pi/sol-pi.json";

/// One broken file per error code, in the order of `ConfigError`'s variants.
const BROKEN: [(&str, &str, &str); 8] = [
    ("unreadable", AGENT, r#"{"version": 1,}"#),
    ("not_an_object", AGENT, "[1, 2]"),
    (
        "unknown_key",
        PROJECT,
        r#"{"version": 1, "actionFussion": true}"#,
    ),
    ("unsupported_version", AGENT, r#"{"version": 2}"#),
    (
        "not_boolean",
        PROJECT,
        r#"{"version": 1, "onlineContextCompact": "yes"}"#,
    ),
    (
        "invalid_ratio",
        AGENT,
        r#"{"version": 1, "cacheWriteReadRatio": -1}"#,
    ),
    (
        "invalid_keep_recent_outputs",
        PROJECT,
        r#"{"version": 1, "observationPack": true, "keepRecentOutputs": 2.5}"#,
    ),
    (
        "empty_string",
        AGENT,
        r#"{"version": 1, "evidencePreservingReducerProvider": "   "}"#,
    ),
];

#[test]
fn config_error_messages() {
    let sandbox = Sandbox::new();
    let mut text = Vec::new();
    for (code, file, contents) in BROKEN {
        let outcome = load(&sandbox, code, &[(file, contents)], true);
        let error = outcome
            .error
            .unwrap_or_else(|| panic!("{code}: expected an error"));
        assert_eq!(error.code, code);
        assert_eq!(error.path, sandbox.path(&format!("{code}/{file}")).as_str());
        text.push(format!(
            "[{}] key: {}\n{}\n",
            error.code,
            error.key.as_deref().unwrap_or("-"),
            error.message
        ));
    }
    assert_text_snapshot!("config_error_messages", text.join("\n"), literal_pattern(sandbox.root()) => "[TMP]");
}

#[test]
fn unreadable_config_messages() {
    let sandbox = Sandbox::new();
    let mut text = Vec::new();
    let cases: [(&str, &[u8]); 3] = [
        ("empty", b""),
        ("not-utf8", b"{\"version\": 1, \"x\": \"\xff\"}"),
        ("trailing", br#"{"version": 1} x"#),
    ];
    for (case, bytes) in cases {
        let path = sandbox.write(&format!("{case}/agent/sol-pi.json"), bytes);
        let outcome = load(&sandbox, case, &[], true);
        let error = outcome.error.expect("unreadable");
        assert_eq!(error.code, "unreadable");
        assert_eq!(error.path, path.as_str());
        text.push(error.message);
    }
    sandbox.mkdir("directory/agent/sol-pi.json");
    let outcome = load(&sandbox, "directory", &[], true);
    text.push(outcome.error.expect("a directory").message);
    assert_text_snapshot!(
        "config_unreadable_messages",
        text.join("\n"),
        literal_pattern(sandbox.root()) => "[TMP]"
    );
}

#[test]
fn startup_notices() {
    let sandbox = Sandbox::new();
    const TWO: &str = r#"{"version": 1, "onlineContextCompact": true, "actionFusion": true}"#;
    const ONE: &str = r#"{"version": 1, "observationPack": true}"#;
    /// Files written, relative to the case's folder: (path, contents).
    type Files = &'static [(&'static str, &'static str)];
    let cases: [(&str, Files, bool); 5] = [
        ("defaults-trusted", &[], true),
        ("defaults-untrusted", &[], false),
        ("project-two-mechanisms", &[(PROJECT, TWO)], true),
        ("untrusted-ignored", &[(PROJECT, TWO), (AGENT, ONE)], false),
        ("untrusted-ignored-defaults", &[(PROJECT, TWO)], false),
    ];
    let mut text = Vec::new();
    for (case, files, trusted) in cases {
        let outcome = load(&sandbox, case, files, trusted);
        let notice = outcome
            .notice
            .unwrap_or_else(|| panic!("{case}: expected a notice"));
        text.push(format!("{case}:\n{notice}\n"));
    }
    assert_text_snapshot!("startup_notices", text.join("\n"), literal_pattern(sandbox.root()) => "[TMP]");
}

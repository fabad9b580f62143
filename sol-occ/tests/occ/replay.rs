//! The replay of recorded sessions (`fixtures/occ/`).

use serde_json::{Value, json};
use sol_occ::replay::{
    ReplayConfig, ReplayError, active_branch, parse_session_jsonl, replay_session,
    replay_session_jsonl,
};

/// The recorded sessions with their context window, from `fixtures/occ/sessions.json`.
fn fixtures() -> Vec<(String, String, u64, u64)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/occ");
    #[allow(clippy::disallowed_methods)] // Test fixtures are read from disk.
    let read = |name: &str| std::fs::read_to_string(format!("{dir}/{name}")).expect("fixture");
    let manifest: Vec<Value> = serde_json::from_str(&read("sessions.json")).expect("manifest");
    manifest
        .iter()
        .map(|session| {
            let file = session["file"].as_str().expect("file").to_owned();
            let text = read(&file);
            let window = session["contextWindow"].as_u64().expect("window");
            let system = session["systemPromptTokens"]
                .as_u64()
                .expect("system prompt");
            (file, text, window, system)
        })
        .collect()
}

#[test]
fn every_fixture_replays_with_boundaries_and_savings() {
    let fixtures = fixtures();
    assert_eq!(fixtures.len(), 3);
    for (file, text, window, system) in &fixtures {
        let config = ReplayConfig::new(12.5, *window, *system);
        let report = replay_session_jsonl(text, &config).expect("replayable");
        assert!(report.requests >= 50, "{file}: {}", report.requests);
        assert!(
            report.uncompacted_peak_tokens > window - config.reserve_tokens,
            "{file} overflows without compaction"
        );
        let occ = &report.occ;
        assert!(occ.boundary_compactions >= 1, "{file}: {occ:?}");
        assert!(
            occ.peak_context_tokens <= *window,
            "{file}: {}",
            occ.peak_context_tokens
        );
        assert!(report.threshold_only.peak_context_tokens <= *window);
        assert_eq!(
            occ.compactions,
            occ.boundary_compactions + occ.threshold_compactions
        );
        assert!(occ.net_saved > 0.0, "{file}: {}", occ.net_saved);
        assert!(occ.boundary_outcomes.values().sum::<u64>() >= occ.boundary_compactions);
    }
}

#[test]
fn higher_ratios_select_no_more_boundary_compactions_on_the_fixtures() {
    for (file, text, window, system) in fixtures() {
        let counts: Vec<u64> = [1.25, 10.0, 12.5, 20.0]
            .iter()
            .map(|&ratio| {
                let config = ReplayConfig::new(ratio, window, system);
                replay_session_jsonl(&text, &config)
                    .expect("replayable")
                    .occ
                    .boundary_compactions
            })
            .collect();
        assert!(
            counts.windows(2).all(|pair| pair[0] >= pair[1]),
            "{file}: {counts:?}"
        );
    }
}

#[test]
fn a_restated_plan_under_new_ids_never_compacts() {
    let (_, text, window, system) = fixtures()
        .into_iter()
        .find(|(file, ..)| file.starts_with("two-tasks"))
        .expect("the two-task fixture");
    // At ratio 0 every economic boundary compacts: 6 + 4 completed steps, minus the first
    // steps whose history is too small; the restatement adds none.
    let config = ReplayConfig::new(0.0, window, system);
    let report = replay_session_jsonl(&text, &config).expect("replayable");
    let evaluated: u64 = report.occ.boundary_outcomes.values().sum();
    assert_eq!(evaluated, 10, "{:?}", report.occ.boundary_outcomes);
}

#[test]
fn the_active_branch_follows_parent_ids() {
    let entries = vec![
        json!({"type": "session", "id": "header"}),
        json!({"type": "message", "id": "a", "parentId": null, "message": {"role": "user", "content": "1", "timestamp": 1}}),
        json!({"type": "message", "id": "b", "parentId": "a", "message": {"role": "assistant", "content": [], "timestamp": 2}}),
        json!({"type": "message", "id": "abandoned", "parentId": "a", "message": {"role": "user", "content": "x", "timestamp": 3}}),
        json!({"type": "message", "id": "c", "parentId": "b", "message": {"role": "user", "content": "2", "timestamp": 4}}),
    ];
    let branch = active_branch(&entries);
    let ids: Vec<&str> = branch.iter().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    let config = ReplayConfig::new(12.5, 200_000, 0);
    let report = replay_session(&entries, &config).expect("replayable");
    assert_eq!(report.requests, 1);
    assert_eq!(report.occ.compactions, 0);
}

#[test]
fn unreadable_sessions_are_errors() {
    assert_eq!(
        parse_session_jsonl("{}\nnot json\n")
            .expect_err("bad line")
            .code(),
        "invalid_session_json"
    );
    let config = ReplayConfig::new(12.5, 200_000, 0);
    assert_eq!(
        replay_session(&[json!({"type": "session"})], &config),
        Err(ReplayError::NoMessages)
    );
}

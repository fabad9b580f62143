//! The replay of the real recorded sessions in `fixtures/sessions/corpus/`: one snapshot of
//! the report per file, and, for every file recorded with SoL-Pi, the replayed
//! ObservationPack and Online Context Compact figures against the totals the live
//! extension wrote into the same file.

use serde_json::Value;
use sol_core::Mechanism;
use sol_core::savings::{PriceTable, layer_of};
use sol_replay::reader::read_session;
use sol_replay::render::{Format, render};
use sol_replay::replay::{Policy, ReplayOptions, SessionReplay, replay_session};

use crate::support::removal;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/sessions/corpus");

#[allow(clippy::disallowed_methods)] // Test fixtures are read from disk.
fn corpus_bytes(name: &str) -> Vec<u8> {
    std::fs::read(format!("{CORPUS}/{name}")).expect("corpus file")
}

/// The corpus manifest's rows: file name and whether SoL-Pi was loaded.
fn corpus_files() -> Vec<(String, bool)> {
    let manifest: Value =
        serde_json::from_slice(&corpus_bytes("manifest.json")).expect("manifest JSON");
    let files = manifest["files"].as_array().expect("files");
    assert!(files.len() >= 6, "the corpus has at least six sessions");
    files
        .iter()
        .map(|row| {
            (
                row["file"].as_str().expect("file").to_owned(),
                row["solPi"].as_bool().expect("solPi"),
            )
        })
        .collect()
}

fn replay(name: &str, options: &ReplayOptions) -> SessionReplay {
    let bytes = corpus_bytes(name);
    let session = read_session(
        &format!("fixtures/sessions/corpus/{name}"),
        bytes.as_slice(),
    )
    .expect("a corpus session reads");
    replay_session(&session, options)
}

fn all_branches() -> ReplayOptions {
    ReplayOptions {
        all_branches: true,
        ..ReplayOptions::default()
    }
}

/// As the live extension books a session: every request from Pi's estimate, every model at
/// one price table (the faux provider's models have no prices).
fn as_live(options: ReplayOptions) -> ReplayOptions {
    ReplayOptions {
        from_reports: false,
        per_model_prices: false,
        ..options
    }
}

#[test]
fn every_corpus_session_has_its_report() {
    for (name, _) in corpus_files() {
        let options = all_branches();
        let text = render(&[replay(&name, &options)], &options, Format::Text);
        let stem = name.trim_end_matches(".jsonl");
        assert_text_snapshot!(format!("corpus_{stem}"), text);
    }
}

#[test]
fn the_replayed_observation_pack_and_occ_rows_are_what_the_live_extension_recorded() {
    let prices = PriceTable::default();
    let mut compared = 0;
    for (name, sol_pi) in corpus_files() {
        let replayed = replay(&name, &as_live(all_branches()));
        for branch in &replayed.branches {
            let Some(recorded) = &branch.recorded else {
                assert!(
                    !sol_pi,
                    "{name}: a SoL-Pi session has totals on every branch"
                );
                continue;
            };
            assert!(
                sol_pi,
                "{name}: totals in a session recorded without SoL-Pi"
            );
            let live = recorded.report(&prices);
            let again = branch.sol_pi.report(&prices);
            // The recordings' totals were written before the live book left SoL-Pi's own turns
            // out of plain Pi's side (issue 26): the steps and the requests as sent are the
            // same; the layers below each mechanism have its own turns now, in replay.
            for mechanism in [Mechanism::ObservationPack, Mechanism::OnlineContextCompact] {
                assert_eq!(
                    removal(again.row(mechanism).account),
                    removal(live.row(mechanism).account),
                    "{name}, branch {}: {mechanism:?}",
                    branch.leaf
                );
            }
            // Requests and output (a 0.84.2 file lacks the system prompt the live book counted).
            assert_eq!(
                (again.sent.requests, again.sent.output),
                (live.sent.requests, live.sent.output),
                "{name}: the requests as sent"
            );
            // Fusion's turns and the provider's reports too; the requests and their outputs.
            let fusion = Mechanism::ActionFusion;
            assert_eq!(
                again.row(fusion).requests_avoided,
                live.row(fusion).requests_avoided
            );
            assert_eq!(branch.sol_pi.reported, recorded.reported, "{name}");
            assert_eq!(branch.sol_pi.archive, recorded.archive, "{name}");
            for (layer, (again, live)) in branch
                .sol_pi
                .layers
                .iter()
                .zip(&recorded.layers)
                .enumerate()
            {
                // Without SoL-Pi's own turns, never more requests than the recording booked.
                assert!(again.requests <= live.requests, "{name}: layer {layer}");
            }
            compared += 1;
        }
    }
    assert!(compared >= 7, "compared {compared} branches");
}

#[test]
fn a_pi_1_session_replays_to_the_very_layers_the_live_extension_recorded() {
    // Pi 1.x writes the system prompt into the session, so every layer is the same request
    // for request, when neither a resume nor a /tree navigation made the live book start
    // again (it prices the first request after one as a cache write).
    for name in ["debugging-1.6.0-sol-pi.jsonl", "plans-1.6.0-sol-pi.jsonl"] {
        let replayed = replay(name, &as_live(ReplayOptions::default()));
        let branch = &replayed.branches[0];
        let recorded = branch.recorded.as_ref().expect("live totals");
        // The requests as sent, request for request; plain Pi's side is without SoL-Pi's own
        // turns now (a recall or plan turn of its own is not a request of plain Pi's).
        assert_eq!(branch.sol_pi.layers[4], recorded.layers[4], "{name}");
        assert!(branch.sol_pi.layers[0].requests <= recorded.layers[0].requests);
        let occ = layer_of(Mechanism::OnlineContextCompact) - 1;
        assert_eq!(
            removal(branch.sol_pi.steps[occ]),
            removal(recorded.steps[occ]),
            "{name}"
        );
    }
}

#[test]
fn the_policies_rank_on_the_debugging_session_as_its_outputs_say() {
    // The debugging session without SoL-Pi: large build and test outputs, no plan.
    let replayed = replay("debugging-1.6.0.jsonl", &ReplayOptions::default());
    let branch = &replayed.branches[0];
    let plain = branch.row(Policy::PlainPi);
    let pack = branch.row(Policy::ObservationPack);
    let occ = branch.row(Policy::ObservationPackOcc);
    assert!(pack.input_tokens_saved > 0 && pack.net_saved.is_positive());
    // Without update_plan OCC has no boundary: the same as ObservationPack alone.
    assert_eq!(branch.compactions.plan_calls, 0);
    assert_eq!(occ.input_tokens_saved, pack.input_tokens_saved);
    assert_eq!(pack.cost, plain.cost - pack.net_saved);
    assert!(branch.reducer.candidates > 0 && branch.reducer.log_bytes > 0);
    assert!(!branch.row(Policy::ReducerCandidates).priced);
    assert!(branch.fusion.opportunities > 0, "{:?}", branch.fusion);
    assert!(branch.row(Policy::ActionFusion).requests_saved > 0);
}

#[test]
fn the_all_branches_replay_gives_each_leaf_its_own_figures() {
    let replayed = replay("fork-0.84.2.jsonl", &all_branches());
    assert_eq!(replayed.branches.len(), 2);
    assert!(replayed.branches[0].active && !replayed.branches[1].active);
    let active = replay("fork-0.84.2.jsonl", &ReplayOptions::default());
    assert_eq!(active.branches.len(), 1);
    assert_eq!(active.branches[0], replayed.branches[0]);
}

#[test]
fn online_context_compact_decided_again_at_the_recorded_ratio_compacts_where_the_session_did() {
    // The plans recordings ran OCC at cacheWriteReadRatio 0 with Pi keeping a 150-token tail
    // (scripts/record/scenarios.mjs, recorder.mjs). Pi 1.6.0's file holds all OCC measured
    // (0.84.2's lacks the system prompt, and its second boundary, which the live OCC let
    // pass, is compacted when decided again).
    let name = "plans-1.6.0-sol-pi.jsonl";
    let at = |ratio: f64| {
        let options = ReplayOptions {
            occ_ratio: Some(ratio),
            keep_recent_tokens: Some(150),
            ..ReplayOptions::default()
        };
        replay(name, &options).branches.remove(0)
    };
    let recorded = replay(name, &ReplayOptions::default()).branches.remove(0);
    let again = at(0.0);
    assert_eq!(
        again.compactions.redecided,
        Some(recorded.compactions.occ),
        "{name}"
    );
    // The SoL-Pi table stays the recorded one.
    assert_eq!(again.sol_pi, recorded.sol_pi, "{name}");
    // Cache writes priced far above reads: a compaction must save more, so never more of them.
    let dear = at(1_000.0);
    assert!(
        dear.compactions.redecided < again.compactions.redecided,
        "{name}"
    );
    // The compactions decided again take context out of the OCC row's requests. (On this short
    // session they do not pay for their summaries, OCC's prompt lines and plan turns: the row
    // costs more than plain Pi, whose requests have none of these.)
    let input = |branch: &sol_replay::replay::BranchReplay| {
        let row = branch.row(Policy::ObservationPackOcc);
        (
            row.input_tokens_saved,
            branch.row(Policy::PlainPi).input_tokens,
        )
    };
    assert!(input(&again).0 > input(&dear).0, "{name}");
    assert_eq!(input(&again).1, input(&dear).1, "{name}");
}

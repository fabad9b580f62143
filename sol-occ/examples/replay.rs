//! Replays the recorded sessions of `fixtures/occ/` under Online Context Compact and under
//! Pi's threshold-only compaction, and prints one table row per session and ratio.
//!
//! Run with `cargo run -p sol-occ --example replay`. Costs are in cache-read-equivalent
//! tokens; see `sol_occ::replay` for the model.

// This example reads the fixture files itself; the library it drives does no I/O.
#![allow(clippy::disallowed_methods, clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use serde_json::Value;
use sol_occ::replay::{ReplayConfig, replay_session_jsonl};

/// The cache write/read price ratios of the table.
const RATIOS: [f64; 4] = [1.25, 10.0, 12.5, 20.0];

fn main() -> ExitCode {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/occ");
    let manifest = match std::fs::read_to_string(format!("{dir}/sessions.json")) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("cannot read {dir}/sessions.json: {error}");
            return ExitCode::FAILURE;
        }
    };
    let sessions: Vec<Value> = match serde_json::from_str(&manifest) {
        Ok(sessions) => sessions,
        Err(error) => {
            eprintln!("invalid sessions.json: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "| session | requests | ratio | cost without compaction | OCC compactions (boundary + threshold) | OCC net saved | threshold-only compactions | threshold-only net saved | OCC − threshold-only |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for session in &sessions {
        let file = session["file"].as_str().unwrap_or_default();
        let window = session["contextWindow"].as_u64().unwrap_or(200_000);
        let system = session["systemPromptTokens"].as_u64().unwrap_or(0);
        let text = match std::fs::read_to_string(format!("{dir}/{file}")) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("cannot read {file}: {error}");
                return ExitCode::FAILURE;
            }
        };
        for ratio in RATIOS {
            let config = ReplayConfig::new(ratio, window, system);
            let report = match replay_session_jsonl(&text, &config) {
                Ok(report) => report,
                Err(error) => {
                    eprintln!("{file}: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let occ = &report.occ;
            let threshold = &report.threshold_only;
            println!(
                "| {file} | {} | {ratio} | {:.0} | {} ({} + {}) | {:.0} | {} | {:.0} | {:.0} |",
                report.requests,
                report.uncompacted_cost,
                occ.compactions,
                occ.boundary_compactions,
                occ.threshold_compactions,
                occ.net_saved,
                threshold.compactions,
                threshold.net_saved,
                occ.net_saved - threshold.net_saved,
            );
            if std::env::args().any(|arg| arg == "--verbose") {
                println!(
                    "|  | uncompacted peak {} · OCC peak {} · threshold-only peak {} · removed {} / {} · outcomes {:?} |",
                    report.uncompacted_peak_tokens,
                    occ.peak_context_tokens,
                    threshold.peak_context_tokens,
                    occ.context_tokens_removed,
                    threshold.context_tokens_removed,
                    occ.boundary_outcomes
                );
            }
        }
    }
    ExitCode::SUCCESS
}

//! Benchmark of the reducer's checks, run with `cargo bench -p sol-reducer`.
//!
//! Prints the time to validate a receipt of 12 quotes against a log of 600,000 characters
//! (the largest log the reducer accepts), the time of the checks before a model call on
//! that log (size bounds, exit signal, secret gate, hashing), and the bytes each receipt
//! of `fixtures/reducer/` removes from future prompts.

// A benchmark needs a clock, reads its fixtures from disk and prints its figures: the
// purity rules of clippy.toml are for the library, not for this measuring harness.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use camino::Utf8Path;
use serde_json::{Value, json};
use sol_core::message::ContentBlock;
use sol_core::testing::MemoryFileSystem;
use sol_reducer::archive::store_root;
use sol_reducer::model::ReducerReply;
use sol_reducer::pi::structured_exit_code;
use sol_reducer::render::apply_reply;
use sol_reducer::secret::find_likely_secret;
use sol_reducer::source::{FullOutput, prepare_source};
use sol_reducer::{
    MAX_SOURCE_CHARS, ReceiptCheck, Route, ToolResultView, select_candidate, sha256_hex,
    validate_receipt,
};

const ROOT: &str = "/home/dev/.pi/agent/sessions/--work-app--/sol-pi/session-a";

fn main() {
    let (log, reply) = largest_log_and_receipt();
    println!(
        "log: {} characters, {} bytes, {} lines",
        log.chars().count(),
        log.len(),
        log.lines().count()
    );

    let sha = sha256_hex(log.as_bytes());
    let check = ReceiptCheck {
        log: &log,
        source_sha256: &sha,
        is_error: true,
    };
    let validate = measure(50, || {
        let receipt =
            validate_receipt(black_box(&reply), black_box(&check)).expect("a valid receipt");
        black_box(receipt);
    });
    println!(
        "validate a 12-quote receipt against the 600,000-character log: {}",
        summary(&validate)
    );

    let text = format!("{log}\n\nCommand exited with code 101");
    let input = json!({"command": "cargo test --workspace"});
    let content = [ContentBlock::text(text)];
    let view = ToolResultView {
        tool_call_id: "call_bench",
        tool_name: "bash",
        input: &input,
        content: &content,
        is_error: true,
        exit_code: Some(101),
        ..ToolResultView::default()
    };
    let prepare = measure(20, || {
        let candidate = select_candidate(black_box(&view)).expect("a candidate");
        let source = prepare_source(candidate, FullOutput::NotRead).expect("a source");
        black_box(source);
    });
    println!(
        "select + prepare (bounds, exit signal, secret gate, hashes) on that log: {}",
        summary(&prepare)
    );

    let gate = measure(20, || {
        black_box(find_likely_secret(black_box(&log)));
    });
    println!("secret gate alone on that log: {}", summary(&gate));

    // A vitest-style log of the same length in characters, with a check mark or a cross on
    // every line: text outside ASCII, which the gate normalises before its rules run.
    let mut unicode = String::new();
    let mut index = 0;
    while unicode.chars().count() + 80 < MAX_SOURCE_CHARS {
        let mark = if index % 50 == 49 { "×" } else { "✓" };
        unicode.push_str(&format!(
            " {mark} src/module_{:04}.test.ts > behaves as documented {}ms\n",
            index / 40,
            index % 9
        ));
        index += 1;
    }
    let gate = measure(20, || {
        black_box(find_likely_secret(black_box(&unicode)));
    });
    println!(
        "secret gate alone on a {}-character log with a non-ASCII mark on every line: {}",
        unicode.chars().count(),
        summary(&gate)
    );

    // The same size of log from a run that reported success: the failing-test check reads
    // it too.
    let passing = log.replace("... FAILED", "... ok");
    let input = json!({"command": "cargo test --workspace 2>&1 | tail -n 20000"});
    let content = [ContentBlock::text(passing)];
    let view = ToolResultView {
        tool_call_id: "call_bench",
        tool_name: "bash",
        input: &input,
        content: &content,
        is_error: false,
        exit_code: Some(0),
        ..ToolResultView::default()
    };
    let prepare = measure(20, || {
        let candidate = select_candidate(black_box(&view)).expect("a candidate");
        let source = prepare_source(candidate, FullOutput::NotRead).expect("a source");
        black_box(source);
    });
    println!(
        "select + prepare on that log reported as a success (the failing-test check too): {}",
        summary(&prepare)
    );

    println!();
    println!(
        "{:<20} {:>12} {:>13} {:>14} {:>9}",
        "fixture", "log bytes", "receipt bytes", "bytes removed", "removed"
    );
    let mut total_log = 0;
    let mut total_removed = 0;
    for name in [
        "cargo-test-failure",
        "go-test-failure",
        "npm-test-pass",
        "pytest-failure",
        "tsc-errors-fused",
    ] {
        let (log_bytes, receipt_bytes) = reduce_fixture(name);
        let removed = log_bytes - receipt_bytes;
        total_log += log_bytes;
        total_removed += removed;
        println!(
            "{name:<20} {log_bytes:>12} {receipt_bytes:>13} {removed:>14} {:>8.1}%",
            100.0 * removed as f64 / log_bytes as f64
        );
    }
    println!(
        "{:<20} {total_log:>12} {:>13} {total_removed:>14} {:>8.1}%",
        "all",
        total_log - total_removed,
        100.0 * total_removed as f64 / total_log as f64
    );
}

/// A failing cargo log of exactly [`MAX_SOURCE_CHARS`] ASCII characters, and a receipt
/// whose quotes are spread over it, the last ones near the end (the slowest to find).
fn largest_log_and_receipt() -> (String, String) {
    let mut log =
        String::from("   Compiling ledgerline-core v0.4.2 (/work/ledgerline/crates/core)\n");
    let mut index = 0;
    let tail = "test reconcile::tests::matches_split_transactions ... FAILED\n\nfailures:\n\n\
        thread 'reconcile::tests::matches_split_transactions' panicked at crates/core/src/reconcile.rs:214:9:\n\
        assertion `left == right` failed: split legs must sum to the parent amount\n  left: Amount(-12050)\n right: Amount(-12000)\n\n\
        test result: FAILED. 9999 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 4.20s\n\n\
        error: test failed, to rerun pass `-p ledgerline-core --lib`\n";
    while log.len() + tail.len() < MAX_SOURCE_CHARS {
        log.push_str(&format!(
            "test module_{:04}::case_{:02}::behaves_as_documented ... ok\n",
            index / 40,
            index % 40
        ));
        index += 1;
    }
    log.truncate(MAX_SOURCE_CHARS - tail.len());
    // End on a whole line, padded to the exact size, so the tail's lines stand alone.
    let cut = log.rfind('\n').map_or(0, |index| index + 1);
    let room = log.len() - cut;
    log.truncate(cut);
    if room > 0 {
        log.push_str(&"#".repeat(room - 1));
        log.push('\n');
    }
    log.push_str(tail);
    assert_eq!(log.len(), MAX_SOURCE_CHARS);
    let quotes = [
        (
            "target",
            "   Compiling ledgerline-core v0.4.2 (/work/ledgerline/crates/core)",
        ),
        (
            "target",
            "test module_0050::case_07::behaves_as_documented ... ok",
        ),
        (
            "target",
            "test module_0100::case_13::behaves_as_documented ... ok",
        ),
        (
            "target",
            "test module_0150::case_21::behaves_as_documented ... ok",
        ),
        (
            "target",
            "test module_0200::case_29::behaves_as_documented ... ok",
        ),
        (
            "target",
            "test module_0240::case_33::behaves_as_documented ... ok",
        ),
        (
            "failure",
            "test reconcile::tests::matches_split_transactions ... FAILED",
        ),
        (
            "failure",
            "thread 'reconcile::tests::matches_split_transactions' panicked at crates/core/src/reconcile.rs:214:9:",
        ),
        (
            "fatal",
            "assertion `left == right` failed: split legs must sum to the parent amount\n  left: Amount(-12050)\n right: Amount(-12000)",
        ),
        (
            "summary",
            "test result: FAILED. 9999 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 4.20s",
        ),
        (
            "failure",
            "error: test failed, to rerun pass `-p ledgerline-core --lib`",
        ),
        ("summary", "failures:"),
    ];
    let evidence: Vec<Value> = quotes
        .iter()
        .map(|(kind, quote)| json!({"kind": kind, "quote": quote}))
        .collect();
    let reply = json!({
        "schema": "sol-pi-evidence-receipt/1",
        "source_sha256": sha256_hex(log.as_bytes()),
        "status": "failure",
        "uncertain": false,
        "evidence": evidence,
    });
    (log, reply.to_string())
}

/// Runs `work` `runs` times after one warm-up run; the durations, sorted.
fn measure(runs: usize, mut work: impl FnMut()) -> Vec<Duration> {
    work();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn summary(times: &[Duration]) -> String {
    let median = times[times.len() / 2];
    format!(
        "median {median:.2?}, min {:.2?}, max {:.2?} ({} runs)",
        times[0],
        times[times.len() - 1],
        times.len()
    )
}

/// Reduces one fixture with its scripted receipt; the log's and the receipt's sizes.
fn reduce_fixture(name: &str) -> (u64, u64) {
    let dir = Utf8Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/reducer")
        .join(name);
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).expect("a fixture file");
    let output = read("output.txt");
    let event: Value = serde_json::from_str(&read("result.json")).expect("result.json");
    let content: Vec<ContentBlock> = event["content"]
        .as_array()
        .expect("content")
        .iter()
        .map(|block| match block.get("textFile") {
            Some(_) => ContentBlock::text(output.clone()),
            None => serde_json::from_value(block.clone()).expect("a block"),
        })
        .collect();
    let view = ToolResultView {
        tool_call_id: event["toolCallId"].as_str().expect("id"),
        tool_name: event["toolName"].as_str().expect("tool"),
        input: &event["input"],
        content: &content,
        details: event.get("details"),
        is_error: event["isError"].as_bool().expect("isError"),
        parent_tool_call_id: None,
        exit_code: event
            .get("structuredContent")
            .and_then(structured_exit_code),
        os_temp_dir: None,
    };
    let source = prepare_source(
        select_candidate(&view).expect("a candidate"),
        FullOutput::NotRead,
    )
    .expect("a source");
    let fs = MemoryFileSystem::new();
    let archived = source
        .archive(&fs, &store_root(Utf8Path::new(ROOT)))
        .expect("archived");
    let reply = ReducerReply::from_text(
        read("receipt.json"),
        &Route::new("openai-codex", "gpt-5.6-luna"),
    );
    let replacement = apply_reply(&source, &archived, &reply).expect("applied");
    (
        replacement.summary.source_bytes,
        replacement.summary.receipt_bytes,
    )
}

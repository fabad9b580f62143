//! How the replay's time grows with a branch's length and with the number of branches.
//!
//! ```text
//! cargo run --release -p sol-replay --example bench_replay
//! cargo run --release -p sol-replay --example bench_replay -- 12500 2000
//! ```
//!
//! It generates two kinds of session in memory, at four sizes each, doubling:
//!
//! - **chain**: one branch of N entries (up to the first argument, 100,000 by default), turns
//!   of a user prompt, an assistant message with a `bash` call and usage, and its result; no
//!   compaction, so every request carries the whole branch so far;
//! - **branches**: a main line with a side branch at every step (B branches, up to the second
//!   argument, 2,000 by default), replayed with `--all-branches`: B branches whose lengths run
//!   up to the main line's.
//!
//! For each size it reads the session, replays it and renders the text report, and prints
//! the replay's time and the ratio to the size before: about 2 when the time is linear in the
//! entries (and, for the branches, the entries of every branch replayed), 4 when quadratic.
//! It is a benchmark, not a test: nothing here asserts a time.

// A benchmark program: it prints and reads a clock, as the library never does.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::disallowed_methods,
    clippy::disallowed_types
)]

use std::fmt::Write as _;
use std::time::Instant;

use serde_json::{Value, json};
use sol_replay::reader::read_session;
use sol_replay::render::{Format, render};
use sol_replay::replay::{ReplayOptions, replay_session};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|arg| arg.parse().unwrap_or_else(|_| usage()))
        .collect();
    let (chain, branches) = match args.as_slice() {
        [] => (100_000, 2_000),
        [chain, branches] => (*chain, *branches),
        _ => usage(),
    };
    println!("kind      size  entries  branches replayed  read s  replay s  ratio");
    run("chain", sizes(chain), false, chain_session);
    run("branches", sizes(branches), true, branched_session);
}

fn usage() -> ! {
    eprintln!("usage: bench_replay [<chain entries> <side branches>]");
    std::process::exit(2);
}

/// Four sizes doubling up to `largest`.
fn sizes(largest: u64) -> Vec<u64> {
    (0..4)
        .rev()
        .map(|shift| (largest >> shift).max(1))
        .collect()
}

fn run(kind: &str, sizes: Vec<u64>, all_branches: bool, generate: fn(u64) -> String) {
    let options = ReplayOptions {
        all_branches,
        ..ReplayOptions::default()
    };
    let mut previous: Option<f64> = None;
    for size in sizes {
        let text = generate(size);
        let started = Instant::now();
        let session = read_session(kind, text.as_bytes()).expect("a generated session reads");
        let read = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let replayed = replay_session(&session, &options);
        let report = render(std::slice::from_ref(&replayed), &options, Format::Text);
        let replay = started.elapsed().as_secs_f64();
        let ratio = previous.map_or_else(
            || "-".to_owned(),
            |before| format!("{:.2}", replay / before),
        );
        previous = Some(replay);
        println!(
            "{kind:<8} {size:>6} {:>8} {:>18} {read:>7.3} {replay:>9.3} {ratio:>6}   ({} bytes of report)",
            session.entries().len(),
            replayed.branches.len(),
            report.len()
        );
    }
}

/// A session's lines: the header, then each entry with its id and parent.
struct Writer {
    text: String,
    next: u64,
}

impl Writer {
    fn new() -> Writer {
        let mut text = String::new();
        let header = json!({"type": "session", "version": 3, "id": "bench", "timestamp": "2026-03-02T09:00:00.000Z", "cwd": "/bench"});
        let _ = writeln!(text, "{header}");
        Writer { text, next: 0 }
    }

    /// Writes `value` as a child of `parent` and returns its id.
    fn entry(&mut self, parent: Option<&str>, mut value: Value) -> String {
        self.next += 1;
        let id = format!("{:08x}", self.next);
        value["id"] = json!(id);
        value["parentId"] = parent.map_or(Value::Null, |parent| json!(parent));
        value["timestamp"] = json!("2026-03-02T09:00:00.000Z");
        let _ = writeln!(self.text, "{value}");
        id
    }

    /// One turn from `parent`: a prompt, an assistant message with a call, its result.
    /// Returns the last entry's id.
    fn turn(&mut self, parent: Option<&str>, turn: u64) -> String {
        let user = self.entry(
            parent,
            json!({"type": "message", "message": {"role": "user", "content": format!("turn {turn}: run the tests"), "timestamp": turn}}),
        );
        let assistant = self.entry(
            Some(&user),
            json!({"type": "message", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "Running them."},
                {"type": "toolCall", "id": format!("call-{turn}"), "name": "bash", "arguments": {"command": "cargo test"}}],
                "usage": {"input": 10, "output": 20, "cacheRead": 3000, "cacheWrite": 400}, "stopReason": "toolUse", "timestamp": turn}}),
        );
        self.entry(
            Some(&assistant),
            json!({"type": "message", "message": {"role": "toolResult", "toolCallId": format!("call-{turn}"), "toolName": "bash",
                "content": [{"type": "text", "text": format!("test result: ok. {turn} passed")}], "isError": false, "timestamp": turn}}),
        )
    }
}

/// One branch of about `entries` entries.
fn chain_session(entries: u64) -> String {
    let mut writer = Writer::new();
    let mut parent: Option<String> = None;
    for turn in 0..entries.div_ceil(3) {
        parent = Some(writer.turn(parent.as_deref(), turn));
    }
    writer.text
}

/// A main line of `branches` turns with a one-turn side branch from each.
fn branched_session(branches: u64) -> String {
    let mut writer = Writer::new();
    let mut parent: Option<String> = None;
    for turn in 0..branches {
        writer.turn(parent.as_deref(), 1_000_000 + turn);
        parent = Some(writer.turn(parent.as_deref(), turn));
    }
    writer.text
}

//! The reader's and the replay's speed and memory on a large generated session file.
//!
//! ```text
//! cargo run --release -p sol-replay --example bench_reader -- generate /tmp/big.jsonl 100
//! cargo run --release -p sol-replay --example bench_reader -- read /tmp/big.jsonl
//! cargo run --release -p sol-replay --example bench_reader -- replay /tmp/big.jsonl
//! ```
//!
//! `generate` writes a session of about that many MB (turns of a user prompt, an assistant
//! message with two tool calls, their results of 1 to 24 KB of text (a fourth argument sets
//! the 24; 0 gives one line of output each, the most entries per MB), a SoL-Pi totals entry,
//! a fork every 50 turns, and Pi's own compaction whenever the branch's context passes
//! 150,000 estimated tokens, as Pi compacts a 200,000-token window); `read` reads it with
//! the reader and `replay` reads and replays its active branch under every policy and
//! renders the report; each prints the entries, the time, the throughput and the process's
//! peak resident memory (Linux `VmHWM`). It is a benchmark, not a test: nothing here
//! asserts a time.

// A benchmark program: it prints, reads a clock and files, as the library never does.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::disallowed_methods,
    clippy::disallowed_types
)]

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::time::Instant;

use serde_json::json;
use sol_replay::reader::read_session_with_progress;
use sol_replay::render::{Format, render};
use sol_replay::replay::{ReplayOptions, replay_session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [command, path, megabytes] if command == "generate" => {
            generate(path, megabytes.parse()?, 24)
        }
        [command, path, megabytes, kilobytes] if command == "generate" => {
            generate(path, megabytes.parse()?, kilobytes.parse()?)
        }
        [command, path] if command == "read" => read(path, false),
        [command, path] if command == "replay" => read(path, true),
        _ => {
            eprintln!(
                "usage: bench_reader generate <file> <MB> [<max KB of a tool output>] | bench_reader read|replay <file>"
            );
            std::process::exit(2);
        }
    }
}

fn generate(path: &str, megabytes: u64, kilobytes: u64) -> Result<(), Box<dyn std::error::Error>> {
    let target = megabytes * 1_000_000;
    let mut out = BufWriter::new(File::create(path)?);
    let header = json!({"type": "session", "version": 3, "id": "bench", "timestamp": "2026-03-02T09:00:00.000Z", "cwd": "/bench"});
    let mut written = write_line(&mut out, &header)?;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut random = move |below: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % below
    };
    let mut parent = serde_json::Value::Null;
    let mut fork_point = serde_json::Value::Null;
    // The branch's context since its last compaction, in Pi's estimate, and the turn's
    // first entry (what a compaction keeps).
    let mut context_tokens = 0u64;
    let mut fork_tokens = 0u64;
    let mut id = 0u64;
    let mut turn = 0u64;
    let line = "build step: compiling a module with a fairly long line of output, ünïcödé ok\n";
    while written < target {
        turn += 1;
        if turn.is_multiple_of(50) && !fork_point.is_null() {
            parent = fork_point.clone();
            context_tokens = fork_tokens;
        }
        if turn % 50 == 10 {
            fork_point = parent.clone();
            fork_tokens = context_tokens;
        }
        let compact = context_tokens > 150_000;
        let prompt = id + 1;
        let mut entry = |out: &mut BufWriter<File>, mut value: serde_json::Value| {
            id += 1;
            let this = format!("{id:08x}");
            value["id"] = json!(this);
            value["parentId"] = parent.clone();
            value["timestamp"] = json!("2026-03-02T09:00:00.000Z");
            parent = json!(this);
            write_line(out, &value)
        };
        written += entry(
            &mut out,
            json!({"type": "message", "message": {"role": "user", "content": format!("turn {turn}: run the tests"), "timestamp": 1_772_442_000_000u64 + turn}}),
        )?;
        if compact {
            // Pi's threshold compaction before the turn's request: it keeps this prompt.
            written += entry(
                &mut out,
                json!({"type": "compaction", "summary": "## Goal\nKeep the tests green.\n".repeat(40), "firstKeptEntryId": format!("{prompt:08x}"), "tokensBefore": context_tokens}),
            )?;
            context_tokens = 400;
        }
        written += entry(
            &mut out,
            json!({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Running them."},
            {"type": "toolCall", "id": format!("call-{turn}-a"), "name": "bash", "arguments": {"command": "cargo test"}},
            {"type": "toolCall", "id": format!("call-{turn}-b"), "name": "read", "arguments": {"path": "src/lib.rs"}}],
            "usage": {"input": 10, "output": 20, "cacheRead": 3000, "cacheWrite": 400}, "stopReason": "toolUse", "timestamp": 1_772_442_000_000u64 + turn}}),
        )?;
        for call in ["a", "b"] {
            // 0 KB: one line of output, for the most entries per MB.
            let size = if kilobytes == 0 {
                0
            } else {
                1 + random(kilobytes)
            };
            let text = line.repeat(((size * 1000 / line.len() as u64) as usize).max(1));
            context_tokens += text.chars().count() as u64 / 4 + 10;
            written += entry(
                &mut out,
                json!({"type": "message", "message": {"role": "toolResult", "toolCallId": format!("call-{turn}-{call}"), "toolName": "bash", "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 1_772_442_000_000u64 + turn}}),
            )?;
        }
        written += entry(
            &mut out,
            json!({"type": "custom", "customType": "sol-pi-savings-totals", "data": {"version": 1, "turn": turn}}),
        )?;
    }
    out.flush()?;
    println!("{path}: {written} bytes, {id} entries, {turn} turns");
    Ok(())
}

fn write_line(out: &mut impl Write, value: &serde_json::Value) -> std::io::Result<u64> {
    let text = serde_json::to_string(value)?;
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    Ok(text.len() as u64 + 1)
}

/// The floor a reader cannot go below: every line parsed into a `serde_json::Value` and
/// dropped, nothing kept.
fn parse_only(path: &str) -> Result<f64, Box<dyn std::error::Error>> {
    let input = BufReader::with_capacity(1 << 16, File::open(path)?);
    let started = Instant::now();
    let mut values = 0u64;
    for line in std::io::BufRead::split(input, b'\n') {
        let line = line?;
        if serde_json::from_slice::<serde_json::Value>(&line).is_ok() {
            values += 1;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!("floor: {values} lines parsed as JSON and dropped in {elapsed:.2} s");
    Ok(elapsed)
}

fn read(path: &str, replay: bool) -> Result<(), Box<dyn std::error::Error>> {
    let floor = if replay {
        Some(parse_only(path)?)
    } else {
        None
    };
    let input = BufReader::with_capacity(1 << 16, File::open(path)?);
    let started = Instant::now();
    let mut updates = 0u64;
    let session = read_session_with_progress(path, input, |_| updates += 1)?;
    let read = started.elapsed();
    let mut report = 0;
    if replay {
        let options = ReplayOptions::default();
        let replayed = replay_session(&session, &options);
        report = render(&[replayed], &options, Format::Text).len();
    }
    let elapsed = started.elapsed();
    if let Some(floor) = floor {
        println!(
            "read {:.2} s, replayed and rendered {:.2} s ({report} bytes of report); read and replay take {:.2} times the floor",
            read.as_secs_f64(),
            (elapsed - read).as_secs_f64(),
            elapsed.as_secs_f64() / floor,
        );
    }
    let megabytes = session.bytes() as f64 / 1e6;
    println!(
        "{path}: {} entries, {} leaves, active branch {} entries, {:.1} MB in {:.2} s ({:.0} MB/s), {updates} progress calls",
        session.entries().len(),
        session.leaves().count(),
        session.active_branch().len(),
        megabytes,
        elapsed.as_secs_f64(),
        megabytes / elapsed.as_secs_f64(),
    );
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        for line in status
            .lines()
            .filter(|line| line.starts_with("VmHWM") || line.starts_with("VmRSS"))
        {
            println!("{}", line.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
    Ok(())
}

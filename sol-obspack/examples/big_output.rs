//! ObservationPack on one 100 MB tool output, through the real file system: observed,
//! archived, replaced by its placeholder for three requests, then recalled (the first and
//! the last page, each read back and verified) and searched. Prints the time of each step
//! and the process's peak resident memory after it (Linux: `VmHWM`).
//!
//! Run with `cargo run --release -p sol-obspack --features host --example big_output [MB]`
//! (default 100), under `/usr/bin/time -v` for the whole process's peak.

// A measuring host: it picks its own folder, reads the clock and /proc, prints its figures
// and cleans up. The pure crate itself does none of that.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::time::Instant;

use sol_obspack::camino::Utf8PathBuf;
use sol_obspack::host::OsFileSystem;
use sol_obspack::{ObservationStore, Pack, Seen};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let megabytes: usize = std::env::args()
        .nth(1)
        .map(|arg| arg.parse())
        .transpose()?
        .unwrap_or(100);
    let temp = std::env::temp_dir().join(format!("big-output-{:010}", std::process::id()));
    let dir = Utf8PathBuf::try_from(temp)?;
    let store = ObservationStore::new(&OsFileSystem, dir.join("observations"));

    // A build-and-test log: compile lines, test lines, one failure in the middle.
    let started = Instant::now();
    let target = megabytes * 1_000_000;
    let mut log = String::with_capacity(target + 200);
    let mut n = 0u64;
    while log.len() < target {
        n += 1;
        if n == 700_000 {
            log.push_str("test ledger::tests::balances_after_split ... FAILED\n");
        }
        log.push_str(&format!(
            "test module_{:05}::case_{:02}::behaves_as_documented ... ok ({} ms)\n",
            n / 40,
            n % 40,
            n % 997
        ));
    }
    report("generate the tool output", started, log.len());

    let started = Instant::now();
    let mut pack = Pack::new();
    let admitted = pack.store_and_admit(&store, "bash", "call_1", &log)?;
    let id = admitted.observation.id.clone();
    report("observe + archive (0600, synced)", started, log.len());

    let started = Instant::now();
    let mut sent = 0;
    for request in 1..=3 {
        let seen = Seen::new(admitted.handle, request - 1);
        let step = pack.on_context(request, &[seen]);
        store.append_ledger(&step.ledger, "2026-01-01T00:00:00Z")?;
        sent = pack.text_to_send(seen, &log).len();
    }
    report("three requests (the third a placeholder)", started, sent);

    // The host no longer needs its own copy once the archive holds it.
    drop(log);

    let started = Instant::now();
    let first = pack.recall(&store, &id, 0)?;
    report(
        "recall page 1 (read + verify)",
        started,
        first.details.bytes as usize,
    );

    let started = Instant::now();
    let size = admitted.observation.bytes;
    let last_offset = size - 1000;
    // A page starts on a character boundary; this log is ASCII.
    let last = pack.recall(&store, &id, last_offset)?;
    assert!(last.details.eof);
    report(
        "recall the last page (read + verify)",
        started,
        last.details.bytes as usize,
    );

    let started = Instant::now();
    let found = pack.search(&store, &id, "balances_after_split ... FAILED", 0)?;
    assert_eq!(found.details.matches.len(), 1);
    report("search the whole output", started, found.text.len());

    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

fn report(step: &str, started: Instant, bytes: usize) {
    println!(
        "{step:<44} {:>9.1} ms  {bytes:>11} bytes  peak RSS {}",
        started.elapsed().as_secs_f64() * 1000.0,
        peak_rss()
    );
}

/// The process's peak resident memory so far, from `/proc/self/status` (Linux).
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmHWM:"))
                .map(|line| line["VmHWM:".len()..].trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

//! ObservationPack in a plain Rust host: one large tool output, archived with the real file
//! system, sent in full twice and then as its placeholder, recalled and searched.
//! Run with `cargo run -p sol-obspack --features host --example three_requests`.

// An example host picks its own folder and cleans up after itself: the OS calls the pure
// crate never makes are this host's job.
// It prints what the model would see.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use sol_obspack::camino::Utf8PathBuf;
use sol_obspack::host::OsFileSystem;
use sol_obspack::{ObservationStore, Pack, Seen};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let temp = std::env::temp_dir().join(format!("three-requests-{:010}", std::process::id()));
    let dir = Utf8PathBuf::try_from(temp)?;
    let store = ObservationStore::new(&OsFileSystem, dir.join("observations"));

    // A large tool output: the log of a build with one warning in the middle.
    let mut log: String = (1..=300)
        .map(|n| format!("   Compiling crate_{n} v0.1.{n}\n"))
        .collect();
    log.push_str("warning: unused variable `x` in src/lib.rs:42\n");
    log.extend((1..=300).map(|n| format!("test case_{n} ... ok\n")));
    // Archived once, on its first sight: observed, stored and admitted.
    let mut pack = Pack::new();
    let admitted = pack.store_and_admit(&store, "bash", "call_1", &log)?;
    let id = &admitted.observation.id;
    println!("tool result: {}", admitted.observation);

    // Three provider requests carry the result; before request n it was carried n - 1 times.
    let mut saved = 0;
    for request in 1..=3 {
        let seen = Seen::new(admitted.handle, request - 1);
        let step = pack.on_context(request, &[seen]);
        store.append_ledger(&step.ledger, "2026-01-01T00:00:00Z")?;
        let sent = pack.text_to_send(seen, &log);
        println!("request {request}: {} bytes sent", sent.len());
        saved += step.account.tokens_removed;
        if step.replace[0] {
            println!("{}", shortened(sent, 7));
        }
    }

    // The model asks for the original back: a page, then a search for the warning.
    let page = pack.recall(&store, id, 0)?;
    println!("recall page:\n{}", shortened(&page.text, 4));
    let found = pack.search(&store, id, "warning", 0)?;
    println!("search:\n{}", found.text);
    println!("saved: {saved} tokens on request 3");

    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// The first `lines` lines of `text`, and how many more there are.
fn shortened(text: &str, lines: usize) -> String {
    let total = text.lines().count();
    let head: Vec<&str> = text.lines().take(lines).collect();
    format!(
        "{}\n  [... {} more lines]",
        head.join("\n"),
        total.saturating_sub(lines)
    )
}

//! The replayed cost of every session of a corpora folder (default `../shared/corpora`,
//! beside the repository), as Markdown: per corpus (each top-level subfolder), its sessions,
//! plain Pi's requests and cost, and each priced policy's cost as a ratio to plain Pi's with
//! the recalls it needed; then, per corpus, how many sessions each policy costs more on
//! than plain Pi.
//!
//! ```text
//! cargo run --release -p sol-replay --example corpus_table -- ../shared/corpora
//! ```
//!
//! Every `.jsonl` file is read as a Pi session, every file whose start looks like a
//! mini-swe-agent trajectory as one; other files (READMEs, licenses) are skipped, and a file
//! that fails to read is named on stderr and counted, not fatal. Each session is replayed
//! with `ReplayOptions::default()` (priced from the provider's reported usage at each
//! model's prices), its active branch counted. Not part of the package: it reads a folder
//! outside the crate.

// A program that prints its results and names the files it could not read.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// The host walks the corpora folder and reads its files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod table;

use std::path::{Path, PathBuf};

use sol_replay::reader::{read_session, trajectory};
use sol_replay::replay::{ReplayOptions, SessionReplay, replay_session};
use table::{Corpus, corpus_table};

const DEFAULT_CORPORA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpora");

/// Every file under `dir`, in sorted path order.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    let mut files = Vec::new();
    for path in entries {
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The file replayed, `None` for a file that is no session, `Err` for one that failed to read.
fn replay_file(path: &Path, options: &ReplayOptions) -> Option<Result<SessionReplay, String>> {
    let name = path.to_string_lossy();
    let is_jsonl = path.extension().is_some_and(|ext| ext == "jsonl");
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => return Some(Err(format!("{name}: {error}"))),
    };
    let read = if trajectory::looks_like_trajectory(&bytes) {
        trajectory::read_trajectory(&name, &bytes)
    } else if is_jsonl {
        read_session(&name, bytes.as_slice())
    } else {
        return None;
    };
    Some(
        read.map(|session| replay_session(&session, options))
            .map_err(|error| error.to_string()),
    )
}

fn main() {
    let root = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from(DEFAULT_CORPORA), PathBuf::from);
    let options = ReplayOptions::default();
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|error| panic!("{}: {error}", root.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    let mut corpora = Vec::new();
    for folder in folders {
        let mut corpus = Corpus {
            name: folder
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default(),
            sessions: Vec::new(),
            unreadable: 0,
        };
        for path in files_under(&folder) {
            match replay_file(&path, &options) {
                Some(Ok(session)) => corpus.sessions.push(session),
                Some(Err(error)) => {
                    eprintln!("unreadable: {error}");
                    corpus.unreadable += 1;
                }
                None => {}
            }
        }
        corpora.push(corpus);
    }
    print!("{}", corpus_table(&corpora));
}

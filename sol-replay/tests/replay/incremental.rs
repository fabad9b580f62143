//! The replay builds and books each request from the first part that can differ from the
//! request before. Held against the whole-request way (`whole_requests`) on every recorded
//! session of `fixtures/sessions/`, the real Pi session of `../shared/corpora/`, and (in
//! `replay_props`) generated trees: the same replay, figure for figure.

use std::path::{Path, PathBuf};

use sol_replay::reader::read_session;
use sol_replay::replay::{ReplayOptions, replay_session};

use crate::support::shared_corpora;

const SESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/sessions");

/// Every `.jsonl` file under `dir`, sorted.
#[allow(clippy::disallowed_methods)] // Test fixtures are listed from disk.
fn sessions_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a fixtures folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The option sets each file is replayed with both ways.
fn option_sets() -> Vec<ReplayOptions> {
    let all = ReplayOptions {
        all_branches: true,
        ..ReplayOptions::default()
    };
    vec![
        all,
        ReplayOptions {
            cache_aware: true,
            mask_keep: 1,
            ..all
        },
        ReplayOptions {
            occ_ratio: Some(12.5),
            mask_keep: 0,
            ..all
        },
    ]
}

/// Replays `path` both ways with every option set; the number of sessions it read.
#[allow(clippy::disallowed_methods)] // The sessions are read from disk, in place.
fn both_ways(path: &Path) -> usize {
    let bytes = std::fs::read(path).expect("a session file");
    let Ok(session) = read_session(&path.display().to_string(), bytes.as_slice()) else {
        return 0; // The reader's rejections are its own tests'.
    };
    for options in option_sets() {
        let incremental = replay_session(&session, &options);
        let whole = replay_session(
            &session,
            &ReplayOptions {
                whole_requests: true,
                ..options
            },
        );
        assert_eq!(incremental, whole, "{} with {options:?}", path.display());
    }
    1
}

#[test]
fn every_recorded_session_replays_as_with_whole_requests() {
    let replayed: usize = sessions_under(Path::new(SESSIONS))
        .iter()
        .map(|path| both_ways(path))
        .sum();
    assert!(replayed >= 20, "only {replayed} sessions were replayed");
}

#[test]
fn the_real_pi_session_replays_as_with_whole_requests() {
    let Some(corpora) = shared_corpora() else {
        return;
    };
    let path = corpora.join("pi-mono").join("large-session.jsonl");
    assert_eq!(both_ways(&path), 1, "{} reads", path.display());
}

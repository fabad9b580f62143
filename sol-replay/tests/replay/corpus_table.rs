//! The per-corpus table of `examples/corpus_table` (its pure part, included from the
//! example), built from a fixture trajectory and a fixture Pi session as two corpora.

#[path = "../../examples/corpus_table/table.rs"]
mod table;

use sol_replay::reader::{read_session, trajectory};
use sol_replay::replay::{Policy, ReplayOptions, SessionReplay, replay_session};
use table::{Corpus, corpus_table};

const SESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/sessions");

/// The fixture `name` (under `fixtures/sessions/`) replayed with the default options.
fn replayed(name: &str) -> SessionReplay {
    #[allow(clippy::disallowed_methods)] // Test fixtures are read from disk.
    let bytes = std::fs::read(format!("{SESSIONS}/{name}")).expect("fixture");
    let session = if trajectory::looks_like_trajectory(&bytes) {
        trajectory::read_trajectory(name, &bytes)
    } else {
        read_session(name, bytes.as_slice())
    }
    .unwrap_or_else(|error| panic!("{error}"));
    replay_session(&session, &ReplayOptions::default())
}

#[test]
fn the_corpus_table_has_a_row_per_corpus_and_a_column_per_priced_policy() {
    let trajectory = replayed("trajectory/small.traj.json");
    let pi = replayed("corpus/debugging-1.6.0.jsonl");
    let pi_plain = pi.branches[0].row(Policy::PlainPi).clone();
    let corpora = [
        Corpus {
            name: "mini-swe-agent".to_owned(),
            sessions: vec![trajectory],
            unreadable: 0,
        },
        Corpus {
            name: "pi".to_owned(),
            sessions: vec![pi],
            unreadable: 1,
        },
    ];
    let text = corpus_table(&corpora);

    // Every policy but plain Pi and the unpriced reducer candidates has a column, in order.
    let header = text
        .lines()
        .find(|line| line.starts_with("| corpus | sessions | plain Pi"))
        .expect("the cost table's header");
    let labels: Vec<&str> = header
        .split(" | ")
        .skip(4)
        .map(|cell| cell.trim_end_matches(" |"))
        .collect();
    let expected: Vec<&str> = Policy::ALL
        .into_iter()
        .filter(|policy| !matches!(policy, Policy::PlainPi | Policy::ReducerCandidates))
        .map(Policy::label)
        .collect();
    assert_eq!(labels, expected);
    // The Pi corpus's row carries its plain Pi requests and cost as the replay priced them.
    let row = format!("| `pi` | 1 | {} | {} |", pi_plain.requests, pi_plain.cost);
    assert!(text.contains(&row), "{row} in\n{text}");
    assert!(text.contains("| all | 2 |"));
    assert!(text.contains("1 file(s) failed to read"));
    assert_text_snapshot!("corpus_table", text);
}

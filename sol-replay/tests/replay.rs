//! The sol-replay test suite: one binary, one module per area (under `tests/replay/`).
//!
//! Run with `cargo test -p sol-replay`. Snapshots live in `tests/snapshots/`; the session
//! files the reader tests read are in `fixtures/sessions/reader/`, the recorded sessions
//! the replay tests read in `fixtures/sessions/corpus/` and `fixtures/sessions/long/`, and
//! the real sessions of `../shared/corpora/` in place.

#[macro_use]
extern crate sol_testkit;

#[path = "replay/corpus.rs"]
mod corpus;
#[path = "replay/corpus_table.rs"]
mod corpus_table;
#[path = "replay/incremental.rs"]
mod incremental;
#[path = "replay/long.rs"]
mod long;
#[path = "replay/reader.rs"]
mod reader;
#[path = "replay/reader_props.rs"]
mod reader_props;
#[path = "replay/recent.rs"]
mod recent;
#[path = "replay/reliance.rs"]
mod reliance;
#[path = "replay/replay_props.rs"]
mod replay_props;
#[path = "replay/shared_corpora.rs"]
mod shared_corpora;
#[path = "replay/support.rs"]
mod support;

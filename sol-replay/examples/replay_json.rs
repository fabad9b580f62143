//! The same as replay_files, as JSON.
//! dozen lines: it opens the files, the crate does the rest).

// A program that prints its results.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// The host opens the files it is given.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::io::BufReader;

use sol_replay::reader::read_session;
use sol_replay::render::{Format, render};
use sol_replay::replay::{ReplayOptions, replay_session};

fn main() {
    let options = ReplayOptions::default();
    let mut sessions = Vec::new();
    for path in std::env::args().skip(1) {
        let file = std::fs::File::open(&path).expect("a readable file");
        match read_session(&path, BufReader::new(file)) {
            Ok(session) => sessions.push(replay_session(&session, &options)),
            Err(error) => eprintln!("{error}"),
        }
    }
    print!("{}", render(&sessions, &options, Format::Json));
}

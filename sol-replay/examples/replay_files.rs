//! Replays the session files named on the command line and prints the report, as JSON
//! with `--json` (a host in a dozen lines: it opens the files, the crate does the rest).

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
    let (json, paths): (Vec<String>, Vec<String>) =
        std::env::args().skip(1).partition(|arg| arg == "--json");
    let format = if json.is_empty() {
        Format::Text
    } else {
        Format::Json
    };
    let mut sessions = Vec::new();
    for path in paths {
        let file = std::fs::File::open(&path).expect("a readable file");
        match read_session(&path, BufReader::new(file)) {
            Ok(session) => sessions.push(replay_session(&session, &options)),
            Err(error) => eprintln!("{error}"),
        }
    }
    print!("{}", render(&sessions, &options, format));
}

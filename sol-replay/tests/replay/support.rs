//! Shared helpers: the fixture files and an independent summary of a file's entries.

use sol_replay::reader::{ReadError, Session, read_session};

/// The directory of the reader's fixture files.
pub(crate) const FIXTURES: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/sessions/reader");

/// The bytes of a fixture file.
pub(crate) fn fixture_bytes(name: &str) -> Vec<u8> {
    #[allow(clippy::disallowed_methods)] // Test fixtures are read from disk.
    std::fs::read(format!("{FIXTURES}/{name}")).expect("fixture")
}

/// Reads a fixture with the reader, named as the repository names it.
pub(crate) fn read_fixture(name: &str) -> Result<Session, ReadError> {
    let bytes = fixture_bytes(name);
    read_session(
        &format!("fixtures/sessions/reader/{name}"),
        bytes.as_slice(),
    )
}

/// The real recordings, one per Pi of the matrix.
pub(crate) const RECORDINGS: [&str; 4] = [
    "pi-0.84.2.jsonl",
    "pi-1.0.3.jsonl",
    "pi-1.3.0.jsonl",
    "pi-1.6.0.jsonl",
];

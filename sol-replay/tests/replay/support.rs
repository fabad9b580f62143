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

/// `shared/corpora/`, the real sessions kept beside the repository (never copied into it):
/// `<clone>/../shared/corpora` for a clone placed next to `shared/` (CI and the main
/// checkout), or the same folder further up for a git worktree placed deeper. `None` when no
/// ancestor of the workspace has it.
pub(crate) fn shared_corpora() -> Option<std::path::PathBuf> {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    workspace
        .ancestors()
        .skip(1)
        .map(|dir| dir.join("shared").join("corpora"))
        .find(|corpora| corpora.is_dir())
}

/// A step account without its model's tokens. The committed recordings' totals were written
/// before the live book took a compaction summary's tokens from the usage Pi reported, which
/// replay takes now: what a mechanism removed and how many calls it made still compare
/// exactly. (The JS tests compare fresh recordings the same way.)
pub(crate) fn removal(account: sol_core::StepAccount) -> sol_core::StepAccount {
    sol_core::StepAccount {
        model_input_tokens: 0,
        model_output_tokens: 0,
        ..account
    }
}

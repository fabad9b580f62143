//! The registry of other harnesses' file formats the replay reads: each a [`Format`] entry
//! (its name, a test of a file's first bytes, its reader into a harness-neutral
//! [`Trajectory`](super::neutral::Trajectory)). A file none of them takes is read as a Pi
//! session.
//!
//! ```
//! use sol_replay::reader::formats::detect;
//!
//! assert!(detect(br#"{"type": "session", "version": 3}"#).is_none());
//! ```

use super::{ReadError, Session, trajectory};

/// Another harness's file format: its name, how its files are told apart from the first
/// bytes (a Pi session is what none of them takes), and its reader.
#[derive(Debug, Clone, Copy)]
pub struct Format {
    /// The format's name, as the harness writes it.
    pub name: &'static str,
    /// Whether a file starting with these bytes is of this format.
    pub looks_like: fn(&[u8]) -> bool,
    /// The session a whole file (`file` names it) amounts to.
    pub read: fn(&str, &[u8]) -> Result<Session, ReadError>,
}

/// Every other harness's format the replay reads.
pub const FORMATS: &[Format] = &[Format {
    name: trajectory::MINI_SWE_AGENT_FORMAT,
    looks_like: trajectory::looks_like_trajectory,
    read: trajectory::read_trajectory,
}];

/// The format of [`FORMATS`] a file starting with `start` is of, if any (else it is read as
/// a Pi session).
pub fn detect(start: &[u8]) -> Option<&'static Format> {
    FORMATS.iter().find(|format| (format.looks_like)(start))
}

//! Replay of recorded Pi sessions for SoL-Pi in Rust: what SoL-Pi would have saved on a
//! session, with no model call, side by side with other context policies.
//!
//! - [`reader`]: a streaming reader of Pi's session files (JSONL) that keeps, for each
//!   entry, only what a replay needs (ids, parent links, roles, Pi's token estimates, tool
//!   facts, a digest of each tool result's text, and what ObservationPack and the reducer
//!   would make of a result, decided while its text is at hand), never the text itself, and
//!   finds the branch Pi would continue and every other leaf;
//! - [`replay`]: each branch's provider requests rebuilt as Pi builds them and booked, per
//!   policy, in the savings [`Book`](sol_core::savings::Book) the live extension keeps;
//! - [`render`]: the report as text, Markdown or JSON, with totals over several files;
//! - [`prices`]: the prices of every model of Pi's model registry, bundled, for pricing each
//!   request at the model that answered it.
//!
//! The crate is pure: no file system, no clock, no environment. The reader takes any
//! [`std::io::BufRead`] and the file's name for its messages; the host opens the file and
//! prints (the `sol-pi` binary of the `sol-pi-cli` crate).
//!
//! ```
//! use sol_replay::reader::read_session;
//!
//! let file = concat!(
//!     r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/p"}"#, "\n",
//!     r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-02T09:00:01.000Z","message":{"role":"user","content":"Fix the failing test","timestamp":1772442001000}}"#, "\n",
//! );
//! let session = read_session("demo.jsonl", file.as_bytes()).expect("a session");
//! assert_eq!(session.header().version, 3);
//! let branch = session.active_branch();
//! assert_eq!(branch.len(), 1);
//! assert_eq!(branch[0].message().map(|m| m.tokens), Some(5));
//! ```

pub mod prices;
pub mod reader;
pub mod render;
pub mod replay;

pub use reader::{ReadError, ReadErrorKind, ReadWarning, Session, read_session};
/// The shared vocabulary the reader builds on (Pi's messages and session entries).
pub use sol_core;

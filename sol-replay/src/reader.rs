//! A streaming reader of Pi's session files.
//!
//! # The format (Pi 0.84.2, 1.0.3, 1.3.0 and 1.6.0)
//!
//! A session file is JSONL: one JSON object per line, each line ended by `\n`. The first
//! line is the header, `{"type":"session","version":3,"id":...,"timestamp":...,"cwd":...}`
//! (plus `parentSession`, the file it was forked from, when it was); every version of the
//! matrix writes format version 3. Pi migrates older files when it opens them, and this
//! reader reads them the same way, in memory (the file is never written):
//!
//! - version 2 called extension messages `hookMessage`: they are read as `custom`;
//! - version 1 (a header with no `version` field, Pi of 2025) had no entry ids: every
//!   entry gets one and has the entry before it as its parent, so the file is one linear
//!   branch, and a compaction's `firstKeptEntryIndex` (the position of the entry in the
//!   file, the header being 0) becomes the `firstKeptEntryId` of that entry. An `id` or
//!   `parentId` a version 1 line holds anyway is replaced, as Pi replaces it. Pi draws
//!   random ids; this reader numbers the entries instead (8 hex digits of their position,
//!   the first entry `00000001`), so that two reads give the same ids.
//!
//! These are the rules of `migrateV1ToV2` and `migrateV2ToV3` in Pi's session manager,
//! identical in every version of the matrix (0.84.2, 1.0.3, 1.3.0, 1.6.0); Pi then writes
//! the migrated file back, which this reader never does.
//!
//! Every other line is an entry with a `type`, an `id` (8 hex digits), a `parentId` (`null`
//! for a root) and an ISO `timestamp`: `message`, `compaction`, `branch_summary`, `custom`,
//! `custom_message`, `label`, `session_info`, `model_change`, `thinking_level_change`, and
//! on Pi 1.x `usage` and `context_edit`. Pi only appends, each entry a child of the current
//! leaf, so a parent is always on an earlier line. Navigating the tree (`/tree`) moves the
//! leaf without writing anything, and the next entry (a `branch_summary` when the user asks
//! for one) is a child of an earlier entry: the file then holds a fork. When Pi opens a file
//! its leaf is the entry of the last line; no version writes the leaf down otherwise. A
//! resumed session appends to the same file, with no second header.
//!
//! # What the reader keeps
//!
//! It reads one line at a time and keeps a compact [`Entry`] per entry (its id, parent,
//! line, timestamp and the facts of its [`EntryKind`]: for a message its role, Pi's token
//! estimate, tool facts and a [`ContentDigest`] of a tool result's text), never the text of
//! a message, so memory grows with the number of entries, not with their size.
//!
//! A line that cannot be used is an error naming the file and the line ([`ReadError`]), and
//! so is a line or a file over the [`ReadLimits`]. What Pi itself writes and reads back is
//! read as Pi reads it:
//!
//! - a torn last line (no line end and not JSON, what a writer that stopped leaves) is a
//!   [`ReadWarning::TornLastLine`]: the entries before it are read;
//! - a torn line in the middle (a prefix of a JSON object cut short, then a line end: a crash,
//!   then Pi 1.x resumed the session and ended the line first) is left out, as Pi leaves out
//!   a line it cannot parse, with a [`ReadWarning::TornLine`]; Pi 0.84.2 resumed by appending
//!   its next entry to the torn bytes, and that entry is read. When the torn part holds its
//!   entry's `id` and `parentId`, an entry naming it as parent hangs from its parent (Pi would
//!   start the branch at that entry, losing what came before);
//! - a `\uXXXX` escape of a lone UTF-16 surrogate, which `JSON.stringify` writes for a
//!   JavaScript string holding one (an extension's tool text), is read as U+FFFD.
//!
//! Blank lines are passed over, as Pi passes over them.
//!
//! ```
//! use sol_replay::reader::{EntryKind, read_session};
//!
//! let file = concat!(
//!     r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/p"}"#, "\n",
//!     r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-02T09:00:01.000Z","message":{"role":"user","content":"hi"}}"#, "\n",
//!     r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-03-02T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"first answer"}]}}"#, "\n",
//!     r#"{"type":"message","id":"a3","parentId":"a1","timestamp":"2026-03-02T09:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"second"}]}}"#, "\n",
//!     r#"{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-03-02T09:00:04.0"#,
//! );
//! let session = read_session("fork.jsonl", file.as_bytes()).expect("a session");
//! let ids = |branch: Vec<&sol_replay::reader::Entry>| branch.iter().map(|e| e.id().to_owned()).collect::<Vec<_>>();
//! assert_eq!(ids(session.active_branch()), ["a1", "a3"]);
//! let all: Vec<_> = session.branches().map(ids).collect();
//! assert_eq!(all, [vec!["a1", "a2"], vec!["a1", "a3"]]);
//! assert!(matches!(session.entries()[0].kind(), EntryKind::Message(_)));
//! assert_eq!(
//!     session.warnings()[0].to_string(),
//!     "fork.jsonl:5: the last line is cut short (78 bytes without a line end, as a writer \
//!      that stopped leaves it); it is left out and the 3 entries before it are read"
//! );
//! ```

mod entry;
mod error;
pub mod formats;
mod line;
pub mod neutral;
pub mod trajectory;

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::sync::Arc;

use serde_json::Value;

pub use entry::{
    AssistantFacts, CompactionFacts, ContentDigest, Entry, EntryIndex, EntryKind, MessageFacts,
    PackFacts, QUOTE_MAX_LINES, QUOTE_MIN_BYTES, ReducedFacts, ReducerLog, Role, ToolCallFacts,
    ToolResultFacts, Usage, quotable_lines,
};
pub use error::{ReadError, ReadErrorKind, ReadWarning, Size};

/// The session format versions this reader knows, oldest first (1 and 2 migrated to 3 in
/// memory, as Pi migrates them).
pub const KNOWN_VERSIONS: [u64; 3] = [1, 2, 3];

/// The longest line the reader takes by default, line end not counted: 64 MiB. A line is
/// one entry, which Pi builds in memory with `JSON.stringify`; a tool result of several MB
/// (a large file read whole, an image) fits many times over, while input with no line end
/// at all (a device, a file of zeros) stops here instead of filling memory.
pub const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// The largest file the reader takes by default: 1 GiB. Pi keeps a whole session in
/// memory as parsed JSON, so real sessions (tens of MB) are far below it.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024 * 1024;

/// The bounds of one read ([`read_session_limited`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// The longest line, line end not counted ([`ReadErrorKind::LineTooLong`] past it).
    pub max_line_bytes: u64,
    /// The most bytes in the file ([`ReadErrorKind::FileTooLarge`] past it).
    pub max_file_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> ReadLimits {
        ReadLimits {
            max_line_bytes: MAX_LINE_BYTES,
            max_file_bytes: MAX_FILE_BYTES,
        }
    }
}

/// The header line of a session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHeader {
    /// The format version as the file has it (one of [`KNOWN_VERSIONS`]; 1 for a header
    /// with no `version` field, as Pi reads it); the entries are read migrated to 3.
    pub version: u64,
    /// The session id.
    pub id: String,
    /// When the session was created (ISO text as written).
    pub timestamp: Option<String>,
    /// The working directory the session ran in.
    pub cwd: Option<String>,
    /// The session file this one was forked from, if any.
    pub parent_session: Option<String>,
}

/// A session file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    file: String,
    header: SessionHeader,
    entries: Vec<Entry>,
    ids: BTreeMap<Arc<str>, EntryIndex>,
    warnings: Vec<ReadWarning>,
    lines: u64,
    bytes: u64,
}

impl Session {
    /// The file's name as the host gave it.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The header line.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry at `index`.
    pub fn entry(&self, index: EntryIndex) -> &Entry {
        &self.entries[index.get()]
    }

    /// The position of the entry with this id.
    pub fn index_of(&self, id: &str) -> Option<EntryIndex> {
        self.ids.get(id).copied()
    }

    /// What the reader passed over (torn lines).
    pub fn warnings(&self) -> &[ReadWarning] {
        &self.warnings
    }

    /// The lines read, the header, blank lines and a torn last line included.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// The bytes read.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The leaf Pi continues from when it opens the file: the entry of the last line
    /// (`None` for a file with only a header).
    pub fn leaf(&self) -> Option<EntryIndex> {
        self.entries
            .len()
            .checked_sub(1)
            .map(|last| EntryIndex(last as u32))
    }

    /// The active branch: the path from the root to [`Session::leaf`], root first, as Pi
    /// rebuilds the session from it.
    pub fn active_branch(&self) -> Vec<&Entry> {
        self.leaf().map_or_else(Vec::new, |leaf| self.branch(leaf))
    }

    /// The path from the root to `leaf`, root first.
    pub fn branch(&self, leaf: EntryIndex) -> Vec<&Entry> {
        let mut path = Vec::new();
        let mut next = Some(leaf);
        while let Some(index) = next {
            let entry = self.entry(index);
            path.push(entry);
            next = entry.parent;
        }
        path.reverse();
        path
    }

    /// Every leaf (an entry no other entry names as its parent), in file order; the last is
    /// [`Session::leaf`].
    pub fn leaves(&self) -> impl Iterator<Item = EntryIndex> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, entry)| !entry.has_children)
            .map(|(index, _)| EntryIndex(index as u32))
    }

    /// The branch of every leaf, in the order of [`Session::leaves`], each root first.
    pub fn branches(&self) -> impl Iterator<Item = Vec<&Entry>> + '_ {
        self.leaves().map(|leaf| self.branch(leaf))
    }
}

/// Reads a session file from `input`; `file` names it in messages.
pub fn read_session(file: &str, input: impl BufRead) -> Result<Session, ReadError> {
    read_session_with_progress(file, input, |_| {})
}

/// [`read_session`], calling `progress` with the bytes read so far after each line (for a
/// progress bar).
pub fn read_session_with_progress(
    file: &str,
    input: impl BufRead,
    progress: impl FnMut(u64),
) -> Result<Session, ReadError> {
    read_session_limited(file, input, ReadLimits::default(), progress)
}

/// [`read_session_with_progress`] within `limits`: a line or a file over them is an error
/// naming the limit, found before more than the limit is held in memory.
pub fn read_session_limited(
    file: &str,
    mut input: impl BufRead,
    limits: ReadLimits,
    mut progress: impl FnMut(u64),
) -> Result<Session, ReadError> {
    let mut reader = Reader {
        file,
        header: None,
        entries: Vec::new(),
        ids: BTreeMap::new(),
        lost: BTreeMap::new(),
        warnings: Vec::new(),
        names: entry::Names::default(),
        calls: entry::PendingCalls::default(),
    };
    let mut buffer = Vec::new();
    let mut line = 0u64;
    let mut bytes = 0u64;
    loop {
        buffer.clear();
        // One byte more than the longest line and its line end tells a longer line apart.
        let most = limits.max_line_bytes.saturating_add(1);
        let read = (&mut input)
            .take(most)
            .read_until(b'\n', &mut buffer)
            .map_err(|error| {
                reader.error(
                    line + 1,
                    ReadErrorKind::Io {
                        message: error.to_string(),
                    },
                )
            })?;
        if read == 0 {
            break;
        }
        line += 1;
        bytes += read as u64;
        let whole = buffer.last() == Some(&b'\n');
        if read as u64 == most && !whole {
            return Err(reader.error(
                line,
                ReadErrorKind::LineTooLong {
                    limit: limits.max_line_bytes,
                },
            ));
        }
        if bytes > limits.max_file_bytes {
            return Err(reader.error(
                line,
                ReadErrorKind::FileTooLarge {
                    limit: limits.max_file_bytes,
                },
            ));
        }
        if !reader.line(line, &buffer, whole)? {
            break;
        }
        progress(bytes);
    }
    let Some(header) = reader.header else {
        return Err(reader.error(1, ReadErrorKind::Empty));
    };
    Ok(Session {
        file: file.to_owned(),
        header,
        entries: reader.entries,
        ids: reader.ids,
        warnings: reader.warnings,
        lines: line,
        bytes,
    })
}

struct Reader<'a> {
    file: &'a str,
    header: Option<SessionHeader>,
    entries: Vec<Entry>,
    ids: BTreeMap<Arc<str>, EntryIndex>,
    /// The entries of torn lines whose id was written: their parent (as read), and their
    /// warning's index, so that an entry naming one as its parent hangs from that parent.
    lost: BTreeMap<String, (Option<EntryIndex>, usize)>,
    warnings: Vec<ReadWarning>,
    names: entry::Names,
    calls: entry::PendingCalls,
}

impl Reader<'_> {
    fn error(&self, line: u64, kind: ReadErrorKind) -> ReadError {
        ReadError {
            file: self.file.to_owned(),
            line,
            kind,
        }
    }

    /// Reads one line; `Ok(false)` after a torn last line.
    fn line(&mut self, line: u64, bytes: &[u8], whole: bool) -> Result<bool, ReadError> {
        let text = bytes.trim_ascii();
        if text.is_empty() {
            return Ok(true);
        }
        let value: Value = match line::parse(text) {
            Ok(value) => value,
            Err(broken) => {
                if self.header.is_none() {
                    let found = if whole {
                        "not JSON"
                    } else {
                        "cut short (no line end, not JSON)"
                    };
                    return Err(self.error(
                        line,
                        ReadErrorKind::NotASession {
                            found: found.to_owned(),
                        },
                    ));
                }
                match broken {
                    line::Broken::Torn { .. } | line::Broken::Invalid(_) if !whole => {
                        self.warnings.push(ReadWarning::TornLastLine {
                            file: self.file.to_owned(),
                            line,
                            bytes: bytes.len() as u64,
                            entries: self.entries.len(),
                        });
                        return Ok(false);
                    }
                    line::Broken::Torn { lost } => {
                        let torn = bytes.strip_suffix(b"\n").unwrap_or(bytes);
                        self.torn(line, torn.len(), lost, false);
                        return Ok(true);
                    }
                    line::Broken::TornThenEntry {
                        torn_bytes,
                        lost,
                        entry,
                    } => {
                        self.torn(line, torn_bytes, lost, true);
                        *entry
                    }
                    line::Broken::Invalid(error) => {
                        return Err(self.error(line, invalid_json(&error)));
                    }
                }
            }
        };
        match self.header {
            None => self.header = Some(self.session_header(line, value)?),
            Some(ref header) => {
                let version = header.version;
                self.entry(line, value, version)?;
            }
        }
        Ok(true)
    }

    /// A torn line in the middle of the file, left out as Pi leaves it out; `then_entry`
    /// when Pi appended its next entry to it.
    fn torn(&mut self, line: u64, bytes: usize, lost: Option<line::LostEntry>, then_entry: bool) {
        // Version 1 ids are given by position: an id a torn line holds names nothing.
        let lost = lost.filter(|_| self.header.as_ref().is_none_or(|header| header.version > 1));
        let lost_id = lost.as_ref().map(|lost| lost.id.clone());
        self.warnings.push(ReadWarning::TornLine {
            file: self.file.to_owned(),
            line,
            bytes: bytes as u64,
            then_entry,
            lost_id,
            adopted: 0,
        });
        if let Some(lost) = lost
            && !self.ids.contains_key(lost.id.as_str())
        {
            // Its parent as the entries after it will need it: itself a lost entry's, if so.
            let parent = lost.parent.as_deref().and_then(|parent| {
                self.ids
                    .get(parent)
                    .copied()
                    .or_else(|| self.lost.get(parent).and_then(|(parent, _)| *parent))
            });
            self.lost.insert(lost.id, (parent, self.warnings.len() - 1));
        }
    }

    /// Gives a version 1 entry what Pi's migration to version 2 gives it: an id, the entry
    /// before it as its parent, and for a compaction the id of the entry its
    /// `firstKeptEntryIndex` names.
    fn migrate_v1(&self, value: &mut Value) {
        if value.get("type").and_then(Value::as_str) == Some("session") {
            // A second header is an error, found by the caller.
            return;
        }
        // The entry's position among the lines Pi parsed, the header being 0.
        let position = self.entries.len() + 1;
        let id = v1_id(position);
        let parent = self
            .entries
            .last()
            .map_or(Value::Null, |previous| Value::from(previous.id()));
        value["id"] = Value::from(id.as_str());
        value["parentId"] = parent;
        if value.get("type").and_then(Value::as_str) == Some("compaction")
            && let Some(object) = value.as_object_mut()
            && let Some(index) = object.remove("firstKeptEntryIndex")
            && let Some(index) = index.as_f64()
        {
            // Pi looks the index up among the entries it has given ids so far (this one
            // included); an index ahead of it, past the end or of the header gives none.
            let kept = if index.fract() != 0.0 || index < 1.0 {
                None
            } else if index == position as f64 {
                Some(id)
            } else if index < position as f64 {
                Some(self.entries[index as usize - 1].id().to_owned())
            } else {
                None
            };
            if let Some(kept) = kept {
                object.insert("firstKeptEntryId".to_owned(), Value::from(kept));
            }
        }
    }

    fn session_header(&self, line: u64, value: Value) -> Result<SessionHeader, ReadError> {
        let not_a_session = |found: String| self.error(line, ReadErrorKind::NotASession { found });
        if value.get("type").and_then(Value::as_str) != Some("session") {
            return Err(not_a_session(describe(&value)));
        }
        let Some(id) = value.get("id").and_then(Value::as_str) else {
            return Err(not_a_session("a session header without an id".to_owned()));
        };
        let version = match value.get("version") {
            Some(version) => version
                .as_u64()
                .filter(|version| KNOWN_VERSIONS.contains(version))
                .ok_or_else(|| {
                    self.error(
                        line,
                        ReadErrorKind::UnknownVersion {
                            found: version.to_string(),
                        },
                    )
                })?,
            // Pi's oldest files have no version: Pi reads them as version 1.
            None => 1,
        };
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        Ok(SessionHeader {
            version,
            id: id.to_owned(),
            timestamp: text("timestamp"),
            cwd: text("cwd"),
            parent_session: text("parentSession"),
        })
    }

    fn entry(&mut self, line: u64, mut value: Value, version: u64) -> Result<(), ReadError> {
        if version < 2 && value.is_object() {
            self.migrate_v1(&mut value);
        }
        let entry_type = match value.get("type").and_then(Value::as_str) {
            Some("session") => return Err(self.error(line, ReadErrorKind::SecondHeader)),
            Some(entry_type) if value.is_object() => entry_type.to_owned(),
            _ => {
                return Err(self.error(
                    line,
                    ReadErrorKind::NotAnEntry {
                        found: describe(&value),
                    },
                ));
            }
        };
        let Some(id) = value.get("id").and_then(Value::as_str) else {
            return Err(self.error(line, ReadErrorKind::MissingId { entry_type }));
        };
        let id: Arc<str> = id.into();
        if let Some(first) = self.ids.get(&id) {
            let first_line = self.entries[first.get()].line;
            return Err(self.error(
                line,
                ReadErrorKind::DuplicateId {
                    id: id.to_string(),
                    first_line,
                },
            ));
        }
        let parent = match value.get("parentId") {
            None | Some(Value::Null) => None,
            Some(Value::String(parent)) => match self.ids.get(parent.as_str()) {
                Some(index) => Some(*index),
                // The parent's line was torn: its own parent stands in for it.
                None if self.lost.contains_key(parent.as_str()) => {
                    let (grandparent, warning) = self.lost[parent.as_str()];
                    if let Some(ReadWarning::TornLine { adopted, .. }) =
                        self.warnings.get_mut(warning)
                    {
                        *adopted += 1;
                    }
                    grandparent
                }
                None => {
                    return Err(self.error(
                        line,
                        ReadErrorKind::MissingParent {
                            id: id.to_string(),
                            parent: parent.clone(),
                        },
                    ));
                }
            },
            Some(_) => {
                return Err(self.error(line, ReadErrorKind::InvalidParentId { id: id.to_string() }));
            }
        };
        let Ok(position) = u32::try_from(self.entries.len()) else {
            return Err(self.error(
                line,
                ReadErrorKind::Io {
                    message: "more than 4,294,967,295 entries".to_owned(),
                },
            ));
        };
        if let Some(parent) = parent {
            self.entries[parent.get()].has_children = true;
        }
        let timestamp_ms = entry::timestamp_ms(&value);
        let kind = entry::entry_kind(
            &entry_type,
            value,
            version,
            &mut self.names,
            &mut self.calls,
        );
        self.ids.insert(id.clone(), EntryIndex(position));
        self.entries.push(Entry {
            id,
            parent,
            line,
            timestamp_ms,
            has_children: false,
            kind,
        });
        Ok(())
    }
}

/// The id the reader gives the version 1 entry at `position` (the first entry is 1).
fn v1_id(position: usize) -> String {
    format!("{position:08x}")
}

fn invalid_json(error: &serde_json::Error) -> ReadErrorKind {
    let text = error.to_string();
    // serde_json appends " at line L column C"; the line is always 1 here (one JSON line).
    let message = match text.rfind(" at line ") {
        Some(end) => text[..end].to_owned(),
        None => text,
    };
    ReadErrorKind::InvalidJson {
        message,
        column: error.column() as u64,
    }
}

/// A short description of a JSON value that is not what was expected.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "a JSON null".to_owned(),
        Value::Bool(_) => "a JSON boolean".to_owned(),
        Value::Number(_) => "a JSON number".to_owned(),
        Value::String(_) => "a JSON string".to_owned(),
        Value::Array(_) => "a JSON array".to_owned(),
        Value::Object(object) => match object.get("type") {
            Some(Value::String(entry_type)) => {
                let shown: String = entry_type.chars().take(40).collect();
                format!("an object of type \"{}\"", shown.escape_debug())
            }
            Some(_) => "an object whose \"type\" is not a string".to_owned(),
            None => "an object without a \"type\"".to_owned(),
        },
    }
}

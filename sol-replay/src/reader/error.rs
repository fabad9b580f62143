//! What can go wrong reading a session file, and what is only a warning.

use std::fmt;

use super::KNOWN_VERSIONS;

/// A session file that cannot be replayed: the file, the 1-based line and what is wrong
/// there. Its `Display` is one line: `file:line: what`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {kind}")]
pub struct ReadError {
    /// The file's name as the host gave it.
    pub file: String,
    /// The 1-based line number.
    pub line: u64,
    /// What is wrong.
    pub kind: ReadErrorKind,
}

/// What is wrong with a line of a session file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadErrorKind {
    /// No line at all (or only blank lines).
    #[error(
        "the file is empty (or only blank lines); a Pi session file starts with a session header line"
    )]
    Empty,
    /// The first line is not Pi's session header.
    #[error(
        "not a Pi session: the first line is {found}, where Pi writes its session header \
         ({{\"type\":\"session\",\"version\":3,\"id\":...}})"
    )]
    NotASession {
        /// What the line is instead (`not JSON`, `a JSON array`, ...).
        found: String,
    },
    /// The header names a format version this reader does not know.
    #[error(
        "session format version {found} is unknown: this reader knows versions {} \
         (Pi 0.84.2 to 1.6.0 write version 3)",
        KnownVersions
    )]
    UnknownVersion {
        /// The version as written (a header with no version is version 1, which reads).
        found: String,
    },
    /// A line that is not JSON (and is not a torn last line).
    #[error("broken line: not valid JSON ({message} at column {column})")]
    InvalidJson {
        /// serde_json's description, without its position.
        message: String,
        /// The 1-based column (byte) where parsing stopped.
        column: u64,
    },
    /// A JSON line that is not an entry object with a string `type`.
    #[error("broken line: {found}, not a session entry (an object with a \"type\" and an \"id\")")]
    NotAnEntry {
        /// What the line is instead.
        found: String,
    },
    /// An entry without a string `id`.
    #[error("broken line: a \"{entry_type}\" entry without an \"id\"")]
    MissingId {
        /// The entry's type.
        entry_type: String,
    },
    /// An entry whose `parentId` is neither `null` nor a string.
    #[error("broken line: the entry \"{id}\" has a \"parentId\" that is neither null nor an id")]
    InvalidParentId {
        /// The entry's id.
        id: String,
    },
    /// A second session header after the first.
    #[error("broken line: a second session header (the header is line 1 only)")]
    SecondHeader,
    /// An id an earlier line already used.
    #[error("the entry id \"{id}\" is already used on line {first_line}")]
    DuplicateId {
        /// The repeated id.
        id: String,
        /// The line that used it first.
        first_line: u64,
    },
    /// A `parentId` that no earlier line holds (Pi appends a child after its parent).
    #[error("the entry \"{id}\" names the parent \"{parent}\", which no earlier line holds")]
    MissingParent {
        /// The entry's id.
        id: String,
        /// The parent it names.
        parent: String,
    },
    /// A line longer than the reader takes ([`ReadLimits::max_line_bytes`](super::ReadLimits)).
    #[error(
        "the line is longer than {} ({limit} bytes), the most this reader takes in one line of a \
         session file; the file is not read",
        Size(*limit)
    )]
    LineTooLong {
        /// The limit, in bytes.
        limit: u64,
    },
    /// More bytes than the reader takes in one file
    /// ([`ReadLimits::max_file_bytes`](super::ReadLimits)).
    #[error(
        "the file goes on past {} ({limit} bytes), the most this reader takes in one session \
         file; the file is not read",
        Size(*limit)
    )]
    FileTooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// A file that reads as a mini-swe-agent trajectory (a JSON object, not JSON lines) but
    /// is not one this reader takes.
    #[error("not a mini-swe-agent trajectory this reader takes: {message}")]
    BadTrajectory {
        /// What is wrong.
        message: String,
    },
    /// The input itself failed (an I/O error of the reader the host passed).
    #[error("reading failed: {message}")]
    Io {
        /// The I/O error's text.
        message: String,
    },
}

/// A size in bytes as a person reads it: in MiB or GiB when it is a whole number of them.
pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MIB: u64 = 1024 * 1024;
        const GIB: u64 = 1024 * MIB;
        match self.0 {
            bytes if bytes >= GIB && bytes % GIB == 0 => write!(f, "{} GiB", bytes / GIB),
            bytes if bytes >= MIB && bytes % MIB == 0 => write!(f, "{} MiB", bytes / MIB),
            bytes => write!(f, "{bytes} bytes"),
        }
    }
}

struct KnownVersions;

impl fmt::Display for KnownVersions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let last = KNOWN_VERSIONS.len().saturating_sub(1);
        for (i, version) in KNOWN_VERSIONS.iter().enumerate() {
            let separator = match i {
                0 => "",
                _ if i == last => " and ",
                _ => ", ",
            };
            write!(f, "{separator}{version}")?;
        }
        Ok(())
    }
}

/// Something the reader passed over and the host should tell the user about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadWarning {
    /// The last line has no line end and is not JSON: a writer stopped in the middle of it.
    /// The entries of the lines before it are read; this line is not.
    #[error(
        "{file}:{line}: the last line is cut short ({bytes} bytes without a line end, as a \
         writer that stopped leaves it); it is left out and the {entries} entries before it are read"
    )]
    TornLastLine {
        /// The file's name as the host gave it.
        file: String,
        /// The 1-based line number of the torn line.
        line: u64,
        /// Its length in bytes.
        bytes: u64,
        /// How many entries the lines before it hold.
        entries: usize,
    },
    /// A line in the middle that a writer stopped in (a crash), left out as Pi leaves it out
    /// when it opens the file; when Pi resumed the session it went on after it, on the next
    /// line (Pi 1.x ends the torn line first) or on the same one (Pi 0.84.2), and that entry
    /// is read.
    #[error("{}", torn_line_text(file, *line, *bytes, *then_entry, lost_id.as_deref(), *adopted))]
    TornLine {
        /// The file's name as the host gave it.
        file: String,
        /// The 1-based line number.
        line: u64,
        /// The torn part's length in bytes.
        bytes: u64,
        /// Pi appended its next entry to the torn part, on the same line; it is read.
        then_entry: bool,
        /// The id of the entry the torn part began, when the part holds it.
        lost_id: Option<String>,
        /// Entries that name the lost entry as their parent: each hangs from the lost
        /// entry's own parent instead.
        adopted: usize,
    },
}

fn torn_line_text(
    file: &str,
    line: u64,
    bytes: u64,
    then_entry: bool,
    lost_id: Option<&str>,
    adopted: usize,
) -> String {
    let mut text = format!(
        "{file}:{line}: a line cut short by a writer that stopped ({bytes} bytes, not JSON) is \
         left out, as Pi leaves it out"
    );
    if then_entry {
        text.push_str("; the entry Pi appended to it when it resumed is read");
    }
    if let (Some(id), 1..) = (lost_id, adopted) {
        let (entries, hang) = if adopted == 1 {
            ("entry", "hangs")
        } else {
            ("entries", "hang")
        };
        text.push_str(&format!(
            "; {adopted} {entries} naming its entry \"{}\" as parent {hang} from that entry's \
             parent instead",
            id.escape_debug()
        ));
    }
    text
}

//! The records the archive's modules share: where a recall or a search page sits
//! ([`RecallDetails`], [`SearchDetails`]), what is wrong with a stored observation
//! ([`Damage`]) and why storing or recalling failed ([`StoreError`], [`RecallError`]). The
//! ledger, the store, recall and search all name them; this module names none of those, so
//! the four depend on it and not on one another in a circle. Each is re-exported where it
//! was first defined (`recall::RecallDetails`, `store::Damage`, ...).

use serde::{Deserialize, Serialize};
use sol_core::FsError;

use crate::observation::{ObservationId, ObservationIdError, shown_id};
use crate::policy::QUERY_MAX_BYTES;
#[cfg(doc)]
use crate::text::Names;

/// Where a recall page sits in the observation. Serialized in camelCase:
/// `{"id","offset","bytes","lines","nextOffset","eof"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallDetails {
    /// The observation.
    pub id: ObservationId,
    /// Byte offset of the chunk's first byte.
    pub offset: u64,
    /// Size of the chunk in bytes.
    pub bytes: u64,
    /// Lines in the chunk: LF characters, plus one if it is non-empty and does not end with LF.
    pub lines: u64,
    /// Where the next page starts: `offset + bytes`.
    pub next_offset: u64,
    /// Whether this page reaches the end of the observation.
    pub eof: bool,
}

/// Why a recall or a search could not return a page. The `Display` text is what the model
/// reads as the tool's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecallError {
    /// The id is malformed, or nothing is stored under it.
    #[error("Unknown observation id: {}", shown_id(.id))]
    UnknownId {
        /// The id as given.
        id: String,
    },
    /// The offset lies past the end of the observation.
    #[error("Offset {offset} exceeds observation size {size}")]
    OffsetBeyondSize {
        /// The requested offset.
        offset: u64,
        /// Size of the observation in bytes.
        size: u64,
    },
    /// The offset points into the middle of a multi-byte UTF-8 character.
    #[error(
        "Offset {offset} falls inside a multi-byte UTF-8 character of {id}; use 0 or a next_offset returned by {recall_tool}"
    )]
    OffsetInsideCharacter {
        /// The observation.
        id: ObservationId,
        /// The requested offset.
        offset: u64,
        /// The recall tool's name ([`Names::recall_tool`]).
        recall_tool: String,
    },
    /// The offset is not a whole number of bytes from 0 to [`MAX_OFFSET`] (a fraction, a
    /// negative number, not a number at all): it is refused, never rounded.
    #[error(
        "Offset {offset} is not a byte offset: give a whole number from 0 to {MAX_OFFSET}, such as 0 or a next_offset returned by {recall_tool}"
    )]
    InvalidOffset {
        /// The offset as given, written as JSON writes it (`1.5`, `1e-300`, `-1`).
        offset: String,
        /// The recall tool's name ([`Names::recall_tool`]).
        recall_tool: String,
    },
    /// The page would exceed 16384 bytes or 400 lines (a defect: pages are built to fit).
    #[error("Recall output exceeded its hard limit")]
    OutputTooLarge,
    /// The search query is empty.
    #[error("Search query is empty; give the exact text to search for")]
    EmptyQuery,
    /// The search query is longer than 256 bytes.
    #[error("Search query is {bytes} bytes long; the limit is {QUERY_MAX_BYTES} bytes of UTF-8")]
    QueryTooLong {
        /// Size of the query in UTF-8 bytes.
        bytes: usize,
    },
    /// The stored bytes are not UTF-8 text, so they cannot be returned as a tool result.
    #[error("Stored observation is not valid UTF-8 text for {id}")]
    NotText {
        /// The observation.
        id: ObservationId,
    },
    /// The stored observation is damaged and the current branch's history does not hold
    /// its original, so it could not be rebuilt.
    #[error(
        "Stored observation {id} is damaged ({damage}); it could not be rebuilt from this branch's history"
    )]
    DamagedNotRebuilt {
        /// The observation.
        id: ObservationId,
        /// What is wrong with it.
        damage: Damage,
    },
    /// The archive could not be read or failed its checks.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl RecallError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            RecallError::UnknownId { .. } => "unknown_id",
            RecallError::OffsetBeyondSize { .. } => "offset_beyond_size",
            RecallError::OffsetInsideCharacter { .. } => "offset_inside_character",
            RecallError::InvalidOffset { .. } => "invalid_offset",
            RecallError::OutputTooLarge => "output_too_large",
            RecallError::EmptyQuery => "empty_query",
            RecallError::QueryTooLong { .. } => "query_too_long",
            RecallError::NotText { .. } => "not_text",
            RecallError::DamagedNotRebuilt { .. } => "damaged_not_rebuilt",
            RecallError::Store(error) => error.code(),
        }
    }

    /// Whether the original from history can fix this: nothing is stored under the id, or
    /// what is stored is damaged (see [`ObservationStore::read_or_rebuild`](crate::ObservationStore::read_or_rebuild)).
    pub fn is_rebuildable(&self) -> bool {
        matches!(
            self,
            RecallError::UnknownId { .. } | RecallError::Store(StoreError::Damaged { .. })
        )
    }
}

impl From<ObservationIdError> for RecallError {
    fn from(error: ObservationIdError) -> Self {
        RecallError::UnknownId {
            id: error.rejected_id().to_owned(),
        }
    }
}

/// The largest offset a recall accepts: 2^53 - 1, the largest whole number a JSON number
/// (a JavaScript number) holds exactly. Observations are far smaller.
pub const MAX_OFFSET: u64 = (1 << 53) - 1;

/// What is wrong with a stored observation. The `Display` text is a lower-case phrase
/// that fits in `"Stored observation <id> is damaged (<damage>)"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
pub enum Damage {
    /// The object is there but its record is not (a crash between the two writes).
    #[error("its record is missing")]
    RecordMissing,
    /// The record is not a valid record of this observation.
    #[error("its record is invalid: {reason}")]
    RecordInvalid {
        /// What is wrong with it, lower-case.
        reason: String,
    },
    /// The record is there but the object is not.
    #[error("its object file is missing")]
    ObjectMissing,
    /// The object has another size than the original.
    #[error("{}", size_phrase(*.expected, *.found, *.unvouched))]
    SizeMismatch {
        /// The original's size in bytes.
        expected: u64,
        /// The size found, or `None` when the file is larger than `expected + 1`.
        found: Option<u64>,
        /// True when no valid record vouches for the expected size (it comes from the
        /// original being stored).
        unvouched: bool,
    },
    /// The object has the right size but other bytes.
    #[error("its object's SHA-256 differs from the original's")]
    HashMismatch,
}

fn size_phrase(expected: u64, found: Option<u64>, unvouched: bool) -> String {
    let source = if unvouched {
        "the original"
    } else {
        "its record"
    };
    match found {
        Some(found) => format!("its object has {found} bytes, {source} has {expected}"),
        None => format!("its object is larger than the {expected} bytes of {source}"),
    }
}

/// Why the archive or the ledger could not be written or read. Messages name the
/// observation; the host logs them and fails open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A component of the storage path is a symlink or not a directory.
    #[error("Observation directory is not a regular directory for {id}: {reason}")]
    DirectoryNotRegular {
        /// The observation being stored or recalled.
        id: ObservationId,
        /// What is wrong with it (a symbolic link in the path, a file in the way).
        reason: String,
    },
    /// The object path holds a symlink, which is never followed.
    #[error("Content-addressed observation is a symlink for {id}; symlinks are never followed")]
    ObjectSymlink {
        /// The observation.
        id: ObservationId,
    },
    /// The object path holds a directory or another non-file.
    #[error("Content-addressed observation is not a regular file for {id}")]
    ObjectNotRegularFile {
        /// The observation.
        id: ObservationId,
    },
    /// The object or its record is damaged (see [`Damage`]) and was not rebuilt: the
    /// original was not at hand.
    #[error("Stored observation {id} is damaged ({damage})")]
    Damaged {
        /// The observation.
        id: ObservationId,
        /// What is wrong.
        damage: Damage,
    },
    /// The record path holds a symlink or a non-file, which is never read or replaced.
    #[error("Observation record is invalid for {id}: {reason}")]
    RecordInvalid {
        /// The observation.
        id: ObservationId,
        /// What is wrong with it, lower-case.
        reason: String,
    },
    /// The observation given to the store
    /// ([`ensure_stored`](crate::store::ObservationStore::ensure_stored)) was not made from
    /// the text given with it.
    #[error("Observation does not describe the given text for {id}")]
    ObservationMismatch {
        /// The observation.
        id: ObservationId,
    },
    /// The file system refused an operation.
    #[error("Observation storage failed for {id}: {source}")]
    Io {
        /// The observation.
        id: ObservationId,
        /// The port's error.
        source: FsError,
    },
    /// The ledger could not be appended to.
    #[error("Observation ledger append failed: {source}")]
    LedgerAppend {
        /// The port's error.
        source: FsError,
    },
    /// The ledger could not be read back.
    #[error("Observation ledger read failed: {source}")]
    LedgerRead {
        /// The port's error.
        source: FsError,
    },
}

impl StoreError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::DirectoryNotRegular { .. } => "directory_not_regular",
            StoreError::ObjectSymlink { .. } => "object_symlink",
            StoreError::ObjectNotRegularFile { .. } => "object_not_regular_file",
            StoreError::Damaged { .. } => "damaged",
            StoreError::RecordInvalid { .. } => "record_invalid",
            StoreError::ObservationMismatch { .. } => "observation_mismatch",
            StoreError::Io { .. } => "io",
            StoreError::LedgerAppend { .. } => "ledger_append_failed",
            StoreError::LedgerRead { .. } => "ledger_read_failed",
        }
    }
}

/// The matches of one search page. Serialized in camelCase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchDetails {
    /// The observation.
    pub id: ObservationId,
    /// The literal text searched for.
    pub query: String,
    /// Where the page starts: matches start at or after this byte offset.
    pub offset: u64,
    /// The matches, in order.
    pub matches: Vec<MatchDetail>,
    /// Bytes this page covers: `next_offset - offset`.
    pub scanned_bytes: u64,
    /// Where the next page starts: the first match not reported, or the size at the end.
    pub next_offset: u64,
    /// Whether there are no more matches after this page.
    pub eof: bool,
}

/// One occurrence of the query. Offsets are 0-based byte offsets into the observation;
/// the context span excludes its end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchDetail {
    /// Byte offset where the match starts.
    pub byte_offset: u64,
    /// 1-based line number of the match's first byte.
    pub line: u64,
    /// Byte offset where the context starts.
    pub context_start: u64,
    /// Byte offset just past the context.
    pub context_end: u64,
    /// The original text from `context_start` to `context_end`.
    pub context: String,
}

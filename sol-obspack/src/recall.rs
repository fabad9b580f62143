//! Paged recall: one page of the original text per `obs_recall` call.
//!
//! A page is two header lines and a chunk of the original bytes starting at the requested
//! offset. The chunk holds at most [`RECALL_CHUNK_MAX_BYTES`] bytes and
//! [`RECALL_CHUNK_MAX_LINES`] lines (it ends after the 398th LF if it gets there), and
//! never ends inside a UTF-8 character. Reading from offset 0 and then from each
//! `next_offset` until `eof` returns every byte exactly once, in order.
//!
//! ```text
//! [obs_recall id=<id> offset=<offset> next_offset=<next> eof=<true|false>]
//! [chunk_bytes=<bytes> chunk_lines=<lines>; use next_offset to continue]
//! <chunk>
//! ```
//!
//! ```
//! use sol_obspack::{observe, recall_page};
//!
//! let text = "é".repeat(10_000); // 20,000 bytes, no line break
//! let obs = observe("read", "call_2", &text);
//! let first = recall_page(&obs.id, text.as_bytes(), 0)?;
//! assert_eq!(first.details.bytes, 15_872);
//! assert!(!first.details.eof);
//! let second = recall_page(&obs.id, text.as_bytes(), first.details.next_offset)?;
//! assert!(second.details.eof);
//! assert_eq!(first.chunk().len() + second.chunk().len(), text.len());
//! # Ok::<(), sol_obspack::RecallError>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::observation::{ObservationId, ObservationIdError, count_lines, shown_id};
use crate::placeholder::floor_char_boundary;
use crate::policy::{
    QUERY_MAX_BYTES, RECALL_CHUNK_MAX_BYTES, RECALL_CHUNK_MAX_LINES, RECALL_MAX_BYTES,
    RECALL_MAX_LINES,
};
use crate::store::{Damage, StoreError};
use crate::text::Names;

/// One page of a recalled observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallPage {
    /// The tool result text: the two header lines, then the chunk.
    pub text: String,
    /// The page's position, for the tool result's `details` and the `recall` ledger record.
    pub details: RecallDetails,
}

impl RecallPage {
    /// The chunk of original text on this page (the text after the two header lines).
    pub fn chunk(&self) -> &str {
        let header_end = self
            .text
            .match_indices('\n')
            .nth(1)
            .map_or(self.text.len(), |(index, _)| index + 1);
        &self.text[header_end..]
    }
}

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

/// The byte offset of a recall call from the tool's `offset` argument as JSON gives it (a
/// double; absent means 0). Only a whole number from 0 to [`MAX_OFFSET`] is an offset:
/// `1.5`, `1e-300`, `-1`, `NaN` or `1e300` are refused with
/// [`RecallError::InvalidOffset`], never rounded to another page. `-0` is 0.
///
/// ```
/// use sol_obspack::{parse_offset, Names, RecallError};
///
/// let names = Names::default();
/// assert_eq!(parse_offset(None, &names)?, 0);
/// assert_eq!(parse_offset(Some(15_872.0), &names)?, 15_872);
/// let error = parse_offset(Some(1.5), &names).unwrap_err();
/// assert_eq!(error.code(), "invalid_offset");
/// assert!(error.to_string().starts_with("Offset 1.5 is not a byte offset"));
/// assert!(parse_offset(Some(1e-300), &names).is_err());
/// # Ok::<(), RecallError>(())
/// ```
pub fn parse_offset(offset: Option<f64>, names: &Names) -> Result<u64, RecallError> {
    let Some(offset) = offset else {
        return Ok(0);
    };
    // NaN fails every comparison, so it is refused here too.
    let whole = offset.fract() == 0.0 && (0.0..=MAX_OFFSET as f64).contains(&offset);
    if !whole {
        // As JSON writes it: `-1`, not Rust's `-1.0`; `1.5` and `1e-300` as they are.
        let shown = if offset.fract() == 0.0 && offset.abs() < 1e21 {
            format!("{offset:.0}")
        } else {
            format!("{offset:?}")
        };
        return Err(RecallError::InvalidOffset {
            offset: shown,
            recall_tool: names.recall_tool().to_owned(),
        });
    }
    // Exact: a whole number of at most 53 bits.
    Ok(offset as u64)
}

/// The page of `original` (the stored bytes of observation `id`) that starts at `offset`,
/// its header naming Pi's recall tool ([`recall_page_with`] names another).
///
/// Errors: `offset` past the end, `offset` inside a multi-byte character, or `original`
/// not UTF-8. `offset` equal to the size gives an empty page with `eof=true`.
pub fn recall_page(
    id: &ObservationId,
    original: &[u8],
    offset: u64,
) -> Result<RecallPage, RecallError> {
    recall_page_with(id, original, offset, &Names::default())
}

/// [`recall_page`] with the recall tool named by `names`.
pub fn recall_page_with(
    id: &ObservationId,
    original: &[u8],
    offset: u64,
    names: &Names,
) -> Result<RecallPage, RecallError> {
    let text = text_at(id, original, offset, names)?;
    // `text_at` checked that `offset` is a character boundary within the text.
    let start = offset as usize;
    let rest = &text.as_bytes()[start..];
    let mut end = rest.len().min(RECALL_CHUNK_MAX_BYTES);
    if let Some((feed, _)) = rest[..end]
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte == b'\n')
        .nth(RECALL_CHUNK_MAX_LINES - 1)
    {
        end = feed + 1;
    }
    // Never split a character. The cut moves back at most 3 bytes, and a cut short of the
    // end of the text is at least 398 bytes in, so every page but the last makes progress.
    let end = floor_char_boundary(text, start + end);
    let chunk = &text[start..end];
    let details = RecallDetails {
        id: id.clone(),
        offset,
        bytes: chunk.len() as u64,
        lines: count_lines(chunk.as_bytes()),
        next_offset: end as u64,
        eof: end == text.len(),
    };
    let text = format!(
        "[{recall} id={id} offset={offset} next_offset={next} eof={eof}]\n\
         [chunk_bytes={bytes} chunk_lines={lines}; use next_offset to continue]\n{chunk}",
        recall = names.recall_tool(),
        next = details.next_offset,
        eof = details.eof,
        bytes = details.bytes,
        lines = details.lines,
    );
    check_hard_limit(&text)?;
    Ok(RecallPage { text, details })
}

/// `original` as text, after checking that `offset` may start a page.
pub(crate) fn text_at<'a>(
    id: &ObservationId,
    original: &'a [u8],
    offset: u64,
    names: &Names,
) -> Result<&'a str, RecallError> {
    let text =
        std::str::from_utf8(original).map_err(|_| RecallError::NotText { id: id.clone() })?;
    let size = text.len() as u64;
    if offset > size {
        return Err(RecallError::OffsetBeyondSize { offset, size });
    }
    if !text.is_char_boundary(offset as usize) {
        return Err(RecallError::OffsetInsideCharacter {
            id: id.clone(),
            offset,
            recall_tool: names.recall_tool().to_owned(),
        });
    }
    Ok(text)
}

/// Refuses a tool result text over [`RECALL_MAX_BYTES`] or [`RECALL_MAX_LINES`].
pub(crate) fn check_hard_limit(text: &str) -> Result<(), RecallError> {
    if text.len() > RECALL_MAX_BYTES || count_lines(text.as_bytes()) > RECALL_MAX_LINES as u64 {
        Err(RecallError::OutputTooLarge)
    } else {
        Ok(())
    }
}

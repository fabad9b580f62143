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

use crate::observation::{ObservationId, count_lines};
use crate::placeholder::floor_char_boundary;
use crate::policy::{
    RECALL_CHUNK_MAX_BYTES, RECALL_CHUNK_MAX_LINES, RECALL_MAX_BYTES, RECALL_MAX_LINES,
};
pub use crate::records::{MAX_OFFSET, RecallDetails, RecallError};
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

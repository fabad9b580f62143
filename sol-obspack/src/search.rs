//! Literal search: `obs_recall` with a `query` lists where an exact text occurs.
//!
//! The search is case-sensitive and byte-exact (no regular expression, no normalization).
//! Matches may overlap: in `aaaa`, `aa` occurs at 0, 1 and 2. A page reports every match
//! that starts in `[offset, next_offset)`, at most [`QUERY_MAX_MATCHES`] of them and no more
//! than fit in the recall limits (16384 bytes, 400 lines). `next_offset` is where the first
//! unreported match starts, or the size of the observation when there is none (`eof=true`),
//! so a page never needs an empty follow-up call to prove the end.
//!
//! ```text
//! [obs_recall id=<id> query=<JSON string> offset=<offset> next_offset=<next> eof=<true|false> matches=<k>]
//! [scanned_bytes=<n>; one match per line: line <n> byte <offset>: <context as a JSON string>; use next_offset with the same query to continue]
//! line 12 byte 3051: "error[E0308]: mismatched types"
//! ```
//!
//! Each match's context is the part of its own line(s) around it: from at most
//! [`SEARCH_CONTEXT_BYTES`] bytes before the match, but not before the start of its first
//! line, to at most [`SEARCH_CONTEXT_BYTES`] bytes after it, but not past the end of its last
//! line, cut so that no character is split. It is printed as a JSON string, so each match
//! takes exactly one line whatever the query or the text contains. Line numbers start at 1
//! and count LF characters before the match (an LF belongs to the line it ends).
//!
//! Every page rescans the text before `offset` to number lines; nothing is kept between calls.
//!
//! ```
//! use sol_obspack::{observe, search_page};
//!
//! let log = "ok\nerror: a\nok\nerror: b\n".repeat(600);
//! let obs = observe("bash", "call_3", &log);
//! let page = search_page(&obs.id, log.as_bytes(), "error:", 0)?;
//! assert_eq!(page.details.matches.len(), 20);
//! assert_eq!(page.details.matches[0].line, 2);
//! assert_eq!(page.details.matches[0].byte_offset, 3);
//! assert_eq!(page.details.matches[0].context, "error: a");
//! assert!(!page.details.eof);
//! # Ok::<(), sol_obspack::RecallError>(())
//! ```

use crate::observation::ObservationId;
use crate::placeholder::{ceil_char_boundary, floor_char_boundary};
use crate::policy::{QUERY_MAX_BYTES, QUERY_MAX_MATCHES, RECALL_MAX_BYTES, SEARCH_CONTEXT_BYTES};
use crate::recall::{check_hard_limit, text_at};
use crate::records::RecallError;
pub use crate::records::{MatchDetail, SearchDetails};
use crate::text::Names;

/// One page of search results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPage {
    /// The tool result text: two header lines, then one line per match.
    pub text: String,
    /// The matches and the page's position, for the tool result's `details`.
    pub details: SearchDetails,
}

/// The page of matches of `query` in `original` (the stored bytes of observation `id`)
/// that starts at `offset`.
///
/// Errors: an empty query or one over [`QUERY_MAX_BYTES`] bytes, then the same offset and
/// text errors as [`recall_page`](crate::recall_page).
pub fn search_page(
    id: &ObservationId,
    original: &[u8],
    query: &str,
    offset: u64,
) -> Result<SearchPage, RecallError> {
    search_page_with(id, original, query, offset, &Names::default())
}

/// [`search_page`] with the recall tool named by `names`.
pub fn search_page_with(
    id: &ObservationId,
    original: &[u8],
    query: &str,
    offset: u64,
    names: &Names,
) -> Result<SearchPage, RecallError> {
    if query.is_empty() {
        return Err(RecallError::EmptyQuery);
    }
    if query.len() > QUERY_MAX_BYTES {
        return Err(RecallError::QueryTooLong { bytes: query.len() });
    }
    let text = text_at(id, original, offset, names)?;
    let size = text.len() as u64;
    let quoted_query = json_string(query);

    // Room for the header lines at their longest: every number as long as the size.
    let tool_and_id = format!("{} id={id}", names.recall_tool());
    let longest = header_lines(
        &tool_and_id,
        &quoted_query,
        offset,
        size,
        false,
        QUERY_MAX_MATCHES,
        size,
    );
    let mut budget = RECALL_MAX_BYTES.saturating_sub(longest.len());

    let start = offset as usize;
    let step = query.chars().next().map_or(1, char::len_utf8);
    let mut line = 1 + count_feeds(&text.as_bytes()[..start]);
    let mut counted_to = start;
    let mut matches = Vec::new();
    let mut lines_out = Vec::new();
    let mut next_offset = size;
    let mut search_from = start;
    while let Some(found) = text[search_from..].find(query) {
        let at = search_from + found;
        if matches.len() == QUERY_MAX_MATCHES {
            next_offset = at as u64;
            break;
        }
        line += count_feeds(&text.as_bytes()[counted_to..at]);
        counted_to = at;
        let detail = match_detail(text, at, query.len(), line);
        let rendered = format!("line {line} byte {at}: {}", json_string(&detail.context));
        // One LF joins each match line to what comes before it.
        if rendered.len() + 1 > budget {
            next_offset = at as u64;
            break;
        }
        budget -= rendered.len() + 1;
        lines_out.push(rendered);
        matches.push(detail);
        // A query starts with a whole character, so the next match can start one character on.
        search_from = at + step;
    }
    if matches.is_empty() && next_offset < size {
        // Not even one match fits; stopping here would never advance.
        return Err(RecallError::OutputTooLarge);
    }

    let eof = next_offset == size;
    let scanned = next_offset - offset;
    let mut out = header_lines(
        &tool_and_id,
        &quoted_query,
        offset,
        next_offset,
        eof,
        matches.len(),
        scanned,
    );
    for rendered in &lines_out {
        out.push('\n');
        out.push_str(rendered);
    }
    check_hard_limit(&out)?;
    Ok(SearchPage {
        text: out,
        details: SearchDetails {
            id: id.clone(),
            query: query.to_owned(),
            offset,
            matches,
            scanned_bytes: scanned,
            next_offset,
            eof,
        },
    })
}

/// The two header lines; `tool_and_id` is `<recall tool> id=<id>`.
fn header_lines(
    tool_and_id: &str,
    quoted_query: &str,
    offset: u64,
    next_offset: u64,
    eof: bool,
    matches: usize,
    scanned: u64,
) -> String {
    format!(
        "[{tool_and_id} query={quoted_query} offset={offset} next_offset={next_offset} eof={eof} matches={matches}]\n\
         [scanned_bytes={scanned}; one match per line: line <n> byte <offset>: <context as a JSON string>; \
         use next_offset with the same query to continue]"
    )
}

/// The match of `query_len` bytes at `at`, on line `line`, with its context.
fn match_detail(text: &str, at: usize, query_len: usize, line: u64) -> MatchDetail {
    let bytes = text.as_bytes();
    let end = at + query_len;
    let earliest = at.saturating_sub(SEARCH_CONTEXT_BYTES);
    let line_start = bytes[earliest..at]
        .iter()
        .rposition(|&byte| byte == b'\n')
        .map_or(earliest, |feed| earliest + feed + 1);
    let context_start = ceil_char_boundary(text, line_start);
    let latest = (end + SEARCH_CONTEXT_BYTES).min(bytes.len());
    let line_end = bytes[end..latest]
        .iter()
        .position(|&byte| byte == b'\n')
        .map_or(latest, |feed| end + feed);
    let context_end = floor_char_boundary(text, line_end);
    MatchDetail {
        byte_offset: at as u64,
        line,
        context_start: context_start as u64,
        context_end: context_end as u64,
        context: text[context_start..context_end].to_owned(),
    }
}

fn count_feeds(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&byte| byte == b'\n').count() as u64
}

/// `text` as a JSON string literal, quotes included.
fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

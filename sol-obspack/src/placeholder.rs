//! The placeholder that replaces a large result from its third provider request on.
//!
//! It is a pure function of the observation and its text, so every later request carries
//! byte-identical text and the provider's cached prompt prefix stays valid. Layout (lines
//! joined with LF):
//!
//! ```text
//! [large tool result replaced after its first 2 provider requests]
//! id: obs_…
//! tool: bash
//! original_bytes: 30712
//! original_lines: 402
//! estimated_tokens: 7678
//! retrieve: call obs_recall with {"id":"obs_…","offset":0}; continue with returned next_offset; add "query" for a case-sensitive literal search
//! [first complete lines, up to 512 bytes]
//! <head excerpt>
//! [middle omitted; last complete lines, up to 512 bytes]
//! <tail excerpt>
//! [29720 original bytes omitted]
//! ```
//!
//! The head excerpt is the longest run of whole lines from the start (each with its LF)
//! that fits [`EXCERPT_HEAD_BYTES`]; the tail excerpt is the same from the end, where a last
//! line without LF counts as a line. When not even one line fits, that side shows the first
//! (or last) 512 bytes instead, cut so that no UTF-8 character is split, under the headers
//! `[no complete line fits; first 512 bytes]` and
//! `[middle omitted; no complete line fits; last 512 bytes]`. One final LF of each excerpt
//! is dropped, because the layout puts a line break after it anyway.
//!
//! The omitted count is the number of original bytes strictly between the two excerpts:
//! `original_bytes - head - tail`, where head and tail are the excerpts' sizes before their
//! final LF is dropped (0 if they overlap, which only texts far below the threshold can do).
//!
//! ```
//! use sol_obspack::{observe, placeholder, placeholder_tokens, removed_tokens};
//!
//! let log: String = (1..=500).map(|n| format!("line {n}: compiling crate_{n}\n")).collect();
//! let obs = observe("bash", "call_1", &log);
//! let text = placeholder(&obs, &log);
//! assert!(text.starts_with("[large tool result replaced after its first 2 provider requests]\n"));
//! assert!(text.contains("\nline 1: compiling crate_1\n"));
//! assert!(text.contains("\nline 500: compiling crate_500\n["));
//! assert_eq!(text, placeholder(&obs, &log));
//! assert!(removed_tokens(obs.tokens, placeholder_tokens(&text)) > 3_000);
//! ```

use crate::observation::{Observation, estimate_tokens};
use crate::policy::{EXCERPT_HEAD_BYTES, EXCERPT_TAIL_BYTES, FULL_SENDS};
use crate::text::Names;

/// The placeholder for `obs`, whose text is `text` (the one given to
/// [`observe`](crate::observe)), naming Pi's recall tool. Pure and deterministic; never
/// fails. [`placeholder_with`] names another recall tool.
///
/// Control characters in the tool name are shown as spaces, so the layout keeps its lines.
pub fn placeholder(obs: &Observation, text: &str) -> String {
    placeholder_with(obs, text, &Names::default())
}

/// [`placeholder`] with the recall tool named by `names`.
pub fn placeholder_with(obs: &Observation, text: &str, names: &Names) -> String {
    let head = head_excerpt(text);
    let tail = tail_excerpt(text);
    let omitted = tail.start.saturating_sub(head.end);
    let tool: String = obs
        .tool_name
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let id = &obs.id;
    let lines = [
        format!("[large tool result replaced after its first {FULL_SENDS} provider requests]"),
        format!("id: {id}"),
        format!("tool: {tool}"),
        format!("original_bytes: {}", obs.bytes),
        format!("original_lines: {}", obs.lines),
        format!("estimated_tokens: {}", obs.tokens),
        format!(
            "retrieve: call {recall} with {{\"id\":\"{id}\",\"offset\":0}}; continue with returned next_offset; \
             add \"query\" for a case-sensitive literal search",
            recall = names.recall_tool()
        ),
        if head.whole_lines {
            format!("[first complete lines, up to {EXCERPT_HEAD_BYTES} bytes]")
        } else {
            format!("[no complete line fits; first {EXCERPT_HEAD_BYTES} bytes]")
        },
        shown(&text[..head.end]).to_owned(),
        if tail.whole_lines {
            format!("[middle omitted; last complete lines, up to {EXCERPT_TAIL_BYTES} bytes]")
        } else {
            format!("[middle omitted; no complete line fits; last {EXCERPT_TAIL_BYTES} bytes]")
        },
        shown(&text[tail.start..]).to_owned(),
        format!("[{omitted} original bytes omitted]"),
    ];
    lines.join("\n")
}

/// Whether replacing `text` by its compact placeholder ([`compact_placeholder_with`], the
/// recall tool named by `names`) pays: the placeholder is at most half the text's bytes. A
/// small output's placeholder would save too little to weigh against what a recall costs;
/// the recent-outputs placement packs only results it pays for.
///
/// ```
/// use sol_obspack::{compact_pays, text::Names};
///
/// let names = Names::default();
/// assert!(!compact_pays("a short output\n", &names));
/// let log: String = (1..=40).map(|n| format!("test case_{n} ... ok\n")).collect();
/// assert!(compact_pays(&log, &names));
/// ```
pub fn compact_pays(text: &str, names: &Names) -> bool {
    // The id's length is fixed, so any tool name gives the placeholder's length.
    let provisional = crate::observe("", "", text);
    compact_placeholder_with(&provisional, text, names)
        .len()
        .saturating_mul(2)
        <= text.len()
}

/// Most bytes of the first line a compact placeholder shows.
pub const COMPACT_FIRST_LINE_BYTES: usize = 120;

/// The compact placeholder of the recent-outputs placement (`keepRecentOutputs`), which
/// reaches medium outputs (from [`MEDIUM_THRESHOLD_BYTES`](crate::MEDIUM_THRESHOLD_BYTES)),
/// where excerpts of 512 bytes would leave little to save: the size, the first line (up to
/// [`COMPACT_FIRST_LINE_BYTES`], control characters as spaces) and the recall call. Pure
/// and deterministic, like [`placeholder_with`]. Layout (lines joined with LF):
///
/// ```text
/// [tool output archived: 84 lines, 5120 bytes, ~1280 tokens]
/// first line: running 12 tests
/// retrieve: call obs_recall with {"id":"obs_…","offset":0}
/// ```
///
/// ```
/// use sol_obspack::{compact_placeholder_with, observe, text::Names};
///
/// let log: String = (1..=60).map(|n| format!("test case_{n} ... ok\n")).collect();
/// let obs = observe("bash", "call_1", &log);
/// let text = compact_placeholder_with(&obs, &log, &Names::default());
/// assert!(text.starts_with("[tool output archived: 60 lines, "));
/// assert!(text.contains("\nfirst line: test case_1 ... ok\n"));
/// assert!(text.len() < 250);
/// ```
pub fn compact_placeholder_with(obs: &Observation, text: &str, names: &Names) -> String {
    let line = text
        .split('\n')
        .find(|line| !line.trim().is_empty())
        .unwrap_or("");
    let line = &line[..floor_char_boundary(line, COMPACT_FIRST_LINE_BYTES)];
    let line: String = line
        .trim_end()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let id = &obs.id;
    [
        format!(
            "[tool output archived: {} lines, {} bytes, ~{} tokens]",
            obs.lines, obs.bytes, obs.tokens
        ),
        format!("first line: {line}"),
        format!(
            "retrieve: call {} with {{\"id\":\"{id}\",\"offset\":0}}",
            names.recall_tool()
        ),
    ]
    .join("\n")
}

/// Estimated tokens of a placeholder text (the same estimate as for observations).
pub fn placeholder_tokens(placeholder: &str) -> u64 {
    estimate_tokens(placeholder)
}

/// Tokens a replacement removes from one request: `original - placeholder`, at least 0.
pub fn removed_tokens(original_tokens: u64, placeholder_tokens: u64) -> u64 {
    original_tokens.saturating_sub(placeholder_tokens)
}

/// An excerpt as it appears in the layout: without one final LF.
fn shown(excerpt: &str) -> &str {
    excerpt.strip_suffix('\n').unwrap_or(excerpt)
}

struct Head {
    end: usize,
    whole_lines: bool,
}

struct Tail {
    start: usize,
    whole_lines: bool,
}

/// The head excerpt `text[..end]`.
fn head_excerpt(text: &str) -> Head {
    let bytes = text.as_bytes();
    if bytes.len() <= EXCERPT_HEAD_BYTES {
        return Head {
            end: bytes.len(),
            whole_lines: true,
        };
    }
    // The last LF within the budget ends the longest run of whole lines that fits.
    match bytes[..EXCERPT_HEAD_BYTES]
        .iter()
        .rposition(|&byte| byte == b'\n')
    {
        Some(feed) => Head {
            end: feed + 1,
            whole_lines: true,
        },
        None => Head {
            end: floor_char_boundary(text, EXCERPT_HEAD_BYTES),
            whole_lines: false,
        },
    }
}

/// The tail excerpt `text[start..]`.
fn tail_excerpt(text: &str) -> Tail {
    let bytes = text.as_bytes();
    if bytes.len() <= EXCERPT_TAIL_BYTES {
        return Tail {
            start: 0,
            whole_lines: true,
        };
    }
    let budget_start = bytes.len() - EXCERPT_TAIL_BYTES;
    // A line starts right after an LF. The LF at `budget_start - 1` (if any) lets the line
    // at `budget_start` in; a final LF starts no line.
    let last = bytes.len() - 1;
    match bytes[budget_start - 1..last]
        .iter()
        .position(|&byte| byte == b'\n')
    {
        Some(offset) => Tail {
            start: budget_start + offset,
            whole_lines: true,
        },
        None => Tail {
            start: ceil_char_boundary(text, budget_start),
            whole_lines: false,
        },
    }
}

/// The largest character boundary of `text` at or before `index`.
pub(crate) fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The smallest character boundary of `text` at or after `index`.
pub(crate) fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

//! Which lines of a tool result a later reply quoted: the evidence that the model still
//! relied on a result, shared by the recent-outputs placement (a quoted result stays in
//! full longer) and `sol-replay` (a replaced result a reply quoted later is one that would
//! have needed a recall).
//!
//! A line counts when it is at least [`QUOTE_MIN_BYTES`] long once trimmed: shorter lines
//! (`}`, `OK`, a blank) recur everywhere. Lines are compared by a [`ContentDigest`] of their
//! text, never by an id a provider chose.
//!
//! ```
//! use serde_json::json;
//! use sol_obspack::quote::{quotable_lines, reply_quotes};
//!
//! let result = quotable_lines(["fn main() {\n    let total = compute_the_total(&items, rate);\n}\n"]);
//! let reply = json!([{
//!     "type": "toolCall",
//!     "name": "edit",
//!     "arguments": {"oldText": "    let total = compute_the_total(&items, rate);", "newText": "x"}
//! }]);
//! let quotes = reply_quotes(reply.as_array().unwrap());
//! assert!(quotes.iter().any(|line| result.contains(line)));
//! ```

use std::fmt;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The shortest line that counts as quoted when a reply repeats it (trimmed, in bytes):
/// shorter lines (`}`, `OK`, a blank) recur everywhere.
pub const QUOTE_MIN_BYTES: usize = 40;
/// The most quotable lines kept of one text.
pub const QUOTE_MAX_LINES: usize = 4_096;

/// The digests of the distinct lines of `texts` of at least [`QUOTE_MIN_BYTES`] once
/// trimmed, sorted, at most [`QUOTE_MAX_LINES`] of them (the first ones).
///
/// ```
/// use sol_obspack::quote::{ContentDigest, quotable_lines};
///
/// let lines = quotable_lines(["short\n    assert total == 90, \"expected ninety, got another total\"\n"]);
/// assert_eq!(lines.len(), 1);
/// let line = "assert total == 90, \"expected ninety, got another total\"";
/// assert_eq!(lines[0], ContentDigest::of_texts([line]));
/// ```
pub fn quotable_lines<'a>(texts: impl IntoIterator<Item = &'a str>) -> Box<[ContentDigest]> {
    let mut lines: Vec<ContentDigest> = texts
        .into_iter()
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|line| line.len() >= QUOTE_MIN_BYTES)
        .take(QUOTE_MAX_LINES)
        .map(|line| ContentDigest::of_texts([line]))
        .collect();
    lines.sort_unstable();
    lines.dedup();
    lines.into_boxed_slice()
}

/// A 64-bit digest of a text: the first eight bytes of its SHA-256, big-endian. Equal texts
/// have equal digests, whatever ids the provider chose; `Display` is 16 hex digits.
///
/// ```
/// use sol_obspack::quote::ContentDigest;
///
/// let digest = ContentDigest::of_texts(["a", "b"]);
/// assert_eq!(digest, ContentDigest::of_texts(["a\nb"]));
/// assert_eq!(ContentDigest::of_texts([""]).to_string(), "e3b0c44298fc1c14");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContentDigest(pub u64);

impl ContentDigest {
    /// The digest of `texts` joined with `\n` (no text gives the digest of "").
    pub fn of_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> ContentDigest {
        let mut hasher = Sha256::new();
        for (i, text) in texts.into_iter().enumerate() {
            if i > 0 {
                hasher.update(b"\n");
            }
            hasher.update(text.as_bytes());
        }
        let hash = hasher.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&hash[..8]);
        ContentDigest(u64::from_be_bytes(first))
    }
}

impl fmt::Display for ContentDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// The quotable lines of a reply's blocks: its text and thinking, and every string value of
/// its tool calls' arguments (an edit's `oldText` quotes what it read).
pub fn reply_quotes(blocks: &[Value]) -> Box<[ContentDigest]> {
    fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::String(text) => out.push(text),
            Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
            Value::Object(fields) => fields.values().for_each(|item| strings(item, out)),
            _ => {}
        }
    }
    let mut texts = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text" | "thinking") => {
                for key in ["text", "thinking"] {
                    if let Some(text) = block.get(key).and_then(Value::as_str) {
                        texts.push(text);
                    }
                }
            }
            Some("toolCall") => {
                if let Some(arguments) = block.get("arguments") {
                    strings(arguments, &mut texts);
                }
            }
            _ => {}
        }
    }
    quotable_lines(texts)
}

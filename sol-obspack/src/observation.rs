//! What a large tool result is: its identity, its size, and whether it is packed at all.
//!
//! An observation id names one exact content produced by one tool: `obs_` followed by the
//! first 24 hex digits of `sha256(tool_name + "\0" + content_hash)`, where `content_hash` is
//! the SHA-256 of the text. The id never depends on the tool-call id: providers choose those
//! and may reuse them (`call_0` on every turn, or `""` when an OpenAI-compatible server sends
//! none), so the same bytes from the same tool always get the same id and different bytes
//! always get different ones. The call id is still carried in [`Observation`] as
//! information for the ledger.
//!
//! ```
//! use sol_obspack::{is_packable, observe, ObservationId};
//!
//! let log = "test parser::empty_input ... ok\n".repeat(400);
//! assert!(is_packable(&log));
//!
//! let obs = observe("bash", "call_17", &log);
//! assert_eq!(obs.bytes, 12_800);
//! assert_eq!(obs.lines, 400);
//! assert_eq!(obs.tokens, 3_200);
//! assert_eq!(ObservationId::parse(obs.id.as_str()), Ok(obs.id.clone()));
//! // Another call with the same bytes is the same observation; other bytes are not.
//! assert_eq!(observe("bash", "call_18", &log).id, obs.id);
//! assert_ne!(observe("bash", "call_17", &log.replace("ok", "OK")).id, obs.id);
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::policy::{CHARS_PER_TOKEN, RECEIPT_MARKER_LINE, THRESHOLD_BYTES};

/// The prefix of every observation id.
pub const ID_PREFIX: &str = "obs_";

/// How many lower-case hex digits follow [`ID_PREFIX`].
pub const ID_HEX_DIGITS: usize = 24;

/// How many characters of a rejected id an error message shows.
const SHOWN_ID_CHARS: usize = 80;

/// A well-formed observation id: `obs_` and 24 lower-case hex digits (`^obs_[a-f0-9]{24}$`).
///
/// Being well-formed says nothing about whether the observation is stored; it does mean the
/// id is safe to use as a file name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ObservationId(String);

impl ObservationId {
    /// Accepts `id` if it is well-formed; otherwise the error reads
    /// `Unknown observation id: <id>`, the same text as for an id that is well-formed but not
    /// stored, so the model gets one answer for one mistake.
    pub fn parse(id: &str) -> Result<ObservationId, ObservationIdError> {
        if is_well_formed(id) {
            Ok(ObservationId(id.to_owned()))
        } else {
            Err(ObservationIdError { id: id.to_owned() })
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id of the result of `tool_name` whose text has `content_hash`.
    pub(crate) fn derive(tool_name: &str, content_hash: &str) -> Self {
        Self::from_parts(&[tool_name, content_hash])
    }

    /// The id SoL-Pi 0.1.0 gave the same result: it also hashed the provider's tool-call
    /// id. Only used to verify objects archived by that version, never to name new ones.
    pub(crate) fn derive_0_1(tool_name: &str, tool_call_id: &str, content_hash: &str) -> Self {
        Self::from_parts(&[tool_name, tool_call_id, content_hash])
    }

    /// `obs_` and the first hex digits of SHA-256 over the parts joined with NUL.
    fn from_parts(parts: &[&str]) -> Self {
        let mut hasher = Sha256::new();
        for (index, part) in parts.iter().enumerate() {
            if index > 0 {
                hasher.update([0]);
            }
            hasher.update(part.as_bytes());
        }
        let digest = hex(&hasher.finalize());
        ObservationId(format!("{ID_PREFIX}{}", &digest[..ID_HEX_DIGITS]))
    }
}

fn is_well_formed(id: &str) -> bool {
    id.strip_prefix(ID_PREFIX).is_some_and(|digits| {
        digits.len() == ID_HEX_DIGITS
            && digits
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
    })
}

impl fmt::Display for ObservationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ObservationId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl FromStr for ObservationId {
    type Err = ObservationIdError;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        ObservationId::parse(id)
    }
}

impl TryFrom<String> for ObservationId {
    type Error = ObservationIdError;

    fn try_from(id: String) -> Result<Self, Self::Error> {
        if is_well_formed(&id) {
            Ok(ObservationId(id))
        } else {
            Err(ObservationIdError { id })
        }
    }
}

impl From<ObservationId> for String {
    fn from(id: ObservationId) -> String {
        id.0
    }
}

/// An id that is not of the form `obs_` and 24 lower-case hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ObservationIdError {
    id: String,
}

impl ObservationIdError {
    /// The rejected id, in full.
    pub fn rejected_id(&self) -> &str {
        &self.id
    }

    /// The stable code: `unknown_id`, as for a well-formed id that is not stored.
    pub fn code(&self) -> &'static str {
        "unknown_id"
    }
}

impl fmt::Display for ObservationIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Unknown observation id: {}", shown_id(&self.id))
    }
}

/// How an id from the model appears in a message: as given when it is short and printable,
/// otherwise quoted with escapes (so the message stays on one line) and cut.
pub(crate) fn shown_id(id: &str) -> String {
    let total = id.chars().count();
    let printable = !id.is_empty() && !id.chars().any(|c| c.is_control() || c == '"');
    if printable && total <= SHOWN_ID_CHARS {
        id.to_owned()
    } else if total <= SHOWN_ID_CHARS {
        format!("{id:?}")
    } else {
        let shown: String = id.chars().take(SHOWN_ID_CHARS).collect();
        format!("{shown:?}... ({total} characters)")
    }
}

/// A tool result's identity and size, computed from its text alone (see [`observe`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Observation {
    /// The observation id.
    pub id: ObservationId,
    /// The name of the tool that produced the result.
    pub tool_name: String,
    /// The id of the tool call the result answers: information for the ledger, never part
    /// of the identity.
    pub tool_call_id: String,
    /// SHA-256 of the text's UTF-8 bytes, 64 lower-case hex digits.
    pub content_hash: String,
    /// Size of the text in UTF-8 bytes.
    pub bytes: u64,
    /// Number of lines: LF characters, plus one if the text is non-empty and does not end
    /// with LF.
    pub lines: u64,
    /// Estimated tokens: UTF-16 length divided by 4, rounded up (see [`estimate_tokens`]).
    pub tokens: u64,
}

/// One line for a person: the id, the tool and the sizes, e.g. `obs_… (bash): 15622 bytes,
/// 601 lines, about 3906 tokens`. A tool name that is empty, long or holds a control
/// character or a quote is shown quoted with escapes and cut, so the text stays one line.
///
/// ```
/// let obs = sol_obspack::observe("bash", "call_1", &"ok\n".repeat(6_000));
/// assert_eq!(
///     obs.to_string(),
///     format!("{} (bash): 18000 bytes, 6000 lines, about 4500 tokens", obs.id)
/// );
/// ```
impl fmt::Display for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}, {}, about {}",
            self.id,
            shown_id(&self.tool_name),
            counted(self.bytes, "byte"),
            counted(self.lines, "line"),
            counted(self.tokens, "token")
        )
    }
}

/// `1 line`, `2 lines`.
fn counted(count: u64, unit: &str) -> String {
    if count == 1 {
        format!("1 {unit}")
    } else {
        format!("{count} {unit}s")
    }
}

/// Identity and size of the result `text` that `tool_name` returned for `tool_call_id`.
///
/// Pure and deterministic; the id depends on `tool_name` and `text` only. The host joins a
/// result's text blocks with `\n` before calling.
pub fn observe(tool_name: &str, tool_call_id: &str, text: &str) -> Observation {
    let content_hash = sha256_hex(text.as_bytes());
    Observation {
        id: ObservationId::derive(tool_name, &content_hash),
        tool_name: tool_name.to_owned(),
        tool_call_id: tool_call_id.to_owned(),
        content_hash,
        bytes: text.len() as u64,
        lines: count_lines(text.as_bytes()),
        tokens: estimate_tokens(text),
    }
}

/// Whether ObservationPack handles `text` at all: it is larger than [`THRESHOLD_BYTES`] in
/// UTF-8 and is not already a reducer receipt (no line equals [`RECEIPT_MARKER_LINE`]).
///
/// Lines are split at LF; a CR before the LF is ignored, so a CRLF receipt counts too. The
/// host checks the rest before calling: a tool result that is not an error and whose
/// content is text blocks only.
pub fn is_packable(text: &str) -> bool {
    is_packable_over(text, THRESHOLD_BYTES)
}

/// [`is_packable`] with another size threshold: the recent-outputs placement packs results
/// over [`MEDIUM_THRESHOLD_BYTES`](crate::MEDIUM_THRESHOLD_BYTES).
pub fn is_packable_over(text: &str, threshold_bytes: u64) -> bool {
    text.len() as u64 > threshold_bytes && !is_receipt(text)
}

/// Whether `text` is an Evidence-Preserving Reducer receipt: a line of it, split at LF with
/// a CR before the LF ignored, equals [`RECEIPT_MARKER_LINE`].
///
/// ```
/// use sol_obspack::is_receipt;
///
/// assert!(is_receipt("sol_pi_evidence_receipt_v1\r\nstatus=failure"));
/// assert!(!is_receipt("a log that mentions sol_pi_evidence_receipt_v1 in a line"));
/// ```
pub fn is_receipt(text: &str) -> bool {
    // The substring test is a fast filter; only texts that contain the marker are split.
    text.contains(RECEIPT_MARKER_LINE)
        && text
            .split('\n')
            .any(|line| line.strip_suffix('\r').unwrap_or(line) == RECEIPT_MARKER_LINE)
}

/// The token estimate used throughout SoL-Pi: the text's length in UTF-16 code units (what
/// JavaScript calls its length) divided by 4, rounded up.
pub fn estimate_tokens(text: &str) -> u64 {
    sol_core::message::js_length(text).div_ceil(CHARS_PER_TOKEN)
}

/// LF bytes in `bytes`, plus one if `bytes` is non-empty and does not end with LF.
pub fn count_lines(bytes: &[u8]) -> u64 {
    let feeds = bytes.iter().filter(|&&byte| byte == b'\n').count() as u64;
    match bytes.last() {
        Some(b'\n') | None => feeds,
        Some(_) => feeds + 1,
    }
}

/// SHA-256 of `bytes` as 64 lower-case hex digits.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

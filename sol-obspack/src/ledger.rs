//! The ledger: one JSON line per decision and recall, appended to
//! `<runtime root>/observation-pack/ledger.jsonl`.
//!
//! Every line is an object whose keys come in a fixed order: `timestamp`, `event`
//! (`full`, `placeholder`, `held`, `recall`, `search` or `repaired`), then the record's fields in camelCase in
//! the order they are declared below. The timestamp is passed in (this crate reads no
//! clock); the host gives the ISO-8601 time of the context event or the recall.
//!
//! ```
//! use sol_obspack::ledger::{ledger_lines, LedgerRecord};
//! use sol_obspack::observe;
//!
//! let obs = observe("bash", "call_1", &"x".repeat(12_000));
//! let record = LedgerRecord::full(&obs, 3, 1);
//! let lines = ledger_lines(&[record], "2025-06-01T12:00:00.000Z");
//! assert!(lines.starts_with(r#"{"timestamp":"2025-06-01T12:00:00.000Z","event":"full","id":"obs_"#));
//! assert!(lines.ends_with("}\n"));
//! ```

use serde::{Deserialize, Serialize};

use crate::observation::{Observation, ObservationId};
use crate::records::{Damage, RecallDetails, SearchDetails};

/// One ledger event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum LedgerRecord {
    /// A request carried the original result.
    Full {
        /// The observation.
        id: ObservationId,
        /// Which provider request of the branch this is (assistant messages so far + 1).
        request: u32,
        /// Which full send of this observation: 1 or 2.
        send_number: u32,
        /// The tool that produced the result.
        tool: String,
        /// Size of the original in bytes.
        original_bytes: u64,
        /// Lines of the original.
        original_lines: u64,
        /// Estimated tokens of the original.
        original_tokens: u64,
        /// SHA-256 of the original, hex.
        content_hash: String,
    },
    /// A request carried the placeholder instead of the original.
    Placeholder {
        /// The observation.
        id: ObservationId,
        /// Which provider request of the branch this is.
        request: u32,
        /// Which send of this observation: `prior_requests + 1`, so 3 for the first placeholder.
        send_number: u32,
        /// The tool that produced the result.
        tool: String,
        /// Size of the original in bytes.
        original_bytes: u64,
        /// Lines of the original.
        original_lines: u64,
        /// Estimated tokens of the original.
        original_tokens: u64,
        /// Size of the placeholder in bytes.
        placeholder_bytes: u64,
        /// Estimated tokens of the placeholder.
        placeholder_tokens: u64,
        /// `original_tokens - placeholder_tokens`, at least 0.
        removed_tokens: u64,
        /// Under the cache-aware placement, why it was replaced on this request
        /// ([`PlacementReason::code`](crate::placement::PlacementReason::code)); absent
        /// under the fixed rule.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placement: Option<String>,
    },
    /// The cache-aware placement kept a result in full on the request where the fixed rule
    /// would have replaced it first (recorded once, on that request).
    Held {
        /// The observation.
        id: ObservationId,
        /// Which provider request of the branch this is.
        request: u32,
        /// Which send of this observation (3: the fixed rule's first placeholder).
        send_number: u32,
        /// The tool that produced the result.
        tool: String,
        /// Estimated tokens of the original.
        original_tokens: u64,
        /// Why ([`PlacementReason::code`](crate::placement::PlacementReason::code)).
        placement: String,
    },
    /// `obs_recall` returned a page.
    Recall {
        /// The observation.
        id: ObservationId,
        /// Byte offset of the page.
        offset: u64,
        /// Size of the chunk in bytes.
        bytes: u64,
        /// Lines of the chunk.
        lines: u64,
        /// Where the next page starts.
        next_offset: u64,
        /// Whether the page reached the end.
        eof: bool,
    },
    /// `obs_recall` with a `query` returned a page of matches. The query itself is not
    /// logged, only its size.
    Search {
        /// The observation.
        id: ObservationId,
        /// Byte offset where the page started.
        offset: u64,
        /// Size of the query in bytes.
        query_bytes: u64,
        /// Matches on the page.
        matches: u64,
        /// Bytes the page covered.
        scanned_bytes: u64,
        /// Where the next page starts.
        next_offset: u64,
        /// Whether there are no more matches.
        eof: bool,
    },
    /// A damaged object or record was rebuilt from the original (see
    /// [`crate::store`]).
    Repaired {
        /// The observation.
        id: ObservationId,
        /// What was wrong, as in [`Damage`]'s text.
        damage: String,
    },
}

impl LedgerRecord {
    /// The `full` record of `obs` on request `request`, its send number `send_number`.
    pub fn full(obs: &Observation, request: u32, send_number: u32) -> Self {
        LedgerRecord::Full {
            id: obs.id.clone(),
            request,
            send_number,
            tool: obs.tool_name.clone(),
            original_bytes: obs.bytes,
            original_lines: obs.lines,
            original_tokens: obs.tokens,
            content_hash: obs.content_hash.clone(),
        }
    }

    /// The `placeholder` record of `obs` replaced by `placeholder` on request `request`.
    pub fn placeholder(
        obs: &Observation,
        request: u32,
        send_number: u32,
        placeholder: &str,
    ) -> Self {
        let placeholder_tokens = crate::placeholder_tokens(placeholder);
        LedgerRecord::Placeholder {
            id: obs.id.clone(),
            request,
            send_number,
            tool: obs.tool_name.clone(),
            original_bytes: obs.bytes,
            original_lines: obs.lines,
            original_tokens: obs.tokens,
            placeholder_bytes: placeholder.len() as u64,
            placeholder_tokens,
            removed_tokens: crate::removed_tokens(obs.tokens, placeholder_tokens),
            placement: None,
        }
    }

    /// The `placeholder` record with the cache-aware placement's reason.
    pub fn placed(
        obs: &Observation,
        request: u32,
        send_number: u32,
        placeholder: &str,
        reason: crate::placement::PlacementReason,
    ) -> Self {
        let mut record = LedgerRecord::placeholder(obs, request, send_number, placeholder);
        if let LedgerRecord::Placeholder { placement, .. } = &mut record {
            *placement = Some(reason.code().to_owned());
        }
        record
    }

    /// The `held` record of `obs`, kept in full on request `request` for `reason`.
    pub fn held(
        obs: &Observation,
        request: u32,
        send_number: u32,
        reason: crate::placement::PlacementReason,
    ) -> Self {
        LedgerRecord::Held {
            id: obs.id.clone(),
            request,
            send_number,
            tool: obs.tool_name.clone(),
            original_tokens: obs.tokens,
            placement: reason.code().to_owned(),
        }
    }

    /// The record of a recall page.
    pub fn recall(details: &RecallDetails) -> Self {
        LedgerRecord::Recall {
            id: details.id.clone(),
            offset: details.offset,
            bytes: details.bytes,
            lines: details.lines,
            next_offset: details.next_offset,
            eof: details.eof,
        }
    }

    /// The record of a search page.
    pub fn search(details: &SearchDetails) -> Self {
        LedgerRecord::Search {
            id: details.id.clone(),
            offset: details.offset,
            query_bytes: details.query.len() as u64,
            matches: details.matches.len() as u64,
            scanned_bytes: details.scanned_bytes,
            next_offset: details.next_offset,
            eof: details.eof,
        }
    }

    /// The record of a damaged observation rebuilt from its original.
    pub fn repaired(id: &ObservationId, damage: &Damage) -> Self {
        LedgerRecord::Repaired {
            id: id.clone(),
            damage: damage.to_string(),
        }
    }

    /// The observation the record is about.
    pub fn id(&self) -> &ObservationId {
        match self {
            LedgerRecord::Full { id, .. }
            | LedgerRecord::Placeholder { id, .. }
            | LedgerRecord::Held { id, .. }
            | LedgerRecord::Recall { id, .. }
            | LedgerRecord::Search { id, .. }
            | LedgerRecord::Repaired { id, .. } => id,
        }
    }
}

/// One ledger line as it is written: the timestamp first, then the record.
#[derive(Serialize)]
struct Line<'a> {
    timestamp: &'a str,
    #[serde(flatten)]
    record: &'a LedgerRecord,
}

/// The JSONL text for `records`, each stamped with `timestamp_iso`: one compact JSON object
/// per record, each followed by LF; empty for no records.
pub fn ledger_lines(records: &[LedgerRecord], timestamp_iso: &str) -> String {
    let mut out = String::new();
    for record in records {
        let line = Line {
            timestamp: timestamp_iso,
            record,
        };
        // Strings, integers and booleans only: serializing cannot fail.
        if let Ok(json) = serde_json::to_string(&line) {
            out.push_str(&json);
            out.push('\n');
        }
    }
    out
}

/// One ledger line read back: its timestamp and its record.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LedgerEntry {
    /// The timestamp the host gave when it appended the line.
    pub timestamp: String,
    /// The record.
    #[serde(flatten)]
    pub record: LedgerRecord,
}

/// A ledger line that is not a record: a record that a crash cut short, or a line changed
/// by hand. [`read_ledger`] skips it and goes on with the next line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// Its 1-based line number in the file.
    pub line: usize,
    /// Why it is not a record, lower-case.
    pub reason: String,
}

/// What [`read_ledger`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerRead {
    /// The records, in the order they were appended.
    pub entries: Vec<LedgerEntry>,
    /// The lines that are not records, in file order.
    pub skipped: Vec<SkippedLine>,
}

/// Reads a ledger file's text: every line that is a record, in order, and the others
/// skipped without losing what follows them.
///
/// A crash can leave the last record without its line end, or cut it anywhere. The next
/// append starts on a fresh line (see [`sol_core::FileSystem::append`]), so a torn record
/// stays on a line of its own: a whole record that only lost its LF still reads, a cut one
/// is skipped, and every record after it reads as written. Empty lines (two appenders that
/// both closed the same torn line) are not records and are not reported.
///
/// ```
/// use sol_obspack::ledger::{ledger_lines, read_ledger, LedgerRecord};
/// use sol_obspack::observe;
///
/// let obs = observe("bash", "call_1", &"x".repeat(12_000));
/// let first = ledger_lines(&[LedgerRecord::full(&obs, 1, 1)], "t1");
/// let second = ledger_lines(&[LedgerRecord::full(&obs, 2, 2)], "t2");
/// // The first record was cut by a crash; the next append started on a new line.
/// let text = format!("{}\n{second}", &first[..40]);
/// let read = read_ledger(&text);
/// assert_eq!(read.entries.len(), 1);
/// assert_eq!(read.entries[0].timestamp, "t2");
/// assert_eq!(read.skipped[0].line, 1);
/// ```
pub fn read_ledger(text: &str) -> LedgerRead {
    let mut read = LedgerRead::default();
    for (index, line) in text.split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<LedgerEntry>(line) {
            Ok(entry) => read.entries.push(entry),
            Err(error) => read.skipped.push(SkippedLine {
                line: index + 1,
                reason: format!("not a ledger record: {error}"),
            }),
        }
    }
    read
}

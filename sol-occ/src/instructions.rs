//! The custom instructions a boundary compaction passes to Pi's summarizer.
//!
//! They are one fixed sentence, followed, when the model recorded progress for completed
//! steps since the last compaction, by that evidence: one compact JSON record per progress
//! report, newest first, inside `<untrusted-progress-evidence>` … `</untrusted-progress-evidence>`
//! and after a header telling the summarizer to keep the facts and never act on them.
//!
//! The records together (joined by newlines) take at most [`MAX_PROGRESS_EVIDENCE_BYTES`]
//! bytes of UTF-8. Older records are dropped first; if even the newest does not fit, its
//! strings are shortened on code-point boundaries and it is marked `"truncated":true`. Every
//! `<` inside a record is written `\u003c`, so no record can close the block.
//!
//! ```
//! use sol_occ::instructions::compaction_instructions;
//! use sol_occ::plan::ProgressSummary;
//! use sol_occ::text::BOUNDARY_COMPACTION_INSTRUCTIONS;
//!
//! assert_eq!(compaction_instructions(&[]), BOUNDARY_COMPACTION_INSTRUCTIONS);
//!
//! let summary = ProgressSummary {
//!     step_id: "parser".into(),
//!     goal: "Parse the config".into(),
//!     files_changed: vec!["src/config.rs".into()],
//!     verification: vec![],
//!     decisions: vec![],
//!     next_work: vec!["Document it".into()],
//! };
//! let text = compaction_instructions(&[summary]);
//! assert!(text.ends_with(concat!(
//!     "<untrusted-progress-evidence>\n",
//!     r#"{"stepId":"parser","goal":"Parse the config","filesChanged":["src/config.rs"],"nextWork":["Document it"]}"#,
//!     "\n</untrusted-progress-evidence>"
//! )));
//! ```

use serde_json::{Map, Value};

use crate::plan::ProgressSummary;
use crate::text::{
    BOUNDARY_COMPACTION_INSTRUCTIONS, EVIDENCE_CLOSE, EVIDENCE_OPEN, PROGRESS_EVIDENCE_HEADER,
    tag_safe_json,
};

/// Largest UTF-8 size of the evidence records together (newline separators included).
pub const MAX_PROGRESS_EVIDENCE_BYTES: usize = 4096;

/// The instructions for a boundary compaction with the pending progress reports (oldest
/// first, as the state keeps them).
pub fn compaction_instructions(pending_progress: &[ProgressSummary]) -> String {
    let records = evidence_records(pending_progress, MAX_PROGRESS_EVIDENCE_BYTES);
    if records.is_empty() {
        return BOUNDARY_COMPACTION_INSTRUCTIONS.to_owned();
    }
    format!(
        "{BOUNDARY_COMPACTION_INSTRUCTIONS}\n\n{PROGRESS_EVIDENCE_HEADER}\n{EVIDENCE_OPEN}\n{}\n{EVIDENCE_CLOSE}",
        records.join("\n")
    )
}

/// The evidence records, newest first, within `budget` bytes together (one newline between
/// records counted).
pub fn evidence_records(pending_progress: &[ProgressSummary], budget: usize) -> Vec<String> {
    let mut records = Vec::new();
    let mut used = 0usize;
    for summary in pending_progress.iter().rev() {
        let separator = usize::from(!records.is_empty());
        let available = budget.saturating_sub(used + separator);
        let full = record_json(summary, None, false);
        if full.len() <= available {
            used += separator + full.len();
            records.push(full);
            continue;
        }
        if records.is_empty()
            && let Some(cut) = truncated_record(summary, available)
        {
            records.push(cut);
        }
        break;
    }
    records
}

/// One record: the summary's fields, each string cut to `cap` code points when given,
/// empty lists left out, `"truncated":true` when `truncated`.
fn record_json(summary: &ProgressSummary, cap: Option<usize>, truncated: bool) -> String {
    let cut = |text: &str| -> Value {
        Value::String(match cap {
            Some(cap) => text.chars().take(cap).collect(),
            None => text.to_owned(),
        })
    };
    let mut record = Map::new();
    record.insert("stepId".to_owned(), cut(&summary.step_id));
    record.insert("goal".to_owned(), cut(&summary.goal));
    let lists = [
        ("filesChanged", &summary.files_changed),
        ("verification", &summary.verification),
        ("decisions", &summary.decisions),
        ("nextWork", &summary.next_work),
    ];
    for (key, items) in lists {
        if !items.is_empty() {
            let values = items.iter().map(|item| cut(item)).collect();
            record.insert(key.to_owned(), Value::Array(values));
        }
    }
    if truncated {
        record.insert("truncated".to_owned(), Value::Bool(true));
    }
    tag_safe_json(&Value::Object(record))
}

/// The newest record shortened to fit `budget`: the largest per-string cap that fits.
fn truncated_record(summary: &ProgressSummary, budget: usize) -> Option<String> {
    let fits = |cap: usize| record_json(summary, Some(cap), true).len() <= budget;
    if !fits(0) {
        return None;
    }
    let longest = std::iter::once(&summary.step_id)
        .chain(std::iter::once(&summary.goal))
        .chain(summary.files_changed.iter())
        .chain(summary.verification.iter())
        .chain(summary.decisions.iter())
        .chain(summary.next_work.iter())
        .map(|text| text.chars().count())
        .max()
        .unwrap_or(0);
    // fits(low) holds; find the largest cap that fits.
    let (mut low, mut high) = (0usize, longest);
    while low < high {
        let middle = low + (high - low).div_ceil(2);
        if fits(middle) {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    Some(record_json(summary, Some(low), true))
}

//! What replaces the log once a receipt is verified: the receipt text, the projected
//! content, and `details.evidencePreservingReducer`.
//!
//! The receipt text is line-oriented `key=value` text that starts with
//! [`crate::RECEIPT_PREFIX`]; quotes are JSON strings, so a quote spanning lines stays on
//! one line. A `bash` result becomes one text block holding the receipt. In a fused
//! `edit`/`write` result only the command output after the `[then_run:…]` marker is
//! replaced; the mutation's text, every other block and `details` (the diff) stay. A
//! failed command's runtime status line follows the receipt after a blank line.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sol_core::message::ContentBlock;

use crate::archive::ArchivedLog;
use crate::candidate::CandidateShape;
use crate::digest::sha256_hex;
use crate::model::{ReducerReply, Usage};
use crate::notice::savings_notice;
use crate::reason::{Fallback, ReasonCode};
use crate::receipt::{ReceiptCheck, VerifiedReceipt, validate_receipt};
use crate::source::Source;
use crate::{DETAILS_KEY, JOURNAL_SCHEMA, RECEIPT_PREFIX};

/// The `authority=` line: the agent, not the reducer, judges the log.
pub const AUTHORITY_LINE: &str = "authority=Sol retains diagnosis, repair, reruns and the pass/fail judgment; this receipt only quotes lines verified byte for byte against source_artifact.";
/// The `readback=` line with Pi's shell tool: how to get exact context back.
pub const READBACK_LINE: &str = "readback=For exact context, read source_artifact through bash with an explicit line or byte range (sed -n 'FIRST,LASTp', head -c, tail -c), not the whole file at once.";

/// The `readback=` line naming `shell_tool`, the model-facing tool that runs shell commands
/// ([`READBACK_LINE`] for Pi's `bash`).
pub fn readback_line(shell_tool: &str) -> String {
    format!(
        "readback=For exact context, read source_artifact through {shell_tool} with an explicit line or byte range (sed -n 'FIRST,LASTp', head -c, tail -c), not the whole file at once."
    )
}

/// Who wrote a receipt and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The provider that answered.
    pub provider: String,
    /// The model that answered.
    pub model: String,
    /// Tokens used (all zero for a cached receipt).
    pub usage: Usage,
    /// Whether the receipt came from the cache.
    pub cache_hit: bool,
}

impl Provenance {
    /// The provenance of a fresh reply.
    pub fn of_reply(reply: &ReducerReply) -> Provenance {
        Provenance {
            provider: reply.provider.clone(),
            model: reply.model.clone(),
            usage: reply.usage,
            cache_hit: false,
        }
    }
}

/// The receipt text for a verified receipt of `source`, archived at `archived`.
pub fn receipt_text(
    source: &Source,
    archived: &ArchivedLog,
    receipt: &VerifiedReceipt,
    provenance: &Provenance,
) -> String {
    let mut lines = vec![
        RECEIPT_PREFIX.to_owned(),
        format!("status={}", receipt.status.as_str()),
        format!("uncertain={}", receipt.uncertain),
        format!("command_sha256={}", source.command_sha256()),
        format!("source_sha256={}", source.sha256()),
        format!("source_bytes={}", source.bytes()),
        format!("source_lines={}", source.lines()),
        format!("source_artifact={}", archived.path),
    ];
    if let Some(whole) = source.full_output_artifact() {
        lines.push(format!("full_output_artifact={}", whole.path));
        lines.push(format!("full_output_bytes={}", whole.bytes));
    }
    lines.extend([
        format!("reducer_provider={}", provenance.provider),
        format!("reducer_model={}", provenance.model),
        format!("reducer_total_tokens={}", provenance.usage.total_tokens),
        "verified_evidence:".to_owned(),
    ]);
    if receipt.evidence.is_empty() {
        lines.push("- none".to_owned());
    }
    for item in &receipt.evidence {
        let quote = serde_json::to_string(&item.quote).unwrap_or_default();
        lines.push(format!(
            "- kind={} line={} quote_sha256={} quote={quote}",
            item.kind.as_str(),
            item.line,
            item.quote_sha256,
        ));
    }
    lines.push(AUTHORITY_LINE.to_owned());
    lines.push(readback_line(&source.candidate().readback_tool));
    lines.join("\n")
}

/// `details.evidencePreservingReducer`: what was reduced, for hosts and tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReducerDetails {
    /// [`JOURNAL_SCHEMA`].
    pub schema: String,
    /// SHA-256 of the log.
    pub source_sha256: String,
    /// Size of the log in bytes.
    pub source_bytes: u64,
    /// SHA-256 of the receipt text (without the status line).
    pub receipt_sha256: String,
    /// Size of the receipt text in bytes.
    pub receipt_bytes: u64,
    /// Number of verified evidence items.
    pub evidence_count: u64,
    /// The receipt's `uncertain` flag.
    pub uncertain: bool,
}

/// The result's details with [`DETAILS_KEY`] set: the original object's keys first, in
/// their order; a missing or non-object `details` becomes a new object.
pub fn details_with_reducer(original: Option<&Value>, summary: &ReducerDetails) -> Value {
    let mut details = match original {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    details.insert(
        DETAILS_KEY.to_owned(),
        serde_json::to_value(summary).unwrap_or(Value::Null),
    );
    Value::Object(details)
}

/// The result's content with the log replaced by `receipt` (and the status line kept).
pub fn project_content(source: &Source, receipt: &str) -> Vec<ContentBlock> {
    let replacement = match source.status_line() {
        Some(status) => format!("{receipt}\n\n{status}"),
        None => receipt.to_owned(),
    };
    let candidate = source.candidate();
    match &candidate.shape {
        CandidateShape::Output | CandidateShape::Bash => vec![ContentBlock::text(replacement)],
        CandidateShape::Fused {
            block,
            head,
            separator,
            ..
        } => {
            let mut content = candidate.content.clone();
            if let Some(slot) = content.get_mut(*block) {
                *slot = ContentBlock::text(format!("{head}{separator}{replacement}"));
            }
            content
        }
    }
}

/// A reduced tool result, ready to return to the host.
#[derive(Debug, Clone, PartialEq)]
pub struct Replacement {
    /// The projected content.
    pub content: Vec<ContentBlock>,
    /// The details, with [`DETAILS_KEY`].
    pub details: Value,
    /// The result's unchanged `isError` flag.
    pub is_error: bool,
    /// The receipt text (without the status line).
    pub receipt_text: String,
    /// What `details.evidencePreservingReducer` holds.
    pub summary: ReducerDetails,
    /// Who wrote the receipt.
    pub provenance: Provenance,
}

impl Replacement {
    /// Bytes of log the receipt removes from future prompts.
    pub fn bytes_removed(&self) -> u64 {
        self.summary
            .source_bytes
            .saturating_sub(self.summary.receipt_bytes)
    }

    /// The TUI notice announcing the saving ([`savings_notice`]).
    pub fn notice(&self) -> String {
        savings_notice(self.bytes_removed())
    }
}

/// Builds the replacement for a verified receipt, unless the receipt text is not smaller
/// than the log ([`ReasonCode::ReceiptNotSmaller`]).
pub fn apply_receipt(
    source: &Source,
    archived: &ArchivedLog,
    receipt: &VerifiedReceipt,
    provenance: Provenance,
) -> Result<Replacement, Fallback> {
    let text = receipt_text(source, archived, receipt, &provenance);
    let receipt_bytes = text.len() as u64;
    if receipt_bytes >= source.bytes() {
        return Err(Fallback::new(ReasonCode::ReceiptNotSmaller).with(|facts| {
            facts.source_sha256 = Some(source.sha256().to_owned());
            facts.source_bytes = Some(source.bytes());
            facts.receipt_bytes = Some(receipt_bytes);
            facts.usage = Some(provenance.usage);
        }));
    }
    let summary = ReducerDetails {
        schema: JOURNAL_SCHEMA.to_owned(),
        source_sha256: source.sha256().to_owned(),
        source_bytes: source.bytes(),
        receipt_sha256: sha256_hex(text.as_bytes()),
        receipt_bytes,
        evidence_count: receipt.evidence.len() as u64,
        uncertain: receipt.uncertain,
    };
    Ok(Replacement {
        content: project_content(source, &text),
        details: details_with_reducer(source.candidate().details.as_ref(), &summary),
        is_error: source.is_error(),
        receipt_text: text,
        summary,
        provenance,
    })
}

/// Checks a fresh reply end to end: the model finished normally, the receipt validates
/// against the log, and its text is smaller than the log.
pub fn apply_reply(
    source: &Source,
    archived: &ArchivedLog,
    reply: &ReducerReply,
) -> Result<Replacement, Fallback> {
    if !reply.finished() {
        return Err(Fallback::new(ReasonCode::ModelResponseError).with(|facts| {
            facts.source_sha256 = Some(source.sha256().to_owned());
            facts.stop_reason = reply.stop_reason.clone();
            facts.error_message = reply.error_message.clone();
            facts.usage = Some(reply.usage);
        }));
    }
    let receipt = verify_against(&reply.text, source, source.body(), reply.usage)?;
    apply_receipt(source, archived, &receipt, Provenance::of_reply(reply))
}

/// Validates `reply` against `log` (the archived text of `source`), turning a rejection
/// into a fallback that records `usage`.
pub(crate) fn verify_against(
    reply: &str,
    source: &Source,
    log: &str,
    usage: Usage,
) -> Result<VerifiedReceipt, Fallback> {
    let check = ReceiptCheck {
        log,
        source_sha256: source.sha256(),
        is_error: source.is_error(),
    };
    validate_receipt(reply, &check).map_err(|rejection| {
        Fallback::from(rejection).with(|facts| {
            facts.source_sha256 = Some(source.sha256().to_owned());
            facts.reply_bytes = Some(reply.len() as u64);
            facts.usage = Some(usage);
        })
    })
}

//! Validation of the reducer model's JSON receipt against the archived log.
//!
//! A reply is accepted only when all of these hold, checked in this order (the first
//! failure gives the reason):
//!
//! 1. at most [`MAX_REPLY_BYTES`] bytes ([`ReasonCode::ReplyTooLarge`]);
//! 2. one JSON document, optionally inside a single fenced ```` ```json ```` block
//!    ([`ReasonCode::InvalidJson`]);
//! 3. an object with `schema` = [`RECEIPT_SCHEMA`], `source_sha256` = the log's hash,
//!    `status` = the status the result's `isError` flag requires, a boolean `uncertain`,
//!    and an `evidence` array of at most [`MAX_EVIDENCE_ITEMS`] items
//!    ([`ReasonCode::SchemaMismatch`]);
//! 4. every item has a known `kind` and a non-empty string `quote` of at most
//!    [`MAX_QUOTE_CHARS`] UTF-16 units found in the log **byte for byte**: no trimming, no
//!    whitespace or case normalisation ([`ReasonCode::UnverifiableQuote`]);
//! 5. for a failed result, `fatal` and `failure` items that keep what identifies the
//!    failure: each failing test the log names, else one of its error lines, else a line
//!    that says more than a status word; a bare `FAILED` or `error` is not evidence
//!    ([`crate::failure`], [`ReasonCode::MissingFailureEvidence`]);
//! 6. for a successful result, a log that names no failing test: whatever the exit code
//!    says, a success receipt never replaces a log that names failing tests
//!    ([`crate::failure::check_success_log`], [`ReasonCode::SuccessWithFailingTests`]; the
//!    pipeline refuses such a log before any model call, this keeps the rule for every
//!    receipt, cached ones included).
//!
//! Duplicate `(kind, quote)` items are dropped; each kept item records the line of the
//! quote's first occurrence and the quote's hash.
//!
//! ```
//! use sol_reducer::receipt::{validate_receipt, ReceiptCheck};
//!
//! let log = "running 2 tests\ntest a ... ok\ntest b ... FAILED\nerror: test failed\n";
//! let check = ReceiptCheck { log, source_sha256: "abc", is_error: true };
//! let reply = r#"{"schema": "sol-pi-evidence-receipt/1", "source_sha256": "abc",
//!   "status": "failure", "uncertain": false,
//!   "evidence": [{"kind": "failure", "quote": "test b ... FAILED"}]}"#;
//! let receipt = validate_receipt(reply, &check).expect("a verified receipt");
//! assert_eq!(receipt.evidence[0].line, 3);
//!
//! // The same quote with its spaces collapsed is not in the log.
//! let reply = reply.replace("test b ... FAILED", "test b ...  FAILED");
//! let rejection = validate_receipt(&reply, &check).unwrap_err();
//! assert_eq!(rejection.reason.code(), "unverifiable-quote");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::digest::{sha256_hex, utf16_len};
use crate::failure::{check_failure_evidence, check_success_log, identify_failures};
use crate::reason::{Fallback, ReasonCode};
use crate::{MAX_EVIDENCE_ITEMS, MAX_QUOTE_CHARS, MAX_REPLY_BYTES, RECEIPT_SCHEMA};

/// A receipt's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ReceiptStatus {
    /// The command succeeded.
    Success,
    /// The command failed.
    Failure,
}

impl ReceiptStatus {
    /// The status a result with this `isError` flag requires.
    pub fn for_error_flag(is_error: bool) -> ReceiptStatus {
        if is_error {
            ReceiptStatus::Failure
        } else {
            ReceiptStatus::Success
        }
    }

    /// `success` or `failure`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReceiptStatus::Success => "success",
            ReceiptStatus::Failure => "failure",
        }
    }
}

/// The kind of an evidence item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum EvidenceKind {
    /// What stopped the build or run.
    Fatal,
    /// A failing test, check or step.
    Failure,
    /// A warning worth acting on.
    Warning,
    /// A target, package or test that the log is about.
    Target,
    /// A summary line, such as the final counts.
    Summary,
}

impl EvidenceKind {
    /// Every kind.
    pub const ALL: [EvidenceKind; 5] = [
        EvidenceKind::Fatal,
        EvidenceKind::Failure,
        EvidenceKind::Warning,
        EvidenceKind::Target,
        EvidenceKind::Summary,
    ];

    /// The kind as written in receipts.
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::Fatal => "fatal",
            EvidenceKind::Failure => "failure",
            EvidenceKind::Warning => "warning",
            EvidenceKind::Target => "target",
            EvidenceKind::Summary => "summary",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<EvidenceKind> {
        EvidenceKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

/// One quote that was found in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedEvidence {
    /// Its kind.
    pub kind: EvidenceKind,
    /// The quote, exactly as in the log.
    pub quote: String,
    /// 1-based line where the quote first starts.
    pub line: u64,
    /// SHA-256 of the quote.
    pub quote_sha256: String,
}

/// A receipt whose every quote was found in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedReceipt {
    /// `success` or `failure`, as the result's `isError` flag requires.
    pub status: ReceiptStatus,
    /// Whether the model found the log ambiguous.
    pub uncertain: bool,
    /// The verified quotes, duplicates removed, in the model's order.
    pub evidence: Vec<VerifiedEvidence>,
}

/// What a receipt is checked against.
#[derive(Debug, Clone, Copy)]
pub struct ReceiptCheck<'a> {
    /// The archived log, byte for byte.
    pub log: &'a str,
    /// Its SHA-256.
    pub source_sha256: &'a str,
    /// The result's `isError` flag (the required status).
    pub is_error: bool,
}

/// A rejected reply: the reason, and what exactly was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// One of the validation reasons.
    pub reason: ReasonCode,
    /// Which check failed, for the journal.
    pub detail: String,
}

impl Rejection {
    fn new(reason: ReasonCode, detail: impl Into<String>) -> Rejection {
        Rejection {
            reason,
            detail: detail.into(),
        }
    }
}

impl From<Rejection> for Fallback {
    fn from(rejection: Rejection) -> Fallback {
        Fallback::new(rejection.reason).with(|facts| facts.detail = Some(rejection.detail))
    }
}

/// Validates a reply of the reducer model; see the module documentation.
pub fn validate_receipt(
    reply: &str,
    check: &ReceiptCheck<'_>,
) -> Result<VerifiedReceipt, Rejection> {
    if reply.len() > MAX_REPLY_BYTES {
        return Err(Rejection::new(
            ReasonCode::ReplyTooLarge,
            format!(
                "reply has {} bytes, more than {MAX_REPLY_BYTES}",
                reply.len()
            ),
        ));
    }
    let json = unfence(reply).ok_or_else(|| {
        Rejection::new(
            ReasonCode::InvalidJson,
            "reply has text around its fenced block",
        )
    })?;
    let value: Value = serde_json::from_str(json)
        .map_err(|error| Rejection::new(ReasonCode::InvalidJson, error.to_string()))?;
    let object = value
        .as_object()
        .ok_or_else(|| schema_mismatch("reply is not a JSON object"))?;
    let (status, uncertain, items) = check_shape(object, check)?;
    let evidence = verify_items(items, check.log)?;
    if check.is_error {
        let quotes: Vec<&str> = evidence
            .iter()
            .filter(|item| matches!(item.kind, EvidenceKind::Fatal | EvidenceKind::Failure))
            .map(|item| item.quote.as_str())
            .collect();
        // The log is scanned last, once the receipt's own checks have passed.
        let failures = identify_failures(check.log);
        check_failure_evidence(&failures, check.log, &quotes).map_err(|missing| {
            Rejection::new(ReasonCode::MissingFailureEvidence, missing.detail())
        })?;
    } else {
        check_success_log(&identify_failures(check.log)).map_err(|failing| {
            Rejection::new(ReasonCode::SuccessWithFailingTests, failing.detail())
        })?;
    }
    Ok(VerifiedReceipt {
        status,
        uncertain,
        evidence,
    })
}

/// The JSON text of `reply`: the reply itself, or the inside of one fenced block
/// (```` ``` ```` or ```` ```json ````) that is all the reply holds. `None` when there is
/// text around the block.
fn unfence(reply: &str) -> Option<&str> {
    let trimmed = reply.trim();
    let Some(after_fence) = trimmed.strip_prefix("```") else {
        return Some(trimmed);
    };
    let (info, rest) = after_fence.split_once('\n')?;
    let info = info.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
        return None;
    }
    let inner = rest.trim_end().strip_suffix("```")?;
    (!inner.contains("```")).then_some(inner)
}

fn schema_mismatch(detail: impl Into<String>) -> Rejection {
    Rejection::new(ReasonCode::SchemaMismatch, detail)
}

fn check_shape<'v>(
    object: &'v Map<String, Value>,
    check: &ReceiptCheck<'_>,
) -> Result<(ReceiptStatus, bool, &'v [Value]), Rejection> {
    if object.get("schema").and_then(Value::as_str) != Some(RECEIPT_SCHEMA) {
        return Err(schema_mismatch(format!("schema is not {RECEIPT_SCHEMA}")));
    }
    if object.get("source_sha256").and_then(Value::as_str) != Some(check.source_sha256) {
        return Err(schema_mismatch(
            "source_sha256 is not the archived log's hash",
        ));
    }
    let expected = ReceiptStatus::for_error_flag(check.is_error);
    if object.get("status").and_then(Value::as_str) != Some(expected.as_str()) {
        return Err(schema_mismatch(format!(
            "status must be {} for this result",
            expected.as_str()
        )));
    }
    let uncertain = object
        .get("uncertain")
        .and_then(Value::as_bool)
        .ok_or_else(|| schema_mismatch("uncertain is not a boolean"))?;
    let items = object
        .get("evidence")
        .and_then(Value::as_array)
        .ok_or_else(|| schema_mismatch("evidence is not an array"))?;
    if items.len() > MAX_EVIDENCE_ITEMS {
        return Err(schema_mismatch(format!(
            "evidence has {} items, more than {MAX_EVIDENCE_ITEMS}",
            items.len()
        )));
    }
    Ok((expected, uncertain, items))
}

fn verify_items(items: &[Value], log: &str) -> Result<Vec<VerifiedEvidence>, Rejection> {
    let mut evidence: Vec<VerifiedEvidence> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let unverifiable = |what: &str| {
            Rejection::new(
                ReasonCode::UnverifiableQuote,
                format!("evidence[{index}]: {what}"),
            )
        };
        let kind = item
            .get("kind")
            .and_then(Value::as_str)
            .and_then(EvidenceKind::parse)
            .ok_or_else(|| {
                unverifiable("kind is not fatal, failure, warning, target or summary")
            })?;
        let quote = item
            .get("quote")
            .and_then(Value::as_str)
            .ok_or_else(|| unverifiable("quote is not a string"))?;
        if quote.is_empty() {
            return Err(unverifiable("quote is empty"));
        }
        if utf16_len(quote) > MAX_QUOTE_CHARS {
            return Err(unverifiable("quote is longer than 600 characters"));
        }
        let offset = log
            .find(quote)
            .ok_or_else(|| unverifiable("quote is not in the log byte for byte"))?;
        if evidence
            .iter()
            .any(|kept| kept.kind == kind && kept.quote == quote)
        {
            continue;
        }
        let line = log.as_bytes()[..offset]
            .iter()
            .filter(|&&byte| byte == b'\n')
            .count() as u64
            + 1;
        evidence.push(VerifiedEvidence {
            kind,
            quote: quote.to_owned(),
            line,
            quote_sha256: sha256_hex(quote.as_bytes()),
        });
    }
    Ok(evidence)
}

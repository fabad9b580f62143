//! Journal records: one custom session entry per decision about a candidate.
//!
//! Each record is appended with type [`crate::ENTRY_TYPE`] (`pi.appendEntry` in Pi,
//! [`sol_core::SessionStore::append_custom`] in a Rust host); custom entries never enter
//! the model's context. Every record starts with `schema`, `runId`, `kind` and
//! `timestamp`, followed by the kind's own fields in a fixed order.
//!
//! | kind | written when |
//! |---|---|
//! | `candidate` | the log was archived, before any model call (`sourceRepaired: true` when a damaged object was written again) |
//! | `provider_response` | the reducer model answered |
//! | `cache_hit` | a cached receipt is reused instead of calling the model |
//! | `fallback` | the result is left unchanged (journaled reasons only) |
//! | `applied` | the receipt replaced the log |
//!
//! ```
//! use camino::Utf8Path;
//! use sol_reducer::journal::{fallback_record, run_id, JournalHeader};
//! use sol_reducer::{Fallback, ReasonCode};
//!
//! let run = run_id(Utf8Path::new("/s/sol-pi/abc"));
//! let header = JournalHeader { run_id: &run, timestamp: "2025-01-01T00:00:00.000Z" };
//! let record = fallback_record(&header, "call_7", &Fallback::new(ReasonCode::LikelySecret));
//! assert_eq!(record["kind"], "fallback");
//! assert_eq!(record["reason"], "likely-secret");
//! ```

use camino::Utf8Path;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::JOURNAL_SCHEMA;
use crate::archive::ArchivedLog;
use crate::digest::sha256_hex;
use crate::model::{ReducerReply, Usage};
use crate::reason::{Fallback, FallbackFacts, ReasonCode};
use crate::render::Replacement;
use crate::source::{Source, SourceOrigin};

/// The first 16 hex digits of the SHA-256 of the runtime root: the same for every record
/// of one session's root.
pub fn run_id(runtime_root: &Utf8Path) -> String {
    let mut hash = sha256_hex(runtime_root.as_str().as_bytes());
    hash.truncate(16);
    hash
}

/// The fields every record starts with (after `schema`).
#[derive(Debug, Clone, Copy)]
pub struct JournalHeader<'a> {
    /// [`run_id`] of the runtime root.
    pub run_id: &'a str,
    /// When the decision was made, as the host formats it (ISO 8601 in Pi).
    pub timestamp: &'a str,
}

/// The record kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JournalKind {
    /// The log was archived.
    Candidate,
    /// The model answered.
    ProviderResponse,
    /// A cached receipt is reused.
    CacheHit,
    /// The result is left unchanged.
    Fallback,
    /// The receipt replaced the log.
    Applied,
}

impl JournalKind {
    /// The `kind` field's value.
    pub fn as_str(self) -> &'static str {
        match self {
            JournalKind::Candidate => "candidate",
            JournalKind::ProviderResponse => "provider_response",
            JournalKind::CacheHit => "cache_hit",
            JournalKind::Fallback => "fallback",
            JournalKind::Applied => "applied",
        }
    }
}

fn record(header: &JournalHeader<'_>, kind: JournalKind, body: impl Serialize) -> Value {
    let mut map = Map::new();
    map.insert("schema".to_owned(), Value::from(JOURNAL_SCHEMA));
    map.insert("runId".to_owned(), Value::from(header.run_id));
    map.insert("kind".to_owned(), Value::from(kind.as_str()));
    map.insert("timestamp".to_owned(), Value::from(header.timestamp));
    if let Ok(Value::Object(fields)) = serde_json::to_value(body) {
        map.extend(fields);
    }
    Value::Object(map)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CandidateBody<'a> {
    tool_call_id: &'a str,
    command_sha256: &'a str,
    is_error: bool,
    source_sha256: &'a str,
    source_bytes: u64,
    source_lines: u64,
    source_path: &'a str,
    source_origin: SourceOrigin,
    /// Only when a damaged object under the log's hash was written again from the log.
    #[serde(skip_serializing_if = "is_false")]
    source_repaired: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// `candidate`: the log of `source` is archived at `archived`.
pub fn candidate_record(
    header: &JournalHeader<'_>,
    source: &Source,
    archived: &ArchivedLog,
) -> Value {
    record(
        header,
        JournalKind::Candidate,
        CandidateBody {
            tool_call_id: source.tool_call_id(),
            command_sha256: source.command_sha256(),
            is_error: source.is_error(),
            source_sha256: source.sha256(),
            source_bytes: source.bytes(),
            source_lines: source.lines(),
            source_path: archived.path.as_str(),
            source_origin: source.origin(),
            source_repaired: archived.repaired,
        },
    )
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResponseBody<'a> {
    tool_call_id: &'a str,
    source_sha256: &'a str,
    provider: &'a str,
    model: &'a str,
    stop_reason: Option<&'a str>,
    error_message: Option<&'a str>,
    usage: Usage,
}

/// `provider_response`: the model answered `reply` for `source`.
pub fn provider_response_record(
    header: &JournalHeader<'_>,
    source: &Source,
    reply: &ReducerReply,
) -> Value {
    record(
        header,
        JournalKind::ProviderResponse,
        ResponseBody {
            tool_call_id: source.tool_call_id(),
            source_sha256: source.sha256(),
            provider: &reply.provider,
            model: &reply.model,
            stop_reason: reply.stop_reason.as_deref(),
            error_message: reply.error_message.as_deref(),
            usage: reply.usage,
        },
    )
}

/// `cache_hit`: a receipt the model wrote earlier (as `provider`/`model`) is reused for
/// `source`; it costs no tokens.
pub fn cache_hit_record(
    header: &JournalHeader<'_>,
    source: &Source,
    provider: &str,
    model: &str,
) -> Value {
    record(
        header,
        JournalKind::CacheHit,
        ResponseBody {
            tool_call_id: source.tool_call_id(),
            source_sha256: source.sha256(),
            provider,
            model,
            stop_reason: None,
            error_message: None,
            usage: Usage::default(),
        },
    )
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FallbackBody<'a> {
    reason: ReasonCode,
    tool_call_id: &'a str,
    #[serde(flatten)]
    facts: &'a FallbackFacts,
}

/// `fallback`: the result of call `tool_call_id` is left unchanged.
pub fn fallback_record(
    header: &JournalHeader<'_>,
    tool_call_id: &str,
    fallback: &Fallback,
) -> Value {
    record(
        header,
        JournalKind::Fallback,
        FallbackBody {
            reason: fallback.reason,
            tool_call_id,
            facts: &fallback.facts,
        },
    )
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AppliedBody<'a> {
    tool_call_id: &'a str,
    command_sha256: &'a str,
    source_sha256: &'a str,
    source_bytes: u64,
    receipt_sha256: &'a str,
    receipt_bytes: u64,
    evidence_count: u64,
    uncertain: bool,
    usage: Usage,
    cache_hit: bool,
}

/// `applied`: `replacement` replaced the log of `source`.
pub fn applied_record(
    header: &JournalHeader<'_>,
    source: &Source,
    replacement: &Replacement,
) -> Value {
    record(
        header,
        JournalKind::Applied,
        AppliedBody {
            tool_call_id: source.tool_call_id(),
            command_sha256: source.command_sha256(),
            source_sha256: source.sha256(),
            source_bytes: source.bytes(),
            receipt_sha256: &replacement.summary.receipt_sha256,
            receipt_bytes: replacement.summary.receipt_bytes,
            evidence_count: replacement.summary.evidence_count,
            uncertain: replacement.summary.uncertain,
            usage: replacement.provenance.usage,
            cache_hit: replacement.provenance.cache_hit,
        },
    )
}

//! Why a result was left unchanged: one stable code per reason, and the facts that go with
//! it into the journal.
//!
//! Every path that does not apply a receipt ends in a [`Fallback`]. The original result is
//! then returned untouched: the reducer fails open. Reasons that concern results which were
//! never candidates (another tool, a nested call, a short log) are not journaled, so the
//! session log records only decisions about real candidates.
//!
//! ```
//! use sol_reducer::ReasonCode;
//!
//! assert_eq!(ReasonCode::UnverifiableQuote.code(), "unverifiable-quote");
//! assert_eq!(ReasonCode::from_code("likely-secret"), Some(ReasonCode::LikelySecret));
//! assert!(!ReasonCode::NotDiagnosticCommand.is_journaled());
//! ```

use serde::{Deserialize, Serialize};

use crate::records::{ExitSignal, SecretKind, Usage, Verdict};

/// Why a tool result was left unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReasonCode {
    /// Not a `bash` result or a fused `edit`/`write` result (`codemode` included).
    IneligibleTool,
    /// A call made by another tool (a codemode script): it never reaches the transcript.
    NestedToolCall,
    /// A `bash` call without a command, or an `edit`/`write` call without `then_run`.
    NoCommand,
    /// The command is not one of the build and test commands.
    NotDiagnosticCommand,
    /// A fused result without a `[then_run:succeeded]`/`[then_run:failed]` text block.
    NoThenRunOutput,
    /// A `bash` result with an image or other non-text block.
    NonTextContent,
    /// The log is shorter than [`crate::MIN_SOURCE_BYTES`].
    SourceUnderMinBytes,
    /// The log is longer than [`crate::MAX_SOURCE_CHARS`].
    SourceOverMaxChars,
    /// Pi's full-output file was trusted but could not be read within the size limit.
    SourceUnavailableOrOverMaxChars,
    /// The exit signal in the result contradicts its `isError` flag.
    ExitStateMismatch,
    /// The log seems to carry a credential; it is not sent to a model.
    LikelySecret,
    /// The command reported success (exit 0, for example behind a pipe or `|| true`), yet
    /// its log names failing tests: no success receipt may stand in for it.
    SuccessWithFailingTests,
    /// Under the cache-aware policies: the reducer call is expected to cost more than the
    /// receipt would save ([`crate::economics`]).
    NotEconomic,
    /// The log could not be archived, or an archived copy did not match.
    ArchiveFailure,
    /// The configured reducer model is not available to the host.
    ReducerModelUnavailable,
    /// The model call did not answer in time.
    ModelCallTimeout,
    /// The model call was aborted.
    ModelCallAborted,
    /// The model call failed.
    ModelCallException,
    /// The model answered with a stop reason other than `stop` or `length`.
    ModelResponseError,
    /// The model's reply is larger than [`crate::MAX_REPLY_BYTES`].
    ReplyTooLarge,
    /// The model's reply is not one JSON document.
    InvalidJson,
    /// The receipt's schema, source hash, status, `uncertain`, or evidence list is wrong.
    SchemaMismatch,
    /// An evidence item's kind or quote is invalid, or a quote is not in the log verbatim.
    UnverifiableQuote,
    /// A failing log's receipt does not quote what identifies the failure (each failing
    /// test, or an error line; a bare `FAILED` is not evidence).
    MissingFailureEvidence,
    /// The receipt would not be smaller than the log.
    ReceiptNotSmaller,
}

impl ReasonCode {
    /// Every reason, in pipeline order.
    pub const ALL: [ReasonCode; 25] = [
        ReasonCode::IneligibleTool,
        ReasonCode::NestedToolCall,
        ReasonCode::NoCommand,
        ReasonCode::NotDiagnosticCommand,
        ReasonCode::NoThenRunOutput,
        ReasonCode::NonTextContent,
        ReasonCode::SourceUnderMinBytes,
        ReasonCode::SourceOverMaxChars,
        ReasonCode::SourceUnavailableOrOverMaxChars,
        ReasonCode::ExitStateMismatch,
        ReasonCode::LikelySecret,
        ReasonCode::SuccessWithFailingTests,
        ReasonCode::NotEconomic,
        ReasonCode::ArchiveFailure,
        ReasonCode::ReducerModelUnavailable,
        ReasonCode::ModelCallTimeout,
        ReasonCode::ModelCallAborted,
        ReasonCode::ModelCallException,
        ReasonCode::ModelResponseError,
        ReasonCode::ReplyTooLarge,
        ReasonCode::InvalidJson,
        ReasonCode::SchemaMismatch,
        ReasonCode::UnverifiableQuote,
        ReasonCode::MissingFailureEvidence,
        ReasonCode::ReceiptNotSmaller,
    ];

    /// The stable code, as written to the journal.
    pub fn code(self) -> &'static str {
        match self {
            ReasonCode::IneligibleTool => "ineligible-tool",
            ReasonCode::NestedToolCall => "nested-tool-call",
            ReasonCode::NoCommand => "no-command",
            ReasonCode::NotDiagnosticCommand => "not-diagnostic-command",
            ReasonCode::NoThenRunOutput => "no-then-run-output",
            ReasonCode::NonTextContent => "non-text-content",
            ReasonCode::SourceUnderMinBytes => "source-under-min-bytes",
            ReasonCode::SourceOverMaxChars => "source-over-max-chars",
            ReasonCode::SourceUnavailableOrOverMaxChars => "source-unavailable-or-over-max-chars",
            ReasonCode::ExitStateMismatch => "exit-state-mismatch",
            ReasonCode::LikelySecret => "likely-secret",
            ReasonCode::SuccessWithFailingTests => "success-with-failing-tests",
            ReasonCode::NotEconomic => "not-economic",
            ReasonCode::ArchiveFailure => "archive-failure",
            ReasonCode::ReducerModelUnavailable => "reducer-model-unavailable",
            ReasonCode::ModelCallTimeout => "model-call-timeout",
            ReasonCode::ModelCallAborted => "model-call-aborted",
            ReasonCode::ModelCallException => "model-call-exception",
            ReasonCode::ModelResponseError => "model-response-error",
            ReasonCode::ReplyTooLarge => "reply-too-large",
            ReasonCode::InvalidJson => "invalid-json",
            ReasonCode::SchemaMismatch => "schema-mismatch",
            ReasonCode::UnverifiableQuote => "unverifiable-quote",
            ReasonCode::MissingFailureEvidence => "missing-failure-evidence",
            ReasonCode::ReceiptNotSmaller => "receipt-not-smaller",
        }
    }

    /// The reason with this code.
    pub fn from_code(code: &str) -> Option<ReasonCode> {
        ReasonCode::ALL
            .into_iter()
            .find(|reason| reason.code() == code)
    }

    /// Whether a fallback for this reason is written to the journal. Results that were
    /// never candidates (every reason before [`ReasonCode::SourceOverMaxChars`]) are not.
    pub fn is_journaled(self) -> bool {
        self >= ReasonCode::SourceOverMaxChars
    }

    /// One sentence for people reading a journal or a log.
    pub fn description(self) -> &'static str {
        match self {
            ReasonCode::IneligibleTool => {
                "Only bash results and edit/write results fused with then_run are reduced."
            }
            ReasonCode::NestedToolCall => {
                "The call was made by another tool, such as a codemode script; its result never reaches the transcript."
            }
            ReasonCode::NoCommand => {
                "The call carries no command (bash without a command, or edit/write without then_run)."
            }
            ReasonCode::NotDiagnosticCommand => {
                "The command is not one of the build and test commands whose logs are reduced."
            }
            ReasonCode::NoThenRunOutput => {
                "The fused result has no [then_run:succeeded] or [then_run:failed] block with command output."
            }
            ReasonCode::NonTextContent => {
                "The bash result holds a non-text block, so it is passed through as it is."
            }
            ReasonCode::SourceUnderMinBytes => {
                "The log is shorter than 4,096 bytes; reducing it would save too little."
            }
            ReasonCode::SourceOverMaxChars => {
                "The log is longer than 600,000 characters; it is kept in full."
            }
            ReasonCode::SourceUnavailableOrOverMaxChars => {
                "Pi's full-output file could not be read within the size limit, so the exact log is unknown."
            }
            ReasonCode::ExitStateMismatch => {
                "The exit signal in the result contradicts its error flag, so the status a receipt must carry is unclear."
            }
            ReasonCode::LikelySecret => {
                "The log seems to contain a credential, so it is not sent to the reducer model."
            }
            ReasonCode::SuccessWithFailingTests => {
                "The command reported success, but its log names failing tests (an exit code hidden by a pipe or `|| true`), so the agent reads the log itself."
            }
            ReasonCode::NotEconomic => {
                "The reducer call is expected to cost more than the receipt would save over the session's expected remaining requests."
            }
            ReasonCode::ArchiveFailure => {
                "The log could not be archived, or the archived copy did not match it byte for byte."
            }
            ReasonCode::ReducerModelUnavailable => {
                "The configured reducer model is not available to the host."
            }
            ReasonCode::ModelCallTimeout => "The reducer model did not answer within 90 seconds.",
            ReasonCode::ModelCallAborted => "The reducer model call was aborted.",
            ReasonCode::ModelCallException => "The reducer model call failed.",
            ReasonCode::ModelResponseError => {
                "The reducer model stopped with an error instead of finishing its answer."
            }
            ReasonCode::ReplyTooLarge => {
                "The reducer model's reply is larger than any valid receipt can be."
            }
            ReasonCode::InvalidJson => "The reducer model's reply is not one JSON document.",
            ReasonCode::SchemaMismatch => {
                "The receipt's schema, source hash, status, uncertain flag or evidence list is wrong."
            }
            ReasonCode::UnverifiableQuote => {
                "An evidence item has an unknown kind or a quote that is not found in the log byte for byte."
            }
            ReasonCode::MissingFailureEvidence => {
                "The log shows a failure, but the receipt's failure and fatal quotes do not keep what identifies it: each failing test the log names, or an error line; a bare status word is not evidence."
            }
            ReasonCode::ReceiptNotSmaller => "The receipt would not be smaller than the log.",
        }
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// The decision to leave a result unchanged: the reason and what is known about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    /// Why.
    pub reason: ReasonCode,
    /// Facts for the journal record (boxed: a fallback travels in every `Err`).
    pub facts: Box<FallbackFacts>,
}

impl Fallback {
    /// A fallback with no facts beyond its reason.
    pub fn new(reason: ReasonCode) -> Fallback {
        Fallback {
            reason,
            facts: Box::default(),
        }
    }

    /// This fallback with `facts`.
    pub fn with(mut self, update: impl FnOnce(&mut FallbackFacts)) -> Fallback {
        update(&mut self.facts);
        self
    }
}

/// What a fallback record says beyond its reason; absent facts are left out of the record.
/// Serializes in this field order, with camelCase keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FallbackFacts {
    /// Hash of the log, once it is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_sha256: Option<String>,
    /// Size of the log in UTF-8 bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_bytes: Option<u64>,
    /// The minimum size of a log worth reducing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_bytes: Option<u64>,
    /// Length of the log in UTF-16 code units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_chars: Option<u64>,
    /// The maximum length of a log that is reduced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<u64>,
    /// The result's error flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// The exit signal read from the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_signal: Option<ExitSignal>,
    /// The result's exit code (Pi 1.x: the structured one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The secret rule that fired (never the secret).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_kind: Option<SecretKind>,
    /// 1-based line where the secret rule fired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_line: Option<u64>,
    /// The reducer model's provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The reducer model's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model's stop reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The model's or host's error message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Size of the reply in UTF-8 bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_bytes: Option<u64>,
    /// Size of the receipt text in UTF-8 bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt_bytes: Option<u64>,
    /// What exactly failed, for people (for example which evidence item).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Tokens the model call used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The figures of a reduction that would not pay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub economics: Option<Verdict>,
}

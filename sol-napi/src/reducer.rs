//! Evidence-Preserving Reducer exports. Pi's model call is asynchronous, so the
//! host runs the reducer in two steps around it: `prepare` (candidate, source,
//! secret gate, archive before any model call, cached receipt) and `finish`
//! (check the reply, build the receipt). Both are stateless apart from the
//! receipt cache held by the [`Reducer`] instance; `finish` re-derives the
//! source and finds the archive already in place.

use std::sync::Mutex;

use camino::{Utf8Path, Utf8PathBuf};
use napi_derive::napi;
use serde_json::Value;
use sol_core::ModelError;
use sol_core::message::ContentBlock;
use sol_reducer::archive::{ArchivedLog, archive_source, read_archived, store_root};
use sol_reducer::cache::{CacheKey, CachedReceipt, reuse_cached};
use sol_reducer::journal::{
    JournalHeader, applied_record, cache_hit_record, candidate_record, fallback_record,
    provider_response_record, run_id,
};
use sol_reducer::model::{fallback_for_model_error, model_request};
use sol_reducer::notice::{STATUS_CLEAR_MS, STATUS_KEY, savings_status};
use sol_reducer::render::apply_reply;
use sol_reducer::{
    ENTRY_TYPE, Fallback, ReasonCode, ReceiptCache, ReducerReply, Replacement, Route, Source,
    ToolResultView, Usage, prepare_source, select_candidate,
};

use crate::NativeFileSystem;
use crate::boundary::quiet;

/// One tool result, as the `tool_result` event gives it.
#[napi(object)]
pub struct ReducerInput {
    /// `event.toolCallId`.
    pub tool_call_id: String,
    /// `event.toolName`.
    pub tool_name: String,
    /// `JSON.stringify(event.input)`.
    pub input_json: String,
    /// `JSON.stringify(event.content)`.
    pub content_json: String,
    /// `JSON.stringify(event.details)`, when there are details.
    pub details_json: Option<String>,
    /// `event.isError`.
    pub is_error: bool,
    /// `event.parentToolCallId` (Pi 1.x script calls).
    pub parent_tool_call_id: Option<String>,
    /// `event.structuredContent.exit_code` (Pi 1.x bash).
    pub exit_code: Option<f64>,
    /// The session's runtime root.
    pub runtime_root: String,
    /// The real OS temp directory (where Pi writes full-output files).
    pub os_temp_dir: String,
    /// ISO timestamp for the journal.
    pub timestamp: String,
    /// The reducer provider from `sol-pi.json`.
    pub provider: String,
    /// The reducer model from `sol-pi.json`.
    pub model: String,
}

/// The request the host sends through `ctx.modelRegistry.complete()`.
#[napi(object)]
pub struct ReducerModelRequest {
    /// System prompt.
    pub system_prompt: String,
    /// The one user message.
    pub user_text: String,
    /// Reply length cap.
    pub max_output_tokens: u32,
    /// Give up after this long.
    pub timeout_ms: u32,
}

/// What came back from the model call.
#[napi(object)]
pub struct ReducerReplyInput {
    /// The reply text (text blocks concatenated).
    pub text: Option<String>,
    /// The provider that answered.
    pub provider: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// The reply's stop reason.
    pub stop_reason: Option<String>,
    /// The reply's error message.
    pub error_message: Option<String>,
    /// Input tokens.
    pub input_tokens: Option<f64>,
    /// Output tokens.
    pub output_tokens: Option<f64>,
    /// Cache-read tokens.
    pub cache_read_tokens: Option<f64>,
    /// Cache-write tokens.
    pub cache_write_tokens: Option<f64>,
    /// All tokens.
    pub total_tokens: Option<f64>,
    /// Set when no reply came: `unavailable`, `timeout`, `aborted` or `exception`.
    pub failure: Option<String>,
    /// The exception's message for `exception`.
    pub failure_message: Option<String>,
}

/// The savings notice of an applied receipt (TUI only).
#[napi(object)]
pub struct ReducerNotice {
    /// The notice text.
    pub notice: String,
    /// The keyed status text.
    pub status: String,
    /// The status key.
    pub status_key: String,
    /// How long the status stays.
    pub status_clear_ms: u32,
}

/// One step's outcome: journal records to append in order, then either nothing
/// to change (`unchanged`), a model call to make (`model`), or a replacement.
#[napi(object)]
pub struct ReducerStep {
    /// `unchanged`, `model` or `replaced`.
    pub kind: String,
    /// Why the result stays unchanged.
    pub reason: Option<String>,
    /// The custom entry type of the journal records.
    pub entry_type: String,
    /// Journal records, in order.
    pub journal: Vec<Value>,
    /// The model call to make (`model`).
    pub model_request: Option<ReducerModelRequest>,
    /// Replacement content blocks (`replaced`).
    pub content: Option<Value>,
    /// Replacement details (`replaced`).
    pub details: Option<Value>,
    /// The savings notice (`replaced`).
    pub notice: Option<ReducerNotice>,
}

impl ReducerStep {
    fn new(kind: &str, journal: Vec<Value>) -> Self {
        ReducerStep {
            kind: kind.to_owned(),
            reason: None,
            entry_type: ENTRY_TYPE.to_owned(),
            journal,
            model_request: None,
            content: None,
            details: None,
            notice: None,
        }
    }

    fn unchanged(reason: ReasonCode, journal: Vec<Value>) -> Self {
        ReducerStep {
            reason: Some(reason.code().to_owned()),
            ..ReducerStep::new("unchanged", journal)
        }
    }

    fn replaced(replacement: &Replacement, journal: Vec<Value>) -> Self {
        let removed = replacement.bytes_removed();
        ReducerStep {
            content: serde_json::to_value(&replacement.content).ok(),
            details: Some(replacement.details.clone()),
            notice: Some(ReducerNotice {
                notice: replacement.notice(),
                status: savings_status(removed),
                status_key: STATUS_KEY.to_owned(),
                status_clear_ms: STATUS_CLEAR_MS,
            }),
            ..ReducerStep::new("replaced", journal)
        }
    }
}

/// The parsed parts of a [`ReducerInput`] that [`ToolResultView`] borrows.
struct Parsed {
    input: Value,
    content: Vec<ContentBlock>,
    details: Option<Value>,
}

/// A prepared candidate: its source and the archive that now holds it.
struct Prepared {
    source: Source,
    archived: ArchivedLog,
}

/// The reducer for one loaded extension: holds the in-memory receipt cache.
#[napi]
pub struct Reducer {
    cache: Mutex<ReceiptCache>,
}

impl Default for Reducer {
    fn default() -> Self {
        Reducer {
            cache: Mutex::new(ReceiptCache::new()),
        }
    }
}

fn parse(input: &ReducerInput) -> Option<Parsed> {
    Some(Parsed {
        input: serde_json::from_str(&input.input_json).ok()?,
        content: serde_json::from_str(&input.content_json).ok()?,
        details: match input.details_json.as_deref() {
            Some(json) => Some(serde_json::from_str(json).ok()?),
            None => None,
        },
    })
}

fn fallback_journal(
    header: &JournalHeader<'_>,
    input: &ReducerInput,
    fallback: &Fallback,
    mut journal: Vec<Value>,
) -> ReducerStep {
    if fallback.reason.is_journaled() {
        journal.push(fallback_record(header, &input.tool_call_id, fallback));
    }
    ReducerStep::unchanged(fallback.reason, journal)
}

fn route(input: &ReducerInput) -> Route {
    Route::new(input.provider.clone(), input.model.clone())
}

fn usage(reply: &ReducerReplyInput) -> Usage {
    let count = |n: Option<f64>| {
        n.filter(|n| n.is_finite() && *n > 0.0)
            .map_or(0, |n| n as u64)
    };
    Usage {
        input: count(reply.input_tokens),
        output: count(reply.output_tokens),
        cache_read: count(reply.cache_read_tokens),
        cache_write: count(reply.cache_write_tokens),
        total_tokens: count(reply.total_tokens),
    }
}

fn model_error(reply: &ReducerReplyInput, route: &Route) -> Option<ModelError> {
    Some(match reply.failure.as_deref()? {
        "unavailable" => ModelError::Unavailable {
            provider: route.provider.clone(),
            model: route.model.clone(),
        },
        "timeout" => ModelError::TimedOut {
            after_ms: sol_reducer::MODEL_TIMEOUT_MS,
        },
        "aborted" => ModelError::Aborted,
        _ => ModelError::Failed {
            message: reply
                .failure_message
                .clone()
                .unwrap_or_else(|| "the model call failed".to_owned()),
        },
    })
}

impl Reducer {
    /// Selects the candidate, prepares its source and archives it, or gives the step to
    /// return now (not a candidate, or a fallback before any model call).
    fn stage(
        &self,
        input: &ReducerInput,
        header: &JournalHeader<'_>,
    ) -> Result<Prepared, Box<ReducerStep>> {
        let Some(parsed) = parse(input) else {
            return Err(Box::new(ReducerStep::unchanged(
                ReasonCode::NonTextContent,
                Vec::new(),
            )));
        };
        let view = ToolResultView {
            tool_call_id: &input.tool_call_id,
            tool_name: &input.tool_name,
            input: &parsed.input,
            content: &parsed.content,
            details: parsed.details.as_ref(),
            is_error: input.is_error,
            parent_tool_call_id: input.parent_tool_call_id.as_deref(),
            exit_code: input
                .exit_code
                .filter(|code| code.is_finite())
                .map(|code| code as i64),
        };
        let candidate = match select_candidate(&view) {
            Ok(candidate) => candidate,
            Err(fallback) => {
                return Err(Box::new(fallback_journal(
                    header,
                    input,
                    &fallback,
                    Vec::new(),
                )));
            }
        };
        let temp = Utf8Path::new(&input.os_temp_dir);
        let full_output =
            sol_reducer::driver::read_full_output(&NativeFileSystem, &candidate, temp);
        let source = match prepare_source(candidate, full_output) {
            Ok(source) => source,
            Err(fallback) => {
                return Err(Box::new(fallback_journal(
                    header,
                    input,
                    &fallback,
                    Vec::new(),
                )));
            }
        };
        let root = store_root(Utf8Path::new(&input.runtime_root));
        let archived = match archive_source(&NativeFileSystem, &root, &source) {
            Ok(archived) => archived,
            Err(error) => {
                let fallback = Fallback::new(ReasonCode::ArchiveFailure).with(|facts| {
                    facts.source_sha256 = Some(source.sha256().to_owned());
                    facts.detail = Some(error.to_string());
                });
                return Err(Box::new(fallback_journal(
                    header,
                    input,
                    &fallback,
                    Vec::new(),
                )));
            }
        };
        Ok(Prepared { source, archived })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, ReceiptCache> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[napi]
impl Reducer {
    /// A reducer with an empty receipt cache.
    #[napi(constructor)]
    pub fn new() -> Self {
        Reducer::default()
    }

    /// First step: returns `unchanged`, `replaced` (a cached receipt re-verified
    /// against the archive), or `model` with the request to send.
    #[napi(catch_unwind)]
    pub fn prepare(&self, input: ReducerInput) -> ReducerStep {
        quiet(|| {
            let run = run_id(Utf8Path::new(&input.runtime_root));
            let header = JournalHeader {
                run_id: &run,
                timestamp: &input.timestamp,
            };
            let Prepared { source, archived } = match self.stage(&input, &header) {
                Ok(prepared) => prepared,
                Err(step) => return *step,
            };
            let mut journal = vec![candidate_record(&header, &source, &archived)];
            let route = route(&input);
            let key = CacheKey::new(&source, &route);
            let cached = self.cache().get(&key);
            if let Some(cached) = cached {
                journal.push(cache_hit_record(
                    &header,
                    &source,
                    &cached.provider,
                    &cached.model,
                ));
                let reused = read_archived(
                    &NativeFileSystem,
                    &archived.path,
                    &archived.sha256,
                    archived.bytes,
                )
                .map_err(|error| {
                    Fallback::new(ReasonCode::ArchiveFailure).with(|facts| {
                        facts.source_sha256 = Some(source.sha256().to_owned());
                        facts.detail = Some(error.to_string());
                    })
                })
                .and_then(|text| reuse_cached(&source, &archived, &text, &cached));
                return match reused {
                    Ok(replacement) => {
                        journal.push(applied_record(&header, &source, &replacement));
                        ReducerStep::replaced(&replacement, journal)
                    }
                    Err(fallback) => {
                        self.cache().remove(&key);
                        fallback_journal(&header, &input, &fallback, journal)
                    }
                };
            }
            let request = model_request(&source, &route);
            ReducerStep {
                model_request: Some(ReducerModelRequest {
                    system_prompt: request.system_prompt,
                    user_text: request.user_text,
                    max_output_tokens: request.max_output_tokens,
                    timeout_ms: u32::try_from(request.timeout_ms).unwrap_or(u32::MAX),
                }),
                ..ReducerStep::new("model", journal)
            }
        })
    }

    /// Second step: checks the model's reply against the archived log and builds
    /// the receipt, or keeps the original with the fallback reason.
    #[napi(catch_unwind)]
    pub fn finish(&self, input: ReducerInput, reply: ReducerReplyInput) -> ReducerStep {
        quiet(|| {
            let run = run_id(Utf8Path::new(&input.runtime_root));
            let header = JournalHeader {
                run_id: &run,
                timestamp: &input.timestamp,
            };
            // The candidate was journaled by `prepare`; the archive is found in place.
            let Prepared { source, archived } = match self.stage(&input, &header) {
                Ok(prepared) => prepared,
                Err(step) => return *step,
            };
            let route = route(&input);
            if let Some(error) = model_error(&reply, &route) {
                let fallback = fallback_for_model_error(&error)
                    .with(|facts| facts.source_sha256 = Some(source.sha256().to_owned()));
                return fallback_journal(&header, &input, &fallback, Vec::new());
            }
            let answer = ReducerReply {
                text: reply.text.clone().unwrap_or_default(),
                provider: reply
                    .provider
                    .clone()
                    .unwrap_or_else(|| route.provider.clone()),
                model: reply.model.clone().unwrap_or_else(|| route.model.clone()),
                stop_reason: reply.stop_reason.clone(),
                error_message: reply.error_message.clone(),
                usage: usage(&reply),
            };
            let mut journal = vec![provider_response_record(&header, &source, &answer)];
            match apply_reply(&source, &archived, &answer) {
                Ok(replacement) => {
                    journal.push(applied_record(&header, &source, &replacement));
                    self.cache().insert(
                        CacheKey::new(&source, &route),
                        CachedReceipt::from_reply(&answer),
                    );
                    ReducerStep::replaced(&replacement, journal)
                }
                Err(fallback) => fallback_journal(&header, &input, &fallback, journal),
            }
        })
    }
}

/// The real OS temp directory, for trusting Pi's `pi-bash-*.log` files.
#[napi(catch_unwind)]
pub fn real_temp_dir(temp_dir: String) -> Option<String> {
    quiet(|| {
        std::fs::canonicalize(&temp_dir)
            .ok()
            .and_then(|path| Utf8PathBuf::from_path_buf(path).ok())
            .map(|path| path.to_string())
    })
}

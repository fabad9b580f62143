//! Evidence-Preserving Reducer exports: the step API of `sol_reducer::step` for an
//! asynchronous host. `Reducer.begin` runs [`Reduction::start`] (with the native file
//! system and the instance's receipt cache) and returns the decision, or a model request
//! with a [`ReducerReduction`] whose `finish` takes the model's answer. This file only
//! converts between JavaScript values and the step's inputs and outputs.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use camino::{Utf8Path, Utf8PathBuf};
use napi_derive::napi;
use serde_json::Value;
use sol_core::message::ContentBlock;
use sol_core::savings::Watched;
use sol_core::{Mechanism, ModelError};
use sol_reducer::economics::Economy;
use sol_reducer::notice::{STATUS_CLEAR_MS, STATUS_KEY, savings_status};
use sol_reducer::pi::ToolResultView;
use sol_reducer::step::{Decision, Done, ReduceContext, Reduction, Start};
use sol_reducer::{ENTRY_TYPE, Policy, ReasonCode, ReceiptCache, ReducerReply, Route, Usage};

use crate::boundary::quiet;
use crate::engine::Engine;
use crate::savings::{SharedBook, price_table};
use crate::{JsStepAccount, NativeFileSystem};

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
    /// `event.structuredContent` (Pi 1.x bash: its `exit_code` is read).
    #[napi(ts_type = "unknown")]
    pub structured_content: Option<Value>,
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
    /// The assistant messages the context carries now (the cache-aware horizon's input);
    /// read only when the reducer was made with a [`ReducerEconomy`].
    pub carried_requests: Option<u32>,
}

/// The cache-aware policy of `sol-pi.json` (`cacheAware`), for [`Reducer::new`].
#[napi(object)]
pub struct ReducerEconomy {
    /// `cacheWriteReadRatio`.
    pub cache_write_read_ratio: f64,
    /// `prices`, when the file sets them (the default table without).
    pub prices: Option<crate::savings::SavingsPrices>,
}

/// The request the host sends through `ctx.modelRegistry.complete()`.
#[napi(object)]
pub struct ReducerModelRequest {
    /// Provider id to find the model by.
    pub provider: String,
    /// Model id to find the model by.
    pub model: String,
    /// System prompt.
    pub system_prompt: String,
    /// The one user message.
    pub user_text: String,
    /// Reply length cap (the host caps it at the model's own limit).
    pub max_output_tokens: u32,
    /// Give up after this long.
    pub timeout_ms: u32,
}

/// What came of the model call.
#[napi(
    discriminant = "kind",
    discriminant_case = "camelCase",
    object_to_js = false
)]
pub enum ReducerModelAnswer {
    /// The model replied: Pi's assistant message as `complete()` resolved it (its text
    /// blocks, provider, model, stop reason, error message and usage are read).
    Reply {
        /// The assistant message.
        #[napi(ts_type = "unknown")]
        message: Option<Value>,
    },
    /// The registry has no such model: no call was made.
    Unavailable {},
    /// No reply within the request's timeout.
    Timeout {},
    /// The run was aborted during the call.
    Aborted {},
    /// The call threw.
    Exception {
        /// The exception's message.
        message: String,
    },
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

/// A content block of a reduced result.
#[napi(
    discriminant = "type",
    discriminant_case = "lowercase",
    object_from_js = false
)]
pub enum ReducerContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, unchanged.
    Image {
        /// Base64 data.
        data: String,
        /// Media type.
        mime_type: String,
    },
}

impl From<ContentBlock> for ReducerContentBlock {
    fn from(block: ContentBlock) -> Self {
        match block {
            ContentBlock::Text { text } => ReducerContentBlock::Text { text },
            ContentBlock::Image { data, mime_type } => {
                ReducerContentBlock::Image { data, mime_type }
            }
        }
    }
}

/// A finished reduction: append `journal` (as `entryType` entries) in order, then keep
/// the result or return the replacement.
#[napi(
    discriminant = "kind",
    discriminant_case = "camelCase",
    object_from_js = false
)]
pub enum ReducerDone {
    /// Keep the original result.
    Unchanged {
        /// The reason code.
        reason: String,
        /// The custom entry type of the journal records.
        entry_type: String,
        /// Journal records, in order.
        #[napi(ts_type = "Array<Record<string, unknown>>")]
        journal: Vec<Value>,
        /// What the step saved and cost; absent when nothing (`crossing`).
        account: Option<JsStepAccount>,
    },
    /// Return this content and these details instead.
    Replaced {
        /// The custom entry type of the journal records.
        entry_type: String,
        /// Journal records, in order.
        #[napi(ts_type = "Array<Record<string, unknown>>")]
        journal: Vec<Value>,
        /// The projected content.
        content: Vec<ReducerContentBlock>,
        /// The details, with `evidencePreservingReducer`.
        #[napi(ts_type = "Record<string, unknown>")]
        details: Value,
        /// The savings notice.
        notice: ReducerNotice,
        /// What the step saved and cost; absent when nothing (`crossing`).
        account: Option<JsStepAccount>,
        /// The id the session's book registered the receipt under: a request that carries a
        /// tool result whose first text is the receipt's is reported with it. Absent for a
        /// reducer made without the engine.
        watch: Option<u32>,
    },
}

impl From<Done> for ReducerDone {
    fn from(done: Done) -> Self {
        let entry_type = ENTRY_TYPE.to_owned();
        let journal = done.journal;
        let account = crate::account::crossing(done.account);
        match done.decision {
            Decision::Unchanged(reason) => ReducerDone::Unchanged {
                reason: reason.code().to_owned(),
                entry_type,
                journal,
                account,
            },
            Decision::Replaced(replacement) => {
                let removed = replacement.bytes_removed();
                let notice = ReducerNotice {
                    notice: replacement.notice(),
                    status: savings_status(removed),
                    status_key: STATUS_KEY.to_owned(),
                    status_clear_ms: STATUS_CLEAR_MS,
                };
                ReducerDone::Replaced {
                    entry_type,
                    journal,
                    content: replacement.content.into_iter().map(Into::into).collect(),
                    details: replacement.details,
                    notice,
                    account,
                    watch: None,
                }
            }
        }
    }
}

/// What `Reducer.begin` returns: a finished reduction, or a model call to make.
#[napi(
    discriminant = "kind",
    discriminant_case = "camelCase",
    object_from_js = false
)]
#[allow(
    clippy::large_enum_variant,
    reason = "made once per tool result and converted to a JavaScript object at once"
)]
pub enum ReducerBegin {
    /// No model call is needed: the reduction is finished.
    Done {
        /// What to do with the result.
        done: ReducerDone,
    },
    /// Append `journal`, send `request`, then call `reduction.finish` with the answer.
    AskModel {
        /// The custom entry type of the journal records.
        entry_type: String,
        /// Records to append before the call.
        #[napi(ts_type = "Array<Record<string, unknown>>")]
        journal: Vec<Value>,
        /// The model call to make.
        request: ReducerModelRequest,
        /// The reduction waiting for the answer.
        reduction: ReducerReduction,
    },
}

type SharedCache = Arc<Mutex<ReceiptCache>>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The reducer for one loaded extension: holds the in-memory receipt cache and, under the
/// cache-aware policy, the ratio and prices it weighs a reduction with.
#[napi]
pub struct Reducer {
    cache: SharedCache,
    economy: Option<Economy>,
    /// The session's savings book, where each finished reduction records its account.
    book: Option<SharedBook>,
}

impl Default for Reducer {
    fn default() -> Self {
        Reducer {
            cache: Arc::new(Mutex::new(ReceiptCache::new())),
            economy: None,
            book: None,
        }
    }
}

/// Records a finished reduction's account in the book, when there is one, and registers its
/// receipt there.
fn booked(book: Option<&SharedBook>, done: Done) -> ReducerDone {
    let Some(book) = book else {
        return done.into();
    };
    let account = done.account;
    book.record_step(Mechanism::EvidencePreservingReducer, account);
    let mut done = ReducerDone::from(done);
    if let ReducerDone::Replaced { watch, .. } = &mut done {
        *watch = Some(book.watch(Watched::Receipt {
            removed: account.tokens_removed,
        }));
    }
    done
}

/// A reduction waiting for the reducer model's answer.
#[napi]
pub struct ReducerReduction {
    cache: SharedCache,
    pending: Mutex<Option<Reduction>>,
    book: Option<SharedBook>,
}

fn parse_json(json: &str) -> Option<Value> {
    serde_json::from_str(json).ok()
}

#[napi]
impl Reducer {
    /// A reducer with an empty receipt cache; with `economy` (when `cacheAware` is on) it
    /// reads the log as the model saw it and skips reductions that would not pay. Made with
    /// the session's `engine`, each finished reduction records its account in its book.
    #[napi(constructor)]
    pub fn new(economy: Option<ReducerEconomy>, engine: Option<&Engine>) -> napi::Result<Self> {
        let economy = match economy {
            None => None,
            Some(economy) => Some(Economy {
                prices: price_table(economy.prices)?,
                write_read_ratio: economy.cache_write_read_ratio,
                carried_requests: 0,
            }),
        };
        Ok(Reducer {
            economy,
            book: engine.map(|engine| engine.book.clone()),
            ..Reducer::default()
        })
    }

    /// The first step for one tool result.
    #[napi(catch_unwind)]
    pub fn begin(&self, input: ReducerInput) -> ReducerBegin {
        quiet(|| {
            let parsed = (|| {
                let details = match input.details_json.as_deref() {
                    Some(json) => Some(parse_json(json)?),
                    None => None,
                };
                let content: Vec<ContentBlock> = serde_json::from_str(&input.content_json).ok()?;
                Some((parse_json(&input.input_json)?, content, details))
            })();
            // Content that is not Pi's text and image blocks is never reduced.
            let Some((tool_input, content, details)) = parsed else {
                let done = ReducerDone::Unchanged {
                    reason: ReasonCode::NonTextContent.code().to_owned(),
                    entry_type: ENTRY_TYPE.to_owned(),
                    journal: Vec::new(),
                    account: None,
                };
                return ReducerBegin::Done { done };
            };
            let view = ToolResultView {
                tool_call_id: &input.tool_call_id,
                tool_name: &input.tool_name,
                input: &tool_input,
                content: &content,
                details: details.as_ref(),
                is_error: input.is_error,
                parent_tool_call_id: input.parent_tool_call_id.as_deref(),
                exit_code: exit_code(input.structured_content.as_ref()),
                os_temp_dir: Some(Utf8Path::new(&input.os_temp_dir)),
            };
            let route = Route::new(input.provider.clone(), input.model.clone());
            let context = ReduceContext {
                route: &route,
                runtime_root: Utf8Path::new(&input.runtime_root),
                timestamp: &input.timestamp,
                policy: Policy::pi(),
                economy: self.economy.map(|economy| Economy {
                    carried_requests: input.carried_requests.unwrap_or(0),
                    ..economy
                }),
            };
            let start = Reduction::start(
                &view,
                &context,
                &NativeFileSystem,
                Some(&mut lock(&self.cache)),
            );
            match start {
                Start::Done(done) => ReducerBegin::Done {
                    done: booked(self.book.as_ref(), done),
                },
                Start::AskModel(ask) => {
                    let ask = *ask;
                    let request = ask.request;
                    ReducerBegin::AskModel {
                        entry_type: ENTRY_TYPE.to_owned(),
                        journal: ask.journal,
                        request: ReducerModelRequest {
                            provider: request.provider,
                            model: request.model,
                            system_prompt: request.system_prompt,
                            user_text: request.user_text,
                            max_output_tokens: request.max_output_tokens,
                            timeout_ms: u32::try_from(request.timeout.as_millis())
                                .unwrap_or(u32::MAX),
                        },
                        reduction: ReducerReduction {
                            cache: Arc::clone(&self.cache),
                            pending: Mutex::new(Some(ask.reduction)),
                            book: self.book.clone(),
                        },
                    }
                }
            }
        })
    }
}

fn count(usage: Option<&Value>, key: &str) -> u64 {
    usage
        .and_then(|usage| usage.get(key))
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n > 0.0)
        .map_or(0, |n| n as u64)
}

fn string_at(message: &Value, key: &str) -> Option<String> {
    message.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The reply as the step reads it, from Pi's assistant message: the text blocks
/// concatenated, and whichever of provider, model, stop reason, error and usage it has.
pub fn reply_from_message(message: &Value, route: &Route) -> ReducerReply {
    let text = sol_core::message::text_blocks(message).collect::<String>();
    let usage = message.get("usage");
    ReducerReply {
        text,
        provider: string_at(message, "provider").unwrap_or_else(|| route.provider.clone()),
        model: string_at(message, "model").unwrap_or_else(|| route.model.clone()),
        stop_reason: string_at(message, "stopReason"),
        error_message: string_at(message, "errorMessage"),
        usage: Usage {
            input: count(usage, "input"),
            output: count(usage, "output"),
            cache_read: count(usage, "cacheRead"),
            cache_write: count(usage, "cacheWrite"),
            total_tokens: count(usage, "totalTokens"),
        },
    }
}

/// The step's input for what came of the model call.
fn answer(answer: ReducerModelAnswer, route: &Route) -> Result<ReducerReply, ModelError> {
    match answer {
        ReducerModelAnswer::Reply { message } => Ok(reply_from_message(
            message.as_ref().unwrap_or(&Value::Null),
            route,
        )),
        ReducerModelAnswer::Unavailable {} => Err(ModelError::Unavailable {
            provider: route.provider.clone(),
            model: route.model.clone(),
        }),
        ReducerModelAnswer::Timeout {} => Err(ModelError::TimedOut {
            after: sol_reducer::MODEL_TIMEOUT,
        }),
        ReducerModelAnswer::Aborted {} => Err(ModelError::Aborted),
        ReducerModelAnswer::Exception { message } => Err(ModelError::Failed { message }),
    }
}

#[napi]
impl ReducerReduction {
    /// The second step: what came of the model call, at `timestamp` (ISO, for the
    /// journal). Called once; a second call is a contract violation and throws.
    #[napi(catch_unwind)]
    pub fn finish(
        &self,
        model_answer: ReducerModelAnswer,
        timestamp: String,
    ) -> napi::Result<ReducerDone> {
        quiet(|| {
            let Some(reduction) = lock(&self.pending).take() else {
                return Err(napi::Error::from_reason(
                    "this reduction is already finished",
                ));
            };
            let answer = answer(model_answer, reduction.route());
            let done = reduction.finish(answer, &timestamp, Some(&mut lock(&self.cache)));
            Ok(booked(self.book.as_ref(), done))
        })
    }
}

/// `structuredContent.exit_code` of a tool result, when it is a finite number (truncated;
/// beyond `i32` it saturates, so a non-zero code stays non-zero).
pub fn exit_code(structured_content: Option<&Value>) -> Option<i32> {
    structured_content?
        .get("exit_code")?
        .as_f64()
        .filter(|code| code.is_finite())
        .map(|code| code as i32)
}

/// The tools whose results can hold a build or test log (`bash`, and the fused `edit` and
/// `write`): the host skips every other result without serializing it.
pub const CANDIDATE_TOOLS: [&str; 3] = sol_reducer::pi::CANDIDATE_TOOLS;

/// [`CANDIDATE_TOOLS`], for the host's filter.
#[napi(catch_unwind)]
pub fn reducer_tool_names() -> Vec<String> {
    quiet(|| CANDIDATE_TOOLS.map(str::to_owned).to_vec())
}

/// The reply length cap of a call: the request's, lowered to the model's own limit when the
/// registry gives one.
#[napi(catch_unwind)]
pub fn reducer_output_cap(requested: u32, model_max_tokens: Option<f64>) -> u32 {
    quiet(|| output_cap(requested, model_max_tokens))
}

/// See [`reducer_output_cap`].
pub fn output_cap(requested: u32, model_max_tokens: Option<f64>) -> u32 {
    match model_max_tokens {
        Some(limit) if limit.is_finite() && limit >= 0.0 => requested.min(limit as u32),
        _ => requested,
    }
}

/// The real OS temp directory, for trusting Pi's `pi-bash-*.log` files; `temp_dir` itself
/// when it cannot be resolved.
#[napi(catch_unwind)]
pub fn real_temp_dir(temp_dir: String) -> String {
    quiet(|| {
        std::fs::canonicalize(&temp_dir)
            .ok()
            .and_then(|path| Utf8PathBuf::from_path_buf(path).ok())
            .map_or(temp_dir, |path| path.to_string())
    })
}

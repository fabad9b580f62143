//! The savings book in the session engine: `SharedBook`, the book of the
//! [`Engine`](crate::engine::Engine) (its entries in `engine/book.rs`) and of the call objects
//! made with it, over the pure `sol_core::savings::SessionBook`: it converts what the shell
//! saw of each request and each response, and the `/sol-pi` table and the status line back.
//! The totals entry and the restore come with the engine's lifecycle steps; the mechanisms'
//! steps record their accounts in it inside Rust. Every rule is `sol_core`'s.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use napi::bindgen_prelude::{Float64Array, Uint8Array};
use napi_derive::napi;
use serde_json::Value;
use sol_core::savings::session::{Placeholder, Seen, ToolUse};
use sol_core::savings::{
    ModelPrices, PriceTable, ReportedUsage, Response, SAVINGS_ENTRY_TYPE, SentRequest, SessionBook,
    Watched,
};
use sol_core::session::SessionEntry;
use sol_core::{Mechanism, StepAccount};

use crate::account::count;
use crate::boundary::{quiet, whole_numbers};

/// The price table of `sol-pi.json` (`prices`), in dollars per million tokens.
#[napi(object)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SavingsPrices {
    /// Uncached input.
    pub input: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// Cache writes.
    pub cache_write: f64,
    /// Output.
    pub output: f64,
}

impl From<PriceTable> for SavingsPrices {
    fn from(table: PriceTable) -> SavingsPrices {
        SavingsPrices {
            input: table.input,
            cache_read: table.cache_read,
            cache_write: table.cache_write,
            output: table.output,
        }
    }
}

/// A message of the request whose content is the content registered under `id`: a receipt,
/// a summary or continuation Online Context Compact added, a fused call's result.
#[napi(object)]
#[derive(Debug, Clone, Copy)]
pub struct SavingsSeen {
    /// The message's index in the request.
    pub index: u32,
    /// The id its content was registered under.
    pub id: u32,
}

/// A message ObservationPack replaced with its placeholder in this request's copy.
#[napi(object)]
#[derive(Debug, Clone, Copy)]
pub struct SavingsPlaceholder {
    /// The message's index in the request.
    pub index: u32,
    /// Its tokens before the placeholder.
    pub before_tokens: f64,
    /// The id of the content it replaced, when that was registered (a receipt).
    pub under: Option<u32>,
}

/// A message of the request that calls one of SoL-Pi's tools (`ownTool`) or holds a result
/// of one: an assistant message lists all its tool calls, a tool result its one tool. Which
/// tool is whose is the book's.
#[napi(object)]
pub struct SavingsToolUse {
    /// The message's index in the request.
    pub index: u32,
    /// Each tool call of an assistant message, or the result's tool.
    pub calls: Vec<SavingsToolCall>,
    /// A tool result (else an assistant message's calls).
    pub result: bool,
}

/// One tool call (or tool result) of a message.
#[napi(object)]
pub struct SavingsToolCall {
    /// The tool's name.
    pub name: String,
    /// The call's tokens in its message (Pi's estimate of its name and arguments; 0 for a
    /// result).
    pub tokens: f64,
}

/// One provider request as sent: its messages' roles, sizes and identities, and SoL-Pi's
/// changes to them, earliest first per message.
#[napi(object)]
pub struct SavingsRequest {
    /// Each message's role, as its index in `messageRoles()` (0 for any other role).
    pub roles: Uint8Array,
    /// Each message's tokens (Pi's estimate).
    pub tokens: Float64Array,
    /// Each message's numeric `timestamp`, NaN where it has none.
    pub stamps: Float64Array,
    /// Where a message has no numeric timestamp: its string timestamp, else the whole
    /// message (its identity comes from its content); and every system message whole (the
    /// book reads its identity from it, `sol_core::savings::SentRequest`); absent when
    /// every message has a timestamp and none is a system message.
    #[napi(ts_type = "Array<unknown>")]
    pub unstamped: Option<Vec<Value>>,
    /// The messages that hold content SoL-Pi registered (absent: none); a fused call's result
    /// only in the first request that carries it.
    pub seen: Option<Vec<SavingsSeen>>,
    /// ObservationPack's placeholders in this request (absent: none).
    pub placeholders: Option<Vec<SavingsPlaceholder>>,
    /// The messages that call SoL-Pi's tools or hold their results (absent: none).
    pub tool_uses: Option<Vec<SavingsToolUse>>,
    /// The cache retention the request asked for (Pi's `PI_CACHE_RETENTION`), if any.
    pub cache_retention: Option<String>,
    /// The answering model's `promptCache` in Pi's model registry, as the registry has it.
    #[napi(ts_type = "unknown")]
    pub prompt_cache: Option<Value>,
}

impl SavingsRequest {
    /// The request as the book takes it.
    fn sent(self) -> SentRequest {
        let index = |index: u32| index as usize;
        SentRequest {
            roles: self.roles.to_vec(),
            tokens: self.tokens.iter().map(|&tokens| count(tokens)).collect(),
            stamps: self.stamps.to_vec(),
            unstamped: self.unstamped.unwrap_or_default(),
            seen: (self.seen.into_iter().flatten())
                .map(|seen| Seen {
                    index: index(seen.index),
                    id: seen.id,
                })
                .collect(),
            placeholders: (self.placeholders.into_iter().flatten())
                .map(|placeholder| Placeholder {
                    index: index(placeholder.index),
                    before_tokens: count(placeholder.before_tokens),
                    under: placeholder.under,
                })
                .collect(),
            tool_uses: (self.tool_uses.into_iter().flatten())
                .map(|used| ToolUse {
                    index: index(used.index),
                    calls: (used.calls.into_iter())
                        .map(|call| (call.name, count(call.tokens)))
                        .collect(),
                    result: used.result,
                })
                .collect(),
            cache_retention: self.cache_retention,
            prompt_cache: self.prompt_cache,
        }
    }
}

/// The usage of one model response.
#[napi(object)]
pub struct SavingsUsage {
    /// The response's tokens by Pi's estimate.
    pub estimated_output: f64,
    /// The message's `usage` as Pi recorded it (only the fields the book reads cross).
    pub usage: Option<PiUsage>,
    /// The message's `stopReason` (`sol_core::message::reply_failed` reads it).
    pub stop_reason: Option<String>,
    /// The names of the tools the response called, in order (absent: none); Rust knows
    /// which are SoL-Pi's (`ownTool`).
    pub tool_calls: Option<Vec<String>>,
    /// The model that answered (`provider/model`).
    pub model: Option<String>,
    /// Its `cost` in Pi's model registry, as the registry has it.
    #[napi(ts_type = "unknown")]
    pub cost: Option<Value>,
}

/// The fields of a `usage` object Pi records that Rust reads (`input`, `output`, `cacheRead`,
/// `cacheWrite`), each as the object has it; the rest of the object (its `cost`, its
/// `totalTokens`) does not cross.
#[napi(object)]
#[derive(Debug, Clone, Default)]
pub struct PiUsage {
    /// Uncached input tokens.
    #[napi(ts_type = "unknown")]
    pub input: Option<Value>,
    /// Output tokens.
    #[napi(ts_type = "unknown")]
    pub output: Option<Value>,
    /// Tokens read from the provider's cache.
    #[napi(ts_type = "unknown")]
    pub cache_read: Option<Value>,
    /// Tokens written to the provider's cache.
    #[napi(ts_type = "unknown")]
    pub cache_write: Option<Value>,
}

impl PiUsage {
    /// The report, as `ReportedUsage::from_pi_usage` reads the whole object (a field that is
    /// missing or not a positive number counts 0).
    pub fn reported(&self) -> ReportedUsage {
        ReportedUsage::from_pi_fields(
            self.input.as_ref(),
            self.cache_read.as_ref(),
            self.cache_write.as_ref(),
            self.output.as_ref(),
        )
    }
}

/// A model's registry prices as the book keeps them (`ModelPrices::from_registry_cost`):
/// `None` without a cost, or for prices that are not valid or all zero (a registry entry
/// without prices).
fn registry_prices(cost: Option<&Value>) -> Option<ModelPrices> {
    ModelPrices::from_registry_cost(cost?)
}

/// The totals entry to append (`pi.appendEntry(customType, data)`).
#[napi(object)]
pub struct SavingsEntry {
    /// `sol-pi-savings-totals`.
    pub custom_type: String,
    /// The totals.
    #[napi(ts_type = "Record<string, unknown>")]
    pub data: Value,
}

/// What `/sol-pi` and the status line show.
#[napi(object)]
pub struct SavingsView {
    /// The table.
    pub table: String,
    /// The one-line running total.
    pub status_line: String,
}

/// The book of a session, shared by its [`Engine`](crate::engine::Engine) and the call
/// objects made with it (`Reducer`, `FusedCall`), whose steps record their accounts here
/// themselves, as the engine's Online Context Compact and ObservationPack do: the book is a
/// fold over the mechanisms' steps, and no account crosses back to JavaScript to be handed in
/// again.
#[derive(Clone, Default)]
pub(crate) struct SharedBook(Arc<Mutex<SessionBook>>);

impl SharedBook {
    fn lock(&self) -> MutexGuard<'_, SessionBook> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A mechanism step's account (`SessionBook::record_step`).
    pub(crate) fn record_step(&self, by: Mechanism, account: StepAccount) {
        self.lock().record_step(by, account);
    }

    /// The account of a step that changed the request being prepared
    /// (`SessionBook::record_request_step`).
    pub(crate) fn record_request_step(&self, by: Mechanism, account: StepAccount) {
        self.lock().record_request_step(by, account);
    }

    /// ObservationPack archived an output of `bytes`.
    pub(crate) fn record_archived(&self, bytes: u64) {
        self.lock().record_archived(bytes);
    }

    /// Pi reported `usage` for the compaction summary that Online Context Compact's next step
    /// with a model call accounts for.
    pub(crate) fn summary_usage(&self, usage: ReportedUsage) {
        self.lock().summary_usage(usage);
    }

    /// Registers content a step wrote (`what` it means once a request carries it); the id the
    /// host recognises it by.
    pub(crate) fn watch(&self, what: Watched) -> u32 {
        self.lock().watch(what)
    }

    /// Goes on from the newest readable totals entry of `branch`; a warning per newer entry
    /// it could not read (`SessionBook::restore`).
    pub(crate) fn restore(&self, branch: &[SessionEntry]) -> Vec<String> {
        self.lock().restore(branch)
    }

    /// `by` registered the tool `name`, listed in the system prompt with `snippet` and
    /// `guidelines`.
    pub(crate) fn own_tool(
        &self,
        name: &str,
        by: Mechanism,
        snippet: Option<&str>,
        guidelines: &[&str],
    ) {
        self.lock().own_tool(name, by, snippet, guidelines);
    }

    /// A provider's response, with the `request` as it was sent (`SessionBook::record_response`).
    pub(crate) fn record_response(&self, usage: SavingsUsage, request: Option<SavingsRequest>) {
        let response = Response {
            estimated_output: count(usage.estimated_output),
            reported: usage
                .usage
                .as_ref()
                .map_or_else(ReportedUsage::default, PiUsage::reported),
            stop_reason: usage.stop_reason,
            tool_calls: usage.tool_calls.unwrap_or_default(),
            prices: registry_prices(usage.cost.as_ref()),
            model: usage.model,
        };
        self.lock()
            .record_response(&response, request.map(SavingsRequest::sent));
    }

    /// The reducer's model calls go to `model`, at its registry `cost` when it has one.
    pub(crate) fn reducer_model(&self, model: String, cost: Option<&Value>) {
        self.lock().reducer_model(model, registry_prices(cost));
    }

    /// The host's accounting failed: no more totals entries are given out.
    pub(crate) fn stop(&self) {
        self.lock().stop();
    }

    /// The model recalled `bytes` from the archive.
    pub(crate) fn record_recall(&self, bytes: u64) {
        self.lock().record_recall(bytes);
    }

    /// The table and the status line at `prices` (`SessionBook::report`).
    pub(crate) fn view(&self, prices: &PriceTable) -> SavingsView {
        let report = self.lock().report(prices);
        SavingsView {
            table: report.to_string(),
            status_line: report.status_line(),
        }
    }

    /// The totals entry, when the totals changed since it was last given out.
    pub(crate) fn take_totals(&self) -> Option<SavingsEntry> {
        self.lock().take_totals().map(|data| SavingsEntry {
            custom_type: SAVINGS_ENTRY_TYPE.to_owned(),
            data,
        })
    }
}

/// The prices given, checked as the configuration checks them; the default table without.
pub(crate) fn price_table(prices: Option<SavingsPrices>) -> napi::Result<PriceTable> {
    let Some(p) = prices else {
        return Ok(PriceTable::default());
    };
    let table = PriceTable {
        input: p.input,
        cache_read: p.cache_read,
        cache_write: p.cache_write,
        output: p.output,
    };
    table
        .validated()
        .map_err(|error| napi::Error::from_reason(error.to_string()))
}

pub(crate) fn mechanism(key: &str) -> Option<Mechanism> {
    Mechanism::ALL
        .into_iter()
        .find(|mechanism| mechanism.config_key() == key)
}

/// The table and status line of a persisted totals entry's `data` (the demo, `replay`);
/// an error names what is wrong with the data.
#[napi(catch_unwind, ts_args_type = "data: unknown, prices?: SavingsPrices")]
pub fn savings_view_of_entry(
    data: Value,
    prices: Option<SavingsPrices>,
) -> napi::Result<SavingsView> {
    quiet(|| {
        let savings = sol_core::savings::Savings::from_entry_data(&whole_numbers(data))
            .map_err(|error| napi::Error::from_reason(error.to_string()))?;
        // Without prices: each model at its registry prices, as `/sol-pi` shows it.
        let report = match prices {
            Some(prices) => savings.report(&price_table(Some(prices))?),
            None => savings.report_per_model(&PriceTable::default()),
        };
        Ok(SavingsView {
            table: report.to_string(),
            status_line: report.status_line(),
        })
    })
}

//! The savings book in the session engine: `SharedBook`, the book of the
//! [`Engine`](crate::engine::Engine) (its entries in `engine/book.rs`) and of the call objects
//! made with it, fed with what the shell saw of each request and each response and asked for
//! the `/sol-pi` table and the status line; the totals entry and the restore come with the
//! engine's lifecycle steps. The mechanisms' steps record their accounts in it inside Rust.
//! Every figure is computed by `sol_core::savings::Book`; this module only converts.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use napi::bindgen_prelude::{Float64Array, Uint8Array};
use napi_derive::napi;
use serde_json::Value;
use sol_core::savings::{
    Book, Change, ModelPrices, OwnPrompt, Part, PriceTable, ReportedUsage, ResponseUsage,
    SAVINGS_ENTRY_TYPE, SentPart, ToolCall, cache_lifetime_ms, own_changes, prompt_after_lifetime,
    request_cause,
};
use sol_core::{Mechanism, StepAccount};
use sol_occ::tokens::content_key;

use crate::account::count;
use crate::boundary::{quiet, whole_numbers};
use crate::frame::{ends_with_prompt, role_of};

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

/// What content SoL-Pi wrote means to the book once a request carries it: registered by the
/// step that wrote it ([`SharedBook::watch`]), which gives the host the id to recognise the
/// content by. The host only matches content; every change it stands for is decided here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Watched {
    /// A reducer receipt, which removed `removed` tokens from the result it replaced.
    Receipt {
        /// Tokens removed, by the estimate.
        removed: u64,
    },
    /// A message Online Context Compact added: a compaction summary, a continuation.
    Added,
    /// A fused call's result, of `tokens` without the command's output.
    Fused {
        /// The edit or write's own result, by the estimate.
        tokens: u64,
    },
}

/// What the content registered under `id` means (ids start at 1); `None` for an id never given.
fn meaning(watched: &[Watched], id: u32) -> Option<Watched> {
    let at = id.checked_sub(1)?;
    watched.get(at as usize).copied()
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
    /// book reads its identity from it, [`SavingsRequest::identify_systems`]); absent when
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
    /// Each system message as the book knows it: by what it tells the model (Pi's `content`,
    /// `sections` and `toolsAdded`), never by its timestamp, which Pi 1.x renews when it
    /// copies the prompt into a compaction; the same prompt must stay the same cached prefix.
    /// The host sends the message whole; its timestamp is dropped here.
    pub(crate) fn identify_systems(&mut self) {
        let Some(unstamped) = self.unstamped.as_mut() else {
            return;
        };
        let mut stamps: Option<Vec<f64>> = None;
        for (index, &code) in self.roles.iter().enumerate() {
            if role_of(code) != "system" {
                continue;
            }
            if self.stamps.get(index).is_some_and(|stamp| !stamp.is_nan()) {
                stamps.get_or_insert_with(|| self.stamps.to_vec())[index] = f64::NAN;
            }
            if let Some(message) = unstamped.get_mut(index) {
                *message = system_identity(std::mem::take(message));
            }
        }
        if let Some(stamps) = stamps {
            self.stamps = Float64Array::new(stamps);
        }
    }
}

/// A system message's identity: its `content`, `sections` and `toolsAdded`, in that order.
fn system_identity(message: Value) -> Value {
    let mut fields = match message {
        Value::Object(fields) => fields,
        _ => serde_json::Map::new(),
    };
    let mut take = |name: &str| fields.remove(name).unwrap_or(Value::Null);
    Value::Array(vec![take("content"), take("sections"), take("toolsAdded")])
}

/// Whether a request of these timestamps (every message's, NaN without one) that starts a
/// prompt (`prompt`) sent it after the provider's cache lifetime (`prompt_after_lifetime`:
/// against the newest timestamped message before it; the book and ObservationPack's
/// recent-outputs placement both ask it of the same request): the lifetime the request asked for
/// (`retention`, Pi's `PI_CACHE_RETENTION`) under the model's `promptCache` in Pi's model
/// registry (`short`, `long` seconds; a field that is not a number is none).
pub(crate) fn after_cache_lifetime(
    stamps: &[f64],
    prompt: bool,
    retention: Option<&str>,
    prompt_cache: Option<&Value>,
) -> bool {
    let seconds = |key: &str| prompt_cache.and_then(|cache| cache.get(key)?.as_f64());
    let lifetime = cache_lifetime_ms(retention, (seconds("short"), seconds("long")));
    prompt_after_lifetime(stamps, prompt, lifetime)
}

/// The usage of one model response.
#[napi(object)]
pub struct SavingsUsage {
    /// The response's tokens by Pi's estimate.
    pub estimated_output: f64,
    /// The message's `usage` as Pi recorded it (`ReportedUsage::from_pi_usage` reads it).
    #[napi(ts_type = "unknown")]
    pub usage: Option<Value>,
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

/// The book of a session, shared by its [`Engine`] and the call objects made with it
/// (`Reducer`, `FusedCall`), whose steps record their accounts here themselves, as the
/// engine's Online Context Compact and ObservationPack do: the book is a fold over the
/// mechanisms' steps, and no account crosses back to JavaScript to be handed in again.
#[derive(Clone, Default)]
pub(crate) struct SharedBook(Arc<Mutex<BookState>>);

#[derive(Default)]
struct BookState {
    book: Book,
    /// What SoL-Pi's tools add to the system message.
    own: OwnPrompt,
    /// Who answers the mechanisms' model calls.
    callers: Callers,
    /// The totals changed since they were last given out as an entry.
    changed: bool,
    /// The accounting stopped after an internal error: no more totals are given out.
    stopped: bool,
    /// The content SoL-Pi registered, by id - 1.
    watched: Vec<Watched>,
    /// The last system message's identity with each mechanism's share of it (it changes
    /// rarely).
    system: Option<(Value, Vec<ToolCall>)>,
}

impl SharedBook {
    fn lock(&self) -> MutexGuard<'_, BookState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A mechanism step's account (nothing when it saved and cost nothing). Its model calls
    /// are priced at the prices of the model that answered them (the reducer's model, else
    /// the session's; a compaction summary the session's), with the usage Pi reported for a
    /// summary in place of the account's estimate. Action Fusion's step that avoided a request
    /// marks the model's next turn as avoided (`Book::record_step`).
    pub(crate) fn record_step(&self, by: Mechanism, mut account: StepAccount) {
        if account.is_empty() {
            return;
        }
        let mut state = self.lock();
        let caller = match by {
            _ if account.model_calls == 0 => None,
            Mechanism::EvidencePreservingReducer => state
                .callers
                .reducer
                .clone()
                .or_else(|| state.callers.last.clone()),
            Mechanism::OnlineContextCompact => {
                let reported = state
                    .callers
                    .summary
                    .take()
                    .filter(|usage| !usage.is_empty());
                if let Some(reported) = reported {
                    account.model_input_tokens = reported.all_input();
                    account.model_output_tokens = reported.output;
                }
                state.callers.last.clone()
            }
            _ => None,
        };
        match caller {
            Some((model, prices)) => state.book.record_step_by(by, account, &model, prices),
            None => state.book.record_step(by, account),
        }
        state.changed = true;
    }

    /// The account of a step that changed the request being prepared (ObservationPack's
    /// `context` step): it counts with that request when it is billed, and not at all for a
    /// request that never went out.
    pub(crate) fn record_request_step(&self, by: Mechanism, account: StepAccount) {
        if account.is_empty() {
            return;
        }
        let mut state = self.lock();
        state.book.record_request_step(by, account);
        state.changed = true;
    }

    /// ObservationPack archived an output of `bytes`.
    pub(crate) fn record_archived(&self, bytes: u64) {
        if bytes > 0 {
            let mut state = self.lock();
            state.book.record_archived(bytes);
            state.changed = true;
        }
    }

    /// Pi reported `usage` for the compaction summary that Online Context Compact's next step
    /// with a model call accounts for.
    pub(crate) fn summary_usage(&self, usage: ReportedUsage) {
        self.lock().callers.summary = Some(usage);
    }

    /// Registers content a step wrote (`what` it means once a request carries it); the id the
    /// host recognises it by.
    pub(crate) fn watch(&self, what: Watched) -> u32 {
        let mut state = self.lock();
        state.watched.push(what);
        u32::try_from(state.watched.len()).unwrap_or(u32::MAX)
    }

    /// Goes on from restored totals (nothing changed since they were written).
    pub(crate) fn resume(&self, savings: sol_core::savings::Savings) {
        let mut state = self.lock();
        state.book = Book::resume(savings);
        state.changed = false;
    }

    /// `by` registered the tool `name`, listed in the system prompt with `snippet` and
    /// `guidelines`: its calls, results and lines are not plain Pi's ([`OwnPrompt`]).
    pub(crate) fn own_tool(
        &self,
        name: &str,
        by: Mechanism,
        snippet: Option<&str>,
        guidelines: &[&str],
    ) {
        self.lock().own.add_tool(name, by, snippet, guidelines);
    }

    /// A provider's response, with the `request` as it was sent; an abort or an error that
    /// was not billed is dropped with its request. Without a request, the one begun last.
    pub(crate) fn record_response(&self, usage: &SavingsUsage, request: Option<&SavingsRequest>) {
        let mut state = self.lock();
        if let Some(request) = request {
            let BookState {
                book,
                watched,
                own,
                system,
                ..
            } = &mut *state;
            let known = Known {
                watched,
                own,
                system,
            };
            begin(book, request, known);
        }
        let reported = usage
            .usage
            .as_ref()
            .map_or_else(ReportedUsage::default, ReportedUsage::from_pi_usage);
        let response = ResponseUsage {
            estimated_output: count(usage.estimated_output),
            reported: Some(reported),
        };
        if let Some(model) = &usage.model {
            let prices = registry_prices(usage.cost.as_ref());
            state.book.answered_by(model, prices);
            state.callers.last = Some((model.clone(), prices));
        }
        let owners: Vec<Option<Mechanism>> = usage
            .tool_calls
            .iter()
            .flatten()
            .map(|name| state.own.owner(name))
            .collect();
        let failed = sol_core::message::reply_failed(usage.stop_reason.as_deref());
        state.book.end_request_with(response, failed, &owners);
        state.changed = true;
    }

    /// The reducer's model calls go to `model`, at its registry `cost` when it has one.
    pub(crate) fn reducer_model(&self, model: String, cost: Option<&Value>) {
        self.lock().callers.reducer = Some((model, registry_prices(cost)));
    }

    /// The host's accounting failed: no more totals entries are given out.
    pub(crate) fn stop(&self) {
        self.lock().stopped = true;
    }

    /// The model recalled `bytes` from the archive.
    pub(crate) fn record_recall(&self, bytes: u64) {
        let mut state = self.lock();
        state.book.record_recall(bytes);
        state.changed = true;
    }

    /// The table and the status line at `prices`: prices in `sol-pi.json` (any but the
    /// default) price every model; else each model is priced at its registry prices, and one
    /// without at the default.
    pub(crate) fn view(&self, prices: &PriceTable) -> SavingsView {
        let state = self.lock();
        let savings = state.book.savings();
        let report = if prices.is_default() {
            savings.report_per_model(prices)
        } else {
            savings.report(prices)
        };
        SavingsView {
            table: report.to_string(),
            status_line: report.status_line(),
        }
    }

    /// The totals entry, when the totals changed since it was last given out.
    pub(crate) fn take_totals(&self) -> Option<SavingsEntry> {
        let mut state = self.lock();
        (std::mem::take(&mut state.changed) && !state.stopped).then(|| entry_of(&state.book))
    }
}

/// The models that answer the mechanisms' own model calls, as `provider/model` with their
/// prices in Pi's model registry: the reducer's calls go to the model `sol-pi.json` names for
/// it, else to the session's model (the one that answered the last response), as a
/// compaction summary does, whose usage Pi reports with the compaction.
#[derive(Default)]
struct Callers {
    /// The model that answered the last response.
    last: Option<(String, Option<ModelPrices>)>,
    /// The reducer's own model, when `sol-pi.json` names one.
    reducer: Option<(String, Option<ModelPrices>)>,
    /// The usage reported for the compaction summary the next step of Online Context Compact
    /// accounts for.
    summary: Option<ReportedUsage>,
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

/// The identity of a message in one form: its role, Pi's timestamp (or its content) and
/// its size, so that another form of the same message (a placeholder) is another key.
fn key_of(role: &str, stamp: f64, unstamped: Option<&Value>, tokens: u64) -> u64 {
    let mut hasher = DefaultHasher::new();
    role.hash(&mut hasher);
    tokens.hash(&mut hasher);
    if !stamp.is_nan() {
        stamp.to_bits().hash(&mut hasher);
    } else {
        match unstamped {
            Some(Value::String(text)) => text.hash(&mut hasher),
            Some(message) => content_key(role, message).hash(&mut hasher),
            None => 0u8.hash(&mut hasher),
        }
    }
    hasher.finish()
}

/// The message at `index` of `request` in a form of `tokens`.
fn part_of(request: &SavingsRequest, index: usize, tokens: u64) -> Part {
    let role = request.roles.get(index).map_or("", |&code| role_of(code));
    let stamp = request.stamps.get(index).copied().unwrap_or(f64::NAN);
    let unstamped = request.unstamped.as_ref().and_then(|list| list.get(index));
    Part {
        key: key_of(role, stamp, unstamped, tokens),
        tokens,
    }
}

/// What the book knows of SoL-Pi's content when a request arrives.
struct Known<'a> {
    /// The content steps registered, by id - 1.
    watched: &'a [Watched],
    /// SoL-Pi's tools and the lines they add to the system prompt.
    own: &'a OwnPrompt,
    /// The last system message's identity and shares.
    system: &'a mut Option<(Value, Vec<ToolCall>)>,
}

impl Known<'_> {
    /// Each mechanism's share of the system message whose identity (Pi's `content`,
    /// `sections` and `toolsAdded`, as the host sends it) is `identity`
    /// (`OwnPrompt::system_shares`), worked out again only when it changed.
    fn system_shares(&mut self, identity: &Value) -> Vec<ToolCall> {
        if let Some((known, shares)) = self.system.as_ref()
            && known == identity
        {
            return shares.clone();
        }
        let field = |at: usize| identity.get(at).cloned().unwrap_or(Value::Null);
        let message = serde_json::json!({
            "content": field(0),
            "sections": field(1),
            "toolsAdded": field(2),
        });
        let shares = self.own.system_shares(&message);
        *self.system = Some((identity.clone(), shares.clone()));
        shares
    }
}

/// The request's parts, each with SoL-Pi's changes to it, earliest first (what its own tools'
/// traffic and its lines in the system message were in plain Pi, then what the content it
/// carries stands for).
fn sent_parts(request: &SavingsRequest, mut known: Known<'_>) -> Vec<SentPart> {
    let watched = known.watched;
    let part_at = |index: usize, tokens: u64| part_of(request, index, tokens);
    let mut parts: Vec<SentPart> = (0..request.roles.len())
        .map(|index| {
            let tokens = count(request.tokens.get(index).copied().unwrap_or(0.0));
            SentPart::unchanged(part_at(index, tokens))
        })
        .collect();
    // SoL-Pi's own lines in the system message and its tools' traffic, as calls (a tool
    // result's one call): what each such message was in plain Pi, first.
    let mut traffic: Vec<(usize, Vec<ToolCall>, bool)> = (0..request.roles.len())
        .filter(|&index| role_of(request.roles[index]) == "system")
        .filter_map(|index| {
            let identity = request.unstamped.as_ref()?.get(index)?;
            Some((index, known.system_shares(identity), false))
        })
        .collect();
    traffic.extend(request.tool_uses.iter().flatten().map(|used| {
        let calls = used.calls.iter().map(|call| ToolCall {
            owner: known.own.owner(&call.name),
            tokens: count(call.tokens),
        });
        (used.index as usize, calls.collect(), used.result)
    }));
    for (index, calls, result) in traffic {
        let Some(sent) = parts.get_mut(index) else {
            continue;
        };
        let own = if result {
            request_cause(calls.iter().map(|call| call.owner))
                .map(|owner| vec![(owner, None)])
                .unwrap_or_default()
        } else {
            own_changes(sent.part.tokens, &calls)
        };
        let earlier = own.into_iter().map(|(by, tokens)| Change {
            by,
            before: tokens.map(|tokens| part_at(index, tokens)),
        });
        sent.changes.splice(0..0, earlier);
    }
    // A placeholder over a receipt: the receipt's change, then the placeholder's.
    for placeholder in request.placeholders.iter().flatten() {
        let index = placeholder.index as usize;
        let Some(sent) = parts.get_mut(index) else {
            continue;
        };
        let before = count(placeholder.before_tokens);
        if let Some(Watched::Receipt { removed }) =
            placeholder.under.and_then(|id| meaning(watched, id))
        {
            sent.changes.push(Change {
                by: Mechanism::EvidencePreservingReducer,
                before: Some(part_at(index, before.saturating_add(removed))),
            });
        }
        sent.changes.push(Change {
            by: Mechanism::ObservationPack,
            before: Some(part_at(index, before)),
        });
    }
    for seen in request.seen.iter().flatten() {
        let index = seen.index as usize;
        let Some(sent) = parts.get_mut(index) else {
            continue;
        };
        let change = match meaning(watched, seen.id) {
            // Before the receipt, the request carried the result it replaced.
            Some(Watched::Receipt { removed }) => Change {
                by: Mechanism::EvidencePreservingReducer,
                before: Some(part_at(index, sent.part.tokens.saturating_add(removed))),
            },
            Some(Watched::Added) => Change {
                by: Mechanism::OnlineContextCompact,
                before: None,
            },
            Some(Watched::Fused { .. }) | None => continue,
        };
        sent.changes.push(change);
    }
    parts
}

/// Begins `request` as sent in `book`: its parts, whether it starts with a new prompt and
/// whether that came after the cache lifetime, and the fused results it holds.
fn begin(book: &mut Book, request: &SavingsRequest, known: Known<'_>) {
    let watched = known.watched;
    book.begin_request(sent_parts(request, known));
    let prompt = ends_with_prompt(&request.roles);
    if prompt {
        book.starts_with_prompt();
    }
    let (retention, cache) = (
        request.cache_retention.as_deref(),
        request.prompt_cache.as_ref(),
    );
    if after_cache_lifetime(&request.stamps, prompt, retention, cache) {
        book.after_cache_lifetime();
    }
    let fused = request.seen.iter().flatten().filter_map(|seen| {
        let index = seen.index as usize;
        match meaning(watched, seen.id) {
            Some(Watched::Fused { tokens }) if index < request.roles.len() => {
                Some((index, part_of(request, index, tokens)))
            }
            _ => None,
        }
    });
    book.fused_results(fused.collect());
}

/// The book's totals as a custom entry.
fn entry_of(book: &Book) -> SavingsEntry {
    SavingsEntry {
        custom_type: SAVINGS_ENTRY_TYPE.to_owned(),
        data: book.savings().to_entry_data(),
    }
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

#[cfg(test)]
mod tests {
    //! What the content a step registered stands for in a request as sent: the changes
    //! `sent_parts` derives from the host's reports (`seen`, `placeholders`).

    use super::*;
    use proptest::prelude::*;

    /// A request of `tokens.len()` tool results (role code 3), stamped 1, 2, ...
    fn request(
        tokens: &[f64],
        seen: Vec<SavingsSeen>,
        placeholders: Vec<SavingsPlaceholder>,
    ) -> SavingsRequest {
        SavingsRequest {
            roles: Uint8Array::new(vec![3; tokens.len()]),
            tokens: Float64Array::new(tokens.to_vec()),
            stamps: Float64Array::new((1..=tokens.len()).map(|n| n as f64).collect()),
            unstamped: None,
            seen: Some(seen),
            placeholders: Some(placeholders),
            tool_uses: None,
            cache_retention: None,
            prompt_cache: None,
        }
    }

    /// The parts of `request` with the content `watched` registered and no tools of SoL-Pi's.
    fn parts(request: &SavingsRequest, watched: &[Watched]) -> Vec<SentPart> {
        let (own, mut system) = (OwnPrompt::default(), None);
        sent_parts(
            request,
            Known {
                watched,
                own: &own,
                system: &mut system,
            },
        )
    }

    /// Each part's changes as (mechanism, tokens before).
    fn changes(parts: &[SentPart]) -> Vec<Vec<(Mechanism, Option<u64>)>> {
        parts
            .iter()
            .map(|sent| {
                sent.changes
                    .iter()
                    .map(|change| (change.by, change.before.map(|part| part.tokens)))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn each_registered_content_stands_for_its_change() {
        let watched = [
            Watched::Receipt { removed: 900 },
            Watched::Added,
            Watched::Fused { tokens: 40 },
        ];
        let seen = |index, id| SavingsSeen { index, id };
        let sent = request(
            &[100.0, 200.0, 300.0, 400.0, 500.0],
            // A receipt, a summary, a fused result (no change: the book's fused list), an id
            // never given and an index past the end.
            vec![seen(0, 1), seen(1, 2), seen(2, 3), seen(3, 9), seen(7, 1)],
            vec![SavingsPlaceholder {
                index: 4,
                before_tokens: 120.0,
                under: Some(1),
            }],
        );
        let reducer = Mechanism::EvidencePreservingReducer;
        assert_eq!(
            changes(&parts(&sent, &watched)),
            vec![
                vec![(reducer, Some(1_000))],
                vec![(Mechanism::OnlineContextCompact, None)],
                vec![],
                vec![],
                // The receipt it replaced first, then the placeholder.
                vec![
                    (reducer, Some(1_020)),
                    (Mechanism::ObservationPack, Some(120))
                ],
            ]
        );
    }

    #[test]
    fn the_book_attributes_its_tools_and_its_lines_in_the_system_message() {
        let mut own = OwnPrompt::default();
        own.add_tool(
            "obs_recall",
            Mechanism::ObservationPack,
            Some("Recall an archived output"),
            &[],
        );
        let prompt = "Tools:\n- bash: Run a command\n- obs_recall: Recall an archived output\n";
        let call = |name: &str, tokens| SavingsToolCall {
            name: name.to_owned(),
            tokens,
        };
        let mut sent = SavingsRequest {
            // The system message (sent whole, with its timestamp), an assistant message that
            // recalls and runs a command, the recall's result.
            roles: Uint8Array::new(vec![4, 2, 3]),
            tokens: Float64Array::new(vec![1_000.0, 50.0, 20.0]),
            stamps: Float64Array::new(vec![1.0, 2.0, 3.0]),
            unstamped: Some(vec![
                serde_json::json!({"role": "system", "content": prompt, "timestamp": 1}),
                Value::Null,
                Value::Null,
            ]),
            seen: None,
            placeholders: None,
            tool_uses: Some(vec![
                SavingsToolUse {
                    index: 1,
                    calls: vec![call("obs_recall", 30.0), call("bash", 20.0)],
                    result: false,
                },
                SavingsToolUse {
                    index: 2,
                    calls: vec![call("obs_recall", 0.0)],
                    result: true,
                },
            ]),
            cache_retention: None,
            prompt_cache: None,
        };
        sent.identify_systems();
        let mut system = None;
        fn known<'a>(
            own: &'a OwnPrompt,
            system: &'a mut Option<(Value, Vec<ToolCall>)>,
        ) -> Known<'a> {
            Known {
                watched: &[],
                own,
                system,
            }
        }
        let pack = Mechanism::ObservationPack;
        // Its line (`- obs_recall: ` and the snippet, 40 units) is 10 tokens of plain Pi's less.
        let expected = vec![
            vec![(pack, Some(990))],
            vec![(pack, Some(20))],
            vec![(pack, None)],
        ];
        assert_eq!(
            changes(&sent_parts(&sent, known(&own, &mut system))),
            expected
        );
        // Worked out once for this system message, and the same the next time.
        assert!(system.is_some());
        assert_eq!(
            changes(&sent_parts(&sent, known(&own, &mut system))),
            expected
        );
    }

    /// A system message is the same part of the request whatever its timestamp (Pi 1.x renews
    /// it when it copies the prompt into a compaction), and another part when what it tells
    /// the model changed.
    #[test]
    fn a_system_message_is_known_by_what_it_tells_the_model() {
        let system = |message: Value| {
            let mut request = SavingsRequest {
                roles: Uint8Array::new(vec![4]),
                tokens: Float64Array::new(vec![100.0]),
                stamps: Float64Array::new(vec![message["timestamp"].as_f64().unwrap_or(f64::NAN)]),
                unstamped: Some(vec![message]),
                seen: None,
                placeholders: None,
                tool_uses: None,
                cache_retention: None,
                prompt_cache: None,
            };
            request.identify_systems();
            assert!(request.stamps[0].is_nan());
            part_of(&request, 0, 100).key
        };
        let prompt = |content: &str, timestamp: f64| serde_json::json!({"role": "system", "content": content, "sections": {"tools": "- bash"}, "timestamp": timestamp});
        let first = system(prompt("You are an agent.", 1.0));
        assert_eq!(first, system(prompt("You are an agent.", 9_000.0)));
        // Pi 0.84.2's prompt, prepended by the host without a timestamp.
        assert_eq!(
            system(serde_json::json!({"role": "system", "content": "You are an agent."})),
            system(
                serde_json::json!({"role": "system", "content": "You are an agent.", "timestamp": 5})
            )
        );
        assert_ne!(first, system(prompt("You are another agent.", 1.0)));
        let mut other_sections = prompt("You are an agent.", 1.0);
        other_sections["sections"] = serde_json::json!({"tools": "- bash\n- obs_recall"});
        assert_ne!(first, system(other_sections));
    }

    fn watched() -> impl Strategy<Value = Watched> {
        prop_oneof![
            (0u64..10_000).prop_map(|removed| Watched::Receipt { removed }),
            Just(Watched::Added),
            (0u64..10_000).prop_map(|tokens| Watched::Fused { tokens }),
        ]
    }

    proptest! {
        #[test]
        fn every_report_gives_the_change_its_content_stands_for(
            tokens in prop::collection::vec(0.0f64..5_000.0, 0..8),
            watched in prop::collection::vec(watched(), 0..6),
            seen in prop::collection::vec((0u32..10, 0u32..8), 0..8),
            placeholders in prop::collection::vec((0u32..10, 0.0f64..5_000.0, prop::option::of(0u32..8)), 0..4),
        ) {
            // One report per message, as the host makes them.
            let mut taken = std::collections::BTreeSet::new();
            let placeholders: Vec<SavingsPlaceholder> = placeholders
                .into_iter()
                .filter(|&(index, ..)| taken.insert(index))
                .map(|(index, before_tokens, under)| SavingsPlaceholder { index, before_tokens, under })
                .collect();
            let seen: Vec<SavingsSeen> = seen
                .into_iter()
                .filter(|&(index, _)| taken.insert(index))
                .map(|(index, id)| SavingsSeen { index, id })
                .collect();
            let meaning = |id: u32| id.checked_sub(1).and_then(|at| watched.get(at as usize)).copied();
            let valid = |index: u32| (index as usize) < tokens.len();
            let sent = request(&tokens, seen.clone(), placeholders.clone());
            let parts = parts(&sent, &watched);
            prop_assert_eq!(parts.len(), tokens.len());
            let mut expected: Vec<Vec<(Mechanism, Option<u64>)>> = vec![Vec::new(); tokens.len()];
            for placeholder in placeholders.iter().filter(|p| valid(p.index)) {
                let before = count(placeholder.before_tokens);
                let changes = &mut expected[placeholder.index as usize];
                if let Some(Watched::Receipt { removed }) = placeholder.under.and_then(meaning) {
                    changes.push((Mechanism::EvidencePreservingReducer, Some(before + removed)));
                }
                changes.push((Mechanism::ObservationPack, Some(before)));
            }
            for report in seen.iter().filter(|s| valid(s.index)) {
                let own = count(tokens[report.index as usize]);
                let change = match meaning(report.id) {
                    Some(Watched::Receipt { removed }) => (Mechanism::EvidencePreservingReducer, Some(own + removed)),
                    Some(Watched::Added) => (Mechanism::OnlineContextCompact, None),
                    _ => continue,
                };
                expected[report.index as usize].push(change);
            }
            prop_assert_eq!(changes(&parts), expected);
        }
    }
}

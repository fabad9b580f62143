//! The book of one live session: [`SessionBook`], a [`Book`] with what a host's session adds
//! to it. The mechanisms' steps record their accounts here; the host reports each provider
//! request as it was sent ([`SentRequest`]: each message's role code, size and timestamp, the
//! messages that hold content a step registered, ObservationPack's placeholders and the
//! messages that call SoL-Pi's tools) with the response that answered it ([`Response`]), and
//! gets back the totals entry, the `/sol-pi` report and the status line. What each message
//! was in plain Pi is decided here, never by the host: the content a step wrote is registered
//! ([`SessionBook::watch`]) with what it stands for ([`Watched`]), and the host only finds it
//! again and reports the id it was given.
//!
//! ```
//! use sol_core::Mechanism;
//! use sol_core::savings::{PriceTable, Response, SentRequest, SessionBook, Watched};
//! use sol_core::savings::session::Seen;
//!
//! let mut book = SessionBook::default();
//! // The reducer replaced a 1,000-token log with a receipt of 100 tokens.
//! let receipt = book.watch(Watched::Receipt { removed: 900 });
//! // A request carries a user prompt (role code 1) and the receipt (a tool result, code 3).
//! let request = SentRequest {
//!     roles: vec![1, 3],
//!     tokens: vec![20, 100],
//!     stamps: vec![1.0, 2.0],
//!     seen: vec![Seen { index: 1, id: receipt }],
//!     ..SentRequest::default()
//! };
//! book.record_response(&Response::default(), Some(request));
//! let report = book.report(&PriceTable::default());
//! assert_eq!(report.row(Mechanism::EvidencePreservingReducer).input_tokens_saved, 900);
//! assert!(book.take_totals().is_some());
//! assert!(book.take_totals().is_none(), "given out once until the totals change again");
//! ```

use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use super::{
    Book, Change, ModelPrices, OwnPrompt, Part, PriceTable, Report, ReportedUsage, ResponseUsage,
    SentPart, ToolCall, cache_lifetime_ms, own_changes, prompt_after_lifetime, request_cause,
    restore_savings,
};
use crate::message::{content_key, ends_with_prompt, role_of_code};
use crate::session::SessionEntry;
use crate::{Mechanism, StepAccount};

/// What content SoL-Pi wrote means to the book once a request carries it: registered by the
/// step that wrote it ([`SessionBook::watch`]), which gives the host the id to recognise the
/// content by. The host only matches content; every change it stands for is decided here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    /// A reducer receipt, which removed `removed` tokens from the result it replaced.
    Receipt {
        /// Tokens removed, by the estimate.
        removed: u64,
    },
    /// A message Online Context Compact added (its compaction summary, its continuation):
    /// plain Pi would not have sent it.
    Added,
    /// A fused call's result, of `tokens`: its request saved the model's command turn.
    Fused {
        /// The result's size, by the estimate.
        tokens: u64,
    },
}

/// What `id` (1-based, as [`SessionBook::watch`] gives them) stands for, if it was given.
fn meaning(watched: &[Watched], id: u32) -> Option<Watched> {
    watched
        .get(usize::try_from(id.checked_sub(1)?).ok()?)
        .copied()
}

/// A message of a request that holds content a step registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// The message's index in the request.
    pub index: usize,
    /// The id [`SessionBook::watch`] gave the content.
    pub id: u32,
}

/// ObservationPack's placeholder in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placeholder {
    /// The message's index in the request.
    pub index: usize,
    /// The message's tokens before the placeholder replaced its content.
    pub before_tokens: u64,
    /// The id of the receipt the placeholder replaced, when it replaced one.
    pub under: Option<u32>,
}

/// A message that calls SoL-Pi's tools (with the other calls it makes) or holds the result
/// of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUse {
    /// The message's index in the request.
    pub index: usize,
    /// Each call's tool name and its size (a result's one call: 0).
    pub calls: Vec<(String, u64)>,
    /// Whether the message is the result of its one call.
    pub result: bool,
}

/// One provider request as the host saw it sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SentRequest {
    /// Each message's role code ([`crate::message::ROLE_CODES`]).
    pub roles: Vec<u8>,
    /// Each message's tokens.
    pub tokens: Vec<u64>,
    /// Each message's numeric timestamp, NaN where it has none.
    pub stamps: Vec<f64>,
    /// By index (empty: none): where a message has no numeric timestamp, its string
    /// timestamp, else the whole message (its identity comes from its content); and every
    /// system message whole, whose identity the book reads itself.
    pub unstamped: Vec<Value>,
    /// The messages that hold content a step registered.
    pub seen: Vec<Seen>,
    /// ObservationPack's placeholders.
    pub placeholders: Vec<Placeholder>,
    /// The messages that call SoL-Pi's tools or hold their results.
    pub tool_uses: Vec<ToolUse>,
    /// The cache retention the request asked for (Pi's `PI_CACHE_RETENTION`), if any.
    pub cache_retention: Option<String>,
    /// The answering model's `promptCache` in Pi's model registry, as the registry has it.
    pub prompt_cache: Option<Value>,
}

impl SentRequest {
    /// Each system message as the book knows it: by what it tells the model (Pi's `content`,
    /// `sections` and `toolsAdded`), never by its timestamp, which Pi 1.x renews when it
    /// copies the prompt into a compaction; the same prompt must stay the same cached prefix.
    fn identify_systems(&mut self) {
        for (index, &code) in self.roles.iter().enumerate() {
            if role_of_code(code) != "system" {
                continue;
            }
            if let Some(stamp) = self.stamps.get_mut(index) {
                *stamp = f64::NAN;
            }
            if let Some(message) = self.unstamped.get_mut(index) {
                *message = system_identity(std::mem::take(message));
            }
        }
    }

    /// The message at `index` in a form of `tokens`.
    fn part(&self, index: usize, tokens: u64) -> Part {
        let role = self.roles.get(index).map_or("", |&code| role_of_code(code));
        let stamp = self.stamps.get(index).copied().unwrap_or(f64::NAN);
        Part {
            key: key_of(role, stamp, self.unstamped.get(index), tokens),
            tokens,
        }
    }
}

/// A system message's identity: its `content`, `sections` and `toolsAdded` (null when it has
/// none), and nothing else of it.
fn system_identity(message: Value) -> Value {
    let mut fields = match message {
        Value::Object(fields) => fields,
        _ => serde_json::Map::new(),
    };
    let identity = ["content", "sections", "toolsAdded"]
        .map(|name| (name.to_owned(), fields.remove(name).unwrap_or(Value::Null)));
    Value::Object(identity.into_iter().collect())
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

/// One provider response, as the host saw it end.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Response {
    /// The response's tokens by the estimate.
    pub estimated_output: u64,
    /// The usage the provider reported (zeros when it reported none).
    pub reported: ReportedUsage,
    /// The message's `stopReason` ([`crate::message::reply_failed`] reads it).
    pub stop_reason: Option<String>,
    /// The names of the tools the response called, in order.
    pub tool_calls: Vec<String>,
    /// The model that answered (`provider/model`).
    pub model: Option<String>,
    /// Its prices in the host's model registry, when it has valid ones.
    pub prices: Option<ModelPrices>,
}

/// Whether a request of these timestamps (every message's, NaN without one) that starts a
/// new prompt (`prompt`) came after the provider's cache lifetime (the savings book and the
/// recent-outputs placement both ask it of the same request): the lifetime the request asked
/// for (`retention`, Pi's `PI_CACHE_RETENTION`) under the model's `promptCache` in Pi's model
/// registry (`short`, `long` seconds; a field that is not a number is none).
pub fn after_cache_lifetime(
    stamps: &[f64],
    prompt: bool,
    retention: Option<&str>,
    prompt_cache: Option<&Value>,
) -> bool {
    let seconds = |key: &str| prompt_cache.and_then(|cache| cache.get(key)?.as_f64());
    let lifetime = cache_lifetime_ms(retention, (seconds("short"), seconds("long")));
    prompt_after_lifetime(stamps, prompt, lifetime)
}

/// The models that answer the mechanisms' own model calls, as `provider/model` with their
/// prices in the host's model registry: the reducer's calls go to the model the configuration
/// names for it, else to the session's model (the one that answered the last response), as a
/// compaction summary does.
#[derive(Debug, Clone, Default)]
struct Callers {
    /// The model that answered the last response.
    last: Option<(String, Option<ModelPrices>)>,
    /// The reducer's own model, when the configuration names one.
    reducer: Option<(String, Option<ModelPrices>)>,
    /// The usage reported for the compaction summary the next step of Online Context Compact
    /// accounts for.
    summary: Option<ReportedUsage>,
}

/// The book of one live session. See the [module docs](self).
#[derive(Debug, Default)]
pub struct SessionBook {
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

impl SessionBook {
    /// A mechanism step's account (nothing when it saved and cost nothing). Its model calls
    /// are priced at the prices of the model that answered them (the reducer's model, else
    /// the session's; a compaction summary the session's), with the usage the provider
    /// reported for a summary in place of the account's estimate. Action Fusion's step that
    /// avoided a request marks the model's next turn as avoided (`Book::record_step`).
    pub fn record_step(&mut self, by: Mechanism, mut account: StepAccount) {
        if account.is_empty() {
            return;
        }
        let caller = match by {
            _ if account.model_calls == 0 => None,
            Mechanism::EvidencePreservingReducer => self
                .callers
                .reducer
                .clone()
                .or_else(|| self.callers.last.clone()),
            Mechanism::OnlineContextCompact => {
                let reported = self
                    .callers
                    .summary
                    .take()
                    .filter(|usage| !usage.is_empty());
                if let Some(reported) = reported {
                    account.model_input_tokens = reported.all_input();
                    account.model_output_tokens = reported.output;
                }
                self.callers.last.clone()
            }
            _ => None,
        };
        match caller {
            Some((model, prices)) => self.book.record_step_by(by, account, &model, prices),
            None => self.book.record_step(by, account),
        }
        self.changed = true;
    }

    /// The account of a step that changed the request being prepared (ObservationPack's
    /// `context` step): it counts with that request when it is billed, and not at all for a
    /// request that never went out.
    pub fn record_request_step(&mut self, by: Mechanism, account: StepAccount) {
        if account.is_empty() {
            return;
        }
        self.book.record_request_step(by, account);
        self.changed = true;
    }

    /// ObservationPack archived an output of `bytes`.
    pub fn record_archived(&mut self, bytes: u64) {
        if bytes > 0 {
            self.book.record_archived(bytes);
            self.changed = true;
        }
    }

    /// The provider reported `usage` for the compaction summary that Online Context Compact's
    /// next step with a model call accounts for.
    pub fn summary_usage(&mut self, usage: ReportedUsage) {
        self.callers.summary = Some(usage);
    }

    /// Registers content a step wrote (`what` it means once a request carries it); the id the
    /// host recognises it by (1 for the first).
    pub fn watch(&mut self, what: Watched) -> u32 {
        self.watched.push(what);
        u32::try_from(self.watched.len()).unwrap_or(u32::MAX)
    }

    /// Goes on from restored totals (nothing changed since they were written).
    pub fn resume(&mut self, savings: super::Savings) {
        self.book = Book::resume(savings);
        self.changed = false;
    }

    /// Goes on from the newest readable totals entry of `branch` (root first, as Pi lists
    /// it; zero without one); a warning for the person per newer entry it could not read,
    /// newest first.
    pub fn restore(&mut self, branch: &[SessionEntry]) -> Vec<String> {
        let restored = restore_savings(branch);
        self.resume(restored.savings);
        (restored.rejected.iter())
            .map(|error| format!("SoL-Pi: savings totals not restored from one entry: {error}"))
            .collect()
    }

    /// `by` registered the tool `name`, listed in the system prompt with `snippet` and
    /// `guidelines`: its calls, results and lines are not plain Pi's ([`OwnPrompt`]).
    pub fn own_tool(
        &mut self,
        name: &str,
        by: Mechanism,
        snippet: Option<&str>,
        guidelines: &[&str],
    ) {
        self.own.add_tool(name, by, snippet, guidelines);
        // The shares of a system message known so far did not count this tool.
        self.system = None;
    }

    /// A provider's `response`, with the `request` as it was sent; an abort or an error that
    /// was not billed is dropped with its request. Without a request, the one begun last.
    pub fn record_response(&mut self, response: &Response, request: Option<SentRequest>) {
        if let Some(mut request) = request {
            request.identify_systems();
            let known = Known {
                watched: &self.watched,
                own: &self.own,
                system: &mut self.system,
            };
            begin(&mut self.book, &request, known);
        }
        let usage = ResponseUsage {
            estimated_output: response.estimated_output,
            reported: Some(response.reported),
        };
        if let Some(model) = &response.model {
            self.book.answered_by(model, response.prices);
            self.callers.last = Some((model.clone(), response.prices));
        }
        let owners: Vec<Option<Mechanism>> = response
            .tool_calls
            .iter()
            .map(|name| self.own.owner(name))
            .collect();
        let failed = crate::message::reply_failed(response.stop_reason.as_deref());
        self.book.end_request_with(usage, failed, &owners);
        self.changed = true;
    }

    /// The reducer's model calls go to `model`, at `prices` when its registry entry has them.
    pub fn reducer_model(&mut self, model: String, prices: Option<ModelPrices>) {
        self.callers.reducer = Some((model, prices));
    }

    /// The host's accounting failed: no more totals entries are given out.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// The model recalled `bytes` from the archive.
    pub fn record_recall(&mut self, bytes: u64) {
        self.book.record_recall(bytes);
        self.changed = true;
    }

    /// The report at `prices`: prices the configuration sets (any but the default) price every
    /// model; else each model is priced at its registry prices, and one without at the default.
    pub fn report(&self, prices: &PriceTable) -> Report {
        let savings = self.book.savings();
        if prices.is_default() {
            savings.report_per_model(prices)
        } else {
            savings.report(prices)
        }
    }

    /// The totals entry's data ([`super::SAVINGS_ENTRY_TYPE`]), when the totals changed since
    /// it was last given out and the accounting has not stopped.
    pub fn take_totals(&mut self) -> Option<Value> {
        (std::mem::take(&mut self.changed) && !self.stopped)
            .then(|| self.book.savings().to_entry_data())
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
    /// Each mechanism's share of the system message whose identity
    /// ([`SentRequest::identify_systems`]) is `identity` (`OwnPrompt::system_shares`), worked
    /// out again only when it changed.
    fn system_shares(&mut self, identity: &Value) -> Vec<ToolCall> {
        if let Some((known, shares)) = self.system.as_ref()
            && known == identity
        {
            return shares.clone();
        }
        let shares = self.own.system_shares(identity);
        *self.system = Some((identity.clone(), shares.clone()));
        shares
    }
}

/// The request's parts, each with SoL-Pi's changes to it, earliest first (what its own tools'
/// traffic and its lines in the system message were in plain Pi, then what the content it
/// carries stands for).
fn sent_parts(request: &SentRequest, mut known: Known<'_>) -> Vec<SentPart> {
    let watched = known.watched;
    let part_at = |index: usize, tokens: u64| request.part(index, tokens);
    let mut parts: Vec<SentPart> = (0..request.roles.len())
        .map(|index| {
            let tokens = request.tokens.get(index).copied().unwrap_or(0);
            SentPart::unchanged(part_at(index, tokens))
        })
        .collect();
    // SoL-Pi's own lines in the system message and its tools' traffic, as calls (a tool
    // result's one call): what each such message was in plain Pi, first.
    let mut traffic: Vec<(usize, Vec<ToolCall>, bool)> = (0..request.roles.len())
        .filter(|&index| role_of_code(request.roles[index]) == "system")
        .filter_map(|index| {
            let identity = request.unstamped.get(index)?;
            Some((index, known.system_shares(identity), false))
        })
        .collect();
    traffic.extend(request.tool_uses.iter().map(|used| {
        let calls = used.calls.iter().map(|(name, tokens)| ToolCall {
            owner: known.own.owner(name),
            tokens: *tokens,
        });
        (used.index, calls.collect(), used.result)
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
    for placeholder in &request.placeholders {
        let index = placeholder.index;
        let Some(sent) = parts.get_mut(index) else {
            continue;
        };
        let before = placeholder.before_tokens;
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
    for seen in &request.seen {
        let index = seen.index;
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
fn begin(book: &mut Book, request: &SentRequest, known: Known<'_>) {
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
    let fused = request
        .seen
        .iter()
        .filter_map(|seen| match meaning(watched, seen.id) {
            Some(Watched::Fused { tokens }) if seen.index < request.roles.len() => {
                Some((seen.index, request.part(seen.index, tokens)))
            }
            _ => None,
        });
    book.fused_results(fused.collect());
}

#[cfg(test)]
mod tests {
    //! What the content a step registered stands for in a request as sent: the changes
    //! `sent_parts` derives from the host's reports (`seen`, `placeholders`).

    use super::*;
    use proptest::prelude::*;

    /// A request of `tokens.len()` tool results (role code 3), stamped 1, 2, ...
    fn request(tokens: &[u64], seen: Vec<Seen>, placeholders: Vec<Placeholder>) -> SentRequest {
        SentRequest {
            roles: vec![3; tokens.len()],
            tokens: tokens.to_vec(),
            stamps: (1..=tokens.len()).map(|n| n as f64).collect(),
            seen,
            placeholders,
            ..SentRequest::default()
        }
    }

    /// The parts of `request` with the content `watched` registered and no tools of SoL-Pi's.
    fn parts(request: &SentRequest, watched: &[Watched]) -> Vec<SentPart> {
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
        let seen = |index, id| Seen { index, id };
        let sent = request(
            &[100, 200, 300, 400, 500],
            // A receipt, a summary, a fused result (no change: the book's fused list), an id
            // never given and an index past the end.
            vec![seen(0, 1), seen(1, 2), seen(2, 3), seen(3, 9), seen(7, 1)],
            vec![Placeholder {
                index: 4,
                before_tokens: 120,
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
        let call = |name: &str, tokens| (name.to_owned(), tokens);
        let mut sent = SentRequest {
            // The system message (sent whole, with its timestamp), an assistant message that
            // recalls and runs a command, the recall's result.
            roles: vec![4, 2, 3],
            tokens: vec![1_000, 50, 20],
            stamps: vec![1.0, 2.0, 3.0],
            unstamped: vec![
                serde_json::json!({"role": "system", "content": prompt, "timestamp": 1}),
                Value::Null,
                Value::Null,
            ],
            tool_uses: vec![
                ToolUse {
                    index: 1,
                    calls: vec![call("obs_recall", 30), call("bash", 20)],
                    result: false,
                },
                ToolUse {
                    index: 2,
                    calls: vec![call("obs_recall", 0)],
                    result: true,
                },
            ],
            ..SentRequest::default()
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
    /// A tool registered after a system message's shares were worked out counts in them the
    /// next time that message is sent.
    #[test]
    fn a_tool_registered_later_counts_in_the_same_system_message() {
        let prompt =
            "Tools:\n- obs_recall: Recall an archived output\n- update_plan: Keep the plan\n";
        let request = || SentRequest {
            roles: vec![4],
            tokens: vec![1_000],
            stamps: vec![1.0],
            unstamped: vec![serde_json::json!({"role": "system", "content": prompt})],
            ..SentRequest::default()
        };
        let owners = |book: &SessionBook| -> Vec<Option<Mechanism>> {
            let (_, shares) = book.system.as_ref().expect("worked out");
            shares.iter().map(|share| share.owner).collect()
        };
        let mut book = SessionBook::default();
        book.own_tool(
            "obs_recall",
            Mechanism::ObservationPack,
            Some("Recall an archived output"),
            &[],
        );
        book.record_response(&Response::default(), Some(request()));
        let first = owners(&book);
        assert!(
            first.contains(&Some(Mechanism::ObservationPack)),
            "{first:?}"
        );
        assert!(
            !first.contains(&Some(Mechanism::OnlineContextCompact)),
            "{first:?}"
        );
        book.own_tool(
            "update_plan",
            Mechanism::OnlineContextCompact,
            Some("Keep the plan"),
            &[],
        );
        book.record_response(&Response::default(), Some(request()));
        let later = owners(&book);
        assert!(
            later.contains(&Some(Mechanism::OnlineContextCompact)),
            "{later:?}"
        );
        assert!(
            later.contains(&Some(Mechanism::ObservationPack)),
            "{later:?}"
        );
    }

    #[test]
    fn a_system_message_is_known_by_what_it_tells_the_model() {
        let system = |message: Value| {
            let mut request = SentRequest {
                roles: vec![4],
                tokens: vec![100],
                stamps: vec![message["timestamp"].as_f64().unwrap_or(f64::NAN)],
                unstamped: vec![message],
                ..SentRequest::default()
            };
            request.identify_systems();
            assert!(request.stamps[0].is_nan());
            request.part(0, 100).key
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
            tokens in prop::collection::vec(0u64..5_000, 0..8),
            watched in prop::collection::vec(watched(), 0..6),
            seen in prop::collection::vec((0usize..10, 0u32..8), 0..8),
            placeholders in prop::collection::vec((0usize..10, 0u64..5_000, prop::option::of(0u32..8)), 0..4),
        ) {
            // One report per message, as the host makes them.
            let mut taken = std::collections::BTreeSet::new();
            let placeholders: Vec<Placeholder> = placeholders
                .into_iter()
                .filter(|&(index, ..)| taken.insert(index))
                .map(|(index, before_tokens, under)| Placeholder { index, before_tokens, under })
                .collect();
            let seen: Vec<Seen> = seen
                .into_iter()
                .filter(|&(index, _)| taken.insert(index))
                .map(|(index, id)| Seen { index, id })
                .collect();
            let meaning = |id: u32| id.checked_sub(1).and_then(|at| watched.get(at as usize)).copied();
            let valid = |index: usize| index < tokens.len();
            let sent = request(&tokens, seen.clone(), placeholders.clone());
            let parts = parts(&sent, &watched);
            prop_assert_eq!(parts.len(), tokens.len());
            let mut expected: Vec<Vec<(Mechanism, Option<u64>)>> = vec![Vec::new(); tokens.len()];
            for placeholder in placeholders.iter().filter(|p| valid(p.index)) {
                let before = placeholder.before_tokens;
                let changes = &mut expected[placeholder.index];
                if let Some(Watched::Receipt { removed }) = placeholder.under.and_then(meaning) {
                    changes.push((Mechanism::EvidencePreservingReducer, Some(before + removed)));
                }
                changes.push((Mechanism::ObservationPack, Some(before)));
            }
            for report in seen.iter().filter(|s| valid(s.index)) {
                let own = tokens[report.index];
                let change = match meaning(report.id) {
                    Some(Watched::Receipt { removed }) => (Mechanism::EvidencePreservingReducer, Some(own + removed)),
                    Some(Watched::Added) => (Mechanism::OnlineContextCompact, None),
                    _ => continue,
                };
                expected[report.index].push(change);
            }
            prop_assert_eq!(changes(&parts), expected);
        }
    }
}

//! The reducer as a sans-IO step: a tool result in, the decision and the journal records out
//! as values, with the model call as an explicit request between two steps.
//!
//! [`Reduction::start`] takes one tool result, the context (route, runtime root, temp
//! directory, the time) and the receipt cache. It returns [`Start::Done`] when no model call
//! is needed (not a candidate, a gate fallback, an archive failure, or a cached receipt
//! verified again against the archive), or [`Start::AskModel`] with the request to send and
//! the records to append before sending it. The host sends the request however it can (a
//! synchronous [`sol_core::ModelClient`], Pi's asynchronous `complete()`), then hands the
//! reply or the model error to [`Reduction::finish`], which always returns [`Done`].
//!
//! Every check, the journal order and the cache live here:
//!
//! | path | records |
//! |---|---|
//! | not a candidate, size bounds | none |
//! | gate or archive fallback | `fallback` |
//! | cached receipt | `candidate`, `cache_hit`, then `applied` or `fallback` (the entry is evicted) |
//! | model call | `candidate` (from `start`, before the call), then `provider_response` and `applied` or `fallback`; a call with no reply: `fallback` only |
//!
//! Every [`Done`] carries a [`StepAccount`]: the bytes and tokens the replacement removes from
//! what the model is sent (the original content's texts against the replacement's), and the
//! reducer model call with the tokens its reply reports.
//!
//! File-system work (reading Pi's full-output file, writing and reading back the archive)
//! stays behind the synchronous [`FileSystem`] port: it is local, bounded
//! ([`crate::MAX_FULL_OUTPUT_BYTES`], non-blocking opens in the native port) and every host
//! has a synchronous file system, so turning it into request/response pairs would add three
//! states to the step without a host that needs them. Only the model call is slow and
//! asynchronous in Pi, so only it crosses as a request.
//!
//! ```
//! use camino::Utf8Path;
//! use serde_json::json;
//! use sol_core::message::ContentBlock;
//! use sol_core::testing::MemoryFileSystem;
//! use sol_reducer::step::{Reduction, Start};
//! use sol_reducer::{ReceiptCache, ReduceContext, ReducerReply, Route, ToolResultView};
//!
//! let log = format!("{}test parser::rejects_empty ... FAILED\n", "test a::b ... ok\n".repeat(300));
//! let input = json!({"command": "cargo test"});
//! let content = [ContentBlock::text(log.clone())];
//! let result = ToolResultView {
//!     tool_call_id: "call_1", tool_name: "bash", input: &input, content: &content,
//!     is_error: true, ..ToolResultView::default()
//! };
//! let route = Route::new("openai-codex", "gpt-5.6-luna");
//! let context = ReduceContext {
//!     route: &route,
//!     runtime_root: Utf8Path::new("/s/sol-pi/abc"),
//!     policy: sol_reducer::Policy::pi(),
//!     timestamp: "2025-06-01T12:00:00.000Z",
//!     economy: None,
//! };
//! let (fs, mut cache) = (MemoryFileSystem::new(), ReceiptCache::new());
//! let Start::AskModel(ask) = Reduction::start(&result, &context, &fs, Some(&mut cache)) else {
//!     panic!("a fresh log needs the model");
//! };
//! assert_eq!(ask.journal[0]["kind"], "candidate"); // appended before the call
//! let reply = json!({
//!     "schema": "sol-pi-evidence-receipt/1",
//!     "source_sha256": sol_reducer::sha256_hex(log.as_bytes()),
//!     "status": "failure",
//!     "uncertain": false,
//!     "evidence": [{"kind": "failure", "quote": "test parser::rejects_empty ... FAILED"}],
//! });
//! let done = ask.reduction.finish(
//!     Ok(ReducerReply::from_text(reply.to_string(), &route)),
//!     "2025-06-01T12:00:01.000Z",
//!     Some(&mut cache),
//! );
//! assert!(done.decision.replacement().is_some());
//! let kinds: Vec<_> = done.journal.iter().map(|record| record["kind"].clone()).collect();
//! assert_eq!(kinds, ["provider_response", "applied"]);
//! assert_eq!(done.account.model_calls, 1);
//! assert!(done.account.bytes_removed > 4000);
//!
//! // The identical rerun is answered from the cache, with no model call.
//! let Start::Done(again) = Reduction::start(&result, &context, &fs, Some(&mut cache)) else {
//!     panic!("a cache hit");
//! };
//! assert!(again.decision.replacement().is_some());
//! assert_eq!(again.account.model_calls, 0);
//! ```

use camino::Utf8Path;
use serde_json::Value;
use sol_core::message::ContentBlock;
use sol_core::{FileKind, FileSystem, ModelError, ModelRequest, StepAccount};

use crate::MAX_FULL_OUTPUT_BYTES;
use crate::archive::{ArchivedLog, archive_log, read_archived, store_root};
use crate::cache::{CacheKey, CachedReceipt, ReceiptCache, reuse_cached};
use crate::candidate::{Candidate, CandidateInput};
use crate::digest::utf16_len;
use crate::economics::{Economy, weigh_source};
use crate::journal::{
    JournalHeader, applied_record, cache_hit_record, candidate_record, fallback_record,
    provider_response_record, run_id,
};
use crate::model::{ReducerReply, Route, fallback_for_model_error, model_request};
use crate::policy::Policy;
use crate::reason::{Fallback, ReasonCode};
use crate::render::{Replacement, apply_reply};
use crate::secret::find_likely_secret;
use crate::source::{FullOutput, Source, check_success_body, prepare_source, secret_fallback};

/// Everything [`Reduction::start`] needs besides the result, the file system and the cache.
#[derive(Debug, Clone, Copy)]
pub struct ReduceContext<'a> {
    /// The reducer model.
    pub route: &'a Route,
    /// The directory the host keeps this session's reducer data under (Pi:
    /// `<sessionDir>/sol-pi/<sessionId>`); the archive lives in its
    /// `evidence-preserving-reducer` directory, and the journal's `runId` is its hash.
    pub runtime_root: &'a Utf8Path,
    /// The time of the decision, for journal records, as the host formats it.
    pub timestamp: &'a str,
    /// Which commands are candidates, and the shell tool the receipt names
    /// ([`Policy::pi`] for Pi's).
    pub policy: &'a Policy,
    /// The cache-aware policy (`cacheAware`), when the host turned it on: the reducer reads
    /// the log as the model saw it, archives the host's whole output beside it, and skips a
    /// reduction whose model call would cost more than it saves ([`crate::economics`]).
    pub economy: Option<Economy>,
}

impl<'a> ReduceContext<'a> {
    /// A context under Pi's [`Policy`] ([`Policy::pi`]: the default commands and `bash`);
    /// [`ReduceContext::with_policy`] sets another.
    ///
    /// ```
    /// use sol_reducer::camino::Utf8Path;
    /// use sol_reducer::{Policy, ReduceContext, Route};
    ///
    /// let route = Route::new("my-provider", "my-small-model");
    /// let policy = Policy::default().with_shell_tool("shell");
    /// let context = ReduceContext::new(&route, Utf8Path::new("/var/lib/agent/s1"), "2025-06-01T12:00:00Z")
    ///     .with_policy(&policy);
    /// assert_eq!(context.policy.shell_tool, "shell");
    /// assert_eq!(ReduceContext::new(&route, Utf8Path::new("/s"), "t").policy, Policy::pi());
    /// ```
    pub fn new(
        route: &'a Route,
        runtime_root: &'a Utf8Path,
        timestamp: &'a str,
    ) -> ReduceContext<'a> {
        ReduceContext {
            route,
            runtime_root,
            timestamp,
            policy: Policy::pi(),
            economy: None,
        }
    }

    /// This context under `policy`.
    pub fn with_policy(self, policy: &'a Policy) -> ReduceContext<'a> {
        ReduceContext { policy, ..self }
    }

    /// This context under the cache-aware policy, weighed with `economy`.
    pub fn with_economy(self, economy: Economy) -> ReduceContext<'a> {
        ReduceContext {
            economy: Some(economy),
            ..self
        }
    }
}

/// What to do with a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Return this reduced result instead.
    Replaced(Box<Replacement>),
    /// Keep the original result, for this reason.
    Unchanged(ReasonCode),
}

impl Decision {
    /// The replacement, if the log was reduced.
    pub fn replacement(&self) -> Option<&Replacement> {
        match self {
            Decision::Replaced(replacement) => Some(replacement),
            Decision::Unchanged(_) => None,
        }
    }

    /// The reason, if the result is kept.
    pub fn reason(&self) -> Option<ReasonCode> {
        match self {
            Decision::Replaced(_) => None,
            Decision::Unchanged(reason) => Some(*reason),
        }
    }
}

/// A finished reduction: the decision, the journal records to append in order (with type
/// [`crate::ENTRY_TYPE`]), and what the step saved and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    /// Replace the result, or keep it.
    pub decision: Decision,
    /// Journal records, oldest first.
    pub journal: Vec<Value>,
    /// Bytes and tokens removed, the model call and its tokens.
    pub account: StepAccount,
}

impl Done {
    /// The receipt text the model reads in place of the log, if the log was reduced.
    pub fn receipt_text(&self) -> Option<&str> {
        self.decision
            .replacement()
            .map(|replacement| replacement.receipt_text.as_str())
    }

    /// Why the result is kept, if it is.
    pub fn reason(&self) -> Option<ReasonCode> {
        self.decision.reason()
    }

    /// The `kind` of each journal record, in order (`candidate`, `provider_response`,
    /// `applied`, ...).
    pub fn journal_kinds(&self) -> Vec<&str> {
        self.journal
            .iter()
            .filter_map(|record| record["kind"].as_str())
            .collect()
    }
}

/// A summary for a host's log or its user, in three lines: the decision (with the reason's
/// description when the result is kept), the reducer model call and the tokens its reply
/// reported (left out when it reported none), and the journal kinds. The receipt itself is [`Done::receipt_text`].
///
/// ```
/// use sol_reducer::{Decision, Done, ReasonCode};
///
/// let done = Done {
///     decision: Decision::Unchanged(ReasonCode::NotDiagnosticCommand),
///     journal: Vec::new(),
///     account: Default::default(),
/// };
/// assert!(done.to_string().starts_with("kept unchanged (not-diagnostic-command): "));
/// assert!(done.to_string().ends_with("\nreducer model: not called\njournal: none"));
/// ```
impl std::fmt::Display for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let account = &self.account;
        match &self.decision {
            Decision::Replaced(_) => writeln!(
                f,
                "replaced by a verified receipt: {} bytes (~{} tokens) removed",
                account.bytes_removed, account.tokens_removed
            )?,
            Decision::Unchanged(reason) => {
                writeln!(f, "kept unchanged ({reason}): {}", reason.description())?;
            }
        }
        let (input, output) = (account.model_input_tokens, account.model_output_tokens);
        let calls = match account.model_calls {
            0 => "not called".to_owned(),
            1 => "1 call".to_owned(),
            calls => format!("{calls} calls"),
        };
        if input == 0 && output == 0 {
            writeln!(f, "reducer model: {calls}")?;
        } else {
            writeln!(
                f,
                "reducer model: {calls}, {input} input + {output} output tokens"
            )?;
        }
        let kinds = self.journal_kinds();
        if kinds.is_empty() {
            write!(f, "journal: none")
        } else {
            write!(f, "journal: {}", kinds.join(", "))
        }
    }
}

/// A reduction waiting for the reducer model.
#[derive(Debug)]
pub struct AskModel {
    /// The request to send.
    pub request: ModelRequest,
    /// Records to append before the call (the `candidate` record).
    pub journal: Vec<Value>,
    /// Hand it the reply with [`Reduction::finish`].
    pub reduction: Reduction,
}

/// What [`Reduction::start`] returns.
#[derive(Debug)]
pub enum Start {
    /// Nothing to ask: the decision is made.
    Done(Done),
    /// Send the request, then call [`Reduction::finish`].
    AskModel(Box<AskModel>),
}

/// A candidate whose log is archived and whose receipt the model is asked for. It holds the
/// prepared source and the archive entry, so [`Reduction::finish`] needs no I/O.
#[derive(Debug, Clone)]
pub struct Reduction {
    source: Source,
    archived: ArchivedLog,
    route: Route,
    run_id: String,
}

/// Reads the full-output file the host trusts for `candidate`, when there is one: a
/// regular file (checked without following links), read without following a link, within
/// [`MAX_FULL_OUTPUT_BYTES`], in UTF-8.
pub fn read_full_output(fs: &dyn FileSystem, candidate: &Candidate) -> FullOutput {
    let Some(path) = candidate.full_output_log.as_deref() else {
        return FullOutput::NotRead;
    };
    match fs.metadata(path) {
        Ok(Some(metadata)) if metadata.kind == FileKind::File => {}
        Ok(Some(_)) => return FullOutput::Unavailable(format!("not a regular file: {path}")),
        Ok(None) => return FullOutput::Unavailable(format!("no such file: {path}")),
        Err(error) => return FullOutput::Unavailable(error.to_string()),
    }
    match fs.read_no_follow(path, MAX_FULL_OUTPUT_BYTES) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => FullOutput::Read(text),
            Err(_) => FullOutput::Unavailable(format!("not UTF-8: {path}")),
        },
        Err(error) => FullOutput::Unavailable(error.to_string()),
    }
}

/// The `detail` of a `likely-secret` record whose secret is in the host's whole output only.
pub const SECRET_IN_WHOLE_OUTPUT: &str = "the secret is in the host's whole output (its full-output file, at secretLine), in the part cut from what the model saw; nothing is archived or sent";

/// The source under the cache-aware policy: the log as the model saw it (the inline text,
/// never the host's whole output), weighed by [`weigh_source`] before anything is archived or
/// sent. When the host's whole output can be read, the secret gate and the success check read
/// it too (either one firing keeps the result: nothing is archived, nothing sent); it is then
/// archived beside the log and the receipt names it, so no evidence is lost.
fn prepare_seen_source(
    candidate: Candidate,
    economy: Economy,
    fs: &dyn FileSystem,
    store: &Utf8Path,
) -> Result<Source, Fallback> {
    let source = prepare_source(candidate, FullOutput::NotRead)?;
    let verdict = weigh_source(&source, economy);
    if !verdict.pays() {
        return Err(Fallback::new(ReasonCode::NotEconomic).with(|facts| {
            facts.source_sha256 = Some(source.sha256().to_owned());
            facts.source_bytes = Some(source.bytes());
            facts.economics = Some(verdict);
        }));
    }
    // Pi's whole output is read only for a reduction that goes ahead: it is archived, never
    // sent.
    let FullOutput::Read(whole) = read_full_output(fs, source.candidate()) else {
        return Ok(source);
    };
    if whole == source.body() {
        return Ok(source);
    }
    // The gates read the whole output too: a secret in the part the host cut from what the
    // model saw (a private key's BEGIN line, say, whose body is in the kept tail) blocks the
    // whole reduction, and so do failing tests behind a reported success.
    if let Some(finding) = find_likely_secret(&whole) {
        return Err(secret_fallback(
            source.sha256().to_owned(),
            finding,
            Some(SECRET_IN_WHOLE_OUTPUT),
        ));
    }
    if !source.is_error() {
        check_success_body(
            &whole,
            source.sha256(),
            source.candidate().exit_code,
            Some("in the host's whole output"),
        )?;
    }
    match archive_log(fs, store, &whole) {
        Ok(archived) => Ok(source.with_full_output_artifact(archived)),
        Err(error) => Err(archive_fallback(&source, &error)),
    }
}

/// The UTF-8 bytes and UTF-16 units of every text block.
fn text_size(content: &[ContentBlock]) -> (u64, u64) {
    content
        .iter()
        .filter_map(ContentBlock::as_text)
        .fold((0, 0), |(bytes, units), text| {
            (bytes + text.len() as u64, units + utf16_len(text) as u64)
        })
}

/// What replacing the original content by `replacement` removes.
fn removed(source: &Source, replacement: &Replacement) -> StepAccount {
    let (original_bytes, original_units) = text_size(&source.candidate().content);
    let (new_bytes, new_units) = text_size(&replacement.content);
    StepAccount::removed_text(original_bytes, original_units, new_bytes, new_units)
}

/// A result left unchanged: the fallback record when its reason is journaled.
fn unchanged(
    header: &JournalHeader<'_>,
    tool_call_id: &str,
    fallback: &Fallback,
    mut journal: Vec<Value>,
    account: StepAccount,
) -> Done {
    if fallback.reason.is_journaled() {
        journal.push(fallback_record(header, tool_call_id, fallback));
    }
    Done {
        decision: Decision::Unchanged(fallback.reason),
        journal,
        account,
    }
}

fn archive_fallback(source: &Source, error: &dyn std::fmt::Display) -> Fallback {
    Fallback::new(ReasonCode::ArchiveFailure).with(|facts| {
        facts.source_sha256 = Some(source.sha256().to_owned());
        facts.detail = Some(error.to_string());
    })
}

impl Reduction {
    /// The first step for one tool result: candidate, full-output read, source checks,
    /// archive and `candidate` record, then a cached receipt verified again against the
    /// archive (a failed one is evicted), or the model request. `cache`, when given, is
    /// consulted here and filled by [`Reduction::finish`].
    ///
    /// `result` is a harness-neutral [`crate::ShellResult`], or Pi's tool result
    /// ([`crate::pi::ToolResultView`]).
    pub fn start<R: CandidateInput + ?Sized>(
        result: &R,
        context: &ReduceContext<'_>,
        fs: &dyn FileSystem,
        cache: Option<&mut ReceiptCache>,
    ) -> Start {
        let run = run_id(context.runtime_root);
        let header = JournalHeader {
            run_id: &run,
            timestamp: context.timestamp,
        };
        let stop = |fallback: Fallback, journal: Vec<Value>| {
            Start::Done(unchanged(
                &header,
                result.call_id(),
                &fallback,
                journal,
                StepAccount::default(),
            ))
        };

        let candidate = match result.select(context.policy) {
            Ok(candidate) => candidate,
            Err(fallback) => return stop(fallback, Vec::new()),
        };
        let store = store_root(context.runtime_root);
        let source = match context.economy {
            None => {
                let full_output = read_full_output(fs, &candidate);
                prepare_source(candidate, full_output)
            }
            Some(economy) => prepare_seen_source(candidate, economy, fs, &store),
        };
        let source = match source {
            Ok(source) => source,
            Err(fallback) => return stop(fallback, Vec::new()),
        };
        let archived = match source.archive(fs, &store) {
            Ok(archived) => archived,
            Err(error) => return stop(archive_fallback(&source, &error), Vec::new()),
        };
        let mut journal = vec![candidate_record(&header, &source, &archived)];

        let key = CacheKey::new(&source, context.route);
        if let Some(cache) = cache
            && let Some(cached) = cache.get(&key)
        {
            journal.push(cache_hit_record(
                &header,
                &source,
                &cached.provider,
                &cached.model,
            ));
            let reused = read_archived(fs, &archived.path, &archived.sha256, archived.bytes)
                .map_err(|error| archive_fallback(&source, &error))
                .and_then(|text| reuse_cached(&source, &archived, &text, &cached));
            return match reused {
                Ok(replacement) => {
                    journal.push(applied_record(&header, &source, &replacement));
                    Start::Done(Done {
                        account: removed(&source, &replacement),
                        decision: Decision::Replaced(Box::new(replacement)),
                        journal,
                    })
                }
                Err(fallback) => {
                    cache.remove(&key);
                    stop(fallback, journal)
                }
            };
        }

        Start::AskModel(Box::new(AskModel {
            request: model_request(&source, context.route),
            journal,
            reduction: Reduction {
                source,
                archived,
                route: context.route.clone(),
                run_id: run,
            },
        }))
    }

    /// The second step: the model's reply (or why there is none) at `timestamp`. A reply is
    /// journaled (`provider_response`), checked against the archived log and applied, and
    /// its receipt cached; anything else keeps the result with a `fallback` record.
    pub fn finish(
        self,
        answer: Result<ReducerReply, ModelError>,
        timestamp: &str,
        cache: Option<&mut ReceiptCache>,
    ) -> Done {
        let header = JournalHeader {
            run_id: &self.run_id,
            timestamp,
        };
        let source = &self.source;
        let reply = match answer {
            Ok(reply) => reply,
            Err(error) => {
                let calls = u64::from(!matches!(error, ModelError::Unavailable { .. }));
                let fallback = fallback_for_model_error(&error)
                    .with(|facts| facts.source_sha256 = Some(source.sha256().to_owned()));
                let account = StepAccount {
                    model_calls: calls,
                    ..StepAccount::default()
                };
                return unchanged(
                    &header,
                    source.tool_call_id(),
                    &fallback,
                    Vec::new(),
                    account,
                );
            }
        };
        let cost = StepAccount {
            model_calls: 1,
            model_input_tokens: reply.usage.input,
            model_output_tokens: reply.usage.output,
            ..StepAccount::default()
        };
        let mut journal = vec![provider_response_record(&header, source, &reply)];
        match apply_reply(source, &self.archived, &reply) {
            Ok(replacement) => {
                journal.push(applied_record(&header, source, &replacement));
                if let Some(cache) = cache {
                    cache.insert(
                        CacheKey::new(source, &self.route),
                        CachedReceipt::from_reply(&reply),
                    );
                }
                Done {
                    account: removed(source, &replacement) + cost,
                    decision: Decision::Replaced(Box::new(replacement)),
                    journal,
                }
            }
            Err(fallback) => unchanged(&header, source.tool_call_id(), &fallback, journal, cost),
        }
    }

    /// The route the model is asked through.
    pub fn route(&self) -> &Route {
        &self.route
    }

    /// The prepared log.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Where the log is archived.
    pub fn archived(&self) -> &ArchivedLog {
        &self.archived
    }
}

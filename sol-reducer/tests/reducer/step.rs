//! The step API (`Reduction::start` / `finish`) against `driver::reduce` and against the
//! driver as it was before the step API (`oracle.rs`): random sequences of tool results
//! (bash and fused, candidates or not, short, secret, mismatched, with Pi's full-output file
//! or without) and scripted model replies (a valid receipt, invalid ones, errors, a slow
//! reply that times out) must give the same decisions, the same journal, the same requests
//! and the same archive all three ways; and every step's account must match what happened.

use std::cell::RefCell;
use std::collections::VecDeque;

use camino::Utf8Path;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Value, json};
use sol_core::message::ContentBlock;
use sol_core::testing::{MemoryFileSystem, MemorySessionStore};
use sol_core::{ModelClient, ModelError, ModelReply, ModelRequest, StepAccount};
use sol_reducer::driver::{reduce_step, reduce_with};
use sol_reducer::step::{Reduction, Start};
use sol_reducer::{Decision, Ports, ReceiptCache, ReduceContext, ReducerReply, Route, Usage};

use crate::oracle;
use crate::support::{
    OwnedResult, ROOT, TEMP, TIMESTAMP, bash, failing_log, fused, journal_of, passing_log,
};

/// What the scripted reducer model does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reply {
    /// Quotes each failing test line (else an error line), or the summary of a passing log.
    Valid,
    /// Quotes a line that is not in the log.
    InventedQuote,
    /// Claims the opposite status.
    WrongStatus,
    /// Prose instead of JSON.
    NotJson,
    /// A receipt for another log.
    OtherHash,
    /// The registry has no such model.
    Unavailable,
    /// The reply arrives after the timeout.
    Slow,
    /// The run is aborted during the call.
    Aborted,
    /// The provider fails.
    Failed,
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        6 => Just(Reply::Valid),
        1 => Just(Reply::InventedQuote),
        1 => Just(Reply::WrongStatus),
        1 => Just(Reply::NotJson),
        1 => Just(Reply::OtherHash),
        1 => Just(Reply::Unavailable),
        1 => Just(Reply::Slow),
        1 => Just(Reply::Aborted),
        1 => Just(Reply::Failed),
    ]
}

/// The request's `source_sha256`, `is_error` and framed log.
fn parse_request(request: &ModelRequest) -> (String, bool, String) {
    let text = &request.user_text;
    let sha = text
        .lines()
        .find_map(|line| line.strip_prefix("source_sha256="))
        .expect("a source hash")
        .to_owned();
    let is_error = text.lines().any(|line| line == "is_error=true");
    let open = "<untrusted_log>\n";
    let start = text.find(open).expect("an opening tag") + open.len();
    let end = text.rfind("\n</untrusted_log>").expect("a closing tag");
    (sha, is_error, text[start..end].to_owned())
}

/// The reply text (or error) for `request`.
fn answer(reply: Reply, request: &ModelRequest) -> Result<String, ModelError> {
    let (sha, is_error, log) = parse_request(request);
    let receipt = |sha: &str, status: &str, quotes: Vec<&str>| {
        let kind = if status == "failure" {
            "failure"
        } else {
            "summary"
        };
        let evidence: Vec<Value> = quotes
            .into_iter()
            .map(|quote| json!({"kind": kind, "quote": quote}))
            .collect();
        json!({
            "schema": "sol-pi-evidence-receipt/1",
            "source_sha256": sha,
            "status": status,
            "uncertain": false,
            "evidence": evidence,
        })
        .to_string()
    };
    let status = if is_error { "failure" } else { "success" };
    let honest_quotes = || -> Vec<&str> {
        if is_error {
            let failing: Vec<&str> = log
                .lines()
                .filter(|line| line.ends_with(" ... FAILED"))
                .take(12)
                .collect();
            if failing.is_empty() {
                log.lines()
                    .filter(|line| line.contains("error"))
                    .take(1)
                    .collect()
            } else {
                failing
            }
        } else {
            log.lines()
                .filter(|line| line.starts_with("test result: ok."))
                .take(1)
                .collect()
        }
    };
    match reply {
        Reply::Valid => Ok(receipt(&sha, status, honest_quotes())),
        Reply::InventedQuote => Ok(receipt(&sha, status, vec!["test imaginary ... FAILED"])),
        Reply::WrongStatus => Ok(receipt(
            &sha,
            if is_error { "success" } else { "failure" },
            honest_quotes(),
        )),
        Reply::NotJson => Ok("The build failed; I would fix it by editing src/lib.rs.".into()),
        Reply::OtherHash => Ok(receipt(&"0".repeat(64), status, honest_quotes())),
        Reply::Unavailable => Err(ModelError::Unavailable {
            provider: request.provider.clone(),
            model: request.model.clone(),
        }),
        Reply::Slow => Err(ModelError::TimedOut {
            after: request.timeout,
        }),
        Reply::Aborted => Err(ModelError::Aborted),
        Reply::Failed => Err(ModelError::Failed {
            message: "overloaded".into(),
        }),
    }
}

/// A model client that answers each request with the next scripted [`Reply`].
#[derive(Default)]
struct ScriptModel {
    script: RefCell<VecDeque<Reply>>,
    requests: RefCell<Vec<ModelRequest>>,
}

impl ScriptModel {
    fn new(script: &[Reply]) -> ScriptModel {
        ScriptModel {
            script: RefCell::new(script.iter().copied().collect()),
            requests: RefCell::default(),
        }
    }
}

impl ModelClient for ScriptModel {
    fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        self.requests.borrow_mut().push(request.clone());
        let reply = self
            .script
            .borrow_mut()
            .pop_front()
            .unwrap_or(Reply::Failed);
        answer(reply, request).map(ModelReply::text)
    }
}

/// One generated tool result, with Pi's full-output file when it names one.
#[derive(Debug, Clone)]
struct Case {
    result: OwnedResult,
    full_output: Option<(String, String)>,
}

fn body() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(vec![3usize, 130, 150, 180]).prop_map(failing_log),
        2 => select(vec![3usize, 130, 150]).prop_map(passing_log),
        1 => Just("error[E0308]: mismatched types\n  --> src/lib.rs:3:5\n".repeat(120)),
    ]
}

fn case(index: usize) -> impl Strategy<Value = Case> {
    (
        0u8..10,
        select(vec![
            "cargo test",
            "npm test",
            "pytest -q",
            "make check",
            "rg needle src",
            "",
        ]),
        body(),
        0u8..8,
        any::<bool>(),
        any::<bool>(),
        0u8..12,
        0u8..12,
    )
        .prop_map(
            move |(tool, command, body, secret, is_error, status, full, nested)| {
                let mut log = body;
                if secret == 0 {
                    log.push_str("connecting with PGPASSWORD=hunter2-very-secret\n");
                }
                let status_line = if status {
                    "\n\nCommand exited with code 101"
                } else {
                    ""
                };
                let mut full_output = None;
                let mut text = format!("{log}{status_line}");
                if full < 2 {
                    let path = format!("{TEMP}/pi-bash-{index}.log");
                    text = format!("{log}[Full output: {path}]{status_line}");
                    if full == 0 {
                        full_output = Some((path, failing_log(220)));
                    }
                }
                let mut result = match tool {
                    0 => {
                        let marker = if is_error {
                            "[then_run:failed]"
                        } else {
                            "[then_run:succeeded]"
                        };
                        let block = format!("{marker}\n{text}");
                        fused(
                            "edit",
                            command,
                            &["Successfully replaced text in src/lib.rs.", &block],
                            is_error,
                        )
                    }
                    1 => {
                        let mut other = bash(command, &text, is_error);
                        other.tool_name = "read".into();
                        other
                    }
                    _ => bash(command, &text, is_error),
                };
                result.tool_call_id = format!("call_{index}");
                if nested == 0 {
                    result.parent_tool_call_id = Some("call_script".into());
                }
                Case {
                    result,
                    full_output,
                }
            },
        )
}

/// A few distinct results, then a run of picks among them (so reruns hit the cache), each
/// with the reply the model gives if it is asked; and the cache's capacity.
fn session() -> impl Strategy<Value = (Vec<Case>, Vec<(usize, Reply)>, usize)> {
    (
        (case(0), case(1), case(2)),
        prop::collection::vec((0usize..3, reply()), 1..7),
        1usize..4,
    )
        .prop_map(|((a, b, c), picks, capacity)| (vec![a, b, c], picks, capacity))
}

fn file_system(cases: &[Case]) -> MemoryFileSystem {
    cases
        .iter()
        .filter_map(|case| case.full_output.clone())
        .fold(
            MemoryFileSystem::new().with_dir(TEMP),
            |fs, (path, text)| fs.with_file(path, text),
        )
}

fn context(route: &Route) -> ReduceContext<'_> {
    ReduceContext {
        route,
        runtime_root: Utf8Path::new(ROOT),
        timestamp: TIMESTAMP,
        policy: sol_reducer::Policy::pi(),
        economy: None,
    }
}

/// Every archived object, by path.
fn archive(fs: &MemoryFileSystem) -> Vec<(String, Option<Vec<u8>>)> {
    let store = format!("{ROOT}/evidence-preserving-reducer");
    fs.paths()
        .into_iter()
        .filter(|path| path.as_str().starts_with(&store))
        .map(|path| (path.to_string(), fs.file(&path)))
        .collect()
}

/// The log hash and error flag a candidate's receipt is cached under, if it gets that far.
fn cache_key(case: &Case) -> Option<(String, bool)> {
    let route = Route::new("openai-codex", "gpt-5.6-luna");
    let fs = file_system(std::slice::from_ref(case));
    match Reduction::start(&case.result.view(), &context(&route), &fs, None) {
        Start::AskModel(ask) => {
            let source = ask.reduction.source();
            Some((source.sha256().to_owned(), source.is_error()))
        }
        Start::Done(_) => None,
    }
}

/// One reduction driven by hand: start, the model when asked, finish.
fn by_hand(
    result: &OwnedResult,
    fs: &MemoryFileSystem,
    model: &ScriptModel,
    cache: &mut ReceiptCache,
    route: &Route,
    journal: &mut Vec<Value>,
) -> (Decision, StepAccount) {
    match Reduction::start(&result.view(), &context(route), fs, Some(cache)) {
        Start::Done(done) => {
            journal.extend(done.journal);
            (done.decision, done.account)
        }
        Start::AskModel(ask) => {
            journal.extend(ask.journal.iter().cloned());
            let reply = model
                .complete(&ask.request)
                .map(|reply| ReducerReply::from_text(reply.text, route));
            let done = ask.reduction.finish(reply, TIMESTAMP, Some(cache));
            journal.extend(done.journal);
            (done.decision, done.account)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_step_api_the_driver_and_the_old_driver_agree((cases, picks, capacity) in session()) {
        let route = Route::new("openai-codex", "gpt-5.6-luna");
        let script: Vec<Reply> = picks.iter().map(|(_, reply)| *reply).collect();
        // The old driver and the new one, over their own ports; the step API by hand; the
        // closure driver `reduce_with`.
        let (old_fs, new_fs, hand_fs) = (file_system(&cases), file_system(&cases), file_system(&cases));
        let with_fs = file_system(&cases);
        let (old_model, new_model, hand_model) =
            (ScriptModel::new(&script), ScriptModel::new(&script), ScriptModel::new(&script));
        let with_model = ScriptModel::new(&script);
        let (old_session, new_session) = (MemorySessionStore::new(), MemorySessionStore::new());
        let (mut hand_journal, mut with_journal) = (Vec::new(), Vec::new());
        let mut caches = [
            ReceiptCache::with_capacity(capacity),
            ReceiptCache::with_capacity(capacity),
            ReceiptCache::with_capacity(capacity),
            ReceiptCache::with_capacity(capacity),
        ];
        let [old_cache, new_cache, hand_cache, with_cache] = &mut caches;
        for (index, _) in &picks {
            let result = &cases[*index].result;
            let asked_before = new_model.requests.borrow().len();
            let old_ports = Ports { fs: &old_fs, model: &old_model, session: &old_session };
            let new_ports = Ports { fs: &new_fs, model: &new_model, session: &new_session };
            let old = oracle::reduce(&result.view(), &old_ports, &context(&route), Some(old_cache));
            let before = journal_of(&new_session).len();
            let new = reduce_step(&result.view(), &new_ports, &context(&route), Some(new_cache));
            let (hand, hand_account) =
                by_hand(result, &hand_fs, &hand_model, hand_cache, &route, &mut hand_journal);
            prop_assert_eq!(&new.decision, &old);
            prop_assert_eq!(&hand, &old);
            prop_assert_eq!(new.account, hand_account);
            let with = reduce_with(&result.view(), &context(&route), &with_fs, Some(with_cache), |request| {
                with_model.complete(request)
            });
            prop_assert_eq!(&with.decision, &old);
            prop_assert_eq!(with.account, new.account);
            prop_assert_eq!(&with.journal, &new.journal);
            with_journal.extend(with.journal);
            // What reduce_step returns is what it appended.
            prop_assert_eq!(&new.journal, &journal_of(&new_session)[before..].to_vec());

            // The account says what happened.
            let asked = new_model.requests.borrow().len() > asked_before;
            let reply = script[new_model.requests.borrow().len().saturating_sub(1)];
            let called = asked && reply != Reply::Unavailable;
            prop_assert_eq!(new.account.model_calls, u64::from(called));
            prop_assert_eq!(new.account.model_input_tokens, 0);
            prop_assert_eq!(new.account.requests_avoided, 0);
            let size = |content: &[ContentBlock]| {
                content.iter().filter_map(ContentBlock::as_text).fold((0u64, 0u64), |(b, u), text| {
                    (b + text.len() as u64, u + text.encode_utf16().count() as u64)
                })
            };
            let (bytes, units) = size(&result.content);
            match &new.decision {
                Decision::Replaced(replacement) => {
                    let (new_bytes, new_units) = size(&replacement.content);
                    prop_assert_eq!(new.account.bytes_removed, bytes.saturating_sub(new_bytes));
                    prop_assert_eq!(
                        new.account.tokens_removed,
                        units.div_ceil(4).saturating_sub(new_units.div_ceil(4))
                    );
                    if cases[*index].full_output.is_none() {
                        prop_assert!(new.account.bytes_removed > 0);
                    }
                }
                Decision::Unchanged(_) => {
                    prop_assert_eq!(new.account.bytes_removed, 0);
                    prop_assert_eq!(new.account.tokens_removed, 0);
                }
            }
        }
        prop_assert_eq!(journal_of(&old_session), journal_of(&new_session));
        prop_assert_eq!(&journal_of(&new_session), &hand_journal);
        prop_assert_eq!(&journal_of(&new_session), &with_journal);
        prop_assert_eq!(&*new_model.requests.borrow(), &*with_model.requests.borrow());
        prop_assert_eq!(archive(&new_fs), archive(&with_fs));
        prop_assert_eq!(new_cache.len(), with_cache.len());
        prop_assert_eq!(&*old_model.requests.borrow(), &*new_model.requests.borrow());
        prop_assert_eq!(&*new_model.requests.borrow(), &*hand_model.requests.borrow());
        prop_assert_eq!(archive(&old_fs), archive(&new_fs));
        prop_assert_eq!(archive(&new_fs), archive(&hand_fs));
        prop_assert_eq!(old_cache.len(), new_cache.len());
        prop_assert_eq!(new_cache.len(), hand_cache.len());
    }

    #[test]
    fn a_slow_reply_does_not_change_another_results_reduction(
        (a, b) in (case(0), case(1)),
        (reply_a, reply_b) in (reply(), reply()),
    ) {
        // Two results with the same log and error flag share a cache entry: there the order
        // of the replies decides which one reuses the other's receipt.
        let key_a = cache_key(&a);
        prop_assume!(key_a.is_none() || key_a != cache_key(&b));
        // In order: a, then b. Interleaved: a asks the model, b runs to the end, then a's
        // reply arrives. Each result gets the same decision and the same records.
        let route = Route::new("openai-codex", "gpt-5.6-luna");
        let cases = [a.clone(), b.clone()];
        let in_order = {
            let fs = file_system(&cases);
            let mut cache = ReceiptCache::new();
            let mut journal = Vec::new();
            let mut decisions = Vec::new();
            for (case, reply) in [(&a, reply_a), (&b, reply_b)] {
                let model = ScriptModel::new(&[reply]);
                decisions.push(by_hand(&case.result, &fs, &model, &mut cache, &route, &mut journal).0);
            }
            (decisions, journal)
        };
        let fs = file_system(&cases);
        let mut cache = ReceiptCache::new();
        let mut journal = Vec::new();
        let started = Reduction::start(&a.result.view(), &context(&route), &fs, Some(&mut cache));
        let (decision_b, decision_a) = match started {
            Start::Done(done) => {
                journal.extend(done.journal);
                let model = ScriptModel::new(&[reply_b]);
                let b_decision = by_hand(&b.result, &fs, &model, &mut cache, &route, &mut journal).0;
                (b_decision, done.decision)
            }
            Start::AskModel(ask) => {
                journal.extend(ask.journal.iter().cloned());
                let model = ScriptModel::new(&[reply_b]);
                let b_decision = by_hand(&b.result, &fs, &model, &mut cache, &route, &mut journal).0;
                let reply = answer(reply_a, &ask.request)
                    .map(|text| ReducerReply::from_text(text, &route));
                let done = ask.reduction.finish(reply, TIMESTAMP, Some(&mut cache));
                journal.extend(done.journal);
                (b_decision, done.decision)
            }
        };
        prop_assert_eq!(&in_order.0, &vec![decision_a, decision_b]);
        let of = |journal: &[Value], id: &str| -> Vec<Value> {
            journal.iter().filter(|record| record["toolCallId"] == json!(id)).cloned().collect()
        };
        for id in ["call_0", "call_1"] {
            prop_assert_eq!(of(&in_order.1, id), of(&journal, id));
        }
        prop_assert_eq!(in_order.1.len(), journal.len());
    }

    #[test]
    fn the_account_reports_the_tokens_the_reply_reports(
        case in case(0),
        reply in reply(),
        input in 0u64..100_000,
        output in 0u64..4_000,
    ) {
        let route = Route::new("openai-codex", "gpt-5.6-luna");
        let fs = file_system(std::slice::from_ref(&case));
        let Start::AskModel(ask) = Reduction::start(&case.result.view(), &context(&route), &fs, None) else {
            return Ok(());
        };
        let usage = Usage { input, output, total_tokens: input + output, ..Usage::default() };
        let answer = answer(reply, &ask.request).map(|text| ReducerReply {
            usage,
            ..ReducerReply::from_text(text, &route)
        });
        let replied = answer.is_ok();
        let done = ask.reduction.finish(answer, TIMESTAMP, None);
        let called = reply != Reply::Unavailable;
        prop_assert_eq!(done.account.model_calls, u64::from(called));
        prop_assert_eq!(done.account.model_input_tokens, if replied { input } else { 0 });
        prop_assert_eq!(done.account.model_output_tokens, if replied { output } else { 0 });
        if replied {
            prop_assert_eq!(&done.journal[0]["kind"], &json!("provider_response"));
            prop_assert_eq!(&done.journal[0]["usage"]["input"], &json!(input));
        }
        // A sum of accounts is the account of the sum.
        let total: StepAccount = [done.account, done.account].into_iter().sum();
        prop_assert_eq!(total.model_input_tokens, 2 * done.account.model_input_tokens);
    }
}

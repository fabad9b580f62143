//! The cache-aware policy: the log the model saw is what the reducer reads, the host's
//! whole output is archived beside it, and a reduction whose call would not pay is skipped
//! with a journaled reason.

use camino::Utf8Path;
use proptest::prelude::*;
use sol_core::savings::PriceTable;
use sol_core::testing::MemoryFileSystem;
use sol_reducer::economics::{EXPECTED_REPLY_TOKENS, Economy, RECEIPT_FRAME_TOKENS, weigh};
use sol_reducer::source::SourceOrigin;
use sol_reducer::step::{AskModel, ReduceContext, Reduction, Start};
use sol_reducer::{ReasonCode, ReducerReply, sha256_hex};

use crate::support::{
    ROOT, TEMP, TIMESTAMP, archive_path, bash, passing_log, passing_receipt, route,
};

const FULL_OUTPUT: &str = "/tmp/pi-bash-7e1f.log";

fn economy(carried_requests: u32) -> Economy {
    Economy {
        prices: PriceTable::default(),
        write_read_ratio: 12.5,
        carried_requests,
    }
}

/// A passing run whose output Pi cut to its tail: the whole log in Pi's full-output file,
/// the tail and Pi's notice inline.
fn truncated_run() -> (String, String, crate::support::OwnedResult) {
    let whole = passing_log(3_000);
    let tail_start = whole.len() - 40_000;
    let tail_start = whole[tail_start..]
        .find('\n')
        .map(|at| tail_start + at + 1)
        .expect("a line break in the tail");
    let tail = &whole[tail_start..];
    let inline = format!(
        "{tail}\n[Showing lines 1801-3001 of 3001 (50.0KB limit). Full output: {FULL_OUTPUT}]"
    );
    let result = bash("cargo test", &inline, false);
    (whole, inline, result)
}

/// Starts a reduction of `result` under the cache-aware policy 30 requests into a session,
/// with `whole` as Pi's full-output file; the reduction must ask the model.
fn ask_cache_aware(
    result: &crate::support::OwnedResult,
    whole: &str,
) -> (MemoryFileSystem, Box<AskModel>) {
    let fs = MemoryFileSystem::new()
        .with_dir(TEMP)
        .with_file(FULL_OUTPUT, whole.to_owned());
    let route = route();
    let context =
        ReduceContext::new(&route, Utf8Path::new(ROOT), TIMESTAMP).with_economy(economy(30));
    match Reduction::start(&result.view(), &context, &fs, None) {
        Start::AskModel(ask) => (fs, ask),
        Start::Done(done) => {
            panic!("a long log 30 requests into a session pays for its call: {done}")
        }
    }
}

#[test]
fn the_reducer_reads_what_the_model_saw_and_archives_the_whole_output_beside_it() {
    let (whole, inline, result) = truncated_run();
    let (fs, ask) = ask_cache_aware(&result, &whole);
    let route = route();
    let source = ask.reduction.source();
    assert_eq!(source.origin(), SourceOrigin::Inline);
    assert_eq!(source.body(), inline);
    assert!(
        ask.request.user_text.len() < whole.len() / 2,
        "the model reads the tail only"
    );
    // Both the log the reducer read and the whole output are archived, byte for byte.
    assert_eq!(
        fs.file(archive_path(&inline)),
        Some(inline.clone().into_bytes())
    );
    assert_eq!(
        fs.file(archive_path(&whole)),
        Some(whole.clone().into_bytes())
    );
    let whole_artifact = source
        .full_output_artifact()
        .expect("the whole output is archived");
    assert_eq!(whole_artifact.path, archive_path(&whole));

    let reply = ReducerReply::from_text(passing_receipt(&inline), &route);
    let done = ask.reduction.finish(Ok(reply), TIMESTAMP, None);
    let receipt = done.receipt_text().expect("a verified receipt");
    assert!(receipt.contains(&format!("source_sha256={}", sha256_hex(inline.as_bytes()))));
    assert!(receipt.contains(&format!("full_output_artifact={}", archive_path(&whole))));
    assert!(receipt.contains(&format!("full_output_bytes={}", whole.len())));
    assert_text_snapshot!(
        "receipt_cache_aware_truncated",
        receipt.replace(&sha256_hex(inline.as_bytes()), "<inline sha256>")
    );
}

#[test]
fn without_the_policy_the_whole_output_is_the_log() {
    let (whole, _, result) = truncated_run();
    let fs = MemoryFileSystem::new()
        .with_dir(TEMP)
        .with_file(FULL_OUTPUT, whole.clone());
    let route = route();
    let context = ReduceContext::new(&route, Utf8Path::new(ROOT), TIMESTAMP);
    let Start::AskModel(ask) = Reduction::start(&result.view(), &context, &fs, None) else {
        panic!("the fixed policy always asks");
    };
    assert_eq!(
        ask.reduction.source().origin(),
        SourceOrigin::FullOutputFile
    );
    assert_eq!(ask.reduction.source().body(), whole);
    assert!(ask.reduction.source().full_output_artifact().is_none());
}

#[test]
fn a_log_in_a_young_session_that_would_not_pay_is_kept_with_its_figures() {
    // About 4,800 tokens: worth its call late in a session, not at its start.
    let log = passing_log(600);
    let result = bash("cargo test", &log, false);
    let fs = MemoryFileSystem::new().with_dir(TEMP);
    let route = route();
    let young = ReduceContext::new(&route, Utf8Path::new(ROOT), TIMESTAMP).with_economy(economy(0));
    let Start::Done(done) = Reduction::start(&result.view(), &young, &fs, None) else {
        panic!("a reduction that would not pay makes no call");
    };
    assert_eq!(done.reason(), Some(ReasonCode::NotEconomic));
    assert_eq!(done.account.model_calls, 0);
    assert_eq!(done.journal_kinds(), ["fallback"]);
    let record = &done.journal[0];
    assert_eq!(record["reason"], "not-economic");
    let figures = &record["economics"];
    assert!(figures["costPicodollars"].as_u64() > figures["savingPicodollars"].as_u64());
    assert_eq!(figures["horizonRequests"], 2);
    assert!(
        fs.paths()
            .iter()
            .all(|path| !path.as_str().starts_with(ROOT)),
        "nothing archived"
    );

    let late = young.with_economy(economy(60));
    assert!(matches!(
        Reduction::start(&result.view(), &late, &fs, None),
        Start::AskModel(_)
    ));
}

/// Starts a reduction of `result` under the cache-aware policy 30 requests into a session,
/// with `whole` as Pi's full-output file; the reduction must end without asking the model.
fn done_cache_aware(
    result: &crate::support::OwnedResult,
    whole: &str,
) -> (MemoryFileSystem, sol_reducer::Done) {
    let fs = MemoryFileSystem::new()
        .with_dir(TEMP)
        .with_file(FULL_OUTPUT, whole.to_owned());
    let route = route();
    let context =
        ReduceContext::new(&route, Utf8Path::new(ROOT), TIMESTAMP).with_economy(economy(30));
    match Reduction::start(&result.view(), &context, &fs, None) {
        Start::Done(done) => (fs, done),
        Start::AskModel(ask) => panic!("the model was asked: {}", ask.request.user_text.len()),
    }
}

fn nothing_archived(fs: &MemoryFileSystem) -> bool {
    fs.paths()
        .iter()
        .all(|path| !path.as_str().starts_with(ROOT))
}

/// A secret only in the part of the output Pi cut from what the model saw blocks the whole
/// reduction: nothing is archived and nothing is sent (issue 25: the tail used to be).
#[test]
fn a_secret_in_the_whole_output_blocks_the_reduction() {
    let (whole, _, result) = truncated_run();
    let whole =
        format!("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n{whole}");
    let (fs, done) = done_cache_aware(&result, &whole);
    assert_eq!(done.reason(), Some(ReasonCode::LikelySecret));
    assert!(nothing_archived(&fs), "nothing archived");
    assert_eq!(done.journal_kinds(), ["fallback"]);
    let record = &done.journal[0];
    assert_eq!(record["secretKind"], "credential-assignment");
    assert_eq!(record["secretLine"], 1);
    assert_eq!(record["detail"], sol_reducer::step::SECRET_IN_WHOLE_OUTPUT);
    assert!(!record.to_string().contains("wJalrXUtnFEMI"));
}

/// A private key whose BEGIN line Pi cut, with its body and END line in the kept tail: the
/// tail alone fires now, and so does the whole output.
#[test]
fn a_private_key_split_by_the_cut_is_never_sent() {
    let (whole, _, _) = truncated_run();
    let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n".repeat(20);
    let whole = format!("-----BEGIN PRIVATE KEY-----\n{body}-----END PRIVATE KEY-----\n{whole}");
    let tail_start = whole.len() - 41_000;
    let tail_start = whole[tail_start..]
        .find('\n')
        .map(|at| tail_start + at + 1)
        .expect("a line");
    let mut inline = whole[tail_start..].to_owned();
    // The key's end is in the tail, its BEGIN line is not.
    let key_end = whole.find("-----END").expect("the END line");
    inline.insert_str(0, &whole[key_end - 200..key_end]);
    let inline = format!(
        "{inline}\n[Showing lines 9-3021 of 3021 (50.0KB limit). Full output: {FULL_OUTPUT}]"
    );
    assert!(!inline.contains("BEGIN PRIVATE KEY"));
    let result = bash("cargo test", &inline, false);
    let (fs, done) = done_cache_aware(&result, &whole);
    assert_eq!(done.reason(), Some(ReasonCode::LikelySecret));
    assert!(nothing_archived(&fs), "nothing archived");
}

/// Under the cache-aware policy a reported success whose whole output names failing tests
/// (in the part cut from what the model saw) is kept as well.
#[test]
fn failing_tests_in_the_whole_output_of_a_success_block_the_reduction() {
    let (whole, _, result) = truncated_run();
    let whole = format!("test ledger::rejects_overdraft ... FAILED\n{whole}");
    let (fs, done) = done_cache_aware(&result, &whole);
    assert_eq!(done.reason(), Some(ReasonCode::SuccessWithFailingTests));
    assert!(nothing_archived(&fs), "nothing archived");
    let detail = done.journal[0]["detail"].as_str().expect("a detail");
    assert!(
        detail.starts_with("in the host's whole output: "),
        "{detail}"
    );
    assert!(detail.contains("`ledger::rejects_overdraft`"), "{detail}");
}

fn economies() -> impl Strategy<Value = Economy> {
    (
        0.0f64..20.0,
        0.0f64..2.0,
        0.0f64..20.0,
        0.0f64..100.0,
        0u32..500,
    )
        .prop_map(
            |(input, cache_read, ratio, output, carried_requests)| Economy {
                prices: PriceTable {
                    input,
                    cache_read,
                    cache_write: cache_read * ratio,
                    output,
                },
                write_read_ratio: ratio,
                carried_requests,
            },
        )
}

proptest! {
    #[test]
    fn the_verdict_is_deterministic_and_its_figures_sound(
        result_tokens in 0u64..400_000,
        extra in 0u64..2_000,
        economy in economies(),
    ) {
        let verdict = weigh(result_tokens, result_tokens + extra, economy);
        prop_assert_eq!(verdict, weigh(result_tokens, result_tokens + extra, economy));
        prop_assert_eq!(
            verdict.removed_tokens,
            result_tokens.saturating_sub(EXPECTED_REPLY_TOKENS + RECEIPT_FRAME_TOKENS)
        );
        prop_assert!(verdict.horizon_requests >= 2);
        // A reduction that pays removes something and saves at least its call.
        if verdict.pays() {
            prop_assert!(verdict.removed_tokens > 0);
            prop_assert!(verdict.net_picodollars() >= 0);
        }
    }

    #[test]
    fn more_requests_ahead_or_a_dearer_cache_never_turn_a_paying_reduction_down(
        result_tokens in 0u64..400_000,
        economy in economies(),
        more_requests in 0u32..500,
        higher_ratio in 0.0f64..20.0,
    ) {
        let call = result_tokens + 300;
        let verdict = weigh(result_tokens, call, economy);
        let older = weigh(result_tokens, call, Economy {
            carried_requests: economy.carried_requests + more_requests,
            ..economy
        });
        let dearer = weigh(result_tokens, call, Economy {
            write_read_ratio: economy.write_read_ratio + higher_ratio,
            ..economy
        });
        prop_assert!(older.saving_picodollars >= verdict.saving_picodollars);
        prop_assert!(dearer.saving_picodollars >= verdict.saving_picodollars);
        prop_assert_eq!(older.cost_picodollars, verdict.cost_picodollars);
        if verdict.pays() {
            prop_assert!(older.pays() && dearer.pays());
        }
    }

    #[test]
    fn a_larger_log_saves_at_least_as_much(
        result_tokens in 0u64..400_000,
        more in 0u64..100_000,
        economy in economies(),
    ) {
        let small = weigh(result_tokens, result_tokens, economy);
        let large = weigh(result_tokens + more, result_tokens, economy);
        prop_assert!(large.saving_picodollars >= small.saving_picodollars);
    }
}

//! Snapshots of every text a model or a person reads, and of the records hosts store.

use serde_json::{Value, json};
use sol_core::ModelError;
use sol_reducer::archive::store_root;
use sol_reducer::journal::{JournalHeader, fallback_record, run_id};
use sol_reducer::model::{ReducerReply, model_request};
use sol_reducer::notice::{savings_notice, savings_status};
use sol_reducer::prompt::SYSTEM_PROMPT;
use sol_reducer::render::apply_reply;
use sol_reducer::secret::SecretKind;
use sol_reducer::source::{FullOutput, prepare_source};
use sol_reducer::{ReasonCode, ReceiptCache, select_candidate, sha256_hex};

use crate::support::{
    Harness, ROOT, TEMP, TIMESTAMP, bash, failing_log, failing_receipt, fixture, receipt, route,
};

#[test]
fn system_prompt() {
    assert_text_snapshot!("system_prompt", SYSTEM_PROMPT);
}

#[test]
fn user_text_of_the_pytest_fixture() {
    let fixture = fixture("pytest-failure");
    let candidate = select_candidate(&fixture.result.view()).expect("a candidate");
    let source = prepare_source(candidate, FullOutput::NotRead).expect("a source");
    let request = model_request(&source, &route());
    assert_eq!(request.max_output_tokens, 2048);
    assert_eq!(request.timeout, std::time::Duration::from_secs(90));
    assert_text_snapshot!("user_text_pytest", request.user_text);
}

fn reduced_texts(name: &str) -> (Vec<String>, Value, Vec<Value>) {
    let fixture = fixture(name);
    let harness = Harness::new().replying(fixture.receipt.clone());
    let replacement = harness
        .run(&fixture.result)
        .replacement()
        .cloned()
        .expect("reduced");
    let texts = replacement
        .content
        .iter()
        .map(|block| block.as_text().expect("text").to_owned())
        .collect();
    (texts, replacement.details, harness.journal())
}

#[test]
fn receipt_texts() {
    let (cargo, _, _) = reduced_texts("cargo-test-failure");
    let (npm, _, _) = reduced_texts("npm-test-pass");
    assert_text_snapshot!("receipt_cargo_test_failure", cargo.join("\n"));
    assert_text_snapshot!("receipt_npm_test_pass", npm.join("\n"));
}

#[test]
fn fused_projection() {
    let (blocks, details, _) = reduced_texts("tsc-errors-fused");
    assert_text_snapshot!(
        "fused_projection_tsc",
        blocks.join("\n---- next content block ----\n")
    );
    assert_json_value_snapshot!("details_tsc", details);
}

#[test]
fn journal_of_an_applied_receipt() {
    let (_, _, journal) = reduced_texts("cargo-test-failure");
    assert_json_value_snapshot!("journal_applied", journal);
}

#[test]
fn journal_of_a_cache_hit() {
    let fixture = fixture("npm-test-pass");
    let harness = Harness::new().replying(fixture.receipt.clone());
    let mut cache = ReceiptCache::new();
    harness.run_with(&fixture.result, Some(&mut cache));
    harness.run_with(&fixture.result, Some(&mut cache));
    let journal: Vec<Value> = harness.journal().into_iter().skip(3).collect();
    assert_json_value_snapshot!("journal_cache_hit", journal);
}

/// The last journal record of a run that falls back.
fn last_record(harness: &Harness, result: &crate::support::OwnedResult) -> Value {
    let decision = harness.run(result);
    assert!(decision.replacement().is_none(), "{decision:?}");
    harness.journal().pop().expect("a fallback record")
}

#[test]
fn journal_fallback_records() {
    let log = failing_log(150);
    let sha = sha256_hex(log.as_bytes());
    let failing = bash(
        "cargo test",
        &format!("{log}\n\nCommand exited with code 101"),
        true,
    );
    let mut records = Vec::new();

    let secret = format!("{log}-----BEGIN OPENSSH PRIVATE KEY-----\n");
    records.push(last_record(
        &Harness::new(),
        &bash("cargo test", &secret, true),
    ));
    let mut mismatch = failing.clone();
    mismatch.exit_code = Some(0);
    records.push(last_record(&Harness::new(), &mismatch));
    // `cargo test | tail` exits 0 and its log names a failing test.
    let mut piped = bash("cargo test 2>&1 | tail -n 1000", &log, false);
    piped.exit_code = Some(0);
    records.push(last_record(&Harness::new(), &piped));
    records.push(last_record(
        &Harness::new(),
        &bash("make", &"x".repeat(600_001), false),
    ));
    let preview = format!("{log}[Full output: {TEMP}/pi-bash-gone.log]");
    records.push(last_record(
        &Harness::new(),
        &bash("cargo test", &preview, true),
    ));
    let blocked = sol_core::testing::MemoryFileSystem::new()
        .with_file(format!("{ROOT}/evidence-preserving-reducer"), "a file");
    records.push(last_record(&Harness::with_fs(blocked), &failing));
    for error in [
        ModelError::Unavailable {
            provider: "openai-codex".into(),
            model: "gpt-5.6-luna".into(),
        },
        ModelError::TimedOut {
            after: sol_reducer::MODEL_TIMEOUT,
        },
        ModelError::Aborted,
        ModelError::Failed {
            message: "No API key found for openai-codex".into(),
        },
    ] {
        let harness = Harness::new();
        harness.model.push(Err(error));
        records.push(last_record(&harness, &failing));
    }
    for reply in [
        "The build failed.".to_owned(),
        json!({"padding": "x".repeat(70_000)}).to_string(),
        receipt(&sha, "success", &[]),
        receipt(
            &sha,
            "failure",
            &[("failure", "test parser::rejects_empty_input ... ok")],
        ),
        receipt(&sha, "failure", &[("summary", "running 151 tests")]),
    ] {
        records.push(last_record(&Harness::new().replying(reply), &failing));
    }

    // Under the cache-aware policy, a log too small to pay for its call this early.
    let young = Harness::new().with_economy(sol_reducer::economics::Economy {
        prices: sol_core::savings::PriceTable::default(),
        write_read_ratio: 12.5,
        carried_requests: 0,
    });
    records.push(last_record(&young, &failing));

    // A reply that stopped with an error, as a Pi host reports it.
    let candidate = select_candidate(&failing.view()).expect("a candidate");
    let source = prepare_source(candidate, FullOutput::NotRead).expect("a source");
    let fs = sol_core::testing::MemoryFileSystem::new();
    let archived = source
        .archive(&fs, &store_root(camino::Utf8Path::new(ROOT)))
        .expect("archived");
    let mut reply = ReducerReply::from_text(failing_receipt(&log), &route());
    reply.stop_reason = Some("error".into());
    reply.error_message = Some("503 upstream overloaded".into());
    reply.usage = sol_reducer::Usage {
        input: 1850,
        output: 12,
        cache_read: 0,
        cache_write: 0,
        total_tokens: 1862,
    };
    let fallback = apply_reply(&source, &archived, &reply).expect_err("an error stop");
    let run = run_id(camino::Utf8Path::new(ROOT));
    let header = JournalHeader {
        run_id: &run,
        timestamp: TIMESTAMP,
    };
    records.push(fallback_record(&header, "call_bash", &fallback));

    let mut reasons: Vec<&str> = records
        .iter()
        .map(|r| r["reason"].as_str().expect("reason"))
        .collect();
    reasons.push("receipt-not-smaller");
    let journaled: Vec<&str> = ReasonCode::ALL
        .iter()
        .filter(|reason| reason.is_journaled())
        .map(|reason| reason.code())
        .collect();
    // Every journaled reason is covered here or, for receipt-not-smaller, in adversarial.rs.
    let mut sorted = reasons.clone();
    sorted.sort_unstable();
    let mut expected = journaled.clone();
    expected.sort_unstable();
    assert_eq!(sorted, expected);
    assert_json_value_snapshot!("journal_fallbacks", records);
}

#[test]
fn reason_descriptions() {
    let lines: Vec<String> = ReasonCode::ALL
        .iter()
        .map(|reason| {
            let journaled = if reason.is_journaled() {
                "journaled"
            } else {
                "silent"
            };
            format!("{} [{journaled}]: {}", reason.code(), reason.description())
        })
        .collect();
    assert_text_snapshot!("reason_descriptions", lines.join("\n"));
    for reason in ReasonCode::ALL {
        assert_eq!(ReasonCode::from_code(reason.code()), Some(reason));
        assert_eq!(reason.to_string(), reason.code());
        let json = serde_json::to_value(reason).expect("serialize");
        assert_eq!(json, json!(reason.code()));
    }
}

#[test]
fn secret_kind_codes() {
    let lines: Vec<&str> = SecretKind::ALL.iter().map(|kind| kind.code()).collect();
    assert_text_snapshot!("secret_kinds", lines.join("\n"));
}

#[test]
fn notices() {
    let lines: Vec<String> = [512u64, 4_000, 20_480, 1_572_864]
        .into_iter()
        .map(|bytes| {
            format!(
                "{}\n[status] {}",
                savings_notice(bytes),
                savings_status(bytes)
            )
        })
        .collect();
    assert_text_snapshot!("notices", lines.join("\n---\n"));
}

/// The record of a secret found only in the part of the host's whole output that the
/// model did not see, under the cache-aware policy.
#[test]
fn journal_of_a_secret_in_the_whole_output() {
    let whole = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}",
        crate::support::passing_log(3_000)
    );
    let tail = &whole[whole.len() - 40_000..];
    let tail = &tail[tail.find('\n').expect("a line") + 1..];
    let full = format!("{TEMP}/pi-bash-5a5a.log");
    let inline =
        format!("{tail}\n[Showing lines 1801-3002 of 3002 (50.0KB limit). Full output: {full}]");
    let fs = sol_core::testing::MemoryFileSystem::new()
        .with_dir(TEMP)
        .with_file(full, whole);
    let harness = Harness::with_fs(fs).with_economy(sol_reducer::economics::Economy {
        prices: sol_core::savings::PriceTable::default(),
        write_read_ratio: 12.5,
        carried_requests: 30,
    });
    let record = last_record(&harness, &bash("cargo test", &inline, false));
    assert_json_value_snapshot!("journal_secret_in_whole_output", record);
}

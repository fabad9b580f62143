//! The receipt text, the projection into the result, `details`, and the savings texts.

use camino::Utf8Path;
use serde_json::{Value, json};
use sol_core::testing::MemoryFileSystem;
use sol_reducer::archive::{ArchivedLog, store_root};
use sol_reducer::model::{ReducerReply, Usage};
use sol_reducer::notice::{format_bytes, savings_notice, savings_status, savings_text};
use sol_reducer::render::{
    AUTHORITY_LINE, READBACK_LINE, ReducerDetails, apply_reply, details_with_reducer,
};
use sol_reducer::source::{FullOutput, prepare_source};
use sol_reducer::{DETAILS_KEY, RECEIPT_PREFIX, Replacement, Source, select_candidate, sha256_hex};

use crate::support::{
    OwnedResult, ROOT, bash, failing_log, failing_receipt, fused, passing_log, passing_receipt,
    route,
};

fn source_of(result: &OwnedResult) -> (Source, ArchivedLog) {
    let source = prepare_source(
        select_candidate(&result.view()).expect("a candidate"),
        FullOutput::NotRead,
    )
    .expect("a source");
    let fs = MemoryFileSystem::new();
    let archived = source
        .archive(&fs, &store_root(Utf8Path::new(ROOT)))
        .expect("archived");
    (source, archived)
}

fn reply(text: String) -> ReducerReply {
    let mut reply = ReducerReply::from_text(text, &route());
    reply.usage = Usage {
        input: 1800,
        output: 140,
        cache_read: 0,
        cache_write: 0,
        total_tokens: 1940,
    };
    reply
}

fn reduce(result: &OwnedResult, reply_text: String) -> (Source, Replacement) {
    let (source, archived) = source_of(result);
    let replacement = apply_reply(&source, &archived, &reply(reply_text)).expect("applied");
    (source, replacement)
}

#[test]
fn the_receipt_text_has_the_fixed_layout() {
    let log = failing_log(150);
    let result = bash(
        "cargo test",
        &format!("{log}\n\nCommand exited with code 101"),
        true,
    );
    let (source, replacement) = reduce(&result, failing_receipt(&log));
    let text = &replacement.receipt_text;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], RECEIPT_PREFIX);
    assert!(text.starts_with("sol_pi_evidence_receipt_v1\n"));
    assert_eq!(lines[1], "status=failure");
    assert_eq!(lines[2], "uncertain=false");
    assert_eq!(
        lines[3],
        format!("command_sha256={}", sha256_hex(b"cargo test"))
    );
    assert_eq!(lines[4], format!("source_sha256={}", source.sha256()));
    assert_eq!(lines[5], format!("source_bytes={}", log.len()));
    assert_eq!(lines[6], format!("source_lines={}", source.lines()));
    assert!(lines[7].starts_with(&format!(
        "source_artifact={ROOT}/evidence-preserving-reducer/objects/"
    )));
    assert_eq!(lines[8], "reducer_provider=openai-codex");
    assert_eq!(lines[9], "reducer_model=gpt-5.6-luna");
    assert_eq!(lines[10], "reducer_total_tokens=1940");
    assert_eq!(lines[11], "verified_evidence:");
    assert!(lines[12].starts_with("- kind=failure line=152 quote_sha256="));
    assert!(lines[12].ends_with(r#" quote="test parser::rejects_empty_input ... FAILED""#));
    assert_eq!(lines[15], AUTHORITY_LINE);
    assert!(AUTHORITY_LINE.starts_with("authority=Sol retains diagnosis"));
    assert_eq!(lines[16], READBACK_LINE);
    assert_eq!(lines.len(), 17);
}

#[test]
fn a_receipt_without_evidence_says_none() {
    let log = passing_log(150);
    let reply_text = json!({
        "schema": "sol-pi-evidence-receipt/1", "source_sha256": sha256_hex(log.as_bytes()),
        "status": "success", "uncertain": true, "evidence": [],
    })
    .to_string();
    let (_, replacement) = reduce(&bash("cargo test", &log, false), reply_text);
    assert!(replacement.receipt_text.contains("uncertain=true\n"));
    assert!(
        replacement
            .receipt_text
            .contains("verified_evidence:\n- none\nauthority=")
    );
}

#[test]
fn multi_line_quotes_stay_on_one_receipt_line() {
    let log = passing_log(150);
    let quote = "test module_000::behaves ... ok\ntest module_001::behaves ... ok";
    let reply_text = json!({
        "schema": "sol-pi-evidence-receipt/1", "source_sha256": sha256_hex(log.as_bytes()),
        "status": "success", "uncertain": false, "evidence": [{"kind": "target", "quote": quote}],
    })
    .to_string();
    let (_, replacement) = reduce(&bash("cargo test", &log, false), reply_text);
    assert!(
        replacement.receipt_text.contains(
            r#"quote="test module_000::behaves ... ok\ntest module_001::behaves ... ok""#
        )
    );
}

#[test]
fn a_bash_result_becomes_one_block_with_the_status_line_kept() {
    let log = failing_log(150);
    let result = bash(
        "cargo test",
        &format!("{log}\n\nCommand exited with code 101"),
        true,
    );
    let (_, replacement) = reduce(&result, failing_receipt(&log));
    assert_eq!(replacement.content.len(), 1);
    let text = replacement.content[0].as_text().expect("text");
    assert_eq!(
        text,
        format!(
            "{}\n\nCommand exited with code 101",
            replacement.receipt_text
        )
    );
    assert!(replacement.is_error);
    assert!(!text.contains("test module_007::behaves"));
}

#[test]
fn a_timeout_line_is_kept_too() {
    let log = failing_log(150);
    let result = bash(
        "make test",
        &format!("{log}\n\nCommand timed out after 1 seconds"),
        true,
    );
    let (_, replacement) = reduce(&result, failing_receipt(&log));
    let text = replacement.content[0].as_text().expect("text");
    assert!(text.ends_with("\n\nCommand timed out after 1 seconds"));
}

#[test]
fn a_fused_result_keeps_everything_but_the_command_output() {
    for (marker, is_error, log) in [
        ("[then_run:succeeded]", false, passing_log(150)),
        ("[then_run:failed]", true, failing_log(150)),
    ] {
        let status = if is_error {
            "\n\nCommand exited with code 101"
        } else {
            ""
        };
        let block = format!("{marker}\n{log}{status}");
        let result = fused(
            "write",
            "cargo test",
            &["Successfully wrote 2048 bytes to src/lib.rs", &block],
            is_error,
        );
        let receipt = if is_error {
            failing_receipt(&log)
        } else {
            passing_receipt(&log)
        };
        let (_, replacement) = reduce(&result, receipt);
        assert_eq!(replacement.content.len(), 2);
        assert_eq!(replacement.content[0], result.content[0]);
        let projected = replacement.content[1].as_text().expect("text");
        let expected_status = if is_error {
            "\n\nCommand exited with code 101"
        } else {
            ""
        };
        assert_eq!(
            projected,
            format!("{marker}\n{}{expected_status}", replacement.receipt_text)
        );
        assert_eq!(replacement.is_error, is_error);
        assert_eq!(replacement.details["patch"], json!("@@ -1 +1 @@\n-a\n+b\n"));
        assert_eq!(replacement.details["diff"], json!("-1 a\n+1 b"));
        assert!(replacement.details[DETAILS_KEY].is_object());
    }
}

#[test]
fn a_single_block_fused_failure_keeps_the_mutation_text_and_separator() {
    let log = failing_log(150);
    let text = format!(
        "Successfully wrote 2048 bytes to src/lib.rs\n\n[then_run:failed]\n\n{log}\n\nCommand exited with code 101"
    );
    let result = fused("write", "cargo test", &[&text], true);
    let (_, replacement) = reduce(&result, failing_receipt(&log));
    assert_eq!(
        replacement.content[0].as_text().expect("text"),
        format!(
            "Successfully wrote 2048 bytes to src/lib.rs\n\n[then_run:failed]\n\n{}\n\nCommand exited with code 101",
            replacement.receipt_text
        )
    );
}

#[test]
fn details_keep_the_original_object_and_add_the_reducer_summary() {
    let summary = ReducerDetails {
        schema: "sol-pi-evidence-preserving-reducer/1".into(),
        source_sha256: "a".repeat(64),
        source_bytes: 9000,
        receipt_sha256: "b".repeat(64),
        receipt_bytes: 1200,
        evidence_count: 3,
        uncertain: false,
    };
    let original =
        json!({"truncation": {"truncated": true}, "fullOutputPath": "/tmp/pi-bash-1.log"});
    let merged = details_with_reducer(Some(&original), &summary);
    let keys: Vec<&String> = merged.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        ["truncation", "fullOutputPath", "evidencePreservingReducer"]
    );
    for other in [
        None,
        Some(json!(null)),
        Some(json!([1, 2])),
        Some(json!("text")),
    ] {
        let merged = details_with_reducer(other.as_ref(), &summary);
        let keys: Vec<&String> = merged.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["evidencePreservingReducer"]);
    }
    let value = serde_json::to_value(&summary).expect("serialize");
    let keys: Vec<&String> = value.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        [
            "schema",
            "sourceSha256",
            "sourceBytes",
            "receiptSha256",
            "receiptBytes",
            "evidenceCount",
            "uncertain"
        ]
    );
}

#[test]
fn the_summary_matches_the_receipt() {
    let log = failing_log(150);
    let result = bash("cargo test", &log, true);
    let (source, replacement) = reduce(&result, failing_receipt(&log));
    let summary = &replacement.summary;
    assert_eq!(summary.source_sha256, source.sha256());
    assert_eq!(summary.source_bytes, log.len() as u64);
    assert_eq!(
        summary.receipt_sha256,
        sha256_hex(replacement.receipt_text.as_bytes())
    );
    assert_eq!(summary.receipt_bytes, replacement.receipt_text.len() as u64);
    assert_eq!(summary.evidence_count, 3);
    assert_eq!(
        replacement.details[DETAILS_KEY],
        serde_json::to_value(summary).expect("json")
    );
    assert_eq!(
        replacement.bytes_removed(),
        summary.source_bytes - summary.receipt_bytes
    );
    assert_eq!(
        replacement.notice(),
        savings_notice(replacement.bytes_removed())
    );
}

#[test]
fn a_reply_that_did_not_finish_is_a_response_error() {
    let log = failing_log(150);
    let (source, archived) = source_of(&bash("cargo test", &log, true));
    let mut bad = reply(failing_receipt(&log));
    bad.stop_reason = Some("error".into());
    bad.error_message = Some("upstream overloaded".into());
    let fallback = apply_reply(&source, &archived, &bad).expect_err("not finished");
    assert_eq!(fallback.reason.code(), "model-response-error");
    assert_eq!(fallback.facts.stop_reason.as_deref(), Some("error"));
    assert_eq!(
        fallback.facts.error_message.as_deref(),
        Some("upstream overloaded")
    );
    for finished in ["stop", "length"] {
        let mut good = reply(failing_receipt(&log));
        good.stop_reason = Some(finished.into());
        assert!(apply_reply(&source, &archived, &good).is_ok(), "{finished}");
    }
    let mut aborted = reply(failing_receipt(&log));
    aborted.stop_reason = Some("aborted".into());
    assert!(apply_reply(&source, &archived, &aborted).is_err());
}

#[test]
fn bytes_are_formatted_with_one_decimal() {
    let cases = [
        (0, "0 B"),
        (1, "1 B"),
        (1023, "1023 B"),
        (1024, "1 KiB"),
        (1075, "1 KiB"),
        (1076, "1.1 KiB"),
        (1536, "1.5 KiB"),
        (10_240, "10 KiB"),
        (1_048_524, "1023.9 KiB"),
        (1_048_575, "1024 KiB"),
        (1_048_576, "1 MiB"),
        (1_572_864, "1.5 MiB"),
        (5 * 1024 * 1024 * 1024, "5120 MiB"),
        (u64::MAX, "17592186044416 MiB"),
    ];
    for (bytes, text) in cases {
        assert_eq!(format_bytes(bytes), text, "{bytes}");
    }
    assert_eq!(savings_text(1536), "1.5 KiB removed from future prompts");
    assert_eq!(
        savings_notice(1536),
        "⚡ SoL-Pi · Evidence Reducer\nMoney saved · 1.5 KiB removed from future prompts"
    );
    assert_eq!(
        savings_status(1536),
        "⚡ Evidence Reducer · 1.5 KiB removed from future prompts"
    );
}

#[test]
fn the_details_key_and_schema_are_fixed() {
    let log = failing_log(150);
    let (_, replacement) = reduce(&bash("cargo test", &log, true), failing_receipt(&log));
    assert_eq!(
        replacement.details[DETAILS_KEY]["schema"],
        Value::from("sol-pi-evidence-preserving-reducer/1")
    );
}

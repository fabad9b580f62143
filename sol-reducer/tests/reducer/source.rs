//! The exact log: size bounds, the exit-state check, the secret gate and the status line.

use serde_json::json;
use sol_reducer::exit::ExitSignal;
use sol_reducer::pi::select_candidate;
use sol_reducer::secret::SecretKind;
use sol_reducer::source::{FullOutput, SourceOrigin, prepare_source};
use sol_reducer::{Fallback, MAX_SOURCE_CHARS, MIN_SOURCE_BYTES, ReasonCode, Source, sha256_hex};

use crate::support::{OwnedResult, bash, failing_log, fused, passing_log};

fn prepare(result: &OwnedResult, full_output: FullOutput) -> Result<Source, Fallback> {
    prepare_source(
        select_candidate(&result.view()).expect("a candidate"),
        full_output,
    )
}

fn reason(result: &OwnedResult) -> ReasonCode {
    prepare(result, FullOutput::NotRead)
        .expect_err("a fallback")
        .reason
}

#[test]
fn a_failed_bash_log_loses_its_status_line_and_keeps_it_for_later() {
    let log = failing_log(150);
    let result = bash(
        "cargo test",
        &format!("{log}\n\nCommand exited with code 101"),
        true,
    );
    let source = prepare(&result, FullOutput::NotRead).expect("a source");
    assert_eq!(source.body(), log);
    assert_eq!(source.status_line(), Some("Command exited with code 101"));
    assert_eq!(source.sha256(), sha256_hex(log.as_bytes()));
    assert_eq!(source.command_sha256(), sha256_hex(b"cargo test"));
    assert_eq!(source.bytes(), log.len() as u64);
    assert_eq!(source.lines(), log.lines().count() as u64);
    assert_eq!(source.origin(), SourceOrigin::Inline);
    assert_eq!(source.expected_status().as_str(), "failure");
}

#[test]
fn a_successful_result_keeps_status_looking_text_in_its_log() {
    let log = format!("{}\n\nCommand exited with code 0", passing_log(150));
    let result = bash("cargo test", &log, false);
    let source = prepare(&result, FullOutput::NotRead).expect("a source");
    assert_eq!(source.body(), log);
    assert_eq!(source.status_line(), None);
}

#[test]
fn logs_under_4096_bytes_are_skipped_silently() {
    let exact = "x".repeat(MIN_SOURCE_BYTES - 1) + "\n";
    assert_eq!(exact.len(), MIN_SOURCE_BYTES);
    assert!(prepare(&bash("make", &exact, false), FullOutput::NotRead).is_ok());
    let short = "x".repeat(MIN_SOURCE_BYTES - 1);
    let fallback = prepare(&bash("make", &short, false), FullOutput::NotRead).expect_err("short");
    assert_eq!(fallback.reason, ReasonCode::SourceUnderMinBytes);
    assert!(!fallback.reason.is_journaled());
    assert_eq!(fallback.facts.source_bytes, Some(4095));
    assert_eq!(fallback.facts.min_bytes, Some(4096));
}

#[test]
fn logs_of_exactly_600000_characters_are_accepted_and_one_more_is_not() {
    // UTF-16 units, as in JavaScript: an emoji counts twice, a CJK character once.
    let mixed: String = "ab中".repeat(MAX_SOURCE_CHARS / 3);
    let cjk: String = "中".repeat(MAX_SOURCE_CHARS);
    let emoji: String = "😀".repeat(MAX_SOURCE_CHARS / 2);
    for (name, log) in [("mixed", mixed), ("cjk", cjk), ("emoji", emoji)] {
        let source = prepare(&bash("make", &log, false), FullOutput::NotRead)
            .unwrap_or_else(|fallback| panic!("{name}: {fallback:?}"));
        assert_eq!(source.body(), log, "{name}");
        let over = if name == "emoji" {
            format!("{log}x")
        } else {
            format!("{log}中")
        };
        let fallback = prepare(&bash("make", &over, false), FullOutput::NotRead)
            .expect_err("one character over");
        assert_eq!(fallback.reason, ReasonCode::SourceOverMaxChars, "{name}");
        assert_eq!(
            fallback.facts.source_chars,
            Some(MAX_SOURCE_CHARS as u64 + 1)
        );
        assert_eq!(fallback.facts.max_chars, Some(MAX_SOURCE_CHARS as u64));
    }
}

#[test]
fn a_full_output_file_replaces_the_truncated_preview() {
    let full = failing_log(400);
    let preview = "…last lines…\n\n[Showing lines 300-410 of 410. Full output: /tmp/pi-bash-1.log]\n\nCommand exited with code 101";
    let result = bash("cargo test", preview, true);
    let source = prepare(&result, FullOutput::Read(full.clone())).expect("a source");
    assert_eq!(source.body(), full);
    assert_eq!(source.origin(), SourceOrigin::FullOutputFile);
    // The status line comes from the inline text: Pi's file does not have it.
    assert_eq!(source.status_line(), Some("Command exited with code 101"));
}

#[test]
fn an_unreadable_full_output_file_rejects_the_preview() {
    let result = bash("make", &failing_log(400), true);
    let fallback = prepare(
        &result,
        FullOutput::Unavailable("file is larger than the limit".into()),
    )
    .expect_err("unavailable");
    assert_eq!(fallback.reason, ReasonCode::SourceUnavailableOrOverMaxChars);
    assert_eq!(fallback.facts.max_chars, Some(600_000));
}

#[test]
fn a_signal_that_contradicts_is_error_is_a_mismatch() {
    let log = failing_log(150);
    // Pi 1.x: structured exit code 0, but flagged as an error.
    let mut result = bash("cargo test", &log, true);
    result.exit_code = Some(0);
    let fallback = prepare(&result, FullOutput::NotRead).expect_err("mismatch");
    assert_eq!(fallback.reason, ReasonCode::ExitStateMismatch);
    assert_eq!(fallback.facts.exit_signal, Some(ExitSignal::Succeeded));
    assert_eq!(fallback.facts.exit_code, Some(0));
    assert_eq!(fallback.facts.is_error, Some(true));
    // Pi 1.x: a non-zero structured exit code on a result not flagged as an error.
    let mut result = bash("cargo test", &log, false);
    result.exit_code = Some(101);
    assert_eq!(reason(&result), ReasonCode::ExitStateMismatch);
    // Pi 0.84.2: a trailing status line on a result not flagged as an error.
    let text = format!("{log}\n\nCommand exited with code 101");
    assert_eq!(
        reason(&bash("cargo test", &text, false)),
        ReasonCode::ExitStateMismatch
    );
    // A passing then_run whose own last line reads like a failed exit.
    let block = format!("[then_run:succeeded]\n{log}Command exited with code 3");
    let write = fused("write", "make", &["Successfully wrote to a", &block], false);
    assert_eq!(reason(&write), ReasonCode::ExitStateMismatch);
    // A failed marker on a result not flagged as an error, and the reverse.
    let block = format!("[then_run:failed]\n{log}");
    assert_eq!(
        reason(&fused("write", "make", &["ok", &block], false)),
        ReasonCode::ExitStateMismatch
    );
    let block = format!("[then_run:succeeded]\n{log}");
    assert_eq!(
        reason(&fused("write", "make", &["ok", &block], true)),
        ReasonCode::ExitStateMismatch
    );
}

#[test]
fn agreeing_signals_pass() {
    let log = failing_log(150);
    let mut result = bash("cargo test", &log, true);
    result.exit_code = Some(101);
    assert!(prepare(&result, FullOutput::NotRead).is_ok());
    // No signal at all: the error flag decides.
    assert!(prepare(&bash("cargo test", &log, true), FullOutput::NotRead).is_ok());
    let block = format!(
        "[then_run:succeeded]\n{}Command exited with code 0",
        passing_log(150)
    );
    assert!(
        prepare(
            &fused("write", "make", &["ok", &block], false),
            FullOutput::NotRead
        )
        .is_ok()
    );
}

#[test]
fn a_log_with_a_likely_secret_is_not_sent() {
    let log = format!(
        "{}DATABASE_URL=postgres://app:hunter2@db/app\n",
        passing_log(150)
    );
    let fallback = prepare(&bash("make", &log, false), FullOutput::NotRead).expect_err("secret");
    assert_eq!(fallback.reason, ReasonCode::LikelySecret);
    assert_eq!(fallback.facts.secret_kind, Some(SecretKind::UrlCredentials));
    assert_eq!(fallback.facts.secret_line, Some(154));
    let value = serde_json::to_value(&fallback.facts).expect("facts serialize");
    assert!(!value.to_string().contains("hunter2"));
    assert_eq!(value["secretKind"], json!("url-credentials"));
}

#[test]
fn a_fused_log_is_only_the_command_output() {
    let log = failing_log(150);
    let block = format!("[then_run:failed]\n{log}\n\nCommand exited with code 101");
    let result = fused(
        "edit",
        "cargo test",
        &["Successfully replaced text in src/lib.rs.", &block],
        true,
    );
    let source = prepare(&result, FullOutput::NotRead).expect("a source");
    assert_eq!(source.body(), log);
    assert_eq!(source.status_line(), Some("Command exited with code 101"));
}

//! The driver end to end over the in-memory ports.

use camino::Utf8Path;
use serde_json::json;
use sol_core::testing::{MemoryFileSystem, MemorySessionStore};
use sol_core::{FileSystem, FsErrorKind};
use sol_reducer::driver::{Decision, Ports, ReduceContext, reduce};
use sol_reducer::render::READBACK_LINE;
use sol_reducer::{MAX_FULL_OUTPUT_BYTES, ReasonCode, sha256_hex};

use crate::support::{
    Harness, ROOT, TEMP, TIMESTAMP, archive_path, bash, failing_log, failing_receipt, fused,
    passing_log, passing_receipt, reason, route,
};

#[test]
fn a_failing_bash_log_is_replaced_by_its_receipt() {
    let log = failing_log(150);
    let harness = Harness::new().replying(failing_receipt(&log));
    let mut result = bash(
        "cargo test",
        &format!("{log}\n\nCommand exited with code 101"),
        true,
    );
    result.exit_code = Some(101);
    let decision = harness.run(&result);
    let replacement = decision.replacement().expect("reduced");
    let text = replacement.content[0].as_text().expect("text");
    assert!(text.starts_with("sol_pi_evidence_receipt_v1\nstatus=failure\n"));
    assert!(text.contains(" line=152 "));
    assert!(text.contains("reducer_provider=openai-codex\nreducer_model=gpt-5.6-luna\n"));
    assert!(text.contains("authority=Sol retains diagnosis"));
    assert!(text.ends_with("\n\nCommand exited with code 101"));
    assert!(replacement.receipt_text.len() < log.len());
    assert!(replacement.is_error);

    // The request: the configured route, the framing, the limits.
    let requests = harness.model.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.provider.as_str(), request.model.as_str()),
        ("openai-codex", "gpt-5.6-luna")
    );
    assert!(
        request
            .system_prompt
            .contains("lossless test/build output reducer")
    );
    assert!(request.user_text.contains("<untrusted_log>\n"));
    assert_eq!(request.max_output_tokens, 2048);
    assert_eq!(request.timeout, std::time::Duration::from_secs(90));

    // The archive holds the log, private, and the journal tells the story.
    let path = archive_path(&log);
    assert_eq!(harness.fs.file(&path), Some(log.as_bytes().to_vec()));
    assert_eq!(harness.fs.mode(&path), Some(0o600));
    assert_eq!(
        harness.kinds(),
        ["candidate", "provider_response", "applied"]
    );
    let journal = harness.journal();
    assert!(
        journal
            .iter()
            .all(|record| record["schema"] == json!("sol-pi-evidence-preserving-reducer/1"))
    );
    assert!(
        journal
            .iter()
            .all(|record| record["timestamp"] == json!(TIMESTAMP))
    );
    let store = format!("{ROOT}/evidence-preserving-reducer/");
    assert!(
        journal[0]["sourcePath"]
            .as_str()
            .expect("path")
            .starts_with(&store)
    );
    assert_eq!(journal[0]["sourcePath"], json!(path.as_str()));
    assert_eq!(journal[2]["evidenceCount"], json!(3));
    assert_eq!(
        replacement.notice(),
        format!(
            "⚡ SoL-Pi · Evidence Reducer\nMoney saved · {} removed from future prompts",
            sol_reducer::notice::format_bytes(replacement.bytes_removed())
        )
    );
}

#[test]
fn the_archive_is_written_before_the_model_is_called() {
    // The model call fails; the log is archived and journaled as a candidate anyway.
    let log = failing_log(150);
    let harness = Harness::new();
    let decision = harness.run(&bash("cargo test", &log, true));
    assert_eq!(reason(&decision), "model-call-exception");
    assert_eq!(harness.archived(&log), Some(log.into_bytes()));
    assert_eq!(harness.kinds(), ["candidate", "fallback"]);
}

#[test]
fn fused_writes_are_reduced_after_the_marker_only() {
    for is_error in [false, true] {
        let (log, receipt, marker, status) = if is_error {
            let log = failing_log(150);
            let receipt = failing_receipt(&log);
            (
                log,
                receipt,
                "[then_run:failed]",
                "\n\nCommand exited with code 101",
            )
        } else {
            let log = passing_log(150);
            let receipt = passing_receipt(&log);
            (log, receipt, "[then_run:succeeded]", "")
        };
        let harness = Harness::new().replying(receipt);
        let block = format!("{marker}\n{log}{status}");
        let result = fused(
            "write",
            "cargo test",
            &["Successfully wrote to src/lib.rs", &block],
            is_error,
        );
        let replacement = harness
            .run(&result)
            .replacement()
            .cloned()
            .expect("reduced");
        assert_eq!(
            replacement.content[0].as_text(),
            Some("Successfully wrote to src/lib.rs")
        );
        let projected = replacement.content[1].as_text().expect("text");
        assert!(projected.starts_with(&format!("{marker}\nsol_pi_evidence_receipt_v1\n")));
        assert!(!projected.contains("module_042"), "the raw log is gone");
        assert!(projected.ends_with(if is_error { status } else { READBACK_LINE }));
        assert_eq!(replacement.is_error, is_error);
        assert_eq!(replacement.details["patch"], json!("@@ -1 +1 @@\n-a\n+b\n"));
        assert_eq!(harness.archived(&log), Some(log.clone().into_bytes()));
    }
}

#[test]
fn pi_full_output_file_in_the_temp_dir_is_the_source() {
    let full = failing_log(600);
    let preview = format!(
        "{}\n\n[Showing lines 402-605 of 605. Full output: {TEMP}/pi-bash-7a1f.log]\n\nCommand exited with code 101",
        full.lines().skip(401).collect::<Vec<_>>().join("\n")
    );
    let fs = MemoryFileSystem::new().with_file(format!("{TEMP}/pi-bash-7a1f.log"), full.clone());
    let harness = Harness::with_fs(fs).replying(failing_receipt(&full));
    let result = bash("cargo test", &preview, true);
    let replacement = harness
        .run(&result)
        .replacement()
        .cloned()
        .expect("reduced");
    assert!(harness.model.requests()[0].user_text.contains(&full));
    assert_eq!(harness.archived(&full), Some(full.as_bytes().to_vec()));
    assert_eq!(
        harness.journal()[0]["sourceOrigin"],
        json!("fullOutputFile")
    );
    assert!(
        replacement.content[0]
            .as_text()
            .expect("text")
            .ends_with("\n\nCommand exited with code 101")
    );
}

#[test]
fn a_pi_bash_log_outside_the_temp_dir_is_ignored() {
    let log = failing_log(150);
    let text = format!("{log}Full output: /home/dev/pi-bash-7a1f.log\n");
    let fs = MemoryFileSystem::new().with_dir(TEMP).with_file(
        "/home/dev/pi-bash-7a1f.log",
        "something else entirely\n".repeat(500),
    );
    let receipt = failing_receipt(&text);
    let harness = Harness::with_fs(fs).replying(receipt);
    assert!(
        harness
            .run(&bash("cargo test", &text, true))
            .replacement()
            .is_some()
    );
    assert!(
        harness
            .fs
            .reads()
            .iter()
            .all(|path| !path.as_str().contains("pi-bash"))
    );
    assert_eq!(harness.archived(&text), Some(text.into_bytes()));
}

#[test]
fn an_unreadable_full_output_file_leaves_the_result_alone() {
    let log = failing_log(150);
    let text = format!("{log}[Full output: {TEMP}/pi-bash-1.log]");
    let cases = [
        // A symlink planted in the temp dir.
        MemoryFileSystem::new()
            .with_file("/home/dev/.ssh/config", "x")
            .with_symlink(format!("{TEMP}/pi-bash-1.log"), "/home/dev/.ssh/config"),
        // A directory.
        MemoryFileSystem::new().with_dir(format!("{TEMP}/pi-bash-1.log")),
        // Missing.
        MemoryFileSystem::new().with_dir(TEMP),
        // Too large to hold a reducible log.
        MemoryFileSystem::new().with_file(
            format!("{TEMP}/pi-bash-1.log"),
            vec![b'x'; MAX_FULL_OUTPUT_BYTES as usize + 1],
        ),
        // A read error.
        MemoryFileSystem::new()
            .with_file(format!("{TEMP}/pi-bash-1.log"), log.clone())
            .with_read_failure(
                format!("{TEMP}/pi-bash-1.log"),
                FsErrorKind::PermissionDenied,
                "permission denied",
            ),
        // Not UTF-8.
        MemoryFileSystem::new().with_file(format!("{TEMP}/pi-bash-1.log"), vec![0xff; 5000]),
    ];
    for fs in cases {
        let harness = Harness::with_fs(fs);
        let decision = harness.run(&bash("cargo test", &text, true));
        assert_eq!(reason(&decision), "source-unavailable-or-over-max-chars");
        assert!(harness.model.requests().is_empty());
        assert!(harness.archive_is_empty());
        assert_eq!(harness.kinds(), ["fallback"]);
        assert_eq!(harness.journal()[0]["maxChars"], json!(600_000));
    }
}

#[test]
fn codemode_script_calls_are_ignored_entirely() {
    let log = failing_log(150);
    let harness = Harness::new().replying(failing_receipt(&log));
    let mut result = bash("cargo test", &log, true);
    result.parent_tool_call_id = Some("call_9".into());
    assert_eq!(
        harness.run(&result),
        Decision::Unchanged(ReasonCode::NestedToolCall)
    );
    let mut codemode = bash("cargo test", &log, true);
    codemode.tool_name = "codemode".into();
    assert_eq!(
        harness.run(&codemode),
        Decision::Unchanged(ReasonCode::IneligibleTool)
    );
    assert!(harness.model.requests().is_empty());
    assert!(harness.journal().is_empty());
    assert!(harness.archive_is_empty());
    assert!(harness.fs.reads().is_empty());
}

#[test]
fn short_output_and_other_commands_cost_nothing() {
    let harness = Harness::new().replying("{}");
    let short = bash("cargo test", "test result: ok. 1 passed", false);
    assert_eq!(reason(&harness.run(&short)), "source-under-min-bytes");
    let other = bash(
        "rg symbol src",
        &"src/lib.rs:1: symbol\n".repeat(500),
        false,
    );
    assert_eq!(reason(&harness.run(&other)), "not-diagnostic-command");
    let mut with_file = bash("rg symbol src", "Full output: /tmp/pi-bash-1.log", false);
    with_file.details = Some(json!({"fullOutputPath": "/tmp/pi-bash-1.log"}));
    assert_eq!(reason(&harness.run(&with_file)), "not-diagnostic-command");
    assert!(harness.model.requests().is_empty());
    assert!(harness.fs.reads().is_empty());
    assert!(harness.journal().is_empty());
    assert!(harness.archive_is_empty());
}

#[test]
fn gate_fallbacks_are_journaled_without_archiving() {
    let harness = Harness::new();
    let secret = format!("{}PGPASSWORD=s3cr3t psql -c 'select 1'\n", failing_log(150));
    assert_eq!(
        reason(&harness.run(&bash("make check", &secret, true))),
        "likely-secret"
    );
    let log = failing_log(150);
    let mismatch = bash(
        "make check",
        &format!("{log}\n\nCommand exited with code 2"),
        false,
    );
    assert_eq!(reason(&harness.run(&mismatch)), "exit-state-mismatch");
    let huge = "x".repeat(600_001);
    assert_eq!(
        reason(&harness.run(&bash("make", &huge, false))),
        "source-over-max-chars"
    );
    assert_eq!(harness.kinds(), ["fallback", "fallback", "fallback"]);
    let journal = harness.journal();
    assert_eq!(journal[0]["reason"], json!("likely-secret"));
    assert_eq!(journal[0]["secretKind"], json!("password-assignment"));
    assert_eq!(journal[1]["reason"], json!("exit-state-mismatch"));
    assert_eq!(journal[1]["exitSignal"], json!("failed"));
    assert_eq!(journal[2]["sourceChars"], json!(600_001));
    assert!(harness.model.requests().is_empty());
    assert!(harness.archive_is_empty());
}

#[test]
fn an_archive_that_cannot_be_written_stops_before_the_model_and_a_damaged_object_heals() {
    let log = failing_log(150);
    let store = format!("{ROOT}/evidence-preserving-reducer");
    let blocked = Harness::with_fs(MemoryFileSystem::new().with_file(&store, "a file"));
    assert_eq!(
        reason(&blocked.run(&bash("cargo test", &log, true))),
        "archive-failure"
    );
    assert!(blocked.model.requests().is_empty());

    let harness = Harness::new()
        .replying(failing_receipt(&log))
        .replying(failing_receipt(&log));
    assert!(
        harness
            .run(&bash("cargo test", &log, true))
            .replacement()
            .is_some()
    );
    // Damaged as a crash of an in-place writer leaves it: the log at hand writes it again.
    harness
        .fs
        .append(&archive_path(&log), b"tampered")
        .expect("append");
    let decision = harness.run(&bash("cargo test", &log, true));
    assert!(decision.replacement().is_some(), "{:?}", harness.journal());
    assert_eq!(
        harness.fs.file(archive_path(&log)),
        Some(log.as_bytes().to_vec())
    );
    let candidates: Vec<_> = harness
        .journal()
        .into_iter()
        .filter(|record| record["kind"] == "candidate")
        .collect();
    assert_eq!(candidates.len(), 2);
    assert_eq!(candidates[0].get("sourceRepaired"), None);
    assert_eq!(candidates[1]["sourceRepaired"], json!(true));
}

#[test]
fn a_missing_session_does_not_change_the_decision() {
    let log = failing_log(150);
    let fs = MemoryFileSystem::new();
    let model = sol_core::testing::ScriptedModelClient::new().with_reply(failing_receipt(&log));
    let session = MemorySessionStore::without_session();
    let route = route();
    let ports = Ports {
        fs: &fs,
        model: &model,
        session: &session,
    };
    let context = ReduceContext {
        route: &route,
        runtime_root: Utf8Path::new(ROOT),
        timestamp: TIMESTAMP,
        policy: sol_reducer::Policy::pi(),
        economy: None,
    };
    let result = bash("cargo test", &log, true);
    assert!(
        reduce(&result.view(), &ports, &context, None)
            .replacement()
            .is_some()
    );
}

#[test]
fn the_run_id_is_derived_from_the_runtime_root() {
    let log = failing_log(150);
    let harness = Harness::new().replying(failing_receipt(&log));
    harness.run(&bash("cargo test", &log, true));
    let expected = &sha256_hex(ROOT.as_bytes())[..16];
    assert!(
        harness
            .journal()
            .iter()
            .all(|record| record["runId"] == json!(expected))
    );
}

#[test]
fn a_passing_npm_log_gets_a_success_receipt() {
    let log = passing_log(150);
    let harness = Harness::new().replying(passing_receipt(&log));
    let mut result = bash("npm test", &log, false);
    result.exit_code = Some(0);
    let replacement = harness
        .run(&result)
        .replacement()
        .cloned()
        .expect("reduced");
    assert!(replacement.receipt_text.contains("status=success\n"));
    assert!(!replacement.is_error);
    assert!(
        harness.model.requests()[0]
            .user_text
            .contains("is_error=false\n")
    );
}

#[test]
fn the_fs_port_is_used_for_every_file_access() {
    // Only the archive (create + reuse check) and the full-output file are touched.
    let log = failing_log(150);
    let harness = Harness::with_fs(MemoryFileSystem::new()).replying(failing_receipt(&log));
    harness.run(&bash("cargo test", &log, true));
    assert!(harness.fs.reads().is_empty(), "a new archive needs no read");
}

#[test]
fn fused_results_follow_the_same_full_output_and_status_rules() {
    // An unreadable full-output file named in a fused edit's command output.
    let log = failing_log(150);
    let block = format!(
        "[then_run:failed]\n{log}[Full output: {TEMP}/pi-bash-2.log]\n\nCommand exited with code 101"
    );
    let edit = fused(
        "edit",
        "cargo test",
        &["Successfully replaced text in src/lib.rs.", &block],
        true,
    );
    let harness = Harness::new();
    assert_eq!(
        reason(&harness.run(&edit)),
        "source-unavailable-or-over-max-chars"
    );
    assert!(harness.archive_is_empty());
    assert_eq!(harness.kinds(), ["fallback"]);

    // A timed-out fused edit keeps its status line after the receipt.
    let block = format!("[then_run:failed]\n{log}\n\nCommand timed out after 1 seconds");
    let edit = fused(
        "edit",
        "cargo test",
        &["Successfully replaced text in src/lib.rs.", &block],
        true,
    );
    let harness = Harness::new().replying(failing_receipt(&log));
    let replacement = harness.run(&edit).replacement().cloned().expect("reduced");
    let projected = replacement.content[1].as_text().expect("text");
    assert!(projected.starts_with("[then_run:failed]\nsol_pi_evidence_receipt_v1\n"));
    assert!(projected.ends_with("\n\nCommand timed out after 1 seconds"));
    assert_eq!(harness.archived(&log), Some(log.into_bytes()));
}

/// Issue 25: `make test 2>&1 | tail -n 1000` and `make test || true` exit 0 although the log
/// names failing tests. A model that answers `status: success` is never asked: the log is
/// kept whole, nothing is archived, and the journal says why.
#[test]
fn a_reported_success_whose_log_names_failing_tests_is_kept_whole() {
    let log = exact_cargo_failure();
    let sha = sha256_hex(log.as_bytes());
    let summary = "test result: FAILED. 36 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.04s";
    for command in ["make test 2>&1 | tail -n 1000", "make test || true"] {
        let harness = Harness::new().replying(crate::support::receipt(
            &sha,
            "success",
            &[("summary", summary)],
        ));
        let mut result = bash(command, &log, false);
        result.exit_code = Some(0);
        let decision = harness.run(&result);
        assert_eq!(reason(&decision), "success-with-failing-tests", "{command}");
        assert!(harness.model.requests().is_empty(), "the model was asked");
        assert_eq!(harness.archived(&log), None, "the log was archived");
        let journal = harness.journal();
        assert_eq!(harness.kinds(), ["fallback"]);
        assert_eq!(journal[0]["reason"], json!("success-with-failing-tests"));
        assert_eq!(journal[0]["exitCode"], json!(0));
        assert_eq!(journal[0]["sourceSha256"], json!(sha));
    }
    // A true pass still gets its success receipt.
    let pass = passing_log(300);
    let harness = Harness::new().replying(passing_receipt(&pass));
    let decision = harness.run(&bash("make test 2>&1 | tail -n 1000", &pass, false));
    let text = decision.replacement().expect("reduced").content[0]
        .as_text()
        .expect("text")
        .to_owned();
    assert!(text.starts_with("sol_pi_evidence_receipt_v1\nstatus=success\n"));
}

/// The cargo fixture's log as a pipe would pass it on: without Pi's status line.
fn exact_cargo_failure() -> String {
    let output = crate::support::fixture("cargo-test-failure").output;
    sol_reducer::exit::split_status_line(&output).0.to_owned()
}

//! Candidate selection: which results, which commands, where the log is, and which
//! full-output files may be read.

use camino::Utf8Path;
use serde_json::json;
use sol_core::message::ContentBlock;
use sol_reducer::ReasonCode;
use sol_reducer::candidate::CandidateShape;
use sol_reducer::command::{has_failure_signal, is_diagnostic_command};
use sol_reducer::exit::{ExitSignal, ThenRunMarker};
use sol_reducer::pi::{
    ToolResultView, full_output_hint, inline_full_output_path, is_trusted_full_output_path,
    select_candidate, structured_exit_code,
};

use crate::support::{bash, fused};

fn rejected(result: &crate::support::OwnedResult) -> ReasonCode {
    select_candidate(&result.view())
        .expect_err("not a candidate")
        .reason
}

#[test]
fn the_spec_examples_of_the_command_trigger() {
    assert!(is_diagnostic_command("pytest -q"));
    assert!(is_diagnostic_command("lake build"));
    assert!(is_diagnostic_command("cargo test --all"));
    assert!(!is_diagnostic_command("rg test src"));
}

#[test]
fn build_and_test_commands_are_recognised_anywhere_in_a_shell_line() {
    let matching = [
        "make",
        "make -j8 all",
        "cd web && npm test",
        "CI=1 pnpm test",
        "(cd web; yarn test --run)",
        "python -m pytest -x tests/",
        "python3 -m unittest discover",
        "python3 -m py_compile src/app.py",
        "go test ./...",
        "bazel test //server/...",
        "cmake --build build --parallel",
        "ninja -C out/Release",
        "ctest --output-on-failure",
        "lake env lean Main.lean",
        "zig build test",
        "coq Foo.v",
        "lean --run Main.lean",
        "cargo clippy --workspace",
        "CARGO_TERM_COLOR=never cargo build --release",
        "npm ci|npm test",
        "true;make check",
        "CARGO TEST",
        "Make\ttest",
    ];
    for command in matching {
        assert!(is_diagnostic_command(command), "{command:?} should match");
    }
    let other = [
        "rg test src",
        "cat Makefile",
        "makeself.sh dist",
        "npm run build",
        "npm install",
        "cargo-watch -x check",
        "pytest_runner --help",
        "git commit -m \"make tests pass\"",
        "ls -la",
        "go vet ./...",
        "echo done",
        "",
    ];
    for command in other {
        assert!(
            !is_diagnostic_command(command),
            "{command:?} should not match"
        );
    }
}

#[test]
fn the_failure_signal_words() {
    for text in [
        "error[E0308]: mismatched types",
        "2 failed, 10 passed",
        "Failure: expected 3",
        "fatal: not a git repository",
        "java.lang.NullPointerException",
        "thread 'main' panicked",
        "Timeout waiting for server",
        "unsolved goals",
        "Type Mismatch",
        "AssertionError",
    ] {
        assert!(has_failure_signal(text), "{text:?}");
    }
    for text in [
        "test result: ok. 3 passed",
        "Finished `dev` profile",
        "Tests  40 passed (40)",
    ] {
        assert!(!has_failure_signal(text), "{text:?}");
    }
}

#[test]
fn a_bash_result_with_a_build_command_is_a_candidate() {
    let result = bash(
        "cargo test",
        "running 1 test\n\n\nCommand exited with code 101",
        true,
    );
    let candidate = select_candidate(&result.view()).expect("a candidate");
    assert_eq!(candidate.command, "cargo test");
    assert_eq!(candidate.shape, CandidateShape::Bash);
    assert_eq!(candidate.inline_log, result.text(0));
    assert_eq!(candidate.exit_signal, ExitSignal::Failed);
    assert_eq!(candidate.tool_call_id, "call_bash");
}

#[test]
fn several_bash_text_blocks_are_one_log() {
    let mut result = bash("make", "first", false);
    result.content.push(ContentBlock::text("second"));
    let candidate = select_candidate(&result.view()).expect("a candidate");
    assert_eq!(candidate.inline_log, "first\nsecond");
}

#[test]
fn other_tools_and_codemode_are_never_candidates() {
    for tool in [
        "codemode",
        "read",
        "grep",
        "obs_recall",
        "update_plan",
        "Bash",
        "mcp",
    ] {
        let mut result = bash("cargo test", "error", true);
        result.tool_name = tool.to_owned();
        assert_eq!(rejected(&result), ReasonCode::IneligibleTool, "{tool}");
    }
}

#[test]
fn calls_made_by_a_codemode_script_are_never_candidates() {
    let mut result = bash("cargo test", "error", true);
    result.parent_tool_call_id = Some("call_1".to_owned());
    assert_eq!(rejected(&result), ReasonCode::NestedToolCall);
    let mut fused = fused(
        "write",
        "make",
        &["Successfully wrote to a", "[then_run:succeeded]\nok"],
        false,
    );
    fused.parent_tool_call_id = Some("call_1".to_owned());
    assert_eq!(rejected(&fused), ReasonCode::NestedToolCall);
}

#[test]
fn calls_without_a_command_are_not_candidates() {
    let mut result = bash("", "output", false);
    assert_eq!(rejected(&result), ReasonCode::NoCommand);
    result.input = json!({"command": 42});
    assert_eq!(rejected(&result), ReasonCode::NoCommand);
    result.input = json!({"command": "   "});
    assert_eq!(rejected(&result), ReasonCode::NoCommand);
    let mut edit = fused("edit", "make", &["Successfully replaced text in a."], false);
    edit.input = json!({"path": "a", "edits": []});
    assert_eq!(rejected(&edit), ReasonCode::NoCommand);
    edit.input = json!({"path": "a", "then_run": "make"});
    assert_eq!(rejected(&edit), ReasonCode::NoCommand);
}

#[test]
fn other_commands_are_not_candidates() {
    assert_eq!(
        rejected(&bash("rg symbol src", "many lines", false)),
        ReasonCode::NotDiagnosticCommand
    );
    let write = fused(
        "write",
        "ls",
        &["Successfully wrote to a", "[then_run:succeeded]\nok"],
        false,
    );
    assert_eq!(rejected(&write), ReasonCode::NotDiagnosticCommand);
}

#[test]
fn a_bash_result_with_an_image_is_passed_through() {
    let mut result = bash("make", "output", false);
    result
        .content
        .push(ContentBlock::image("aGk=", "image/png"));
    assert_eq!(rejected(&result), ReasonCode::NonTextContent);
}

#[test]
fn a_fused_result_needs_its_then_run_output() {
    let plain = fused("edit", "make", &["Successfully replaced text in a."], false);
    assert_eq!(rejected(&plain), ReasonCode::NoThenRunOutput);
    let skipped = fused(
        "write",
        "make",
        &[
            "Could not write a\n\n[then_run:skipped] The file mutation did not complete, so the then_run command was not run.",
        ],
        true,
    );
    assert_eq!(rejected(&skipped), ReasonCode::NoThenRunOutput);
}

#[test]
fn a_fused_result_on_pi_1x_keeps_the_mutation_block() {
    let result = fused(
        "edit",
        "cargo test",
        &[
            "Successfully replaced text in src/lib.rs.",
            "[then_run:failed]\nrunning 3 tests\n\nCommand exited with code 101",
        ],
        true,
    );
    let candidate = select_candidate(&result.view()).expect("a candidate");
    assert_eq!(
        candidate.shape,
        CandidateShape::Fused {
            block: 1,
            marker: ThenRunMarker::Failed,
            head: "[then_run:failed]".to_owned(),
            separator: "\n".to_owned(),
        }
    );
    assert_eq!(
        candidate.inline_log,
        "running 3 tests\n\nCommand exited with code 101"
    );
    assert_eq!(candidate.exit_signal, ExitSignal::Failed);
}

#[test]
fn a_fused_failure_thrown_on_pi_0_84_is_one_block() {
    let text = "Successfully wrote 120 bytes to a.py\n\n[then_run:failed]\n\nE   assert 1 == 2\n\n\nCommand exited with code 1";
    let result = fused("write", "pytest -q", &[text], true);
    let candidate = select_candidate(&result.view()).expect("a candidate");
    let CandidateShape::Fused {
        block,
        head,
        separator,
        ..
    } = &candidate.shape
    else {
        panic!("fused");
    };
    assert_eq!(*block, 0);
    assert_eq!(
        head,
        "Successfully wrote 120 bytes to a.py\n\n[then_run:failed]"
    );
    assert_eq!(separator, "\n\n");
    assert_eq!(
        candidate.inline_log,
        "E   assert 1 == 2\n\n\nCommand exited with code 1"
    );
}

#[test]
fn the_separator_is_the_leading_run_of_line_breaks() {
    let cases = [
        ("[then_run:succeeded]\nok", "\n", "ok"),
        ("[then_run:succeeded]\r\n\r\nok", "\r\n\r\n", "ok"),
        ("[then_run:succeeded]\n\n\nok\n", "\n\n\n", "ok\n"),
        ("[then_run:succeeded]ok", "\n", "ok"),
        ("[then_run:succeeded]\n  ok", "\n", "  ok"),
        ("[then_run:succeeded]\r ok", "\n", "\r ok"),
    ];
    for (block, separator, log) in cases {
        let result = fused("write", "make", &["Successfully wrote to a", block], false);
        let candidate = select_candidate(&result.view()).expect("a candidate");
        let CandidateShape::Fused {
            separator: found, ..
        } = &candidate.shape
        else {
            panic!("fused");
        };
        assert_eq!(
            (found.as_str(), candidate.inline_log.as_str()),
            (separator, log),
            "{block:?}"
        );
    }
}

#[test]
fn the_first_marker_wins() {
    let result = fused(
        "write",
        "make",
        &[
            "Successfully wrote to a",
            "[then_run:succeeded]\nprinted [then_run:failed] itself",
        ],
        false,
    );
    let candidate = select_candidate(&result.view()).expect("a candidate");
    assert_eq!(candidate.inline_log, "printed [then_run:failed] itself");
    assert_eq!(candidate.exit_signal, ExitSignal::Succeeded);
}

#[test]
fn the_structured_exit_code_is_read_from_pi_1x_structured_content() {
    assert_eq!(
        structured_exit_code(&json!({"exit_code": 3, "output": "x"})),
        Some(3)
    );
    assert_eq!(structured_exit_code(&json!({"exit_code": null})), None);
    assert_eq!(structured_exit_code(&json!({"output": "x"})), None);
    assert_eq!(structured_exit_code(&json!("x")), None);
}

#[test]
fn the_full_output_hint_prefers_details_then_the_inline_notice() {
    let text = "tail of log\n\n[Showing lines 1801-3800 of 3800 (50.0KB limit). Full output: /tmp/pi-bash-9f2c.log]";
    let mut result = bash("make", text, false);
    assert_eq!(
        full_output_hint(&result.view()).as_deref(),
        Some(Utf8Path::new("/tmp/pi-bash-9f2c.log"))
    );
    result.details = Some(json!({"fullOutputPath": "/tmp/pi-bash-0001.log", "truncation": {}}));
    assert_eq!(
        full_output_hint(&result.view()).as_deref(),
        Some(Utf8Path::new("/tmp/pi-bash-0001.log"))
    );
    let temp = Some(Utf8Path::new("/tmp"));
    let candidate = select_candidate(&ToolResultView {
        os_temp_dir: temp,
        ..result.view()
    })
    .expect("a candidate");
    assert_eq!(
        candidate.full_output_log.as_deref(),
        Some(Utf8Path::new("/tmp/pi-bash-0001.log"))
    );
    assert_eq!(
        inline_full_output_path("Full output: /tmp/pi-bash-x.log\nmore"),
        Some("/tmp/pi-bash-x.log".into())
    );
    assert_eq!(inline_full_output_path("Full output: ]"), None);
    assert_eq!(inline_full_output_path("no notice"), None);
}

#[test]
fn only_pi_bash_logs_directly_in_the_temp_dir_are_trusted() {
    let temp = Utf8Path::new("/tmp");
    let trusted = [
        "/tmp/pi-bash-9f2c.log",
        "/tmp/./pi-bash-a.b.log",
        "/tmp/pi-bash-.log",
    ];
    for path in trusted {
        assert!(
            is_trusted_full_output_path(Utf8Path::new(path), temp),
            "{path}"
        );
    }
    assert!(is_trusted_full_output_path(
        Utf8Path::new("/tmp/pi-bash-1.log"),
        Utf8Path::new("/tmp/")
    ));
    let untrusted = [
        "/tmp/sub/pi-bash-1.log",
        "/var/tmp/pi-bash-1.log",
        "/tmp/../tmp/pi-bash-1.log",
        "/tmp/../etc/pi-bash-1.log",
        "/tmp/pi-bash-1.txt",
        "/tmp/pi-bash-1.log.bak",
        "/tmp/other.log",
        "/tmp/xpi-bash-1.log",
        "pi-bash-1.log",
        "tmp/pi-bash-1.log",
        "/tmp",
        "/",
    ];
    for path in untrusted {
        assert!(
            !is_trusted_full_output_path(Utf8Path::new(path), temp),
            "{path}"
        );
    }
    assert!(!is_trusted_full_output_path(
        Utf8Path::new("/tmp/pi-bash-1.log"),
        Utf8Path::new("tmp")
    ));
}

#[test]
fn the_candidate_applies_the_trust_check_to_its_hint() {
    let result = bash("make", "x\nFull output: /home/dev/pi-bash-1.log", false);
    assert!(full_output_hint(&result.view()).is_some());
    let temp = Some(Utf8Path::new("/tmp"));
    let candidate = select_candidate(&ToolResultView {
        os_temp_dir: temp,
        ..result.view()
    })
    .expect("a candidate");
    assert_eq!(candidate.full_output_log, None);
}

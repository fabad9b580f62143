//! The harness-neutral input (`ShellResult`), the configurable policy, the model's usage,
//! and the Pi adapter checked against the neutral path.

use std::sync::LazyLock;

use camino::Utf8Path;
use proptest::prelude::*;
use regex::Regex;
use serde_json::Value;
use sol_core::testing::{MemoryFileSystem, MemorySessionStore, ScriptedModelClient};
use sol_core::{ModelRequest, ShellExit};
use sol_reducer::command::{CommandSet, DEFAULT_COMMANDS, is_diagnostic_command};
use sol_reducer::driver::{Ports, reduce_step};
use sol_reducer::exit::split_status_line;
use sol_reducer::step::{AskModel, Reduction, Start};
use sol_reducer::{
    CandidateInput, Decision, ExitStatus, Policy, ReasonCode, ReduceContext, ShellResult,
    select_candidate,
};

use crate::support::{
    ROOT, TEMP, TIMESTAMP, bash, failing_log, failing_receipt, passing_log, passing_receipt, route,
};

fn context<'a>(route: &'a sol_reducer::Route, policy: &'a Policy) -> ReduceContext<'a> {
    ReduceContext {
        route,
        runtime_root: Utf8Path::new(ROOT),
        timestamp: TIMESTAMP,
        policy,
        economy: None,
    }
}

fn shell<'a>(command: &'a str, exit: ExitStatus, output: &'a str) -> ShellResult<'a> {
    ShellResult {
        call_id: "run-1",
        command,
        exit,
        output,
        full_output_log: None,
    }
}

/// Reduces `result` through the driver with one scripted reply; the whole `Done`.
fn run<R: CandidateInput + ?Sized>(
    result: &R,
    fs: &MemoryFileSystem,
    model: &ScriptedModelClient,
    policy: &Policy,
) -> (sol_reducer::Done, Vec<Value>) {
    let session = MemorySessionStore::new();
    let route = route();
    let ports = Ports {
        fs,
        model,
        session: &session,
    };
    let done = reduce_step(result, &ports, &context(&route, policy), None);
    let journal = session
        .entries()
        .into_iter()
        .map(|entry| entry.data)
        .collect();
    (done, journal)
}

fn receipt_text(done: &sol_reducer::Done) -> String {
    done.decision
        .replacement()
        .unwrap_or_else(|| panic!("reduced: {:?} {:?}", done.decision, done.journal))
        .content
        .iter()
        .map(|block| block.as_text().expect("text").to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_failing_shell_result_is_reduced_with_no_pi_convention() {
    let log = failing_log(150);
    let model = ScriptedModelClient::new().with_reply(failing_receipt(&log));
    let fs = MemoryFileSystem::new();
    let result = shell("cargo test", ExitStatus::Code(101), &log);
    let (done, journal) = run(&result, &fs, &model, Policy::pi());
    let text = receipt_text(&done);
    assert!(text.starts_with("sol_pi_evidence_receipt_v1\nstatus=failure\n"));
    // No status line to keep: the receipt is the whole replacement.
    assert!(text.ends_with("not the whole file at once."));
    let kinds: Vec<_> = journal
        .iter()
        .map(|record| record["kind"].clone())
        .collect();
    assert_eq!(kinds, ["candidate", "provider_response", "applied"]);
    assert_eq!(journal[0]["toolCallId"], "run-1");
    assert_eq!(journal[0]["isError"], true);
}

#[test]
fn every_non_zero_ending_is_a_failure_and_zero_a_success() {
    let log = failing_log(150);
    for exit in [
        ExitStatus::Code(1),
        ExitStatus::Code(-9),
        ExitStatus::NoCode,
        ExitStatus::TimedOut,
        ExitStatus::Aborted,
    ] {
        let candidate = shell("make", exit, &log)
            .select(Policy::pi())
            .expect("a candidate");
        assert!(candidate.is_error, "{exit:?}");
        assert_eq!(candidate.exit_code, exit.code());
    }
    let candidate = shell("make", ExitStatus::Code(0), &log)
        .select(Policy::pi())
        .expect("a candidate");
    assert!(!candidate.is_error);
    assert_eq!(ExitStatus::from(ShellExit::NoCode), ExitStatus::NoCode);
    assert_eq!(ExitStatus::from(ShellExit::Aborted), ExitStatus::Aborted);
    assert_eq!(ExitStatus::from(ShellExit::Code(2)), ExitStatus::Code(2));
}

#[test]
fn a_shell_result_keeps_status_looking_output_in_its_log() {
    // Pi's trailing status line is Pi's convention: a neutral output that ends with one
    // keeps it as log text.
    let output = format!("{}\n\nCommand exited with code 101", failing_log(150));
    let source = sol_reducer::prepare_source(
        shell("cargo test", ExitStatus::Code(101), &output)
            .select(Policy::pi())
            .expect("a candidate"),
        sol_reducer::FullOutput::NotRead,
    )
    .expect("a source");
    assert_eq!(source.body(), output);
    assert_eq!(source.status_line(), None);
}

#[test]
fn the_hosts_full_output_log_is_read_in_place_of_the_preview() {
    let log = failing_log(150);
    let fs = MemoryFileSystem::new().with_file("/var/run/host/run-1.log", log.clone());
    let model = ScriptedModelClient::new().with_reply(failing_receipt(&log));
    let result = ShellResult {
        full_output_log: Some(Utf8Path::new("/var/run/host/run-1.log")),
        ..shell("cargo test", ExitStatus::Code(101), "…the last 20 lines…")
    };
    let (done, journal) = run(&result, &fs, &model, Policy::pi());
    assert!(done.decision.replacement().is_some());
    assert_eq!(journal[0]["sourceOrigin"], "fullOutputFile");
    assert_eq!(journal[0]["sourceBytes"], log.len());

    // A log the host names but that is gone: the preview is not the exact log, so nothing
    // is reduced and nothing is sent.
    let model = ScriptedModelClient::new();
    let gone = ShellResult {
        full_output_log: Some(Utf8Path::new("/var/run/host/missing.log")),
        ..result
    };
    let (done, _) = run(&gone, &MemoryFileSystem::new(), &model, Policy::pi());
    assert_eq!(
        done.decision,
        Decision::Unchanged(ReasonCode::SourceUnavailableOrOverMaxChars)
    );
    assert!(model.requests().is_empty());
}

#[test]
fn an_empty_or_unlisted_command_is_not_a_candidate() {
    let log = failing_log(150);
    let reason = |command: &str| {
        shell(command, ExitStatus::Code(1), &log)
            .select(Policy::pi())
            .expect_err("not a candidate")
            .reason
    };
    assert_eq!(reason("  "), ReasonCode::NoCommand);
    assert_eq!(reason("rg test src"), ReasonCode::NotDiagnosticCommand);
}

#[test]
fn a_host_can_extend_or_replace_the_command_set() {
    let log = failing_log(150);
    let extended = Policy {
        commands: CommandSet::default().with("just test"),
        ..Policy::default()
    };
    let replaced = Policy {
        commands: CommandSet::new(["./ci/run-tests.sh"]),
        ..Policy::default()
    };
    let selects = |command: &str, policy: &Policy| {
        shell(command, ExitStatus::Code(1), &log)
            .select(policy)
            .is_ok()
    };
    assert!(!selects("just test", Policy::pi()));
    assert!(selects("just test --all", &extended));
    assert!(selects("cargo test", &extended));
    assert!(selects("cd app && ./ci/run-tests.sh -q", &replaced));
    assert!(!selects("cargo test", &replaced));
    assert!(!selects("./ci/run-tests.shx", &replaced));
    assert!(CommandSet::new(Vec::<String>::new()).commands().is_empty());
    assert_eq!(
        CommandSet::default().commands(),
        DEFAULT_COMMANDS.map(String::from)
    );
    assert_eq!(CommandSet::default(), CommandSet::new(DEFAULT_COMMANDS));
    assert!(!CommandSet::new(["", "  "]).matches("make"));
    // The Pi adapter follows the policy too.
    let pi_result = bash("just test", &log, true);
    assert_eq!(
        select_candidate(&pi_result.view())
            .expect_err("not a candidate")
            .reason,
        ReasonCode::NotDiagnosticCommand
    );
    assert!(sol_reducer::pi::select_candidate_with(&pi_result.view(), &extended).is_ok());
}

#[test]
fn the_receipt_names_the_hosts_shell_tool() {
    let log = failing_log(150);
    let policy = Policy {
        shell_tool: "run_shell".to_owned(),
        ..Policy::default()
    };
    let model = ScriptedModelClient::new().with_reply(failing_receipt(&log));
    let fs = MemoryFileSystem::new();
    let (done, _) = run(
        &shell("cargo test", ExitStatus::Code(101), &log),
        &fs,
        &model,
        &policy,
    );
    let text = receipt_text(&done);
    assert!(text.contains("read source_artifact through run_shell with"));
    assert_text_snapshot!("receipt_shell_result_custom_tool", text);
}

#[test]
fn the_replys_usage_reaches_the_receipt_the_journal_and_the_account() {
    let log = passing_log(200);
    let model = ScriptedModelClient::new().with_reply_using(passing_receipt(&log), 1_200, 80);
    let fs = MemoryFileSystem::new();
    let (done, journal) = run(
        &shell("cargo test", ExitStatus::Code(0), &log),
        &fs,
        &model,
        Policy::pi(),
    );
    assert!(receipt_text(&done).contains("\nreducer_total_tokens=1280\n"));
    assert_eq!(done.account.model_calls, 1);
    assert_eq!(done.account.model_input_tokens, 1_200);
    assert_eq!(done.account.model_output_tokens, 80);
    let usage = &journal[1]["usage"];
    assert_eq!(journal[1]["kind"], "provider_response");
    assert_eq!(
        (&usage["input"], &usage["output"], &usage["totalTokens"]),
        (&Value::from(1_200), &Value::from(80), &Value::from(1_280))
    );
    assert_eq!(journal[2]["usage"], *usage);

    // A host that does not know the usage reports none, as before.
    let model = ScriptedModelClient::new().with_reply(passing_receipt(&log));
    let (done, _) = run(
        &shell("cargo test", ExitStatus::Code(0), &log),
        &MemoryFileSystem::new(),
        &model,
        Policy::pi(),
    );
    assert!(receipt_text(&done).contains("\nreducer_total_tokens=0\n"));
    assert_eq!(done.account.model_input_tokens, 0);
}

fn assert_send_static<T: Send + 'static>() {}

#[test]
fn the_pending_reduction_and_its_request_can_cross_threads() {
    assert_send_static::<Reduction>();
    assert_send_static::<AskModel>();
    assert_send_static::<Start>();
    assert_send_static::<ModelRequest>();
    assert_send_static::<sol_reducer::Done>();

    // And one actually does: the model step finishes on another thread.
    let log = failing_log(150);
    let route = route();
    let fs = MemoryFileSystem::new();
    let result = shell("cargo test", ExitStatus::Code(101), &log);
    let Start::AskModel(ask) = Reduction::start(&result, &context(&route, Policy::pi()), &fs, None)
    else {
        panic!("a fresh log needs the model");
    };
    let reply = sol_reducer::ReducerReply::from_text(failing_receipt(&log), &route);
    let done = std::thread::spawn(move || ask.reduction.finish(Ok(reply), TIMESTAMP, None))
        .join()
        .expect("the thread finishes");
    assert!(done.decision.replacement().is_some());
}

/// The command pattern as it was before it became a `CommandSet`: the oracle of the
/// default set.
static OLD_PATTERN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)(?:^|[;&|()\s])(?:",
        r"lake\s+build|lake\s+env\s+lean|lean|coq|cargo(?:\s+(?:build|test|check))?",
        r"|zig\s+build|pytest|python3?\s+-m\s+(?:pytest|unittest|py_compile)|ctest",
        r"|cmake\s+--build|ninja|make|npm\s+test|pnpm\s+test|yarn\s+test|go\s+test|bazel\s+test",
        r")(?:\s|$)",
    ))
    .expect("valid")
});

fn command_line() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        // The words of the old pattern, written out (not taken from the list under test).
        prop::sample::select(vec![
            "lake",
            "build",
            "env",
            "lean",
            "coq",
            "cargo",
            "test",
            "check",
            "zig",
            "pytest",
            "python",
            "python3",
            "-m",
            "unittest",
            "py_compile",
            "ctest",
            "cmake",
            "--build",
            "ninja",
            "make",
            "npm",
            "pnpm",
            "yarn",
            "go",
            "bazel",
            "CARGO",
            "Make",
            "x",
            "&&",
            "|",
            ";",
            "(",
            ")",
        ])
        .prop_map(str::to_owned),
        "[a-z;&|() \t\n.-]{0,6}",
    ];
    let gap = prop::sample::select(vec!["", " ", "  ", "\t", "\n", ";", "&", "|", "(", ")"]);
    prop::collection::vec((word, gap), 0..8).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(word, gap)| format!("{word}{gap}"))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The default command set accepts exactly what the old fixed pattern accepted.
    #[test]
    fn the_default_command_set_is_the_old_pattern(command in command_line()) {
        prop_assert_eq!(is_diagnostic_command(&command), OLD_PATTERN.is_match(&command));
    }

    /// Extending the set never drops a command, and the added one is matched.
    #[test]
    fn extending_the_set_keeps_the_defaults(command in command_line(), extra in "[a-z]{2,6}( [a-z-]{1,6})?") {
        let extended = CommandSet::default().with(extra.clone());
        prop_assert!(!is_diagnostic_command(&command) || extended.matches(&command));
        let extra_upper = extra.to_uppercase();
        let line = format!("cd x && {extra_upper} --flag");
        prop_assert!(extended.matches(&line));
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The Pi adapter and the neutral input agree: a Pi bash result whose exit signal agrees
    /// with `isError`, and the shell result a non-Pi host would give for the same run (the
    /// log without Pi's status line), select the same command and failure flag, archive the
    /// same log and get the same receipt body; only Pi keeps its status line after it.
    #[test]
    fn the_pi_adapter_and_the_shell_result_agree(
        failing in any::<bool>(),
        tests in 150usize..220,
        code in 1i32..255,
        structured in any::<bool>(),
    ) {
        let log = if failing { failing_log(tests) } else { passing_log(tests) };
        let reply = if failing { failing_receipt(&log) } else { passing_receipt(&log) };
        let mut pi = if failing {
            bash("cargo test", &format!("{log}\n\nCommand exited with code {code}"), true)
        } else {
            bash("cargo test", &log, false)
        };
        if structured {
            pi.exit_code = Some(if failing { code } else { 0 });
        }
        let exit = if failing { ExitStatus::Code(code) } else { ExitStatus::Code(0) };
        let neutral = shell("cargo test", exit, &log);

        let pi_candidate = pi.view().select(Policy::pi()).expect("a Pi candidate");
        let shell_candidate = neutral.select(Policy::pi()).expect("a shell candidate");
        prop_assert_eq!(&pi_candidate.command, &shell_candidate.command);
        prop_assert_eq!(pi_candidate.is_error, shell_candidate.is_error);
        prop_assert_eq!(pi_candidate.split_inline_log().0, shell_candidate.split_inline_log().0);

        let pi_fs = MemoryFileSystem::new();
        let shell_fs = MemoryFileSystem::new();
        let (pi_done, pi_journal) =
            run(&pi.view(), &pi_fs, &ScriptedModelClient::new().with_reply(reply.clone()), Policy::pi());
        let (shell_done, shell_journal) =
            run(&neutral, &shell_fs, &ScriptedModelClient::new().with_reply(reply), Policy::pi());
        prop_assert_eq!(pi_fs.paths(), shell_fs.paths());
        let pi_text = receipt_text(&pi_done);
        let shell_text = receipt_text(&shell_done);
        let (pi_receipt, status) = split_status_line(&pi_text);
        prop_assert_eq!(pi_receipt, shell_text.as_str());
        prop_assert_eq!(status.is_some(), failing);
        let kinds = |journal: &[Value]| journal.iter().map(|r| r["kind"].clone()).collect::<Vec<_>>();
        prop_assert_eq!(kinds(&pi_journal), kinds(&shell_journal));
        prop_assert_eq!(&pi_journal[0]["sourceSha256"], &shell_journal[0]["sourceSha256"]);
    }

    /// Whatever a Pi bash result says, the adapter's failure flag is `isError`, and a
    /// contradicting signal is refused before anything is archived.
    #[test]
    fn a_contradicting_pi_signal_is_refused(
        is_error in any::<bool>(),
        code in prop::option::of(-3i32..3),
        status in prop::option::of(-3i32..3),
    ) {
        let log = failing_log(150);
        let text = match status {
            Some(status) => format!("{log}\n\nCommand exited with code {status}"),
            None => log.clone(),
        };
        let mut pi = bash("cargo test", &text, is_error);
        pi.exit_code = code;
        let signal_failed = match (code, status) {
            (Some(code), _) => Some(code != 0),
            (None, Some(status)) => Some(status != 0),
            (None, None) => None,
        };
        let fs = MemoryFileSystem::new();
        let model = ScriptedModelClient::new();
        let (done, _) = run(&pi.view(), &fs, &model, Policy::pi());
        let contradicts = signal_failed.is_some_and(|failed| failed != is_error);
        prop_assert_eq!(
            done.decision.reason() == Some(ReasonCode::ExitStateMismatch),
            contradicts
        );
        if contradicts {
            prop_assert!(fs.paths().iter().all(|path| !path.as_str().starts_with(ROOT)));
        }
    }
}

#[test]
fn the_temp_dir_comes_with_the_pi_result_not_the_context() {
    // Pi's trusted-log rule needs the view's temp directory; without it no file is read.
    let log = failing_log(150);
    let path = format!("{TEMP}/pi-bash-7.log");
    let text = format!("tail\n[Full output: {path}]\n\nCommand exited with code 101");
    let result = bash("cargo test", &text, true);
    let with_temp = result.view();
    let without = sol_reducer::ToolResultView {
        os_temp_dir: None,
        ..result.view()
    };
    let candidate = select_candidate(&with_temp).expect("a candidate");
    assert_eq!(
        candidate.full_output_log.as_deref(),
        Some(Utf8Path::new(&path))
    );
    assert_eq!(
        select_candidate(&without)
            .expect("a candidate")
            .full_output_log,
        None
    );
    let fs = MemoryFileSystem::new()
        .with_dir(TEMP)
        .with_file(&path, log.clone());
    let model = ScriptedModelClient::new().with_reply(failing_receipt(&log));
    let (done, journal) = run(&with_temp, &fs, &model, Policy::pi());
    assert!(done.decision.replacement().is_some());
    assert_eq!(journal[0]["sourceOrigin"], "fullOutputFile");
}

//! The driver for Rust hosts: the same ends as a hand-driven `FusedCall`, and the command
//! over the `Shell` port (scripted doubles of `sol-core`'s `testing` feature).

use std::time::Duration;

use proptest::prelude::*;
use sol_core::testing::ScriptedShell;
use sol_core::{ShellError, ShellExit, ShellOutcome, ShellRequest};
use sol_fusion::driver::{self, FusionHost, MutationHost, ShellCommands};
use sol_fusion::fused::{
    Capabilities, CommandResult, Effect, Finish, FusedCallRequest, MutationResult,
};
use sol_fusion::guard::TargetLook;
use sol_fusion::path::{PathContext, Platform};
use sol_fusion::text;

use crate::fused_props::{Script, drive, request, script};

/// A host that answers from a script and records what it was asked, as effects.
pub(crate) struct ScriptHost {
    pub(crate) script: Script,
    pub(crate) looks: usize,
    pub(crate) asked: Vec<Effect>,
}

impl FusionHost for ScriptHost {
    fn run_mutation(&mut self, target: Option<&str>) -> MutationResult {
        self.asked.push(Effect::RunMutation {
            target: target.map(str::to_owned),
        });
        self.script.mutation.clone()
    }

    fn look(&mut self, path: &str) -> TargetLook {
        self.asked.push(Effect::Digest {
            path: path.to_owned(),
        });
        self.looks += 1;
        if self.looks == 1 {
            self.script.before.clone()
        } else {
            self.script.after.clone()
        }
    }

    fn run_command(&mut self, command: &str, timeout: Option<Duration>) -> CommandResult {
        self.asked.push(Effect::RunCommand {
            command: command.to_owned(),
            timeout,
            timeout_seconds: timeout.map(|timeout| timeout.as_secs_f64()),
        });
        self.script.command.clone()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The driver ends every call as the hand-driven machine does, asking the host for the
    /// same I/O in the same order (a yielded turn is no I/O for a synchronous host).
    #[test]
    fn the_driver_ends_like_the_hand_driven_machine(script in script()) {
        let by_hand = drive(&script);
        let mut host = ScriptHost { script: script.clone(), looks: 0, asked: Vec::new() };
        let finish = driver::run(&request(&script), &mut host);
        prop_assert_eq!(&finish, &by_hand.finish);
        let io: Vec<Effect> = by_hand
            .effects
            .into_iter()
            .filter(|effect| !matches!(effect, Effect::YieldTurn | Effect::Finish(_)))
            .collect();
        prop_assert_eq!(host.asked, io);
    }
}

/// A host whose edit always succeeds on an unchanged target.
struct Editor;

impl MutationHost for Editor {
    fn run_mutation(&mut self, target: Option<&str>) -> MutationResult {
        assert_eq!(target, Some("/work/app/src/lib.rs"));
        MutationResult::Returned {
            texts: vec!["Successfully replaced 1 block in src/lib.rs.".to_owned()],
            is_error: false,
        }
    }

    fn look(&mut self, _path: &str) -> TargetLook {
        TargetLook::Digest("5d41402abc4b2a76b9719d911017c592".to_owned())
    }
}

fn fused_edit(then_run: &str, error_results_kept: bool) -> FusedCallRequest<'_> {
    FusedCallRequest {
        path: "src/lib.rs",
        then_run_json: Some(then_run),
        ctx: PathContext {
            cwd: "/work/app",
            home: "/home/dev",
            platform: Platform::Posix,
        },
        capabilities: Capabilities { error_results_kept },
        parent_tool_call_id: None,
    }
}

fn outcome(output: &str, exit: ShellExit) -> ShellOutcome {
    ShellOutcome {
        output: output.to_owned(),
        exit,
        dropped_bytes: 0,
    }
}

#[test]
fn a_command_that_exits_0_succeeds_and_runs_in_the_hosts_folder() {
    let shell = ScriptedShell::new()
        .with_outcome(outcome("test result: ok. 3 passed\n", ShellExit::Code(0)));
    let finish = driver::run_with_shell(
        &fused_edit(r#"{"command":"cargo test","timeout":1.5}"#, true),
        &mut Editor,
        &shell,
        "/work/app",
    );
    let Finish::Return {
        append,
        notice,
        account,
    } = finish
    else {
        panic!("a success: {finish:?}");
    };
    assert_eq!(
        append,
        ["[then_run:succeeded]\ntest result: ok. 3 passed\n"]
    );
    assert!(notice);
    assert_eq!(account.requests_avoided, 1);
    assert_eq!(
        shell.requests(),
        [ShellRequest {
            command: "cargo test".to_owned(),
            cwd: "/work/app".into(),
            timeout: Some(Duration::from_millis(1500)),
        }]
    );
    assert_eq!(shell.remaining(), 0);
}

#[test]
fn a_failure_is_returned_where_the_host_keeps_errors_and_thrown_where_it_does_not() {
    let failing =
        || ScriptedShell::new().with_outcome(outcome("1 test failed\n", ShellExit::Code(101)));
    let kept = driver::run_with_shell(
        &fused_edit(r#"{"command":"cargo test"}"#, true),
        &mut Editor,
        &failing(),
        "/work/app",
    );
    let Finish::ReturnError { append, account } = kept else {
        panic!("an error result: {kept:?}");
    };
    assert_eq!(
        append,
        ["[then_run:failed]\n1 test failed\n\nCommand exited with code 101"]
    );
    assert_eq!(account.requests_avoided, 1);
    let thrown = driver::run_with_shell(
        &fused_edit(r#"{"command":"cargo test"}"#, false),
        &mut Editor,
        &failing(),
        "/work/app",
    );
    assert!(
        matches!(&thrown, Finish::Throw { message, .. } if message.starts_with("Successfully replaced 1 block in src/lib.rs.\n\n[then_run:failed]\n\n1 test failed")),
        "{thrown:?}"
    );
}

#[test]
fn a_call_that_is_refused_never_reaches_the_host() {
    struct Untouchable;
    impl MutationHost for Untouchable {
        fn run_mutation(&mut self, _target: Option<&str>) -> MutationResult {
            panic!("the mutation must not run");
        }
        fn look(&mut self, _path: &str) -> TargetLook {
            panic!("nothing to look at");
        }
    }
    let shell = ScriptedShell::new();
    let finish = driver::run_with_shell(
        &fused_edit(r#"{"command":"  "}"#, true),
        &mut Untouchable,
        &shell,
        "/work/app",
    );
    assert!(
        matches!(
            finish,
            Finish::Reject {
                code: "empty_command",
                ..
            }
        ),
        "{finish:?}"
    );
    assert!(shell.requests().is_empty());
}

/// How each way a shell command can end becomes a command result.
fn shell_results() -> Vec<(&'static str, CommandResult)> {
    let run = |result: Result<ShellOutcome, ShellError>, timeout: Option<Duration>| {
        let shell = ScriptedShell::new();
        shell.push(result);
        ShellCommands::new(&shell, "/work/app").run("make check", timeout)
    };
    vec![
        (
            "exit 0",
            run(Ok(outcome("all good\n", ShellExit::Code(0))), None),
        ),
        (
            "exit 2",
            run(
                Ok(outcome("make: *** [check] Error 2\n", ShellExit::Code(2))),
                None,
            ),
        ),
        (
            "exit 1, no output",
            run(Ok(outcome("", ShellExit::Code(1))), None),
        ),
        (
            "no code",
            run(Ok(outcome("Killed\n", ShellExit::NoCode)), None),
        ),
        (
            "timed out",
            run(
                Ok(outcome(
                    "waiting...\n",
                    ShellExit::TimedOut {
                        after: Duration::from_millis(2500),
                    },
                )),
                Some(Duration::from_millis(2500)),
            ),
        ),
        ("aborted", run(Ok(outcome("", ShellExit::Aborted)), None)),
        (
            "exit 1, the end of a long output",
            run(
                Ok(ShellOutcome {
                    output: "error: 2 tests failed\n".to_owned(),
                    exit: ShellExit::Code(1),
                    dropped_bytes: 120_000,
                }),
                None,
            ),
        ),
        (
            "shell unavailable",
            run(
                Err(ShellError::Unavailable {
                    message: "/bin/bash: not found".to_owned(),
                }),
                None,
            ),
        ),
    ]
}

#[test]
fn shell_outcomes_become_command_results() {
    let results = shell_results();
    let classified: Vec<(&str, Option<text::CommandOutcome>)> = results
        .iter()
        .map(|(name, result)| {
            let outcome = match result {
                CommandResult::Returned {
                    is_error,
                    exit_code,
                    ..
                } => Some(text::classify_command(*is_error, *exit_code)),
                CommandResult::Threw { .. } => None,
            };
            (*name, outcome)
        })
        .collect();
    use text::CommandOutcome::{Failed, Succeeded};
    assert_eq!(
        classified,
        [
            ("exit 0", Some(Succeeded)),
            ("exit 2", Some(Failed)),
            ("exit 1, no output", Some(Failed)),
            ("no code", Some(Failed)),
            ("timed out", None),
            ("aborted", None),
            ("exit 1, the end of a long output", Some(Failed)),
            ("shell unavailable", None),
        ]
    );
    let exit_codes: Vec<Option<i32>> = results
        .iter()
        .filter_map(|(_, result)| match result {
            CommandResult::Returned { exit_code, .. } => Some(*exit_code),
            CommandResult::Threw { .. } => None,
        })
        .collect();
    assert_eq!(exit_codes, [Some(0), Some(2), Some(1), None, Some(1)]);
}

/// The texts the model reads for each way a command over the `Shell` port can end.
#[test]
fn shell_command_texts() {
    let texts: Vec<String> = shell_results()
        .into_iter()
        .map(|(name, result)| {
            let body = match result {
                CommandResult::Returned { texts, .. } => format!("returned:\n{}", texts.join("\n")),
                CommandResult::Threw { message } => format!("threw:\n{message}"),
            };
            format!("## {name}\n{body}")
        })
        .collect();
    assert_text_snapshot!("shell_command_texts", texts.join("\n---\n"));
}

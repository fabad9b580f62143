//! Properties of the `FusedCall` step machine: random I/O results drive it to the end,
//! and the end equals what the extension's former TypeScript sequence produced (the
//! oracle below is written from that sequence's rules). It never asks for the command
//! after a failed mutation or a guard that says skip, and only a call whose command ran
//! counts a request avoided.

use proptest::prelude::*;
use sol_core::StepAccount;
use sol_fusion::fused::{
    Capabilities, CommandResult, Effect, Finish, FusedCall, FusedCallRequest, Input, MutationResult,
};
use sol_fusion::guard::{self, GuardDecision, TargetLook, Unguarded};
use sol_fusion::path::{PathContext, Platform};
use sol_fusion::text::{self, CommandOutcome};

const CTX: PathContext<'static> = PathContext {
    cwd: "/work",
    home: "/home/u",
    platform: Platform::Posix,
};

/// One scripted run: what the host would report for each effect.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    pub(crate) fused: bool,
    pub(crate) error_results_kept: bool,
    pub(crate) nested: bool,
    pub(crate) mutation: MutationResult,
    pub(crate) before: TargetLook,
    pub(crate) after: TargetLook,
    pub(crate) command: CommandResult,
}

fn texts() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop_oneof![
            Just(String::new()),
            Just("Successfully wrote 3 bytes to a.txt".to_owned()),
            "[a-z \n]{0,12}",
        ],
        0..3,
    )
}

fn look() -> impl Strategy<Value = TargetLook> {
    prop_oneof![
        3 => prop::sample::select(vec!["aa", "bb"]).prop_map(|hex| TargetLook::Digest(hex.to_owned())),
        2 => prop::sample::select(Unguarded::ALL.to_vec()).prop_map(TargetLook::Unguarded),
        1 => Just(TargetLook::Unreadable("ENOENT: no such file".to_owned())),
    ]
}

fn mutation() -> impl Strategy<Value = MutationResult> {
    prop_oneof![
        4 => (texts(), any::<bool>()).prop_map(|(texts, is_error)| MutationResult::Returned { texts, is_error }),
        1 => "[a-z ]{0,10}".prop_map(|message| MutationResult::Threw { message }),
    ]
}

fn command() -> impl Strategy<Value = CommandResult> {
    let exit_code = prop::option::of(prop::sample::select(vec![0, 1, 2, 137, -1, i32::MIN]));
    prop_oneof![
        4 => (texts(), any::<bool>(), exit_code).prop_map(|(texts, is_error, exit_code)| CommandResult::Returned { texts, is_error, exit_code }),
        1 => prop::sample::select(vec!["Command timed out after 1 second", "Command aborted", "Command exited with code 5", ""])
            .prop_map(|message| CommandResult::Threw { message: message.to_owned() }),
    ]
}

pub(crate) fn script() -> impl Strategy<Value = Script> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        mutation(),
        look(),
        look(),
        command(),
    )
        .prop_map(
            |(fused, error_results_kept, nested, mutation, before, after, command)| Script {
                fused,
                error_results_kept,
                nested,
                mutation,
                before,
                after,
                command,
            },
        )
}

fn start(script: &Script) -> (FusedCall, Effect) {
    FusedCall::start(&request(script))
}

/// The request of a scripted run.
pub(crate) fn request(script: &Script) -> FusedCallRequest<'static> {
    FusedCallRequest {
        path: "a.txt",
        then_run_json: script
            .fused
            .then_some(r#"{"command":"make test","timeout":30}"#),
        ctx: CTX,
        capabilities: Capabilities {
            error_results_kept: script.error_results_kept,
        },
        parent_tool_call_id: script.nested.then_some("cm1"),
    }
}

/// What the machine asked for, and how it ended.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) effects: Vec<Effect>,
    pub(crate) finish: Finish,
}

pub(crate) fn drive(script: &Script) -> Run {
    let (mut call, mut effect) = start(script);
    let mut effects = Vec::new();
    let mut digests = 0;
    loop {
        effects.push(effect.clone());
        assert!(effects.len() <= 8, "the machine does not end: {effects:?}");
        let input = match &effect {
            Effect::Finish(finish) => {
                assert!(call.is_done());
                return Run {
                    effects,
                    finish: finish.clone(),
                };
            }
            Effect::RunMutation { target } => {
                assert_eq!(target.as_deref(), Some("/work/a.txt"));
                Input::Mutation(script.mutation.clone())
            }
            Effect::Digest { path } => {
                assert_eq!(path, "/work/a.txt");
                digests += 1;
                Input::Digest(if digests == 1 {
                    script.before.clone()
                } else {
                    script.after.clone()
                })
            }
            Effect::YieldTurn => Input::TurnYielded,
            Effect::RunCommand {
                command,
                timeout,
                timeout_seconds,
            } => {
                assert_eq!(command, "make test");
                assert_eq!(*timeout, Some(std::time::Duration::from_secs(30)));
                assert_eq!(*timeout_seconds, Some(30.0));
                Input::Command(script.command.clone())
            }
        };
        effect = call.step(input);
    }
}

/// The former TypeScript sequence (`runFused`), rule for rule.
fn oracle(script: &Script) -> Finish {
    let ran = StepAccount {
        requests_avoided: u64::from(!script.nested),
        ..StepAccount::default()
    };
    let none = StepAccount::default();
    let mut mutation_texts = match (&script.mutation, script.fused) {
        (MutationResult::Threw { .. }, false) => return Finish::RethrowMutationError,
        (MutationResult::Returned { .. }, false) => return Finish::ReturnMutation,
        (MutationResult::Threw { message }, true) => {
            return Finish::Throw {
                message: text::skipped_after_mutation_failure(message),
                account: none,
            };
        }
        (MutationResult::Returned { texts, is_error }, true) => {
            if *is_error {
                return Finish::Throw {
                    message: text::skipped_after_mutation_failure(&texts.join("\n")),
                    account: none,
                };
            }
            texts.clone()
        }
    };
    let mut appended = Vec::new();
    match guard::decide(&script.before, &script.after) {
        GuardDecision::Skip { text: skipped } => {
            return if script.error_results_kept {
                Finish::ReturnError {
                    append: vec![skipped],
                    account: none,
                }
            } else {
                Finish::Throw {
                    message: text::after_mutation(&mutation_texts.join("\n"), &skipped),
                    account: none,
                }
            };
        }
        GuardDecision::Run { note } => {
            if let Some(note) = note {
                mutation_texts.push(note.clone());
                appended.push(note);
            }
        }
    }
    let mutation_text = mutation_texts.join("\n");
    match &script.command {
        CommandResult::Threw { message } => Finish::Throw {
            message: text::failed_text(&mutation_text, message),
            account: ran,
        },
        CommandResult::Returned {
            texts,
            is_error,
            exit_code,
        } => {
            let output = texts.join("\n");
            match text::classify_command(*is_error, *exit_code) {
                CommandOutcome::Failed if script.error_results_kept => {
                    appended.push(text::failed_block(&output));
                    Finish::ReturnError {
                        append: appended,
                        account: ran,
                    }
                }
                CommandOutcome::Failed => Finish::Throw {
                    message: text::failed_text(&mutation_text, &output),
                    account: ran,
                },
                CommandOutcome::Succeeded => {
                    appended.push(text::succeeded_block(&output));
                    Finish::Return {
                        append: appended,
                        notice: !script.nested,
                        account: ran,
                    }
                }
            }
        }
    }
}

fn account(finish: &Finish) -> StepAccount {
    match finish {
        Finish::Return { account, .. }
        | Finish::ReturnError { account, .. }
        | Finish::Throw { account, .. } => *account,
        Finish::Reject { .. } | Finish::ReturnMutation | Finish::RethrowMutationError => {
            StepAccount::default()
        }
    }
}

fn any_input() -> impl Strategy<Value = Input> {
    prop_oneof![
        mutation().prop_map(Input::Mutation),
        look().prop_map(Input::Digest),
        Just(Input::TurnYielded),
        command().prop_map(Input::Command),
    ]
}

proptest! {
    /// The Pi adapter classifies any JavaScript exit number as Pi's number compared with 0
    /// did before exit codes were `i32`.
    #[test]
    fn pi_exit_numbers_keep_their_classification(
        is_error in any::<bool>(),
        number in prop_oneof![
            any::<f64>(),
            any::<i32>().prop_map(f64::from),
            any::<i64>().prop_map(|n| n as f64),
            prop::sample::select(vec![0.0, -0.0, 0.5, -1.0, f64::NAN, f64::INFINITY, 2_147_483_648.0, -2_147_483_649.0]),
        ],
    ) {
        let before = if is_error || number != 0.0 { CommandOutcome::Failed } else { CommandOutcome::Succeeded };
        let CommandResult::Returned { is_error: flagged, exit_code, .. } =
            CommandResult::from_pi_bash(Vec::new(), is_error, Some(number))
        else {
            unreachable!("a returned result");
        };
        prop_assert_eq!(text::classify_command(flagged, exit_code), before);
        if number.fract() == 0.0 && number >= f64::from(i32::MIN) && number <= f64::from(i32::MAX) {
            prop_assert_eq!(exit_code, Some(number as i32));
            prop_assert_eq!(flagged, is_error);
        }
    }
}

proptest! {
    #[test]
    fn the_end_of_a_call_is_what_the_former_sequence_produced(script in script()) {
        let run = drive(&script);
        prop_assert_eq!(&run.finish, &oracle(&script));
    }

    #[test]
    fn the_command_runs_only_after_an_applied_mutation_and_a_guard_that_allows_it(script in script()) {
        let run = drive(&script);
        let asked = run.effects.iter().any(|effect| matches!(effect, Effect::RunCommand { .. }));
        let mutation_applied = matches!(script.mutation, MutationResult::Returned { is_error: false, .. });
        let guard_allows = matches!(guard::decide(&script.before, &script.after), GuardDecision::Run { .. });
        prop_assert_eq!(asked, script.fused && mutation_applied && guard_allows);
        // Exactly one request is avoided when the command ran in a call of the model's own,
        // none otherwise: a script's call (codemode) could have run it in the same turn.
        prop_assert_eq!(account(&run.finish).requests_avoided, u64::from(asked && !script.nested));
        prop_assert!(account(&run.finish).is_empty() || asked);
        // The two looks come with a turn of the event loop between them, before the command.
        if asked {
            let kinds: Vec<_> = run.effects.iter().map(std::mem::discriminant).collect();
            prop_assert_eq!(kinds.len(), 6);
            prop_assert_eq!(kinds[1], kinds[3]);
            prop_assert!(matches!(run.effects[2], Effect::YieldTurn));
        }
    }

    #[test]
    fn a_failure_is_returned_only_where_error_results_are_kept(script in script()) {
        let run = drive(&script);
        if !script.error_results_kept {
            let returned_error = matches!(run.finish, Finish::ReturnError { .. });
            prop_assert!(!returned_error);
        }
        if script.error_results_kept && script.fused {
            // A failure after an applied mutation keeps the mutation's result.
            let after_mutation = matches!(script.mutation, MutationResult::Returned { is_error: false, .. });
            if after_mutation {
                let thrown = matches!(run.finish, Finish::Throw { .. });
                prop_assert_eq!(thrown, matches!(script.command, CommandResult::Threw { .. })
                    && matches!(guard::decide(&script.before, &script.after), GuardDecision::Run { .. }));
            }
        }
        if let Finish::Return { notice, .. } = run.finish {
            prop_assert_eq!(notice, !script.nested);
        }
    }

    #[test]
    fn inputs_in_any_order_never_panic_and_end_the_call_once(
        script in script(),
        inputs in prop::collection::vec(any_input(), 0..10),
    ) {
        let (mut call, first) = start(&script);
        let mut finished = matches!(first, Effect::Finish(_));
        let mut asked_command = false;
        let mut mutation_ok = false;
        for input in inputs {
            if let Input::Mutation(MutationResult::Returned { is_error: false, .. }) = &input {
                mutation_ok = true;
            }
            let effect = call.step(input);
            if finished {
                // After the end every input is a host error, answered with an error to throw.
                let is_internal = matches!(&effect, Effect::Finish(Finish::Throw { message, .. }) if message.starts_with("Action Fusion: internal error"));
                prop_assert!(is_internal);
            }
            if matches!(effect, Effect::RunCommand { .. }) {
                prop_assert!(mutation_ok && !asked_command);
                asked_command = true;
            }
            finished |= matches!(effect, Effect::Finish(_));
            prop_assert_eq!(call.is_done(), finished);
        }
    }
}

#[test]
fn a_bad_then_run_or_path_is_refused_before_anything_runs() {
    let request = |path, then_run_json| FusedCallRequest {
        path,
        then_run_json,
        ctx: CTX,
        capabilities: Capabilities {
            error_results_kept: true,
        },
        parent_tool_call_id: None,
    };
    let cases = [
        ("a.txt", Some("{")),
        ("a.txt", Some(r#"{"command":"  "}"#)),
        ("file:///work/a%2Fb.txt", Some(r#"{"command":"make"}"#)),
    ];
    for (path, then_run) in cases {
        let (mut call, first) = FusedCall::start(&request(path, then_run));
        assert!(
            matches!(first, Effect::Finish(Finish::Reject { .. })),
            "{first:?}"
        );
        assert!(call.is_done());
        assert!(matches!(
            call.step(Input::TurnYielded),
            Effect::Finish(Finish::Throw { .. })
        ));
    }
    // A plain call whose path does not resolve runs unqueued, like the built-in tool.
    let (_, first) = FusedCall::start(&request("file:///work/a%2Fb.txt", None));
    assert_eq!(first, Effect::RunMutation { target: None });
}

/// The end of each kind of call, as the model reads it, on both kinds of host.
#[test]
fn finishes() {
    let wrote = || MutationResult::Returned {
        texts: vec!["Successfully wrote 3 bytes to a.txt".to_owned()],
        is_error: false,
    };
    let same = TargetLook::Digest("aa".to_owned());
    let passed = CommandResult::Returned {
        texts: vec!["ok 1 - adds".to_owned()],
        is_error: false,
        exit_code: Some(0),
    };
    let failed = CommandResult::Returned {
        texts: vec!["not ok 1 - adds\n\nCommand exited with code 1".to_owned()],
        is_error: true,
        exit_code: Some(1),
    };
    let base = Script {
        fused: true,
        error_results_kept: true,
        nested: false,
        mutation: wrote(),
        before: same.clone(),
        after: same.clone(),
        command: passed.clone(),
    };
    let cases = [
        ("succeeded", base.clone()),
        (
            "succeeded from a script",
            Script {
                nested: true,
                ..base.clone()
            },
        ),
        (
            "succeeded unguarded",
            Script {
                before: TargetLook::Unguarded(Unguarded::Fifo),
                after: TargetLook::Unguarded(Unguarded::Fifo),
                ..base.clone()
            },
        ),
        (
            "command failed",
            Script {
                command: failed.clone(),
                ..base.clone()
            },
        ),
        (
            "command timed out",
            Script {
                command: CommandResult::Threw {
                    message: "Command timed out after 1 second".to_owned(),
                },
                ..base.clone()
            },
        ),
        (
            "target changed",
            Script {
                after: TargetLook::Digest("bb".to_owned()),
                ..base.clone()
            },
        ),
        (
            "mutation failed",
            Script {
                mutation: MutationResult::Threw {
                    message: "Could not find the exact text in a.txt.".to_owned(),
                },
                ..base.clone()
            },
        ),
        (
            "plain",
            Script {
                fused: false,
                ..base.clone()
            },
        ),
    ];
    let mut out = String::new();
    for kept in [true, false] {
        for (name, script) in &cases {
            let script = Script {
                error_results_kept: kept,
                ..script.clone()
            };
            let finish = drive(&script).finish;
            out.push_str(&format!(
                "=== {name} (error results kept: {kept})\n{finish:#?}\n"
            ));
        }
    }
    assert_text_snapshot!("fused_finishes", out);
}

//! What a Rust host that builds its own observations gets: `Finish::observation` and
//! `driver::observe` (every end of the machine, as the model reads it), and the
//! constructors a host uses instead of struct literals.

use proptest::prelude::*;
use sol_core::StepAccount;
use sol_fusion::driver::{self, FusionHost};
use sol_fusion::fused::{
    Capabilities, CommandResult, Effect, Finish, FusedCall, FusedCallRequest, MutationResult,
    Observation,
};
use sol_fusion::guard::TargetLook;
use sol_fusion::path::{PathContext, Platform};

use crate::driver::ScriptHost;
use crate::fused_props::{drive, request, script};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The observation of any run: the end's account; an error exactly when the model is
    /// not handed a success; a returned end keeps the mutation's blocks first and the
    /// call's own blocks last; a thrown or refused end is its one message; the text is the
    /// blocks joined by line breaks.
    #[test]
    fn an_observation_is_the_mutations_result_with_the_end_applied(script in script()) {
        let finish = drive(&script).finish;
        let mut host = ScriptHost { script: script.clone(), looks: 0, asked: Vec::new() };
        let seen = driver::observe(&request(&script), &mut host);
        prop_assert_eq!(&seen, &finish.clone().observation(Some(&script.mutation)));
        prop_assert_eq!(seen.account, finish.account());
        prop_assert_eq!(seen.to_string(), seen.texts.join("\n"));
        let mutation_ok = matches!(script.mutation, MutationResult::Returned { is_error: false, .. });
        let mutation_texts = match &script.mutation {
            MutationResult::Returned { texts, .. } => texts.clone(),
            MutationResult::Threw { message } => vec![message.clone()],
        };
        match finish {
            Finish::Return { append, .. } => {
                prop_assert!(!seen.is_error);
                prop_assert_eq!(seen.texts, [mutation_texts, append].concat());
            }
            Finish::ReturnError { append, .. } => {
                prop_assert!(seen.is_error);
                prop_assert_eq!(seen.texts, [mutation_texts, append].concat());
            }
            Finish::ReturnMutation | Finish::RethrowMutationError => {
                prop_assert_eq!(seen.is_error, !mutation_ok);
                prop_assert_eq!(seen.texts, mutation_texts);
                prop_assert!(seen.account.is_empty());
            }
            Finish::Throw { message, .. } | Finish::Reject { message, .. } => {
                prop_assert!(seen.is_error);
                prop_assert_eq!(seen.texts, vec![message]);
            }
        }
    }

    /// `FusedCallRequest::new(..).with_then_run(..)` is the call the model issued itself
    /// with the default capabilities: the machine starts exactly as from the literal.
    #[test]
    fn the_request_constructor_is_the_literal(
        path in "[a-z~@/ .]{0,12}",
        then_run in prop::option::of(prop_oneof![
            Just(r#"{"command":"make"}"#.to_owned()),
            "[{}\":a-z0-9]{0,16}",
        ]),
    ) {
        let ctx = PathContext::posix("/work", "/home/u");
        let built = FusedCallRequest::new(&path, ctx);
        let built = match &then_run {
            Some(json) => built.with_then_run(json),
            None => built,
        };
        let literal = FusedCallRequest {
            path: &path,
            then_run_json: then_run.as_deref(),
            ctx: PathContext { cwd: "/work", home: "/home/u", platform: Platform::Posix },
            capabilities: Capabilities { error_results_kept: true },
            parent_tool_call_id: None,
        };
        prop_assert_eq!(FusedCall::start(&built), FusedCall::start(&literal));
    }

    /// A host's `Result` is a returned success with its text, or a throw with the error's
    /// message.
    #[test]
    fn a_result_is_a_mutation_result(text in "[a-z \n]{0,12}", ok in any::<bool>()) {
        let result: Result<&str, &str> = if ok { Ok(&text) } else { Err(&text) };
        let expected = if ok {
            MutationResult::Returned { texts: vec![text.clone()], is_error: false }
        } else {
            MutationResult::Threw { message: text.clone() }
        };
        prop_assert_eq!(MutationResult::from(result), expected);
    }
}

/// A host whose edit, looks and command are fixed.
struct Fixed {
    mutation: MutationResult,
    after: TargetLook,
    command: CommandResult,
}

impl FusionHost for Fixed {
    fn run_mutation(&mut self, _target: Option<&str>) -> MutationResult {
        self.mutation.clone()
    }

    fn look(&mut self, _path: &str) -> TargetLook {
        std::mem::replace(&mut self.after, TargetLook::Digest("aa".to_owned()))
    }

    fn run_command(
        &mut self,
        _command: &str,
        _timeout: Option<std::time::Duration>,
    ) -> CommandResult {
        self.command.clone()
    }
}

fn shown(title: &str, seen: &Observation) -> String {
    format!(
        "--- {title} (is_error: {}, requests avoided: {})\n{seen}",
        seen.is_error, seen.account.requests_avoided
    )
}

#[test]
fn every_end_as_the_model_reads_it() {
    let ctx = PathContext::posix("/work/app", "/home/dev");
    let fused =
        FusedCallRequest::new("src/lib.rs", ctx).with_then_run(r#"{"command":"cargo test"}"#);
    let pi_084 = FusedCallRequest {
        capabilities: Capabilities {
            error_results_kept: false,
        },
        ..fused
    };
    let edited = MutationResult::ok("Successfully replaced 1 block in src/lib.rs.");
    let same = TargetLook::Digest("aa".to_owned());
    let passed = CommandResult::Returned {
        texts: vec!["test result: ok. 3 passed\n".to_owned()],
        is_error: false,
        exit_code: Some(0),
    };
    let failed = CommandResult::Returned {
        texts: vec!["test result: FAILED. 1 failed\n\nCommand exited with code 101".to_owned()],
        is_error: true,
        exit_code: Some(101),
    };
    let host = |mutation: &MutationResult, after: &TargetLook, command: &CommandResult| Fixed {
        mutation: mutation.clone(),
        after: after.clone(),
        command: command.clone(),
    };
    let cases = [
        ("a passing command", fused, host(&edited, &same, &passed)),
        ("a failing command", fused, host(&edited, &same, &failed)),
        (
            "a failing command, a host that throws failures",
            pi_084,
            host(&edited, &same, &failed),
        ),
        (
            "a target changed between the looks",
            fused,
            host(&edited, &TargetLook::Digest("bb".to_owned()), &passed),
        ),
        (
            "an edit that threw",
            fused,
            host(
                &MutationResult::threw("Could not find \"x\" in src/lib.rs."),
                &same,
                &passed,
            ),
        ),
        (
            "a command that timed out",
            fused,
            host(
                &edited,
                &same,
                &CommandResult::Threw {
                    message: "Command timed out after 30 seconds".to_owned(),
                },
            ),
        ),
        (
            "a bad then_run",
            FusedCallRequest::new("src/lib.rs", ctx).with_then_run(r#"{"command":""}"#),
            host(&edited, &same, &passed),
        ),
        (
            "a plain edit",
            FusedCallRequest::new("src/lib.rs", ctx),
            host(&edited, &same, &passed),
        ),
        (
            "a plain edit that threw",
            FusedCallRequest::new("src/lib.rs", ctx),
            host(
                &MutationResult::threw("Could not find \"x\" in src/lib.rs."),
                &same,
                &passed,
            ),
        ),
    ];
    let text: Vec<String> = cases
        .into_iter()
        .map(|(title, request, mut host)| shown(title, &driver::observe(&request, &mut host)))
        .collect();
    assert_text_snapshot!("observations", text.join("\n\n"));
}

#[test]
fn an_end_before_the_mutation_has_no_mutation_blocks() {
    let reject = Finish::Reject {
        message: "then_run.command must not be empty; the file was not modified".to_owned(),
        code: "then_run_command_empty",
    };
    let seen = reject.observation(None);
    assert_eq!(
        seen.texts,
        ["then_run.command must not be empty; the file was not modified"]
    );
    assert!(seen.is_error);
    assert_eq!(seen.account, StepAccount::default());
}

#[test]
fn the_default_host_keeps_returned_error_results() {
    assert_eq!(
        Capabilities::default(),
        Capabilities {
            error_results_kept: true
        }
    );
    // The machine starts the same for both; the default decides how failures end.
    let ctx = PathContext::posix("/w", "/h");
    let (_, first) = FusedCall::start(&FusedCallRequest::new("a", ctx));
    assert_eq!(
        first,
        Effect::RunMutation {
            target: Some("/w/a".to_owned())
        }
    );
}

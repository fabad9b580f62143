//! The conveniences a Rust host builds its reducer from: the policy and context builders,
//! a shell port's outcome as the input, the closure driver, and the texts a host prints.

use camino::Utf8Path;
use proptest::prelude::*;
use sol_core::testing::MemoryFileSystem;
use sol_core::{ModelError, ModelReply, ShellExit, ShellOutcome};
use sol_reducer::candidate::CandidateInput;
use sol_reducer::command::CommandSet;
use sol_reducer::driver::reduce_with;
use sol_reducer::{
    Decision, Done, ExitStatus, Policy, ReasonCode, ReceiptCache, ReduceContext, ShellResult,
};

use crate::support::{ROOT, TIMESTAMP, failing_log, failing_receipt, route};

fn shell_exit() -> impl Strategy<Value = ShellExit> {
    prop_oneof![
        any::<i32>().prop_map(ShellExit::Code),
        Just(ShellExit::NoCode),
        (0u64..10_000).prop_map(|ms| ShellExit::TimedOut {
            after: std::time::Duration::from_millis(ms)
        }),
        Just(ShellExit::Aborted),
    ]
}

proptest! {
    /// A shell port's outcome is the same input as the literal a host would write by hand.
    #[test]
    fn a_shell_outcome_is_the_shell_result_written_by_hand(
        output in ".{0,200}",
        exit in shell_exit(),
        dropped_bytes in any::<u64>(),
    ) {
        let outcome = ShellOutcome { output: output.clone(), exit, dropped_bytes };
        let from = ShellResult::from_outcome("call-1", "make check", &outcome);
        let by_hand = ShellResult {
            call_id: "call-1",
            command: "make check",
            exit: ExitStatus::from(exit),
            output: &output,
            full_output_log: None,
        };
        prop_assert_eq!(from, by_hand);
        let candidate = from.select(&Policy::default()).expect("make is a build command");
        prop_assert_eq!(candidate.is_error, !exit.is_success());
        prop_assert_eq!(&candidate.inline_log, &output);
    }
}

proptest! {
    // Each case builds three command sets (a regex each).
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The builders change only what they name.
    #[test]
    fn the_policy_builders_change_only_their_field(
        extra in "[a-z]{1,8}( [a-z]{1,8})?",
        tool in "[a-z_]{1,12}",
        probe in "[a-z]{1,8}( [a-z]{1,8})?",
    ) {
        let policy = Policy::default().with_command(extra.as_str()).with_shell_tool(tool.as_str());
        prop_assert_eq!(&policy.shell_tool, &tool);
        prop_assert_eq!(&policy.commands, &CommandSet::default().with(extra.as_str()));
        prop_assert!(policy.commands.matches(&extra));
        let default_matches = CommandSet::default().matches(&probe);
        prop_assert!(!default_matches || policy.commands.matches(&probe));
        let replaced = Policy::default().with_commands(CommandSet::new([extra.as_str()]));
        prop_assert_eq!(replaced.shell_tool.as_str(), "bash");
        prop_assert_eq!(replaced.commands.commands(), [extra.clone()]);
    }
}

#[test]
fn a_context_has_pi_s_policy_until_told_otherwise() {
    let route = route();
    let root = Utf8Path::new(ROOT);
    let context = ReduceContext::new(&route, root, TIMESTAMP);
    assert_eq!(context.policy, Policy::pi());
    assert_eq!(
        (context.route, context.runtime_root, context.timestamp),
        (&route, root, TIMESTAMP)
    );
    let policy = Policy::default().with_shell_tool("shell");
    assert_eq!(context.with_policy(&policy).policy.shell_tool, "shell");
}

/// A failing `cargo test` run, reduced with `reply` through the closure driver.
fn reduced(reply: Result<ModelReply, ModelError>, cache: Option<&mut ReceiptCache>) -> Done {
    let log = failing_log(150);
    let outcome = ShellOutcome {
        output: log,
        exit: ShellExit::Code(101),
        dropped_bytes: 0,
    };
    let route = route();
    let policy = Policy::default().with_shell_tool("shell");
    let context = ReduceContext::new(&route, Utf8Path::new(ROOT), TIMESTAMP).with_policy(&policy);
    let result = ShellResult::from_outcome("call-1", "cargo test", &outcome);
    let fs = MemoryFileSystem::new();
    reduce_with(&result, &context, &fs, cache, |_request| reply)
}

#[test]
fn the_closure_driver_returns_the_receipt_and_every_record() {
    let log = failing_log(150);
    let accepted = reduced(
        Ok(ModelReply::text(failing_receipt(&log)).with_usage(1800, 120)),
        None,
    );
    let receipt = accepted.receipt_text().expect("a verified receipt");
    assert!(receipt.contains("read source_artifact through shell with"));
    assert_eq!(accepted.reason(), None);
    assert_eq!(
        accepted.journal_kinds(),
        ["candidate", "provider_response", "applied"]
    );

    let rejected = reduced(Ok(ModelReply::text("not a receipt")), None);
    assert_eq!(rejected.receipt_text(), None);
    assert_eq!(rejected.reason(), Some(ReasonCode::InvalidJson));
    assert_eq!(
        rejected.journal_kinds(),
        ["candidate", "provider_response", "fallback"]
    );
}

#[test]
fn the_texts_a_host_prints() {
    let log = failing_log(150);
    let mut cache = ReceiptCache::new();
    let reply = || Ok(ModelReply::text(failing_receipt(&log)).with_usage(1800, 120));
    let accepted = reduced(reply(), Some(&mut cache));
    // The identical rerun is answered from the cache (a fresh archive holds the log again).
    let cached = reduced(reply(), Some(&mut cache));
    assert_eq!(cached.account.model_calls, 0);
    let rejected = reduced(
        Ok(ModelReply::text(
            failing_receipt(&log).replace("FAILED", "ok"),
        )),
        None,
    );
    let timed_out = reduced(
        Err(ModelError::TimedOut {
            after: sol_reducer::MODEL_TIMEOUT,
        }),
        None,
    );
    let not_candidate = Done {
        decision: Decision::Unchanged(ReasonCode::NotDiagnosticCommand),
        journal: Vec::new(),
        account: Default::default(),
    };
    let two_calls = Done {
        account: sol_core::StepAccount {
            model_calls: 2,
            ..accepted.account
        },
        ..accepted.clone()
    };
    let summaries = [
        ("accepted", &accepted),
        ("cached", &cached),
        ("rejected", &rejected),
        ("timed out", &timed_out),
        ("not a candidate", &not_candidate),
        ("two calls", &two_calls),
    ]
    .map(|(name, done)| format!("## {name}\n{done}"))
    .join("\n\n");
    assert_text_snapshot!("done_summaries", summaries);

    let exits = [
        ExitStatus::Code(0),
        ExitStatus::Code(101),
        ExitStatus::Code(-1),
        ExitStatus::NoCode,
        ExitStatus::TimedOut,
        ExitStatus::Aborted,
    ]
    .map(|exit| format!("{exit:?}: {exit}"))
    .join("\n");
    assert_text_snapshot!("exit_status_texts", exits);
}

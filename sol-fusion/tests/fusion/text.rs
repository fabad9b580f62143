//! The exact result texts, TUI texts and the classification of command results.

use sol_fusion::fused::CommandResult;
use sol_fusion::text::{self, CommandOutcome, MutationTool};

#[test]
fn markers_are_fixed() {
    assert_eq!(text::SUCCEEDED, "[then_run:succeeded]");
    assert_eq!(text::FAILED, "[then_run:failed]");
    assert_eq!(text::SKIPPED, "[then_run:skipped]");
}

#[test]
fn a_failed_mutation_keeps_its_message_first() {
    let message = text::skipped_after_mutation_failure("Could not find the exact text in a.ts.");
    let (original, rest) = message.split_once("\n\n").expect("a blank line");
    assert_eq!(original, "Could not find the exact text in a.ts.");
    assert!(rest.starts_with("[then_run:skipped] "), "{rest}");
}

#[test]
fn a_changed_target_is_reported_with_the_spec_prefix() {
    let message = text::skipped_after_change(text::CHANGED_REASON);
    assert!(message.starts_with(
        "[then_run:skipped] target content changed after the fused mutation; the command was not run."
    ));
    assert_eq!(
        text::unreadable_reason("EACCES: permission denied"),
        "target could not be read after the fused mutation: EACCES: permission denied"
    );
}

#[test]
fn the_success_block_is_the_marker_and_the_output() {
    assert_eq!(text::succeeded_block(""), "[then_run:succeeded]");
    assert_eq!(text::succeeded_block("ok\n"), "[then_run:succeeded]\nok\n");
}

#[test]
fn failure_texts_drop_empty_parts_and_fall_back_to_command_failed() {
    assert_eq!(
        text::failed_text("Successfully wrote 3 bytes to a.sh", "exit 7"),
        "Successfully wrote 3 bytes to a.sh\n\n[then_run:failed]\n\nexit 7"
    );
    assert_eq!(
        text::failed_text("", ""),
        "[then_run:failed]\n\nCommand failed."
    );
    assert_eq!(
        text::failed_text("", "legacy command failure"),
        "[then_run:failed]\n\nlegacy command failure"
    );
    assert_eq!(text::failed_block(""), "[then_run:failed]\nCommand failed.");
    assert_eq!(text::failed_block("boom"), "[then_run:failed]\nboom");
}

#[test]
fn command_results_are_classified_by_flag_and_exit_code_only() {
    use CommandOutcome::{Failed, Succeeded};
    assert_eq!(text::classify_command(false, None), Succeeded);
    assert_eq!(text::classify_command(false, Some(0)), Succeeded);
    assert_eq!(text::classify_command(true, None), Failed);
    assert_eq!(text::classify_command(true, Some(0)), Failed);
    assert_eq!(text::classify_command(false, Some(7)), Failed);
    assert_eq!(text::classify_command(false, Some(130)), Failed);
    assert_eq!(text::classify_command(false, Some(-1)), Failed);
}

/// Pi's exit code is a JavaScript number: the adapter keeps the classification of that
/// number compared with 0, also for numbers that are no `i32`.
#[test]
fn pi_exit_numbers_are_classified_as_before() {
    use CommandOutcome::{Failed, Succeeded};
    let classify = |is_error: bool, number: f64| match CommandResult::from_pi_bash(
        Vec::new(),
        is_error,
        Some(number),
    ) {
        CommandResult::Returned {
            is_error,
            exit_code,
            ..
        } => text::classify_command(is_error, exit_code),
        CommandResult::Threw { .. } => unreachable!("a returned result"),
    };
    assert_eq!(classify(false, 0.0), Succeeded);
    assert_eq!(classify(false, -0.0), Succeeded);
    assert_eq!(classify(true, 0.0), Failed);
    for number in [
        7.0,
        130.0,
        -1.0,
        0.5,
        -0.5,
        3e9,
        -3e9,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        assert_eq!(classify(false, number), Failed, "{number}");
    }
}

#[test]
fn tui_texts_are_exact() {
    assert_eq!(text::MECHANISM_LABEL, sol_fusion::MECHANISM.label());
    assert_eq!(text::badge_title(), "\u{26A1} SoL-Pi \u{B7} Action Fusion");
    assert_eq!(
        text::badge_saving(),
        "Money saved \u{B7} 1 model round-trip avoided"
    );
    assert_eq!(
        text::savings_notice(),
        "⚡ SoL-Pi · Action Fusion\nMoney saved · 1 model round-trip avoided"
    );
    assert_eq!(
        text::status_text(),
        "⚡ Action Fusion · 1 model round-trip avoided"
    );
    assert_eq!(text::STATUS_KEY, "sol-pi-savings");
    assert_eq!(text::STATUS_CLEAR_MS, 4000);
}

#[test]
fn the_descriptions_differ_per_tool() {
    let edit = text::then_run_description(MutationTool::Edit);
    let write = text::then_run_description(MutationTool::Write);
    assert_ne!(edit, write);
    assert!(edit.contains("edits are applied"));
    assert!(write.contains("file is written"));
    assert!(text::timeout_description().contains("seconds"));
}

#[test]
fn the_inert_warning_is_one_line() {
    let warning = text::inert_warning("edit\nextra");
    assert!(!warning.contains('\n'), "{warning}");
    assert!(warning.contains("then_run"));
}

#[test]
fn pis_shell_name_gives_pis_descriptions() {
    for tool in [MutationTool::Edit, MutationTool::Write] {
        assert_eq!(
            text::then_run_description_with(tool, text::SHELL_NAME),
            text::then_run_description(tool)
        );
        let other = text::then_run_description_with(tool, "zsh\n");
        assert!(other.contains("run this zsh  command"), "{other}");
        assert!(!other.contains("bash"), "{other}");
    }
    assert_eq!(
        text::command_description_with(text::SHELL_NAME),
        text::command_description()
    );
    assert!(text::command_description_with("sh").starts_with("The sh command to run"));
}

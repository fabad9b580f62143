//! Every text Action Fusion shows: result texts the model reads, schema descriptions, and
//! the savings badge, notice and status line a person sees.
//!
//! The three markers are part of the interface: hosts and scripts search tool results for
//! them, so they never change.
//!
//! ```
//! use sol_fusion::text::{self, CommandOutcome};
//!
//! assert_eq!(text::classify_command(false, Some(0)), CommandOutcome::Succeeded);
//! assert_eq!(text::succeeded_block("ok"), "[then_run:succeeded]\nok");
//! assert_eq!(
//!     text::failed_text("Successfully wrote 12 bytes to a.txt", ""),
//!     "Successfully wrote 12 bytes to a.txt\n\n[then_run:failed]\n\nCommand failed."
//! );
//! ```

/// The start of every marker below: a reader finds where a fused result's command output
/// begins by the first text block that starts with it.
///
/// ```
/// use sol_fusion::text;
///
/// for marker in [text::SUCCEEDED, text::FAILED, text::SKIPPED] {
///     assert!(marker.starts_with(text::MARKER_PREFIX));
/// }
/// ```
pub const MARKER_PREFIX: &str = "[then_run:";
/// Starts the block appended to a mutation result after the command succeeded.
pub const SUCCEEDED: &str = "[then_run:succeeded]";
/// Marks a fused call whose command failed; the mutation was kept.
pub const FAILED: &str = "[then_run:failed]";
/// Marks a fused call whose command was not run.
pub const SKIPPED: &str = "[then_run:skipped]";

/// What a failed command contributes when it produced no text.
pub const COMMAND_FAILED_FALLBACK: &str = "Command failed.";

/// The reason given when the hash guard sees the target change between the mutation and
/// the command.
pub const CHANGED_REASON: &str = "target content changed after the fused mutation";

/// The name of the mechanism on the badge and in notices.
pub const MECHANISM_LABEL: &str = "Action Fusion";
/// What one successful fused call saves.
pub const SAVING: &str = "1 model round-trip avoided";
/// The key of Pi's footer status entry that shows the saving.
pub const STATUS_KEY: &str = sol_core::tui::STATUS_KEY;
/// How long the status entry stays before the host clears it, in milliseconds.
pub const STATUS_CLEAR_MS: u32 = sol_core::tui::STATUS_CLEAR_MS;

/// The error text when the mutation failed and `then_run` was given: the mutation's own
/// message, a blank line, then a [`SKIPPED`] line.
pub fn skipped_after_mutation_failure(mutation_error: &str) -> String {
    format!(
        "{mutation_error}\n\n{SKIPPED} The file mutation did not complete, so the then_run command was not run."
    )
}

/// The error text when the target could not be confirmed unchanged after the mutation;
/// `reason` is [`CHANGED_REASON`] or [`unreadable_reason`].
pub fn skipped_after_change(reason: &str) -> String {
    format!(
        "{SKIPPED} {reason}; the command was not run. The file mutation itself was applied and is kept."
    )
}

/// The whole error text when a host must throw (Pi 0.84.2 ignores returned error results)
/// after the mutation was applied: the mutation text, then `block`, separated by a blank
/// line; an empty mutation text is left out.
pub fn after_mutation(mutation_text: &str, block: &str) -> String {
    if mutation_text.is_empty() {
        block.to_owned()
    } else {
        format!("{mutation_text}\n\n{block}")
    }
}

/// The one message when the host's shell settings cannot be read, so Action Fusion does
/// not start; `details` lists each unreadable settings file and its error.
pub fn settings_unreadable(details: &str) -> String {
    format!(
        "SoL-Pi Action Fusion is off: Pi's settings could not be read ({details}). then_run would not know which shell to use; fix the settings file and restart Pi. Other SoL-Pi mechanisms keep working."
    )
}

/// The reason given when the hash guard could not read the target after the mutation.
pub fn unreadable_reason(error: &str) -> String {
    format!("target could not be read after the fused mutation: {error}")
}

/// The text block appended to the mutation result when the command succeeded: the
/// [`SUCCEEDED`] marker, then the command output on the next line (the marker alone when
/// the output is empty).
pub fn succeeded_block(output: &str) -> String {
    if output.is_empty() {
        SUCCEEDED.to_owned()
    } else {
        format!("{SUCCEEDED}\n{output}")
    }
}

/// The whole error text of a fused call whose command failed: the mutation text, the
/// [`FAILED`] marker and the command text, leaving out empty parts, separated by blank
/// lines. An empty `command_text` becomes [`COMMAND_FAILED_FALLBACK`].
pub fn failed_text(mutation_text: &str, command_text: &str) -> String {
    [
        mutation_text,
        FAILED,
        command_text_or_fallback(command_text),
    ]
    .into_iter()
    .filter(|part| !part.is_empty())
    .collect::<Vec<_>>()
    .join("\n\n")
}

/// The text block appended after the mutation's own content blocks when a host returns a
/// failed command as an error result: the [`FAILED`] marker, then the command text (or
/// [`COMMAND_FAILED_FALLBACK`]) on the next line.
pub fn failed_block(command_text: &str) -> String {
    format!("{FAILED}\n{}", command_text_or_fallback(command_text))
}

fn command_text_or_fallback(command_text: &str) -> &str {
    if command_text.is_empty() {
        COMMAND_FAILED_FALLBACK
    } else {
        command_text
    }
}

/// How a command that returned a result (rather than throwing) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandOutcome {
    /// Not flagged as an error, and no non-zero exit code.
    Succeeded,
    /// Flagged as an error, or a non-zero exit code.
    Failed,
}

/// Classifies a returned command result from its error flag (Pi's `isError`; absent counts
/// as `false`) and its exit code, if any. The output text is never inspected: a command
/// that prints "error" but exits 0 succeeded.
pub fn classify_command(is_error: bool, exit_code: Option<i32>) -> CommandOutcome {
    let non_zero_exit = exit_code.is_some_and(|code| code != 0);
    if is_error || non_zero_exit {
        CommandOutcome::Failed
    } else {
        CommandOutcome::Succeeded
    }
}

/// The first badge line on a fused call: `⚡ SoL-Pi · Action Fusion`.
pub fn badge_title() -> String {
    sol_core::tui::badge_title(MECHANISM_LABEL)
}

/// The second badge line on a fused call: `Money saved · 1 model round-trip avoided`.
pub fn badge_saving() -> String {
    sol_core::tui::money_saved(SAVING)
}

/// The two-line notification shown after a fused command succeeded (TUI mode only).
pub fn savings_notice() -> String {
    sol_core::tui::savings_notice(MECHANISM_LABEL, SAVING)
}

/// The footer status text shown under [`STATUS_KEY`] for [`STATUS_CLEAR_MS`].
pub fn status_text() -> String {
    sol_core::tui::status_text(MECHANISM_LABEL, SAVING)
}

/// The tool whose schema gains `then_run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MutationTool {
    /// Pi's `edit` tool: exact text replacements in an existing file.
    Edit,
    /// Pi's `write` tool: creates or overwrites a whole file.
    Write,
}

/// The name Pi's schema descriptions give the follow-up command's shell, the default of
/// the `_with` descriptions.
pub const SHELL_NAME: &str = "bash";

/// The schema description of the `then_run` object, as the model reads it, for Pi's
/// [`SHELL_NAME`].
pub fn then_run_description(tool: MutationTool) -> &'static str {
    match tool {
        MutationTool::Edit => {
            "Optional. After the edits are applied, run this bash command in the same call, \
             for example to run, build, test or check the changed code. It is skipped if the \
             edits fail. A non-zero exit is reported as a failure, but the edits are kept."
        }
        MutationTool::Write => {
            "Optional. After the file is written, run this bash command in the same call, \
             for example to run, build, test or check the new file. It is skipped if the \
             write fails. A non-zero exit is reported as a failure, but the written file is \
             kept."
        }
    }
}

/// [`then_run_description`] for a harness whose commands run in another shell: `shell`
/// (such as `sh` or `PowerShell`) takes the place of `bash`, with control characters as
/// spaces. With [`SHELL_NAME`] it is Pi's text.
pub fn then_run_description_with(tool: MutationTool, shell: &str) -> String {
    then_run_description(tool).replacen(
        "this bash command",
        &format!("this {} command", one_line(shell)),
        1,
    )
}

/// The schema description of `then_run.command`, for Pi's [`SHELL_NAME`].
pub fn command_description() -> &'static str {
    "The bash command to run in the working directory once the file change has succeeded \
     (at most 65536 bytes, no NUL characters)."
}

/// [`command_description`] with `shell` in the place of `bash`, as
/// [`then_run_description_with`].
pub fn command_description_with(shell: &str) -> String {
    command_description().replacen(
        "The bash command",
        &format!("The {} command", one_line(shell)),
        1,
    )
}

fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The schema description of `then_run.timeout`.
pub fn timeout_description() -> &'static str {
    "Optional timeout for the command, in seconds, greater than 0 and at most 2147483. \
     There is no default timeout."
}

/// A one-line warning for when the active `tool_name` tool no longer accepts `then_run`.
/// Control characters in `tool_name` (line breaks included) become spaces so that the
/// warning stays on one line.
pub fn inert_warning(tool_name: &str) -> String {
    let tool = one_line(tool_name);
    format!(
        "{MECHANISM_LABEL} is inactive for {tool}: the active {tool} tool no longer accepts then_run \
         (another extension or a later registration replaced it); plain {tool} calls without \
         then_run still work."
    )
}

/// The last line of a command that was stopped because the user aborted it.
pub const ABORTED: &str = "Command aborted";

/// The output of a command followed by a blank line and its `status` line (the status
/// alone when there is no output; one final line break of the output is dropped). Used by
/// [`crate::driver::ShellCommands`] for every command that did not exit 0.
pub fn with_status(output: &str, status: &str) -> String {
    let output = output.strip_suffix('\n').unwrap_or(output);
    if output.is_empty() {
        status.to_owned()
    } else {
        format!("{output}\n\n{status}")
    }
}

/// The status line of a command that exited with a non-zero `code`, in the form Pi's bash
/// uses (the reducer reads it as the exit status).
pub fn exited_with_code(code: i32) -> String {
    format!("Command exited with code {code}")
}

/// The status line of a command that ended without an exit code.
pub fn ended_without_code() -> &'static str {
    "Command ended without an exit code (stopped by a signal)"
}

/// The status line of a command stopped by its timeout, in seconds as Pi's bash writes it.
pub fn timed_out(after: std::time::Duration) -> String {
    format!("Command timed out after {} seconds", after.as_secs_f64())
}

/// The line before a command's output when the shell kept only its end: how many bytes
/// came before.
pub fn output_dropped(bytes: u64) -> String {
    format!("[the first {bytes} bytes of the output were not kept]")
}

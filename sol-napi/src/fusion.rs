//! Action Fusion exports: the texts and decisions of `sol-fusion`, plus the
//! file digest the host compares right before a follow-up command starts.

use std::fs::File;
use std::io;

use napi_derive::napi;
use sha2::{Digest as _, Sha256};
use sol_fusion::path::{PathContext, Platform, resolve_tool_path};
use sol_fusion::text::{self, CommandOutcome, MutationTool};
use sol_fusion::then_run::parse_then_run;

use crate::boundary::quiet;

/// Every fixed text of Action Fusion the host shows to the model or the user.
#[napi(object)]
pub struct FusionTexts {
    /// Description of `then_run` on `edit`.
    pub then_run_edit: String,
    /// Description of `then_run` on `write`.
    pub then_run_write: String,
    /// Description of `then_run.command`.
    pub command: String,
    /// Description of `then_run.timeout`.
    pub timeout: String,
    /// The `[then_run:succeeded]` marker.
    pub succeeded_marker: String,
    /// First badge line on a fused row.
    pub badge_title: String,
    /// Second badge line on a fused row.
    pub badge_saving: String,
    /// The notice after a successful fused call (TUI only).
    pub savings_notice: String,
    /// The keyed status text after a successful fused call (TUI only).
    pub status_text: String,
    /// The key of that status.
    pub status_key: String,
    /// How long the status stays, in milliseconds.
    pub status_clear_ms: u32,
}

/// The fixed texts, fetched once when Action Fusion registers.
#[napi(catch_unwind)]
pub fn fusion_texts() -> FusionTexts {
    quiet(|| FusionTexts {
        then_run_edit: text::then_run_description(MutationTool::Edit).to_owned(),
        then_run_write: text::then_run_description(MutationTool::Write).to_owned(),
        command: text::command_description().to_owned(),
        timeout: text::timeout_description().to_owned(),
        succeeded_marker: text::SUCCEEDED.to_owned(),
        badge_title: text::badge_title(),
        badge_saving: text::badge_saving(),
        savings_notice: text::savings_notice(),
        status_text: text::status_text(),
        status_key: text::STATUS_KEY.to_owned(),
        status_clear_ms: text::STATUS_CLEAR_MS,
    })
}

/// A fused call as the model sent it.
#[napi(object)]
pub struct FusionCallRequest {
    /// The tool's `path` argument, unresolved.
    pub path: String,
    /// `JSON.stringify(args.then_run)`, absent when the call has no `then_run`.
    pub then_run_json: Option<String>,
    /// `ctx.cwd`.
    pub cwd: String,
    /// The user's home directory.
    pub home: String,
    /// True on native Windows (drive-path forms apply).
    pub windows: bool,
}

/// The follow-up command of a fused call.
#[napi(object)]
pub struct ThenRunArgs {
    /// The bash command, unchanged.
    pub command: String,
    /// Timeout in seconds, when given.
    pub timeout: Option<f64>,
}

/// What to do with a call: `ok` with the resolved target (absent when the path
/// could not be resolved for a plain call, which then runs unqueued), or an
/// error to return to the model before anything is changed.
#[napi(object)]
pub struct FusionCallPlan {
    /// False: reject the call with `error`; nothing has been changed.
    pub ok: bool,
    /// The tool error for the model.
    pub error: Option<String>,
    /// Stable code of that error.
    pub error_code: Option<String>,
    /// The absolute target path, the key of the per-file queue.
    pub target: Option<String>,
    /// The follow-up command, when the call has one.
    pub then_run: Option<ThenRunArgs>,
}

fn reject(code: &str, message: String) -> FusionCallPlan {
    FusionCallPlan {
        ok: false,
        error: Some(message),
        error_code: Some(code.to_owned()),
        target: None,
        then_run: None,
    }
}

/// Checks `then_run` and resolves the target path of an `edit`/`write` call.
#[napi(catch_unwind)]
pub fn fusion_plan_call(request: FusionCallRequest) -> FusionCallPlan {
    quiet(|| {
        let then_run_value = match request.then_run_json.as_deref().map(serde_json::from_str) {
            None => None,
            Some(Ok(value)) => Some(value),
            Some(Err(error)) => {
                return reject(
                    "then_run_not_json",
                    format!("then_run is not valid JSON ({error}); the file was not modified"),
                );
            }
        };
        let then_run = match parse_then_run(then_run_value.as_ref()) {
            Ok(then_run) => then_run,
            Err(error) => return reject(error.code(), error.to_string()),
        };
        let ctx = PathContext {
            cwd: &request.cwd,
            home: &request.home,
            platform: if request.windows {
                Platform::Windows
            } else {
                Platform::Posix
            },
        };
        let target = match resolve_tool_path(&request.path, &ctx) {
            Ok(target) => Some(target),
            // A fused call must know its target before anything runs.
            Err(error) if then_run.is_some() => return reject(error.code(), error.to_string()),
            // A plain call behaves exactly like the built-in tool, which reports its own error.
            Err(_) => None,
        };
        FusionCallPlan {
            ok: true,
            error: None,
            error_code: None,
            target,
            then_run: then_run.map(|then_run| ThenRunArgs {
                command: then_run.command,
                timeout: then_run.timeout_seconds,
            }),
        }
    })
}

/// The error text when the mutation failed and the command was skipped.
#[napi(catch_unwind)]
pub fn fusion_skipped_after_mutation_failure(mutation_error: String) -> String {
    quiet(|| text::skipped_after_mutation_failure(&mutation_error))
}

/// The text when the target changed (or became unreadable) before the command.
#[napi(catch_unwind)]
pub fn fusion_skipped_after_change(unreadable_error: Option<String>) -> String {
    quiet(|| match unreadable_error {
        Some(error) => text::skipped_after_change(&text::unreadable_reason(&error)),
        None => text::skipped_after_change(text::CHANGED_REASON),
    })
}

/// The block appended to the mutation result after the command succeeded.
#[napi(catch_unwind)]
pub fn fusion_succeeded_block(output: String) -> String {
    quiet(|| text::succeeded_block(&output))
}

/// The whole error message when the command failed and the host must throw.
#[napi(catch_unwind)]
pub fn fusion_failed_text(mutation_text: String, command_text: String) -> String {
    quiet(|| text::failed_text(&mutation_text, &command_text))
}

/// The block appended to the kept mutation result when the command failed.
#[napi(catch_unwind)]
pub fn fusion_failed_block(command_text: String) -> String {
    quiet(|| text::failed_block(&command_text))
}

/// The thrown text when a block follows an applied mutation (Pi 0.84.2).
#[napi(catch_unwind)]
pub fn fusion_after_mutation(mutation_text: String, block: String) -> String {
    quiet(|| text::after_mutation(&mutation_text, &block))
}

/// The message when Pi's shell settings cannot be read and Action Fusion stays off.
#[napi(catch_unwind)]
pub fn fusion_settings_unreadable(details: String) -> String {
    quiet(|| text::settings_unreadable(&details))
}

/// Whether a returned bash result means the command failed.
#[napi(catch_unwind)]
pub fn fusion_command_failed(is_error: bool, exit_code: Option<f64>) -> bool {
    quiet(|| classify_failed(is_error, exit_code))
}

fn classify_failed(is_error: bool, exit_code: Option<f64>) -> bool {
    text::classify_command(is_error, exit_code) == CommandOutcome::Failed
}

/// The one warning when the active tool no longer accepts `then_run`.
#[napi(catch_unwind)]
pub fn fusion_inert_warning(tool_name: String) -> String {
    quiet(|| text::inert_warning(&tool_name))
}

/// SHA-256 of a file's bytes, or why it could not be read.
#[napi(object)]
pub struct FileDigest {
    /// Lower-case hex digest.
    pub digest: Option<String>,
    /// The read error.
    pub error: Option<String>,
}

/// Hashes a file (following links, streaming, no size limit): the hash guard
/// before a follow-up command compares two of these.
#[napi(catch_unwind)]
pub fn file_digest(path: String) -> FileDigest {
    quiet(|| match sha256_file(&path) {
        Ok(digest) => FileDigest {
            digest: Some(digest),
            error: None,
        },
        Err(error) => FileDigest {
            digest: None,
            error: Some(error.to_string()),
        },
    })
}

/// Streams a file through SHA-256.
pub fn sha256_file(path: &str) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    io::copy(&mut file, &mut hasher)?;
    Ok(hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

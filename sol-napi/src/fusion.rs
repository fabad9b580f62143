//! Action Fusion exports: the fixed texts, the `FusedCall` step machine of
//! `sol_fusion::fused` (effects out, I/O results in, as discriminated unions), the
//! queue key, and the look at the target (a bounded digest off the JavaScript thread)
//! that the hash guard compares right before a follow-up command starts.

use std::path::Path;
use std::sync::Mutex;

use camino::{Utf8Path, Utf8PathBuf};
use napi::bindgen_prelude::{AsyncTask, Env, Task};
use napi_derive::napi;
use serde_json::Value;
use sol_core::Mechanism;
use sol_core::message::AgentMessage;
use sol_core::savings::Watched;
use sol_fusion::fused::{self, Capabilities, CommandResult, Effect, Finish, Input, MutationResult};
use sol_fusion::guard::{self, TargetLook, Unguarded};
use sol_fusion::path::{PathContext, Platform};
use sol_fusion::text::{self, MutationTool};

use crate::boundary::quiet;
use crate::engine::Engine;
use crate::savings::SharedBook;
use crate::storage::canonical_prefix;

/// The description of `then_run` on each tool.
#[napi(object)]
pub struct ThenRunDescriptions {
    /// On `edit`.
    pub edit: String,
    /// On `write`.
    pub write: String,
}

/// Every fixed text of Action Fusion the host shows to the model or the user.
#[napi(object)]
pub struct FusionTexts {
    /// Description of `then_run`, by tool.
    pub then_run: ThenRunDescriptions,
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
        then_run: ThenRunDescriptions {
            edit: text::then_run_description(MutationTool::Edit).to_owned(),
            write: text::then_run_description(MutationTool::Write).to_owned(),
        },
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

pub(crate) fn path_context<'a>(cwd: &'a str, home: &'a str, windows: bool) -> PathContext<'a> {
    PathContext {
        cwd,
        home,
        platform: if windows {
            Platform::Windows
        } else {
            Platform::Posix
        },
    }
}

/// A fused `edit`/`write` call as the tool's `execute` receives it.
#[napi(object)]
pub struct FusedCallRequest {
    /// The call's arguments as Pi gives them to `execute` (`path` and `then_run` are read).
    #[napi(ts_type = "Record<string, unknown>")]
    pub params: Value,
    /// `ctx.cwd`.
    pub cwd: String,
    /// The user's home directory.
    pub home: String,
    /// `process.platform` (`win32`: the drive-path forms apply).
    pub platform: String,
    /// Capability: this Pi keeps a returned `isError: true` result (found by feature
    /// detection); when false, failures are thrown.
    pub error_results_kept: bool,
    /// `parentToolCallId` of the call's `tool_call` event: set for a call a script made.
    pub parent_tool_call_id: Option<String>,
}

/// The savings notice and keyed status to show after a successful fused call (TUI only).
#[napi(object)]
pub struct FusedNotice {
    /// The notice.
    pub notice: String,
    /// The status key.
    pub status_key: String,
    /// The status text.
    pub status: String,
    /// How long the status stays, in milliseconds.
    pub status_clear_ms: u32,
}

/// What the host does next for a [`FusedCall`] (`sol_fusion::fused::Effect`).
#[napi(discriminant = "kind", discriminant_case = "camelCase")]
pub enum FusedEffect {
    /// Throw `message` before anything ran.
    Reject {
        /// The tool error for the model.
        message: String,
        /// Its stable code.
        code: String,
    },
    /// Run Pi's own edit/write with the arguments minus `then_run`, after waiting for the
    /// call's place in the line of every key in `queueKeys` (none: run at once).
    RunMutation {
        /// The per-file queue keys (see [`queue_keys`]), computed now so the call takes its
        /// place synchronously.
        queue_keys: Vec<String>,
    },
    /// Look at `path` (`fileDigest`) and report the look.
    Digest {
        /// The absolute target.
        path: String,
    },
    /// Let the event loop turn once (`setImmediate`), then report `turnYielded`.
    YieldTurn,
    /// Run the command through Pi's bash tool.
    RunCommand {
        /// The command.
        command: String,
        /// Timeout in seconds, when given.
        timeout: Option<f64>,
    },
    /// Return the mutation's result as it is.
    ReturnMutation,
    /// Throw the mutation's own error again.
    RethrowMutationError,
    /// Return the mutation's result with `append` as text blocks after its own.
    Return {
        /// Text blocks to append.
        append: Vec<String>,
        /// The savings notice to show, if any.
        notice: Option<FusedNotice>,
        /// The id the session's book registered this result under (see `watch` below).
        watch: Option<u32>,
    },
    /// Return the mutation's result with `append` after its blocks and `isError: true`.
    ReturnError {
        /// Text blocks to append.
        append: Vec<String>,
        /// The id the session's book registered the result under: the first request that
        /// carries a tool result of exactly its text blocks is reported with it. Absent for a
        /// script's call (its result goes to the script), a call made without the engine, or a
        /// result that is not all text.
        watch: Option<u32>,
    },
    /// Throw an error with `message`.
    Throw {
        /// The whole error text.
        message: String,
    },
}

impl From<Effect> for FusedEffect {
    fn from(effect: Effect) -> Self {
        match effect {
            Effect::RunMutation { target } => FusedEffect::RunMutation {
                queue_keys: target.as_deref().map(queue_keys).unwrap_or_default(),
            },
            Effect::Digest { path } => FusedEffect::Digest { path },
            Effect::YieldTurn => FusedEffect::YieldTurn,
            // Pi's bash takes the model's number of seconds, unrounded.
            Effect::RunCommand {
                command,
                timeout_seconds,
                ..
            } => FusedEffect::RunCommand {
                command,
                timeout: timeout_seconds,
            },
            Effect::Finish(Finish::Reject { message, code }) => FusedEffect::Reject {
                message,
                code: code.to_owned(),
            },
            Effect::Finish(Finish::ReturnMutation) => FusedEffect::ReturnMutation,
            Effect::Finish(Finish::RethrowMutationError) => FusedEffect::RethrowMutationError,
            Effect::Finish(Finish::Return { append, notice, .. }) => FusedEffect::Return {
                append,
                watch: None,
                notice: notice.then(|| FusedNotice {
                    notice: text::savings_notice(),
                    status_key: text::STATUS_KEY.to_owned(),
                    status: text::status_text(),
                    status_clear_ms: text::STATUS_CLEAR_MS,
                }),
            },
            Effect::Finish(Finish::ReturnError { append, .. }) => FusedEffect::ReturnError {
                append,
                watch: None,
            },
            Effect::Finish(Finish::Throw { message, .. }) => FusedEffect::Throw { message },
        }
    }
}

/// The result of the last effect, reported by the host (`sol_fusion::fused::Input`).
#[napi(discriminant = "kind", discriminant_case = "camelCase")]
pub enum FusedInput {
    /// Pi's edit/write returned this result (its text blocks and `isError` are read).
    MutationReturned {
        /// The tool result.
        #[napi(ts_type = "unknown")]
        result: Value,
    },
    /// Pi's edit/write threw.
    MutationThrew {
        /// The error's message.
        message: String,
    },
    /// The look at the target (`fileDigest`; a rejected look as `{ error }`).
    Digest {
        /// The look.
        look: FileDigest,
    },
    /// The event loop turned once.
    TurnYielded,
    /// Pi's bash returned this result (its text blocks, `isError` and, on 1.x,
    /// `structuredContent.exit_code` are read).
    CommandReturned {
        /// The tool result.
        #[napi(ts_type = "unknown")]
        result: Value,
    },
    /// Pi's bash threw (a timeout, an abort; on 0.84.2 also a non-zero exit).
    CommandThrew {
        /// The error's message.
        message: String,
    },
}

impl From<FusedInput> for Input {
    fn from(input: FusedInput) -> Self {
        match input {
            FusedInput::MutationReturned { result } => Input::Mutation(MutationResult::Returned {
                texts: texts_of(&result),
                is_error: is_error(&result),
            }),
            FusedInput::MutationThrew { message } => {
                Input::Mutation(MutationResult::Threw { message })
            }
            FusedInput::Digest { look } => Input::Digest(look.look()),
            FusedInput::TurnYielded => Input::TurnYielded,
            FusedInput::CommandReturned { result } => Input::Command(CommandResult::from_pi_bash(
                texts_of(&result),
                is_error(&result),
                result
                    .get("structuredContent")
                    .and_then(|structured| structured.get("exit_code"))
                    .and_then(Value::as_f64),
            )),
            FusedInput::CommandThrew { message } => {
                Input::Command(CommandResult::Threw { message })
            }
        }
    }
}

/// The `text` of each text block of a tool result, in order.
pub fn texts_of(result: &Value) -> Vec<String> {
    sol_core::message::text_blocks(result)
        .map(str::to_owned)
        .collect()
}

/// `result.isError === true`.
fn is_error(result: &Value) -> bool {
    result.get("isError").and_then(Value::as_bool) == Some(true)
}

/// One fused `edit`/`write` call: `sol_fusion::fused::FusedCall` behind napi. `start()`
/// gives the first effect; `step()` takes the result of each effect and gives the next,
/// until a finishing one (`reject`, `returnMutation`, `rethrowMutationError`, `return`,
/// `returnError`, `throw`).
#[napi]
pub struct FusedCall {
    machine: Mutex<Machine>,
    /// The session's savings book, where the call's finishing step records its account.
    book: Option<SharedBook>,
    /// A script's call (codemode): its result goes to the script, no request carries it.
    nested: bool,
}

struct Machine {
    call: fused::FusedCall,
    first: Option<Effect>,
    /// The tokens of the mutation's own result, when it returned one of text blocks only and
    /// the book may look for it (a call made with the engine, not a script's).
    mutation_tokens: Option<u64>,
}

#[napi]
impl FusedCall {
    /// Checks the call (then_run, target); nothing runs yet. Made with the session's `engine`,
    /// the finishing step records the call's account in its book.
    #[napi(constructor)]
    pub fn new(request: FusedCallRequest, engine: Option<&Engine>) -> Self {
        let ctx = path_context(&request.cwd, &request.home, request.platform == "win32");
        let path = request
            .params
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let then_run_json = request
            .params
            .get("then_run")
            .map(|then_run| then_run.to_string());
        let (call, first) = fused::FusedCall::start(&fused::FusedCallRequest {
            path,
            then_run_json: then_run_json.as_deref(),
            ctx,
            capabilities: Capabilities {
                error_results_kept: request.error_results_kept,
            },
            parent_tool_call_id: request.parent_tool_call_id.as_deref(),
        });
        FusedCall {
            machine: Mutex::new(Machine {
                call,
                first: Some(first),
                mutation_tokens: None,
            }),
            book: engine.map(|engine| engine.book.clone()),
            nested: request.parent_tool_call_id.is_some(),
        }
    }

    /// The first effect: `reject` or `runMutation` (with the queue key).
    #[napi(catch_unwind)]
    pub fn start(&self) -> FusedEffect {
        quiet(|| {
            let mut machine = self.machine();
            match machine.first.take() {
                Some(effect) => effect.into(),
                None => internal_error("start() was called twice"),
            }
        })
    }

    /// The next effect, from the result of the last one.
    #[napi(catch_unwind)]
    pub fn step(&self, input: FusedInput) -> FusedEffect {
        quiet(|| {
            let mut machine = self.machine();
            if machine.first.is_some() {
                return internal_error("step() was called before start()");
            }
            // Sized only for a result the book may look for (not a script's, not without it).
            if let FusedInput::MutationReturned { result } = &input
                && self.book.is_some()
                && !self.nested
            {
                machine.mutation_tokens = text_result_tokens(result);
            }
            let effect = machine.call.step(input.into());
            let Some(book) = &self.book else {
                return effect.into();
            };
            if let Effect::Finish(finish) = &effect {
                book.record_step(Mechanism::ActionFusion, finish.account());
            }
            let mut effect = FusedEffect::from(effect);
            // A result sized above (never a script's) with the command's output after it.
            if let FusedEffect::Return { append, watch, .. }
            | FusedEffect::ReturnError { append, watch } = &mut effect
                && !append.is_empty()
                && let Some(tokens) = machine.mutation_tokens
            {
                *watch = Some(book.watch(Watched::Fused { tokens }));
            }
            effect
        })
    }
}

/// A tool result's tokens by the estimate, when each of its blocks has a text (no content
/// counts as none); `None` otherwise.
fn text_result_tokens(result: &Value) -> Option<u64> {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if !blocks
        .iter()
        .all(|block| block.get("text").is_some_and(Value::is_string))
    {
        return None;
    }
    let message = serde_json::json!({ "role": "toolResult", "content": blocks });
    Some(AgentMessage::from_value(message).estimated_tokens())
}

impl FusedCall {
    fn machine(&self) -> std::sync::MutexGuard<'_, Machine> {
        self.machine
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn internal_error(what: &str) -> FusedEffect {
    FusedEffect::Throw {
        message: format!("Action Fusion: internal error: {what}"),
    }
}

/// One error Pi's `SettingsManager.drainErrors()` reported.
#[napi(object)]
pub struct FusionSettingsError {
    /// `global` or `project`.
    pub scope: String,
    /// The settings file, when Pi names it.
    pub path: Option<String>,
    /// The error's message.
    pub message: String,
}

/// The message when Pi's shell settings cannot be read and Action Fusion stays off.
#[napi(catch_unwind)]
pub fn fusion_settings_unreadable(errors: Vec<FusionSettingsError>) -> String {
    quiet(|| text::settings_unreadable(&settings_details(&errors)))
}

/// The errors as one clause: `<scope> settings[ <path>]: <message>`, joined with `; `.
pub fn settings_details(errors: &[FusionSettingsError]) -> String {
    errors
        .iter()
        .map(
            |error| match error.path.as_deref().filter(|path| !path.is_empty()) {
                Some(path) => format!("{} settings {path}: {}", error.scope, error.message),
                None => format!("{} settings: {}", error.scope, error.message),
            },
        )
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether a row of a call with these `then_run` arguments carries the Action Fusion badge:
/// a fused call (any `then_run` JavaScript counts as true) that has not ended as an error.
#[napi(catch_unwind)]
pub fn fusion_shows_badge(
    #[napi(ts_arg_type = "unknown")] then_run: Option<Value>,
    is_error: Option<bool>,
) -> bool {
    quiet(|| then_run.as_ref().is_some_and(truthy) && is_error != Some(true))
}

/// JavaScript truthiness of a JSON value.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0 && !n.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The one warning when the active tool no longer accepts `then_run`.
#[napi(catch_unwind)]
pub fn fusion_inert_warning(tool_name: String) -> String {
    quiet(|| text::inert_warning(&tool_name))
}

/// One look at a fused call's target, as data: exactly one field is set.
#[napi(object)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDigest {
    /// Lower-case hex SHA-256 of a regular file read to the end.
    pub digest: Option<String>,
    /// Why the target was not hashed: a code of `sol_fusion::guard::Unguarded`
    /// (`fifo`, `device`, `socket`, `directory`, `other`, `too_large`, `too_slow`).
    pub unguarded: Option<String>,
    /// The error when the target could not be looked at or read.
    pub error: Option<String>,
}

impl From<TargetLook> for FileDigest {
    fn from(look: TargetLook) -> Self {
        let mut out = FileDigest {
            digest: None,
            unguarded: None,
            error: None,
        };
        match look {
            TargetLook::Digest(digest) => out.digest = Some(digest),
            TargetLook::Unguarded(reason) => out.unguarded = Some(reason.code().to_owned()),
            TargetLook::Unreadable(error) => out.error = Some(error),
        }
        out
    }
}

impl FileDigest {
    fn look(&self) -> TargetLook {
        if let Some(error) = &self.error {
            return TargetLook::Unreadable(error.clone());
        }
        if let Some(code) = &self.unguarded {
            return TargetLook::Unguarded(Unguarded::from_code(code).unwrap_or(Unguarded::Other));
        }
        match &self.digest {
            Some(digest) => TargetLook::Digest(digest.clone()),
            None => TargetLook::Unreadable("the target's digest is missing".to_owned()),
        }
    }
}

/// The hash guard's work on the libuv thread pool: one look at one path.
pub struct DigestTask {
    path: String,
}

impl Task for DigestTask {
    type Output = FileDigest;
    type JsValue = FileDigest;

    fn compute(&mut self) -> napi::Result<FileDigest> {
        // A panic must not unwind out of the thread-pool callback (that aborts Node).
        let path = std::mem::take(&mut self.path);
        std::panic::catch_unwind(move || quiet(|| guard::look_at(Path::new(&path)).into())).map_err(
            |panic| {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|text| (*text).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_owned());
                napi::Error::from_reason(format!("file digest panicked: {message}"))
            },
        )
    }

    fn resolve(&mut self, _env: Env, output: FileDigest) -> napi::Result<FileDigest> {
        Ok(output)
    }
}

/// Looks at a fused call's target for the hash guard, off the JavaScript thread
/// (a Promise resolved from the libuv thread pool). Only a regular file is read,
/// and only within the size cap and time budget of `sol_fusion::guard`; a FIFO,
/// device, socket or directory is never opened.
#[napi(catch_unwind, ts_return_type = "Promise<FileDigest>")]
pub fn file_digest(path: String) -> AsyncTask<DigestTask> {
    quiet(|| AsyncTask::new(DigestTask { path }))
}

/// The keys of the per-file queue, computed synchronously so that a call takes its place
/// in line the moment it starts. A call waits for the calls before it that share any of its
/// keys, so every name of one file shares a line:
///
/// - the resolved path: the canonical form of the deepest existing ancestor of `target`
///   with the missing part appended, where a final symbolic link whose target does not
///   exist yet is followed too (a write through it creates that target); `target` itself
///   when that fails. A symlink and the name it points to get the same path, whether the
///   file exists yet or not.
/// - on Unix, when the file exists, its identity `inode:<device>:<inode>`: a hard link has
///   another path but the same identity.
///
/// A file created by an earlier queued write is missing when the message's calls take
/// their places: every call through its name or a symlink then shares the resolved path,
/// and a hard link cannot exist before the file does. Once the file exists, a call carries
/// both keys, so it lines up behind calls through any name.
pub fn queue_keys(target: &str) -> Vec<String> {
    let resolved = resolved_path(Utf8Path::new(target));
    let mut keys = Vec::with_capacity(2);
    #[cfg(unix)]
    if let Some(path) = &resolved
        && let Ok(metadata) = std::fs::metadata(path)
    {
        use std::os::unix::fs::MetadataExt as _;
        keys.push(format!("inode:{}:{}", metadata.dev(), metadata.ino()));
    }
    keys.insert(
        0,
        resolved.map_or_else(|| target.to_owned(), |path| path.to_string()),
    );
    keys
}

/// How many symbolic links [`resolved_path`] follows at the end of a path whose target is
/// missing (the limit of Linux's own resolution).
const MAX_LINK_HOPS: u32 = 40;

/// `target` with every link resolved, the last one included when what it points to does
/// not exist yet; `None` when no existing ancestor has a canonical form.
fn resolved_path(target: &Utf8Path) -> Option<Utf8PathBuf> {
    let mut path = canonical_prefix(target).ok()?;
    for _ in 0..MAX_LINK_HOPS {
        // A canonical path that exists is no link: only a dangling final link reads here.
        let Ok(link) = std::fs::read_link(&path) else {
            return Some(path);
        };
        let link = Utf8PathBuf::from_path_buf(link).ok()?;
        path = canonical_prefix(&path.parent()?.join(link)).ok()?;
    }
    Some(path)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn look(path: &Path) -> TargetLook {
        guard::look_at(path)
    }

    // The looks themselves are tested in sol-host (tests/host/digest.rs) and their mapping
    // to the guard's words in sol-fusion (tests/fusion/on_disk.rs); here, only that the
    // export's look is that one.
    #[test]
    fn the_export_looks_with_the_guards_look() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "abc").expect("write");
        assert_eq!(
            look(&file),
            TargetLook::Digest(
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_owned()
            )
        );
        assert_eq!(
            look(dir.path()),
            TargetLook::Unguarded(Unguarded::Directory)
        );
        assert!(matches!(
            look(&dir.path().join("missing")),
            TargetLook::Unreadable(_)
        ));
    }

    #[test]
    fn a_result_is_sized_for_the_book_only_when_each_block_has_a_text() {
        let text = |text: &str| serde_json::json!({ "type": "text", "text": text });
        // Pi's estimate: the characters of the text blocks, four to a token, rounded up.
        let two_blocks =
            serde_json::json!({ "content": [text("Successfully wrote 12 bytes"), text("ok")] });
        assert_eq!(text_result_tokens(&two_blocks), Some(8));
        assert_eq!(text_result_tokens(&serde_json::json!({})), Some(0));
        let image = serde_json::json!({ "content": [text("a"), { "type": "image", "data": "", "mimeType": "image/png" }] });
        assert_eq!(text_result_tokens(&image), None);
    }

    #[test]
    fn looks_cross_as_data_and_back() {
        for look in [
            TargetLook::Digest("ab".to_owned()),
            TargetLook::Unguarded(Unguarded::TooLarge),
            TargetLook::Unreadable("EACCES".to_owned()),
        ] {
            assert_eq!(FileDigest::from(look.clone()).look(), look);
        }
    }

    #[test]
    fn the_queue_key_is_canonical_also_for_missing_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let real = Utf8Path::from_path(dir.path()).expect("utf-8").to_owned();
        let canonical = canonical_prefix(&real).expect("canonical");
        std::fs::write(real.join("a.txt"), "x").expect("write");
        symlink(&real, real.join("linked")).expect("symlink");
        let keys = queue_keys(real.join("linked/a.txt").as_str());
        assert_eq!(keys[0], canonical.join("a.txt").as_str());
        assert_eq!(
            queue_keys(real.join("linked/new/b.txt").as_str()),
            [canonical.join("new/b.txt").as_str()]
        );
        // A path below a regular file has no canonical form: the target itself is the key.
        let below_file = real.join("a.txt/c");
        assert_eq!(queue_keys(below_file.as_str()), [below_file.as_str()]);
    }

    /// A file's name, a hard link and a symlink to it share a key; so do a missing file's
    /// name and a dangling symlink to it, and once the file exists, both keep the key they
    /// had while it was missing.
    #[test]
    fn every_name_of_one_file_shares_a_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        let real = Utf8Path::from_path(dir.path()).expect("utf-8").to_owned();
        let canonical = canonical_prefix(&real).expect("canonical");
        let shares = |a: &[String], b: &[String]| a.iter().any(|key| b.contains(key));

        symlink("a.txt", real.join("alias.txt")).expect("a dangling symlink");
        symlink("alias.txt", real.join("alias2.txt")).expect("a chain");
        let missing = queue_keys(real.join("a.txt").as_str());
        assert_eq!(missing, [canonical.join("a.txt").as_str()]);
        assert_eq!(queue_keys(real.join("alias.txt").as_str()), missing);
        assert_eq!(queue_keys(real.join("alias2.txt").as_str()), missing);

        std::fs::write(real.join("a.txt"), "x").expect("created");
        std::fs::hard_link(real.join("a.txt"), real.join("hard.txt")).expect("hard link");
        let name = queue_keys(real.join("a.txt").as_str());
        let hard = queue_keys(real.join("hard.txt").as_str());
        let soft = queue_keys(real.join("alias.txt").as_str());
        assert_eq!(name.len(), 2, "{name:?}");
        assert!(name[1].starts_with("inode:"), "{name:?}");
        assert!(shares(&name, &missing), "the path it had while missing");
        assert!(shares(&hard, &name) && shares(&soft, &name) && shares(&soft, &missing));
        assert_ne!(hard[0], name[0], "a hard link has its own path");

        let other = real.join("b.txt");
        std::fs::write(&other, "y").expect("another file");
        assert!(!shares(&queue_keys(other.as_str()), &name));

        // A loop of links ends; the call still gets a key.
        symlink("loop1", real.join("loop2")).expect("link");
        symlink("loop2", real.join("loop1")).expect("link");
        assert_eq!(queue_keys(real.join("loop1").as_str()).len(), 1);
    }
}

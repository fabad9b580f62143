//! Action Fusion exports: the texts and decisions of `sol-fusion`, the queue key,
//! and the look at the target (a bounded digest off the JavaScript thread) that the
//! hash guard compares right before a follow-up command starts.

use std::fs::File;
use std::io::{self, Read as _};
use std::path::Path;
use std::time::{Duration, Instant};

use camino::Utf8Path;
use napi::bindgen_prelude::{AsyncTask, Env, Task};
use napi_derive::napi;
use sha2::{Digest as _, Sha256};
use sol_fusion::guard::{
    self, DIGEST_TIME_BUDGET_MS, GuardDecision, MAX_DIGEST_BYTES, TargetLook, Unguarded,
};
use sol_fusion::path::{PathContext, Platform, resolve_tool_path};
use sol_fusion::text::{self, CommandOutcome, MutationTool};
use sol_fusion::then_run::parse_then_run;

use crate::boundary::quiet;
use crate::storage::canonical_prefix;

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
        std::panic::catch_unwind(move || {
            quiet(|| digest_target(Path::new(&path), MAX_DIGEST_BYTES, DIGEST_TIME_BUDGET).into())
        })
        .map_err(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|text| (*text).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            napi::Error::from_reason(format!("file digest panicked: {message}"))
        })
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

/// How long one look may read, from `sol_fusion::guard::DIGEST_TIME_BUDGET_MS`.
pub const DIGEST_TIME_BUDGET: Duration = Duration::from_millis(DIGEST_TIME_BUDGET_MS);

const CHUNK_BYTES: usize = 256 * 1024;

/// One look at `path` for the hash guard. Follows links; hashes only a regular file of
/// at most `max_bytes`, opened non-blocking (and without becoming a controlling
/// terminal) and checked again on the open handle; gives up as too slow once reading
/// has taken `budget` (checked between chunks; a zero budget gives up after the first).
pub fn digest_target(path: &Path, max_bytes: u64, budget: Duration) -> TargetLook {
    let started = Instant::now();
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) => return TargetLook::Unreadable(error.to_string()),
    };
    if let Some(reason) = unhashable(&metadata, max_bytes) {
        return TargetLook::Unguarded(reason);
    }
    let mut file = match open_nonblocking(path) {
        Ok(file) => file,
        Err(error) => return TargetLook::Unreadable(error.to_string()),
    };
    // The path may have been replaced between the stat and the open.
    let opened = match file.metadata() {
        Ok(metadata) => metadata,
        Err(error) => return TargetLook::Unreadable(error.to_string()),
    };
    if let Some(reason) = unhashable(&opened, max_bytes) {
        return TargetLook::Unguarded(reason);
    }
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; CHUNK_BYTES];
    let mut total: u64 = 0;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return TargetLook::Unreadable(error.to_string()),
        };
        total = total.saturating_add(read as u64);
        // The file grew past the cap while it was read.
        if total > max_bytes {
            return TargetLook::Unguarded(Unguarded::TooLarge);
        }
        hasher.update(&buffer[..read]);
        if started.elapsed() >= budget {
            return TargetLook::Unguarded(Unguarded::TooSlow);
        }
    }
    TargetLook::Digest(
        hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect(),
    )
}

/// Why a file with this metadata is not hashed: not a regular file, or over `max_bytes`.
fn unhashable(metadata: &std::fs::Metadata, max_bytes: u64) -> Option<Unguarded> {
    not_regular(&metadata.file_type())
        .or_else(|| (metadata.len() > max_bytes).then_some(Unguarded::TooLarge))
}

fn not_regular(file_type: &std::fs::FileType) -> Option<Unguarded> {
    if file_type.is_file() {
        return None;
    }
    if file_type.is_dir() {
        return Some(Unguarded::Directory);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return Some(Unguarded::Fifo);
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return Some(Unguarded::Device);
        }
        if file_type.is_socket() {
            return Some(Unguarded::Socket);
        }
    }
    Some(Unguarded::Other)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// What the hash guard decided: run the command (with a one-line note when the guard
/// could not be applied), or skip it with the `[then_run:skipped]` block.
#[napi(object)]
pub struct FusionGuard {
    /// True: run the command.
    pub run: bool,
    /// The line to show before the command's block when the guard was not applied.
    pub note: Option<String>,
    /// The `[then_run:skipped]` block when the command must not run.
    pub skipped: Option<String>,
}

/// Decides from the look right after the mutation and the look right before the command.
#[napi(catch_unwind)]
pub fn fusion_guard(before: FileDigest, after: FileDigest) -> FusionGuard {
    quiet(|| match guard::decide(&before.look(), &after.look()) {
        GuardDecision::Run { note } => FusionGuard {
            run: true,
            note,
            skipped: None,
        },
        GuardDecision::Skip { text } => FusionGuard {
            run: false,
            note: None,
            skipped: Some(text),
        },
    })
}

/// The key of the per-file queue, computed synchronously so that a call takes its place
/// in line the moment it starts: the canonical form of the deepest existing ancestor of
/// `target` with the missing part appended, or `target` itself when that fails.
#[napi(catch_unwind)]
pub fn fusion_queue_key(target: String) -> String {
    quiet(|| queue_key(&target))
}

/// See [`fusion_queue_key`].
pub fn queue_key(target: &str) -> String {
    canonical_prefix(Utf8Path::new(target))
        .map_or_else(|_| target.to_owned(), |key| key.to_string())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::symlink;
    use std::process::Command;

    use super::*;

    fn look(path: &Path) -> TargetLook {
        digest_target(path, MAX_DIGEST_BYTES, DIGEST_TIME_BUDGET)
    }

    #[test]
    fn a_regular_file_is_hashed_through_links() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "abc").expect("write");
        let abc = TargetLook::Digest(
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_owned(),
        );
        assert_eq!(look(&file), abc);
        let link = dir.path().join("link");
        symlink(&file, &link).expect("symlink");
        assert_eq!(look(&link), abc);
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "").expect("write");
        assert_eq!(
            look(&empty),
            TargetLook::Digest(
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".to_owned()
            )
        );
    }

    #[test]
    fn a_fifo_is_not_opened() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("pipe");
        let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(status.success());
        // No writer exists: opening it for reading would block this test forever.
        assert_eq!(look(&fifo), TargetLook::Unguarded(Unguarded::Fifo));
        let link = dir.path().join("link");
        symlink(&fifo, &link).expect("symlink");
        assert_eq!(look(&link), TargetLook::Unguarded(Unguarded::Fifo));
    }

    #[test]
    fn a_link_to_dev_zero_is_a_device() {
        let dir = tempfile::tempdir().expect("temp dir");
        let link = dir.path().join("zero");
        symlink("/dev/zero", &link).expect("symlink");
        assert_eq!(look(&link), TargetLook::Unguarded(Unguarded::Device));
        assert_eq!(
            look(Path::new("/dev/null")),
            TargetLook::Unguarded(Unguarded::Device)
        );
    }

    #[test]
    fn a_directory_and_a_socket_are_not_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(
            look(dir.path()),
            TargetLook::Unguarded(Unguarded::Directory)
        );
        let socket = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
        assert_eq!(look(&socket), TargetLook::Unguarded(Unguarded::Socket));
    }

    #[test]
    fn a_sparse_file_over_the_cap_is_too_large_without_being_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("big.dat");
        let handle = File::create(&file).expect("create");
        handle.set_len(MAX_DIGEST_BYTES + 1).expect("set_len");
        assert_eq!(look(&file), TargetLook::Unguarded(Unguarded::TooLarge));
        // Exactly at the cap is still hashed (here with a small cap).
        std::fs::write(&file, "abcd").expect("write");
        assert!(matches!(
            digest_target(&file, 4, DIGEST_TIME_BUDGET),
            TargetLook::Digest(_)
        ));
        assert_eq!(
            digest_target(&file, 3, DIGEST_TIME_BUDGET),
            TargetLook::Unguarded(Unguarded::TooLarge)
        );
    }

    #[test]
    fn reading_stops_once_the_time_budget_is_spent() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "abc").expect("write");
        assert_eq!(
            digest_target(&file, MAX_DIGEST_BYTES, Duration::ZERO),
            TargetLook::Unguarded(Unguarded::TooSlow)
        );
    }

    #[test]
    fn a_missing_target_is_unreadable() {
        let dir = tempfile::tempdir().expect("temp dir");
        let TargetLook::Unreadable(error) = look(&dir.path().join("missing")) else {
            panic!("a missing file cannot be read");
        };
        assert!(error.contains("No such file"), "{error}");
        let dangling = dir.path().join("dangling");
        symlink(dir.path().join("nowhere"), &dangling).expect("symlink");
        assert!(matches!(look(&dangling), TargetLook::Unreadable(_)));
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
        let key = queue_key(real.join("linked/a.txt").as_str());
        assert_eq!(key, canonical.join("a.txt").as_str());
        assert_eq!(
            queue_key(real.join("linked/new/b.txt").as_str()),
            canonical.join("new/b.txt").as_str()
        );
        // A path below a regular file has no canonical form: the target itself is the key.
        let below_file = real.join("a.txt/c");
        assert_eq!(queue_key(below_file.as_str()), below_file.as_str());
    }
}

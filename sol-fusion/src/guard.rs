//! The hash guard: whether a fused call's command may run, from two looks at the target
//! that the host takes after the mutation (one right after it, one right before the
//! command).
//!
//! Only a regular file can be guarded: the host hashes it (bounded in size and time) and
//! the two digests must agree. Anything else cannot be hashed without hanging or never
//! ending (a FIFO blocks its reader, `/dev/zero` has no end), so the host does not read it
//! and reports an [`Unguarded`] reason instead. The rule:
//!
//! - the target could not be read (it vanished, or a regular file failed to read), or the
//!   two looks disagree (other bytes, or another kind of file): the command is skipped, as
//!   [`crate::text::skipped_after_change`] says;
//! - the target could not be guarded (not a regular file, too large, too slow) and is the
//!   same kind of file both times: the command runs, and the result carries one line,
//!   [`unguarded_note`], saying that the guard was not applied and why;
//! - two equal digests: the command runs, with nothing added.
//!
//! ```
//! use sol_fusion::guard::{decide, GuardDecision, TargetLook, Unguarded};
//!
//! let fifo = TargetLook::Unguarded(Unguarded::Fifo);
//! let GuardDecision::Run { note: Some(note) } = decide(&fifo, &fifo) else {
//!     unreachable!("a FIFO runs its command unguarded");
//! };
//! assert!(note.starts_with("Hash guard not applied (fifo): "));
//!
//! let digest = |hex: &str| TargetLook::Digest(hex.to_owned());
//! assert_eq!(decide(&digest("ab"), &digest("ab")), GuardDecision::Run { note: None });
//! assert!(matches!(decide(&digest("ab"), &digest("cd")), GuardDecision::Skip { .. }));
//! ```

use crate::text;

/// The largest target the host hashes, in bytes (64 MiB). Pi's own `edit` holds the whole
/// file in memory as a string; a larger target is not source code, and two reads of it
/// per fused call would cost more than the round-trip the call saves.
pub const MAX_DIGEST_BYTES: u64 = 64 * 1024 * 1024;

/// How long one digest may read before the host gives up on it, in milliseconds. The host
/// checks it between chunks, so a slow disk or network file system cannot hold the call.
pub const DIGEST_TIME_BUDGET_MS: u64 = 5_000;

/// [`DIGEST_TIME_BUDGET_MS`] as a [`Duration`](std::time::Duration).
pub const DIGEST_TIME_BUDGET: std::time::Duration =
    std::time::Duration::from_millis(DIGEST_TIME_BUDGET_MS);

/// Why a target was not hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unguarded {
    /// A named pipe: opening it for reading waits for a writer, reading it takes data
    /// meant for another reader.
    Fifo,
    /// A character or block device, such as `/dev/zero` or a terminal.
    Device,
    /// A Unix domain socket.
    Socket,
    /// A directory.
    Directory,
    /// Another kind of file that is not a regular file.
    Other,
    /// A regular file larger than [`MAX_DIGEST_BYTES`].
    TooLarge,
    /// A regular file whose reading took longer than [`DIGEST_TIME_BUDGET_MS`].
    TooSlow,
}

impl Unguarded {
    /// Every reason, in a fixed order.
    pub const ALL: [Unguarded; 7] = [
        Unguarded::Fifo,
        Unguarded::Device,
        Unguarded::Socket,
        Unguarded::Directory,
        Unguarded::Other,
        Unguarded::TooLarge,
        Unguarded::TooSlow,
    ];

    /// The stable code that crosses the host boundary.
    pub fn code(self) -> &'static str {
        match self {
            Unguarded::Fifo => "fifo",
            Unguarded::Device => "device",
            Unguarded::Socket => "socket",
            Unguarded::Directory => "directory",
            Unguarded::Other => "other",
            Unguarded::TooLarge => "too_large",
            Unguarded::TooSlow => "too_slow",
        }
    }

    /// The reason for a [`code`](Unguarded::code); `None` for an unknown code.
    pub fn from_code(code: &str) -> Option<Unguarded> {
        Unguarded::ALL
            .into_iter()
            .find(|reason| reason.code() == code)
    }

    /// The short name shown in parentheses in [`unguarded_note`].
    pub fn label(self) -> &'static str {
        match self {
            Unguarded::Fifo => "fifo",
            Unguarded::Device => "device",
            Unguarded::Socket => "socket",
            Unguarded::Directory => "directory",
            Unguarded::Other => "not a regular file",
            Unguarded::TooLarge => "too large",
            Unguarded::TooSlow => "too slow",
        }
    }

    /// What kind of file the target is.
    pub fn kind(self) -> FileKind {
        match self {
            Unguarded::Fifo => FileKind::Fifo,
            Unguarded::Device => FileKind::Device,
            Unguarded::Socket => FileKind::Socket,
            Unguarded::Directory => FileKind::Directory,
            Unguarded::Other => FileKind::Other,
            Unguarded::TooLarge | Unguarded::TooSlow => FileKind::Regular,
        }
    }

    fn explanation(self) -> String {
        match self {
            Unguarded::Fifo => "the target is a named pipe (FIFO), not a regular file".to_owned(),
            Unguarded::Device => "the target is a device, not a regular file".to_owned(),
            Unguarded::Socket => "the target is a socket, not a regular file".to_owned(),
            Unguarded::Directory => "the target is a directory, not a regular file".to_owned(),
            Unguarded::Other => "the target is not a regular file".to_owned(),
            Unguarded::TooLarge => format!(
                "the target is larger than the {} MiB the guard hashes",
                MAX_DIGEST_BYTES / (1024 * 1024)
            ),
            Unguarded::TooSlow => format!(
                "reading the target took longer than the {} seconds the guard allows",
                DIGEST_TIME_BUDGET_MS / 1000
            ),
        }
    }
}

/// The kind of file a look saw, after following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A named pipe.
    Fifo,
    /// A character or block device.
    Device,
    /// A socket.
    Socket,
    /// A directory.
    Directory,
    /// Anything else.
    Other,
}

/// One look at the target.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TargetLook {
    /// A regular file, read to the end: its SHA-256 in lower-case hex.
    Digest(String),
    /// The target was not hashed, for this reason.
    Unguarded(Unguarded),
    /// The target could not be looked at or read: the host's error message.
    Unreadable(String),
}

impl TargetLook {
    fn kind(&self) -> Option<FileKind> {
        match self {
            TargetLook::Digest(_) => Some(FileKind::Regular),
            TargetLook::Unguarded(reason) => Some(reason.kind()),
            TargetLook::Unreadable(_) => None,
        }
    }
}

/// What the host does with the command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GuardDecision {
    /// Run it; `note`, when present, is the one line the result carries before the
    /// command's block.
    Run {
        /// [`unguarded_note`] when the guard could not be applied.
        note: Option<String>,
    },
    /// Do not run it; `text` is the `[then_run:skipped]` block.
    Skip {
        /// The block, from [`crate::text::skipped_after_change`].
        text: String,
    },
}

/// Decides from the look right after the mutation (`before`) and the look right before the
/// command (`after`); see the [module documentation](self) for the rule.
pub fn decide(before: &TargetLook, after: &TargetLook) -> GuardDecision {
    let skip = |reason: &str| GuardDecision::Skip {
        text: text::skipped_after_change(reason),
    };
    match (before, after) {
        (TargetLook::Unreadable(error), _) | (_, TargetLook::Unreadable(error)) => {
            skip(&text::unreadable_reason(error))
        }
        (TargetLook::Digest(first), TargetLook::Digest(second)) => {
            if first == second {
                GuardDecision::Run { note: None }
            } else {
                skip(text::CHANGED_REASON)
            }
        }
        (TargetLook::Unguarded(reason), other) | (other, TargetLook::Unguarded(reason)) => {
            if other.kind() == Some(reason.kind()) {
                GuardDecision::Run {
                    note: Some(unguarded_note(*reason)),
                }
            } else {
                skip(text::CHANGED_REASON)
            }
        }
    }
}

/// The one line a fused result carries when its command ran without the hash guard:
/// `Hash guard not applied (<label>): <why>; ...`.
pub fn unguarded_note(reason: Unguarded) -> String {
    format!(
        "Hash guard not applied ({}): {}, so the command ran without checking that the target was unchanged since the mutation.",
        reason.label(),
        reason.explanation()
    )
}

/// A look of the real file system's bounded digest
/// ([`sol_host::digest::digest_file`]) in the guard's words: the one mapping from its
/// reasons not to hash to [`Unguarded`].
#[cfg(feature = "host")]
impl From<sol_host::digest::FileLook> for TargetLook {
    fn from(look: sol_host::digest::FileLook) -> Self {
        use sol_host::digest::{FileLook, NotHashed};
        match look {
            FileLook::Digest(digest) => TargetLook::Digest(digest),
            FileLook::NotHashed(reason) => TargetLook::Unguarded(match reason {
                NotHashed::Fifo => Unguarded::Fifo,
                NotHashed::Device => Unguarded::Device,
                NotHashed::Socket => Unguarded::Socket,
                NotHashed::Directory => Unguarded::Directory,
                NotHashed::Other => Unguarded::Other,
                NotHashed::TooLarge => Unguarded::TooLarge,
                NotHashed::TooSlow => Unguarded::TooSlow,
            }),
            FileLook::Unreadable(error) => TargetLook::Unreadable(error),
        }
    }
}

/// One look at a real file for the hash guard (`host` feature): the bounded digest of
/// [`sol_host::digest::digest_file`] within [`MAX_DIGEST_BYTES`] and
/// [`DIGEST_TIME_BUDGET`]. It follows links and reads only a regular file, so a FIFO or a
/// device never holds the call.
///
/// ```
/// use sol_fusion::guard::{look_at, TargetLook, Unguarded};
///
/// let dir = std::env::temp_dir().join(format!("sol-fusion-look-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).expect("folder made");
/// std::fs::write(dir.join("a.txt"), "abc").expect("file written");
/// assert_eq!(
///     look_at(dir.join("a.txt")),
///     TargetLook::Digest("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_owned())
/// );
/// assert_eq!(look_at(&dir), TargetLook::Unguarded(Unguarded::Directory));
/// assert!(matches!(look_at(dir.join("missing")), TargetLook::Unreadable(_)));
/// # std::fs::remove_dir_all(&dir).expect("cleaned up");
/// ```
#[cfg(feature = "host")]
pub fn look_at(path: impl AsRef<std::path::Path>) -> TargetLook {
    sol_host::digest::digest_file(path, MAX_DIGEST_BYTES, DIGEST_TIME_BUDGET).into()
}

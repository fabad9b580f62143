use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

/// File access for SoL-Pi's storage, with the safety rules built into each operation.
///
/// Files are created private (directories 0700, files 0600), writes never follow a symlink
/// at the final path component, and reads are bounded. No operation deletes anything.
pub trait FileSystem {
    /// What is at `path`, without following a symlink at the final component (like
    /// `lstat`); `None` when nothing is there.
    fn metadata(&self, path: &Utf8Path) -> Result<Option<FileMetadata>, FsError>;

    /// The whole file at `path`, following symlinks. [`FsErrorKind::TooLarge`] when it holds
    /// more than `max_bytes`, [`FsErrorKind::NotAFile`] for a directory.
    fn read(&self, path: &Utf8Path, max_bytes: u64) -> Result<Vec<u8>, FsError>;

    /// Like [`FileSystem::read`], but a symlink at `path` is refused with
    /// [`FsErrorKind::SymlinkRefused`].
    fn read_no_follow(&self, path: &Utf8Path, max_bytes: u64) -> Result<Vec<u8>, FsError>;

    /// Creates the directory `path` and any missing ancestors with mode 0700. Existing
    /// directories are kept as they are; a symlink anywhere along `path` is refused with
    /// [`FsErrorKind::SymlinkRefused`].
    fn create_dir_private(&self, path: &Utf8Path) -> Result<(), FsError>;

    /// Creates the file `path` with mode 0600 and writes `contents`, only if nothing exists
    /// at `path` (not even a symlink): [`FsErrorKind::AlreadyExists`] otherwise. The parent
    /// directory must exist.
    fn create_new(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError>;

    /// Appends `contents` to the journal file `path`, creating it with mode 0600 if missing.
    /// A symlink at `path` is refused with [`FsErrorKind::SymlinkRefused`].
    ///
    /// An append always starts on a fresh line: when the file is not empty and its last
    /// byte is not LF (a crash cut the last record short), an LF is written first, in the
    /// same write as `contents`, so the torn record stays on a line of its own and the new
    /// one is whole. Every journal SoL-Pi appends to goes through this one rule; a reader
    /// skips the torn line (see `sol_obspack::ledger::read_ledger`). Empty `contents`
    /// add nothing. [`append_needs_line_break`] is the rule in code.
    fn append(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError>;

    /// Replaces the file `path` with `contents` in one atomic step: a private (0600)
    /// temporary file in the same directory, created exclusively, written and synced, is
    /// renamed over `path`, so a reader sees the old file or the new one, never a mix. What
    /// was at `path` is replaced, never followed (a symlink there is replaced itself); a
    /// directory there is refused with [`FsErrorKind::NotAFile`]. The parent directory must
    /// exist.
    fn replace_private(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError>;
}

/// The fresh-line rule of [`FileSystem::append`], for every implementation of the port:
/// whether an LF must go before `contents`, given the last byte of the file as it stands
/// (`None` for an empty or missing file). True only when something is appended after a
/// record that a crash left without its line end.
///
/// ```
/// use sol_core::append_needs_line_break;
///
/// assert!(append_needs_line_break(Some(b'}'), b"{\"a\":1}\n"));
/// assert!(!append_needs_line_break(Some(b'\n'), b"{\"a\":1}\n"));
/// assert!(!append_needs_line_break(None, b"{\"a\":1}\n"));
/// assert!(!append_needs_line_break(Some(b'}'), b""));
/// ```
pub fn append_needs_line_break(last_byte: Option<u8>, contents: &[u8]) -> bool {
    !contents.is_empty() && last_byte.is_some_and(|last| last != b'\n')
}

/// What [`FileSystem::metadata`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMetadata {
    /// The kind of entry (a symlink is reported as such, not followed).
    pub kind: FileKind,
    /// Size in bytes (for a symlink, the length of its target path).
    pub len: u64,
}

/// Kind of a file-system entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

/// A failed file-system operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}: {path}")]
pub struct FsError {
    /// What kind of failure, for callers that react to it.
    pub kind: FsErrorKind,
    /// The path the operation was given.
    pub path: Utf8PathBuf,
    /// What went wrong, lower-case, without the path.
    pub message: String,
}

impl FsError {
    /// An error of `kind` about `path`.
    pub fn new(
        kind: FsErrorKind,
        path: impl Into<Utf8PathBuf>,
        message: impl Into<String>,
    ) -> Self {
        FsError {
            kind,
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Kinds of [`FsError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FsErrorKind {
    /// Nothing at the path, or a missing parent directory.
    NotFound,
    /// Something already exists where a new file was to be created.
    AlreadyExists,
    /// The path is a directory or another non-file where a file was expected.
    NotAFile,
    /// A symlink was found where the operation does not follow links.
    SymlinkRefused,
    /// The file is larger than the caller's limit.
    TooLarge,
    /// The operating system denied access.
    PermissionDenied,
    /// Any other failure.
    Other,
}

//! The content-addressed archive of original logs.
//!
//! Every log is written to `<root>/evidence-preserving-reducer/objects/<hh>/<sha256>.txt`
//! (`hh` = the first two hex digits) **before** any model call, so the evidence a receipt
//! points to exists whatever happens next. Directories are created 0700 and objects 0600.
//! An object is written whole or not at all, as ObservationPack's store heals its objects:
//! through [`FileSystem::replace_private`] (a private temporary file beside it, synced,
//! renamed over the object's name), so a crash never leaves a half-written object under
//! the log's hash. An object that already exists is reused only if it is a regular file
//! with the same size and hash. One with another size or hash (a crash of a version that
//! wrote in place, a change by hand) is damaged: since the log at hand hashes to the name,
//! it is written again from the log, and the reduction goes on ([`ArchivedLog::repaired`]).
//! A symlink or a directory in its place is refused, never followed or replaced. Nothing
//! is ever deleted.
//!
//! ```
//! use camino::Utf8Path;
//! use sol_core::FileSystem;
//! use sol_core::testing::MemoryFileSystem;
//! use sol_reducer::archive::{archive_log, store_root};
//!
//! let fs = MemoryFileSystem::new();
//! let store = store_root(Utf8Path::new("/s/sol-pi/abc"));
//! let first = archive_log(&fs, &store, "error: boom\n")?;
//! assert!(first.path.as_str().starts_with("/s/sol-pi/abc/evidence-preserving-reducer/objects/"));
//! assert_eq!(fs.mode(&first.path), Some(0o600));
//! let again = archive_log(&fs, &store, "error: boom\n")?;
//! assert!(again.reused && again.path == first.path);
//! // Half an object (left by a crash) is written whole again from the log.
//! fs.replace_private(&first.path, b"error: b")?;
//! let healed = archive_log(&fs, &store, "error: boom\n")?;
//! assert!(healed.repaired && !healed.reused);
//! assert_eq!(fs.file(&first.path), Some(b"error: boom\n".to_vec()));
//! # Ok::<(), sol_reducer::archive::ArchiveError>(())
//! ```

use camino::{Utf8Path, Utf8PathBuf};
use sol_core::{FileKind, FileSystem, FsError, FsErrorKind};

use crate::STORE_DIR;
use crate::digest::{line_count, sha256_hex};

/// The reducer's directory under a session's runtime root
/// (`<sessionDir>/sol-pi/<sessionId>`).
pub fn store_root(runtime_root: &Utf8Path) -> Utf8PathBuf {
    runtime_root.join(STORE_DIR)
}

/// Where the log with hash `sha256` is archived under `store_root`.
pub fn object_path(store_root: &Utf8Path, sha256: &str) -> Utf8PathBuf {
    let fan_out = sha256.get(..2).unwrap_or(sha256);
    store_root
        .join("objects")
        .join(fan_out)
        .join(format!("{sha256}.txt"))
}

/// An archived log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedLog {
    /// The object's absolute path (the receipt's `source_artifact`).
    pub path: Utf8PathBuf,
    /// SHA-256 of the log.
    pub sha256: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Lines: one per LF, plus a last line without LF.
    pub lines: u64,
    /// Whether an identical object already existed.
    pub reused: bool,
    /// Whether a damaged object (another size or hash) was found under the log's name and
    /// written again from the log.
    pub repaired: bool,
}

/// Why a log could not be archived.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    /// The file system refused an operation.
    #[error("could not archive the log: {0}")]
    Fs(#[from] FsError),
    /// Something other than a regular file sits at the object's path.
    #[error("reducer archive object is not a regular file: {path}")]
    NotARegularFile {
        /// The object's path.
        path: Utf8PathBuf,
    },
    /// The existing object differs from the log with the same hash.
    #[error("reducer archive integrity failure: {path}")]
    Integrity {
        /// The object's path.
        path: Utf8PathBuf,
    },
}

impl ArchiveError {
    /// A stable code for this error.
    pub fn code(&self) -> &'static str {
        match self {
            ArchiveError::Fs(_) => "archive-fs-error",
            ArchiveError::NotARegularFile { .. } => "archive-not-a-regular-file",
            ArchiveError::Integrity { .. } => "archive-integrity-failure",
        }
    }
}

/// Archives `log` under `store_root`, or verifies the identical object already there.
pub fn archive_log(
    fs: &dyn FileSystem,
    store_root: &Utf8Path,
    log: &str,
) -> Result<ArchivedLog, ArchiveError> {
    archive_hashed(fs, store_root, log, sha256_hex(log.as_bytes()))
}

/// [`archive_log`] for a log whose hash is already known.
pub(crate) fn archive_hashed(
    fs: &dyn FileSystem,
    store_root: &Utf8Path,
    log: &str,
    sha256: String,
) -> Result<ArchivedLog, ArchiveError> {
    let path = object_path(store_root, &sha256);
    if let Some(parent) = path.parent() {
        fs.create_dir_private(parent)?;
    }
    let bytes = log.len() as u64;
    let (reused, repaired) = match read_archived(fs, &path, &sha256, bytes) {
        Ok(_) => (true, false),
        Err(ArchiveError::Fs(error)) if error.kind == FsErrorKind::NotFound => {
            fs.replace_private(&path, log.as_bytes())?;
            (false, false)
        }
        // The name is the log's hash, and the log is at hand: write it whole again.
        Err(ArchiveError::Integrity { .. }) => {
            fs.replace_private(&path, log.as_bytes())?;
            (false, true)
        }
        Err(error) => return Err(error),
    };
    Ok(ArchivedLog {
        bytes,
        lines: line_count(log),
        path,
        sha256,
        reused,
        repaired,
    })
}

/// Reads an archived object back and checks it: a regular file (a link is not followed),
/// `bytes` long, hashing to `sha256`, and valid UTF-8.
pub fn read_archived(
    fs: &dyn FileSystem,
    path: &Utf8Path,
    sha256: &str,
    bytes: u64,
) -> Result<String, ArchiveError> {
    let not_regular = || ArchiveError::NotARegularFile {
        path: path.to_owned(),
    };
    let integrity = || ArchiveError::Integrity {
        path: path.to_owned(),
    };
    match fs.metadata(path)? {
        Some(metadata) if metadata.kind == FileKind::File => {
            if metadata.len != bytes {
                return Err(integrity());
            }
        }
        Some(_) => return Err(not_regular()),
        None => {
            return Err(FsError::new(FsErrorKind::NotFound, path, "no such file").into());
        }
    }
    let content = fs
        .read_no_follow(path, bytes)
        .map_err(|error| match error.kind {
            FsErrorKind::SymlinkRefused | FsErrorKind::NotAFile => not_regular(),
            FsErrorKind::TooLarge => integrity(),
            _ => ArchiveError::Fs(error),
        })?;
    if content.len() as u64 != bytes || sha256_hex(&content) != sha256 {
        return Err(integrity());
    }
    String::from_utf8(content).map_err(|_| integrity())
}

//! Where a session's SoL-Pi files live on disk.
//!
//! A session with a directory keeps them in `<sessionDir>/sol-pi/<sessionId>`, on the
//! canonical form of the session directory: links above it (a symlinked home, macOS's
//! `/tmp`) are resolved once here, and a link below it is refused later, when
//! [`OsFileSystem::create_dir_private`](crate::OsFileSystem) makes the folders. A session
//! without a directory gets a private folder `sol-pi-<sessionId>-<random>` (mode 0700, made
//! exclusively) in the temp folder the host names. The session id must pass
//! [`SessionId::parse`], so it can never climb out of the folder (`..`, `/`).
//!
//! These are plain functions without memory: a host that asks many times (Pi's addon asks
//! on every request) keeps what they gave, and makes the temp folder once per session.
//!
//! ```
//! use sol_host::camino::Utf8PathBuf;
//! use sol_host::sol_core::SessionId;
//! use sol_host::storage::{session_root, STORAGE_FOLDER};
//!
//! let sessions = Utf8PathBuf::from_path_buf(std::env::temp_dir()).expect("UTF-8 temp dir");
//! let id = SessionId::parse("session-1").expect("a safe id");
//! let root = session_root(&sessions, &id).expect("an absolute folder");
//! assert!(root.ends_with(format!("{STORAGE_FOLDER}/session-1")));
//! ```

use std::fmt;
use std::hash::BuildHasher as _;
use std::io;

use camino::{Utf8Path, Utf8PathBuf};
use sol_core::{SessionId, SessionIdError};

/// The folder under a session directory that holds every session's SoL-Pi files.
pub const STORAGE_FOLDER: &str = "sol-pi";

/// How many random names [`make_private_temp_dir`] tries before giving up (each is taken
/// only if another process made that very folder first).
const TEMPORARY_ATTEMPTS: u32 = 16;

/// Why a storage folder cannot be given. Its message is for the person.
#[derive(Debug)]
pub enum StorageError {
    /// The session id could climb out of the storage folder.
    UnsafeSessionId(SessionIdError),
    /// The session directory (or the temp folder made for the session) cannot be used:
    /// not absolute, not UTF-8 once canonical, or unreadable.
    SessionDir {
        /// The folder as given.
        dir: Utf8PathBuf,
        /// What went wrong.
        error: io::Error,
    },
    /// No private folder could be made in the temp folder.
    TempDir {
        /// The temp folder.
        temp_dir: Utf8PathBuf,
        /// What went wrong; `None` when every name tried already existed.
        error: Option<io::Error>,
    },
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::UnsafeSessionId(error) => write!(f, "{error}"),
            StorageError::SessionDir { dir, error } => {
                write!(f, "SoL-Pi cannot use the session directory {dir}: {error}")
            }
            StorageError::TempDir {
                temp_dir,
                error: Some(error),
            } => write!(
                f,
                "SoL-Pi cannot make a temporary folder in {temp_dir}: {error}"
            ),
            StorageError::TempDir {
                temp_dir,
                error: None,
            } => write!(
                f,
                "SoL-Pi cannot make a temporary folder in {temp_dir}: every name it tried exists"
            ),
        }
    }
}

impl std::error::Error for StorageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StorageError::UnsafeSessionId(error) => Some(error),
            StorageError::SessionDir { error, .. } => Some(error),
            StorageError::TempDir { error, .. } => error
                .as_ref()
                .map(|error| error as &(dyn std::error::Error + 'static)),
        }
    }
}

impl From<SessionIdError> for StorageError {
    fn from(error: SessionIdError) -> Self {
        StorageError::UnsafeSessionId(error)
    }
}

/// `<canonical session_dir>/sol-pi/<id>`. Nothing is created; the session directory itself
/// may not exist yet (Pi makes it when it first writes).
pub fn session_root(session_dir: &Utf8Path, id: &SessionId) -> Result<Utf8PathBuf, StorageError> {
    Ok(canonical_dir(session_dir)?
        .join(STORAGE_FOLDER)
        .join(id.as_str()))
}

/// Makes a new private folder `sol-pi-<id>-<random>` in `temp_dir` (mode 0700 on Unix,
/// never an existing folder, never through a link in its last part) and gives its path as
/// made. Each call makes another folder: a host keeps the first one for the session.
pub fn make_private_temp_dir(
    temp_dir: &Utf8Path,
    id: &SessionId,
) -> Result<Utf8PathBuf, StorageError> {
    let state = std::hash::RandomState::new();
    for attempt in 0..TEMPORARY_ATTEMPTS {
        let suffix = state.hash_one((id.as_str(), attempt, std::process::id()));
        let dir = temp_dir.join(format!(
            "sol-pi-{}-{:012x}",
            id.as_str(),
            suffix & 0xffff_ffff_ffff
        ));
        match make_private_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => {
                return Err(StorageError::TempDir {
                    temp_dir: temp_dir.to_owned(),
                    error: Some(error),
                });
            }
        }
    }
    Err(StorageError::TempDir {
        temp_dir: temp_dir.to_owned(),
        error: None,
    })
}

/// The storage root of a session folder made by [`make_private_temp_dir`]: its canonical
/// form (the folder itself holds the files; there is no `sol-pi/<id>` below it).
pub fn temp_root(made: &Utf8Path) -> Result<Utf8PathBuf, StorageError> {
    canonical_dir(made)
}

/// A session's storage root in one call: [`session_root`] when it has a directory, else
/// [`temp_root`] of a new [`make_private_temp_dir`] in `temp_dir`. The id is checked with
/// [`SessionId::parse`] first.
pub fn storage_root(
    session_dir: Option<&Utf8Path>,
    session_id: &str,
    temp_dir: &Utf8Path,
) -> Result<Utf8PathBuf, StorageError> {
    let id = SessionId::parse(session_id)?;
    match session_dir {
        Some(dir) => session_root(dir, &id),
        None => temp_root(&make_private_temp_dir(temp_dir, &id)?),
    }
}

fn canonical_dir(dir: &Utf8Path) -> Result<Utf8PathBuf, StorageError> {
    canonical_prefix(dir).map_err(|error| StorageError::SessionDir {
        dir: dir.to_owned(),
        error,
    })
}

/// Creates `dir` (never an existing one, never through a link in its last part), owner-only.
fn make_private_dir(dir: &Utf8Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// The canonical form of the deepest existing ancestor of the absolute `path`, with the
/// missing part appended as it is. A relative path is
/// [`InvalidInput`](io::ErrorKind::InvalidInput).
pub fn canonical_prefix(path: &Utf8Path) -> io::Result<Utf8PathBuf> {
    if !path.is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not an absolute path",
        ));
    }
    let mut missing = Vec::new();
    let mut cursor = path;
    loop {
        match std::fs::canonicalize(cursor) {
            Ok(found) => {
                let mut dir = Utf8PathBuf::from_path_buf(found)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not a UTF-8 path"))?;
                for name in missing.iter().rev() {
                    dir.push(name);
                }
                return Ok(dir);
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                let (Some(parent), Some(name)) = (cursor.parent(), cursor.file_name()) else {
                    return Err(error);
                };
                missing.push(name.to_owned());
                cursor = parent;
            }
            Err(error) => return Err(error),
        }
    }
}

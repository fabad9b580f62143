//! The session-derived storage root shared by the archiving mechanisms.

use std::collections::BTreeMap;
use std::hash::BuildHasher as _;
use std::io;
use std::sync::{Mutex, MutexGuard, PoisonError};

use camino::{Utf8Path, Utf8PathBuf};
use napi_derive::napi;
use sol_core::SessionId;

use crate::boundary::quiet;

/// Where a session's SoL-Pi files live.
#[napi(object)]
pub struct RuntimeRootRequest {
    /// Pi's session directory (`ctx.sessionManager.getSessionDir()`); absent or empty for a
    /// session without one.
    pub session_dir: Option<String>,
    /// Pi's session id.
    pub session_id: String,
    /// The OS temp folder (`os.tmpdir()`), for a session without a directory.
    pub temp_dir: String,
}

/// The root, or why there is none.
#[napi(discriminant = "kind", discriminant_case = "camelCase")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeRootOutcome {
    /// `<sessionDir>/sol-pi/<sessionId>` (canonical), or the session's private temp folder.
    Root {
        /// The folder.
        root: String,
    },
    /// No root can be given (an unsafe session id, an unusable directory).
    Unavailable {
        /// Why, for the person.
        error: String,
    },
}

/// Roots already built, by session directory and id: the context handler asks on every
/// request. A failure is not kept: the next request tries again.
static ROOTS: Mutex<BTreeMap<(String, String), String>> = Mutex::new(BTreeMap::new());
/// The private temp folder of each session id without a directory, made once per process.
static TEMPORARY: Mutex<BTreeMap<String, Utf8PathBuf>> = Mutex::new(BTreeMap::new());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Builds (once) the session's storage root. The session directory is canonicalized
/// first, so links above it (a symlinked home, macOS `/tmp`) are accepted while links
/// below it are refused when folders are created. A session without a directory gets a
/// private `sol-pi-<sessionId>-<random>` folder under `tempDir`, made once per session id.
#[napi(catch_unwind)]
pub fn runtime_root(request: RuntimeRootRequest) -> RuntimeRootOutcome {
    quiet(|| {
        let session_dir = request.session_dir.filter(|dir| !dir.is_empty());
        let key = (
            session_dir.clone().unwrap_or_default(),
            request.session_id.clone(),
        );
        if let Some(root) = lock(&ROOTS).get(&key) {
            return RuntimeRootOutcome::Root { root: root.clone() };
        }
        match root_for(
            session_dir.as_deref(),
            &request.session_id,
            &request.temp_dir,
        ) {
            Ok(root) => {
                lock(&ROOTS).insert(key, root.to_string());
                RuntimeRootOutcome::Root {
                    root: root.to_string(),
                }
            }
            Err(error) => RuntimeRootOutcome::Unavailable { error },
        }
    })
}

fn root_for(
    session_dir: Option<&str>,
    session_id: &str,
    temp_dir: &str,
) -> Result<Utf8PathBuf, String> {
    let id = SessionId::parse(session_id).map_err(|error| error.to_string())?;
    let (dir, temporary) = match session_dir {
        Some(dir) => (Utf8PathBuf::from(dir), false),
        None => (temporary_dir(&id, Utf8Path::new(temp_dir))?, true),
    };
    let dir = canonical_prefix(&dir)
        .map_err(|error| format!("SoL-Pi cannot use the session directory {dir}: {error}"))?;
    Ok(if temporary {
        dir
    } else {
        dir.join("sol-pi").join(id.as_str())
    })
}

/// The session's private temp folder: made once (exclusive, owner-only), then reused.
fn temporary_dir(id: &SessionId, temp_dir: &Utf8Path) -> Result<Utf8PathBuf, String> {
    let mut made = lock(&TEMPORARY);
    if let Some(dir) = made.get(id.as_str()) {
        return Ok(dir.clone());
    }
    let state = std::hash::RandomState::new();
    for attempt in 0u32..16 {
        let suffix = state.hash_one((id.as_str(), attempt, std::process::id()));
        let dir = temp_dir.join(format!(
            "sol-pi-{}-{:012x}",
            id.as_str(),
            suffix & 0xffff_ffff_ffff
        ));
        match make_private_dir(&dir) {
            Ok(()) => {
                made.insert(id.as_str().to_owned(), dir.clone());
                return Ok(dir);
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => {
                return Err(format!(
                    "SoL-Pi cannot make a temporary folder in {temp_dir}: {error}"
                ));
            }
        }
    }
    Err(format!(
        "SoL-Pi cannot make a temporary folder in {temp_dir}: every name it tried exists"
    ))
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

/// The canonical form of the deepest existing ancestor, with the missing part
/// appended: Pi may create the session directory only when it first writes.
pub(crate) fn canonical_prefix(path: &Utf8Path) -> io::Result<Utf8PathBuf> {
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

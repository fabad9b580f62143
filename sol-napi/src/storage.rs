//! The session-derived storage root shared by the archiving mechanisms: the layout is
//! `sol_host::storage`; this module keeps what a process has made and the napi types.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use camino::{Utf8Path, Utf8PathBuf};
use napi_derive::napi;
use sol_core::SessionId;
use sol_host::storage::{self, StorageError};

/// The canonical form of the deepest existing ancestor (the fusion queue key uses it too).
pub(crate) use sol_host::storage::canonical_prefix;

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
    match session_dir {
        Some(dir) => storage::session_root(Utf8Path::new(dir), &id),
        None => {
            temporary_dir(&id, Utf8Path::new(temp_dir)).and_then(|made| storage::temp_root(&made))
        }
    }
    .map_err(|error| error.to_string())
}

/// The session's private temp folder: made once (exclusive, owner-only), then reused.
fn temporary_dir(id: &SessionId, temp_dir: &Utf8Path) -> Result<Utf8PathBuf, StorageError> {
    let mut made = lock(&TEMPORARY);
    if let Some(dir) = made.get(id.as_str()) {
        return Ok(dir.clone());
    }
    let dir = storage::make_private_temp_dir(temp_dir, id)?;
    made.insert(id.as_str().to_owned(), dir.clone());
    Ok(dir)
}

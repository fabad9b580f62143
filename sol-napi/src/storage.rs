//! The session-derived storage root shared by the archiving mechanisms.

use std::io;

use camino::{Utf8Path, Utf8PathBuf};
use napi_derive::napi;
use sol_core::SessionId;

use crate::boundary::quiet;

/// Where a session's SoL-Pi files live.
#[napi(object)]
pub struct RuntimeRootRequest {
    /// Pi's session directory, or the private temp folder for a session without one.
    pub session_dir: String,
    /// Pi's session id.
    pub session_id: String,
    /// True when `session_dir` is the private temp folder (already specific to the session).
    pub temporary: bool,
}

/// The root, or why there is none.
#[napi(object)]
pub struct RuntimeRootOutcome {
    /// `<sessionDir>/sol-pi/<sessionId>` (canonical), or the temp folder itself.
    pub root: Option<String>,
    /// Why no root could be given.
    pub error: Option<String>,
}

/// Checks a session id; returns the error text, or nothing when it is safe.
#[napi(catch_unwind)]
pub fn check_session_id(session_id: String) -> Option<String> {
    quiet(|| {
        SessionId::parse(&session_id)
            .err()
            .map(|error| error.to_string())
    })
}

/// Builds the session's storage root. The session directory is canonicalized
/// first, so links above it (a symlinked home, macOS `/tmp`) are accepted while
/// links below it are refused when folders are created.
#[napi(catch_unwind)]
pub fn runtime_root(request: RuntimeRootRequest) -> RuntimeRootOutcome {
    quiet(|| match root_for(&request) {
        Ok(root) => RuntimeRootOutcome {
            root: Some(root.to_string()),
            error: None,
        },
        Err(error) => RuntimeRootOutcome {
            root: None,
            error: Some(error),
        },
    })
}

fn root_for(request: &RuntimeRootRequest) -> Result<Utf8PathBuf, String> {
    let id = SessionId::parse(&request.session_id).map_err(|error| error.to_string())?;
    let dir = canonical_prefix(Utf8Path::new(&request.session_dir)).map_err(|error| {
        format!(
            "SoL-Pi cannot use the session directory {}: {error}",
            request.session_dir
        )
    })?;
    Ok(if request.temporary {
        dir
    } else {
        dir.join("sol-pi").join(id.as_str())
    })
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

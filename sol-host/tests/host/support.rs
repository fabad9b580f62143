//! Throw-away directories and small helpers shared by the modules.

use camino::{Utf8Path, Utf8PathBuf};
use tempfile::TempDir;

/// A temporary directory, removed on drop, addressed by UTF-8 paths.
pub(crate) struct Sandbox {
    // Held for its Drop, which deletes the directory.
    _dir: TempDir,
    root: Utf8PathBuf,
}

impl Sandbox {
    pub(crate) fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("sol-host-test-")
            .tempdir()
            .expect("temporary directory");
        // Canonical, so a symlinked temp root (macOS's /var) is not itself a link on the path.
        let canonical = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        let root = Utf8PathBuf::from_path_buf(canonical).expect("temp dir is UTF-8");
        Sandbox { _dir: dir, root }
    }

    pub(crate) fn root(&self) -> &Utf8Path {
        &self.root
    }

    /// `relative` under the sandbox; an empty string is the sandbox itself.
    pub(crate) fn path(&self, relative: &str) -> Utf8PathBuf {
        if relative.is_empty() {
            self.root.clone()
        } else {
            self.root.join(relative)
        }
    }

    /// Writes a file as a user's editor would, creating missing parent directories.
    pub(crate) fn write(&self, relative: &str, bytes: impl AsRef<[u8]>) -> Utf8PathBuf {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent directories");
        }
        std::fs::write(&path, bytes).expect("file written");
        path
    }

    pub(crate) fn mkdir(&self, relative: &str) -> Utf8PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(&path).expect("directory created");
        path
    }

    /// Plants a symlink at `relative` pointing to `target` (taken literally, so a relative
    /// target is resolved from the link's directory).
    #[cfg(unix)]
    pub(crate) fn symlink(&self, relative: &str, target: &str) -> Utf8PathBuf {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent directories");
        }
        std::os::unix::fs::symlink(target, &path).expect("symlink planted");
        path
    }

    /// Makes a FIFO at `relative` with `mkfifo`; `None` where that tool is missing, and the
    /// caller then has nothing to test.
    #[cfg(unix)]
    pub(crate) fn fifo(&self, relative: &str) -> Option<Utf8PathBuf> {
        let path = self.path(relative);
        std::process::Command::new("mkfifo")
            .arg(path.as_str())
            .status()
            .is_ok_and(|status| status.success())
            .then_some(path)
    }

    /// The bytes of the file at `relative`, following links.
    pub(crate) fn read(&self, relative: &str) -> Vec<u8> {
        std::fs::read(self.path(relative)).expect("file readable")
    }

    /// Whether anything, even a dangling symlink, is at `relative`.
    pub(crate) fn exists(&self, relative: &str) -> bool {
        std::fs::symlink_metadata(self.path(relative)).is_ok()
    }
}

/// Permission bits of what is at `path`, without following a final symlink.
#[cfg(unix)]
pub(crate) fn mode(path: &Utf8Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o7777
}

/// A regular expression that matches `text` literally, for insta's filters.
pub(crate) fn literal_pattern(text: impl AsRef<str>) -> String {
    let mut pattern = String::new();
    for c in text.as_ref().chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// Runs `operation` on another thread and returns what it gave, or `None` when it is still
/// blocked after a few seconds (it is then left behind; the test fails anyway).
pub(crate) fn without_blocking<T: Send + 'static>(
    operation: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(operation());
    });
    receive.recv_timeout(std::time::Duration::from_secs(5)).ok()
}

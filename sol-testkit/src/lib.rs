//! Test support shared by the test binaries of the SoL-Pi crates: the snapshot macros and
//! [`Sandbox`], a throw-away directory with UTF-8 paths.
//!
//! Every crate keeps its snapshots in its own `tests/snapshots/` directory, named by the
//! snapshot alone (not by the module that asserts it), so a test can move between modules
//! without renaming its snapshot. Use it from a test binary's root with
//! `#[macro_use] extern crate sol_testkit;`; the macros are then in scope in every module.

#[doc(hidden)]
pub use insta;

/// Asserts a text snapshot stored under the calling crate's `tests/snapshots/`; each
/// `pattern => replacement` that follows is applied to the text first (a temporary
/// directory's path, say, so the snapshot is the same on every run).
#[macro_export]
macro_rules! assert_text_snapshot {
    ($name:expr, $text:expr $(, $pattern:expr => $replacement:expr)* $(,)?) => {{
        let mut settings = $crate::insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        $(settings.add_filter(&$pattern, $replacement);)*
        settings.bind(|| $crate::insta::assert_snapshot!($name, $text));
    }};
}

/// Asserts a JSON snapshot stored under the calling crate's `tests/snapshots/`, with the
/// keys of objects in their own order.
#[macro_export]
macro_rules! assert_json_value_snapshot {
    ($name:expr, $value:expr) => {{
        let mut settings = $crate::insta::Settings::clone_current();
        settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_sort_maps(false);
        settings.bind(|| $crate::insta::assert_json_snapshot!($name, $value));
    }};
}

#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod sandbox {
    use camino::{Utf8Path, Utf8PathBuf};
    use tempfile::TempDir;

    /// A temporary directory, removed on drop, addressed by UTF-8 paths.
    pub struct Sandbox {
        // Held for its Drop, which deletes the directory.
        _dir: TempDir,
        root: Utf8PathBuf,
    }

    impl Sandbox {
        /// A new, empty directory under the OS temp folder, by its canonical path.
        pub fn new() -> Self {
            let dir = tempfile::Builder::new()
                .prefix("sol-pi-test-")
                .tempdir()
                .expect("temporary directory");
            // Canonical, so a symlinked temp root (macOS's /var) is not itself a link on the path.
            let canonical = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
            let root = Utf8PathBuf::from_path_buf(canonical).expect("temp dir is UTF-8");
            Sandbox { _dir: dir, root }
        }

        /// The directory.
        pub fn root(&self) -> &Utf8Path {
            &self.root
        }

        /// `relative` under the sandbox; an empty string is the sandbox itself.
        pub fn path(&self, relative: &str) -> Utf8PathBuf {
            if relative.is_empty() {
                self.root.clone()
            } else {
                self.root.join(relative)
            }
        }

        /// Writes a file as a user's editor would, creating missing parent directories.
        pub fn write(&self, relative: &str, bytes: impl AsRef<[u8]>) -> Utf8PathBuf {
            let path = self.path(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("parent directories");
            }
            std::fs::write(&path, bytes).expect("file written");
            path
        }

        /// Makes the folder `relative` and its parents.
        pub fn mkdir(&self, relative: &str) -> Utf8PathBuf {
            let path = self.path(relative);
            std::fs::create_dir_all(&path).expect("directory created");
            path
        }

        /// Plants a symlink at `relative` pointing to `target` (taken literally, so a relative
        /// target is resolved from the link's directory).
        #[cfg(unix)]
        pub fn symlink(&self, relative: &str, target: &str) -> Utf8PathBuf {
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
        pub fn fifo(&self, relative: &str) -> Option<Utf8PathBuf> {
            let path = self.path(relative);
            std::process::Command::new("mkfifo")
                .arg(path.as_str())
                .status()
                .is_ok_and(|status| status.success())
                .then_some(path)
        }

        /// The bytes of the file at `relative`, following links.
        pub fn read(&self, relative: &str) -> Vec<u8> {
            std::fs::read(self.path(relative)).expect("file readable")
        }

        /// Whether anything, even a dangling symlink, is at `relative`.
        pub fn exists(&self, relative: &str) -> bool {
            std::fs::symlink_metadata(self.path(relative)).is_ok()
        }
    }

    impl Default for Sandbox {
        fn default() -> Self {
            Sandbox::new()
        }
    }
}

pub use sandbox::Sandbox;

// Small helpers of the host tests (sol-host, sol-napi).
#[allow(clippy::disallowed_methods)]
mod helpers {
    /// Permission bits of what is at `path`, without following a final symlink.
    #[cfg(unix)]
    pub fn mode(path: &camino::Utf8Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::symlink_metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o7777
    }

    /// A regular expression that matches `text` literally, for insta's filters.
    pub fn literal_pattern(text: impl AsRef<str>) -> String {
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
    pub fn without_blocking<T: Send + 'static>(
        operation: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = send.send(operation());
        });
        receive.recv_timeout(std::time::Duration::from_secs(5)).ok()
    }
}

#[cfg(unix)]
pub use helpers::mode;
pub use helpers::{literal_pattern, without_blocking};

//! Throw-away directories and small helpers shared by the modules.

use camino::Utf8Path;

pub(crate) use sol_testkit::Sandbox;

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

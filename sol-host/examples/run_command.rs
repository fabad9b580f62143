//! A Rust host's first use of sol-host: run a real command with a timeout, and write a
//! private file in a folder of its own.
#![allow(clippy::print_stdout)]

use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use sol_host::camino::Utf8PathBuf;
use sol_host::sol_core::{FileSystem, SessionId, Shell, ShellExit, ShellRequest};
use sol_host::{OsFileSystem, OsShell, storage};

fn main() {
    // A private folder (mode 0700, made exclusively) in the system's temp folder.
    let temp = Utf8PathBuf::from_path_buf(std::env::temp_dir()).expect("a UTF-8 temp folder");
    let id = SessionId::parse("example").expect("a safe session id");
    let folder = storage::make_private_temp_dir(&temp, &id).expect("a private folder");

    // A command that ends: its output (stdout and stderr in order) and its exit status.
    let shell = OsShell::new();
    let done = shell
        .run(
            &ShellRequest::new("echo hello; echo oops >&2; exit 3", folder.clone())
                .with_timeout(Duration::from_secs(60)),
        )
        .expect("sh starts");
    println!("output: {:?}", done.output);
    println!("exit: {:?}", done.exit);

    // A command that never ends by itself: the timeout stops it and everything it started.
    let stopped = shell
        .run(
            &ShellRequest::new("sleep 2147483647 & wait", folder.clone())
                .with_timeout(Duration::from_millis(100)),
        )
        .expect("sh starts");
    assert!(matches!(stopped.exit, ShellExit::TimedOut { .. }));
    println!("timed out: {:?}", stopped.exit);

    // A private file (mode 0600, created exclusively, never through a link), read back.
    let file = folder.join("notes.txt");
    OsFileSystem
        .create_new(&file, b"kept\n")
        .expect("a new private file");
    let bytes = OsFileSystem.read_no_follow(&file, 1024).expect("read back");
    let mode = std::fs::metadata(&file).expect("stat").permissions().mode() & 0o777;
    println!("file: {:?}, mode {mode:o}", String::from_utf8_lossy(&bytes));

    std::fs::remove_dir_all(&folder).expect("cleaned up");
}

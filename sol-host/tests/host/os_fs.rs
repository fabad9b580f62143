//! `OsFileSystem` honours the `sol_core::FileSystem` contract on a real file system:
//! no-follow opens, private modes, exclusive creation, bounded reads.

use camino::Utf8Path;
use proptest::prelude::*;
use sol_core::{FileKind, FileMetadata, FileSystem, FsErrorKind};
use sol_host::OsFileSystem;

use crate::support::{Sandbox, mode, without_blocking};

const FS: OsFileSystem = OsFileSystem;

fn kind_of(result: Result<impl Sized, sol_core::FsError>) -> FsErrorKind {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(error) => error.kind,
    }
}

#[test]
fn metadata_reports_kinds_without_following_a_final_symlink() {
    let sandbox = Sandbox::new();
    sandbox.write("data/real.txt", "hello");
    sandbox.symlink("data/link", "real.txt");
    sandbox.symlink("dirlink", "data");

    assert_eq!(
        FS.metadata(&sandbox.path("missing")).expect("no error"),
        None
    );
    assert_eq!(
        FS.metadata(&sandbox.path("missing/deeper"))
            .expect("no error"),
        None
    );
    assert_eq!(
        FS.metadata(&sandbox.path("data/real.txt")).expect("ok"),
        Some(FileMetadata {
            kind: FileKind::File,
            len: 5
        })
    );
    assert_eq!(
        FS.metadata(&sandbox.path("data"))
            .expect("ok")
            .map(|meta| meta.kind),
        Some(FileKind::Dir)
    );
    // lstat: the link itself, whose length is that of its target path.
    assert_eq!(
        FS.metadata(&sandbox.path("data/link")).expect("ok"),
        Some(FileMetadata {
            kind: FileKind::Symlink,
            len: "real.txt".len() as u64
        })
    );
    assert_eq!(
        FS.metadata(&sandbox.path("dirlink"))
            .expect("ok")
            .map(|meta| meta.kind),
        Some(FileKind::Symlink)
    );
    // Links before the final component are followed.
    assert_eq!(
        FS.metadata(&sandbox.path("dirlink/real.txt"))
            .expect("ok")
            .map(|meta| meta.kind),
        Some(FileKind::File)
    );
}

#[test]
fn metadata_of_a_fifo_is_other() {
    let sandbox = Sandbox::new();
    let Some(fifo) = sandbox.fifo("pipe") else {
        return;
    };
    assert_eq!(
        FS.metadata(&fifo).expect("ok").map(|meta| meta.kind),
        Some(FileKind::Other)
    );
}

#[test]
fn read_follows_symlinks_and_bounds_the_size() {
    let sandbox = Sandbox::new();
    sandbox.write("data/real.txt", "0123456789");
    sandbox.symlink("data/link", "real.txt");
    sandbox.symlink("abs", sandbox.path("data/link").as_str());

    assert_eq!(
        FS.read(&sandbox.path("data/link"), 100).expect("followed"),
        b"0123456789"
    );
    assert_eq!(
        FS.read(&sandbox.path("abs"), 100).expect("two hops"),
        b"0123456789"
    );
    // Exactly at the limit is fine; one byte over is not.
    assert_eq!(
        FS.read(&sandbox.path("data/real.txt"), 10)
            .expect("at the limit")
            .len(),
        10
    );
    let error = FS
        .read(&sandbox.path("data/real.txt"), 9)
        .expect_err("over the limit");
    assert_eq!(error.kind, FsErrorKind::TooLarge);
    assert_eq!(error.path, sandbox.path("data/real.txt"));
    assert_eq!(
        kind_of(FS.read(&sandbox.path("data/link"), 9)),
        FsErrorKind::TooLarge
    );
}

#[test]
fn read_reports_missing_files_and_directories() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("dir");
    sandbox.symlink("dangling", "nowhere");
    assert_eq!(
        kind_of(FS.read(&sandbox.path("missing"), 10)),
        FsErrorKind::NotFound
    );
    assert_eq!(
        kind_of(FS.read(&sandbox.path("missing/deeper"), 10)),
        FsErrorKind::NotFound
    );
    assert_eq!(
        kind_of(FS.read(&sandbox.path("dangling"), 10)),
        FsErrorKind::NotFound
    );
    assert_eq!(
        kind_of(FS.read(&sandbox.path("dir"), 10)),
        FsErrorKind::NotAFile
    );
}

#[test]
fn read_no_follow_refuses_a_symlink_and_reads_a_regular_file() {
    let sandbox = Sandbox::new();
    sandbox.write("data/real.txt", "hello");
    sandbox.symlink("data/link", "real.txt");
    sandbox.mkdir("dir");

    assert_eq!(
        FS.read_no_follow(&sandbox.path("data/real.txt"), 5)
            .expect("a regular file"),
        b"hello"
    );
    let error = FS
        .read_no_follow(&sandbox.path("data/link"), 100)
        .expect_err("a symlink to a real file");
    assert_eq!(error.kind, FsErrorKind::SymlinkRefused);
    assert_eq!(error.path, sandbox.path("data/link"));
    assert_eq!(
        kind_of(FS.read_no_follow(&sandbox.path("data/real.txt"), 4)),
        FsErrorKind::TooLarge
    );
    assert_eq!(
        kind_of(FS.read_no_follow(&sandbox.path("missing"), 4)),
        FsErrorKind::NotFound
    );
    assert_eq!(
        kind_of(FS.read_no_follow(&sandbox.path("dir"), 4)),
        FsErrorKind::NotAFile
    );
}

#[test]
fn create_dir_private_creates_nested_private_directories() {
    let sandbox = Sandbox::new();
    let existing = sandbox.mkdir("sessions");
    let before = mode(&existing);
    FS.create_dir_private(&sandbox.path("sessions/sol-pi/s1/observation-pack"))
        .expect("created");
    for dir in [
        "sessions/sol-pi",
        "sessions/sol-pi/s1",
        "sessions/sol-pi/s1/observation-pack",
    ] {
        let path = sandbox.path(dir);
        assert!(path.is_dir(), "{dir} is a directory");
        assert_eq!(mode(&path), 0o700, "{dir}");
    }
    // Existing directories are kept as they are.
    assert_eq!(mode(&existing), before);
}

#[test]
fn create_dir_private_is_idempotent() {
    let sandbox = Sandbox::new();
    let dir = sandbox.path("a/b");
    FS.create_dir_private(&dir).expect("created");
    sandbox.write("a/b/keep.txt", "kept");
    FS.create_dir_private(&dir).expect("already there");
    FS.create_dir_private(&sandbox.path("a"))
        .expect("an ancestor");
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(sandbox.read("a/b/keep.txt"), b"kept");
}

#[test]
fn create_dir_private_refuses_a_symlinked_leaf() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("attacker");
    let link = sandbox.symlink("sessions/evil", "../attacker");
    let error = FS.create_dir_private(&link).expect_err("a symlink");
    assert_eq!(error.kind, FsErrorKind::SymlinkRefused);
    // A dangling link is refused too, and its target is not created.
    let dangling = sandbox.symlink("sessions/dangling", "../nowhere");
    assert_eq!(
        kind_of(FS.create_dir_private(&dangling)),
        FsErrorKind::SymlinkRefused
    );
    assert!(!sandbox.exists("nowhere"));
}

#[test]
fn create_dir_private_refuses_a_symlinked_intermediate_component() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("attacker/existing");
    sandbox.symlink("sessions/evil", "../attacker");

    // Nothing below the link exists yet. The error names the path given, as every error
    // of the port does, not the link found along it.
    let given = sandbox.path("sessions/evil/new/deeper");
    let error = FS.create_dir_private(&given).expect_err("through a link");
    assert_eq!(error.kind, FsErrorKind::SymlinkRefused);
    assert_eq!(error.path, given);
    assert!(!sandbox.exists("attacker/new"));

    // The directory already exists behind the link: accepting it would let the next
    // create_new land in the attacker's directory.
    assert_eq!(
        kind_of(FS.create_dir_private(&sandbox.path("sessions/evil/existing"))),
        FsErrorKind::SymlinkRefused
    );
    assert_eq!(
        kind_of(FS.create_dir_private(&sandbox.path("sessions/evil/existing/sub"))),
        FsErrorKind::SymlinkRefused
    );
    assert!(!sandbox.exists("attacker/existing/sub"));
}

#[test]
fn create_dir_private_refuses_regular_files_along_the_path() {
    let sandbox = Sandbox::new();
    sandbox.write("sessions/file", "x");
    // The double's semantics: a file at the leaf already exists; a file further up is
    // a component that is not a directory.
    assert_eq!(
        kind_of(FS.create_dir_private(&sandbox.path("sessions/file"))),
        FsErrorKind::AlreadyExists
    );
    assert_eq!(
        kind_of(FS.create_dir_private(&sandbox.path("sessions/file/sub"))),
        FsErrorKind::Other
    );
    assert_eq!(sandbox.read("sessions/file"), b"x");
}

#[test]
fn a_cycle_of_links_is_an_error_but_not_a_refused_link() {
    let sandbox = Sandbox::new();
    sandbox.symlink("loop", "loop");
    // Following links, ELOOP is a cycle: not a link that the operation declined to follow.
    assert_eq!(
        kind_of(FS.read(&sandbox.path("loop"), 10)),
        FsErrorKind::Other
    );
    assert_eq!(
        kind_of(FS.metadata(&sandbox.path("loop/x"))),
        FsErrorKind::Other
    );
    assert_eq!(
        kind_of(FS.create_new(&sandbox.path("loop/x"), b"x")),
        FsErrorKind::Other
    );
    // Not following the final link, the link itself is refused.
    assert_eq!(
        kind_of(FS.read_no_follow(&sandbox.path("loop"), 10)),
        FsErrorKind::SymlinkRefused
    );
    assert_eq!(
        kind_of(FS.append(&sandbox.path("loop"), b"x")),
        FsErrorKind::SymlinkRefused
    );
}

#[test]
fn create_new_writes_exactly_once_with_mode_0600() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("s");
    let path = sandbox.path("s/obj.bin");
    let bytes: Vec<u8> = (0..=255).collect();
    FS.create_new(&path, &bytes).expect("created");
    assert_eq!(sandbox.read("s/obj.bin"), bytes);
    assert_eq!(mode(&path), 0o600);

    let error = FS.create_new(&path, b"second").expect_err("exclusive");
    assert_eq!(error.kind, FsErrorKind::AlreadyExists);
    assert_eq!(error.path, path);
    assert_eq!(
        sandbox.read("s/obj.bin"),
        bytes,
        "the original is untouched"
    );

    FS.create_new(&sandbox.path("s/empty"), b"")
        .expect("empty file");
    assert_eq!(sandbox.read("s/empty"), b"");
    assert_eq!(
        kind_of(FS.create_new(&sandbox.path("missing/obj"), b"x")),
        FsErrorKind::NotFound
    );
    assert_eq!(
        kind_of(FS.create_new(&sandbox.path("s"), b"x")),
        FsErrorKind::AlreadyExists
    );
}

#[test]
fn create_new_never_writes_through_a_planted_symlink() {
    let sandbox = Sandbox::new();
    sandbox.write("elsewhere/secret", "keep");
    sandbox.mkdir("s");
    sandbox.symlink("s/obj", "../elsewhere/secret");
    sandbox.symlink("s/dangling", "../elsewhere/created");

    let error = FS
        .create_new(&sandbox.path("s/obj"), b"overwritten")
        .expect_err("a symlink is present");
    assert_eq!(error.kind, FsErrorKind::AlreadyExists);
    assert_eq!(sandbox.read("elsewhere/secret"), b"keep");

    // A dangling link must not create its target either.
    assert_eq!(
        kind_of(FS.create_new(&sandbox.path("s/dangling"), b"x")),
        FsErrorKind::AlreadyExists
    );
    assert!(!sandbox.exists("elsewhere/created"));
}

#[test]
fn append_creates_private_then_appends() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("s");
    let ledger = sandbox.path("s/ledger.jsonl");
    FS.append(&ledger, b"{\"a\":1}\n").expect("created");
    assert_eq!(mode(&ledger), 0o600);
    FS.append(&ledger, b"{\"a\":2}\n").expect("appended");
    FS.append(&ledger, b"").expect("nothing appended");
    assert_eq!(sandbox.read("s/ledger.jsonl"), b"{\"a\":1}\n{\"a\":2}\n");
    assert_eq!(mode(&ledger), 0o600);
    assert_eq!(
        kind_of(FS.append(&sandbox.path("missing/ledger"), b"x")),
        FsErrorKind::NotFound
    );
    assert_eq!(
        kind_of(FS.append(&sandbox.path("s"), b"x")),
        FsErrorKind::NotAFile
    );
}

/// Two processes appending to one ledger (two Pi processes on one session folder) never leave
/// an empty line or a glued record: the fresh-line check and the write are done under an
/// exclusive lock, so the check never reads the end of a record another appender is still
/// writing. Threads with their own open file stand in for the processes (the lock is per open
/// file); records of 5 KB cross page boundaries, where a concurrent write shows half done.
#[test]
fn concurrent_appenders_leave_only_whole_records() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("s");
    let ledger = sandbox.path("s/ledger.jsonl");
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let ledger = ledger.clone();
            std::thread::spawn(move || {
                for n in 0..300 {
                    let record = format!(
                        "{{\"w\":{writer},\"n\":{n},\"pad\":\"{}\"}}\n",
                        "x".repeat(5_000)
                    );
                    FS.append(&ledger, record.as_bytes()).expect("appended");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("a writer");
    }
    let text = String::from_utf8(sandbox.read("s/ledger.jsonl")).expect("UTF-8");
    let lines: Vec<&str> = text
        .strip_suffix('\n')
        .expect("ends with a line end")
        .split('\n')
        .collect();
    assert_eq!(lines.len(), 4 * 300);
    for line in lines {
        assert!(
            line.starts_with("{\"w\":") && line.ends_with("\"}"),
            "a whole record: {}",
            &line[..line.len().min(60)]
        );
    }
}

/// A crash left the last record without its line end (or cut it short): the next append
/// starts on a fresh line, so neither the torn record nor the new one is glued to the other.
#[test]
fn append_after_a_torn_record_starts_on_a_fresh_line() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("s");
    let ledger = sandbox.path("s/ledger.jsonl");
    FS.append(&ledger, b"{\"a\":1}\n{\"a\":2}")
        .expect("a record without its LF");
    FS.append(&ledger, b"{\"a\":3}\n")
        .expect("appended after it");
    assert_eq!(
        sandbox.read("s/ledger.jsonl"),
        b"{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n"
    );
    // Cut mid-record, as a killed write leaves it.
    std::fs::write(&ledger, b"{\"a\":1}\n{\"a\":").expect("torn");
    FS.append(&ledger, b"{\"a\":4}\n{\"a\":5}\n")
        .expect("appended after it");
    assert_eq!(
        sandbox.read("s/ledger.jsonl"),
        b"{\"a\":1}\n{\"a\":\n{\"a\":4}\n{\"a\":5}\n"
    );
    // Nothing to append adds nothing, not even the line end.
    std::fs::write(&ledger, b"{\"a\":").expect("torn");
    FS.append(&ledger, b"").expect("nothing");
    assert_eq!(sandbox.read("s/ledger.jsonl"), b"{\"a\":");
}

#[test]
fn append_refuses_a_symlink_and_leaves_its_target_unchanged() {
    let sandbox = Sandbox::new();
    sandbox.write("elsewhere/secret", "keep");
    sandbox.symlink("s/ledger", "../elsewhere/secret");
    sandbox.symlink("s/dangling", "../elsewhere/created");

    let error = FS
        .append(&sandbox.path("s/ledger"), b"appended")
        .expect_err("a symlink");
    assert_eq!(error.kind, FsErrorKind::SymlinkRefused);
    assert_eq!(error.path, sandbox.path("s/ledger"));
    assert_eq!(sandbox.read("elsewhere/secret"), b"keep");

    assert_eq!(
        kind_of(FS.append(&sandbox.path("s/dangling"), b"x")),
        FsErrorKind::SymlinkRefused
    );
    assert!(!sandbox.exists("elsewhere/created"));
}

#[test]
fn error_messages_name_the_path() {
    let sandbox = Sandbox::new();
    let missing = sandbox.path("missing");
    let error = FS.read(&missing, 1).expect_err("missing");
    assert!(
        error.to_string().ends_with(&format!(": {missing}")),
        "{error}"
    );
    assert!(!error.message.contains(missing.as_str()), "{error:?}");
}

fn round_trip(sandbox: &Sandbox, name: &str, bytes: &[u8]) -> Result<(), TestCaseError> {
    let path = sandbox.path(name);
    let len = bytes.len() as u64;
    FS.create_new(&path, bytes)
        .map_err(|error| TestCaseError::fail(error.to_string()))?;
    prop_assert_eq!(FS.read(&path, len).expect("at the limit"), bytes);
    prop_assert_eq!(FS.read_no_follow(&path, len).expect("at the limit"), bytes);
    if len > 0 {
        prop_assert_eq!(kind_of(FS.read(&path, len - 1)), FsErrorKind::TooLarge);
        prop_assert_eq!(
            kind_of(FS.read_no_follow(&path, len - 1)),
            FsErrorKind::TooLarge
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn create_new_then_read_returns_the_same_bytes(
        bytes in proptest::collection::vec(any::<u8>(), 0..64 * 1024),
    ) {
        let sandbox = Sandbox::new();
        round_trip(&sandbox, "blob", &bytes)?;
    }
}

#[test]
fn round_trip_at_the_edges() {
    let sandbox = Sandbox::new();
    for (index, len) in [0usize, 1, 8191, 8192, 8193, 64 * 1024]
        .into_iter()
        .enumerate()
    {
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        round_trip(&sandbox, &format!("edge-{index}"), &bytes).expect("round trip");
    }
}

/// One port call on a path, reduced to its outcome kind.
type Operation = fn(&Utf8Path) -> Result<(), FsErrorKind>;

/// A FIFO at the path (reached through a link or not) must not hang Pi: opening one for
/// reading waits for a writer, and for writing waits for a reader, unless O_NONBLOCK is set.
#[test]
fn a_fifo_is_refused_without_blocking() {
    let sandbox = Sandbox::new();
    let Some(fifo) = sandbox.fifo("pipe") else {
        return;
    };
    // A user's sol-pi.json may be a link; a link to a FIFO gets past a metadata check.
    let link = sandbox.symlink("sol-pi.json", "pipe");
    let read: Operation = |path| FS.read(path, 10).map(drop).map_err(|e| e.kind);
    let read_no_follow: Operation =
        |path| FS.read_no_follow(path, 10).map(drop).map_err(|e| e.kind);
    let append: Operation = |path| FS.append(path, b"x").map_err(|e| e.kind);
    let cases = [
        ("read", &fifo, read, FsErrorKind::NotAFile),
        ("read through a link", &link, read, FsErrorKind::NotAFile),
        (
            "read_no_follow",
            &fifo,
            read_no_follow,
            FsErrorKind::NotAFile,
        ),
        // Opened for reading too (the fresh-line rule reads the last byte), the open does
        // not wait for another end; the handle is then refused as not a regular file.
        ("append", &fifo, append, FsErrorKind::NotAFile),
    ];
    for (name, path, operation, expected) in cases {
        let target = path.clone();
        let outcome = without_blocking(move || operation(&target));
        if outcome.is_none() {
            // Open the other end so that the blocked thread can finish.
            let _ = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(path);
        }
        let outcome = outcome.unwrap_or_else(|| panic!("{name} blocked on a FIFO"));
        assert_eq!(outcome, Err(expected), "{name}");
    }
}

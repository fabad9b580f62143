//! The content-addressed archive over the FileSystem port.

use camino::{Utf8Path, Utf8PathBuf};
use sol_core::testing::{MemoryFileSystem, MemoryNode};
use sol_core::{FsError, FsErrorKind};
use sol_reducer::archive::{ArchiveError, archive_log, object_path, read_archived, store_root};
use sol_reducer::sha256_hex;

use crate::support::ROOT;

fn store() -> Utf8PathBuf {
    store_root(Utf8Path::new(ROOT))
}

#[test]
fn objects_are_fanned_out_by_the_first_two_hex_digits() {
    let sha = sha256_hex(b"log");
    assert_eq!(
        object_path(Utf8Path::new("/r/evidence-preserving-reducer"), &sha),
        Utf8PathBuf::from(format!(
            "/r/evidence-preserving-reducer/objects/{}/{sha}.txt",
            &sha[..2]
        ))
    );
    assert_eq!(
        store(),
        Utf8PathBuf::from(format!("{ROOT}/evidence-preserving-reducer"))
    );
}

#[test]
fn a_new_log_is_created_private_with_its_line_count() {
    let fs = MemoryFileSystem::new();
    let archived = archive_log(&fs, &store(), "a\nb\nc").expect("archived");
    assert!(!archived.reused);
    assert_eq!(archived.bytes, 5);
    assert_eq!(archived.lines, 3);
    assert_eq!(fs.file(&archived.path), Some(b"a\nb\nc".to_vec()));
    assert_eq!(fs.mode(&archived.path), Some(0o600));
    assert_eq!(
        fs.mode(archived.path.parent().expect("fan-out dir")),
        Some(0o700)
    );
    assert_eq!(fs.mode(store().join("objects")), Some(0o700));
    assert_eq!(
        archive_log(&fs, &store(), "a\n").expect("archived").lines,
        1
    );
    assert_eq!(archive_log(&fs, &store(), "").expect("archived").lines, 0);
}

#[test]
fn an_identical_object_is_reused_after_verification() {
    let fs = MemoryFileSystem::new();
    let first = archive_log(&fs, &store(), "same log\n").expect("archived");
    let reads_before = fs.reads().len();
    let second = archive_log(&fs, &store(), "same log\n").expect("reused");
    assert!(second.reused);
    assert_eq!(second.path, first.path);
    // Reuse reads the object back to check it.
    assert_eq!(fs.reads().len(), reads_before + 1);
}

/// A half-written object (a crash of a writer that wrote in place) or one with other bytes
/// of the same size: the log at hand hashes to the object's name, so the archive writes it
/// whole again and the reduction goes on; the next run reuses it.
#[test]
fn a_damaged_object_is_written_again_from_the_log() {
    let log = "error: expected `;`\n";
    let path = object_path(&store(), &sha256_hex(log.as_bytes()));
    for damaged in [
        "error: exp",
        "error: expected `,`\n",
        "",
        "error: expected `;`\n\n",
    ] {
        let fs = MemoryFileSystem::new().with_file(&path, damaged);
        let archived = archive_log(&fs, &store(), log).expect("healed");
        assert!(archived.repaired && !archived.reused, "{damaged:?}");
        assert_eq!(archived.path, path);
        assert_eq!(fs.file(&path), Some(log.as_bytes().to_vec()), "{damaged:?}");
        assert_eq!(fs.mode(&path), Some(0o600));
        let again = archive_log(&fs, &store(), log).expect("reused");
        assert!(again.reused && !again.repaired);
    }
}

/// A file system whose writes crash half-way: `create_new` leaves half the bytes in place
/// (what a write in place leaves), `replace_private` leaves the target untouched (what a
/// crash before the rename leaves).
struct CrashingWrites<'a>(&'a MemoryFileSystem);

impl sol_core::FileSystem for CrashingWrites<'_> {
    fn metadata(&self, path: &Utf8Path) -> Result<Option<sol_core::FileMetadata>, FsError> {
        self.0.metadata(path)
    }
    fn read(&self, path: &Utf8Path, max: u64) -> Result<Vec<u8>, FsError> {
        self.0.read(path, max)
    }
    fn read_no_follow(&self, path: &Utf8Path, max: u64) -> Result<Vec<u8>, FsError> {
        self.0.read_no_follow(path, max)
    }
    fn create_dir_private(&self, path: &Utf8Path) -> Result<(), FsError> {
        self.0.create_dir_private(path)
    }
    fn create_new(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        self.0.create_new(path, &contents[..contents.len() / 2])?;
        Err(FsError::new(FsErrorKind::Other, path, "crashed mid-write"))
    }
    fn append(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        self.0.append(path, contents)
    }
    fn replace_private(&self, path: &Utf8Path, _contents: &[u8]) -> Result<(), FsError> {
        Err(FsError::new(
            FsErrorKind::Other,
            path,
            "crashed before the rename",
        ))
    }
}

/// An object is never half-written: a crash while archiving leaves nothing under the log's
/// name, and the next run archives it whole.
#[test]
fn a_crash_while_archiving_leaves_no_half_object() {
    let log = "FAILED tests/test_parse.py::test_empty - AssertionError\n".repeat(20);
    let fs = MemoryFileSystem::new();
    let error = archive_log(&CrashingWrites(&fs), &store(), &log).expect_err("crashed");
    assert!(matches!(error, ArchiveError::Fs(_)), "{error:?}");
    let path = object_path(&store(), &sha256_hex(log.as_bytes()));
    assert!(
        fs.node(&path).is_none(),
        "nothing is left under the log's name"
    );
    let archived = archive_log(&fs, &store(), &log).expect("the next run archives it");
    assert!(!archived.reused && !archived.repaired);
    assert_eq!(fs.file(&path), Some(log.into_bytes()));
}

#[test]
fn a_symlink_or_directory_in_place_of_the_object_is_refused() {
    let log = "panic: boom\n";
    let path = object_path(&store(), &sha256_hex(log.as_bytes()));
    let fs = MemoryFileSystem::new()
        .with_file("/elsewhere/copy.txt", log)
        .with_symlink(&path, "/elsewhere/copy.txt");
    let error = archive_log(&fs, &store(), log).expect_err("a symlink");
    assert_eq!(error, ArchiveError::NotARegularFile { path: path.clone() });
    assert!(error.to_string().contains("not a regular file"));
    assert!(matches!(fs.node(&path), Some(MemoryNode::Symlink { .. })));
    let fs = MemoryFileSystem::new().with_dir(&path);
    assert!(matches!(
        archive_log(&fs, &store(), log),
        Err(ArchiveError::NotARegularFile { .. })
    ));
}

#[test]
fn file_system_failures_are_reported() {
    // A file where the store directory should be.
    let fs = MemoryFileSystem::new().with_file(store(), "not a dir");
    let error = archive_log(&fs, &store(), "log").expect_err("no directory");
    assert!(matches!(error, ArchiveError::Fs(_)), "{error:?}");
    assert_eq!(error.code(), "archive-fs-error");
}

#[test]
fn read_archived_checks_size_hash_and_kind() {
    let fs = MemoryFileSystem::new();
    let archived = archive_log(&fs, &store(), "héllo\n").expect("archived");
    let text = read_archived(&fs, &archived.path, &archived.sha256, archived.bytes).expect("read");
    assert_eq!(text, "héllo\n");
    let wrong_hash = sha256_hex(b"other");
    assert!(matches!(
        read_archived(&fs, &archived.path, &wrong_hash, archived.bytes),
        Err(ArchiveError::Integrity { .. })
    ));
    assert!(matches!(
        read_archived(&fs, &archived.path, &archived.sha256, archived.bytes + 1),
        Err(ArchiveError::Integrity { .. })
    ));
    let missing = store().join("objects/00/missing.txt");
    match read_archived(&fs, &missing, &archived.sha256, 1) {
        Err(ArchiveError::Fs(error)) => assert_eq!(error.kind, FsErrorKind::NotFound),
        other => panic!("{other:?}"),
    }
}

//! The archive and the ledger over the in-memory file system.

use std::sync::Mutex;

use camino::{Utf8Path, Utf8PathBuf};
use sol_core::testing::{MemoryFileSystem, MemoryNode};
use sol_core::{FileMetadata, FileSystem, FsError, FsErrorKind};
use sol_obspack::store::{Damage, ObservationStore, StoreOutcome};
use sol_obspack::{LedgerRecord, RecallError, StoreError, observe, recall_page};

use crate::fixtures::{CARGO_TEST_LOG, MULTIBYTE_TEXT, bash};
use crate::recall::all_pages;

const DIR: &str = "/sessions/s1/sol-pi/s1/observation-pack";
const STAMP: &str = "2025-06-01T12:00:00.000Z";

/// A [`MemoryFileSystem`] that records appends and can refuse writes.
struct Recording<'a> {
    inner: &'a MemoryFileSystem,
    appends: Mutex<Vec<(Utf8PathBuf, usize)>>,
    refuse_create_new: bool,
    refuse_append: bool,
    replaced: Mutex<Vec<Utf8PathBuf>>,
}

impl<'a> Recording<'a> {
    fn new(inner: &'a MemoryFileSystem) -> Self {
        Recording {
            inner,
            appends: Mutex::new(Vec::new()),
            refuse_create_new: false,
            refuse_append: false,
            replaced: Mutex::new(Vec::new()),
        }
    }

    fn replaced(&self) -> Vec<Utf8PathBuf> {
        self.replaced.lock().expect("not poisoned").clone()
    }

    fn appends(&self) -> Vec<(Utf8PathBuf, usize)> {
        self.appends.lock().expect("not poisoned").clone()
    }
}

fn denied(path: &Utf8Path) -> FsError {
    FsError::new(FsErrorKind::PermissionDenied, path, "permission denied")
}

impl FileSystem for Recording<'_> {
    fn metadata(&self, path: &Utf8Path) -> Result<Option<FileMetadata>, FsError> {
        self.inner.metadata(path)
    }

    fn read(&self, path: &Utf8Path, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        self.inner.read(path, max_bytes)
    }

    fn read_no_follow(&self, path: &Utf8Path, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        self.inner.read_no_follow(path, max_bytes)
    }

    fn create_dir_private(&self, path: &Utf8Path) -> Result<(), FsError> {
        self.inner.create_dir_private(path)
    }

    fn create_new(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        if self.refuse_create_new {
            return Err(denied(path));
        }
        self.inner.create_new(path, contents)
    }

    fn append(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        self.appends
            .lock()
            .expect("not poisoned")
            .push((path.to_owned(), contents.len()));
        if self.refuse_append {
            return Err(denied(path));
        }
        self.inner.append(path, contents)
    }

    fn replace_private(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        self.replaced
            .lock()
            .expect("not poisoned")
            .push(path.to_owned());
        if self.refuse_create_new {
            return Err(denied(path));
        }
        self.inner.replace_private(path, contents)
    }
}

fn object_path(text: &str) -> Utf8PathBuf {
    Utf8PathBuf::from(format!("{DIR}/objects/{}.txt", bash(text).id))
}

fn record_path(text: &str) -> Utf8PathBuf {
    Utf8PathBuf::from(format!("{DIR}/objects/{}.json", bash(text).id))
}

/// The record `ensure_stored` writes for `text`.
fn genuine_record(text: &str) -> Vec<u8> {
    let fs = MemoryFileSystem::new();
    ObservationStore::new(&fs, DIR)
        .ensure_stored(&bash(text), text)
        .expect("stored");
    fs.file(record_path(text)).expect("a record")
}

fn store_error(error: RecallError) -> StoreError {
    match error {
        RecallError::Store(error) => error,
        other => panic!("expected a store error, got {other:?}"),
    }
}

#[test]
fn the_paths_follow_the_documented_layout() {
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    let obs = bash(CARGO_TEST_LOG);
    assert_eq!(store.dir(), DIR);
    assert_eq!(store.objects_dir(), format!("{DIR}/objects"));
    assert_eq!(store.ledger_path(), format!("{DIR}/ledger.jsonl"));
    assert_eq!(store.object_path(&obs.id), object_path(CARGO_TEST_LOG));
    assert_eq!(store.record_path(&obs.id), record_path(CARGO_TEST_LOG));
    // Nothing is touched until an operation runs.
    assert_eq!(fs.paths(), [Utf8PathBuf::from("/")]);
}

#[test]
fn storing_writes_a_private_object_and_its_record_once() {
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    let obs = bash(CARGO_TEST_LOG);
    assert_eq!(
        store.ensure_stored(&obs, CARGO_TEST_LOG),
        Ok(StoreOutcome::Created)
    );
    assert_eq!(
        fs.file(object_path(CARGO_TEST_LOG)).as_deref(),
        Some(CARGO_TEST_LOG.as_bytes())
    );
    assert_eq!(fs.mode(object_path(CARGO_TEST_LOG)), Some(0o600));
    assert_eq!(fs.mode(record_path(CARGO_TEST_LOG)), Some(0o600));
    assert_eq!(fs.mode(format!("{DIR}/objects")), Some(0o700));
    assert_eq!(fs.mode(DIR), Some(0o700));

    let record = fs.file(record_path(CARGO_TEST_LOG)).expect("a record");
    let record: serde_json::Value = serde_json::from_slice(&record).expect("JSON");
    assert_eq!(
        record,
        serde_json::json!({
            "id": obs.id.as_str(),
            "tool": "bash",
            "contentHash": obs.content_hash,
            "bytes": 28_231,
            "lines": 487,
            "tokens": 7_058
        })
    );

    assert_eq!(
        store.ensure_stored(&obs, CARGO_TEST_LOG),
        Ok(StoreOutcome::Reused)
    );
    assert_eq!(
        fs.file(object_path(CARGO_TEST_LOG)).as_deref(),
        Some(CARGO_TEST_LOG.as_bytes())
    );
}

#[test]
fn a_stored_observation_is_recalled_exactly() {
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    let obs = bash(MULTIBYTE_TEXT);
    store.ensure_stored(&obs, MULTIBYTE_TEXT).expect("stored");
    let original = store.read_verified(&obs.id).expect("verified");
    assert_eq!(original, MULTIBYTE_TEXT.as_bytes());
    let joined: String = all_pages(&obs.id, &original)
        .iter()
        .map(|page| page.chunk().to_owned())
        .collect();
    assert_eq!(joined, MULTIBYTE_TEXT);
    // The record is read first, then the object, without following links.
    let reads = fs.reads();
    assert_eq!(reads[reads.len() - 2], record_path(MULTIBYTE_TEXT));
    assert_eq!(reads[reads.len() - 1], object_path(MULTIBYTE_TEXT));
}

#[test]
fn an_identical_object_already_in_place_is_kept_and_its_record_recreated() {
    let memory = MemoryFileSystem::new().with_file(object_path(CARGO_TEST_LOG), CARGO_TEST_LOG);
    let fs = Recording::new(&memory);
    let store = ObservationStore::new(&fs, DIR);
    let obs = bash(CARGO_TEST_LOG);
    // Without its record the object is damaged, not unknown.
    let error = store.read_verified(&obs.id).expect_err("no record");
    assert_eq!(
        store_error(error),
        StoreError::Damaged {
            id: obs.id.clone(),
            damage: Damage::RecordMissing
        }
    );
    assert_eq!(
        store.ensure_stored(&obs, CARGO_TEST_LOG),
        Ok(StoreOutcome::Repaired(Damage::RecordMissing))
    );
    assert_eq!(
        fs.replaced(),
        Vec::<Utf8PathBuf>::new(),
        "the object is not rewritten"
    );
    assert_eq!(
        memory.file(record_path(CARGO_TEST_LOG)),
        Some(genuine_record(CARGO_TEST_LOG))
    );
    assert_eq!(
        store.read_verified(&obs.id).as_deref(),
        Ok(CARGO_TEST_LOG.as_bytes())
    );
}

#[test]
fn an_intact_object_with_its_record_is_never_rewritten() {
    let memory = MemoryFileSystem::new();
    let fs = Recording::new(&memory);
    let store = ObservationStore::new(&fs, DIR);
    let obs = bash(CARGO_TEST_LOG);
    assert_eq!(
        store.ensure_stored(&obs, CARGO_TEST_LOG),
        Ok(StoreOutcome::Created)
    );
    for _ in 0..3 {
        assert_eq!(
            store.ensure_stored(&obs, CARGO_TEST_LOG),
            Ok(StoreOutcome::Reused)
        );
        store.read_verified(&obs.id).expect("verified");
    }
    assert_eq!(fs.replaced(), Vec::<Utf8PathBuf>::new());
}

#[test]
fn the_same_content_from_reused_or_empty_call_ids_is_one_object() {
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    let first = observe("bash", "call_0", CARGO_TEST_LOG);
    assert_eq!(
        store.ensure_stored(&first, CARGO_TEST_LOG),
        Ok(StoreOutcome::Created)
    );
    for call in ["call_1", "", "call_0"] {
        let again = observe("bash", call, CARGO_TEST_LOG);
        assert_eq!(again.id, first.id);
        assert_eq!(
            store.ensure_stored(&again, CARGO_TEST_LOG),
            Ok(StoreOutcome::Reused)
        );
    }
    // Other bytes under the same reused call id are another object.
    let other = CARGO_TEST_LOG.replacen("FAILED", "PASSED", 1);
    let second = observe("bash", "call_0", &other);
    assert_ne!(second.id, first.id);
    assert_eq!(
        store.ensure_stored(&second, &other),
        Ok(StoreOutcome::Created)
    );
    assert_eq!(
        store.read_verified(&first.id).as_deref(),
        Ok(CARGO_TEST_LOG.as_bytes())
    );
    assert_eq!(
        store.read_verified(&second.id).as_deref(),
        Ok(other.as_bytes())
    );
    let objects: Vec<_> = fs
        .paths()
        .into_iter()
        .filter(|path| path.extension() == Some("txt"))
        .collect();
    assert_eq!(objects.len(), 2);
}

#[test]
fn the_same_content_in_two_sessions_is_stored_twice() {
    let fs = MemoryFileSystem::new();
    let a = ObservationStore::new(&fs, "/s/sol-pi/session-a/observation-pack");
    let b = ObservationStore::new(&fs, "/s/sol-pi/session-b/observation-pack");
    let obs = bash(CARGO_TEST_LOG);
    assert_eq!(
        a.ensure_stored(&obs, CARGO_TEST_LOG),
        Ok(StoreOutcome::Created)
    );
    assert_eq!(
        b.ensure_stored(&obs, CARGO_TEST_LOG),
        Ok(StoreOutcome::Created)
    );
    assert!(fs.file(a.object_path(&obs.id)).is_some() && fs.file(b.object_path(&obs.id)).is_some());
}

#[test]
fn an_object_with_other_bytes_and_no_record_is_rebuilt_from_the_original() {
    let tampered = CARGO_TEST_LOG.replacen("FAILED", "PASSED", 1);
    assert_eq!(tampered.len(), CARGO_TEST_LOG.len());
    let memory = MemoryFileSystem::new().with_file(object_path(CARGO_TEST_LOG), tampered.as_str());
    let fs = Recording::new(&memory);
    let store = ObservationStore::new(&fs, DIR);
    let obs = bash(CARGO_TEST_LOG);
    assert_eq!(
        store.ensure_stored(&obs, CARGO_TEST_LOG),
        Ok(StoreOutcome::Repaired(Damage::HashMismatch))
    );
    assert_eq!(fs.replaced(), [object_path(CARGO_TEST_LOG)]);
    assert_eq!(
        memory.file(object_path(CARGO_TEST_LOG)).as_deref(),
        Some(CARGO_TEST_LOG.as_bytes())
    );
    assert_eq!(memory.mode(object_path(CARGO_TEST_LOG)), Some(0o600));
    assert_eq!(
        memory.file(record_path(CARGO_TEST_LOG)),
        Some(genuine_record(CARGO_TEST_LOG))
    );
}

#[test]
fn an_object_left_empty_truncated_or_grown_is_rebuilt_from_the_original() {
    let obs = bash(CARGO_TEST_LOG);
    for stored in [
        "",
        &CARGO_TEST_LOG[..100],
        &format!("{CARGO_TEST_LOG}x")[..],
        &CARGO_TEST_LOG.repeat(2)[..],
    ] {
        let fs = MemoryFileSystem::new().with_file(object_path(CARGO_TEST_LOG), stored);
        let store = ObservationStore::new(&fs, DIR);
        // Reads stop one byte past the expected size: a much larger file is not read whole.
        let found = if stored.len() > 28_232 {
            None
        } else {
            Some(stored.len() as u64)
        };
        assert_eq!(
            store.ensure_stored(&obs, CARGO_TEST_LOG),
            Ok(StoreOutcome::Repaired(Damage::SizeMismatch {
                expected: 28_231,
                found,
                unvouched: true
            })),
            "{} bytes",
            stored.len()
        );
        assert_eq!(
            store.read_verified(&obs.id).as_deref(),
            Ok(CARGO_TEST_LOG.as_bytes())
        );
    }
}

#[test]
fn a_tampered_object_is_damaged_at_recall_and_rebuilt_only_from_its_original() {
    let obs = bash(CARGO_TEST_LOG);
    let record = genuine_record(CARGO_TEST_LOG);
    let damaged = |error: RecallError| match store_error(error) {
        StoreError::Damaged { damage, .. } => damage,
        other => panic!("expected damage, got {other:?}"),
    };

    // Same size, other bytes.
    let tampered = CARGO_TEST_LOG.replacen("ok", "KO", 1);
    let fs = MemoryFileSystem::new()
        .with_file(record_path(CARGO_TEST_LOG), record.clone())
        .with_file(object_path(CARGO_TEST_LOG), tampered.as_str());
    let store = ObservationStore::new(&fs, DIR);
    let error = store.read_verified(&obs.id).expect_err("hash");
    assert!(error.is_rebuildable());
    assert_eq!(damaged(error.clone()), Damage::HashMismatch);
    // History without this original: the damage is reported, nothing is changed.
    let unrelated = "x".repeat(20_000);
    let history = [
        ("bash", "call_0", unrelated.as_str()),
        ("read", "c", CARGO_TEST_LOG),
    ];
    let not_rebuilt = store
        .read_or_rebuild(&obs.id, error.clone(), history)
        .expect_err("no original");
    assert_eq!(
        not_rebuilt,
        RecallError::DamagedNotRebuilt {
            id: obs.id.clone(),
            damage: Damage::HashMismatch
        }
    );
    assert_eq!(
        not_rebuilt.to_string(),
        format!(
            "Stored observation {} is damaged (its object's SHA-256 differs from the original's); it could not be rebuilt from this branch's history",
            obs.id
        )
    );
    assert_eq!(
        fs.file(object_path(CARGO_TEST_LOG)).as_deref(),
        Some(tampered.as_bytes())
    );
    // With it: the record's hash is the original's, so the object is rebuilt.
    let history = [
        ("bash", "call_0", unrelated.as_str()),
        ("bash", "any", CARGO_TEST_LOG),
    ];
    let (bytes, outcome) = store
        .read_or_rebuild(&obs.id, error, history)
        .expect("rebuilt");
    assert_eq!(bytes, CARGO_TEST_LOG.as_bytes());
    assert_eq!(outcome, StoreOutcome::Repaired(Damage::HashMismatch));
    assert_eq!(fs.file(record_path(CARGO_TEST_LOG)), Some(record.clone()));

    // Grown after it was stored.
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    store.ensure_stored(&obs, CARGO_TEST_LOG).expect("stored");
    fs.append(&object_path(CARGO_TEST_LOG), b"appended")
        .expect("appended");
    assert_eq!(
        damaged(store.read_verified(&obs.id).expect_err("size")),
        Damage::SizeMismatch {
            expected: 28_231,
            found: None,
            unvouched: false
        }
    );
    assert_eq!(
        store.ensure_stored(&obs, CARGO_TEST_LOG),
        Ok(StoreOutcome::Repaired(Damage::SizeMismatch {
            expected: 28_231,
            found: None,
            unvouched: false
        }))
    );

    // Truncated.
    let fs = MemoryFileSystem::new()
        .with_file(record_path(CARGO_TEST_LOG), record)
        .with_file(object_path(CARGO_TEST_LOG), &CARGO_TEST_LOG[..1_000]);
    assert_eq!(
        damaged(
            ObservationStore::new(&fs, DIR)
                .read_verified(&obs.id)
                .expect_err("size")
        ),
        Damage::SizeMismatch {
            expected: 28_231,
            found: Some(1_000),
            unvouched: false
        }
    );
}

#[test]
fn read_or_rebuild_restores_an_unknown_id_and_passes_other_failures_through() {
    let obs = bash(CARGO_TEST_LOG);
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    let unknown = store.read_verified(&obs.id).expect_err("nothing stored");
    assert_eq!(unknown.code(), "unknown_id");
    // Not on the branch: still unknown.
    let empty: [(&str, &str, &str); 0] = [];
    assert_eq!(
        store.read_or_rebuild(&obs.id, unknown.clone(), empty),
        Err(unknown.clone())
    );
    // A text under the threshold with the same id cannot exist; the packable one is found.
    let (bytes, outcome) = store
        .read_or_rebuild(&obs.id, unknown, [("bash", "", CARGO_TEST_LOG)])
        .expect("restored");
    assert_eq!(bytes, CARGO_TEST_LOG.as_bytes());
    assert_eq!(outcome, StoreOutcome::Created);
    // A failure history cannot fix is returned as it is, and history is not looked at.
    let refused = RecallError::Store(StoreError::ObjectSymlink { id: obs.id.clone() });
    assert!(!refused.is_rebuildable());
    assert_eq!(
        store.read_or_rebuild(&obs.id, refused.clone(), [("bash", "", CARGO_TEST_LOG)]),
        Err(refused)
    );
}

#[test]
fn a_tampered_or_foreign_record_is_refused_at_recall() {
    let obs = bash(CARGO_TEST_LOG);
    let record: serde_json::Value =
        serde_json::from_slice(&genuine_record(CARGO_TEST_LOG)).expect("JSON");
    let mut cases: Vec<(Vec<u8>, &str)> = Vec::new();
    for (key, value) in [
        ("tool", serde_json::json!("read")),
        ("contentHash", serde_json::json!("0".repeat(64))),
        ("contentHash", serde_json::json!("not hex")),
        ("id", serde_json::json!("obs_ffffffffffffffffffffffff")),
    ] {
        let mut changed = record.clone();
        changed[key] = value;
        cases.push((serde_json::to_vec(&changed).expect("JSON"), key));
    }
    cases.push((b"{not json".to_vec(), "syntax"));
    cases.push((b"{}".to_vec(), "empty"));
    for (bytes, case) in cases {
        let fs = MemoryFileSystem::new()
            .with_file(record_path(CARGO_TEST_LOG), bytes)
            .with_file(object_path(CARGO_TEST_LOG), CARGO_TEST_LOG);
        let store = ObservationStore::new(&fs, DIR);
        let error = store.read_verified(&obs.id).expect_err(case);
        assert!(
            matches!(
                &error,
                RecallError::Store(StoreError::Damaged {
                    damage: Damage::RecordInvalid { .. },
                    ..
                })
            ),
            "{case}: {error}"
        );
        // The archive step has the original: the record is written again.
        assert!(matches!(
            store.ensure_stored(&obs, CARGO_TEST_LOG),
            Ok(StoreOutcome::Repaired(Damage::RecordInvalid { .. }))
        ));
        assert_eq!(
            fs.file(record_path(CARGO_TEST_LOG)),
            Some(genuine_record(CARGO_TEST_LOG)),
            "{case}"
        );
    }
    // A record with the right identity but other sizes is replaced too.
    let mut changed = record.clone();
    changed["lines"] = serde_json::json!(1);
    let fs = MemoryFileSystem::new()
        .with_file(
            record_path(CARGO_TEST_LOG),
            serde_json::to_vec(&changed).expect("JSON"),
        )
        .with_file(object_path(CARGO_TEST_LOG), CARGO_TEST_LOG);
    assert_eq!(
        ObservationStore::new(&fs, DIR).ensure_stored(&obs, CARGO_TEST_LOG),
        Ok(StoreOutcome::Repaired(Damage::RecordInvalid {
            reason: "it differs from the observation being stored".to_owned()
        }))
    );
    // A record written before ids ignored the call id names another observation.
    let mut legacy = record.clone();
    legacy["toolCallId"] = serde_json::json!("call_0");
    legacy["id"] = serde_json::json!("obs_5850947af9eef74ce31624b9");
    let fs = MemoryFileSystem::new()
        .with_file(
            record_path(CARGO_TEST_LOG),
            serde_json::to_vec(&legacy).expect("JSON"),
        )
        .with_file(object_path(CARGO_TEST_LOG), CARGO_TEST_LOG);
    assert!(
        ObservationStore::new(&fs, DIR)
            .read_verified(&obs.id)
            .is_err()
    );
}

#[test]
fn a_symlinked_object_is_never_followed() {
    let obs = bash(CARGO_TEST_LOG);
    let fs = MemoryFileSystem::new()
        .with_file("/outside/secret.txt", "secret")
        .with_symlink(object_path(CARGO_TEST_LOG), "/outside/secret.txt");
    let store = ObservationStore::new(&fs, DIR);
    let error = store
        .ensure_stored(&obs, CARGO_TEST_LOG)
        .expect_err("symlink");
    assert_eq!(error, StoreError::ObjectSymlink { id: obs.id.clone() });
    assert_eq!(
        fs.file("/outside/secret.txt").as_deref(),
        Some(&b"secret"[..])
    );

    let fs = MemoryFileSystem::new()
        .with_file("/outside/copy.txt", CARGO_TEST_LOG)
        .with_file(record_path(CARGO_TEST_LOG), genuine_record(CARGO_TEST_LOG))
        .with_symlink(object_path(CARGO_TEST_LOG), "/outside/copy.txt");
    let error = ObservationStore::new(&fs, DIR)
        .read_verified(&obs.id)
        .expect_err("symlink");
    assert_eq!(store_error(error).code(), "object_symlink");
}

#[test]
fn a_symlinked_record_is_never_followed() {
    let obs = bash(CARGO_TEST_LOG);
    let fs = MemoryFileSystem::new()
        .with_file("/outside/record.json", genuine_record(CARGO_TEST_LOG))
        .with_symlink(record_path(CARGO_TEST_LOG), "/outside/record.json")
        .with_file(object_path(CARGO_TEST_LOG), CARGO_TEST_LOG);
    let error = ObservationStore::new(&fs, DIR)
        .read_verified(&obs.id)
        .expect_err("symlink");
    assert_eq!(error.code(), "record_invalid");
    assert!(error.to_string().contains("symlink"), "{error}");
}

#[test]
fn a_symlinked_objects_directory_is_refused_and_nothing_is_written_through_it() {
    let obs = bash(CARGO_TEST_LOG);
    let fs = MemoryFileSystem::new()
        .with_dir("/outside")
        .with_symlink(format!("{DIR}/objects"), "/outside");
    let store = ObservationStore::new(&fs, DIR);
    let error = store
        .ensure_stored(&obs, CARGO_TEST_LOG)
        .expect_err("symlinked dir");
    assert!(
        matches!(&error, StoreError::DirectoryNotRegular { id, .. } if *id == obs.id),
        "{error:?}"
    );
    assert!(error.to_string().contains("not a regular directory"));
    assert!(error.to_string().contains("symlink"), "{error}");
    assert!(
        fs.paths()
            .iter()
            .all(|path| !path.starts_with("/outside") || path == "/outside")
    );
    let error = store.read_verified(&obs.id).expect_err("symlinked dir");
    assert_eq!(error.code(), "directory_not_regular");
}

#[test]
fn a_symlinked_store_directory_is_refused_too() {
    let obs = bash(CARGO_TEST_LOG);
    let fs = MemoryFileSystem::new()
        .with_file(
            format!("/outside/objects/{}.json", obs.id),
            genuine_record(CARGO_TEST_LOG),
        )
        .with_file(format!("/outside/objects/{}.txt", obs.id), CARGO_TEST_LOG)
        .with_symlink(DIR, "/outside");
    let store = ObservationStore::new(&fs, DIR);
    assert_eq!(
        store
            .ensure_stored(&obs, CARGO_TEST_LOG)
            .map_err(|e| e.code()),
        Err("directory_not_regular")
    );
    assert_eq!(
        store.read_verified(&obs.id).map_err(|e| e.code()),
        Err("directory_not_regular")
    );
}

#[test]
fn a_file_where_the_objects_directory_belongs_is_refused() {
    let obs = bash(CARGO_TEST_LOG);
    let fs = MemoryFileSystem::new().with_file(format!("{DIR}/objects"), "not a dir");
    let store = ObservationStore::new(&fs, DIR);
    assert_eq!(
        store
            .ensure_stored(&obs, CARGO_TEST_LOG)
            .map_err(|e| e.code()),
        Err("directory_not_regular")
    );
    assert_eq!(
        store.read_verified(&obs.id).map_err(|e| e.code()),
        Err("directory_not_regular")
    );
}

#[test]
fn a_directory_at_the_object_path_is_not_a_regular_file() {
    let obs = bash(CARGO_TEST_LOG);
    let fs = MemoryFileSystem::new().with_dir(object_path(CARGO_TEST_LOG));
    let store = ObservationStore::new(&fs, DIR);
    let error = store
        .ensure_stored(&obs, CARGO_TEST_LOG)
        .expect_err("a directory");
    assert_eq!(
        error,
        StoreError::ObjectNotRegularFile { id: obs.id.clone() }
    );
    assert!(matches!(
        fs.node(object_path(CARGO_TEST_LOG)),
        Some(MemoryNode::Dir { .. })
    ));
}

#[test]
fn a_failed_write_is_an_error_to_fail_open_on_and_leaves_nothing() {
    let obs = bash(CARGO_TEST_LOG);
    let memory = MemoryFileSystem::new();
    let mut fs = Recording::new(&memory);
    fs.refuse_create_new = true;
    let store = ObservationStore::new(&fs, DIR);
    let error = store
        .ensure_stored(&obs, CARGO_TEST_LOG)
        .expect_err("write refused");
    assert_eq!(error.code(), "io");
    assert!(error.to_string().contains(obs.id.as_str()), "{error}");
    assert_eq!(memory.file(object_path(CARGO_TEST_LOG)), None);
    assert_eq!(
        store.read_verified(&obs.id).map_err(|e| e.code()),
        Err("unknown_id")
    );
}

#[test]
fn a_failed_read_is_an_error_too() {
    let obs = bash(CARGO_TEST_LOG);
    let fs = MemoryFileSystem::new()
        .with_file(object_path(CARGO_TEST_LOG), CARGO_TEST_LOG)
        .with_read_failure(
            object_path(CARGO_TEST_LOG),
            FsErrorKind::PermissionDenied,
            "permission denied",
        );
    let store = ObservationStore::new(&fs, DIR);
    let error = store
        .ensure_stored(&obs, CARGO_TEST_LOG)
        .expect_err("read refused");
    assert_eq!(error.code(), "io");
    let StoreError::Io { source, .. } = &error else {
        panic!("an io error");
    };
    assert_eq!(source.kind, FsErrorKind::PermissionDenied);
}

#[test]
fn unknown_ids_are_reported_as_such() {
    let obs = bash(CARGO_TEST_LOG);
    // Nothing at all.
    let fs = MemoryFileSystem::new();
    let error = ObservationStore::new(&fs, DIR)
        .read_verified(&obs.id)
        .expect_err("empty");
    assert_eq!(
        error,
        RecallError::UnknownId {
            id: obs.id.to_string()
        }
    );
    assert_eq!(
        error.to_string(),
        format!("Unknown observation id: {}", obs.id)
    );
    // An objects directory without this id.
    let fs = MemoryFileSystem::new().with_dir(format!("{DIR}/objects"));
    assert_eq!(
        ObservationStore::new(&fs, DIR)
            .read_verified(&obs.id)
            .map_err(|e| e.code()),
        Err("unknown_id")
    );
    // A record whose object is gone is damage, not an unknown id.
    let fs = MemoryFileSystem::new()
        .with_file(record_path(CARGO_TEST_LOG), genuine_record(CARGO_TEST_LOG));
    let error = ObservationStore::new(&fs, DIR)
        .read_verified(&obs.id)
        .expect_err("no object");
    assert_eq!(
        error.to_string(),
        format!(
            "Stored observation {} is damaged (its object file is missing)",
            obs.id
        )
    );
    assert!(error.is_rebuildable());
}

#[test]
fn a_symlink_anywhere_in_the_storage_path_is_refused_for_reads_as_for_writes() {
    let obs = bash(CARGO_TEST_LOG);
    let record = genuine_record(CARGO_TEST_LOG);
    // A complete, correct store moved elsewhere and linked in at each level.
    for (link, below) in [
        ("/sessions/s1/sol-pi", "s1/observation-pack"),
        ("/sessions/s1/sol-pi/s1", "observation-pack"),
        ("/sessions/s1/sol-pi/s1/observation-pack", ""),
    ] {
        let target = Utf8PathBuf::from("/elsewhere").join(below);
        let fs = MemoryFileSystem::new()
            .with_file(
                target.join(format!("objects/{}.json", obs.id)),
                record.clone(),
            )
            .with_file(
                target.join(format!("objects/{}.txt", obs.id)),
                CARGO_TEST_LOG,
            )
            .with_symlink(link, "/elsewhere");
        // The bytes are reachable through the link...
        assert_eq!(
            fs.read(&object_path(CARGO_TEST_LOG), 1 << 20).as_deref(),
            Ok(CARGO_TEST_LOG.as_bytes())
        );
        // ...but neither recall nor the archive step goes through it.
        let store = ObservationStore::new(&fs, DIR);
        let error = store.read_verified(&obs.id).expect_err(link);
        assert_eq!(error.code(), "directory_not_regular", "{link}");
        assert_eq!(
            error.to_string(),
            format!(
                "Observation directory is not a regular directory for {}: {link} is a symbolic link, and links in SoL-Pi's storage path are refused",
                obs.id
            )
        );
        assert!(!error.is_rebuildable());
        assert_eq!(
            store
                .ensure_stored(&obs, CARGO_TEST_LOG)
                .map_err(|e| e.code()),
            Err("directory_not_regular"),
            "{link}"
        );
    }
}

#[test]
fn an_observation_of_another_text_is_refused() {
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    let obs = bash(CARGO_TEST_LOG);
    let other = CARGO_TEST_LOG.replacen("ok", "KO", 1);
    let error = store.ensure_stored(&obs, &other).expect_err("mismatch");
    assert_eq!(error.code(), "observation_mismatch");
    assert_eq!(fs.paths(), [Utf8PathBuf::from("/")]);
}

#[test]
fn a_ledger_batch_is_one_append_and_an_empty_batch_none() {
    let memory = MemoryFileSystem::new();
    let fs = Recording::new(&memory);
    let store = ObservationStore::new(&fs, DIR);
    store.append_ledger(&[], STAMP).expect("nothing to do");
    assert!(fs.appends().is_empty());
    assert_eq!(memory.paths(), [Utf8PathBuf::from("/")]);

    let a = bash(CARGO_TEST_LOG);
    let b = bash(MULTIBYTE_TEXT);
    let c = observe("read", "call_3", MULTIBYTE_TEXT);
    let batch = [
        LedgerRecord::full(&a, 1, 1),
        LedgerRecord::full(&b, 1, 1),
        LedgerRecord::full(&c, 1, 1),
    ];
    store.append_ledger(&batch, STAMP).expect("appended");
    assert_eq!(fs.appends().len(), 1);
    let page = recall_page(&a.id, CARGO_TEST_LOG.as_bytes(), 0).expect("a page");
    store
        .append_ledger(&[LedgerRecord::recall(&page.details)], STAMP)
        .expect("appended");
    assert_eq!(fs.appends().len(), 2);
    assert!(
        fs.appends()
            .iter()
            .all(|(path, _)| *path == store.ledger_path())
    );

    let ledger = memory.file(store.ledger_path()).expect("a ledger");
    let ledger = String::from_utf8(ledger).expect("UTF-8");
    let events: Vec<String> = ledger
        .lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
            format!(
                "{} {}",
                value["event"].as_str().unwrap_or_default(),
                value["id"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            format!("full {}", a.id),
            format!("full {}", b.id),
            format!("full {}", c.id),
            format!("recall {}", a.id),
        ]
    );
    assert_eq!(memory.mode(store.ledger_path()), Some(0o600));
}

#[test]
fn a_failed_ledger_append_is_reported() {
    let memory = MemoryFileSystem::new();
    let mut fs = Recording::new(&memory);
    fs.refuse_append = true;
    let store = ObservationStore::new(&fs, DIR);
    let obs = bash(CARGO_TEST_LOG);
    let error = store
        .append_ledger(&[LedgerRecord::full(&obs, 1, 1)], STAMP)
        .expect_err("refused");
    assert_eq!(error.code(), "ledger_append_failed");

    let memory = MemoryFileSystem::new()
        .with_file("/outside/log", "")
        .with_symlink(format!("{DIR}/ledger.jsonl"), "/outside/log");
    let store = ObservationStore::new(&memory, DIR);
    let error = store
        .append_ledger(&[LedgerRecord::full(&obs, 1, 1)], STAMP)
        .expect_err("symlink");
    let StoreError::LedgerAppend { source } = error else {
        panic!("a ledger error");
    };
    assert_eq!(source.kind, FsErrorKind::SymlinkRefused);
    assert_eq!(memory.file("/outside/log").as_deref(), Some(&b""[..]));
}

#[test]
fn observe_and_store_archives_what_observe_describes() {
    let fs = MemoryFileSystem::new();
    let store = ObservationStore::new(&fs, DIR);
    let (obs, outcome) = store.observe_and_store("bash", "call_9", CARGO_TEST_LOG);
    assert_eq!(obs, sol_obspack::observe("bash", "call_9", CARGO_TEST_LOG));
    assert_eq!(outcome, Ok(StoreOutcome::Created));
    assert_eq!(
        store.read_verified(&obs.id).expect("recall"),
        CARGO_TEST_LOG.as_bytes()
    );
    let (_, again) = store.observe_and_store("bash", "call_9", CARGO_TEST_LOG);
    assert_eq!(again, Ok(StoreOutcome::Reused));
}

#[test]
fn an_object_archived_by_0_1_0_is_still_recalled_under_its_old_id() {
    use sha2::{Digest, Sha256};
    // SoL-Pi 0.1.0 named objects after the tool, the provider's tool-call id and the content
    // hash, and kept the call id in the record; a model may still ask for such an id.
    let obs = observe("bash", "call_7", CARGO_TEST_LOG);
    let mut hasher = Sha256::new();
    hasher.update(format!("bash\0call_7\0{}", obs.content_hash).as_bytes());
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let old_id = format!("obs_{}", &digest[..24]);
    assert_ne!(old_id, obs.id.as_str());
    let fs = MemoryFileSystem::new();
    let objects = Utf8PathBuf::from(format!("{DIR}/objects"));
    fs.create_dir_private(&objects).expect("dir");
    let record = serde_json::json!({
        "id": old_id, "tool": "bash", "toolCallId": "call_7", "contentHash": obs.content_hash,
        "bytes": obs.bytes, "lines": obs.lines, "tokens": obs.tokens,
    });
    fs.create_new(
        &objects.join(format!("{old_id}.json")),
        format!("{record}\n").as_bytes(),
    )
    .expect("record");
    fs.create_new(
        &objects.join(format!("{old_id}.txt")),
        CARGO_TEST_LOG.as_bytes(),
    )
    .expect("object");
    let store = ObservationStore::new(&fs, DIR);
    let id = sol_obspack::ObservationId::parse(&old_id).expect("well-formed");
    assert_eq!(
        store.read_verified(&id).expect("verified"),
        CARGO_TEST_LOG.as_bytes()
    );

    // The same record with other bytes is still damage, not a match.
    let fs = MemoryFileSystem::new();
    fs.create_dir_private(&objects).expect("dir");
    fs.create_new(
        &objects.join(format!("{old_id}.json")),
        format!("{record}\n").as_bytes(),
    )
    .expect("record");
    fs.create_new(&objects.join(format!("{old_id}.txt")), b"other bytes")
        .expect("object");
    assert!(ObservationStore::new(&fs, DIR).read_verified(&id).is_err());
}

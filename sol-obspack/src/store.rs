//! The archive and the ledger, driven through the [`FileSystem`] port.
//!
//! Layout under the store's directory (`<runtime root>/observation-pack/`):
//!
//! ```text
//! objects/<id>.txt     the original text, byte for byte (created once, never rewritten)
//! objects/<id>.json    its record: {"id","tool","toolCallId","contentHash","bytes","lines","tokens"}
//! ledger.jsonl         the ledger (see crate::ledger)
//! ```
//!
//! Every file is created exclusively with mode 0600 and never through a symlink; the objects
//! directory is created with mode 0700 and must be a real directory. An object found in
//! place is used only after its size and SHA-256 are checked, and a recall checks them again
//! against the record, whose fields must in turn give back the observation id. Any failure
//! is an error the host can fail open on: the model then simply gets the full text.
//!
//! The example uses the in-memory double from `sol-core`'s `testing` feature; a host passes
//! its own implementation of the port.
//!
//! ```
//! use sol_core::testing::MemoryFileSystem;
//! use sol_obspack::ledger::LedgerRecord;
//! use sol_obspack::store::{ObservationStore, StoreOutcome};
//! use sol_obspack::{observe, recall_page};
//!
//! let fs = MemoryFileSystem::new();
//! let store = ObservationStore::new(&fs, "/sessions/s1/sol-pi/s1/observation-pack");
//! let text = "   Compiling serde v1.0.229 (registry)\n".repeat(300);
//! let obs = observe("bash", "call_9", &text);
//! assert_eq!(store.ensure_stored(&obs, &text)?, StoreOutcome::Created);
//! assert_eq!(store.ensure_stored(&obs, &text)?, StoreOutcome::Reused);
//! store.append_ledger(&[LedgerRecord::full(&obs, 1, 1)], "2025-06-01T12:00:00.000Z")?;
//!
//! let original = store.read_verified(&obs.id)?;
//! let page = recall_page(&obs.id, &original, 0)?;
//! assert_eq!(page.chunk(), text);
//! assert!(page.details.eof);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};
use sol_core::{FileKind, FileSystem, FsError, FsErrorKind};

use crate::ledger::{LedgerRecord, ledger_lines};
use crate::observation::{Observation, ObservationId, sha256_hex};
use crate::recall::RecallError;

/// Name of the directory of archived originals, inside the store's directory.
pub const OBJECTS_DIR_NAME: &str = "objects";
/// Name of the ledger file, inside the store's directory.
pub const LEDGER_FILE_NAME: &str = "ledger.jsonl";
/// Name of the store's directory inside the session's runtime root.
pub const STORE_DIR_NAME: &str = "observation-pack";
/// Largest record file read back; records are far smaller.
pub const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// What [`ObservationStore::ensure_stored`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreOutcome {
    /// The original was written now.
    Created,
    /// The original was already stored, with the same bytes.
    Reused,
}

/// Why the archive or the ledger could not be written or read. Messages name the
/// observation; the host logs them and fails open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The objects directory is a symlink or not a directory.
    #[error("Observation directory is not a regular directory for {id}: {reason}")]
    DirectoryNotRegular {
        /// The observation being stored or recalled.
        id: ObservationId,
        /// What is wrong with it (a symbolic link in the path, a file in the way).
        reason: String,
    },
    /// The object path holds a symlink, which is never followed.
    #[error("Content-addressed observation is a symlink for {id}; symlinks are never followed")]
    ObjectSymlink {
        /// The observation.
        id: ObservationId,
    },
    /// The object path holds a directory or another non-file.
    #[error("Content-addressed observation is not a regular file for {id}")]
    ObjectNotRegularFile {
        /// The observation.
        id: ObservationId,
    },
    /// The stored object has another size than its observation.
    #[error("Content-addressed observation size mismatch for {id}")]
    ObjectSizeMismatch {
        /// The observation.
        id: ObservationId,
        /// The size the observation has.
        expected: u64,
        /// The size found, or `None` when the file is larger than `expected + 1`.
        found: Option<u64>,
    },
    /// The stored object has the right size but other bytes.
    #[error("Content-addressed observation hash mismatch for {id}")]
    ObjectHashMismatch {
        /// The observation.
        id: ObservationId,
    },
    /// The record next to the object is unreadable, malformed, or describes another
    /// observation.
    #[error("Observation record is invalid for {id}: {reason}")]
    RecordInvalid {
        /// The observation.
        id: ObservationId,
        /// What is wrong with it, lower-case.
        reason: String,
    },
    /// The observation given to [`ObservationStore::ensure_stored`] was not made from the
    /// text given with it.
    #[error("Observation does not describe the given text for {id}")]
    ObservationMismatch {
        /// The observation.
        id: ObservationId,
    },
    /// The file system refused an operation.
    #[error("Observation storage failed for {id}: {source}")]
    Io {
        /// The observation.
        id: ObservationId,
        /// The port's error.
        source: FsError,
    },
    /// The ledger could not be appended to.
    #[error("Observation ledger append failed: {source}")]
    LedgerAppend {
        /// The port's error.
        source: FsError,
    },
}

impl StoreError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::DirectoryNotRegular { .. } => "directory_not_regular",
            StoreError::ObjectSymlink { .. } => "object_symlink",
            StoreError::ObjectNotRegularFile { .. } => "object_not_regular_file",
            StoreError::ObjectSizeMismatch { .. } => "object_size_mismatch",
            StoreError::ObjectHashMismatch { .. } => "object_hash_mismatch",
            StoreError::RecordInvalid { .. } => "record_invalid",
            StoreError::ObservationMismatch { .. } => "observation_mismatch",
            StoreError::Io { .. } => "io",
            StoreError::LedgerAppend { .. } => "ledger_append_failed",
        }
    }
}

/// The record stored next to each object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ObjectRecord {
    id: ObservationId,
    tool: String,
    tool_call_id: String,
    content_hash: String,
    bytes: u64,
    lines: u64,
    tokens: u64,
}

impl ObjectRecord {
    fn of(obs: &Observation) -> Self {
        ObjectRecord {
            id: obs.id.clone(),
            tool: obs.tool_name.clone(),
            tool_call_id: obs.tool_call_id.clone(),
            content_hash: obs.content_hash.clone(),
            bytes: obs.bytes,
            lines: obs.lines,
            tokens: obs.tokens,
        }
    }

    fn to_json_line(&self) -> Vec<u8> {
        // Strings and integers only: serializing cannot fail.
        let mut json = serde_json::to_vec(self).unwrap_or_default();
        json.push(b'\n');
        json
    }

    /// Parses a stored record and checks that it belongs to `id`: its own id, and the id
    /// derived from its tool, call id and content hash, must both be `id`.
    fn parse(id: &ObservationId, bytes: &[u8]) -> Result<Self, StoreError> {
        let invalid = |reason: String| StoreError::RecordInvalid {
            id: id.clone(),
            reason,
        };
        let record: ObjectRecord = serde_json::from_slice(bytes)
            .map_err(|error| invalid(format!("not a record: {error}")))?;
        let well_formed_hash = record.content_hash.len() == 64
            && record
                .content_hash
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
        if !well_formed_hash {
            return Err(invalid("the content hash is not 64 hex digits".to_owned()));
        }
        let derived =
            ObservationId::derive(&record.tool, &record.tool_call_id, &record.content_hash);
        if record.id != *id || derived != *id {
            return Err(invalid("it describes another observation".to_owned()));
        }
        Ok(record)
    }
}

/// The ObservationPack storage of one session, over a [`FileSystem`].
pub struct ObservationStore<'a> {
    fs: &'a dyn FileSystem,
    dir: Utf8PathBuf,
}

impl<'a> ObservationStore<'a> {
    /// The store in `dir`, normally `<runtime root>/observation-pack` (see
    /// [`STORE_DIR_NAME`]). Nothing is touched until an operation runs.
    pub fn new(fs: &'a dyn FileSystem, dir: impl Into<Utf8PathBuf>) -> Self {
        ObservationStore {
            fs,
            dir: dir.into(),
        }
    }

    /// The store's directory.
    pub fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// Where the originals and their records live.
    pub fn objects_dir(&self) -> Utf8PathBuf {
        self.dir.join(OBJECTS_DIR_NAME)
    }

    /// The ledger file.
    pub fn ledger_path(&self) -> Utf8PathBuf {
        self.dir.join(LEDGER_FILE_NAME)
    }

    /// Where the original of `id` is stored.
    pub fn object_path(&self, id: &ObservationId) -> Utf8PathBuf {
        self.objects_dir().join(format!("{id}.txt"))
    }

    /// Where the record of `id` is stored.
    pub fn record_path(&self, id: &ObservationId) -> Utf8PathBuf {
        self.objects_dir().join(format!("{id}.json"))
    }

    /// Archives `text`, the original of `obs`, unless it is already archived.
    ///
    /// Creates the objects directory (0700) and checks it is a real directory, creates the
    /// object exclusively (0600, never through a symlink), then its record. An object
    /// already in place is read without following links and must have the observation's
    /// size and hash ([`StoreOutcome::Reused`]); a missing record is recreated, an existing
    /// one must describe the same observation. `obs` must come from
    /// [`observe`](crate::observe) on `text`; this is checked.
    pub fn ensure_stored(&self, obs: &Observation, text: &str) -> Result<StoreOutcome, StoreError> {
        if text.len() as u64 != obs.bytes || sha256_hex(text.as_bytes()) != obs.content_hash {
            return Err(StoreError::ObservationMismatch { id: obs.id.clone() });
        }
        self.store_observed(obs, text)
    }

    /// Observes `text` (see [`observe`](crate::observe)) and archives it like
    /// [`ensure_stored`](Self::ensure_stored), hashing the text once: the observation is
    /// derived here, so it cannot disagree with the text.
    pub fn observe_and_store(
        &self,
        tool_name: &str,
        tool_call_id: &str,
        text: &str,
    ) -> (Observation, Result<StoreOutcome, StoreError>) {
        let obs = crate::observe(tool_name, tool_call_id, text);
        let outcome = self.store_observed(&obs, text);
        (obs, outcome)
    }

    /// [`ensure_stored`](Self::ensure_stored) for an observation known to describe `text`.
    fn store_observed(&self, obs: &Observation, text: &str) -> Result<StoreOutcome, StoreError> {
        let id = &obs.id;
        let objects = self.objects_dir();
        self.fs
            .create_dir_private(&objects)
            .map_err(|error| match error.kind {
                FsErrorKind::SymlinkRefused
                | FsErrorKind::AlreadyExists
                | FsErrorKind::NotAFile => StoreError::DirectoryNotRegular {
                    id: id.clone(),
                    reason: error.to_string(),
                },
                _ => io(id, error),
            })?;
        self.check_objects_dir(id)?;

        let object = self.object_path(id);
        let outcome = match self.fs.create_new(&object, text.as_bytes()) {
            Ok(()) => StoreOutcome::Created,
            Err(error) if error.kind == FsErrorKind::AlreadyExists => {
                let stored = self.read_object(id, &object, obs.bytes)?;
                if stored.len() as u64 != obs.bytes {
                    return Err(size_mismatch(id, obs.bytes, &stored));
                }
                if sha256_hex(&stored) != obs.content_hash {
                    return Err(StoreError::ObjectHashMismatch { id: id.clone() });
                }
                StoreOutcome::Reused
            }
            Err(error) => return Err(io(id, error)),
        };

        let record = ObjectRecord::of(obs);
        let record_path = self.record_path(id);
        match self.fs.create_new(&record_path, &record.to_json_line()) {
            Ok(()) => {}
            Err(error) if error.kind == FsErrorKind::AlreadyExists => {
                let stored = self.read_record(id, &record_path)?;
                if stored != record {
                    return Err(StoreError::RecordInvalid {
                        id: id.clone(),
                        reason: "it differs from the observation being stored".to_owned(),
                    });
                }
            }
            Err(error) => return Err(io(id, error)),
        }
        Ok(outcome)
    }

    /// The original of `id`, after checking it against its record: the record must exist
    /// and belong to `id`, and the object must have the recorded size and SHA-256.
    ///
    /// Nothing stored under `id` (no objects directory, no record or no object) is
    /// [`RecallError::UnknownId`]; symlinks are refused; a tampered object or record is a
    /// [`RecallError::Store`] error that says so.
    pub fn read_verified(&self, id: &ObservationId) -> Result<Vec<u8>, RecallError> {
        let unknown = || RecallError::UnknownId {
            id: id.as_str().to_owned(),
        };
        match self.fs.metadata(&self.objects_dir()) {
            Ok(None) => return Err(unknown()),
            Ok(Some(_)) => self.check_objects_dir(id)?,
            Err(error) => return Err(io(id, error).into()),
        }
        let record = match self.read_record(id, &self.record_path(id)) {
            Err(StoreError::Io { source, .. }) if source.kind == FsErrorKind::NotFound => {
                return Err(unknown());
            }
            other => other?,
        };
        let object = match self.read_object(id, &self.object_path(id), record.bytes) {
            Err(StoreError::Io { source, .. }) if source.kind == FsErrorKind::NotFound => {
                return Err(unknown());
            }
            other => other?,
        };
        if object.len() as u64 != record.bytes {
            return Err(size_mismatch(id, record.bytes, &object).into());
        }
        if sha256_hex(&object) != record.content_hash {
            return Err(StoreError::ObjectHashMismatch { id: id.clone() }.into());
        }
        Ok(object)
    }

    /// Appends `records` to the ledger in one write, each stamped with `timestamp_iso`.
    /// An empty batch touches nothing.
    pub fn append_ledger(
        &self,
        records: &[LedgerRecord],
        timestamp_iso: &str,
    ) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let ledger_error = |source| StoreError::LedgerAppend { source };
        self.fs
            .create_dir_private(&self.dir)
            .map_err(ledger_error)?;
        let lines = ledger_lines(records, timestamp_iso);
        self.fs
            .append(&self.ledger_path(), lines.as_bytes())
            .map_err(ledger_error)
    }

    /// The store's directory and the objects directory must be directories themselves, not
    /// links to one.
    fn check_objects_dir(&self, id: &ObservationId) -> Result<(), StoreError> {
        for dir in [self.dir.clone(), self.objects_dir()] {
            match self.fs.metadata(&dir) {
                Ok(Some(metadata)) if metadata.kind == FileKind::Dir => {}
                Ok(found) => {
                    let reason = match found.map(|metadata| metadata.kind) {
                        Some(FileKind::Symlink) => format!("{dir} is a symbolic link"),
                        Some(_) => format!("{dir} is not a directory"),
                        None => format!("{dir} is missing"),
                    };
                    return Err(StoreError::DirectoryNotRegular {
                        id: id.clone(),
                        reason,
                    });
                }
                Err(error) => return Err(io(id, error)),
            }
        }
        Ok(())
    }

    /// Reads the object at `path` without following a link, up to one byte more than
    /// `expected_bytes` (enough to see that it is too large).
    fn read_object(
        &self,
        id: &ObservationId,
        path: &Utf8Path,
        expected_bytes: u64,
    ) -> Result<Vec<u8>, StoreError> {
        match self.fs.metadata(path) {
            Ok(Some(metadata)) => match metadata.kind {
                FileKind::File => {}
                FileKind::Symlink => return Err(StoreError::ObjectSymlink { id: id.clone() }),
                FileKind::Dir | FileKind::Other => {
                    return Err(StoreError::ObjectNotRegularFile { id: id.clone() });
                }
            },
            // Let the read report the missing file.
            Ok(None) => {}
            Err(error) => return Err(io(id, error)),
        }
        self.fs
            .read_no_follow(path, expected_bytes.saturating_add(1))
            .map_err(|error| match error.kind {
                FsErrorKind::SymlinkRefused => StoreError::ObjectSymlink { id: id.clone() },
                FsErrorKind::NotAFile => StoreError::ObjectNotRegularFile { id: id.clone() },
                FsErrorKind::TooLarge => StoreError::ObjectSizeMismatch {
                    id: id.clone(),
                    expected: expected_bytes,
                    found: None,
                },
                _ => io(id, error),
            })
    }

    /// Reads and checks the record at `path`, without following a link.
    fn read_record(&self, id: &ObservationId, path: &Utf8Path) -> Result<ObjectRecord, StoreError> {
        let invalid = |reason: &str| StoreError::RecordInvalid {
            id: id.clone(),
            reason: reason.to_owned(),
        };
        let bytes =
            self.fs
                .read_no_follow(path, MAX_RECORD_BYTES)
                .map_err(|error| match error.kind {
                    FsErrorKind::SymlinkRefused => {
                        invalid("it is a symlink, and symlinks are never followed")
                    }
                    FsErrorKind::NotAFile => invalid("it is not a regular file"),
                    FsErrorKind::TooLarge => invalid("it is larger than 64 KiB"),
                    _ => io(id, error),
                })?;
        ObjectRecord::parse(id, &bytes)
    }
}

fn io(id: &ObservationId, source: FsError) -> StoreError {
    StoreError::Io {
        id: id.clone(),
        source,
    }
}

fn size_mismatch(id: &ObservationId, expected: u64, found: &[u8]) -> StoreError {
    StoreError::ObjectSizeMismatch {
        id: id.clone(),
        expected,
        found: Some(found.len() as u64),
    }
}

//! The archive and the ledger, driven through the [`FileSystem`] port.
//!
//! Layout under the store's directory (`<runtime root>/observation-pack/`):
//!
//! ```text
//! objects/<id>.txt     the original text, byte for byte
//! objects/<id>.json    its record: {"id","tool","contentHash","bytes","lines","tokens"}
//! ledger.jsonl         the ledger (see crate::ledger)
//! ```
//!
//! Every file is created with mode 0600 and never through a symlink; the objects directory
//! is created with mode 0700. Reads and writes check the same storage path: no component of
//! the objects directory's path may be a symlink or anything but a directory
//! (`<session dir>/sol-pi`, `sol-pi/<session id>`, `observation-pack`, `objects` included),
//! so neither a write nor a recall goes through a planted link.
//!
//! An object found in place is used only when its size and SHA-256 are right, and a recall
//! checks them again against the record, whose fields must in turn give back the
//! observation id.
//!
//! # Damage and healing
//!
//! A crash can leave an object empty or partly written without its record, and a file can
//! be changed by hand. Whenever the exact original is at hand (the archive step always has
//! it; a recall has it when the current branch's history holds the result), the store
//! heals: an object whose bytes are not the original is replaced atomically (a private
//! temporary file in the same folder, synced, renamed over it; see
//! [`FileSystem::replace_private`]), and a missing or invalid record is written again.
//! This includes an object that differs from a valid record (the tamper case): the record
//! vouches for a SHA-256, the id is derived from that SHA-256, and the original from
//! history has it, so rebuilding restores exactly the bytes the record describes. An
//! object that matches its valid record is never rewritten. Symlinks and non-files in the
//! store are refused, never replaced. Without the original, a recall of a damaged object
//! says that it is damaged and why ([`StoreError::Damaged`]), not that the id is unknown.
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

use crate::ledger::{LedgerRead, LedgerRecord, ledger_lines, read_ledger};
use crate::observation::{Observation, ObservationId, sha256_hex};
use crate::records::RecallError;
pub use crate::records::{Damage, StoreError};

/// Name of the directory of archived originals, inside the store's directory.
pub const OBJECTS_DIR_NAME: &str = "objects";
/// Name of the ledger file, inside the store's directory.
pub const LEDGER_FILE_NAME: &str = "ledger.jsonl";
/// Name of the store's directory inside the session's runtime root.
pub const STORE_DIR_NAME: &str = "observation-pack";
/// Largest record file read back; records are far smaller.
pub const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// What [`ObservationStore::ensure_stored`] did.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StoreOutcome {
    /// The original was written now.
    Created,
    /// The original was already stored, with the same bytes and a valid record.
    Reused,
    /// Something was stored but damaged; it was rebuilt from the original given.
    Repaired(Damage),
}

/// The record stored next to each object. Every field follows from the tool name and the
/// content, so two results with the same bytes from the same tool share one record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ObjectRecord {
    id: ObservationId,
    tool: String,
    /// Only in records written by SoL-Pi 0.1.0, whose ids also hashed the tool-call id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
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
            tool_call_id: None,
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
    /// derived from its tool and content hash, must both be `id`. The error is the reason.
    fn parse(id: &ObservationId, bytes: &[u8]) -> Result<Self, String> {
        let record: ObjectRecord =
            serde_json::from_slice(bytes).map_err(|error| format!("not a record: {error}"))?;
        let well_formed_hash = record.content_hash.len() == 64
            && record
                .content_hash
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
        if !well_formed_hash {
            return Err("the content hash is not 64 hex digits".to_owned());
        }
        let derived = match &record.tool_call_id {
            // An object archived by 0.1.0 keeps its old id: a model that remembers it still
            // gets the verified bytes.
            Some(call) => ObservationId::derive_0_1(&record.tool, call, &record.content_hash),
            None => ObservationId::derive(&record.tool, &record.content_hash),
        };
        if record.id != *id || derived != *id {
            return Err("it describes another observation".to_owned());
        }
        Ok(record)
    }
}

/// The record file as found.
enum RecordState {
    Valid(ObjectRecord),
    Missing,
    Invalid(String),
}

/// The object file as found: its bytes (up to one more than expected), or nothing, or too
/// large to be the expected size.
enum ObjectState {
    Bytes(Vec<u8>),
    Missing,
    TooLarge,
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

    /// Archives `text`, the original of `obs`, unless it is already archived intact.
    ///
    /// Creates the objects directory (0700), checks the storage path, and creates the
    /// object exclusively (0600, never through a symlink), then its record. An object
    /// already in place with the observation's size and hash and a valid record is left
    /// alone ([`StoreOutcome::Reused`]); anything damaged is rebuilt from `text` (see the
    /// [module documentation](self)) and reported as [`StoreOutcome::Repaired`]. `obs`
    /// must come from [`observe`](crate::observe) on `text`; this is checked.
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
        self.check_storage_path(id)?;

        let object = self.object_path(id);
        let record_path = self.record_path(id);
        let record = ObjectRecord::of(obs);
        match self.fs.create_new(&object, text.as_bytes()) {
            Ok(()) => {
                // A record left without its object is kept if it is this one, else replaced.
                return match self.record_state(id)? {
                    RecordState::Missing => {
                        self.create_record(id, &record)?;
                        Ok(StoreOutcome::Created)
                    }
                    RecordState::Valid(found) if found == record => {
                        Ok(StoreOutcome::Repaired(Damage::ObjectMissing))
                    }
                    RecordState::Valid(_) => {
                        self.replace(id, &record_path, &record.to_json_line())?;
                        Ok(StoreOutcome::Repaired(Damage::RecordInvalid {
                            reason: "it differs from the observation being stored".to_owned(),
                        }))
                    }
                    RecordState::Invalid(reason) => {
                        self.replace(id, &record_path, &record.to_json_line())?;
                        Ok(StoreOutcome::Repaired(Damage::RecordInvalid { reason }))
                    }
                };
            }
            Err(error) if error.kind == FsErrorKind::AlreadyExists => {}
            Err(error) => return Err(io(id, error)),
        }

        // Something is already there: find out whether it is intact.
        let record_state = self.record_state(id)?;
        let object_damage = match self.object_state(id, &object, obs.bytes)? {
            ObjectState::Bytes(stored) => object_damage(obs, &stored),
            // Only a race with a removal gets here; rebuild it.
            ObjectState::Missing => Some(Damage::ObjectMissing),
            ObjectState::TooLarge => Some(Damage::SizeMismatch {
                expected: obs.bytes,
                found: None,
                unvouched: true,
            }),
        };
        let object_damage = object_damage.map(|damage| match (damage, &record_state) {
            (
                Damage::SizeMismatch {
                    expected, found, ..
                },
                RecordState::Valid(_),
            ) => Damage::SizeMismatch {
                expected,
                found,
                unvouched: false,
            },
            (damage, _) => damage,
        });
        if let Some(damage) = &object_damage {
            self.replace(id, &object, text.as_bytes())?;
            if let RecordState::Valid(found) = &record_state
                && *found == record
            {
                return Ok(StoreOutcome::Repaired(damage.clone()));
            }
        }
        let record_damage = match record_state {
            RecordState::Valid(found) if found == record => None,
            RecordState::Valid(_) => {
                self.replace(id, &record_path, &record.to_json_line())?;
                Some(Damage::RecordInvalid {
                    reason: "it differs from the observation being stored".to_owned(),
                })
            }
            RecordState::Invalid(reason) => {
                self.replace(id, &record_path, &record.to_json_line())?;
                Some(Damage::RecordInvalid { reason })
            }
            RecordState::Missing => {
                self.create_record(id, &record)?;
                Some(Damage::RecordMissing)
            }
        };
        // The object's damage says more than the record's (a crash leaves both).
        Ok(match object_damage.or(record_damage) {
            Some(damage) => StoreOutcome::Repaired(damage),
            None => StoreOutcome::Reused,
        })
    }

    /// Writes the record of a new object; one written by a concurrent store must be the
    /// same.
    fn create_record(&self, id: &ObservationId, record: &ObjectRecord) -> Result<(), StoreError> {
        let path = self.record_path(id);
        match self.fs.create_new(&path, &record.to_json_line()) {
            Ok(()) => Ok(()),
            Err(error) if error.kind == FsErrorKind::AlreadyExists => {
                match self.record_state(id)? {
                    RecordState::Valid(found) if found == *record => Ok(()),
                    _ => self.replace(id, &path, &record.to_json_line()),
                }
            }
            Err(error) => Err(io(id, error)),
        }
    }

    fn replace(&self, id: &ObservationId, path: &Utf8Path, bytes: &[u8]) -> Result<(), StoreError> {
        self.fs
            .replace_private(path, bytes)
            .map_err(|error| io(id, error))
    }

    /// The original of `id`, after checking it against its record: the record must exist
    /// and belong to `id`, and the object must have the recorded size and SHA-256.
    ///
    /// Nothing stored under `id` (no objects directory, or neither record nor object) is
    /// [`RecallError::UnknownId`]; a symlink in the storage path or at the object or record
    /// is refused; anything else wrong is [`StoreError::Damaged`], which the host can heal
    /// with [`ensure_stored`](Self::ensure_stored) when it has the original.
    pub fn read_verified(&self, id: &ObservationId) -> Result<Vec<u8>, RecallError> {
        let unknown = || RecallError::UnknownId {
            id: id.as_str().to_owned(),
        };
        let damaged = |damage| -> RecallError {
            StoreError::Damaged {
                id: id.clone(),
                damage,
            }
            .into()
        };
        if !self.check_storage_path(id)? {
            return Err(unknown());
        }
        let record = self.record_state(id)?;
        let expected = match &record {
            RecordState::Valid(record) => record.bytes,
            // Enough to see that the object is there.
            RecordState::Missing | RecordState::Invalid(_) => 0,
        };
        let object = self.object_state(id, &self.object_path(id), expected)?;
        let record = match (record, object) {
            (RecordState::Missing, ObjectState::Missing) => return Err(unknown()),
            (RecordState::Missing, _) => return Err(damaged(Damage::RecordMissing)),
            (RecordState::Invalid(reason), _) => {
                return Err(damaged(Damage::RecordInvalid { reason }));
            }
            (RecordState::Valid(_), ObjectState::Missing) => {
                return Err(damaged(Damage::ObjectMissing));
            }
            (RecordState::Valid(record), ObjectState::TooLarge) => {
                return Err(damaged(Damage::SizeMismatch {
                    expected: record.bytes,
                    found: None,
                    unvouched: false,
                }));
            }
            (RecordState::Valid(record), ObjectState::Bytes(bytes)) => (record, bytes),
        };
        let (record, object) = record;
        if object.len() as u64 != record.bytes {
            return Err(damaged(Damage::SizeMismatch {
                expected: record.bytes,
                found: Some(object.len() as u64),
                unvouched: false,
            }));
        }
        if sha256_hex(&object) != record.content_hash {
            return Err(damaged(Damage::HashMismatch));
        }
        Ok(object)
    }

    /// Rebuilds the observation `id` from the current branch's history after
    /// [`read_verified`](Self::read_verified) failed with `failure`, and reads it again.
    ///
    /// `history` gives each large text result on the branch as `(tool name, tool call id,
    /// text)`; the one whose observation id is `id` (and that some placement packs: over
    /// [`MEDIUM_THRESHOLD_BYTES`](crate::MEDIUM_THRESHOLD_BYTES)) is archived with
    /// [`ensure_stored`](Self::ensure_stored), which heals a damaged object or record. A
    /// fork or a resumed session has a new storage root, so this is also how it recalls
    /// what its branch can see. Without a match, `failure` stands, except that a damaged
    /// observation becomes [`RecallError::DamagedNotRebuilt`]. A `failure` that history
    /// cannot fix (see [`RecallError::is_rebuildable`]) is returned as it is.
    pub fn read_or_rebuild<'t>(
        &self,
        id: &ObservationId,
        failure: RecallError,
        history: impl IntoIterator<Item = (&'t str, &'t str, &'t str)>,
    ) -> Result<(Vec<u8>, StoreOutcome), RecallError> {
        if !failure.is_rebuildable() {
            return Err(failure);
        }
        let found = history.into_iter().find_map(|(tool, call, text)| {
            let obs = crate::observe(tool, call, text);
            (obs.id == *id && crate::is_packable_over(text, crate::MEDIUM_THRESHOLD_BYTES))
                .then_some((obs, text))
        });
        let Some((obs, text)) = found else {
            return Err(match failure {
                RecallError::Store(StoreError::Damaged { id, damage }) => {
                    RecallError::DamagedNotRebuilt { id, damage }
                }
                other => other,
            });
        };
        let outcome = self.store_observed(&obs, text)?;
        Ok((self.read_verified(id)?, outcome))
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

    /// Reads the ledger back (see [`read_ledger`]): every record
    /// in order, a torn or foreign line skipped without losing the records after it. No
    /// ledger yet reads as empty; a ledger larger than `max_bytes`, or one that is a
    /// symlink, is an error.
    pub fn read_ledger(&self, max_bytes: u64) -> Result<LedgerRead, StoreError> {
        let source = |source| StoreError::LedgerRead { source };
        match self.fs.read_no_follow(&self.ledger_path(), max_bytes) {
            Ok(bytes) => Ok(read_ledger(&String::from_utf8_lossy(&bytes))),
            Err(error) if error.kind == FsErrorKind::NotFound => Ok(LedgerRead::default()),
            Err(error) => Err(source(error)),
        }
    }

    /// The one check of the storage path, for reads and writes alike: every component of
    /// the objects directory's path, from the root down, must be a directory and not a
    /// symlink, the same components [`FileSystem::create_dir_private`] checks before it
    /// creates anything. Components above the session directory are canonical (the host
    /// resolves them once), so a link found anywhere here was planted in SoL-Pi's folders.
    /// Returns whether the objects directory exists; a missing component ends the walk.
    fn check_storage_path(&self, id: &ObservationId) -> Result<bool, StoreError> {
        let objects = self.objects_dir();
        let mut ancestors: Vec<&Utf8Path> = objects
            .ancestors()
            .filter(|dir| !dir.as_str().is_empty())
            .collect();
        ancestors.reverse();
        for dir in ancestors {
            match self.fs.metadata(dir) {
                Ok(Some(metadata)) if metadata.kind == FileKind::Dir => {}
                Ok(None) => return Ok(false),
                Ok(Some(metadata)) => {
                    let reason = match metadata.kind {
                        FileKind::Symlink => format!(
                            "{dir} is a symbolic link, and links in SoL-Pi's storage path are refused"
                        ),
                        _ => format!("{dir} is not a directory"),
                    };
                    return Err(StoreError::DirectoryNotRegular {
                        id: id.clone(),
                        reason,
                    });
                }
                Err(error) => return Err(io(id, error)),
            }
        }
        Ok(true)
    }

    /// Reads the object at `path` without following a link, up to one byte more than
    /// `expected_bytes` (enough to see that it is too large).
    fn object_state(
        &self,
        id: &ObservationId,
        path: &Utf8Path,
        expected_bytes: u64,
    ) -> Result<ObjectState, StoreError> {
        match self.fs.metadata(path) {
            Ok(Some(metadata)) => match metadata.kind {
                FileKind::File => {}
                FileKind::Symlink => return Err(StoreError::ObjectSymlink { id: id.clone() }),
                FileKind::Dir | FileKind::Other => {
                    return Err(StoreError::ObjectNotRegularFile { id: id.clone() });
                }
            },
            Ok(None) => return Ok(ObjectState::Missing),
            Err(error) => return Err(io(id, error)),
        }
        match self
            .fs
            .read_no_follow(path, expected_bytes.saturating_add(1))
        {
            Ok(bytes) => Ok(ObjectState::Bytes(bytes)),
            Err(error) => match error.kind {
                FsErrorKind::NotFound => Ok(ObjectState::Missing),
                FsErrorKind::TooLarge => Ok(ObjectState::TooLarge),
                FsErrorKind::SymlinkRefused => Err(StoreError::ObjectSymlink { id: id.clone() }),
                FsErrorKind::NotAFile => Err(StoreError::ObjectNotRegularFile { id: id.clone() }),
                _ => Err(io(id, error)),
            },
        }
    }

    /// Reads and checks the record of `id`, without following a link. A symlink or a
    /// non-file there is an error (never read, never replaced); unreadable contents are
    /// [`RecordState::Invalid`].
    fn record_state(&self, id: &ObservationId) -> Result<RecordState, StoreError> {
        let refused = |reason: &str| StoreError::RecordInvalid {
            id: id.clone(),
            reason: reason.to_owned(),
        };
        let bytes = match self
            .fs
            .read_no_follow(&self.record_path(id), MAX_RECORD_BYTES)
        {
            Ok(bytes) => bytes,
            Err(error) => {
                return match error.kind {
                    FsErrorKind::NotFound => Ok(RecordState::Missing),
                    FsErrorKind::SymlinkRefused => {
                        Err(refused("it is a symlink, and symlinks are never followed"))
                    }
                    FsErrorKind::NotAFile => Err(refused("it is not a regular file")),
                    FsErrorKind::TooLarge => {
                        Ok(RecordState::Invalid("it is larger than 64 KiB".to_owned()))
                    }
                    _ => Err(io(id, error)),
                };
            }
        };
        Ok(match ObjectRecord::parse(id, &bytes) {
            Ok(record) => RecordState::Valid(record),
            Err(reason) => RecordState::Invalid(reason),
        })
    }
}

/// What is wrong with `stored` as the object of `obs`, if anything.
fn object_damage(obs: &Observation, stored: &[u8]) -> Option<Damage> {
    if stored.len() as u64 != obs.bytes {
        Some(Damage::SizeMismatch {
            expected: obs.bytes,
            found: Some(stored.len() as u64),
            unvouched: true,
        })
    } else if sha256_hex(stored) != obs.content_hash {
        Some(Damage::HashMismatch)
    } else {
        None
    }
}

fn io(id: &ObservationId, source: FsError) -> StoreError {
    StoreError::Io {
        id: id.clone(),
        source,
    }
}

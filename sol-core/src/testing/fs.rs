use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};

use crate::ports::{FileKind, FileMetadata, FileSystem, FsError, FsErrorKind};

/// Mode of files created through the port.
const PRIVATE_FILE_MODE: u32 = 0o600;
/// Mode of directories created through the port.
const PRIVATE_DIR_MODE: u32 = 0o700;
/// Mode of files placed by the builders, as a user's tools would create them.
const PLAIN_FILE_MODE: u32 = 0o644;
/// Mode of directories placed by the builders.
const PLAIN_DIR_MODE: u32 = 0o755;
/// Symlinks followed during one lookup before giving up, as Linux does.
const MAX_SYMLINK_HOPS: usize = 40;

/// One entry of a [`MemoryFileSystem`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryNode {
    /// A regular file.
    File {
        /// Contents.
        bytes: Vec<u8>,
        /// Permission bits.
        mode: u32,
    },
    /// A directory.
    Dir {
        /// Permission bits.
        mode: u32,
    },
    /// A symbolic link.
    Symlink {
        /// Where it points, absolute or relative to the link's directory.
        target: Utf8PathBuf,
    },
}

/// An in-memory [`FileSystem`] with the port's full semantics.
///
/// Paths are absolute (a relative path is taken relative to `/`). Symlinks are resolved
/// like the kernel does, component by component, including `..` after a link. Every call to
/// `read` and `read_no_follow` is recorded (see [`MemoryFileSystem::reads`]), and reads of
/// chosen paths can be made to fail.
#[derive(Debug)]
pub struct MemoryFileSystem {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    nodes: BTreeMap<Utf8PathBuf, MemoryNode>,
    reads: Vec<Utf8PathBuf>,
    read_failures: BTreeMap<Utf8PathBuf, (FsErrorKind, String)>,
}

impl Default for MemoryFileSystem {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryFileSystem {
    /// An empty file system: only `/` exists.
    pub fn new() -> Self {
        let mut nodes = BTreeMap::new();
        nodes.insert(
            root(),
            MemoryNode::Dir {
                mode: PLAIN_DIR_MODE,
            },
        );
        MemoryFileSystem {
            state: Mutex::new(State {
                nodes,
                reads: Vec::new(),
                read_failures: BTreeMap::new(),
            }),
        }
    }

    /// Adds a file (mode 0644), creating missing parent directories (mode 0755).
    pub fn with_file(self, path: impl AsRef<Utf8Path>, bytes: impl Into<Vec<u8>>) -> Self {
        let node = MemoryNode::File {
            bytes: bytes.into(),
            mode: PLAIN_FILE_MODE,
        };
        self.place(path.as_ref(), node)
    }

    /// Adds a directory (mode 0755) and its missing ancestors.
    pub fn with_dir(self, path: impl AsRef<Utf8Path>) -> Self {
        let node = MemoryNode::Dir {
            mode: PLAIN_DIR_MODE,
        };
        self.place(path.as_ref(), node)
    }

    /// Adds a symlink at `path` pointing to `target`, creating missing parent directories.
    pub fn with_symlink(self, path: impl AsRef<Utf8Path>, target: impl AsRef<Utf8Path>) -> Self {
        let node = MemoryNode::Symlink {
            target: target.as_ref().to_owned(),
        };
        self.place(path.as_ref(), node)
    }

    /// Makes every `read` and `read_no_follow` of exactly `path` fail with `kind`.
    pub fn with_read_failure(
        self,
        path: impl AsRef<Utf8Path>,
        kind: FsErrorKind,
        message: impl Into<String>,
    ) -> Self {
        self.lock()
            .read_failures
            .insert(lexical(path.as_ref()), (kind, message.into()));
        self
    }

    /// The contents of the regular file stored at `path` (symlinks are not followed).
    pub fn file(&self, path: impl AsRef<Utf8Path>) -> Option<Vec<u8>> {
        match self.node(path) {
            Some(MemoryNode::File { bytes, .. }) => Some(bytes),
            _ => None,
        }
    }

    /// The entry stored at `path` (symlinks are not followed).
    pub fn node(&self, path: impl AsRef<Utf8Path>) -> Option<MemoryNode> {
        self.lock().nodes.get(&lexical(path.as_ref())).cloned()
    }

    /// The permission bits of the file or directory at `path`.
    pub fn mode(&self, path: impl AsRef<Utf8Path>) -> Option<u32> {
        match self.node(path)? {
            MemoryNode::File { mode, .. } | MemoryNode::Dir { mode } => Some(mode),
            MemoryNode::Symlink { .. } => None,
        }
    }

    /// Every stored path, sorted, including `/`.
    pub fn paths(&self) -> Vec<Utf8PathBuf> {
        self.lock().nodes.keys().cloned().collect()
    }

    /// The paths given to `read` and `read_no_follow` so far, in call order.
    pub fn reads(&self) -> Vec<Utf8PathBuf> {
        self.lock().reads.clone()
    }

    fn place(self, path: &Utf8Path, node: MemoryNode) -> Self {
        let path = lexical(path);
        {
            let mut state = self.lock();
            for ancestor in path.ancestors().skip(1) {
                state
                    .nodes
                    .entry(ancestor.to_owned())
                    .or_insert(MemoryNode::Dir {
                        mode: PLAIN_DIR_MODE,
                    });
            }
            state.nodes.insert(path, node);
        }
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A test that panicked while holding the lock left consistent data behind: every
        // mutation is a single map operation.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn read_impl(&self, path: &Utf8Path, max_bytes: u64, follow: bool) -> Result<Vec<u8>, FsError> {
        let mut state = self.lock();
        state.reads.push(path.to_owned());
        if let Some((kind, message)) = state.read_failures.get(&lexical(path)) {
            return Err(FsError::new(*kind, path, message.clone()));
        }
        let resolved = resolve(&state.nodes, path, follow)?;
        match state.nodes.get(&resolved) {
            None => Err(not_found(path)),
            Some(MemoryNode::Dir { .. }) => {
                Err(FsError::new(FsErrorKind::NotAFile, path, "is a directory"))
            }
            Some(MemoryNode::Symlink { .. }) => Err(symlink_refused(path)),
            Some(MemoryNode::File { bytes, .. }) => {
                if bytes.len() as u64 > max_bytes {
                    Err(FsError::new(
                        FsErrorKind::TooLarge,
                        path,
                        format!("file is larger than the limit of {max_bytes} bytes"),
                    ))
                } else {
                    Ok(bytes.clone())
                }
            }
        }
    }
}

impl FileSystem for MemoryFileSystem {
    fn metadata(&self, path: &Utf8Path) -> Result<Option<FileMetadata>, FsError> {
        let state = self.lock();
        let resolved = match resolve(&state.nodes, path, false) {
            Ok(resolved) => resolved,
            Err(error) if error.kind == FsErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(error),
        };
        Ok(state.nodes.get(&resolved).map(|node| match node {
            MemoryNode::File { bytes, .. } => FileMetadata {
                kind: FileKind::File,
                len: bytes.len() as u64,
            },
            MemoryNode::Dir { .. } => FileMetadata {
                kind: FileKind::Dir,
                len: 0,
            },
            MemoryNode::Symlink { target } => FileMetadata {
                kind: FileKind::Symlink,
                len: target.as_str().len() as u64,
            },
        }))
    }

    fn read(&self, path: &Utf8Path, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        self.read_impl(path, max_bytes, true)
    }

    fn read_no_follow(&self, path: &Utf8Path, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        self.read_impl(path, max_bytes, false)
    }

    fn create_dir_private(&self, path: &Utf8Path) -> Result<(), FsError> {
        let mut state = self.lock();
        let names = names(path);
        let mut current = root();
        for (index, name) in names.iter().enumerate() {
            if name == ".." {
                current.pop();
                continue;
            }
            let candidate = current.join(name);
            match state.nodes.get(&candidate) {
                None => {
                    state.nodes.insert(
                        candidate.clone(),
                        MemoryNode::Dir {
                            mode: PRIVATE_DIR_MODE,
                        },
                    );
                }
                Some(MemoryNode::Dir { .. }) => {}
                Some(MemoryNode::Symlink { .. }) => return Err(symlink_refused(path)),
                Some(MemoryNode::File { .. }) if index + 1 == names.len() => {
                    return Err(FsError::new(
                        FsErrorKind::AlreadyExists,
                        path,
                        "a file exists where the directory should be",
                    ));
                }
                Some(MemoryNode::File { .. }) => return Err(not_a_directory(path)),
            }
            current = candidate;
        }
        Ok(())
    }

    fn create_new(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        let mut state = self.lock();
        let resolved = resolve(&state.nodes, path, false)?;
        if state.nodes.contains_key(&resolved) {
            return Err(FsError::new(
                FsErrorKind::AlreadyExists,
                path,
                "file already exists",
            ));
        }
        state.nodes.insert(resolved, private_file(contents));
        Ok(())
    }

    fn append(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        let mut state = self.lock();
        let resolved = resolve(&state.nodes, path, false)?;
        match state.nodes.get_mut(&resolved) {
            None => {
                state.nodes.insert(resolved, private_file(contents));
                Ok(())
            }
            Some(MemoryNode::File { bytes, .. }) => {
                // The port's fresh-line rule: a torn last record keeps a line of its own.
                if crate::append_needs_line_break(bytes.last().copied(), contents) {
                    bytes.push(b'\n');
                }
                bytes.extend_from_slice(contents);
                Ok(())
            }
            Some(MemoryNode::Symlink { .. }) => Err(symlink_refused(path)),
            Some(MemoryNode::Dir { .. }) => {
                Err(FsError::new(FsErrorKind::NotAFile, path, "is a directory"))
            }
        }
    }

    fn replace_private(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        let mut state = self.lock();
        let resolved = resolve(&state.nodes, path, false)?;
        if let Some(MemoryNode::Dir { .. }) = state.nodes.get(&resolved) {
            return Err(FsError::new(FsErrorKind::NotAFile, path, "is a directory"));
        }
        // One map operation: the old entry (a symlink included) is replaced whole.
        state.nodes.insert(resolved, private_file(contents));
        Ok(())
    }
}

/// A new file as SoL-Pi creates it: private to the user.
fn private_file(contents: &[u8]) -> MemoryNode {
    MemoryNode::File {
        bytes: contents.to_vec(),
        mode: PRIVATE_FILE_MODE,
    }
}

fn root() -> Utf8PathBuf {
    Utf8PathBuf::from("/")
}

/// The names along `path`: `.` dropped, `..` kept for the resolver, root and prefixes ignored.
fn names(path: &Utf8Path) -> Vec<String> {
    path.components()
        .filter_map(|component| match component {
            Utf8Component::Normal(name) => Some(name.to_owned()),
            Utf8Component::ParentDir => Some("..".to_owned()),
            Utf8Component::RootDir | Utf8Component::CurDir | Utf8Component::Prefix(_) => None,
        })
        .collect()
}

/// `path` as an absolute key, with `.` and `..` removed without looking at symlinks.
fn lexical(path: &Utf8Path) -> Utf8PathBuf {
    let mut normal = root();
    for name in names(path) {
        if name == ".." {
            normal.pop();
        } else {
            normal.push(name);
        }
    }
    normal
}

/// The stored path that `path` designates: every directory along the way exists (symlinks
/// among them followed); the final component is followed only when `follow_final` is set.
/// The final entry itself may be missing.
fn resolve(
    nodes: &BTreeMap<Utf8PathBuf, MemoryNode>,
    path: &Utf8Path,
    follow_final: bool,
) -> Result<Utf8PathBuf, FsError> {
    let mut pending: Vec<String> = names(path);
    pending.reverse();
    let mut current = root();
    let mut hops = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            current.pop();
            continue;
        }
        let candidate = current.join(&name);
        let is_final = pending.is_empty();
        match nodes.get(&candidate) {
            None if is_final => return Ok(candidate),
            None => return Err(not_found(path)),
            Some(MemoryNode::Dir { .. }) => current = candidate,
            Some(MemoryNode::File { .. }) if is_final => return Ok(candidate),
            Some(MemoryNode::File { .. }) => return Err(not_a_directory(path)),
            Some(MemoryNode::Symlink { .. }) if is_final && !follow_final => return Ok(candidate),
            Some(MemoryNode::Symlink { target }) => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(FsError::new(
                        FsErrorKind::Other,
                        path,
                        "too many levels of symbolic links",
                    ));
                }
                if target.is_absolute() {
                    current = root();
                }
                pending.extend(names(target).into_iter().rev());
            }
        }
    }
    Ok(current)
}

fn not_found(path: &Utf8Path) -> FsError {
    FsError::new(FsErrorKind::NotFound, path, "no such file or directory")
}

fn not_a_directory(path: &Utf8Path) -> FsError {
    FsError::new(
        FsErrorKind::Other,
        path,
        "a component of the path is not a directory",
    )
}

fn symlink_refused(path: &Utf8Path) -> FsError {
    FsError::new(
        FsErrorKind::SymlinkRefused,
        path,
        "refusing to follow a symlink",
    )
}

//! The `sol_core::FileSystem` port over `std::fs`.
//!
//! Archive and ledger files are private to the user (0600 files, 0700 folders),
//! created exclusively, and opened without following links, so a planted
//! symlink cannot redirect a write or a read outside the host's folders.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use camino::{Utf8Path, Utf8PathBuf};
use sol_core::{FileKind, FileMetadata, FileSystem, FsError, FsErrorKind, append_needs_line_break};

/// [`sol_core::FileSystem`] backed by the real file system.
///
/// What each operation guarantees, beyond the port's contract:
///
/// - files are created with mode 0600 and folders with mode 0700 (on Unix);
/// - [`create_new`](FileSystem::create_new) is exclusive: it never truncates or follows
///   anything already at the path;
/// - the no-follow operations open with `O_NOFOLLOW` on Unix, so a link planted between a
///   check and the open is refused ([`FsErrorKind::SymlinkRefused`]), and
///   [`create_dir_private`](FileSystem::create_dir_private) refuses a link in any component;
/// - every open is non-blocking and checked on the open handle, so a FIFO is refused as
///   [`FsErrorKind::NotAFile`] instead of waiting for a writer, and reads stop one byte past
///   the caller's limit, however large the file;
/// - [`append`](FileSystem::append) starts on a fresh line: after a last record that a
///   crash left without its line end, an LF goes first, in the same write;
/// - [`replace_private`](FileSystem::replace_private) writes a private temporary file next
///   to the target, syncs it and renames it over the target, so a reader sees the old file
///   or the new one.
///
/// ```
/// use sol_host::OsFileSystem;
/// use sol_host::sol_core::{FileKind, FileSystem};
/// use sol_host::camino::Utf8PathBuf;
///
/// let dir = std::env::temp_dir().join(format!("sol-host-doc-{}", std::process::id()));
/// let dir = Utf8PathBuf::from_path_buf(dir).expect("a UTF-8 temp dir");
/// OsFileSystem.create_dir_private(&dir).expect("folder made");
/// OsFileSystem.create_new(&dir.join("a.txt"), b"hello").expect("file made");
/// assert_eq!(OsFileSystem.read_no_follow(&dir.join("a.txt"), 1024).expect("read"), b"hello");
/// let meta = OsFileSystem.metadata(&dir.join("a.txt")).expect("stat").expect("exists");
/// assert_eq!(meta.kind, FileKind::File);
/// # std::fs::remove_dir_all(&dir).expect("cleaned up");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OsFileSystem;

fn fs_error(path: &Utf8Path, err: &io::Error) -> FsError {
    let kind = match err.kind() {
        io::ErrorKind::NotFound => FsErrorKind::NotFound,
        io::ErrorKind::AlreadyExists => FsErrorKind::AlreadyExists,
        io::ErrorKind::PermissionDenied => FsErrorKind::PermissionDenied,
        // A directory opened for writing.
        io::ErrorKind::IsADirectory => FsErrorKind::NotAFile,
        // ELOOP included: where links are followed, it means a cycle of links.
        _ => FsErrorKind::Other,
    };
    FsError {
        kind,
        path: path.to_owned(),
        message: err.to_string(),
    }
}

/// The error of an open with `O_NOFOLLOW`, where ELOOP means that the final component is a
/// link (one planted after [`ensure_not_link`] looked).
fn no_follow_error(path: &Utf8Path, err: &io::Error) -> FsError {
    if is_loop_error(err) {
        refused(
            path,
            FsErrorKind::SymlinkRefused,
            "refusing to follow a symbolic link",
        )
    } else {
        fs_error(path, err)
    }
}

fn refused(path: &Utf8Path, kind: FsErrorKind, message: &str) -> FsError {
    FsError {
        kind,
        path: path.to_owned(),
        message: message.to_owned(),
    }
}

#[cfg(unix)]
fn is_loop_error(err: &io::Error) -> bool {
    // ELOOP is what an O_NOFOLLOW open of a symlink reports.
    err.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(not(unix))]
fn is_loop_error(_err: &io::Error) -> bool {
    false
}

fn kind_of(meta: &fs::Metadata) -> FileKind {
    let ty = meta.file_type();
    if ty.is_symlink() {
        FileKind::Symlink
    } else if ty.is_dir() {
        FileKind::Dir
    } else if ty.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    }
}

/// Refuses a path whose final component is a link, on every platform (the
/// `O_NOFOLLOW` flag below covers the race on Unix; this check gives the same
/// answer where that flag does not exist).
fn ensure_not_link(path: &Utf8Path) -> Result<(), FsError> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(refused(
            path,
            FsErrorKind::SymlinkRefused,
            "refusing to follow a symbolic link",
        )),
        Ok(_) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(fs_error(path, &err)),
    }
}

/// O_NONBLOCK: opening a FIFO does not wait for the other end, so a FIFO is refused as
/// not a regular file instead of hanging Pi. Regular files ignore it.
#[cfg(unix)]
const O_NONBLOCK: i32 = libc::O_NONBLOCK;

#[cfg(unix)]
fn private_file_options(options: &mut OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NOFOLLOW keeps the open itself from following a link planted after the check.
    options.custom_flags(libc::O_NOFOLLOW | O_NONBLOCK);
    options.mode(0o600);
}

#[cfg(not(unix))]
fn private_file_options(_options: &mut OpenOptions) {}

/// Options of a read that follows links.
fn follow_read_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, O_NONBLOCK);
    options
}

fn read_limited(file: File, path: &Utf8Path, max_bytes: u64) -> Result<Vec<u8>, FsError> {
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| fs_error(path, &err))?;
    if bytes.len() as u64 > max_bytes {
        return Err(refused(
            path,
            FsErrorKind::TooLarge,
            &format!("file is larger than {max_bytes} bytes"),
        ));
    }
    Ok(bytes)
}

fn open_regular(
    path: &Utf8Path,
    options: &OpenOptions,
    open_error: fn(&Utf8Path, &io::Error) -> FsError,
) -> Result<File, FsError> {
    let file = options.open(path).map_err(|err| open_error(path, &err))?;
    let meta = file.metadata().map_err(|err| fs_error(path, &err))?;
    if !meta.is_file() {
        return Err(refused(path, FsErrorKind::NotAFile, "not a regular file"));
    }
    Ok(file)
}

/// Distinguishes the temporary files of one process; the process id tells processes apart.
static TEMPORARY_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How many temporary names [`OsFileSystem::replace_private`] tries before giving up
/// (each is taken only by another writer that got there first).
const TEMPORARY_ATTEMPTS: u32 = 16;

/// Creates a private temporary file next to `path` (exclusive, no-follow, 0600) and
/// returns it with its path.
fn create_temporary(path: &Utf8Path) -> Result<(File, Utf8PathBuf), FsError> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(refused(path, FsErrorKind::Other, "not a file path"));
    };
    let mut last = None;
    for _ in 0..TEMPORARY_ATTEMPTS {
        let n = TEMPORARY_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temporary = parent.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        private_file_options(&mut options);
        match options.open(&temporary) {
            Ok(file) => return Ok((file, temporary)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = Some(err),
            Err(err) => return Err(fs_error(path, &err)),
        }
    }
    let err = last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists));
    Err(fs_error(path, &err))
}

/// Takes `file`'s exclusive lock for an append, waiting at most about a second. Unlocked, the
/// fresh-line check can read the end of a record another process is still writing (not a line
/// end yet) and start this record with an empty line. SoL-Pi holds the lock for one small
/// write; a holder that never lets go, or a file system without locks, must not stop or hang
/// the append, which then goes ahead unlocked as before (at worst after an empty line, which
/// readers skip).
fn lock_briefly(file: &File) {
    for _ in 0..1_000 {
        match file.try_lock() {
            Ok(()) => return,
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(std::fs::TryLockError::Error(_)) => return,
        }
    }
}

/// The last byte of `file`, `None` when it is empty. Writes of a file opened for appending
/// still go to its end, wherever this leaves the position.
fn last_byte(file: &mut File) -> io::Result<Option<u8>> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(None);
    }
    let mut last = [0u8];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    Ok(Some(last[0]))
}

/// Makes a rename in `dir` durable (best effort: not every platform can sync a folder).
fn sync_dir(dir: &Utf8Path) {
    #[cfg(unix)]
    if let Ok(folder) = File::open(dir) {
        let _ = folder.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

impl FileSystem for OsFileSystem {
    fn metadata(&self, path: &Utf8Path) -> Result<Option<FileMetadata>, FsError> {
        match fs::symlink_metadata(path) {
            Ok(meta) => Ok(Some(FileMetadata {
                kind: kind_of(&meta),
                len: meta.len(),
            })),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(fs_error(path, &err)),
        }
    }

    fn read(&self, path: &Utf8Path, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        let file = open_regular(path, &follow_read_options(), fs_error)?;
        read_limited(file, path, max_bytes)
    }

    fn read_no_follow(&self, path: &Utf8Path, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        ensure_not_link(path)?;
        let mut options = OpenOptions::new();
        options.read(true);
        private_file_options(&mut options);
        let file = open_regular(path, &options, no_follow_error)?;
        read_limited(file, path, max_bytes)
    }

    fn create_dir_private(&self, path: &Utf8Path) -> Result<(), FsError> {
        let mut missing: Vec<Utf8PathBuf> = Vec::new();
        let mut cursor = Some(path);
        // Every component is checked, existing directories included: a link anywhere along
        // the path would redirect what is created below it.
        while let Some(dir) = cursor {
            match fs::symlink_metadata(dir) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(refused(
                        path,
                        FsErrorKind::SymlinkRefused,
                        "refusing a symbolic link in a SoL-Pi storage path",
                    ));
                }
                Ok(meta) if meta.is_dir() => {}
                Ok(_) if dir == path => {
                    return Err(refused(
                        path,
                        FsErrorKind::AlreadyExists,
                        "a file exists where the directory should be",
                    ));
                }
                Ok(_) => {
                    return Err(refused(
                        path,
                        FsErrorKind::Other,
                        "a component of the path is not a directory",
                    ));
                }
                Err(err) if err.kind() == io::ErrorKind::NotFound => missing.push(dir.to_owned()),
                Err(err) => return Err(fs_error(path, &err)),
            }
            cursor = dir.parent().filter(|parent| !parent.as_str().is_empty());
        }
        for dir in missing.iter().rev() {
            let mut builder = fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            match builder.create(dir) {
                Ok(()) => {}
                // Another process made it first: accept it only if it is a real directory.
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                    let meta = fs::symlink_metadata(dir).map_err(|e| fs_error(path, &e))?;
                    if !meta.is_dir() {
                        return Err(refused(
                            path,
                            FsErrorKind::SymlinkRefused,
                            "refusing a symbolic link in a SoL-Pi storage path",
                        ));
                    }
                }
                Err(err) => return Err(fs_error(path, &err)),
            }
        }
        Ok(())
    }

    fn create_new(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        private_file_options(&mut options);
        let mut file = options.open(path).map_err(|err| fs_error(path, &err))?;
        file.write_all(contents)
            .map_err(|err| fs_error(path, &err))?;
        file.sync_data().map_err(|err| fs_error(path, &err))
    }

    fn append(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        ensure_not_link(path)?;
        let mut options = OpenOptions::new();
        // Read as well: the fresh-line rule looks at the last byte.
        options.read(true).append(true).create(true);
        private_file_options(&mut options);
        let mut file = open_regular(path, &options, no_follow_error)?;
        // Another process may append to the same file (two Pi processes on one session
        // folder): the check of the last byte and the write go under its lock, held until the
        // file is closed.
        lock_briefly(&file);
        let last = last_byte(&mut file).map_err(|err| fs_error(path, &err))?;
        if append_needs_line_break(last, contents) {
            // One write, so another appender's record cannot land between the two.
            let mut joined = Vec::with_capacity(contents.len() + 1);
            joined.push(b'\n');
            joined.extend_from_slice(contents);
            file.write_all(&joined)
        } else {
            file.write_all(contents)
        }
        .map_err(|err| fs_error(path, &err))
    }

    fn replace_private(&self, path: &Utf8Path, contents: &[u8]) -> Result<(), FsError> {
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => {
                return Err(refused(path, FsErrorKind::NotAFile, "is a directory"));
            }
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(fs_error(path, &err)),
        }
        let (mut file, temporary) = create_temporary(path)?;
        let written = file
            .write_all(contents)
            .and_then(|()| file.sync_all())
            .and_then(|()| {
                drop(file);
                // rename(2) replaces the entry at `path` itself; a link there is not followed.
                fs::rename(&temporary, path)
            });
        if let Err(err) = written {
            // Only our own temporary file is removed; `path` is as it was.
            let _ = fs::remove_file(&temporary);
            return Err(fs_error(path, &err));
        }
        if let Some(parent) = path.parent() {
            sync_dir(parent);
        }
        Ok(())
    }
}

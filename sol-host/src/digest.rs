//! A bounded SHA-256 look at a file, safe on whatever the path turns out to be.
//!
//! [`digest_file`] follows links and hashes only a regular file: a FIFO, a device, a socket
//! or a folder is reported as such without being opened for reading, so a look can never
//! wait for a writer or read a device forever. The file is opened non-blocking (and
//! without becoming a controlling terminal) and checked again on the open handle, in case
//! the path was replaced in between. A file over the size cap, or one that keeps growing
//! past it, is not hashed, and reading gives up once it has taken the time budget (checked
//! between chunks), so a slow disk cannot hold the caller.
//!
//! ```
//! use std::time::Duration;
//! use sol_host::digest::{digest_file, FileLook, NotHashed};
//!
//! let dir = std::env::temp_dir().join(format!("sol-host-digest-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).expect("folder made");
//! std::fs::write(dir.join("a.txt"), "abc").expect("file written");
//! let budget = Duration::from_secs(5);
//! assert_eq!(
//!     digest_file(dir.join("a.txt"), 1024, budget),
//!     FileLook::Digest("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_owned())
//! );
//! assert_eq!(digest_file(&dir, 1024, budget), FileLook::NotHashed(NotHashed::Directory));
//! # std::fs::remove_dir_all(&dir).expect("cleaned up");
//! ```

use std::fs::File;
use std::io::{self, Read as _};
use std::path::Path;
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};

/// What one look at a path found: exactly one of a digest, a reason not to hash, or an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileLook {
    /// Lower-case hex SHA-256 of a regular file read to its end.
    Digest(String),
    /// The path was looked at but not hashed.
    NotHashed(NotHashed),
    /// The path could not be looked at or read (it is missing, a dangling link, unreadable):
    /// the operating system's message.
    Unreadable(String),
}

/// Why a path was not hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NotHashed {
    /// A named pipe: opening it would wait for a writer, reading it would take another
    /// reader's data.
    Fifo,
    /// A character or block device.
    Device,
    /// A Unix socket.
    Socket,
    /// A folder.
    Directory,
    /// Any other kind of entry that is not a regular file.
    Other,
    /// A regular file over the size cap (before or while it was read).
    TooLarge,
    /// A regular file whose reading took the whole time budget.
    TooSlow,
}

const CHUNK_BYTES: usize = 256 * 1024;

/// One look at `path`. Follows links; hashes only a regular file of at most `max_bytes`,
/// opened non-blocking and checked again on the open handle; gives up with
/// [`NotHashed::TooSlow`] once reading has taken `budget` (checked after each chunk, so a
/// zero budget gives up after the first).
pub fn digest_file(path: impl AsRef<Path>, max_bytes: u64, budget: Duration) -> FileLook {
    let path = path.as_ref();
    let started = Instant::now();
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) => return FileLook::Unreadable(error.to_string()),
    };
    if let Some(reason) = unhashable(&metadata, max_bytes) {
        return FileLook::NotHashed(reason);
    }
    let mut file = match open_nonblocking(path) {
        Ok(file) => file,
        Err(error) => return FileLook::Unreadable(error.to_string()),
    };
    // The path may have been replaced between the stat and the open.
    let opened = match file.metadata() {
        Ok(metadata) => metadata,
        Err(error) => return FileLook::Unreadable(error.to_string()),
    };
    if let Some(reason) = unhashable(&opened, max_bytes) {
        return FileLook::NotHashed(reason);
    }
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; CHUNK_BYTES];
    let mut total: u64 = 0;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return FileLook::Unreadable(error.to_string()),
        };
        total = total.saturating_add(read as u64);
        // The file grew past the cap while it was read.
        if total > max_bytes {
            return FileLook::NotHashed(NotHashed::TooLarge);
        }
        hasher.update(&buffer[..read]);
        if started.elapsed() >= budget {
            return FileLook::NotHashed(NotHashed::TooSlow);
        }
    }
    FileLook::Digest(
        hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect(),
    )
}

/// Why a file with this metadata is not hashed: not a regular file, or over `max_bytes`.
fn unhashable(metadata: &std::fs::Metadata, max_bytes: u64) -> Option<NotHashed> {
    not_regular(&metadata.file_type())
        .or_else(|| (metadata.len() > max_bytes).then_some(NotHashed::TooLarge))
}

fn not_regular(file_type: &std::fs::FileType) -> Option<NotHashed> {
    if file_type.is_file() {
        return None;
    }
    if file_type.is_dir() {
        return Some(NotHashed::Directory);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return Some(NotHashed::Fifo);
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return Some(NotHashed::Device);
        }
        if file_type.is_socket() {
            return Some(NotHashed::Socket);
        }
    }
    Some(NotHashed::Other)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

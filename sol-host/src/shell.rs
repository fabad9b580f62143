//! The `sol_core::Shell` port over `std::process`.
//!
//! A command runs as `sh -c <command>` in the request's folder, with standard input from
//! `/dev/null` and standard output and error joined into one pipe (so the output keeps the
//! order in which the command wrote it), as the leader of a process group of its own. When
//! the command ends or its time is up, whatever is left of that group is killed, so a
//! background process cannot hold the pipe open and hang the host. Only the last bytes of
//! the output are kept, so memory stays bounded however much the command prints.

use std::time::Duration;

use sol_core::{Shell, ShellError, ShellOutcome, ShellRequest};

/// The output limit of [`OsShell::new`]: 50 KiB, as much as Pi's own bash tool keeps.
pub const DEFAULT_OUTPUT_LIMIT: usize = 50 * 1024;

/// [`sol_core::Shell`] over real processes.
///
/// - The command runs as `sh -c <command>` in [`ShellRequest::cwd`], with standard input
///   from `/dev/null`; its standard output and error share one pipe, in the order written.
/// - It leads a process group of its own. Once the shell exits, or once the request's
///   timeout (or the default one of [`OsShell::with_default_timeout`]) has passed, the
///   whole group is sent `SIGKILL`: background processes do not outlive the command (one
///   that must, has to leave the group, e.g. with `setsid`), and a timeout returns even if
///   a grandchild would run forever. What such an escaped process prints later is not
///   waited for.
/// - The output keeps its last [`output limit`](OsShell::with_output_limit) bytes, cut
///   forward to the start of a UTF-8 character; [`ShellOutcome::dropped_bytes`] says how
///   many came before. Invalid UTF-8 is replaced with U+FFFD.
/// - The outcome is [`ShellExit::Code`](sol_core::ShellExit::Code) for an exit status,
///   [`ShellExit::NoCode`](sol_core::ShellExit::NoCode) when the shell died of a signal,
///   and [`ShellExit::TimedOut`](sol_core::ShellExit::TimedOut) when the timeout killed it.
///   A shell that cannot be started (a missing folder, no `sh`) is
///   [`ShellError::Unavailable`].
///
/// Unix only: elsewhere every run is [`ShellError::Unavailable`].
///
/// ```
/// # #[cfg(unix)] {
/// use std::time::Duration;
/// use sol_host::OsShell;
/// use sol_host::sol_core::{Shell, ShellExit, ShellRequest};
///
/// let shell = OsShell::new();
/// let outcome = shell
///     .run(&ShellRequest {
///         command: "echo out; echo err >&2; exit 3".to_owned(),
///         cwd: "/".into(),
///         timeout: Some(Duration::from_secs(60)),
///     })
///     .expect("sh starts");
/// assert_eq!(outcome.output, "out\nerr\n");
/// assert_eq!(outcome.exit, ShellExit::Code(3));
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OsShell {
    output_limit: usize,
    default_timeout: Option<Duration>,
}

impl Default for OsShell {
    fn default() -> Self {
        Self::new()
    }
}

impl OsShell {
    /// A shell that keeps the last [`DEFAULT_OUTPUT_LIMIT`] bytes of output and has no
    /// default timeout (a request without one runs until it ends).
    pub fn new() -> Self {
        OsShell {
            output_limit: DEFAULT_OUTPUT_LIMIT,
            default_timeout: None,
        }
    }

    /// Keeps at most the last `bytes` bytes of each command's output.
    pub fn with_output_limit(self, bytes: usize) -> Self {
        OsShell {
            output_limit: bytes,
            ..self
        }
    }

    /// The timeout of a request that has none of its own.
    pub fn with_default_timeout(self, timeout: Duration) -> Self {
        OsShell {
            default_timeout: Some(timeout),
            ..self
        }
    }

    /// The output limit in bytes.
    pub fn output_limit(&self) -> usize {
        self.output_limit
    }
}

impl Shell for OsShell {
    fn run(&self, request: &ShellRequest) -> Result<ShellOutcome, ShellError> {
        let timeout = request.timeout.or(self.default_timeout);
        #[cfg(unix)]
        {
            unix::run(request, timeout, self.output_limit)
        }
        #[cfg(not(unix))]
        {
            let _ = timeout;
            Err(ShellError::Unavailable {
                message: format!(
                    "sol-host runs commands on Unix only, not {:?}",
                    request.command
                ),
            })
        }
    }
}

/// The last `limit` bytes of a stream, in memory that stays under about twice `limit`.
#[derive(Debug)]
pub(crate) struct OutputTail {
    limit: usize,
    bytes: Vec<u8>,
    /// Bytes dropped from the front of `bytes` so far.
    dropped: u64,
}

impl OutputTail {
    pub(crate) fn new(limit: usize) -> Self {
        OutputTail {
            limit,
            bytes: Vec::new(),
            dropped: 0,
        }
    }

    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if chunk.len() >= self.limit {
            self.dropped += (self.bytes.len() + chunk.len() - self.limit) as u64;
            self.bytes.clear();
            self.bytes
                .extend_from_slice(&chunk[chunk.len() - self.limit..]);
            return;
        }
        self.bytes.extend_from_slice(chunk);
        // Compact only once the buffer holds twice the limit, so each byte moves at most
        // once on average.
        if self.bytes.len() > self.limit.saturating_mul(2) {
            self.compact();
        }
    }

    fn compact(&mut self) {
        if self.bytes.len() > self.limit {
            let excess = self.bytes.len() - self.limit;
            self.bytes.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    /// The kept text, starting at a character boundary, and how many bytes came before it.
    pub(crate) fn finish(mut self) -> (String, u64) {
        self.compact();
        // A cut inside a character drops its continuation bytes (at most three) too; a
        // stream that was never cut keeps even a broken first character (as U+FFFD).
        let skip = if self.dropped > 0 {
            self.bytes
                .iter()
                .take(3)
                .take_while(|byte| (**byte & 0b1100_0000) == 0b1000_0000)
                .count()
        } else {
            0
        };
        let text = String::from_utf8_lossy(&self.bytes[skip..]).into_owned();
        (text, self.dropped + skip as u64)
    }
}

#[cfg(unix)]
mod unix {
    use std::io::{self, PipeReader, PipeWriter, Read as _, Write as _};
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::io::Errno;
    use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process_group, waitid};
    use sol_core::{ShellError, ShellExit, ShellOutcome, ShellRequest};

    use super::OutputTail;

    const CHUNK_BYTES: usize = 64 * 1024;

    pub(super) fn run(
        request: &ShellRequest,
        timeout: Option<Duration>,
        limit: usize,
    ) -> Result<ShellOutcome, ShellError> {
        let unavailable = |what: &str, error: io::Error| ShellError::Unavailable {
            message: format!("{what}: {error}"),
        };
        let (mut output, writer) = io::pipe().map_err(|e| unavailable("no pipe", e))?;
        let errors = writer.try_clone().map_err(|e| unavailable("no pipe", e))?;
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&request.command)
            .current_dir(&request.cwd)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(errors)
            .process_group(0);
        let spawned = command.spawn();
        // The command holds the parent's ends of the pipe: drop them, or the pipe never ends.
        drop(command);
        let mut child = spawned
            .map_err(|error| unavailable(&format!("sh cannot start in {}", request.cwd), error))?;
        let group = Pid::from_child(&child);
        let started = Instant::now();
        let deadline = timeout.map(|timeout| started.checked_add(timeout));

        let (exited, exit_writer) = io::pipe().map_err(|error| {
            kill_group(group);
            let _ = child.wait();
            unavailable("no pipe", error)
        })?;
        let waiter = std::thread::spawn(move || wait_without_reaping(group, exit_writer));

        let mut tail = OutputTail::new(limit);
        let mut buffer = vec![0u8; CHUNK_BYTES];
        let mut output_open = true;
        let mut timed_out = false;
        let mut failure = None;
        if let Err(error) = rustix::io::ioctl_fionbio(&output, true) {
            failure = Some(format!(
                "the output pipe cannot be made non-blocking: {error}"
            ));
        }
        while failure.is_none() {
            let remaining = match deadline {
                None => None,
                // A timeout too long to add to the clock never expires.
                Some(None) => None,
                Some(Some(deadline)) => {
                    let now = Instant::now();
                    if now >= deadline {
                        timed_out = true;
                        break;
                    }
                    Some(deadline - now)
                }
            };
            let wait = remaining.map(|left| Timespec {
                tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(left.subsec_nanos()),
            });
            let mut fds = vec![PollFd::new(&exited, PollFlags::IN)];
            if output_open {
                fds.push(PollFd::new(&output, PollFlags::IN));
            }
            match poll(&mut fds, wait.as_ref()) {
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(error) => {
                    failure = Some(format!("waiting on the command failed: {error}"));
                    break;
                }
            }
            let shell_ended = !fds[0].revents().is_empty();
            let output_ready = fds.get(1).is_some_and(|fd| !fd.revents().is_empty());
            drop(fds);
            if output_ready {
                match drain(&mut output, &mut buffer, &mut tail) {
                    Ok(open) => output_open = open,
                    Err(error) => failure = Some(format!("reading the output failed: {error}")),
                }
            }
            if shell_ended {
                break;
            }
        }
        // The shell has exited (and is not reaped yet, so its process group id cannot be
        // reused), its time is up, or reading failed: nothing of the group may go on.
        kill_group(group);
        let _ = waiter.join();
        let status = child.wait().map_err(|error| ShellError::Failed {
            message: format!("waiting for sh failed: {error}"),
        })?;
        // Everything the killed group wrote is in the pipe now; a process that left the
        // group may hold it open, so read what is there and stop (the pipe is non-blocking).
        if output_open
            && failure.is_none()
            && let Err(error) = drain(&mut output, &mut buffer, &mut tail)
        {
            failure = Some(format!("reading the output failed: {error}"));
        }
        if let Some(message) = failure {
            return Err(ShellError::Failed { message });
        }
        let exit = if timed_out {
            ShellExit::TimedOut {
                after: timeout.unwrap_or_default(),
            }
        } else {
            match status.code() {
                Some(code) => ShellExit::Code(code),
                None => ShellExit::NoCode,
            }
        };
        let (output, dropped_bytes) = tail.finish();
        Ok(ShellOutcome {
            output,
            exit,
            dropped_bytes,
        })
    }

    /// Reads what the pipe holds now into `tail`; `false` once the pipe has ended.
    fn drain(
        output: &mut PipeReader,
        buffer: &mut [u8],
        tail: &mut OutputTail,
    ) -> io::Result<bool> {
        loop {
            match output.read(buffer) {
                Ok(0) => return Ok(false),
                Ok(read) => tail.push(&buffer[..read]),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(error) => return Err(error),
            }
        }
    }

    /// Waits until the shell has exited, leaving it to be reaped by `Child::wait`, and says
    /// so by writing to (and closing) `exit_writer`.
    fn wait_without_reaping(group: Pid, mut exit_writer: PipeWriter) {
        // Interrupted: wait again. Exited, or it cannot be waited for at all: stop waiting.
        while let Err(Errno::INTR) = waitid(
            WaitId::Pid(group),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {}
        let _ = exit_writer.write_all(&[1]);
    }

    /// Kills every process left in the group; a group already gone is fine.
    fn kill_group(group: Pid) {
        let _ = kill_process_group(group, Signal::KILL);
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::OutputTail;

    fn tail_of(chunks: &[Vec<u8>], limit: usize) -> (String, u64) {
        let mut tail = OutputTail::new(limit);
        for chunk in chunks {
            tail.push(chunk);
        }
        tail.finish()
    }

    #[test]
    fn a_short_output_is_kept_whole() {
        assert_eq!(
            tail_of(&[b"ab".to_vec(), b"c".to_vec()], 8),
            ("abc".to_owned(), 0)
        );
        assert_eq!(tail_of(&[], 8), (String::new(), 0));
    }

    #[test]
    fn a_cut_inside_a_character_moves_to_the_next_one() {
        // "é" is two bytes; keeping 3 of "aéb" would start inside it.
        let text = "aé€b";
        assert_eq!(
            tail_of(&[text.as_bytes().to_vec()], 5),
            ("€b".to_owned(), 3)
        );
        assert_eq!(tail_of(&[text.as_bytes().to_vec()], 0), (String::new(), 7));
    }

    proptest! {
        /// The kept text is a suffix of what was printed, at most `limit` bytes, starting
        /// at a character boundary, and it plus the dropped count is everything; the
        /// result does not depend on how the stream was split into chunks.
        #[test]
        fn the_tail_is_a_bounded_suffix_at_a_char_boundary(
            text in "\\PC{0,300}",
            cuts in proptest::collection::vec(0usize..1200, 0..8),
            limit in 0usize..400,
        ) {
            let bytes = text.as_bytes();
            let mut points: Vec<usize> = cuts.into_iter().map(|cut| cut.min(bytes.len())).collect();
            points.push(0);
            points.push(bytes.len());
            points.sort_unstable();
            let chunks: Vec<Vec<u8>> = points.windows(2).map(|w| bytes[w[0]..w[1]].to_vec()).collect();
            let (kept, dropped) = tail_of(&chunks, limit);
            prop_assert!(kept.len() <= limit);
            prop_assert!(text.ends_with(&kept));
            prop_assert_eq!(kept.len() as u64 + dropped, bytes.len() as u64);
            // Nothing more than the cut to a boundary is lost: at most three bytes.
            prop_assert!(kept.len() + 3 >= limit.min(bytes.len()));
            prop_assert_eq!((kept, dropped), tail_of(&[bytes.to_vec()], limit));
        }
    }
}

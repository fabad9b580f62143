//! `npm run replay`: the `sol-pi replay` command inside Node. `scripts/replay.mjs` passes its
//! arguments to [`replay_main`], which runs `sol_pi_cli::run` on the process's own stdout and
//! stderr, so the output and the exit code are the binary's, byte for byte.

use std::io::{self, Write};
use std::time::Duration;

use napi_derive::napi;

use crate::boundary::quiet;

/// A stream of the process that may have been left non-blocking by Node: a parent `npm`
/// that wrote to the same pipe sets `O_NONBLOCK` on it, and a full pipe then answers
/// `WouldBlock`. The writes wait for the reader instead of failing.
struct Patient<W: Write>(W);

impl<W: Write> Patient<W> {
    fn retry<T>(&mut self, mut call: impl FnMut(&mut W) -> io::Result<T>) -> io::Result<T> {
        loop {
            match call(&mut self.0) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }
}

impl<W: Write> Write for Patient<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.retry(|inner| inner.write(bytes))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.retry(Write::flush)
    }
}

/// Runs `sol-pi replay <args>` (the arguments after `replay`) on the process's stdout and
/// stderr and returns its exit code: 0 every file replayed, 1 a file failed, 2 a usage error.
#[napi(catch_unwind)]
pub fn replay_main(args: Vec<String>) -> i32 {
    quiet(|| {
        let argv = ["sol-pi".to_owned(), "replay".to_owned()]
            .into_iter()
            .chain(args);
        let stdout = io::stdout();
        let stderr = io::stderr();
        sol_pi_cli::run(
            argv,
            &mut Patient(stdout.lock()),
            &mut Patient(stderr.lock()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes at most 3 bytes per call, and says `WouldBlock` every other call.
    struct Slow {
        written: Vec<u8>,
        calls: usize,
    }

    impl Write for Slow {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls % 2 == 1 {
                return Err(io::Error::from(io::ErrorKind::WouldBlock));
            }
            let taken = bytes.len().min(3);
            self.written.extend_from_slice(&bytes[..taken]);
            Ok(taken)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_non_blocking_stream_gets_every_byte() {
        let mut patient = Patient(Slow {
            written: Vec::new(),
            calls: 0,
        });
        patient
            .write_all(b"a report longer than one write")
            .expect("written");
        assert_eq!(patient.0.written, b"a report longer than one write");
    }

    #[test]
    fn a_broken_pipe_is_not_retried() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from(io::ErrorKind::BrokenPipe))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let error = Patient(Closed).write_all(b"x").expect_err("broken");
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
    }
}

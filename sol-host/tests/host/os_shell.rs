//! `OsShell` runs real commands: exit statuses, joined output in order, the working folder,
//! the output limit, and timeouts that kill the whole process group.
//!
//! No test races the clock: a timeout test runs a command that can never end by itself and
//! asserts the outcome; the only bound below (`guarded`) turns a hang into a failure.

use std::io::Read as _;
use std::time::Duration;

use sol_core::{Shell, ShellError, ShellExit, ShellOutcome, ShellRequest};
use sol_host::{DEFAULT_OUTPUT_LIMIT, OsShell};

use crate::support::{Sandbox, literal_pattern};

/// Longer than the machine could ever need, shorter than forever.
const NEVER: &str = "sleep 2147483647";

fn request(command: &str, cwd: &camino::Utf8Path, timeout: Option<Duration>) -> ShellRequest {
    ShellRequest {
        command: command.to_owned(),
        cwd: cwd.to_owned(),
        timeout,
    }
}

fn run(shell: &OsShell, command: &str, sandbox: &Sandbox) -> ShellOutcome {
    shell
        .run(&request(command, sandbox.root(), None))
        .expect("sh starts")
}

/// Runs `operation` on another thread; a hang (the defect these tests look for) fails the
/// test after a minute instead of blocking the suite.
fn guarded<T: Send + 'static>(operation: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(operation());
    });
    receive
        .recv_timeout(Duration::from_secs(60))
        .expect("the call hung")
}

#[test]
fn exit_statuses_are_codes_and_a_signal_death_has_none() {
    let sandbox = Sandbox::new();
    let shell = OsShell::new();
    for (command, exit) in [
        ("true", ShellExit::Code(0)),
        ("false", ShellExit::Code(1)),
        ("exit 7", ShellExit::Code(7)),
        ("exit 255", ShellExit::Code(255)),
        ("kill -KILL $$", ShellExit::NoCode),
    ] {
        let outcome = run(&shell, command, &sandbox);
        assert_eq!(outcome.exit, exit, "{command}");
        assert_eq!(outcome.dropped_bytes, 0);
    }
}

#[test]
fn output_and_errors_share_one_stream_in_the_order_written() {
    let sandbox = Sandbox::new();
    let outcome = run(
        &OsShell::new(),
        "echo one; echo two >&2; printf three; echo ' four' >&2; read line; echo \"stdin:$line.\"",
        &sandbox,
    );
    // Standard input is /dev/null: `read` gets nothing and fails, the script goes on.
    assert_eq!(outcome.output, "one\ntwo\nthree four\nstdin:.\n");
    assert_eq!(outcome.exit, ShellExit::Code(0));
}

#[test]
fn the_command_runs_in_the_requested_folder() {
    let sandbox = Sandbox::new();
    let inner = sandbox.mkdir("inner");
    sandbox.write("inner/marker.txt", "here");
    let outcome = OsShell::new()
        .run(&request("pwd; cat marker.txt", &inner, None))
        .expect("sh starts");
    assert_eq!(outcome.output, format!("{inner}\nhere"));
}

#[test]
fn a_missing_folder_is_a_clear_error() {
    let sandbox = Sandbox::new();
    let missing = sandbox.path("missing");
    let error = OsShell::new()
        .run(&request("true", &missing, None))
        .expect_err("no folder to run in");
    assert!(matches!(error, ShellError::Unavailable { .. }), "{error:?}");
    assert_text_snapshot!("shell_missing_folder", error.to_string(), literal_pattern(sandbox.root()) => "[TMP]");
}

#[test]
fn megabytes_of_output_keep_only_the_tail() {
    let sandbox = Sandbox::new();
    let shell = OsShell::new();
    assert_eq!(shell.output_limit(), DEFAULT_OUTPUT_LIMIT);
    // 8 MiB of 'a', then a last line: far more than the pipe or the limit holds.
    let outcome = run(
        &shell,
        "head -c 8388608 /dev/zero | tr '\\0' a; echo; echo END",
        &sandbox,
    );
    assert_eq!(outcome.exit, ShellExit::Code(0));
    assert_eq!(outcome.output.len(), DEFAULT_OUTPUT_LIMIT);
    assert!(
        outcome.output.ends_with("a\nEND\n"),
        "{:?}",
        &outcome.output[outcome.output.len() - 10..]
    );
    assert_eq!(
        outcome.dropped_bytes,
        8_388_608 + 5 - DEFAULT_OUTPUT_LIMIT as u64
    );
}

#[test]
fn the_tail_starts_at_a_character_boundary() {
    let sandbox = Sandbox::new();
    // 3000 two-byte characters; an odd limit would cut one in half.
    let outcome = run(
        &OsShell::new().with_output_limit(1001),
        "i=0; while [ $i -lt 3000 ]; do printf '\\303\\251'; i=$((i+1)); done",
        &sandbox,
    );
    assert_eq!(outcome.output, "é".repeat(500));
    assert_eq!(outcome.dropped_bytes, 5000);
}

/// Reads the FIFO's read end to its end (every writer gone), from blocking mode.
fn read_to_end(fifo: std::fs::File) -> (std::fs::File, Vec<u8>) {
    rustix::io::ioctl_fionbio(&fifo, false).expect("blocking mode");
    guarded(move || {
        let mut fifo = fifo;
        let mut seen = Vec::new();
        fifo.read_to_end(&mut seen).expect("fifo read");
        (fifo, seen)
    })
}

fn open_for_reading(fifo: &camino::Utf8Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt as _;
    // Non-blocking, so the open does not wait for a writer.
    std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .expect("fifo opened for reading")
}

#[test]
fn a_timeout_kills_the_whole_group_and_the_call_returns() {
    let sandbox = Sandbox::new();
    let Some(fifo) = sandbox.fifo("alive") else {
        return;
    };
    // The grandchild holds the output pipe (stdout) and the FIFO (fd 3) while it sleeps;
    // the test holds the FIFO's read end, opened before the command starts, so the
    // grandchild's open never waits. End of file on the FIFO means every writer is gone.
    let mut alive = open_for_reading(&fifo);
    let command = format!("{{ echo ready >&3; exec {NEVER}; }} 3>'{fifo}' & echo started; wait");
    // A machine too busy to start the grandchild within the timeout is tried again with a
    // longer one: the outcome is asserted every time, only the time it takes varies.
    let mut timeout = Duration::from_millis(100);
    loop {
        let shell = OsShell::new();
        let request = request(&command, sandbox.root(), Some(timeout));
        let outcome = guarded(move || shell.run(&request).expect("sh starts"));
        assert_eq!(outcome.exit, ShellExit::TimedOut { after: timeout });
        let (fifo_end, seen) = read_to_end(alive);
        if seen == b"ready\n" {
            // The grandchild ran, held the pipe, and is gone: the call did not wait for it.
            assert_eq!(outcome.output, "started\n");
            break;
        }
        assert!(seen.is_empty(), "{seen:?}");
        rustix::io::ioctl_fionbio(&fifo_end, true).expect("non-blocking mode");
        alive = fifo_end;
        timeout *= 2;
    }
}

#[test]
fn a_default_timeout_applies_to_a_request_without_one() {
    let sandbox = Sandbox::new();
    let shell = OsShell::new().with_default_timeout(Duration::from_millis(50));
    let outcome = guarded(move || run(&shell, NEVER, &sandbox));
    assert_eq!(
        outcome.exit,
        ShellExit::TimedOut {
            after: Duration::from_millis(50)
        }
    );
}

#[test]
fn background_leftovers_do_not_hold_a_finished_command() {
    let sandbox = Sandbox::new();
    let Some(fifo) = sandbox.fifo("alive") else {
        return;
    };
    let alive = open_for_reading(&fifo);
    // The shell exits at once; its background job would keep the output pipe open forever.
    let command = format!("{{ echo ready >&3; exec {NEVER}; }} 3>'{fifo}' & echo done");
    let outcome = guarded(move || {
        OsShell::new()
            .run(&request(&command, sandbox.root(), None))
            .expect("sh starts")
    });
    assert_eq!(outcome.output, "done\n");
    assert_eq!(outcome.exit, ShellExit::Code(0));
    // Whether or not the job got as far as writing, it is gone now.
    let (_, seen) = read_to_end(alive);
    assert!(seen.is_empty() || seen == b"ready\n", "{seen:?}");
}

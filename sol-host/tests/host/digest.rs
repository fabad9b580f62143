//! `digest_file` hashes regular files only, within its size cap and time budget, and looks
//! at anything else without opening it for reading.

use std::fs::File;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use sol_host::digest::{FileLook, NotHashed, digest_file};

use crate::support::{Sandbox, without_blocking};

const CAP: u64 = 64 * 1024 * 1024;
const BUDGET: Duration = Duration::from_secs(5);

fn look(path: impl AsRef<Path>) -> FileLook {
    digest_file(path, CAP, BUDGET)
}

#[test]
fn a_regular_file_is_hashed_through_links() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("a.txt", "abc");
    let abc = FileLook::Digest(
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_owned(),
    );
    assert_eq!(look(&file), abc);
    let link = sandbox.symlink("link", "a.txt");
    assert_eq!(look(&link), abc);
    let empty = sandbox.write("empty", "");
    assert_eq!(
        look(&empty),
        FileLook::Digest(
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".to_owned()
        )
    );
}

#[test]
fn a_fifo_is_not_opened() {
    let sandbox = Sandbox::new();
    let Some(fifo) = sandbox.fifo("pipe") else {
        return;
    };
    let link = sandbox.symlink("link", "pipe");
    // No writer exists: opening it for reading would block forever.
    let looks = without_blocking(move || (look(&fifo), look(&link))).expect("did not block");
    assert_eq!(looks.0, FileLook::NotHashed(NotHashed::Fifo));
    assert_eq!(looks.1, FileLook::NotHashed(NotHashed::Fifo));
}

#[test]
fn a_link_to_dev_zero_is_a_device() {
    let sandbox = Sandbox::new();
    let link = sandbox.symlink("zero", "/dev/zero");
    assert_eq!(look(&link), FileLook::NotHashed(NotHashed::Device));
    assert_eq!(look("/dev/null"), FileLook::NotHashed(NotHashed::Device));
}

#[test]
fn a_directory_and_a_socket_are_not_read() {
    let sandbox = Sandbox::new();
    assert_eq!(
        look(sandbox.root()),
        FileLook::NotHashed(NotHashed::Directory)
    );
    let socket = sandbox.path("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    assert_eq!(look(&socket), FileLook::NotHashed(NotHashed::Socket));
}

#[test]
fn a_sparse_file_over_the_cap_is_too_large_without_being_read() {
    let sandbox = Sandbox::new();
    let file = sandbox.path("big.dat");
    let handle = File::create(&file).expect("create");
    handle.set_len(CAP + 1).expect("set_len");
    assert_eq!(look(&file), FileLook::NotHashed(NotHashed::TooLarge));
    // Exactly at the cap is still hashed (here with a small cap).
    sandbox.write("big.dat", "abcd");
    assert!(matches!(digest_file(&file, 4, BUDGET), FileLook::Digest(_)));
    assert_eq!(
        digest_file(&file, 3, BUDGET),
        FileLook::NotHashed(NotHashed::TooLarge)
    );
}

#[test]
fn reading_stops_once_the_time_budget_is_spent() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("a.txt", "abc");
    assert_eq!(
        digest_file(&file, CAP, Duration::ZERO),
        FileLook::NotHashed(NotHashed::TooSlow)
    );
}

#[test]
fn a_missing_target_is_unreadable() {
    let sandbox = Sandbox::new();
    let FileLook::Unreadable(error) = look(sandbox.path("missing")) else {
        panic!("a missing file cannot be read");
    };
    assert!(error.contains("No such file"), "{error}");
    let dangling = sandbox.path("dangling");
    symlink(sandbox.path("nowhere"), &dangling).expect("symlink");
    assert!(matches!(look(&dangling), FileLook::Unreadable(_)));
}

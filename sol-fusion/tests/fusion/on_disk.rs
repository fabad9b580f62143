//! The `host` feature over real files and the real shell: the guard's look at a file
//! (`guard::look_at`, the one mapping from `sol_host::digest`), and fused calls through
//! `driver::run_on_disk` and `driver::Session` as the `fused_edit` example makes them.

// These tests edit real files in a sandbox, as a host does.
#![allow(clippy::disallowed_methods)]

use sol_fusion::driver::{self, Session};
use sol_fusion::fused::{Capabilities, FusedCallRequest, MutationResult, Observation};
use sol_fusion::guard::{self, TargetLook, Unguarded};
use sol_fusion::host::OsShell;
use sol_fusion::host::digest::{FileLook, NotHashed};
use sol_fusion::path::PathContext;
use sol_fusion::text;
use sol_testkit::{Sandbox, literal_pattern, without_blocking};

#[test]
fn every_look_of_the_digest_reaches_the_guard_with_its_meaning() {
    let reasons = [
        (NotHashed::Fifo, "fifo"),
        (NotHashed::Device, "device"),
        (NotHashed::Socket, "socket"),
        (NotHashed::Directory, "directory"),
        (NotHashed::Other, "other"),
        (NotHashed::TooLarge, "too_large"),
        (NotHashed::TooSlow, "too_slow"),
    ];
    assert_eq!(reasons.len(), Unguarded::ALL.len());
    for (reason, code) in reasons {
        let TargetLook::Unguarded(unguarded) = TargetLook::from(FileLook::NotHashed(reason)) else {
            panic!("{reason:?} is a reason not to hash");
        };
        assert_eq!(unguarded.code(), code);
    }
    assert_eq!(
        TargetLook::from(FileLook::Unreadable("EACCES".to_owned())),
        TargetLook::Unreadable("EACCES".to_owned())
    );
    assert_eq!(
        TargetLook::from(FileLook::Digest("ab".to_owned())),
        TargetLook::Digest("ab".to_owned())
    );
}

#[test]
fn the_look_hashes_a_regular_file_and_never_opens_a_fifo() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("a.txt", "abc");
    assert_eq!(
        guard::look_at(&file),
        TargetLook::Digest(
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_owned()
        )
    );
    assert_eq!(
        guard::look_at(sandbox.root()),
        TargetLook::Unguarded(Unguarded::Directory)
    );
    assert!(matches!(
        guard::look_at(sandbox.path("missing")),
        TargetLook::Unreadable(_)
    ));
    let Some(fifo) = sandbox.fifo("pipe") else {
        return;
    };
    assert_eq!(
        without_blocking(move || guard::look_at(fifo)),
        Some(TargetLook::Unguarded(Unguarded::Fifo))
    );
}

/// The host's own edit: replace `old` with `new` once.
fn replace(target: Option<&str>, old: &str, new: &str) -> Result<&'static str, String> {
    let path = target.ok_or("no target")?;
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    if !text.contains(old) {
        return Err(format!("Could not find {old:?} in the file."));
    }
    std::fs::write(path, text.replacen(old, new, 1)).map_err(|e| e.to_string())?;
    Ok("Successfully replaced 1 block.")
}

fn shown(title: &str, seen: &Observation) -> String {
    format!(
        "--- {title} (is_error: {}, requests avoided: {})\n{seen}",
        seen.is_error, seen.account.requests_avoided
    )
}

#[test]
fn a_session_edits_real_files_and_runs_real_commands() {
    let sandbox = Sandbox::new();
    sandbox.write("greeting.txt", "hello world\n");
    let cwd = sandbox.root().as_str();
    let shell = OsShell::new();
    let mut session = Session::new(PathContext::posix(cwd, cwd), &shell);
    let check = Some(r#"{"command":"grep -c planet greeting.txt","timeout":30}"#);
    let mut seen = Vec::new();
    let mut call = |title: &str, old: &str, new: &str, then_run: Option<&str>| {
        let observation =
            session.call("greeting.txt", then_run, |target| replace(target, old, new));
        seen.push(shown(title, &observation));
    };
    call("a passing check", "world", "planet", check);
    call("a failing check", "planet", "moon", check);
    call(
        "an edit that fails: the command is not run",
        "planet",
        "sun",
        Some(r#"{"command":"touch ran.txt"}"#),
    );
    call("a plain edit", "moon", "stars", None);
    call(
        "the command runs in the working directory",
        "stars",
        "stars",
        Some(r#"{"command":"pwd"}"#),
    );
    assert_eq!(sandbox.read("greeting.txt"), b"hello stars\n");
    assert!(!sandbox.exists("ran.txt"), "the skipped command ran");
    assert_eq!(session.saved().requests_avoided, 3);
    assert_text_snapshot!(
        "session_on_disk",
        seen.join("\n\n"),
        literal_pattern(cwd) => "[SANDBOX]"
    );
}

#[test]
fn a_host_that_throws_failures_gets_the_whole_text_as_one_error() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "one\n");
    let cwd = sandbox.root().as_str();
    let shell = OsShell::new();
    let mut session =
        Session::new(PathContext::posix(cwd, cwd), &shell).with_capabilities(Capabilities {
            error_results_kept: false,
        });
    let seen = session.call("a.txt", Some(r#"{"command":"exit 3"}"#), |target| {
        replace(target, "one", "two")
    });
    assert!(seen.is_error);
    assert_eq!(
        seen.texts,
        [text::failed_text(
            "Successfully replaced 1 block.",
            &text::exited_with_code(3)
        )]
    );
    assert_eq!(session.saved().requests_avoided, 1);
}

#[test]
fn a_refused_call_never_runs_the_mutation() {
    let sandbox = Sandbox::new();
    let cwd = sandbox.root().as_str();
    let request =
        FusedCallRequest::new("a.txt", PathContext::posix(cwd, cwd)).with_then_run("{\"command\"");
    let seen = driver::run_on_disk(
        &request,
        |_target: Option<&str>| -> MutationResult { panic!("the mutation ran") },
        &OsShell::new(),
    );
    assert!(seen.is_error);
    assert_eq!(seen.texts.len(), 1);
    assert!(
        seen.texts[0].starts_with("then_run is not valid JSON"),
        "{seen}"
    );
    assert!(seen.account.is_empty());
}

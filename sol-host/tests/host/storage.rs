//! The storage layout: a session directory's canonical `sol-pi/<id>`, the private temp
//! folder of a session without one, and the session-id rule.

use sol_core::SessionId;
use sol_host::storage::{
    STORAGE_FOLDER, StorageError, canonical_prefix, make_private_temp_dir, session_root,
    storage_root, temp_root,
};

use crate::support::{Sandbox, literal_pattern, mode};

fn id(text: &str) -> SessionId {
    SessionId::parse(text).expect("a safe id")
}

#[test]
fn a_session_directory_gives_its_canonical_sol_pi_folder_without_making_it() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("real/sessions");
    sandbox.symlink("linked", "real");
    let root = session_root(&sandbox.path("linked/sessions"), &id("s-1")).expect("a root");
    assert_eq!(
        root,
        sandbox
            .path("real/sessions")
            .join(STORAGE_FOLDER)
            .join("s-1")
    );
    assert!(!sandbox.exists("real/sessions/sol-pi"), "nothing is made");
    // A session directory Pi has not made yet keeps its missing part as given.
    let later = session_root(&sandbox.path("linked/new/sessions"), &id("s-1")).expect("a root");
    assert_eq!(later, sandbox.path("real/new/sessions/sol-pi/s-1"));
}

#[test]
fn a_session_without_a_directory_gets_a_new_private_temp_folder_each_time() {
    let sandbox = Sandbox::new();
    let first = make_private_temp_dir(sandbox.root(), &id("s-2")).expect("made");
    let second = make_private_temp_dir(sandbox.root(), &id("s-2")).expect("made");
    assert_ne!(first, second);
    for dir in [&first, &second] {
        assert_eq!(dir.parent(), Some(sandbox.root()));
        let name = dir.file_name().expect("a name");
        let suffix = name.strip_prefix("sol-pi-s-2-").expect("the layout's name");
        assert_eq!(suffix.len(), 12, "{name}");
        assert!(suffix.chars().all(|c| c.is_ascii_hexdigit()), "{name}");
        assert_eq!(mode(dir), 0o700);
    }
    assert_eq!(temp_root(&first).expect("canonical"), first);
    let whole = storage_root(None, "s-2", sandbox.root()).expect("made");
    assert!(
        whole
            .as_str()
            .starts_with(sandbox.path("sol-pi-s-2-").as_str())
    );
    assert_eq!(
        storage_root(Some(&sandbox.path("sessions")), "s-2", sandbox.root()).expect("a root"),
        sandbox.path("sessions/sol-pi/s-2")
    );
}

#[test]
fn unsafe_ids_and_unusable_folders_are_errors_with_a_message() {
    let sandbox = Sandbox::new();
    for unsafe_id in ["../escape", "a/b", ""] {
        let error = storage_root(Some(sandbox.root()), unsafe_id, sandbox.root())
            .expect_err("an unsafe id has no root");
        assert!(
            matches!(error, StorageError::UnsafeSessionId(_)),
            "{error:?}"
        );
    }
    let relative = session_root("relative/dir".into(), &id("s-3")).expect_err("not absolute");
    sandbox.write("file", "x");
    let below_a_file = make_private_temp_dir(&sandbox.path("file"), &id("s-3"))
        .expect_err("no folder below a file");
    let messages = [relative.to_string(), below_a_file.to_string()].join("\n");
    assert_text_snapshot!("storage_errors", messages, literal_pattern(sandbox.root()) => "[TMP]");
}

#[test]
fn the_canonical_prefix_needs_an_absolute_path() {
    let sandbox = Sandbox::new();
    sandbox.mkdir("a");
    sandbox.symlink("b", "a");
    assert_eq!(
        canonical_prefix(&sandbox.path("b/x/y")).expect("canonical"),
        sandbox.path("a/x/y")
    );
    assert_eq!(
        canonical_prefix("x".into()).expect_err("relative").kind(),
        std::io::ErrorKind::InvalidInput
    );
}

//! The in-memory doubles honour the port contracts.

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use proptest::prelude::*;
use serde_json::json;
use sol_core::testing::{
    MemoryFileSystem, MemoryNode, MemorySessionStore, RecordedEntry, ScriptedModelClient,
    ScriptedShell,
};
use sol_core::{
    FileKind, FileMetadata, FileSystem, FsErrorKind, ModelClient, ModelError, ModelReply,
    ModelRequest, ModelUsage, SessionStore, SessionStoreError, Shell, ShellError, ShellExit,
    ShellOutcome, ShellRequest,
};

fn p(path: &str) -> &Utf8Path {
    Utf8Path::new(path)
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn doubles_are_shareable_and_ports_are_object_safe() {
    assert_send_sync::<MemoryFileSystem>();
    assert_send_sync::<MemorySessionStore>();
    assert_send_sync::<ScriptedShell>();
    assert_send_sync::<ScriptedModelClient>();
    let fs = MemoryFileSystem::new();
    let store = MemorySessionStore::new();
    let shell = ScriptedShell::new();
    let model = ScriptedModelClient::new();
    let _ports: (
        &dyn FileSystem,
        &dyn SessionStore,
        &dyn Shell,
        &dyn ModelClient,
    ) = (&fs, &store, &shell, &model);
}

#[test]
fn metadata_of_missing_paths_is_none() {
    let fs = MemoryFileSystem::new().with_file("/a/f", "x");
    assert_eq!(fs.metadata(p("/a/missing")).expect("no error"), None);
    assert_eq!(
        fs.metadata(p("/nope/deeper/still")).expect("no error"),
        None
    );
    assert_eq!(
        fs.metadata(p("/a/f")).expect("no error"),
        Some(FileMetadata {
            kind: FileKind::File,
            len: 1
        })
    );
    assert_eq!(
        fs.metadata(p("/a")).expect("no error").map(|m| m.kind),
        Some(FileKind::Dir)
    );
    let error = fs
        .metadata(p("/a/f/under-a-file"))
        .expect_err("not a directory");
    assert_eq!(error.kind, FsErrorKind::Other);
}

#[test]
fn metadata_does_not_follow_a_final_symlink() {
    let fs = MemoryFileSystem::new()
        .with_file("/data/real.txt", "hello")
        .with_symlink("/data/link", "real.txt")
        .with_symlink("/dirlink", "/data");
    assert_eq!(
        fs.metadata(p("/data/link")).expect("ok"),
        Some(FileMetadata {
            kind: FileKind::Symlink,
            len: 8
        })
    );
    // Links before the final component are followed.
    assert_eq!(
        fs.metadata(p("/dirlink/real.txt"))
            .expect("ok")
            .map(|m| m.kind),
        Some(FileKind::File)
    );
}

#[test]
fn read_follows_symlinks_and_read_no_follow_refuses_them() {
    let fs = MemoryFileSystem::new()
        .with_file("/data/real.txt", "hello")
        .with_symlink("/data/link", "real.txt")
        .with_symlink("/data/abs", "/data/link")
        .with_symlink("/up", "data/../data/real.txt");
    assert_eq!(fs.read(p("/data/link"), 100).expect("followed"), b"hello");
    assert_eq!(fs.read(p("/data/abs"), 100).expect("two hops"), b"hello");
    assert_eq!(fs.read(p("/up"), 100).expect("with .."), b"hello");
    assert_eq!(
        fs.read_no_follow(p("/data/real.txt"), 100).expect("a file"),
        b"hello"
    );
    let error = fs
        .read_no_follow(p("/data/link"), 100)
        .expect_err("a symlink");
    assert_eq!(error.kind, FsErrorKind::SymlinkRefused);
    assert_eq!(error.path, Utf8PathBuf::from("/data/link"));
    assert_eq!(
        fs.reads(),
        [
            "/data/link",
            "/data/abs",
            "/up",
            "/data/real.txt",
            "/data/link"
        ]
        .map(Utf8PathBuf::from)
    );
}

#[test]
fn read_limits_and_failures() {
    let fs = MemoryFileSystem::new()
        .with_file("/f", "0123456789")
        .with_dir("/d")
        .with_symlink("/loop", "/loop");
    assert_eq!(fs.read(p("/f"), 10).expect("at the limit").len(), 10);
    let error = fs.read(p("/f"), 9).expect_err("over the limit");
    assert_eq!(error.kind, FsErrorKind::TooLarge);
    assert_eq!(
        error.to_string(),
        "file is larger than the limit of 9 bytes: /f"
    );
    assert_eq!(
        fs.read(p("/missing"), 10).expect_err("missing").kind,
        FsErrorKind::NotFound
    );
    assert_eq!(
        fs.read(p("/d"), 10).expect_err("a directory").kind,
        FsErrorKind::NotAFile
    );
    assert_eq!(
        fs.read(p("/loop"), 10).expect_err("a loop").kind,
        FsErrorKind::Other
    );
}

#[test]
fn create_new_is_exclusive_and_private() {
    let fs = MemoryFileSystem::new()
        .with_dir("/s")
        .with_symlink("/s/link", "/s/target");
    fs.create_new(p("/s/obj.txt"), b"one").expect("created");
    assert_eq!(fs.file("/s/obj.txt"), Some(b"one".to_vec()));
    assert_eq!(fs.mode("/s/obj.txt"), Some(0o600));
    let error = fs.create_new(p("/s/obj.txt"), b"two").expect_err("exists");
    assert_eq!(error.kind, FsErrorKind::AlreadyExists);
    assert_eq!(fs.file("/s/obj.txt"), Some(b"one".to_vec()));
    // A symlink counts as present, even a dangling one, and its target is not created.
    let error = fs
        .create_new(p("/s/link"), b"x")
        .expect_err("a symlink is present");
    assert_eq!(error.kind, FsErrorKind::AlreadyExists);
    assert_eq!(fs.node("/s/target"), None);
    let error = fs
        .create_new(p("/missing/obj.txt"), b"x")
        .expect_err("no parent");
    assert_eq!(error.kind, FsErrorKind::NotFound);
}

proptest! {
    /// Whatever a crash left at the end of a journal (a whole record, one cut anywhere, or
    /// nothing), every record appended after it reads back on a line of its own, and what
    /// was there is kept byte for byte.
    #[test]
    fn an_append_always_starts_on_a_fresh_line(
        before in proptest::collection::vec("[a-z{}\":,]{1,12}", 0..4),
        cut in 0usize..13,
        after in proptest::collection::vec("[a-z{}\":,]{1,12}", 1..4),
    ) {
        let fs = MemoryFileSystem::new().with_dir("/s");
        let path = p("/s/journal.jsonl");
        let mut existing: String = before.iter().map(|record| format!("{record}\n")).collect();
        // The last record cut `cut` bytes in (its line end lost at least).
        if let Some(last) = before.last() {
            existing.truncate(existing.len() - last.len() - 1 + cut.min(last.len()));
        }
        if !existing.is_empty() {
            fs.append(path, existing.as_bytes()).expect("the torn journal");
        }
        for record in &after {
            fs.append(path, format!("{record}\n").as_bytes()).expect("appended");
        }
        let text = String::from_utf8(fs.file(path).unwrap_or_default()).expect("UTF-8");
        prop_assert!(text.starts_with(&existing));
        let lines: Vec<&str> = text.lines().collect();
        let expected: Vec<&str> = after.iter().map(String::as_str).collect();
        prop_assert_eq!(&lines[lines.len() - after.len()..], expected.as_slice());
        prop_assert!(
            sol_core::append_needs_line_break(existing.as_bytes().last().copied(), b"x")
                == (!existing.is_empty() && !existing.ends_with('\n'))
        );
    }
}

#[test]
fn append_creates_then_appends_and_refuses_symlinks() {
    let fs = MemoryFileSystem::new()
        .with_dir("/s")
        .with_file("/elsewhere/secret", "keep")
        .with_symlink("/s/ledger-link", "/elsewhere/secret");
    fs.append(p("/s/ledger.jsonl"), b"{\"a\":1}\n")
        .expect("created");
    fs.append(p("/s/ledger.jsonl"), b"{\"a\":2}\n")
        .expect("appended");
    assert_eq!(
        fs.file("/s/ledger.jsonl"),
        Some(b"{\"a\":1}\n{\"a\":2}\n".to_vec())
    );
    assert_eq!(fs.mode("/s/ledger.jsonl"), Some(0o600));
    let error = fs.append(p("/s/ledger-link"), b"x").expect_err("a symlink");
    assert_eq!(error.kind, FsErrorKind::SymlinkRefused);
    assert_eq!(fs.file("/elsewhere/secret"), Some(b"keep".to_vec()));
    assert_eq!(
        fs.append(p("/s"), b"x").expect_err("a directory").kind,
        FsErrorKind::NotAFile
    );
}

#[test]
fn create_dir_private_creates_ancestors_and_refuses_symlinks() {
    let fs = MemoryFileSystem::new()
        .with_dir("/sessions")
        .with_dir("/attacker")
        .with_symlink("/sessions/evil", "/attacker");
    fs.create_dir_private(p("/sessions/sol-pi/s1/observation-pack"))
        .expect("created");
    for dir in [
        "/sessions/sol-pi",
        "/sessions/sol-pi/s1",
        "/sessions/sol-pi/s1/observation-pack",
    ] {
        assert_eq!(fs.node(dir), Some(MemoryNode::Dir { mode: 0o700 }), "{dir}");
    }
    // Existing directories keep their mode.
    assert_eq!(fs.mode("/sessions"), Some(0o755));
    fs.create_dir_private(p("/sessions/sol-pi/s1"))
        .expect("already there");

    let error = fs
        .create_dir_private(p("/sessions/evil/x"))
        .expect_err("through a symlink");
    assert_eq!(error.kind, FsErrorKind::SymlinkRefused);
    assert_eq!(fs.node("/attacker/x"), None);
    let error = fs
        .create_dir_private(p("/sessions/evil"))
        .expect_err("a symlink");
    assert_eq!(error.kind, FsErrorKind::SymlinkRefused);

    fs.create_new(p("/sessions/sol-pi/file"), b"")
        .expect("created");
    let error = fs
        .create_dir_private(p("/sessions/sol-pi/file"))
        .expect_err("a file");
    assert_eq!(error.kind, FsErrorKind::AlreadyExists);
}

#[test]
fn builders_and_paths_are_normalized() {
    let fs = MemoryFileSystem::new().with_file("/a/./b/../c.txt", "x");
    assert_eq!(fs.file("/a/c.txt"), Some(b"x".to_vec()));
    assert_eq!(
        fs.read(p("/a/b/../c.txt"), 10)
            .expect_err("b does not exist")
            .kind,
        FsErrorKind::NotFound
    );
    assert_eq!(fs.read(p("/a/./c.txt"), 10).expect("found"), b"x");
    assert_eq!(fs.paths(), ["/", "/a", "/a/c.txt"].map(Utf8PathBuf::from));
}

#[test]
fn session_store_keeps_entries_per_type_in_order() {
    let store = MemorySessionStore::new().with_entry("earlier", json!({"n": 0}));
    store
        .append_custom("state", &json!({"n": 1}))
        .expect("appended");
    store
        .append_custom("journal", &json!({"kind": "candidate"}))
        .expect("appended");
    store
        .append_custom("state", &json!({"n": 2}))
        .expect("appended");
    assert_eq!(
        store.custom_entries("state").expect("read"),
        vec![json!({"n": 1}), json!({"n": 2})]
    );
    assert_eq!(
        store.custom_entries("nothing").expect("read"),
        Vec::<serde_json::Value>::new()
    );
    assert_eq!(store.entries().len(), 4);
    assert_eq!(
        store.entries()[0],
        RecordedEntry {
            custom_type: "earlier".to_owned(),
            data: json!({"n": 0})
        }
    );

    let store = MemorySessionStore::without_session();
    assert_eq!(
        store.append_custom("state", &json!(1)),
        Err(SessionStoreError::NoSession)
    );
    assert_eq!(
        store.custom_entries("state"),
        Err(SessionStoreError::NoSession)
    );
}

fn shell_request(command: &str) -> ShellRequest {
    ShellRequest {
        command: command.to_owned(),
        cwd: "/work/app".into(),
        timeout: Some(Duration::from_secs(30)),
    }
}

#[test]
fn scripted_shell_answers_in_order_then_fails() {
    let shell = ScriptedShell::new()
        .with_outcome(ShellOutcome {
            output: "ok\n".to_owned(),
            exit: ShellExit::Code(0),
            dropped_bytes: 0,
        })
        .with_error(ShellError::Unavailable {
            message: "no bash".to_owned(),
        });
    shell.push(Ok(ShellOutcome {
        output: String::new(),
        exit: ShellExit::TimedOut {
            after: Duration::from_secs(30),
        },
        dropped_bytes: 12,
    }));
    assert_eq!(shell.remaining(), 3);
    let first = shell.run(&shell_request("cargo test")).expect("scripted");
    assert!(first.exit.is_success());
    assert_eq!(
        shell.run(&shell_request("b")),
        Err(ShellError::Unavailable {
            message: "no bash".to_owned()
        })
    );
    assert_eq!(
        shell.run(&shell_request("c")).expect("scripted"),
        ShellOutcome {
            output: String::new(),
            exit: ShellExit::TimedOut {
                after: Duration::from_secs(30)
            },
            dropped_bytes: 12,
        }
    );
    let exhausted = shell.run(&shell_request("d")).expect_err("exhausted");
    assert!(matches!(exhausted, ShellError::Failed { .. }));
    assert_eq!(
        shell
            .requests()
            .iter()
            .map(|r| r.command.as_str())
            .collect::<Vec<_>>(),
        ["cargo test", "b", "c", "d"]
    );
    assert_eq!(shell.remaining(), 0);
}

#[test]
fn shell_values_serialize_for_the_host() {
    let exits = [
        (ShellExit::Code(2), json!({"kind": "code", "code": 2})),
        (ShellExit::NoCode, json!({"kind": "noCode"})),
        (
            ShellExit::TimedOut {
                after: Duration::from_millis(5_250),
            },
            json!({"kind": "timedOut", "afterMs": 5250}),
        ),
        (ShellExit::Aborted, json!({"kind": "aborted"})),
    ];
    for (exit, value) in exits {
        assert_eq!(serde_json::to_value(exit).expect("serializable"), value);
        assert_eq!(
            serde_json::from_value::<ShellExit>(value).expect("parsable"),
            exit
        );
    }
    assert_eq!(
        serde_json::to_value(shell_request("ls")).expect("serializable"),
        json!({"command": "ls", "cwd": "/work/app", "timeoutMs": 30000})
    );
    let no_timeout = ShellRequest {
        timeout: None,
        ..shell_request("ls")
    };
    let value = serde_json::to_value(&no_timeout).expect("serializable");
    assert_eq!(value, json!({"command": "ls", "cwd": "/work/app"}));
    assert_eq!(
        serde_json::from_value::<ShellRequest>(value).expect("parsable"),
        no_timeout
    );
    let outcome = ShellOutcome {
        output: "tail".to_owned(),
        exit: ShellExit::Code(1),
        dropped_bytes: 7,
    };
    let value = serde_json::to_value(&outcome).expect("serializable");
    assert_eq!(
        value,
        json!({"output": "tail", "exit": {"kind": "code", "code": 1}, "droppedBytes": 7})
    );
    assert_eq!(
        serde_json::from_value::<ShellOutcome>(value).expect("parsable"),
        outcome
    );
    // A host that keeps everything may leave the count out.
    let complete: ShellOutcome =
        serde_json::from_value(json!({"output": "all", "exit": {"kind": "noCode"}}))
            .expect("parsable");
    assert_eq!(complete.dropped_bytes, 0);
}

fn shell_exit() -> impl Strategy<Value = ShellExit> {
    prop_oneof![
        any::<i32>().prop_map(ShellExit::Code),
        Just(ShellExit::NoCode),
        any::<u64>().prop_map(|ms| ShellExit::TimedOut {
            after: Duration::from_millis(ms)
        }),
        Just(ShellExit::Aborted),
    ]
}

proptest! {
    /// Every request and outcome crosses to a host and back unchanged when its durations
    /// are whole milliseconds, and a finer duration is cut to the millisecond.
    #[test]
    fn shell_values_round_trip_through_json(
        command in "\\PC{0,40}",
        timeout_ms in proptest::option::of(any::<u64>()),
        extra_nanos in 0u32..1_000_000,
        output in "\\PC{0,40}",
        exit in shell_exit(),
        dropped_bytes in any::<u64>(),
    ) {
        let request = ShellRequest {
            command,
            cwd: "/work/app".into(),
            timeout: timeout_ms.map(Duration::from_millis),
        };
        let value = serde_json::to_value(&request).expect("serializable");
        prop_assert_eq!(&serde_json::from_value::<ShellRequest>(value).expect("parsable"), &request);
        if let Some(ms) = timeout_ms.filter(|ms| *ms < u64::MAX / 2) {
            let finer = ShellRequest {
                timeout: Some(Duration::from_millis(ms) + Duration::from_nanos(u64::from(extra_nanos))),
                ..request.clone()
            };
            let value = serde_json::to_value(&finer).expect("serializable");
            prop_assert_eq!(serde_json::from_value::<ShellRequest>(value).expect("parsable"), request);
        }
        let outcome = ShellOutcome { output, exit, dropped_bytes };
        let value = serde_json::to_value(&outcome).expect("serializable");
        prop_assert_eq!(serde_json::from_value::<ShellOutcome>(value).expect("parsable"), outcome);
    }
}

fn model_request() -> ModelRequest {
    ModelRequest {
        provider: "openai-codex".to_owned(),
        model: "gpt-5.6-luna".to_owned(),
        system_prompt: "Write a receipt.".to_owned(),
        user_text: "log".to_owned(),
        max_output_tokens: 2048,
        timeout: Duration::from_secs(90),
    }
}

#[test]
fn scripted_model_client_answers_in_order_then_fails() {
    let client = ScriptedModelClient::new()
        .with_reply("{\"schema\":\"x\"}")
        .with_error(ModelError::TimedOut {
            after: Duration::from_secs(90),
        })
        .with_reply_using("{}", 1200, 80);
    assert_eq!(
        client.complete(&model_request()),
        Ok(ModelReply {
            text: "{\"schema\":\"x\"}".to_owned(),
            usage: None,
        })
    );
    assert_eq!(
        client.complete(&model_request()),
        Err(ModelError::TimedOut {
            after: Duration::from_secs(90)
        })
    );
    assert_eq!(
        client.complete(&model_request()),
        Ok(ModelReply {
            text: "{}".to_owned(),
            usage: Some(ModelUsage {
                input_tokens: 1200,
                output_tokens: 80,
            }),
        })
    );
    assert!(matches!(
        client.complete(&model_request()),
        Err(ModelError::Failed { .. })
    ));
    assert_eq!(client.requests(), vec![model_request(); 4]);
    let request = serde_json::to_value(model_request()).expect("serializable");
    assert_eq!(request["maxOutputTokens"], json!(2048));
    assert_eq!(request["timeoutMs"], json!(90_000));
    assert_eq!(
        serde_json::from_value::<ModelRequest>(request).expect("round trip"),
        model_request()
    );
}

#[test]
fn a_model_reply_serializes_its_usage_only_when_known() {
    let bare = ModelReply::text("ok");
    assert_eq!(
        serde_json::to_value(&bare).expect("serializable"),
        json!({"text": "ok"})
    );
    let counted = ModelReply::text("ok").with_usage(10, 2);
    let value = serde_json::to_value(&counted).expect("serializable");
    assert_eq!(
        value,
        json!({"text": "ok", "usage": {"inputTokens": 10, "outputTokens": 2}})
    );
    assert_eq!(
        serde_json::from_value::<ModelReply>(json!({"text": "ok"})).expect("no usage"),
        bare
    );
    assert_eq!(
        serde_json::from_value::<ModelReply>(value).expect("usage"),
        counted
    );
}

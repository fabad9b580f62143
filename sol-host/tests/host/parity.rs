//! The in-memory double (`sol_core::testing::MemoryFileSystem`) and `OsFileSystem` give
//! the same outcome, step by step, and leave the same tree behind. The pure crates are tested
//! against the double only; this is what keeps it honest.

use std::collections::BTreeMap;

use camino::{Utf8Path, Utf8PathBuf};
use sol_core::testing::{MemoryFileSystem, MemoryNode};
use sol_core::{FileKind, FileSystem, FsErrorKind};
use sol_host::OsFileSystem;

use crate::support::{Sandbox, mode};

/// Where the double's tree lives; the native one lives in a temporary directory.
const MEMORY_ROOT: &str = "/sandbox";

/// What exists before the steps run. Symlink targets are relative, so they mean the same
/// thing in both roots.
enum Setup {
    File(&'static str, &'static str),
    Dir(&'static str),
    Symlink(&'static str, &'static str),
}

/// One call on the port, with a path relative to the root.
#[derive(Debug)]
enum Step {
    Metadata(&'static str),
    Read(&'static str, u64),
    ReadNoFollow(&'static str, u64),
    CreateDirPrivate(&'static str),
    CreateNew(&'static str, &'static str),
    Append(&'static str, &'static str),
    ReplacePrivate(&'static str, &'static str),
}

/// What a step gave, with the details that must agree (kinds, bytes), not those that may
/// differ (a directory's length, error messages).
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Done,
    Absent,
    Present(FileKind),
    Bytes(Vec<u8>),
    Failed(FsErrorKind),
    /// An error about another path than the one given: never expected.
    FailedElsewhere(FsErrorKind, Utf8PathBuf),
}

/// A tree entry, compared after the steps.
#[derive(Debug, PartialEq, Eq)]
enum Node {
    File(String),
    Dir,
    Symlink(String),
}

struct Case {
    name: &'static str,
    setup: &'static [Setup],
    steps: &'static [Step],
}

const CASES: &[Case] = &[
    Case {
        name: "storage lifecycle",
        setup: &[Setup::Dir("sessions")],
        steps: &[
            Step::CreateDirPrivate("sessions/sol-pi/s1/obs"),
            Step::CreateDirPrivate("sessions/sol-pi/s1/obs"),
            Step::CreateDirPrivate("sessions/sol-pi"),
            Step::Metadata("sessions/sol-pi/s1"),
            Step::CreateNew("sessions/sol-pi/s1/obs/a.txt", "one"),
            Step::CreateNew("sessions/sol-pi/s1/obs/a.txt", "two"),
            Step::Metadata("sessions/sol-pi/s1/obs/a.txt"),
            Step::Read("sessions/sol-pi/s1/obs/a.txt", 3),
            Step::Read("sessions/sol-pi/s1/obs/a.txt", 2),
            Step::ReadNoFollow("sessions/sol-pi/s1/obs/a.txt", 3),
            Step::ReadNoFollow("sessions/sol-pi/s1/obs/a.txt", 2),
            Step::Append("sessions/sol-pi/s1/ledger.jsonl", "x"),
            Step::Append("sessions/sol-pi/s1/ledger.jsonl", "y\n"),
            Step::Append("sessions/sol-pi/s1/ledger.jsonl", "z\n"),
            Step::Append("sessions/sol-pi/s1/ledger.jsonl", ""),
            Step::Read("sessions/sol-pi/s1/ledger.jsonl", 100),
            Step::CreateNew("sessions/sol-pi/s1/empty", ""),
            Step::Read("sessions/sol-pi/s1/empty", 0),
            Step::Metadata("sessions/sol-pi/s1/missing"),
            Step::ReplacePrivate("sessions/sol-pi/s1/obs/a.txt", "three"),
            Step::Read("sessions/sol-pi/s1/obs/a.txt", 100),
            Step::ReplacePrivate("sessions/sol-pi/s1/obs/new.txt", "fresh"),
            Step::Read("sessions/sol-pi/s1/obs/new.txt", 100),
        ],
    },
    Case {
        name: "symlink to a file at the final component",
        setup: &[
            Setup::File("elsewhere/secret", "keep"),
            Setup::Symlink("s/link", "../elsewhere/secret"),
        ],
        steps: &[
            Step::Metadata("s/link"),
            Step::Read("s/link", 100),
            Step::Read("s/link", 3),
            Step::ReadNoFollow("s/link", 100),
            Step::CreateNew("s/link", "overwritten"),
            Step::Append("s/link", "appended"),
            Step::CreateDirPrivate("s/link"),
            // The link itself is replaced; its target keeps its bytes.
            Step::ReplacePrivate("s/link", "replaced"),
            Step::Metadata("s/link"),
            Step::Read("elsewhere/secret", 100),
        ],
    },
    Case {
        name: "dangling symlink",
        setup: &[Setup::Symlink("s/dangling", "../elsewhere/created")],
        steps: &[
            Step::Metadata("s/dangling"),
            Step::Read("s/dangling", 100),
            Step::ReadNoFollow("s/dangling", 100),
            Step::CreateNew("s/dangling", "x"),
            Step::Append("s/dangling", "x"),
            Step::CreateDirPrivate("s/dangling"),
            Step::CreateDirPrivate("s/dangling/sub"),
            Step::ReplacePrivate("s/dangling", "x"),
            Step::Metadata("elsewhere"),
        ],
    },
    Case {
        name: "symlinked directory along the path",
        setup: &[
            Setup::File("attacker/existing/f", "data"),
            Setup::Symlink("sessions/evil", "../attacker"),
        ],
        steps: &[
            Step::Metadata("sessions/evil/existing/f"),
            Step::Read("sessions/evil/existing/f", 100),
            Step::ReadNoFollow("sessions/evil/existing/f", 100),
            Step::CreateDirPrivate("sessions/evil"),
            Step::CreateDirPrivate("sessions/evil/new/deeper"),
            Step::CreateDirPrivate("sessions/evil/existing"),
            Step::CreateDirPrivate("sessions/evil/existing/sub"),
        ],
    },
    Case {
        name: "directory where a file is expected",
        setup: &[Setup::Dir("d")],
        steps: &[
            Step::Metadata("d"),
            Step::Read("d", 100),
            Step::ReadNoFollow("d", 100),
            Step::Append("d", "x"),
            Step::CreateNew("d", "x"),
            Step::CreateDirPrivate("d"),
            Step::ReplacePrivate("d", "x"),
        ],
    },
    Case {
        name: "file where a directory is expected",
        setup: &[Setup::File("f", "x")],
        steps: &[
            Step::CreateDirPrivate("f"),
            Step::CreateDirPrivate("f/sub"),
            Step::Metadata("f/sub"),
            Step::Read("f/sub", 100),
            Step::ReadNoFollow("f/sub", 100),
            Step::CreateNew("f/sub", "x"),
            Step::Append("f/sub", "x"),
            Step::ReplacePrivate("f/sub", "x"),
        ],
    },
    Case {
        name: "missing parents",
        setup: &[],
        steps: &[
            Step::Metadata("missing/x"),
            Step::Read("missing/x", 100),
            Step::ReadNoFollow("missing/x", 100),
            Step::CreateNew("missing/x", "x"),
            Step::Append("missing/x", "x"),
            Step::ReplacePrivate("missing/x", "x"),
        ],
    },
    Case {
        name: "symlink loop",
        setup: &[Setup::Symlink("loop", "loop")],
        steps: &[
            Step::Metadata("loop"),
            Step::Metadata("loop/x"),
            Step::Read("loop", 100),
            Step::ReadNoFollow("loop", 100),
            Step::ReadNoFollow("loop/x", 100),
            Step::CreateNew("loop", "x"),
            Step::Append("loop", "x"),
            Step::CreateDirPrivate("loop"),
        ],
    },
];

fn run(fs: &dyn FileSystem, root: &Utf8Path, step: &Step) -> Outcome {
    let at = |relative: &str| root.join(relative);
    let result = match *step {
        Step::Metadata(path) => fs.metadata(&at(path)).map(|found| match found {
            None => Outcome::Absent,
            Some(meta) => Outcome::Present(meta.kind),
        }),
        Step::Read(path, max) => fs.read(&at(path), max).map(Outcome::Bytes),
        Step::ReadNoFollow(path, max) => fs.read_no_follow(&at(path), max).map(Outcome::Bytes),
        Step::CreateDirPrivate(path) => fs.create_dir_private(&at(path)).map(|()| Outcome::Done),
        Step::CreateNew(path, text) => fs
            .create_new(&at(path), text.as_bytes())
            .map(|()| Outcome::Done),
        Step::Append(path, text) => fs
            .append(&at(path), text.as_bytes())
            .map(|()| Outcome::Done),
        Step::ReplacePrivate(path, text) => fs
            .replace_private(&at(path), text.as_bytes())
            .map(|()| Outcome::Done),
    };
    result.unwrap_or_else(|error| {
        // The contract: an error names the path the operation was given.
        if error.path == at(step_path(step)) {
            Outcome::Failed(error.kind)
        } else {
            Outcome::FailedElsewhere(error.kind, error.path)
        }
    })
}

fn step_path(step: &Step) -> &'static str {
    match *step {
        Step::Metadata(path)
        | Step::Read(path, _)
        | Step::ReadNoFollow(path, _)
        | Step::CreateDirPrivate(path)
        | Step::CreateNew(path, _)
        | Step::Append(path, _)
        | Step::ReplacePrivate(path, _) => path,
    }
}

fn memory_fs(setup: &[Setup]) -> MemoryFileSystem {
    let root = Utf8Path::new(MEMORY_ROOT);
    setup.iter().fold(
        MemoryFileSystem::new().with_dir(root),
        |fs, item| match *item {
            Setup::File(path, text) => fs.with_file(root.join(path), text),
            Setup::Dir(path) => fs.with_dir(root.join(path)),
            Setup::Symlink(path, target) => fs.with_symlink(root.join(path), target),
        },
    )
}

fn native_sandbox(setup: &[Setup]) -> Sandbox {
    let sandbox = Sandbox::new();
    for item in setup {
        match *item {
            Setup::File(path, text) => {
                sandbox.write(path, text);
            }
            Setup::Dir(path) => {
                sandbox.mkdir(path);
            }
            Setup::Symlink(path, target) => {
                sandbox.symlink(path, target);
            }
        }
    }
    sandbox
}

/// The double's tree under its root, keyed by relative path, with the mode of what the
/// port created (0600 files, 0700 directories; entries placed by the setup are left out).
fn memory_tree(fs: &MemoryFileSystem) -> (BTreeMap<String, Node>, BTreeMap<String, u32>) {
    let root = Utf8Path::new(MEMORY_ROOT);
    let mut tree = BTreeMap::new();
    let mut private_modes = BTreeMap::new();
    for path in fs.paths() {
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        if relative.as_str().is_empty() {
            continue;
        }
        let key = relative.to_string();
        let node = match fs.node(&path).expect("listed path") {
            MemoryNode::File { bytes, mode } => {
                if mode == 0o600 {
                    private_modes.insert(key.clone(), mode);
                }
                Node::File(String::from_utf8_lossy(&bytes).into_owned())
            }
            MemoryNode::Dir { mode } => {
                if mode == 0o700 {
                    private_modes.insert(key.clone(), mode);
                }
                Node::Dir
            }
            MemoryNode::Symlink { target } => Node::Symlink(target.to_string()),
        };
        tree.insert(key, node);
    }
    (tree, private_modes)
}

fn native_tree(root: &Utf8Path) -> BTreeMap<String, Node> {
    let mut tree = BTreeMap::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable directory") {
            let path = Utf8PathBuf::from_path_buf(entry.expect("entry").path()).expect("UTF-8");
            let key = path.strip_prefix(root).expect("under root").to_string();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let node = if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("link target");
                Node::Symlink(target.to_str().expect("UTF-8 target").to_owned())
            } else if meta.is_dir() {
                pending.push(path.clone());
                Node::Dir
            } else {
                let bytes = std::fs::read(&path).expect("readable file");
                Node::File(String::from_utf8_lossy(&bytes).into_owned())
            };
            tree.insert(key, node);
        }
    }
    tree
}

#[test]
fn native_and_memory_file_systems_agree_step_by_step() {
    let mut mismatches = Vec::new();
    for case in CASES {
        let memory = memory_fs(case.setup);
        let sandbox = native_sandbox(case.setup);
        for (index, step) in case.steps.iter().enumerate() {
            let expected = run(&memory, Utf8Path::new(MEMORY_ROOT), step);
            let actual = run(&OsFileSystem, sandbox.root(), step);
            if expected != actual {
                mismatches.push(format!(
                    "{} / step {index} {step:?}: memory {expected:?}, native {actual:?}",
                    case.name
                ));
            }
        }
        let (expected_tree, private_modes) = memory_tree(&memory);
        let actual_tree = native_tree(sandbox.root());
        if expected_tree != actual_tree {
            mismatches.push(format!(
                "{}: trees differ\nmemory {expected_tree:#?}\nnative {actual_tree:#?}",
                case.name
            ));
        }
        for (relative, expected_mode) in private_modes {
            let actual_mode = mode(&sandbox.path(&relative));
            if actual_mode != expected_mode {
                mismatches.push(format!(
                    "{} / {relative}: memory mode {expected_mode:o}, native {actual_mode:o}",
                    case.name
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn every_port_operation_is_exercised_by_the_parity_cases() {
    let mut seen = [false; 7];
    for step in CASES.iter().flat_map(|case| case.steps) {
        let index = match step {
            Step::Metadata(_) => 0,
            Step::Read(..) => 1,
            Step::ReadNoFollow(..) => 2,
            Step::CreateDirPrivate(_) => 3,
            Step::CreateNew(..) => 4,
            Step::Append(..) => 5,
            Step::ReplacePrivate(..) => 6,
        };
        seen[index] = true;
    }
    assert_eq!(seen, [true; 7]);
}

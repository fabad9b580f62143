//! Which commands produce logs worth reducing, and which texts show a failure.
//!
//! Both matchers are case-insensitive. The failure words are fixed by the specification; the
//! build and test commands are a [`CommandSet`] whose default is the specification's list, so
//! every SoL-Pi host treats a log the same unless its host replaces or extends the set.
//!
//! ```
//! use sol_reducer::command::{has_failure_signal, is_diagnostic_command, CommandSet};
//!
//! assert!(is_diagnostic_command("cargo test --all"));
//! assert!(is_diagnostic_command("cd app && npm test"));
//! assert!(!is_diagnostic_command("rg test src"));
//! assert!(has_failure_signal("test result: FAILED. 1 passed; 2 failed"));
//! assert!(!has_failure_signal("test result: ok. 3 passed"));
//!
//! // A host with its own test runner extends the default set, or replaces it.
//! let extended = CommandSet::default().with("just test");
//! assert!(extended.matches("just test --verbose"));
//! assert!(extended.matches("cargo build"));
//! let only_mine = CommandSet::new(["./run-tests.sh"]);
//! assert!(only_mine.matches("cd app && ./run-tests.sh -q"));
//! assert!(!only_mine.matches("cargo build"));
//! ```

use std::sync::LazyLock;

use regex::Regex;

/// Words that mark a failure anywhere in a text.
static FAILURE_SIGNAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)error|failed|failure|fatal|exception|panic|timeout|unsolved|type mismatch|assert",
    )
    .expect("the failure-signal pattern is valid")
});

/// The build and test commands of the specification, as [`CommandSet::default`] holds them.
/// `cargo` stands for every cargo subcommand.
pub const DEFAULT_COMMANDS: [&str; 22] = [
    "lake build",
    "lake env lean",
    "lean",
    "coq",
    "cargo",
    "zig build",
    "pytest",
    "python -m pytest",
    "python -m unittest",
    "python -m py_compile",
    "python3 -m pytest",
    "python3 -m unittest",
    "python3 -m py_compile",
    "ctest",
    "cmake --build",
    "ninja",
    "make",
    "npm test",
    "pnpm test",
    "yarn test",
    "go test",
    "bazel test",
];

/// The commands whose output the reducer handles: each is a sequence of words (`go test`,
/// `cmake --build`, `./run-tests.sh`). A shell line matches when one command's words
/// appear in it, in any case, separated by whitespace, preceded by the start of the line, a
/// shell separator (`;`, `&`, `|`, `(`, `)`) or whitespace, and followed by whitespace or
/// the end. The words may appear anywhere in the line (`cd app && make -j8`), but not
/// inside another word or argument (`rg test src`, `cat Makefile`).
#[derive(Debug, Clone)]
pub struct CommandSet {
    commands: Vec<String>,
    matcher: Option<Regex>,
}

impl Default for CommandSet {
    /// The specification's list, [`DEFAULT_COMMANDS`].
    fn default() -> Self {
        CommandSet::new(DEFAULT_COMMANDS)
    }
}

impl PartialEq for CommandSet {
    fn eq(&self, other: &Self) -> bool {
        self.commands == other.commands
    }
}

impl CommandSet {
    /// Exactly these commands (an empty set matches nothing). Blank entries are ignored.
    pub fn new<I, S>(commands: I) -> CommandSet
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let commands: Vec<String> = commands
            .into_iter()
            .map(Into::into)
            .filter(|command| !command.trim().is_empty())
            .collect();
        let matcher = command_matcher(&commands);
        CommandSet { commands, matcher }
    }

    /// This set and `command`.
    pub fn with(self, command: impl Into<String>) -> CommandSet {
        let mut commands = self.commands;
        commands.push(command.into());
        CommandSet::new(commands)
    }

    /// The commands, in the order given.
    pub fn commands(&self) -> &[String] {
        &self.commands
    }

    /// Whether the shell line `command` runs one of the set's commands.
    pub fn matches(&self, command: &str) -> bool {
        self.matcher
            .as_ref()
            .is_some_and(|matcher| matcher.is_match(command))
    }
}

/// One case-insensitive alternation of every command's escaped words.
fn command_matcher(commands: &[String]) -> Option<Regex> {
    let alternatives: Vec<String> = commands
        .iter()
        .map(|command| {
            command
                .split_whitespace()
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(r"\s+")
        })
        .collect();
    if alternatives.is_empty() {
        return None;
    }
    let pattern = format!(r"(?i)(?:^|[;&|()\s])(?:{})(?:\s|$)", alternatives.join("|"));
    Regex::new(&pattern).ok()
}

static DEFAULT_SET: LazyLock<CommandSet> = LazyLock::new(CommandSet::default);

/// Whether `command` runs one of the build or test tools whose logs the reducer handles:
/// `lake build`, `lake env lean`, `lean`, `coq`, `cargo` (any subcommand), `zig build`,
/// `pytest`, `python`/`python3 -m pytest|unittest|py_compile`, `ctest`, `cmake --build`,
/// `ninja`, `make`, `npm test`, `pnpm test`, `yarn test`, `go test` and `bazel test`.
///
/// The command word may appear anywhere in a shell line (`cd app && make -j8`), but not
/// inside another word or argument (`rg test src`, `cat Makefile`).
///
/// This is [`CommandSet::default`]`.matches(command)`.
pub fn is_diagnostic_command(command: &str) -> bool {
    DEFAULT_SET.matches(command)
}

/// Whether `text` contains a failure word: `error`, `failed`, `failure`, `fatal`,
/// `exception`, `panic`, `timeout`, `unsolved`, `type mismatch` or `assert`, in any case
/// and also inside longer words (`AssertionError`, `panicked`).
pub fn has_failure_signal(text: &str) -> bool {
    FAILURE_SIGNAL.is_match(text)
}

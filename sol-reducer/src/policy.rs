//! What a host may configure: which commands are candidates, and the name of the shell tool
//! the model reads the archived log back through. [`Policy::default`] is Pi's.
//!
//! ```
//! use sol_reducer::command::CommandSet;
//! use sol_reducer::Policy;
//!
//! let pi = Policy::default();
//! assert_eq!(pi.shell_tool, "bash");
//! assert!(pi.commands.matches("cargo test"));
//!
//! // A host adds its own test runner to the default commands and names its shell tool.
//! let mine = Policy::default().with_command("just test").with_shell_tool("shell");
//! assert!(mine.commands.matches("just test"));
//! assert!(mine.commands.matches("cargo test"));
//! assert_eq!(mine.shell_tool, "shell");
//!
//! // Or it replaces the command set.
//! let only = Policy::default().with_commands(CommandSet::new(["./run-tests.sh"]));
//! assert!(!only.commands.matches("cargo test"));
//! ```

use std::sync::LazyLock;

use crate::command::CommandSet;

/// Pi's model-facing shell tool.
pub const PI_SHELL_TOOL: &str = "bash";

/// The reducer's host-configurable policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// The build and test commands whose output is a candidate.
    pub commands: CommandSet,
    /// The model-facing tool that runs shell commands, named in the receipt's `readback=`
    /// line ("read source_artifact through bash").
    pub shell_tool: String,
}

impl Default for Policy {
    /// The specification's command list and Pi's `bash`.
    fn default() -> Self {
        Policy {
            commands: CommandSet::default(),
            shell_tool: PI_SHELL_TOOL.to_owned(),
        }
    }
}

static PI_POLICY: LazyLock<Policy> = LazyLock::new(Policy::default);

impl Policy {
    /// The default policy, shared.
    pub fn pi() -> &'static Policy {
        &PI_POLICY
    }

    /// This policy, with `command` added to its build and test commands
    /// ([`CommandSet::with`]).
    pub fn with_command(self, command: impl Into<String>) -> Policy {
        Policy {
            commands: self.commands.with(command),
            ..self
        }
    }

    /// This policy, with `commands` in place of its build and test commands.
    pub fn with_commands(self, commands: CommandSet) -> Policy {
        Policy { commands, ..self }
    }

    /// This policy, naming `tool` as the model-facing shell tool in the receipt's
    /// `readback=` line.
    pub fn with_shell_tool(self, tool: impl Into<String>) -> Policy {
        Policy {
            shell_tool: tool.into(),
            ..self
        }
    }
}

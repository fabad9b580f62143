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
//! let mine = Policy {
//!     commands: CommandSet::default().with("just test"),
//!     shell_tool: "shell".to_owned(),
//! };
//! assert!(mine.commands.matches("just test"));
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
}

//! # sol-fusion: Action Fusion
//!
//! Action Fusion is one of the four SoL-Pi token-efficiency mechanisms: `edit` and `write`
//! accept an optional `then_run` follow-up command that runs in the same tool call, so the
//! model does not need a second round-trip to run, build or test what it just changed.
//!
//! This crate holds the parts of Action Fusion that are decisions rather than effects:
//!
//! - [`path`]: which absolute file a tool call targets, from `@` mentions, `file://` URLs,
//!   `~` and Windows shell drive paths ([`path::resolve_tool_path`]);
//! - [`driver`]: one fused call run to its end for a synchronous Rust host, over a small
//!   trait the host implements ([`driver::FusionHost`]), with the command over the
//!   [`sol_core::Shell`] port ([`driver::ShellCommands`], [`driver::run_with_shell`]), and
//!   what the model receives ([`driver::observe`], [`fused::Observation`]); with the `host`
//!   feature, fused calls on real files where the host writes only its edit/write
//!   (`driver::Session`, `driver::run_on_disk`, `guard::look_at`);
//! - [`fused`]: one fused call as a state machine without I/O ([`fused::FusedCall`]): the
//!   host reports each I/O result and gets the next effect, down to the result or error
//!   and what the call saved;
//! - [`then_run`]: validation of the `then_run` argument ([`then_run::parse_then_run`]);
//! - [`guard`]: the hash guard's rule: whether the command runs, from two looks at the
//!   target after the mutation ([`guard::decide`]), and its limits;
//! - [`text`]: every text the model or a person reads: the `[then_run:…]` result texts,
//!   the schema descriptions, the savings badge, notice and status line, and how a
//!   returned command result is classified.
//!
//! # What it never does
//!
//! It never reads or writes a file, never runs a command, reads no clock and no environment
//! and starts no process. The host performs the mutation with its own `edit`/`write` tool,
//! hashes the target (a regular file only, within [`guard::MAX_DIGEST_BYTES`] and
//! [`guard::DIGEST_TIME_BUDGET_MS`]), runs the follow-up through its own shell and passes
//! the results in.
//! `clippy.toml` at the workspace root forbids the std functions that would break this.
//! Only the conveniences of the `host` feature reach real files and the shell, through the
//! ports of `sol-host`.
//!
//! The mechanism is opt-in: it is active only when `sol-pi.json` sets `actionFusion` to
//! `true` ([`is_enabled`]).
//!
//! # Example: a fused `write` in a Rust harness
//!
//! ```
//! use serde_json::json;
//! use sol_core::SolPiConfig;
//! use sol_fusion::guard::{self, GuardDecision, TargetLook};
//! use sol_fusion::path::{resolve_tool_path, PathContext, Platform};
//! use sol_fusion::text::{self, CommandOutcome};
//! use sol_fusion::then_run::parse_then_run;
//!
//! let config = SolPiConfig { action_fusion: true, ..SolPiConfig::default() };
//! assert!(sol_fusion::is_enabled(&config));
//!
//! // The arguments of the model's tool call.
//! let args = json!({
//!     "path": "@file:///work/app/src/main%20loop.rs",
//!     "content": "fn main() {}\n",
//!     "then_run": {"command": "cargo check", "timeout": 120},
//! });
//!
//! // 1. Validate before touching anything: a bad `then_run` rejects the call unchanged.
//! let Some(then_run) = parse_then_run(args.get("then_run"))? else {
//!     unreachable!("this call asks for a follow-up");
//! };
//! assert_eq!(then_run.command, "cargo check");
//!
//! // 2. Resolve the target once; it keys the host's per-file queue and hash guard.
//! let ctx = PathContext { cwd: "/work/app", home: "/home/dev", platform: Platform::Posix };
//! let target = resolve_tool_path(args["path"].as_str().unwrap_or_default(), &ctx)?;
//! assert_eq!(target, "/work/app/src/main loop.rs");
//!
//! // 3. The host writes the file and looks at the target twice (here: the same digest).
//! let look = TargetLook::Digest("5d41402abc4b2a76b9719d911017c592".to_owned());
//! assert_eq!(guard::decide(&look, &look), GuardDecision::Run { note: None });
//!
//! // 4. It runs the command and reports back.
//! let mutation_text = "Successfully wrote 13 bytes to src/main loop.rs";
//! let (is_error, exit_code, output) = (false, Some(0), "Finished `dev` profile");
//!
//! // 5. Build the combined observation the model receives.
//! let observation = match text::classify_command(is_error, exit_code) {
//!     CommandOutcome::Succeeded => {
//!         format!("{mutation_text}\n{}", text::succeeded_block(output))
//!     }
//!     CommandOutcome::Failed => text::failed_text(mutation_text, output),
//! };
//! assert_eq!(
//!     observation,
//!     "Successfully wrote 13 bytes to src/main loop.rs\n[then_run:succeeded]\nFinished `dev` profile"
//! );
//! # Ok::<(), sol_fusion::FusionError>(())
//! ```
//!
//! In Pi the success block is a separate text content block after the mutation's own
//! blocks; a harness with plain-text observations can join them as above.
//!
//! # One dependency
//!
//! The `sol-core` types (and `camino` paths, where they appear) of this crate's signatures are
//! re-exported, so a host needs no other dependency line for them:
//!
//! ```
//! use sol_fusion::sol_core::StepAccount;
//! let nothing_yet = StepAccount::default();
//! assert!(nothing_yet.is_empty());
//! ```

// The crates our public signatures use, so that one dependency line is enough.
#[doc(no_inline)]
pub use serde_json;
#[doc(no_inline)]
pub use sol_core;
#[doc(no_inline)]
pub use sol_core::camino;
/// The real ports over the operating system (`host::OsFileSystem`, ...), for a Rust host
/// that adds this crate with `features = ["host"]`; the mechanism itself never uses them.
#[cfg(feature = "host")]
pub use sol_host as host;

pub mod driver;
pub mod fused;
pub mod guard;
pub mod path;
pub mod text;
pub mod then_run;

use sol_core::{Mechanism, SolPiConfig};

/// The mechanism this crate implements.
pub const MECHANISM: Mechanism = Mechanism::ActionFusion;

/// Whether the configuration turns this mechanism on.
pub fn is_enabled(config: &SolPiConfig) -> bool {
    config.is_enabled(MECHANISM)
}

/// Any error of this crate, for hosts that handle them in one place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FusionError {
    /// The target path could not be resolved.
    #[error(transparent)]
    Path(#[from] path::PathError),
    /// The `then_run` argument is malformed.
    #[error(transparent)]
    ThenRun(#[from] then_run::ThenRunError),
}

impl FusionError {
    /// The stable code of the underlying error; codes are unique across both areas.
    pub fn code(&self) -> &'static str {
        match self {
            FusionError::Path(error) => error.code(),
            FusionError::ThenRun(error) => error.code(),
        }
    }
}

/// The README examples, compiled and run as doctests so that they cannot drift (the first
/// is the host example, which uses the real ports of the `host` feature).
#[cfg(all(doctest, feature = "host"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

//! Runs one fused call for a synchronous Rust host.
//!
//! [`run`] drives a [`FusedCall`] to its [`Finish`] over a [`FusionHost`]: the three things
//! only the host can do (run its own edit/write, look at the target, run the command).
//! [`ShellCommands`] runs the command over the [`sol_core::Shell`] port, so a host that has
//! a `Shell` implements only the mutation and the look.
//!
//! [`Effect::YieldTurn`] is a no-op here: a synchronous host has no event loop that could
//! run a second writer between the two looks, and the two looks still happen. A host with
//! an event loop (async Rust, or Pi's JavaScript) drives [`FusedCall`] itself and yields a
//! real turn there; the steps are the same.
//!
//! ```
//! use sol_fusion::driver::{self, FusionHost};
//! use sol_fusion::fused::{Capabilities, CommandResult, Finish, FusedCallRequest, MutationResult};
//! use sol_fusion::guard::TargetLook;
//! use sol_fusion::path::{PathContext, Platform};
//! use std::time::Duration;
//!
//! struct Host;
//! impl FusionHost for Host {
//!     fn run_mutation(&mut self, _target: Option<&str>) -> MutationResult {
//!         MutationResult::Returned { texts: vec!["Successfully replaced 1 block.".to_owned()], is_error: false }
//!     }
//!     fn look(&mut self, _path: &str) -> TargetLook {
//!         TargetLook::Digest("ab".to_owned())
//!     }
//!     fn run_command(&mut self, command: &str, timeout: Option<Duration>) -> CommandResult {
//!         assert_eq!((command, timeout), ("cargo check", None));
//!         CommandResult::Returned { texts: vec!["ok".to_owned()], is_error: false, exit_code: Some(0) }
//!     }
//! }
//!
//! let request = FusedCallRequest {
//!     path: "src/a.rs",
//!     then_run_json: Some(r#"{"command":"cargo check"}"#),
//!     ctx: PathContext { cwd: "/work", home: "/home/u", platform: Platform::Posix },
//!     capabilities: Capabilities { error_results_kept: true },
//!     parent_tool_call_id: None,
//! };
//! let Finish::Return { append, account, .. } = driver::run(&request, &mut Host) else { unreachable!() };
//! assert_eq!(append, ["[then_run:succeeded]\nok"]);
//! assert_eq!(account.requests_avoided, 1);
//! ```

use std::time::Duration;

use sol_core::camino::Utf8PathBuf;
use sol_core::{Shell, ShellExit, ShellRequest};

use crate::fused::{
    CommandResult, Effect, Finish, FusedCall, FusedCallRequest, Input, MutationResult,
};
use crate::guard::TargetLook;
use crate::text;

/// What a Rust host does for a fused call.
pub trait FusionHost {
    /// Runs the host's own edit/write with the call's arguments minus `then_run` and returns
    /// its result. `target` is the resolved absolute path (`None` for a plain call whose path
    /// did not resolve: the tool reports its own error). A host that runs calls in parallel
    /// queues them per target before this returns.
    fn run_mutation(&mut self, target: Option<&str>) -> MutationResult;

    /// Looks at the target: a digest of a regular file within
    /// [`MAX_DIGEST_BYTES`](crate::guard::MAX_DIGEST_BYTES) and
    /// [`DIGEST_TIME_BUDGET_MS`](crate::guard::DIGEST_TIME_BUDGET_MS), the reason it cannot be
    /// guarded, or the read error.
    fn look(&mut self, path: &str) -> TargetLook;

    /// Runs the follow-up command and returns how it ended ([`ShellCommands::run`] does it
    /// over a [`Shell`]).
    fn run_command(&mut self, command: &str, timeout: Option<Duration>) -> CommandResult;
}

/// Runs one fused call to its end: starts the [`FusedCall`], carries out each effect over
/// `host` and returns how the call ends. [`Effect::YieldTurn`] is a no-op (see the
/// [module docs](self)).
pub fn run(request: &FusedCallRequest<'_>, host: &mut dyn FusionHost) -> Finish {
    let (mut call, mut effect) = FusedCall::start(request);
    loop {
        let input = match effect {
            Effect::Finish(finish) => return finish,
            Effect::RunMutation { target } => Input::Mutation(host.run_mutation(target.as_deref())),
            Effect::Digest { path } => Input::Digest(host.look(&path)),
            Effect::YieldTurn => Input::TurnYielded,
            Effect::RunCommand {
                command, timeout, ..
            } => Input::Command(host.run_command(&command, timeout)),
        };
        effect = call.step(input);
    }
}

/// Runs follow-up commands over the [`Shell`] port in one working directory.
pub struct ShellCommands<'a> {
    shell: &'a dyn Shell,
    cwd: Utf8PathBuf,
}

impl<'a> ShellCommands<'a> {
    /// Commands over `shell`, run in `cwd`.
    pub fn new(shell: &'a dyn Shell, cwd: impl Into<Utf8PathBuf>) -> Self {
        ShellCommands {
            shell,
            cwd: cwd.into(),
        }
    }

    /// Runs `command` and turns how it ended into a [`CommandResult`]:
    ///
    /// - an exit code: a returned result with that code (a non-zero one is flagged as an
    ///   error and ends with [`text::exited_with_code`]);
    /// - no code (a signal): a returned error result ending with [`text::ended_without_code`];
    /// - a timeout or an abort: the command gave no result, its output followed by
    ///   [`text::timed_out`] or [`text::ABORTED`];
    /// - a shell that could not run it: the shell's error.
    ///
    /// When the shell kept only the end of the output, the output starts with
    /// [`text::output_dropped`].
    pub fn run(&self, command: &str, timeout: Option<Duration>) -> CommandResult {
        let request = ShellRequest {
            command: command.to_owned(),
            cwd: self.cwd.clone(),
            timeout,
        };
        let outcome = match self.shell.run(&request) {
            Ok(outcome) => outcome,
            Err(error) => {
                return CommandResult::Threw {
                    message: error.to_string(),
                };
            }
        };
        let output = if outcome.dropped_bytes > 0 {
            format!(
                "{}\n{}",
                text::output_dropped(outcome.dropped_bytes),
                outcome.output
            )
        } else {
            outcome.output
        };
        match outcome.exit {
            ShellExit::Code(0) => CommandResult::Returned {
                texts: vec![output],
                is_error: false,
                exit_code: Some(0),
            },
            ShellExit::Code(code) => CommandResult::Returned {
                texts: vec![text::with_status(&output, &text::exited_with_code(code))],
                is_error: true,
                exit_code: Some(code),
            },
            ShellExit::NoCode => CommandResult::Returned {
                texts: vec![text::with_status(&output, text::ended_without_code())],
                is_error: true,
                exit_code: None,
            },
            ShellExit::TimedOut { after } => CommandResult::Threw {
                message: text::with_status(&output, &text::timed_out(after)),
            },
            ShellExit::Aborted => CommandResult::Threw {
                message: text::with_status(&output, text::ABORTED),
            },
        }
    }
}

impl FusionHost for ShellCommandsHost<'_, '_> {
    fn run_mutation(&mut self, target: Option<&str>) -> MutationResult {
        self.host.run_mutation(target)
    }

    fn look(&mut self, path: &str) -> TargetLook {
        self.host.look(path)
    }

    fn run_command(&mut self, command: &str, timeout: Option<Duration>) -> CommandResult {
        self.commands.run(command, timeout)
    }
}

/// What a host that runs commands over a [`Shell`] implements: the mutation and the look.
pub trait MutationHost {
    /// As [`FusionHost::run_mutation`].
    fn run_mutation(&mut self, target: Option<&str>) -> MutationResult;
    /// As [`FusionHost::look`].
    fn look(&mut self, path: &str) -> TargetLook;
}

/// A [`FusionHost`] made of a [`MutationHost`] and [`ShellCommands`].
pub struct ShellCommandsHost<'h, 's> {
    /// The mutation and the look.
    pub host: &'h mut dyn MutationHost,
    /// The commands.
    pub commands: ShellCommands<'s>,
}

/// Runs one fused call whose command runs over `shell` in `cwd`: [`run`] with
/// [`ShellCommands`].
pub fn run_with_shell(
    request: &FusedCallRequest<'_>,
    host: &mut dyn MutationHost,
    shell: &dyn Shell,
    cwd: impl Into<Utf8PathBuf>,
) -> Finish {
    let mut host = ShellCommandsHost {
        host,
        commands: ShellCommands::new(shell, cwd),
    };
    run(request, &mut host)
}

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
    CommandResult, Effect, Finish, FusedCall, FusedCallRequest, Input, MutationResult, Observation,
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

/// Runs one fused call to its end, like [`run`], and returns what the model receives: the
/// mutation's result the host returned, with the call's end applied
/// ([`Finish::observation`]). For a host that builds its own observations rather than
/// handing the mutation's result on itself.
///
/// ```
/// use std::time::Duration;
/// use sol_fusion::driver::{self, FusionHost};
/// use sol_fusion::fused::{CommandResult, FusedCallRequest, MutationResult};
/// use sol_fusion::guard::TargetLook;
/// use sol_fusion::path::PathContext;
///
/// struct Host;
/// impl FusionHost for Host {
///     fn run_mutation(&mut self, _target: Option<&str>) -> MutationResult {
///         MutationResult::ok("Successfully wrote 3 bytes")
///     }
///     fn look(&mut self, _path: &str) -> TargetLook {
///         TargetLook::Digest("ab".to_owned())
///     }
///     fn run_command(&mut self, _command: &str, _timeout: Option<Duration>) -> CommandResult {
///         CommandResult::Returned { texts: vec!["ok".to_owned()], is_error: false, exit_code: Some(0) }
///     }
/// }
///
/// let request = FusedCallRequest::new("a.txt", PathContext::posix("/work", "/home/u"))
///     .with_then_run(r#"{"command":"make"}"#);
/// let seen = driver::observe(&request, &mut Host);
/// assert_eq!(seen.to_string(), "Successfully wrote 3 bytes\n[then_run:succeeded]\nok");
/// assert!(!seen.is_error);
/// assert_eq!(seen.account.requests_avoided, 1);
/// ```
pub fn observe(request: &FusedCallRequest<'_>, host: &mut dyn FusionHost) -> Observation {
    let mut recording = Recording {
        host,
        mutation: None,
    };
    let finish = run(request, &mut recording);
    finish.observation(recording.mutation.as_ref())
}

/// A [`FusionHost`] that keeps the mutation's result it passes on.
struct Recording<'h> {
    host: &'h mut dyn FusionHost,
    mutation: Option<MutationResult>,
}

impl FusionHost for Recording<'_> {
    fn run_mutation(&mut self, target: Option<&str>) -> MutationResult {
        let result = self.host.run_mutation(target);
        self.mutation = Some(result.clone());
        result
    }

    fn look(&mut self, path: &str) -> TargetLook {
        self.host.look(path)
    }

    fn run_command(&mut self, command: &str, timeout: Option<Duration>) -> CommandResult {
        self.host.run_command(command, timeout)
    }
}

/// A [`MutationHost`] over the real files (`host` feature): the host's own edit/write as a
/// closure from the resolved target to its result, and the look of
/// [`guard::look_at`](crate::guard::look_at).
#[cfg(feature = "host")]
pub struct OnDisk<F>(pub F);

#[cfg(feature = "host")]
impl<F: FnMut(Option<&str>) -> MutationResult> MutationHost for OnDisk<F> {
    fn run_mutation(&mut self, target: Option<&str>) -> MutationResult {
        (self.0)(target)
    }

    fn look(&mut self, path: &str) -> TargetLook {
        crate::guard::look_at(path)
    }
}

/// One fused call on real files (`host` feature): `mutation` is the host's own edit/write
/// (it gets the resolved target; its `Result` or [`MutationResult`] is what the tool
/// gave), the hash guard looks with [`guard::look_at`](crate::guard::look_at), and the
/// command runs over `shell` in the request's working directory. Returns what the model
/// receives ([`observe`]).
///
/// ```
/// use sol_fusion::driver;
/// use sol_fusion::fused::FusedCallRequest;
/// use sol_fusion::host::OsShell;
/// use sol_fusion::path::PathContext;
///
/// let dir = std::env::temp_dir().join(format!("sol-fusion-on-disk-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).expect("folder made");
/// let cwd = dir.to_str().expect("a UTF-8 folder");
/// let request = FusedCallRequest::new("a.txt", PathContext::posix(cwd, cwd))
///     .with_then_run(r#"{"command":"cat a.txt"}"#);
/// let write = |target: Option<&str>| {
///     std::fs::write(target.unwrap_or_default(), "hi\n").map(|()| "Successfully wrote 3 bytes")
/// };
/// let seen = driver::run_on_disk(&request, write, &OsShell::new());
/// assert_eq!(seen.to_string(), "Successfully wrote 3 bytes\n[then_run:succeeded]\nhi\n");
/// # std::fs::remove_dir_all(&dir).expect("cleaned up");
/// ```
#[cfg(feature = "host")]
pub fn run_on_disk<R: Into<MutationResult>>(
    request: &FusedCallRequest<'_>,
    mut mutation: impl FnMut(Option<&str>) -> R,
    shell: &dyn Shell,
) -> Observation {
    let mut host = ShellCommandsHost {
        host: &mut OnDisk(|target: Option<&str>| mutation(target).into()),
        commands: ShellCommands::new(shell, request.ctx.cwd),
    };
    observe(request, &mut host)
}

/// The fused calls of one agent session on real files (`host` feature): where paths
/// resolve, what the host can do, the shell its commands run in, and what the calls have
/// saved so far. Each [`call`](Session::call) is one [`run_on_disk`].
///
/// ```
/// use sol_fusion::driver::Session;
/// use sol_fusion::host::OsShell;
/// use sol_fusion::path::PathContext;
///
/// let dir = std::env::temp_dir().join(format!("sol-fusion-session-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).expect("folder made");
/// let cwd = dir.to_str().expect("a UTF-8 folder");
/// let shell = OsShell::new();
/// let mut session = Session::new(PathContext::posix(cwd, cwd), &shell);
/// let write = |target: Option<&str>| {
///     std::fs::write(target.unwrap_or_default(), "hi\n").map(|()| "Successfully wrote 3 bytes")
/// };
/// let seen = session.call("a.txt", Some(r#"{"command":"false"}"#), write);
/// assert!(seen.is_error);
/// assert_eq!(seen.to_string(), "Successfully wrote 3 bytes\n[then_run:failed]\nCommand exited with code 1");
/// let plain = session.call("a.txt", None, write);
/// assert_eq!(plain.to_string(), "Successfully wrote 3 bytes");
/// assert_eq!(session.saved().requests_avoided, 1);
/// # std::fs::remove_dir_all(&dir).expect("cleaned up");
/// ```
#[cfg(feature = "host")]
pub struct Session<'a> {
    ctx: crate::path::PathContext<'a>,
    capabilities: crate::fused::Capabilities,
    shell: &'a dyn Shell,
    saved: sol_core::StepAccount,
}

#[cfg(feature = "host")]
impl<'a> Session<'a> {
    /// A session whose paths resolve in `ctx`, whose commands run over `shell` in
    /// `ctx.cwd`, for a host with the default [`Capabilities`](crate::fused::Capabilities).
    pub fn new(ctx: crate::path::PathContext<'a>, shell: &'a dyn Shell) -> Self {
        Session {
            ctx,
            capabilities: crate::fused::Capabilities::default(),
            shell,
            saved: sol_core::StepAccount::default(),
        }
    }

    /// The same session for a host with other capabilities.
    #[must_use]
    pub fn with_capabilities(self, capabilities: crate::fused::Capabilities) -> Self {
        Session {
            capabilities,
            ..self
        }
    }

    /// One call the model issued on `path`, with its `then_run` JSON text when it has one:
    /// [`run_on_disk`], its savings added to [`saved`](Session::saved).
    pub fn call<R: Into<MutationResult>>(
        &mut self,
        path: &str,
        then_run_json: Option<&str>,
        mutation: impl FnMut(Option<&str>) -> R,
    ) -> Observation {
        let request = FusedCallRequest {
            path,
            then_run_json,
            ctx: self.ctx,
            capabilities: self.capabilities,
            parent_tool_call_id: None,
        };
        let seen = run_on_disk(&request, mutation, self.shell);
        self.saved += seen.account;
        seen
    }

    /// What the session's calls have saved so far.
    pub fn saved(&self) -> sol_core::StepAccount {
        self.saved
    }
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

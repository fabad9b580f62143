//! One fused `edit`/`write` call as a state machine without I/O.
//!
//! [`FusedCall::start`] checks the call's arguments and says what to do first;
//! every later step takes the result of the I/O the host carried out ([`Input`]) and
//! returns the next [`Effect`]. The sequence of a fused call is:
//!
//! 1. [`Effect::RunMutation`]: run the host's own `edit`/`write` (queued per file on
//!    [`Effect::RunMutation::target`]);
//! 2. [`Effect::Digest`], [`Effect::YieldTurn`], [`Effect::Digest`]: look at the target
//!    right after the mutation, let the event loop turn once, look again
//!    ([`crate::guard::decide`] compares the two looks);
//! 3. [`Effect::RunCommand`]: run `then_run` through the host's bash;
//! 4. [`Effect::Finish`]: the result to return or the error to throw, with the
//!    [`StepAccount`] of the call.
//!
//! A call without `then_run` runs the mutation and finishes with its result unchanged.
//! A call whose command ran avoids one model request, unless a script made it
//! ([`FusedCallRequest::parent_tool_call_id`], codemode): the script could have run the
//! command itself in the same turn, so its account avoids none.
//! How a failure after an applied mutation reaches the model depends on the host: one
//! that keeps a returned error result ([`Capabilities::error_results_kept`]) gets the
//! mutation's result with a failure block and the error flag; one that ignores it gets
//! an error to throw holding the same texts.
//!
//! ```
//! use sol_fusion::fused::{Capabilities, CommandResult, Effect, Finish, FusedCall, FusedCallRequest, Input, MutationResult};
//! use sol_fusion::guard::TargetLook;
//! use sol_fusion::path::{PathContext, Platform};
//!
//! let request = FusedCallRequest {
//!     path: "src/a.rs",
//!     then_run_json: Some(r#"{"command":"cargo check"}"#),
//!     ctx: PathContext { cwd: "/work", home: "/home/u", platform: Platform::Posix },
//!     capabilities: Capabilities { error_results_kept: true },
//!     parent_tool_call_id: None,
//! };
//! let (mut call, first) = FusedCall::start(&request);
//! assert_eq!(first, Effect::RunMutation { target: Some("/work/src/a.rs".to_owned()) });
//! let mutation = MutationResult::Returned { texts: vec!["Successfully replaced 1 block.".to_owned()], is_error: false };
//! assert!(matches!(call.step(Input::Mutation(mutation)), Effect::Digest { .. }));
//! let look = TargetLook::Digest("ab".to_owned());
//! assert_eq!(call.step(Input::Digest(look.clone())), Effect::YieldTurn);
//! assert!(matches!(call.step(Input::TurnYielded), Effect::Digest { .. }));
//! assert!(matches!(call.step(Input::Digest(look)), Effect::RunCommand { .. }));
//! let done = call.step(Input::Command(CommandResult::Returned { texts: vec!["ok".to_owned()], is_error: false, exit_code: Some(0) }));
//! let Effect::Finish(Finish::Return { append, notice, account }) = done else { unreachable!() };
//! assert_eq!(append, ["[then_run:succeeded]\nok"]);
//! assert!(notice);
//! assert_eq!(account.requests_avoided, 1);
//! ```

use std::time::Duration;

use sol_core::StepAccount;

use crate::guard::{self, GuardDecision, TargetLook};
use crate::path::{PathContext, resolve_tool_path};
use crate::text::{self, CommandOutcome};
use crate::then_run::{ThenRun, parse_then_run};

/// What the host can do, found out by feature detection and passed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// The host keeps a tool result returned with its error flag set (Pi 1.x). When false
    /// (Pi 0.84.2 marks every returned result as a success), failures are thrown.
    pub error_results_kept: bool,
}

impl Default for Capabilities {
    /// A host that keeps a returned error result, as a Rust host that builds its own
    /// observations does (Pi 1.x too); only Pi 0.84.2 needs `error_results_kept: false`.
    ///
    /// ```
    /// use sol_fusion::fused::Capabilities;
    ///
    /// assert!(Capabilities::default().error_results_kept);
    /// ```
    fn default() -> Self {
        Capabilities {
            error_results_kept: true,
        }
    }
}

/// A fused call as the model sent it, with what the host knows about it.
#[derive(Debug, Clone, Copy)]
pub struct FusedCallRequest<'a> {
    /// The tool's `path` argument, unresolved.
    pub path: &'a str,
    /// `then_run` as JSON text, `None` when the call has none.
    pub then_run_json: Option<&'a str>,
    /// Where relative paths and `~` resolve.
    pub ctx: PathContext<'a>,
    /// The host's capabilities.
    pub capabilities: Capabilities,
    /// The id of the tool call that made this call (a script's call), as the host's events
    /// give it; `None` for a call the model issued itself.
    pub parent_tool_call_id: Option<&'a str>,
}

impl<'a> FusedCallRequest<'a> {
    /// A call the model issued itself on `path`, without `then_run`, for a host with the
    /// default [`Capabilities`]; [`with_then_run`](Self::with_then_run) adds the follow-up.
    ///
    /// ```
    /// use sol_fusion::fused::{Capabilities, FusedCallRequest};
    /// use sol_fusion::path::PathContext;
    ///
    /// let request = FusedCallRequest::new("src/a.rs", PathContext::posix("/work", "/home/u"))
    ///     .with_then_run(r#"{"command":"cargo check"}"#);
    /// assert_eq!(request.then_run_json, Some(r#"{"command":"cargo check"}"#));
    /// assert_eq!(request.capabilities, Capabilities::default());
    /// assert_eq!(request.parent_tool_call_id, None);
    /// ```
    pub fn new(path: &'a str, ctx: PathContext<'a>) -> Self {
        FusedCallRequest {
            path,
            then_run_json: None,
            ctx,
            capabilities: Capabilities::default(),
            parent_tool_call_id: None,
        }
    }

    /// The same call with `then_run` (its JSON text, as the model wrote it).
    #[must_use]
    pub fn with_then_run(self, then_run_json: &'a str) -> Self {
        FusedCallRequest {
            then_run_json: Some(then_run_json),
            ..self
        }
    }
}

/// What the host reports after running the mutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MutationResult {
    /// The tool returned a result: the texts of its text blocks, in order, and its error flag.
    Returned {
        /// The `text` of each text block.
        texts: Vec<String>,
        /// The result's `isError`.
        is_error: bool,
    },
    /// The tool threw: the error's message.
    Threw {
        /// The message.
        message: String,
    },
}

impl MutationResult {
    /// A result the tool returned as a success, with one text block.
    ///
    /// ```
    /// use sol_fusion::fused::MutationResult;
    ///
    /// assert_eq!(
    ///     MutationResult::ok("Successfully replaced 1 block."),
    ///     MutationResult::Returned { texts: vec!["Successfully replaced 1 block.".to_owned()], is_error: false }
    /// );
    /// ```
    pub fn ok(text: impl Into<String>) -> Self {
        MutationResult::Returned {
            texts: vec![text.into()],
            is_error: false,
        }
    }

    /// The tool threw `message`.
    pub fn threw(message: impl Into<String>) -> Self {
        MutationResult::Threw {
            message: message.into(),
        }
    }
}

/// A host's own edit/write that ends in a `Result`: its success text
/// ([`MutationResult::ok`]) or its error's message ([`MutationResult::threw`]).
///
/// ```
/// use sol_fusion::fused::MutationResult;
///
/// let written: Result<&str, std::io::Error> = Ok("Successfully wrote 3 bytes");
/// assert_eq!(MutationResult::from(written), MutationResult::ok("Successfully wrote 3 bytes"));
/// let missing: Result<String, String> = Err("Could not find \"x\" in the file.".to_owned());
/// assert_eq!(MutationResult::from(missing), MutationResult::threw("Could not find \"x\" in the file."));
/// ```
impl<T: Into<String>, E: std::fmt::Display> From<Result<T, E>> for MutationResult {
    fn from(result: Result<T, E>) -> Self {
        match result {
            Ok(text) => MutationResult::ok(text),
            Err(error) => MutationResult::threw(error.to_string()),
        }
    }
}

/// What the host reports after running the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandResult {
    /// The command ran and the host has its result.
    Returned {
        /// The output texts, in order (Pi: the `text` of each text block).
        texts: Vec<String>,
        /// Whether the host flags the result as an error (Pi: `isError`).
        is_error: bool,
        /// The command's exit code, when the host knows it (Pi 1.x:
        /// `structuredContent.exit_code`). A non-zero code is a failure.
        exit_code: Option<i32>,
    },
    /// The command did not give a result: it was stopped (a timeout, an abort) or could not
    /// run (Pi's bash throws for these, and for a non-zero exit on Pi 0.84.2).
    Threw {
        /// What happened.
        message: String,
    },
}

impl CommandResult {
    /// A result Pi's bash tool returned, whose `structuredContent.exit_code` is a JavaScript
    /// number. A whole number in `i32` range is the exit code; any other number (a
    /// fraction, beyond `i32`, not finite) is not zero, so it counts as a failure: the
    /// result keeps no code and is flagged as an error. The classification is the one of a
    /// number compared with 0.
    ///
    /// ```
    /// use sol_fusion::fused::CommandResult;
    ///
    /// let texts = vec!["ok".to_owned()];
    /// assert_eq!(
    ///     CommandResult::from_pi_bash(texts.clone(), false, Some(2.0)),
    ///     CommandResult::Returned { texts: texts.clone(), is_error: false, exit_code: Some(2) }
    /// );
    /// assert_eq!(
    ///     CommandResult::from_pi_bash(texts.clone(), false, Some(0.5)),
    ///     CommandResult::Returned { texts, is_error: true, exit_code: None }
    /// );
    /// ```
    pub fn from_pi_bash(texts: Vec<String>, is_error: bool, exit_code: Option<f64>) -> Self {
        let (exit_code, is_error) = match exit_code {
            None => (None, is_error),
            Some(number) => match whole_i32(number) {
                Some(code) => (Some(code), is_error),
                None => (None, true),
            },
        };
        CommandResult::Returned {
            texts,
            is_error,
            exit_code,
        }
    }
}

/// `number` as an `i32` when it is a whole number in range (`-0.0` is 0).
fn whole_i32(number: f64) -> Option<i32> {
    let in_range = number >= f64::from(i32::MIN) && number <= f64::from(i32::MAX);
    // The cast is exact: the number is whole and in range.
    #[allow(clippy::cast_possible_truncation)]
    (in_range && number.fract() == 0.0).then_some(number as i32)
}

/// One I/O result the host feeds in.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// After [`Effect::RunMutation`].
    Mutation(MutationResult),
    /// After [`Effect::Digest`].
    Digest(TargetLook),
    /// After [`Effect::YieldTurn`].
    TurnYielded,
    /// After [`Effect::RunCommand`].
    Command(CommandResult),
}

/// What the host does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Run the built-in mutation with the call's arguments minus `then_run`. With a
    /// `target`, first wait for the call's place in that file's queue (the host computes the
    /// queue key from it synchronously); without one, run at once.
    RunMutation {
        /// The absolute target, or `None` for a plain call whose path could not be resolved
        /// (the built-in tool then reports its own error).
        target: Option<String>,
    },
    /// Look at the target (a bounded digest of a regular file).
    Digest {
        /// The absolute target.
        path: String,
    },
    /// Let the event loop turn once before the next look.
    YieldTurn,
    /// Run the command through the host's shell (Pi: its bash tool).
    RunCommand {
        /// The command, unchanged.
        command: String,
        /// The timeout, when given ([`ThenRun::timeout`]).
        timeout: Option<Duration>,
        /// The same timeout as the number of seconds the model wrote
        /// ([`ThenRun::timeout_seconds`]), for a shell that takes that number.
        timeout_seconds: Option<f64>,
    },
    /// The call is over.
    Finish(Finish),
}

/// How a call ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// Refuse the call before anything ran: throw `message`.
    Reject {
        /// The tool error for the model.
        message: String,
        /// Its stable code.
        code: &'static str,
    },
    /// Return the mutation's result as it is.
    ReturnMutation,
    /// Throw the mutation's own error again, unchanged.
    RethrowMutationError,
    /// Return the mutation's result with `append` as text blocks after its own blocks.
    Return {
        /// The text blocks to append.
        append: Vec<String>,
        /// Show the savings notice (a call the model issued itself).
        notice: bool,
        /// What the call saved.
        account: StepAccount,
    },
    /// Return the mutation's result with `append` after its blocks, flagged as an error.
    ReturnError {
        /// The text blocks to append.
        append: Vec<String>,
        /// What the call saved.
        account: StepAccount,
    },
    /// Throw an error with `message`.
    Throw {
        /// The whole error text.
        message: String,
        /// What the call saved.
        account: StepAccount,
    },
}

impl Finish {
    /// What the call saved ([`StepAccount::default`] for an end before the command ran).
    pub fn account(&self) -> StepAccount {
        match self {
            Finish::Return { account, .. }
            | Finish::ReturnError { account, .. }
            | Finish::Throw { account, .. } => *account,
            Finish::Reject { .. } | Finish::ReturnMutation | Finish::RethrowMutationError => {
                StepAccount::default()
            }
        }
    }

    /// What the model receives, for a host that builds its own observations: the
    /// mutation's result (`None` when it did not run) with this end applied. See
    /// [`Observation`].
    ///
    /// ```
    /// use sol_fusion::fused::{Finish, MutationResult};
    /// use sol_fusion::sol_core::StepAccount;
    ///
    /// let mutation = MutationResult::ok("Successfully replaced 1 block.");
    /// let finish = Finish::ReturnError {
    ///     append: vec!["[then_run:failed]\nboom".to_owned()],
    ///     account: StepAccount { requests_avoided: 1, ..StepAccount::default() },
    /// };
    /// let seen = finish.observation(Some(&mutation));
    /// assert_eq!(seen.to_string(), "Successfully replaced 1 block.\n[then_run:failed]\nboom");
    /// assert!(seen.is_error);
    /// assert_eq!(seen.account.requests_avoided, 1);
    /// ```
    pub fn observation(self, mutation: Option<&MutationResult>) -> Observation {
        let account = self.account();
        let mutation_texts = || match mutation {
            Some(MutationResult::Returned { texts, .. }) => texts.clone(),
            Some(MutationResult::Threw { message }) => vec![message.clone()],
            None => Vec::new(),
        };
        let (texts, is_error) = match self {
            Finish::Reject { message, .. } | Finish::Throw { message, .. } => (vec![message], true),
            Finish::ReturnMutation | Finish::RethrowMutationError => {
                let is_error = !matches!(
                    mutation,
                    Some(MutationResult::Returned {
                        is_error: false,
                        ..
                    })
                );
                (mutation_texts(), is_error)
            }
            Finish::Return { append, .. } => ([mutation_texts(), append].concat(), false),
            Finish::ReturnError { append, .. } => ([mutation_texts(), append].concat(), true),
        };
        Observation {
            texts,
            is_error,
            account,
        }
    }
}

/// What the model receives from one call, for a host that builds its own observations
/// (built by [`Finish::observation`]). Its [`Display`](std::fmt::Display) is the text the
/// model reads: the text blocks joined with line breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The text blocks, in order: the mutation's, then the call's own (a thrown error is one
    /// block).
    pub texts: Vec<String>,
    /// Whether the model sees a failure (an error result, or an error the tool threw).
    pub is_error: bool,
    /// What the call saved.
    pub account: StepAccount,
}

impl std::fmt::Display for Observation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.texts.join("\n"))
    }
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    Mutating,
    FirstLook,
    Yielding(TargetLook),
    SecondLook(TargetLook),
    Commanding,
    Done,
}

/// One fused call in progress. See the [module docs](self).
#[derive(Debug, Clone, PartialEq)]
pub struct FusedCall {
    target: String,
    then_run: Option<ThenRun>,
    capabilities: Capabilities,
    nested: bool,
    /// The mutation's text blocks, then the lines this call appended (the guard's note).
    texts: Vec<String>,
    appended: Vec<String>,
    state: State,
}

impl FusedCall {
    /// Checks the call and returns the machine with its first effect: a
    /// [`Finish::Reject`] (nothing ran) or [`Effect::RunMutation`].
    pub fn start(request: &FusedCallRequest<'_>) -> (FusedCall, Effect) {
        let mut call = FusedCall {
            target: String::new(),
            then_run: None,
            capabilities: request.capabilities,
            nested: request.parent_tool_call_id.is_some(),
            texts: Vec::new(),
            appended: Vec::new(),
            state: State::Done,
        };
        let plan = match plan(request.path, request.then_run_json, &request.ctx) {
            Ok(plan) => plan,
            Err((code, message)) => {
                return (call, Effect::Finish(Finish::Reject { message, code }));
            }
        };
        call.then_run = plan.then_run;
        call.target = plan.target.clone().unwrap_or_default();
        call.state = State::Mutating;
        (
            call,
            Effect::RunMutation {
                target: plan.target,
            },
        )
    }

    /// Whether the call is over.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Takes the result of the last effect and returns the next one. An input that does
    /// not answer the last effect (a host bug) ends the call with an error to throw.
    pub fn step(&mut self, input: Input) -> Effect {
        let state = std::mem::replace(&mut self.state, State::Done);
        match (state, input) {
            (State::Mutating, Input::Mutation(result)) => self.mutated(result),
            (State::FirstLook, Input::Digest(look)) => {
                self.state = State::Yielding(look);
                Effect::YieldTurn
            }
            (State::Yielding(before), Input::TurnYielded) => {
                self.state = State::SecondLook(before);
                self.digest()
            }
            (State::SecondLook(before), Input::Digest(after)) => self.guarded(&before, &after),
            (State::Commanding, Input::Command(result)) => self.commanded(result),
            (state, input) => Effect::Finish(Finish::Throw {
                message: format!(
                    "Action Fusion: internal error: {} arrived while {}",
                    input_name(&input),
                    state_name(&state)
                ),
                account: StepAccount::default(),
            }),
        }
    }

    fn digest(&self) -> Effect {
        Effect::Digest {
            path: self.target.clone(),
        }
    }

    fn mutated(&mut self, result: MutationResult) -> Effect {
        let fused = self.then_run.is_some();
        match result {
            MutationResult::Threw { .. } if !fused => Effect::Finish(Finish::RethrowMutationError),
            MutationResult::Returned { .. } if !fused => Effect::Finish(Finish::ReturnMutation),
            MutationResult::Threw { message } => self.throw(
                text::skipped_after_mutation_failure(&message),
                StepAccount::default(),
            ),
            MutationResult::Returned {
                texts,
                is_error: true,
            } => self.throw(
                text::skipped_after_mutation_failure(&texts.join("\n")),
                StepAccount::default(),
            ),
            MutationResult::Returned {
                texts,
                is_error: false,
            } => {
                self.texts = texts;
                self.state = State::FirstLook;
                self.digest()
            }
        }
    }

    fn guarded(&mut self, before: &TargetLook, after: &TargetLook) -> Effect {
        match guard::decide(before, after) {
            GuardDecision::Skip { text } => {
                let thrown = text::after_mutation(&self.texts.join("\n"), &text);
                self.fail(text, thrown, StepAccount::default())
            }
            GuardDecision::Run { note } => {
                if let Some(note) = note {
                    self.texts.push(note.clone());
                    self.appended.push(note);
                }
                self.state = State::Commanding;
                let then_run = self.then_run.clone().unwrap_or_else(|| ThenRun {
                    command: String::new(),
                    timeout: None,
                    timeout_seconds: None,
                });
                Effect::RunCommand {
                    command: then_run.command,
                    timeout: then_run.timeout,
                    timeout_seconds: then_run.timeout_seconds,
                }
            }
        }
    }

    fn commanded(&mut self, result: CommandResult) -> Effect {
        // The command ran in the same call as the mutation: the model needs no request for it.
        // A call a script made (codemode) avoids none: the script could have run the command
        // itself right after the mutation, in the same model turn.
        let account = StepAccount {
            requests_avoided: u64::from(!self.nested),
            ..StepAccount::default()
        };
        let mutation_text = self.texts.join("\n");
        match result {
            CommandResult::Threw { message } => {
                self.throw(text::failed_text(&mutation_text, &message), account)
            }
            CommandResult::Returned {
                texts,
                is_error,
                exit_code,
            } => {
                let output = texts.join("\n");
                match text::classify_command(is_error, exit_code) {
                    CommandOutcome::Failed => self.fail(
                        text::failed_block(&output),
                        text::failed_text(&mutation_text, &output),
                        account,
                    ),
                    CommandOutcome::Succeeded => {
                        let mut append = std::mem::take(&mut self.appended);
                        append.push(text::succeeded_block(&output));
                        Effect::Finish(Finish::Return {
                            append,
                            notice: !self.nested,
                            account,
                        })
                    }
                }
            }
        }
    }

    /// A failure after the mutation was applied: returned with the block where the host
    /// keeps error results, thrown with the whole text where it does not.
    fn fail(&mut self, block: String, thrown: String, account: StepAccount) -> Effect {
        if self.capabilities.error_results_kept {
            let mut append = std::mem::take(&mut self.appended);
            append.push(block);
            Effect::Finish(Finish::ReturnError { append, account })
        } else {
            self.throw(thrown, account)
        }
    }

    fn throw(&mut self, message: String, account: StepAccount) -> Effect {
        Effect::Finish(Finish::Throw { message, account })
    }
}

fn input_name(input: &Input) -> &'static str {
    match input {
        Input::Mutation(_) => "a mutation result",
        Input::Digest(_) => "a digest",
        Input::TurnYielded => "a yielded turn",
        Input::Command(_) => "a command result",
    }
}

fn state_name(state: &State) -> &'static str {
    match state {
        State::Mutating => "the mutation was running",
        State::FirstLook | State::SecondLook(_) => "a digest was running",
        State::Yielding(_) => "a turn was yielded",
        State::Commanding => "the command was running",
        State::Done => "the call was over",
    }
}

/// A checked call: its target (absent for a plain call whose path does not resolve) and
/// its follow-up command.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The absolute target path.
    pub target: Option<String>,
    /// The follow-up command.
    pub then_run: Option<ThenRun>,
}

/// Checks `then_run` (JSON text) and resolves the target of an `edit`/`write` call. A bad
/// `then_run`, or an unresolvable path of a fused call, is an error `(code, message)`: the
/// call is refused before anything changes. A plain call with an unresolvable path keeps
/// no target and behaves exactly like the built-in tool.
pub fn plan(
    path: &str,
    then_run_json: Option<&str>,
    ctx: &PathContext<'_>,
) -> Result<Plan, (&'static str, String)> {
    let value = match then_run_json.map(serde_json::from_str::<serde_json::Value>) {
        None => None,
        Some(Ok(value)) => Some(value),
        Some(Err(error)) => {
            return Err((
                "then_run_not_json",
                format!("then_run is not valid JSON ({error}); the file was not modified"),
            ));
        }
    };
    let then_run =
        parse_then_run(value.as_ref()).map_err(|error| (error.code(), error.to_string()))?;
    let target = match resolve_tool_path(path, ctx) {
        Ok(target) => Some(target),
        // A fused call must know its target before anything runs.
        Err(error) if then_run.is_some() => return Err((error.code(), error.to_string())),
        // A plain call behaves exactly like the built-in tool, which reports its own error.
        Err(_) => None,
    };
    Ok(Plan { target, then_run })
}

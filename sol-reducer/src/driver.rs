//! The whole reducer for a Rust host, over synchronous ports: one call per tool result.
//!
//! It drives the step API ([`crate::step`]) with the ports: [`Reduction::start`], the
//! records it returns appended to the session, the model called through the
//! [`ModelClient`] when asked, [`Reduction::finish`], and its records appended. An
//! asynchronous host (the Pi extension) drives the same two steps around its own model call,
//! so both hosts make the same decisions and write the same journal:
//!
//! 1. [`select_candidate`](crate::select_candidate) (no I/O, nothing journaled when the
//!    result is not a candidate);
//! 2. read the full-output file the host trusts, if any ([`read_full_output`]);
//! 3. [`prepare_source`](crate::prepare_source): size bounds, exit signal, secret gate;
//! 4. archive the log and journal `candidate`, before any model call;
//! 5. reuse a cached receipt after verifying it against the archive, or call the model and
//!    check its reply;
//! 6. journal `applied` and return the replacement, or journal `fallback` and leave the
//!    result unchanged.
//!
//! [`reduce_with`] is the same drive for a host whose model call is a closure and that
//! stores the returned records itself.
//!
//! Journal writes are best effort: a session store that fails does not change the
//! decision, since the archive already holds the evidence.

use serde_json::Value;
use sol_core::{FileSystem, ModelClient, ModelError, ModelReply, ModelRequest, SessionStore};

use crate::ENTRY_TYPE;
use crate::cache::ReceiptCache;
use crate::candidate::CandidateInput;
use crate::model::ReducerReply;
pub use crate::step::{Decision, Done, ReduceContext, read_full_output};
use crate::step::{Reduction, Start};

/// The ports the driver performs its I/O through.
#[derive(Clone, Copy)]
pub struct Ports<'a> {
    /// Archive writes and the full-output read.
    pub fs: &'a dyn FileSystem,
    /// The reducer model.
    pub model: &'a dyn ModelClient,
    /// The journal.
    pub session: &'a dyn SessionStore,
}

/// Runs the reducer on one tool result; see the module documentation. `cache`, when given,
/// is consulted before the model call and filled after a fresh receipt is applied.
///
/// `result` is a harness-neutral [`crate::ShellResult`], or Pi's tool result
/// ([`crate::pi::ToolResultView`]).
pub fn reduce<R: CandidateInput + ?Sized>(
    result: &R,
    ports: &Ports<'_>,
    context: &ReduceContext<'_>,
    cache: Option<&mut ReceiptCache>,
) -> Decision {
    reduce_step(result, ports, context, cache).decision
}

/// [`reduce`], returning the whole [`Done`]: the decision, every record appended (those of
/// both steps, in order) and the step's account.
pub fn reduce_step<R: CandidateInput + ?Sized>(
    result: &R,
    ports: &Ports<'_>,
    context: &ReduceContext<'_>,
    cache: Option<&mut ReceiptCache>,
) -> Done {
    let journal = |records: &[Value]| {
        for record in records {
            // Best effort: the decision stands whatever the session store does.
            let _ = ports.session.append_custom(ENTRY_TYPE, record);
        }
    };
    drive(
        result,
        context,
        ports.fs,
        cache,
        |request| ports.model.complete(request),
        journal,
    )
}

/// The whole reducer for a host whose model call is a blocking function or closure and
/// that journals the records itself: [`Reduction::start`], `model` called with the request
/// when one is needed, [`Reduction::finish`] at `context.timestamp`. The [`Done`] holds the
/// records of both steps in order; a host that must have the `candidate` record stored
/// before the call drives the two steps itself, or uses [`reduce_step`] with its
/// [`SessionStore`].
///
/// ```
/// use sol_reducer::camino::Utf8Path;
/// use sol_reducer::sol_core::testing::MemoryFileSystem;
/// use sol_reducer::sol_core::ModelError;
/// use sol_reducer::{driver, ExitStatus, ReasonCode, ReduceContext, Route, ShellResult};
///
/// let output = "a.c:3:1: error: expected ';' before '}' token\n".repeat(100);
/// let run = ShellResult {
///     call_id: "7", command: "make", exit: ExitStatus::Code(2), output: &output,
///     full_output_log: None,
/// };
/// let route = Route::new("my-provider", "my-small-model");
/// let context = ReduceContext::new(&route, Utf8Path::new("/var/lib/agent/s1"), "2025-06-01T12:00:00Z");
/// let fs = MemoryFileSystem::new();
/// let done = driver::reduce_with(&run, &context, &fs, None, |request| {
///     assert_eq!(request.model, "my-small-model");
///     Err(ModelError::Failed { message: "no network".into() })
/// });
/// assert_eq!(done.reason(), Some(ReasonCode::ModelCallException));
/// assert_eq!(done.journal_kinds(), ["candidate", "fallback"]);
/// ```
pub fn reduce_with<R, M>(
    result: &R,
    context: &ReduceContext<'_>,
    fs: &dyn FileSystem,
    cache: Option<&mut ReceiptCache>,
    model: M,
) -> Done
where
    R: CandidateInput + ?Sized,
    M: FnOnce(&ModelRequest) -> Result<ModelReply, ModelError>,
{
    drive(result, context, fs, cache, model, |_: &[Value]| {})
}

/// Both steps, `journal` called with each step's records as they are made.
fn drive<R, M, J>(
    result: &R,
    context: &ReduceContext<'_>,
    fs: &dyn FileSystem,
    mut cache: Option<&mut ReceiptCache>,
    model: M,
    journal: J,
) -> Done
where
    R: CandidateInput + ?Sized,
    M: FnOnce(&ModelRequest) -> Result<ModelReply, ModelError>,
    J: Fn(&[Value]),
{
    match Reduction::start(result, context, fs, cache.as_deref_mut()) {
        Start::Done(done) => {
            journal(&done.journal);
            done
        }
        Start::AskModel(ask) => {
            let ask = *ask;
            journal(&ask.journal);
            let answer = model(&ask.request)
                .map(|reply| ReducerReply::from_model_reply(reply, context.route));
            let mut done = ask.reduction.finish(answer, context.timestamp, cache);
            journal(&done.journal);
            let mut records = ask.journal;
            records.append(&mut done.journal);
            done.journal = records;
            done
        }
    }
}

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
//! Journal writes are best effort: a session store that fails does not change the
//! decision, since the archive already holds the evidence.

use serde_json::Value;
use sol_core::{FileSystem, ModelClient, SessionStore};

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
    mut cache: Option<&mut ReceiptCache>,
) -> Done {
    let journal = |records: &[Value]| {
        for record in records {
            // Best effort: the decision stands whatever the session store does.
            let _ = ports.session.append_custom(ENTRY_TYPE, record);
        }
    };
    match Reduction::start(result, context, ports.fs, cache.as_deref_mut()) {
        Start::Done(done) => {
            journal(&done.journal);
            done
        }
        Start::AskModel(ask) => {
            let ask = *ask;
            journal(&ask.journal);
            let answer = ports
                .model
                .complete(&ask.request)
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

//! The `context` step: what each provider request sends of every packed result.
//!
//! A host walks the messages of a request and finds the large text results. Each distinct
//! content is admitted once ([`Pack::admit`], after the host archived it), which returns a
//! [`Handle`]; on every request the host then hands [`Pack::on_context`] the handles it saw,
//! each with the number of requests that already carried it, and carries out the step it
//! gets back: replace the marked results by their placeholders, append the ledger records,
//! show the saving. Everything that is policy (full sends, the first replacement, which
//! sends are recorded, what was saved) is decided here, so a Rust harness and the Pi shell
//! run the same rules.
//!
//! ```
//! use sol_obspack::pack::{Pack, Seen};
//! use sol_obspack::{LedgerRecord, observe};
//!
//! let log: String = (1..=600).map(|n| format!("test case_{n} ... ok\n")).collect();
//! let mut pack = Pack::new();
//! let handle = pack.admit(observe("bash", "call_1", &log), &log);
//!
//! // Requests 1 and 2 carry it in full, request 3 replaces it, request 4 too.
//! let step = pack.on_context(1, &[Seen { handle, prior_requests: 0 }]);
//! assert_eq!(step.replace, [false]);
//! assert!(matches!(step.ledger[..], [LedgerRecord::Full { send_number: 1, .. }]));
//! let step = pack.on_context(3, &[Seen { handle, prior_requests: 2 }]);
//! assert_eq!(step.replace, [true]);
//! assert!(step.first_replacement_tokens > 0);
//! assert_eq!(step.account.tokens_removed, step.first_replacement_tokens);
//! let step = pack.on_context(4, &[Seen { handle, prior_requests: 3 }]);
//! assert_eq!(step.replace, [true]);
//! assert!(step.ledger.is_empty());
//! assert_eq!(step.first_replacement_tokens, 0);
//! // Every request that sends the placeholder saves its tokens again.
//! assert!(step.account.tokens_removed > 0);
//! ```

use sol_core::StepAccount;

use crate::ledger::LedgerRecord;
use crate::observation::Observation;
use crate::placeholder::{placeholder_tokens, placeholder_with, removed_tokens};
use crate::policy::{SendDecision, decide};
use crate::text::Names;

/// A packed result, as the step knows it: its observation and its placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    /// Identity and sizes of the original.
    pub observation: Observation,
    /// The text that replaces it after the full sends.
    pub placeholder: String,
    /// Tokens the placeholder saves on each request that carries it.
    pub removed_tokens: u64,
}

/// A packed result admitted to a [`Pack`]; valid for that pack only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Handle(u32);

impl Handle {
    /// The number a host stores for it (an index).
    pub fn get(self) -> u32 {
        self.0
    }

    /// The handle a host stored as `number`; [`Pack::on_context`] ignores a number it never
    /// gave out.
    pub fn from_number(number: u32) -> Handle {
        Handle(number)
    }
}

/// One packed result as a request carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// Which result.
    pub handle: Handle,
    /// How many earlier provider requests on this branch already carried it (the number of
    /// assistant messages after it).
    pub prior_requests: u32,
}

/// What the host does for one request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContextStep {
    /// Parallel to the `seen` slice: true where the result is sent as its placeholder.
    pub replace: Vec<bool>,
    /// The sends to record, in the order seen: each full send, and the first replacement.
    pub ledger: Vec<LedgerRecord>,
    /// Tokens saved by results replaced for the first time: what the host announces.
    pub first_replacement_tokens: u64,
    /// What this request saved: every placeholder sent, against its original.
    pub account: StepAccount,
}

/// The packed results of one storage directory and the send decision over them.
#[derive(Debug, Clone, Default)]
pub struct Pack {
    packed: Vec<Packed>,
    names: Names,
}

impl Pack {
    /// An empty pack whose placeholders name Pi's recall tool.
    pub fn new() -> Pack {
        Pack::default()
    }

    /// An empty pack whose placeholders name the recall tool of `names`.
    pub fn with_names(names: Names) -> Pack {
        Pack {
            packed: Vec::new(),
            names,
        }
    }

    /// The names this pack's placeholders use.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// Admits a result the host archived (`observation` was derived from `text`) and builds
    /// its placeholder; the handle names it from now on.
    pub fn admit(&mut self, observation: Observation, text: &str) -> Handle {
        let replacement = placeholder_with(&observation, text, &self.names);
        let removed = removed_tokens(observation.tokens, placeholder_tokens(&replacement));
        let handle = Handle(u32::try_from(self.packed.len()).unwrap_or(u32::MAX));
        self.packed.push(Packed {
            observation,
            placeholder: replacement,
            removed_tokens: removed,
        });
        handle
    }

    /// The packed result behind `handle`, if this pack gave it out.
    pub fn get(&self, handle: Handle) -> Option<&Packed> {
        self.packed.get(handle.0 as usize)
    }

    /// How many results were admitted.
    pub fn len(&self) -> usize {
        self.packed.len()
    }

    /// Whether none was admitted.
    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// The step for provider request number `request` (1-based on this branch), which
    /// carries the packed results `seen`. A handle this pack never gave out is sent in full
    /// and recorded nowhere.
    pub fn on_context(&self, request: u32, seen: &[Seen]) -> ContextStep {
        let mut step = ContextStep {
            replace: Vec::with_capacity(seen.len()),
            ..ContextStep::default()
        };
        for item in seen {
            let Some(packed) = self.get(item.handle) else {
                step.replace.push(false);
                continue;
            };
            match decide(item.prior_requests) {
                SendDecision::Full { send_number } => {
                    step.replace.push(false);
                    step.ledger.push(LedgerRecord::full(
                        &packed.observation,
                        request,
                        send_number,
                    ));
                }
                SendDecision::Replace { first_replacement } => {
                    step.replace.push(true);
                    let placeholder_bytes = packed.placeholder.len() as u64;
                    step.account += StepAccount {
                        bytes_removed: packed.observation.bytes.saturating_sub(placeholder_bytes),
                        tokens_removed: packed.removed_tokens,
                        ..StepAccount::default()
                    };
                    if first_replacement {
                        step.first_replacement_tokens += packed.removed_tokens;
                        step.ledger.push(LedgerRecord::placeholder(
                            &packed.observation,
                            request,
                            item.prior_requests.saturating_add(1),
                            &packed.placeholder,
                        ));
                    }
                }
            }
        }
        step
    }
}

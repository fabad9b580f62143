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
//! let step = pack.on_context(1, &[Seen::new(handle, 0)]);
//! assert_eq!(step.replace, [false]);
//! assert!(matches!(step.ledger[..], [LedgerRecord::Full { send_number: 1, .. }]));
//! let step = pack.on_context(3, &[Seen::new(handle, 2)]);
//! assert_eq!(step.replace, [true]);
//! assert!(step.first_replacement_tokens > 0);
//! assert_eq!(step.account.tokens_removed, step.first_replacement_tokens);
//! let step = pack.on_context(4, &[Seen::new(handle, 3)]);
//! assert_eq!(step.replace, [true]);
//! assert!(step.ledger.is_empty());
//! assert_eq!(step.first_replacement_tokens, 0);
//! // Every request that sends the placeholder saves its tokens again.
//! assert!(step.account.tokens_removed > 0);
//! ```
//!
//! A host that archives through an [`ObservationStore`] does the archive and the admission
//! in one call ([`Pack::store_and_admit`]), takes the text each result is sent as from
//! [`Pack::text_to_send`], and serves the recall tool with [`Pack::recall`] and
//! [`Pack::search`], whose pages name the pack's recall tool:
//!
//! ```
//! use sol_core::testing::MemoryFileSystem;
//! use sol_obspack::{ObservationStore, Pack, Seen};
//!
//! let fs = MemoryFileSystem::new();
//! let store = ObservationStore::new(&fs, "/session/sol-pi/s1/observation-pack");
//! let log: String = (1..=600).map(|n| format!("test case_{n} ... ok\n")).collect();
//! let mut pack = Pack::new();
//! let admitted = pack.store_and_admit(&store, "bash", "call_1", &log)?;
//!
//! let seen = Seen::new(admitted.handle, 2);
//! let step = pack.on_context(3, &[seen]);
//! assert_eq!(step.replace, [true]);
//! let sent = pack.text_to_send(seen, &log);
//! assert!(sent.starts_with("[large tool result replaced"));
//! // Before its third request the result still goes in full.
//! assert_eq!(pack.text_to_send(Seen::new(admitted.handle, 1), &log), log);
//!
//! let page = pack.recall(&store, &admitted.observation.id, 0)?;
//! assert!(page.chunk().starts_with("test case_1 ... ok\n"));
//! let found = pack.search(&store, &admitted.observation.id, "case_600 ", 0)?;
//! assert_eq!(found.details.matches.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use sol_core::StepAccount;

use crate::ledger::LedgerRecord;
use crate::observation::is_packable_over;
use crate::observation::{Observation, ObservationId};
use crate::placeholder::{
    compact_pays, compact_placeholder_with, placeholder_tokens, placeholder_with, removed_tokens,
};
use crate::placement::{Pending, Placement, PlacementReason, RECENT_CAUTION, Shape, place};
use crate::policy::{MEDIUM_THRESHOLD_BYTES, SendDecision, THRESHOLD_BYTES, decide};
use crate::quote::{ContentDigest, quotable_lines};
use crate::recall::{RecallPage, recall_page_with};
use crate::recent::{PromptFacts, RecentOutputs, ReportedInput, keeps_recent};
use crate::records::{RecallError, StoreError};
use crate::search::{SearchPage, search_page_with};
use crate::store::{ObservationStore, StoreOutcome};
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

impl Seen {
    /// `handle`, carried by `prior_requests` earlier provider requests on this branch.
    pub const fn new(handle: Handle, prior_requests: u32) -> Seen {
        Seen {
            handle,
            prior_requests,
        }
    }
}

/// One packed result as a request carries it, with where it sits: the cache-aware
/// placement's input ([`Pack::on_context_cache_aware`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Carried {
    /// Which result, and how many earlier requests carried it.
    pub seen: Seen,
    /// The estimated tokens of every message after it in the request, in the forms they had
    /// before ObservationPack (a placeholder counted at its original's size).
    pub tokens_after: u64,
    /// The tool outputs after it in the request: the recent-outputs placement keeps the
    /// newest in full ([`keeps_recent`]); the cache-aware placement ignores it.
    pub newer_outputs: u32,
}

/// A result archived and admitted in one call ([`Pack::store_and_admit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// The handle that names it in this pack.
    pub handle: Handle,
    /// Its identity and sizes (the id is what the recall tool is called with).
    pub observation: Observation,
    /// What the archive did: created, reused, or repaired a damaged copy.
    pub outcome: StoreOutcome,
}

/// What the host does for one request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContextStep {
    /// Parallel to the `seen` slice: true where the result is sent as its placeholder.
    pub replace: Vec<bool>,
    /// The sends to record, in the order seen: each full send, and the first replacement.
    pub ledger: Vec<LedgerRecord>,
    /// Tokens saved by results replaced for the first time: what the host announces.
    pub first_replacement_tokens: u64,
    /// What this request saved: every placeholder sent, against its original.
    pub account: StepAccount,
    /// Under the cache-aware placement: why each result went as it did, and the batch
    /// replaced on this request.
    pub placement: Option<Placement>,
}

/// The packed results of one storage directory and the send decision over them.
#[derive(Debug, Clone, Default)]
pub struct Pack {
    packed: Vec<Packed>,
    names: Names,
    /// Results whose placeholder the cache-aware placement has shown: sent as placeholders
    /// from then on.
    shown: Vec<bool>,
    /// The recent-outputs placement's state, for a pack made with
    /// [`Pack::with_recent_outputs`].
    recent: Option<RecentOutputs>,
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
            shown: Vec::new(),
            recent: None,
        }
    }

    /// An empty pack for the recent-outputs placement (`keepRecentOutputs`, `keep` the
    /// number of newest tool outputs kept in full; see [`crate::recent`]): it packs the
    /// results over [`MEDIUM_THRESHOLD_BYTES`] that its compact placeholder
    /// ([`compact_placeholder_with`]) halves ([`packs`](Self::packs)), replaces them by that
    /// placeholder and places them with [`on_context_recent`](Self::on_context_recent).
    ///
    /// ```
    /// use sol_obspack::{Names, Pack, observe};
    ///
    /// let pack = Pack::with_recent_outputs(Names::default(), 10);
    /// assert_eq!(pack.recent_outputs(), Some(10));
    /// assert_eq!(pack.threshold_bytes(), 256);
    /// assert_eq!(Pack::new().threshold_bytes(), 10 * 1024);
    /// // A 2 KB output is packed under the recent-outputs placement only; a short one never.
    /// let log: String = (1..=100).map(|n| format!("case_{n} ok\n")).collect();
    /// assert!(pack.packs(&log) && !Pack::new().packs(&log));
    /// assert!(!pack.packs("a short output of a few hundred bytes ... ok\n"));
    /// ```
    pub fn with_recent_outputs(names: Names, keep: u32) -> Pack {
        Pack {
            recent: Some(RecentOutputs::new(keep)),
            ..Pack::with_names(names)
        }
    }

    /// `keepRecentOutputs` of a pack made with [`with_recent_outputs`](Self::with_recent_outputs).
    pub fn recent_outputs(&self) -> Option<u32> {
        self.recent.as_ref().map(|recent| recent.keep)
    }

    /// Whether this pack packs `text` (a text-only result that is no error): over
    /// [`threshold_bytes`](Self::threshold_bytes), not a reducer receipt, and under the
    /// recent-outputs placement halved by its compact placeholder ([`compact_pays`]).
    pub fn packs(&self, text: &str) -> bool {
        is_packable_over(text, self.threshold_bytes())
            && (self.recent.is_none() || compact_pays(text, &self.names))
    }

    /// Results over this many UTF-8 bytes can be packed: [`MEDIUM_THRESHOLD_BYTES`] under the
    /// recent-outputs placement, [`THRESHOLD_BYTES`] otherwise.
    pub fn threshold_bytes(&self) -> u64 {
        match self.recent {
            Some(_) => MEDIUM_THRESHOLD_BYTES,
            None => THRESHOLD_BYTES,
        }
    }

    /// The names this pack's placeholders use.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// Admits a result the host archived (`observation` was derived from `text`) and builds
    /// its placeholder; the handle names it from now on.
    pub fn admit(&mut self, observation: Observation, text: &str) -> Handle {
        let replacement = match &mut self.recent {
            Some(recent) => {
                recent.admitted(self.packed.len(), &quotable_lines([text]));
                compact_placeholder_with(&observation, text, &self.names)
            }
            None => placeholder_with(&observation, text, &self.names),
        };
        let removed = removed_tokens(observation.tokens, placeholder_tokens(&replacement));
        let handle = Handle(u32::try_from(self.packed.len()).unwrap_or(u32::MAX));
        self.packed.push(Packed {
            observation,
            placeholder: replacement,
            removed_tokens: removed,
        });
        self.shown.push(false);
        handle
    }

    /// Observes `text`, the result `tool_name` returned for `tool_call_id`, archives it in
    /// `store` ([`ObservationStore::observe_and_store`]) and admits it: the host's steps for
    /// a new large result in one call. Call it once per distinct content, for a result
    /// [`is_packable`](crate::is_packable) accepted; another call admits it again under a
    /// new handle. Nothing is admitted when the archive fails (the host then sends the
    /// result in full, as it does for any result it did not admit).
    pub fn store_and_admit(
        &mut self,
        store: &ObservationStore<'_>,
        tool_name: &str,
        tool_call_id: &str,
        text: &str,
    ) -> Result<Admitted, StoreError> {
        let (observation, outcome) = store.observe_and_store(tool_name, tool_call_id, text);
        let outcome = outcome?;
        let handle = self.admit(observation.clone(), text);
        Ok(Admitted {
            handle,
            observation,
            outcome,
        })
    }

    /// The text a request sends for `seen`, whose original is `original`: the placeholder
    /// when [`on_context`](Self::on_context) marks it for replacement, else `original`
    /// itself (a handle this pack never gave out included).
    pub fn text_to_send<'a>(&'a self, seen: Seen, original: &'a str) -> &'a str {
        match (self.get(seen.handle), decide(seen.prior_requests)) {
            (Some(packed), SendDecision::Replace { .. }) => &packed.placeholder,
            _ => original,
        }
    }

    /// The page of observation `id` that starts at `offset`, read from `store` with its
    /// size and hash checked ([`ObservationStore::read_verified`]) and headed with this
    /// pack's recall tool name ([`recall_page_with`]): one `obs_recall` call without a
    /// query. On an error [`RecallError::is_rebuildable`] accepts, a host that has the
    /// branch's history reads with [`ObservationStore::read_or_rebuild`] and pages with
    /// [`recall_page_with`] itself.
    pub fn recall(
        &self,
        store: &ObservationStore<'_>,
        id: &ObservationId,
        offset: u64,
    ) -> Result<RecallPage, RecallError> {
        let original = store.read_verified(id)?;
        recall_page_with(id, &original, offset, &self.names)
    }

    /// The page of literal matches of `query` in observation `id` from `offset` on, read
    /// like [`recall`](Self::recall) ([`search_page_with`]): one `obs_recall` call with a
    /// query.
    pub fn search(
        &self,
        store: &ObservationStore<'_>,
        id: &ObservationId,
        query: &str,
        offset: u64,
    ) -> Result<SearchPage, RecallError> {
        let original = store.read_verified(id)?;
        search_page_with(id, &original, query, offset, &self.names)
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

    /// A reply came: its quotable lines `quotes` ([`crate::quote::reply_quotes`]) and, when
    /// the provider reported it, what its request read. Under the recent-outputs placement
    /// a result a reply quoted stays in full longer, and the reports teach the pack how
    /// often the provider misses its cache at a new prompt; other packs ignore it.
    pub fn on_reply(&mut self, quotes: &[ContentDigest], reported: Option<ReportedInput>) {
        if let Some(recent) = &mut self.recent {
            recent.replied(quotes, reported);
        }
    }

    /// [`on_reply`](Self::on_reply) for a host that hands over the newest reply with every
    /// request (the assistant message a request carries last) rather than each reply once:
    /// a reply whose `identity` (a digest of its content and usage) is the one taken last is
    /// skipped, so a request sent again over the same history counts nothing twice.
    pub fn on_newest_reply(
        &mut self,
        identity: ContentDigest,
        quotes: &[ContentDigest],
        reported: Option<ReportedInput>,
    ) {
        if let Some(recent) = &mut self.recent
            && recent.last_reply != Some(identity)
        {
            recent.last_reply = Some(identity);
            recent.replied(quotes, reported);
        }
    }

    /// The step for provider request `request` under the recent-outputs placement
    /// ([`crate::recent`]): as [`on_context_cache_aware`](Self::on_context_cache_aware),
    /// with each result kept in full while [`keeps_recent`] says so, a rewrite at a new
    /// prompt weighed at the chance the provider keeps its cache, [`RECENT_CAUTION`], and
    /// everything waiting replaced at no rewrite cost when `prompt` came after the cache
    /// lifetime. A pack made otherwise runs the cache-aware placement unchanged.
    pub fn on_context_recent(
        &mut self,
        request: u32,
        carried: &[Carried],
        shape: Shape,
        prompt: PromptFacts,
        write_read_ratio: f64,
    ) -> ContextStep {
        let shape = match &mut self.recent {
            Some(recent) => {
                recent.last_starts_prompt = prompt.starts_prompt;
                Shape {
                    rewritten: shape.rewritten || prompt.expired,
                    miss_chance: recent.miss_chance(prompt),
                    caution: RECENT_CAUTION,
                    ..shape
                }
            }
            None => shape,
        };
        self.on_context_cache_aware(request, carried, shape, write_read_ratio)
    }

    /// The step for provider request `request` under the cache-aware placement
    /// ([`crate::placement`]): `carried` lists the packed results in the request's order,
    /// `shape` what else the placement needs to know of the request, `write_read_ratio` the
    /// configured `cacheWriteReadRatio`. Full sends are recorded as under the fixed rule; a
    /// result kept in full where the fixed rule would have replaced it first is recorded as
    /// `held` once; a first replacement names its reason. A replaced result stays replaced on
    /// every later request that carries it past its full sends. A handle this pack never
    /// gave out is sent in full and recorded nowhere.
    pub fn on_context_cache_aware(
        &mut self,
        request: u32,
        carried: &[Carried],
        shape: Shape,
        write_read_ratio: f64,
    ) -> ContextStep {
        let known: Vec<Option<usize>> = carried
            .iter()
            .map(|item| {
                let index = item.seen.handle.0 as usize;
                (index < self.packed.len()).then_some(index)
            })
            .collect();
        // The placement reads the results in the request's order: the more tokens after a
        // result, the earlier it sits (a stable sort keeps equal positions as given).
        let mut order: Vec<usize> = (0..carried.len()).filter(|&i| known[i].is_some()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(carried[i].tokens_after));
        let pending: Vec<Pending> = order
            .iter()
            .map(|&i| {
                let index = known[i].unwrap_or_default();
                let packed = &self.packed[index];
                Pending {
                    prior_requests: carried[i].seen.prior_requests,
                    shown: self.shown[index],
                    recent: self.recent.as_ref().is_some_and(|recent| {
                        keeps_recent(
                            packed.observation.bytes,
                            carried[i].newer_outputs,
                            recent.quoted.get(index).copied().unwrap_or(false),
                            recent.keep,
                        )
                    }),
                    full_tokens: packed.observation.tokens,
                    removed_tokens: packed.removed_tokens,
                    tokens_after: carried[i].tokens_after,
                }
            })
            .collect();
        let mut placement = place(&pending, shape, write_read_ratio);
        // Back in the order given.
        let mut given: Vec<Option<PlacementReason>> = vec![None; carried.len()];
        for (&i, &reason) in order.iter().zip(&placement.reasons) {
            given[i] = Some(reason);
        }
        if let Some(economics) = &mut placement.economics {
            economics.first = order[economics.first];
        }
        let mut step = ContextStep {
            replace: Vec::with_capacity(carried.len()),
            ..ContextStep::default()
        };
        for ((item, index), reason) in carried.iter().zip(&known).zip(&given) {
            let (Some(index), Some(reason)) = (*index, *reason) else {
                step.replace.push(false);
                continue;
            };
            let packed = &self.packed[index];
            let prior = item.seen.prior_requests;
            let send_number = prior.saturating_add(1);
            step.replace.push(reason.replaces());
            match reason {
                PlacementReason::FullSend => step.ledger.push(LedgerRecord::full(
                    &packed.observation,
                    request,
                    send_number,
                )),
                PlacementReason::Deferred | PlacementReason::Recent => {
                    if prior == crate::policy::FULL_SENDS {
                        step.ledger.push(LedgerRecord::held(
                            &packed.observation,
                            request,
                            send_number,
                            reason,
                        ));
                    }
                }
                PlacementReason::Shown
                | PlacementReason::RidesRewrite
                | PlacementReason::Economic => {
                    let placeholder_bytes = packed.placeholder.len() as u64;
                    step.account += StepAccount {
                        bytes_removed: packed.observation.bytes.saturating_sub(placeholder_bytes),
                        tokens_removed: packed.removed_tokens,
                        ..StepAccount::default()
                    };
                    if !self.shown[index] {
                        self.shown[index] = true;
                        step.first_replacement_tokens += packed.removed_tokens;
                        step.ledger.push(LedgerRecord::placed(
                            &packed.observation,
                            request,
                            send_number,
                            &packed.placeholder,
                            reason,
                        ));
                    }
                }
            }
        }
        placement.reasons = given.into_iter().flatten().collect();
        step.placement = Some(placement);
        step
    }
}

//! The session engine: one [`Engine`] per Pi session, the object the extension hands Pi's
//! events to. It holds the session's savings book, Online Context Compact's state machine
//! and ObservationPack's packs (one per storage directory), each only when its mechanism is
//! on, and answers an event with the effects to carry out, in order ([`EngineStep`]). The
//! Reducer and Action Fusion's calls are made with it and record their accounts in its book.
//!
//! The lifecycle events the mechanisms share are here (`sessionStart`, `sessionTree`,
//! `sessionCompact`, `modelSelect`, `sessionShutdown`, `turnEnd`); Online Context Compact's
//! own steps are in `engine/compact.rs`, ObservationPack's in `engine/pack.rs`, the book's in
//! `engine/book.rs`, each over its mechanism's module (`occ.rs`, `obspack.rs`, `savings.rs`),
//! which never names the engine. Every entry is one crossing; no decision is left to
//! JavaScript.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use napi_derive::napi;
use serde_json::Value;
use sol_core::savings::PriceTable;
use sol_core::session::SessionEntry;
use sol_occ::OccSession;
use sol_occ::session::{Observation, Step};

use crate::account::count;
use crate::boundary::{quiet, whole_numbers};
use crate::obspack::{ObsPack, ObsPlacement};
use crate::occ::{
    Occ, OccContextSeen, OccContinuation, OccCreateOptions, OccEvaluation, OccSavingsNotice,
    OccTurnEndInput,
};
use crate::savings::{SavingsPrices, SharedBook, price_table};
use compact::effects_of;

mod book;
mod compact;
mod pack;

pub use compact::OccPlanResult;

/// What a session runs with, from `sol-pi.json` and Pi's capabilities; a mechanism without
/// its options is off.
#[napi(object)]
#[derive(Default)]
pub struct EngineOptions {
    /// The configured price table (`prices`); the default table without.
    pub prices: Option<SavingsPrices>,
    /// Online Context Compact on, with these options.
    pub occ: Option<OccCreateOptions>,
    /// ObservationPack on, with this placement.
    pub observation_pack: Option<ObsPlacement>,
}

/// One thing the host does, in the order a step lists them.
#[napi(discriminant = "kind", discriminant_case = "camelCase")]
pub enum EngineEffect {
    /// `pi.appendEntry(customType, data)`: a state snapshot, a skip record, the totals.
    AppendEntry {
        /// Entry type.
        custom_type: String,
        /// Entry data (a JSON object).
        #[napi(ts_type = "Record<string, unknown>")]
        data: Value,
    },
    /// Emit the evaluation on `pi.events` (diagnostics).
    Decision {
        /// The boundary evaluation.
        evaluation: OccEvaluation,
    },
    /// `ctx.abort()`.
    Abort,
    /// Measure the context and pass it to `decideBoundary`.
    Measure,
    /// `ctx.compact({customInstructions})`, then report the result to `compactionFinished`.
    Compact {
        /// `customInstructions` for `ctx.compact()`.
        custom_instructions: String,
    },
    /// A warning for the person: in the interactive terminal; `everywhere`, once per text
    /// also in print and JSON runs (on stderr), for what a restore could not read.
    Warn {
        /// The warning.
        text: String,
        /// Shown in every mode, once per text (a restore's warning); else the interactive
        /// terminal only.
        everywhere: bool,
    },
    /// The savings notice and its self-clearing status.
    SavingsNotice {
        /// The notice.
        notice: OccSavingsNotice,
    },
    /// Set the status line `key` to `text` (the running total; interactive terminal only).
    Status {
        /// `ctx.ui.setStatus` key.
        key: String,
        /// `ctx.ui.setStatus` text.
        text: String,
    },
    /// `pi.sendMessage(...)`, then report `continuationSent(ctx.isIdle())`.
    SendMessage {
        /// The message.
        continuation: OccContinuation,
        /// The id the book registered it under: a request that carries a custom message of
        /// its `customType` is reported with it.
        watch: u32,
    },
    /// Online Context Compact's compaction wrote `summary`: a request that carries a
    /// compaction summary of exactly this text is reported with `id`.
    WatchSummary {
        /// The id the book registered the summary under.
        id: u32,
        /// The summary's text.
        summary: String,
    },
    /// Keep this `agent_settled` dispatch open until the continuation's own settlement.
    WaitForContinuation,
    /// A nested settlement: the continuation this dispatch found waiting keeps waiting.
    KeepWaiting,
    /// Throw `error` from `agent_settled`.
    Fail {
        /// The error text.
        error: String,
    },
}

/// What an event left for the host (what it saved and cost went to the book).
#[napi(object)]
pub struct EngineStep {
    /// The effects, in order.
    pub effects: Vec<EngineEffect>,
}

impl EngineStep {
    /// The step of these effects, or of none.
    pub(crate) fn of(effects: Option<Vec<EngineEffect>>) -> EngineStep {
        EngineStep {
            effects: effects.unwrap_or_default(),
        }
    }
}

/// One Pi session: its book, and the mechanisms' state. See the [module docs](self).
#[napi]
pub struct Engine {
    /// The savings book, shared with the Reducer's and Action Fusion's call objects.
    pub(crate) book: SharedBook,
    /// The configured price table (`/sol-pi` prices every model at it unless it is the
    /// default).
    pub(crate) prices: PriceTable,
    /// Online Context Compact, when on.
    pub(crate) occ: Option<Occ>,
    /// ObservationPack's placement, when it is on.
    pub(crate) observation_pack: Option<ObsPlacement>,
    /// ObservationPack's packs by runtime root (a session's root can change: a fork, a resume).
    pub(crate) packs: Mutex<BTreeMap<String, Arc<ObsPack>>>,
    /// The next request shares no prefix with the previous one: a session start, a branch
    /// switch, a compaction or a model switch came since the last request.
    pub(crate) rewritten: AtomicBool,
}

#[napi]
impl Engine {
    /// The engine of a session with `options` (none: only the book, at the default prices);
    /// throws when the prices or Online Context Compact's options are invalid.
    #[napi(constructor, catch_unwind)]
    pub fn new(options: Option<EngineOptions>) -> napi::Result<Engine> {
        quiet(|| {
            let EngineOptions {
                prices,
                occ,
                observation_pack,
            } = options.unwrap_or_default();
            let book = SharedBook::default();
            Ok(Engine {
                prices: price_table(prices)?,
                occ: occ.map(|occ| Occ::new(occ, book.clone())).transpose()?,
                observation_pack,
                packs: Mutex::new(BTreeMap::new()),
                rewritten: AtomicBool::new(true),
                book,
            })
        })
    }

    /// `session_start`: the book goes on from the branch's newest readable totals entry and
    /// Online Context Compact restores its state (a `warn` per saved entry that could not be
    /// read), it observes the session's messages (their total size, as the host sized them);
    /// then the running total for the status line. Only the branch's custom entries are read:
    /// the host may leave the others out.
    #[napi(
        catch_unwind,
        ts_args_type = "branch: ReadonlyArray<unknown>, observedTokens: number"
    )]
    pub fn session_start(&self, branch: Vec<Value>, observed_tokens: f64) -> EngineStep {
        quiet(|| {
            self.restored(branch, |session, branch| {
                session.on_session_start(branch, Observation::Total(count(observed_tokens)))
            })
        })
    }

    /// `session_tree`: the same for the new leaf.
    #[napi(
        catch_unwind,
        ts_args_type = "branch: ReadonlyArray<unknown>, observedTokens: number"
    )]
    pub fn session_tree(&self, branch: Vec<Value>, observed_tokens: f64) -> EngineStep {
        quiet(|| {
            self.restored(branch, |session, branch| {
                session.on_session_tree(branch, Observation::Total(count(observed_tokens)))
            })
        })
    }

    /// `session_compact`: the next request is rewritten; Online Context Compact records the
    /// compaction and observes the compacted messages (the snapshot follows).
    #[napi(catch_unwind)]
    pub fn session_compact(&self, from_extension: bool, observed_tokens: f64) -> EngineStep {
        quiet(|| {
            self.rewritten.store(true, Ordering::Relaxed);
            self.occ_step(|session| {
                session
                    .on_session_compact(from_extension, Observation::Total(count(observed_tokens)))
            })
        })
    }

    /// `model_select`: another model's provider holds none of the session's prefix in its
    /// cache, so the next request is rewritten.
    #[napi(catch_unwind)]
    pub fn model_select(&self) {
        quiet(|| self.rewritten.store(true, Ordering::Relaxed));
    }

    /// `session_shutdown`.
    #[napi(catch_unwind)]
    pub fn session_shutdown(&self) {
        quiet(|| {
            if let Some(occ) = &self.occ {
                occ.session_shutdown();
            }
        });
    }

    /// `turn_end`, after the `context` event carried with it (`context`: Online Context
    /// Compact's observation): Online Context Compact ends the turn's request and takes the
    /// pending boundary (`measure` when it is to be evaluated: the totals then come with
    /// `decideBoundary`), then the totals entry when the totals changed since the last one.
    #[napi(catch_unwind)]
    pub fn turn_end(&self, turn: OccTurnEndInput, context: Option<OccContextSeen>) -> EngineStep {
        quiet(|| {
            let mut effects = self
                .occ
                .as_ref()
                .map(|occ| effects_of(occ.turn_end(turn, context), None, &occ.book))
                .unwrap_or_default();
            let measuring = effects
                .iter()
                .any(|effect| matches!(effect, EngineEffect::Measure));
            if !measuring {
                effects.extend(self.totals());
            }
            EngineStep { effects }
        })
    }
}

impl Engine {
    /// Online Context Compact's step over `branch` (`start`: its start or its switch to a new
    /// leaf), then the book goes on from the branch; the step with both's warnings and the
    /// running total. The next request is rewritten.
    fn restored(
        &self,
        branch: Vec<Value>,
        start: impl FnOnce(&mut OccSession, &[SessionEntry]) -> Step,
    ) -> EngineStep {
        self.rewritten.store(true, Ordering::Relaxed);
        let branch = branch_entries(branch);
        let mut effects = restoring(self.occ_step(|session| start(session, &branch))).effects;
        let warnings = self.book.restore(&branch);
        effects.extend(warnings.into_iter().map(|text| EngineEffect::Warn {
            text,
            everywhere: true,
        }));
        effects.push(self.status());
        EngineStep { effects }
    }

    /// Online Context Compact's step `run` (booked), as the engine's step; none with it off.
    pub(crate) fn occ_step(&self, run: impl FnOnce(&mut OccSession) -> Step) -> EngineStep {
        EngineStep::of(
            self.occ
                .as_ref()
                .map(|occ| effects_of(occ.step(run), None, &occ.book)),
        )
    }

    /// The totals entry as an effect, when the totals changed since it was last given out.
    pub(crate) fn totals(&self) -> Option<EngineEffect> {
        self.book
            .take_totals()
            .map(|entry| EngineEffect::AppendEntry {
                custom_type: entry.custom_type,
                data: entry.data,
            })
    }

    /// The running total for the status line.
    pub(crate) fn status(&self) -> EngineEffect {
        EngineEffect::Status {
            key: sol_core::tui::TOTAL_STATUS_KEY.to_owned(),
            text: self.book.view(&self.prices).status_line,
        }
    }
}

/// A restore's step: its warnings (what could not be read back) are shown in every mode.
pub(crate) fn restoring(mut step: EngineStep) -> EngineStep {
    for effect in &mut step.effects {
        if let EngineEffect::Warn { everywhere, .. } = effect {
            *everywhere = true;
        }
    }
    step
}

/// Pi's branch entries as `sol_core` reads them, whole numbers as the integers Rust wrote.
pub(crate) fn branch_entries(branch: Vec<Value>) -> Vec<SessionEntry> {
    SessionEntry::from_values(branch.into_iter().map(whole_numbers))
}

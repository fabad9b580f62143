//! ObservationPack's entries of the [`Engine`]: its packs, one per runtime root, over
//! `obspack.rs`'s `ObsPack`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use napi::bindgen_prelude::Uint32Array;
use napi_derive::napi;

use super::Engine;
use crate::boundary::quiet;
use crate::frame::RequestFrame;
use crate::obspack::{
    ObsAdmission, ObsCandidate, ObsContextStep, ObsPack, ObsPlacement, ObsRequestFacts,
};

/// ObservationPack's steps as the engine's entries; a session with ObservationPack off
/// refuses them.
#[napi]
impl Engine {
    /// Whether ObservationPack places results by size and position (the cache-aware or the
    /// recent-outputs placement): `obsContext` then takes the request's facts.
    #[napi(getter)]
    pub fn obs_places_by_size(&self) -> bool {
        self.observation_pack
            .is_some_and(|placement| placement.ratio().is_some())
    }

    /// The fewest UTF-16 units a text result's joined texts need for ObservationPack to
    /// consider it (a unit is at most 3 UTF-8 bytes): the host's walk looks up and sends no
    /// shorter one. 0 with ObservationPack off.
    #[napi(getter)]
    pub fn obs_min_candidate_units(&self) -> u32 {
        self.observation_pack
            .map_or(0, ObsPlacement::min_candidate_units)
    }

    /// Whether `obsContext` takes the request's newest assistant message (`facts.reply`), and
    /// for a pack made after a resume or a fork every earlier one (`facts.earlierReplies`).
    #[napi(getter)]
    pub fn obs_reads_replies(&self) -> bool {
        self.observation_pack
            .is_some_and(ObsPlacement::reads_replies)
    }

    /// Decides, archives and admits new candidates of the session whose runtime root is
    /// `root`, in order. A damaged object or record found on the way is rebuilt from the
    /// candidate's text and recorded in the ledger (`repaired`, stamped `timestamp`).
    #[napi(catch_unwind)]
    pub fn obs_admit(
        &self,
        root: String,
        candidates: Vec<ObsCandidate>,
        timestamp: String,
    ) -> napi::Result<Vec<ObsAdmission>> {
        quiet(|| Ok(self.pack(&root)?.admit(&candidates, &timestamp)))
    }

    /// The step for the request `frame` describes, which carries the admitted results
    /// `handles[i]` at the indexes `at[i]`. Rust counts where each sits (the earlier requests
    /// that carried it, the tokens and tool outputs after it; `sol_obspack::locate`). A pack
    /// placing by size and position places them with `facts` and with whether the request
    /// shares no prefix with the one before (the first after a session start, a branch
    /// switch, a compaction or a model switch: the engine saw those events); without facts,
    /// by the fixed rule. Appends the step's ledger records (stamped `timestamp`) in one write.
    #[napi(catch_unwind)]
    pub fn obs_context(
        &self,
        root: String,
        frame: RequestFrame,
        at: Uint32Array,
        handles: Uint32Array,
        timestamp: String,
        facts: Option<ObsRequestFacts>,
    ) -> napi::Result<ObsContextStep> {
        quiet(|| {
            let pack = self.pack(&root)?;
            let rewritten = self.rewritten.swap(false, Ordering::Relaxed);
            Ok(pack.on_context(&frame, &at, &handles, &timestamp, facts, rewritten))
        })
    }
}

impl Engine {
    /// The pack of the storage directory under `root`, made on first use.
    fn pack(&self, root: &str) -> napi::Result<Arc<ObsPack>> {
        let placement = self
            .observation_pack
            .ok_or_else(|| napi::Error::from_reason("ObservationPack is off in this session"))?;
        let mut packs = self.packs.lock().unwrap_or_else(PoisonError::into_inner);
        let pack = packs
            .entry(root.to_owned())
            .or_insert_with(|| Arc::new(ObsPack::new(root, placement, self.book.clone())));
        Ok(Arc::clone(pack))
    }
}

//! The state Online Context Compact persists in the session, and its transitions.
//!
//! The host appends a full snapshot as a custom session entry of type
//! [`STATE_ENTRY_TYPE`] whenever the state changes, and restores the newest valid snapshot
//! on the current branch ([`restore_state`]), so that tree navigation and forks see the
//! state of their own branch. Snapshots are never part of the model context.
//!
//! ```
//! use sol_occ::state::{CacheDebt, OccState};
//!
//! let mut state = OccState::default();
//! state.record_provider_request(1_000);
//! state.record_provider_request(1_400);
//! assert_eq!(state.request_count, 2);
//! assert_eq!(state.average_context_increment(), Some(400.0));
//!
//! state.record_compaction(CacheDebt { debt_tokens: 300.0, repayment_tokens: 100.0 });
//! state.record_provider_request(900);
//! assert_eq!(state.cache_debt_tokens, 200.0);
//! assert_eq!(state.requests_since_last_compaction(), Some(1));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sol_core::session::{SessionEntry, newest_readable};

use crate::plan::{PlanStep, ProgressSummary, is_fully_completed, parse_plan_steps};

/// Custom session entry type of state snapshots.
pub const STATE_ENTRY_TYPE: &str = "sol-pi-online-context-state-v1";
/// The only schema version this crate reads and writes.
pub const STATE_VERSION: u32 = 1;

/// The persisted state. Serializes with camelCase keys in declaration order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OccState {
    /// Schema version, always [`STATE_VERSION`].
    pub version: u32,
    /// Incremented by every compaction, correction and task handoff.
    pub epoch: u64,
    /// The current plan, as last sent by the model.
    pub plan: Vec<PlanStep>,
    /// Progress reports of completed steps since the last compaction, oldest first.
    pub pending_progress: Vec<ProgressSummary>,
    /// Provider requests counted in this session (see [`crate::session`]).
    pub request_count: u64,
    /// `request_count` at the last plan boundary (or correction, or handoff).
    pub last_boundary_request_count: u64,
    /// Provider requests between consecutive plan boundaries: the horizon samples.
    pub completed_boundary_request_counts: Vec<u64>,
    /// Context size at the last counted request; `None` after a compaction or correction.
    pub last_context_tokens: Option<u64>,
    /// Sum of the context growth of requests that grew it.
    pub positive_context_delta_total: u64,
    /// How many requests grew the context.
    pub positive_context_delta_count: u64,
    /// Native compactions recorded in this session (any trigger).
    pub native_compaction_count: u64,
    /// Cache-rewrite cost of boundary compactions not yet repaid, in read-equivalent tokens.
    pub cache_debt_tokens: f64,
    /// Tokens each later request saves thanks to those compactions; repays the debt.
    pub cache_debt_repayment_tokens: f64,
    /// `request_count` at the last compaction; `None` before the first.
    #[serde(default)]
    pub last_compaction_request_count: Option<u64>,
}

impl Default for OccState {
    fn default() -> Self {
        OccState {
            version: STATE_VERSION,
            epoch: 0,
            plan: Vec::new(),
            pending_progress: Vec::new(),
            request_count: 0,
            last_boundary_request_count: 0,
            completed_boundary_request_counts: Vec::new(),
            last_context_tokens: None,
            positive_context_delta_total: 0,
            positive_context_delta_count: 0,
            native_compaction_count: 0,
            cache_debt_tokens: 0.0,
            cache_debt_repayment_tokens: 0.0,
            last_compaction_request_count: None,
        }
    }
}

/// The cache debt a compaction adds: what its rewrite costs and what it saves per request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheDebt {
    /// Extra read-equivalent tokens the cache rewrite costs.
    pub debt_tokens: f64,
    /// Tokens each later request reads less.
    pub repayment_tokens: f64,
}

/// Why a stored snapshot was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// The value does not have the snapshot's shape.
    #[error("malformed online context state: {0}")]
    Malformed(String),
    /// Another schema version.
    #[error("unsupported online context state version {0}")]
    Version(u64),
    /// The stored plan breaks the plan bounds.
    #[error("invalid plan in online context state: {0}")]
    Plan(String),
    /// A counter is inconsistent with `requestCount`.
    #[error("online context state field {0} exceeds requestCount")]
    CounterAhead(&'static str),
    /// A debt field is negative.
    #[error("online context state field {0} must be finite and non-negative")]
    NegativeDebt(&'static str),
    /// A snapshot found as a branch entry of its own, not as the `data` of a custom entry.
    #[error(
        "online context state must be the data of a custom session entry of type \
         {STATE_ENTRY_TYPE}, not a bare entry"
    )]
    Bare,
}

impl StateError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            StateError::Malformed(_) => "malformed_state",
            StateError::Version(_) => "unsupported_state_version",
            StateError::Plan(_) => "invalid_state_plan",
            StateError::CounterAhead(_) => "state_counter_ahead",
            StateError::NegativeDebt(_) => "negative_state_debt",
            StateError::Bare => "bare_state",
        }
    }
}

fn clamp_amount(value: f64) -> f64 {
    if value.is_finite() && value > 0.0 {
        value
    } else {
        0.0
    }
}

impl OccState {
    /// Reads and validates a snapshot. Fields added after the first release
    /// (`lastCompactionRequestCount`) may be missing; unknown fields are ignored.
    ///
    /// # Errors
    ///
    /// A [`StateError`] when the value is not a valid version-1 snapshot.
    pub fn from_value(value: &Value) -> Result<OccState, StateError> {
        let version = value
            .get("version")
            .and_then(Value::as_u64)
            .ok_or_else(|| StateError::Malformed("version must be 1".to_owned()))?;
        if version != u64::from(STATE_VERSION) {
            return Err(StateError::Version(version));
        }
        let plan = value
            .get("plan")
            .ok_or_else(|| StateError::Malformed("missing field `plan`".to_owned()))?;
        parse_plan_steps(plan).map_err(|error| StateError::Plan(error.to_string()))?;
        let state = OccState::deserialize(value)
            .map_err(|error| StateError::Malformed(error.to_string()))?;
        if state.last_boundary_request_count > state.request_count {
            return Err(StateError::CounterAhead("lastBoundaryRequestCount"));
        }
        if state
            .last_compaction_request_count
            .is_some_and(|count| count > state.request_count)
        {
            return Err(StateError::CounterAhead("lastCompactionRequestCount"));
        }
        for (name, amount) in [
            ("cacheDebtTokens", state.cache_debt_tokens),
            (
                "cacheDebtRepaymentTokens",
                state.cache_debt_repayment_tokens,
            ),
        ] {
            if !(amount.is_finite() && amount >= 0.0) {
                return Err(StateError::NegativeDebt(name));
            }
        }
        Ok(state)
    }

    /// The snapshot a session entry carries: `None` when the entry is not a snapshot,
    /// else the validated data of a custom entry of type [`STATE_ENTRY_TYPE`]. A
    /// snapshot that is itself the entry (an object with a `version` and a `plan` but no
    /// entry `type`) is [`StateError::Bare`] instead of being passed over silently.
    ///
    /// # Errors
    ///
    /// A [`StateError`] when the entry holds an invalid snapshot, or a bare one.
    pub fn from_entry(entry: &SessionEntry) -> Option<Result<OccState, StateError>> {
        match entry {
            SessionEntry::Custom(custom) if custom.custom_type == STATE_ENTRY_TYPE => {
                Some(match &custom.data {
                    Some(data) => OccState::from_value(data),
                    None => Err(StateError::Malformed("missing field `data`".to_owned())),
                })
            }
            SessionEntry::Other(Value::Object(fields))
                if !fields.contains_key("type")
                    && fields.contains_key("version")
                    && fields.contains_key("plan") =>
            {
                Some(Err(StateError::Bare))
            }
            _ => None,
        }
    }

    /// The snapshot as the JSON value the host stores.
    pub fn to_value(&self) -> Value {
        // Serializing plain data with string keys cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Records one counted provider request with the context size it carried: growth
    /// statistics, then one repayment of the cache debt.
    pub fn record_provider_request(&mut self, context_tokens: u64) {
        self.request_count = self.request_count.saturating_add(1);
        let growth = self
            .last_context_tokens
            .map_or(0, |last| context_tokens.saturating_sub(last));
        if growth > 0 {
            self.positive_context_delta_total =
                self.positive_context_delta_total.saturating_add(growth);
            self.positive_context_delta_count += 1;
        }
        self.last_context_tokens = Some(context_tokens);
        self.cache_debt_tokens =
            clamp_amount(self.cache_debt_tokens - self.cache_debt_repayment_tokens);
        if self.cache_debt_tokens == 0.0 {
            self.cache_debt_repayment_tokens = 0.0;
        }
    }

    /// Records a plan boundary: the requests since the previous one become a horizon
    /// sample, the plan is replaced, and the progress report (if any) is kept for the next
    /// compaction.
    pub fn record_boundary(&mut self, plan: Vec<PlanStep>, progress: Option<ProgressSummary>) {
        let interval = self
            .request_count
            .saturating_sub(self.last_boundary_request_count);
        self.completed_boundary_request_counts.push(interval);
        self.last_boundary_request_count = self.request_count;
        self.plan = plan;
        self.pending_progress.extend(progress);
    }

    /// Replaces the plan without a boundary. Returns whether it changed.
    pub fn record_plan(&mut self, plan: Vec<PlanStep>) -> bool {
        if self.plan == plan {
            return false;
        }
        self.plan = plan;
        true
    }

    /// Records a native compaction of any origin. The plan, the horizon samples and the
    /// context-growth statistics survive; the progress evidence was consumed by the
    /// compaction. `debt` (zero for compactions the mechanism did not select) is added to
    /// the carried debt, so that unpaid debt of earlier compactions is never forgiven.
    pub fn record_compaction(&mut self, debt: CacheDebt) {
        self.epoch = self.epoch.saturating_add(1);
        self.pending_progress.clear();
        self.last_context_tokens = None;
        self.native_compaction_count = self.native_compaction_count.saturating_add(1);
        self.cache_debt_tokens =
            clamp_amount(self.cache_debt_tokens + clamp_amount(debt.debt_tokens));
        self.cache_debt_repayment_tokens = if self.cache_debt_tokens == 0.0 {
            0.0
        } else {
            clamp_amount(self.cache_debt_repayment_tokens + clamp_amount(debt.repayment_tokens))
        };
        self.last_compaction_request_count = Some(self.request_count);
    }

    /// Records a correction (a steering message or a `CORRECTION:` prompt): the plan, its
    /// progress and the horizon samples no longer describe the task, and the growth
    /// statistics start over. Carried cache debt stays: it is a cost already paid.
    pub fn record_correction(&mut self) {
        self.epoch = self.epoch.saturating_add(1);
        self.plan.clear();
        self.pending_progress.clear();
        self.last_boundary_request_count = self.request_count;
        self.completed_boundary_request_counts.clear();
        self.last_context_tokens = None;
        self.positive_context_delta_total = 0;
        self.positive_context_delta_count = 0;
    }

    /// Starts a new request horizon when a new user task follows a fully completed plan:
    /// the plan and the horizon samples go, the compaction count and unpaid debt stay.
    /// Returns whether it applied (a plan with unfinished steps is left alone).
    pub fn record_completed_plan_handoff(&mut self) -> bool {
        if !is_fully_completed(&self.plan) {
            return false;
        }
        self.epoch = self.epoch.saturating_add(1);
        self.plan.clear();
        self.completed_boundary_request_counts.clear();
        self.last_boundary_request_count = self.request_count;
        true
    }

    /// Average growth per growing request, `None` before the first.
    pub fn average_context_increment(&self) -> Option<f64> {
        (self.positive_context_delta_count > 0).then(|| {
            self.positive_context_delta_total as f64 / self.positive_context_delta_count as f64
        })
    }

    /// Provider requests since the last compaction, `None` before the first.
    pub fn requests_since_last_compaction(&self) -> Option<u64> {
        self.last_compaction_request_count
            .map(|count| self.request_count.saturating_sub(count))
    }
}

/// Finds the newest valid snapshot on a branch (entries root first, as Pi's `getBranch()`
/// returns them): the data of the last custom entry of type [`STATE_ENTRY_TYPE`] that
/// validates ([`OccState::from_entry`]). Malformed newer snapshots are skipped.
pub fn latest_state(branch: &[SessionEntry]) -> Option<OccState> {
    branch
        .iter()
        .rev()
        .find_map(|entry| OccState::from_entry(entry)?.ok())
}

/// The state of a branch: its newest valid snapshot, else the initial state.
pub fn restore_state(branch: &[SessionEntry]) -> OccState {
    latest_state(branch).unwrap_or_default()
}

/// A branch's state with the snapshots that could not be read on the way to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    /// The newest valid snapshot, else the initial state (as [`restore_state`]).
    pub state: OccState,
    /// Why each snapshot newer than the restored one was rejected, newest first. Older
    /// invalid snapshots are not listed: a newer valid one replaced them.
    pub rejected: Vec<StateError>,
}

/// [`restore_state`], reporting the snapshots it passed over instead of skipping them
/// silently.
///
/// ```
/// use serde_json::json;
/// use sol_core::session::{SessionEntry, newest_readable};
/// use sol_occ::state::{restore_from_branch, OccState, StateError, STATE_ENTRY_TYPE};
///
/// let entry = |data| SessionEntry::from_value(json!({"type": "custom", "id": "s",
///     "customType": STATE_ENTRY_TYPE, "data": data}));
/// let saved = OccState { request_count: 3, ..OccState::default() };
/// let branch = [entry(saved.to_value()), entry(json!({"version": 2, "plan": []}))];
/// let restored = restore_from_branch(&branch);
/// assert_eq!(restored.state, saved);
/// assert_eq!(restored.rejected, vec![StateError::Version(2)]);
/// ```
pub fn restore_from_branch(branch: &[SessionEntry]) -> Restored {
    let (state, rejected) = newest_readable(branch, OccState::from_entry);
    Restored {
        state: state.unwrap_or_default(),
        rejected,
    }
}

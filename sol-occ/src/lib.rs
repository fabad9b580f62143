//! # sol-occ: Online Context Compact
//!
//! Online Context Compact is one of the four SoL-Pi token-efficiency mechanisms: `update_plan` marks completed plan steps as points where the host's native compaction may run when the cache economics say it pays.
//!
//! This crate is sans-IO. It never compacts, aborts or sends messages itself: each step returns the effects the host carries out, in order, with what the step saved and spent. It reads no clock, no environment
//! and spawns no process; everything it needs arrives as input.
//!
//! The mechanism is opt-in: it is active only when `sol-pi.json` sets
//! `onlineContextCompact` to `true`.
//!
//! ```
//! use sol_core::SolPiConfig;
//!
//! let config = SolPiConfig { online_context_compact: true, ..SolPiConfig::default() };
//! assert!(sol_occ::is_enabled(&config));
//! assert!(!sol_occ::is_enabled(&SolPiConfig::default()));
//! ```
//!
//! # What is here
//!
//! - [`plan`]: the plan model, the `update_plan` arguments with their bounds (exported as
//!   constants for the host's schema), and the transition analysis that finds plan
//!   boundaries;
//! - [`state`]: the persisted state, its transitions and its restoration from a branch;
//! - [`tokens`] and [`estimate`]: Pi's token estimates and the prediction of what Pi's
//!   native compaction would remove, cut point included;
//! - [`settings`]: the factory options and Pi's compaction settings;
//! - [`economics`]: the decision whether a compaction pays, with its reason codes;
//! - [`instructions`]: the summarizer instructions with the bounded progress evidence;
//! - [`session`]: the state machine the host drives with Pi's events, one step per event,
//!   each returning its effects and its `StepAccount`;
//! - [`text`]: every text the model or a person reads.
//!
//! Replaying recorded sessions under the policy is not here: the `sol-replay` crate feeds this
//! machine's steps with a recorded session's events and prices the result.
//!
//! # What it never does
//!
//! It never reads the session file, never compacts, aborts, sends a message or shows a
//! notice: the host does, when a returned effect says so. It reads no clock and no
//! environment and starts no process; `clippy.toml` at the workspace root forbids the std
//! functions that would break this.
//!
//! # Example: one boundary, from `update_plan` to the continuation
//!
//! ```
//! use serde_json::json;
//! use sol_core::message::AgentMessage;
//! use sol_core::session::SessionEntry;
//! use sol_occ::estimate::NativeProjection;
//! use sol_occ::session::*;
//! use sol_occ::settings::{resolve_compaction_settings, OccOptions};
//! use sol_occ::tokens::MessageRole;
//!
//! let mut occ = OccSession::new(OccOptions { cache_write_read_ratio: Some(0.0), keep_recent_tokens: Some(50) });
//! assert!(occ.on_session_start(&[], Vec::new()).effects.is_empty());
//! let plan = |status: &str| json!({"steps": [
//!     {"id": "build", "goal": "Build it", "status": status},
//!     {"id": "ship", "goal": "Ship it", "status": "pending"},
//! ]});
//!
//! // A long conversation the host observed through `context` events.
//! let messages: Vec<_> = (0..40).map(|i| json!({
//!     "role": if i % 2 == 0 { "user" } else { "assistant" },
//!     "content": if i % 2 == 0 { json!("x".repeat(4000)) } else { json!([{"type": "text", "text": "ok"}]) },
//!     "timestamp": i,
//! })).collect();
//! let typed: Vec<_> = messages.iter().cloned().map(AgentMessage::from_value).collect();
//! for step in 0..3 {
//!     occ.on_context(ContextEvent::new(false, &typed));
//!     occ.on_before_provider_request(None, 0);
//!     occ.on_message_end(MessageRole::Assistant);
//!     if step == 0 { occ.on_update_plan("call-1", &plan("in_progress"), false).0?; }
//! }
//! let (result, _) = occ.on_update_plan("call-2", &plan("completed"), false);
//! assert!(result?.details.boundary);
//!
//! let turn = TurnEnd::after_tools(vec![TurnToolResult::new("call-2", "update_plan", false)]);
//! // The host carries out each step's effects in order; `measure` asks for the context.
//! assert_eq!(occ.on_turn_end(&turn).effects, vec![Effect::Measure]);
//! let branch: Vec<_> = messages.iter().enumerate()
//!     .map(|(i, m)| SessionEntry::from_value(json!({"type": "message", "id": format!("e{i}"), "message": m})))
//!     .collect();
//! let measurement = BoundaryMeasurement {
//!     reported_tokens: None,
//!     usage_context_window: Some(200_000.0),
//!     model_context_window: None,
//!     system_prompt_tokens: 0,
//!     projection: NativeProjection::from_branch(&branch),
//!     settings: resolve_compaction_settings(None, None, Some(50)),
//!     observed: None,
//! };
//! let step = occ.on_decide_boundary(&measurement);
//! // Every earlier step saved the state it changed: nothing is left to save before the abort.
//! assert!(matches!(step.effects.as_slice(), [Effect::Decision(_), Effect::Abort]));
//!
//! // The host called ctx.abort(); the run settles with Pi idle.
//! let step = occ.on_agent_settled(true);
//! let [Effect::Compact { custom_instructions }] = step.effects.as_slice() else { unreachable!() };
//! assert!(custom_instructions.starts_with("This compaction runs at a completed step"));
//! occ.on_session_compact(false, Vec::new());
//! let step = occ.on_compaction_finished(&CompactionResult::completed("## Goal\n…"));
//! assert_eq!(step.account.model_calls, 1);
//! let Some(Effect::SendMessage(continuation)) = step.effects.last() else { unreachable!() };
//! assert!(continuation.trigger_turn && !continuation.display);
//! // Pi 0.87+ is still idle after sendMessage(): it runs the turn after the handler returned.
//! assert!(occ.on_continuation_sent(true).effects.is_empty());
//! assert_eq!(occ.state().native_compaction_count, 1);
//! # Ok::<(), PlanToolError>(())
//! ```
//!
//! # One dependency
//!
//! The `sol-core` types (and `camino` paths, where they appear) of this crate's signatures are
//! re-exported, so a host needs no other dependency line for them:
//!
//! ```
//! use sol_occ::sol_core::message::AgentMessage;
//! let message = AgentMessage::from_value(serde_json::json!({"role": "user", "content": "hi", "timestamp": 1}));
//! assert!(matches!(message, AgentMessage::User(_)));
//! ```

// The crates our public signatures use, so that one dependency line is enough.
#[doc(no_inline)]
pub use serde_json;
#[doc(no_inline)]
pub use sol_core;
/// The real ports over the operating system (`host::OsFileSystem`, ...), for a Rust host
/// that adds this crate with `features = ["host"]`; the mechanism itself never uses them.
#[cfg(feature = "host")]
pub use sol_host as host;

pub mod economics;
pub mod estimate;
pub mod instructions;
pub mod plan;
pub mod session;
pub mod settings;
pub mod state;
pub mod text;
pub mod tokens;

use sol_core::{Mechanism, SolPiConfig};

pub use economics::{BoundaryDecision, DecisionReason};
pub use session::OccSession;
pub use state::OccState;

/// The mechanism this crate implements.
pub const MECHANISM: Mechanism = Mechanism::OnlineContextCompact;

/// Whether the configuration turns this mechanism on.
pub fn is_enabled(config: &SolPiConfig) -> bool {
    config.is_enabled(MECHANISM)
}

/// Any error of this crate, for hosts that handle them in one place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OccError {
    /// Invalid `update_plan` arguments or stored plan.
    #[error(transparent)]
    Plan(#[from] plan::PlanError),
    /// A failed `update_plan` call.
    #[error(transparent)]
    PlanTool(#[from] session::PlanToolError),
    /// Invalid factory options.
    #[error(transparent)]
    Options(#[from] settings::OptionsError),
    /// An invalid state snapshot.
    #[error(transparent)]
    State(#[from] state::StateError),
}

impl OccError {
    /// The stable code of the underlying error.
    pub fn code(&self) -> &'static str {
        match self {
            OccError::Plan(error) => error.code(),
            OccError::PlanTool(error) => error.code(),
            OccError::Options(error) => error.code(),
            OccError::State(error) => error.code(),
        }
    }
}

/// The README example, compiled and run as a doctest so that it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

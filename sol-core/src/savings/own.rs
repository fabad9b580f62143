//! SoL-Pi's own traffic: the requests and the messages plain Pi would not have had.
//!
//! Two of the mechanisms give the model a tool of their own (Online Context Compact's
//! `update_plan`, ObservationPack's `obs_recall`). Plain Pi has neither, so
//! - a request whose response calls only SoL-Pi's tools does not exist in plain Pi: it is
//!   caused by the mechanism of the lowest layer among those it calls, and exists from that
//!   layer up ([`request_cause`]);
//! - in every later request, a message that holds such calls, or their results, is not in
//!   plain Pi's request either: a message of calls to SoL-Pi's tools only is absent below
//!   the mechanism's layer, and one that also calls other tools is there without SoL-Pi's
//!   calls ([`own_changes`]).
//!
//! A response that made another tool call did other work: its request stays in plain Pi.

use crate::Mechanism;

use super::layer_of;

/// One tool call of a model response, as the book needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCall {
    /// The mechanism whose tool it calls; `None` for any other tool.
    pub owner: Option<Mechanism>,
    /// The call's tokens in its message (its name and arguments).
    pub tokens: u64,
}

/// The mechanism that caused a request whose response made calls of these `owners` (each
/// `None` for a tool that is not SoL-Pi's): the lowest layer's among them when every call
/// is to a SoL-Pi tool, `None` when any is not, or when there is no call.
///
/// ```
/// use sol_core::Mechanism;
/// use sol_core::savings::request_cause;
///
/// let plan = Some(Mechanism::OnlineContextCompact);
/// let recall = Some(Mechanism::ObservationPack);
/// assert_eq!(request_cause([plan]), plan);
/// assert_eq!(request_cause([plan, recall]), recall);
/// assert_eq!(request_cause([plan, None]), None);
/// assert_eq!(request_cause([]), None);
/// ```
pub fn request_cause(owners: impl IntoIterator<Item = Option<Mechanism>>) -> Option<Mechanism> {
    let mut lowest: Option<Mechanism> = None;
    for owner in owners {
        let owner = owner?;
        if lowest.is_none_or(|known| layer_of(owner) < layer_of(known)) {
            lowest = Some(owner);
        }
    }
    lowest
}

/// The changes that make a message of `tokens` with these tool `calls` what it was before
/// the mechanisms whose tools it calls, layer by layer, lowest layer first: each is the
/// mechanism and the message's tokens before it (`None`: the message is not there). Empty
/// when no call is to a SoL-Pi tool.
///
/// ```
/// use sol_core::Mechanism;
/// use sol_core::savings::{ToolCall, own_changes};
///
/// let plan = ToolCall { owner: Some(Mechanism::OnlineContextCompact), tokens: 40 };
/// let bash = ToolCall { owner: None, tokens: 25 };
/// // Only a plan: the message is not in plain Pi's requests.
/// assert_eq!(own_changes(60, &[plan]), vec![(Mechanism::OnlineContextCompact, None)]);
/// // A plan and a command: the message is there, without the plan's call.
/// assert_eq!(own_changes(90, &[plan, bash]), vec![(Mechanism::OnlineContextCompact, Some(50))]);
/// ```
pub fn own_changes(tokens: u64, calls: &[ToolCall]) -> Vec<(Mechanism, Option<u64>)> {
    let other_work = calls.iter().any(|call| call.owner.is_none());
    let mut owners: Vec<Mechanism> = calls.iter().filter_map(|call| call.owner).collect();
    owners.sort_by_key(|&owner| layer_of(owner));
    owners.dedup();
    // The tokens of the calls of the mechanisms from `layer` up.
    let own_from = |layer: usize| {
        calls
            .iter()
            .filter(|call| call.owner.is_some_and(|owner| layer_of(owner) >= layer))
            .fold(0u64, |sum, call| sum.saturating_add(call.tokens))
    };
    owners
        .iter()
        .enumerate()
        .map(|(index, &owner)| {
            let before = if index == 0 && !other_work {
                None
            } else {
                Some(tokens.saturating_sub(own_from(layer_of(owner))))
            };
            (owner, before)
        })
        .collect()
}

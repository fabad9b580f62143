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
use crate::message::{js_json_length, js_length, tokens_from_chars};

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

/// What SoL-Pi adds to Pi's system message, which plain Pi's has not: each of its tools'
/// declarations (in the message's `toolsAdded`), its line in Pi's tool list (`- name:
/// snippet`), its guidelines (`- guideline`), and Action Fusion's `then_run` parameter in
/// the declarations of `edit` and `write`. The live book and replay take the system
/// message's share of each mechanism from here, so both leave the same tokens out of the
/// layers below it.
///
/// ```
/// use serde_json::json;
/// use sol_core::Mechanism;
/// use sol_core::savings::{OwnPrompt, ToolCall};
///
/// let mut own = OwnPrompt::default();
/// own.add_tool("update_plan", Mechanism::OnlineContextCompact, Some("Keep the plan"), &["Plan first"]);
/// let system = json!({
///     "role": "system",
///     "content": "Tools:\n- read: Read files\n- update_plan: Keep the plan\n\nGuidelines:\n- Plan first\n",
///     "toolsAdded": [{ "name": "read" }, { "name": "update_plan" }],
/// });
/// // The snippet's line (13 + 16), the guideline's (10 + 3), the declaration (22).
/// let shares = own.system_shares(&system);
/// assert_eq!(shares, vec![
///     ToolCall { owner: None, tokens: 0 },
///     ToolCall { owner: Some(Mechanism::OnlineContextCompact), tokens: 16 },
/// ]);
/// assert!(own.system_shares(&json!({ "role": "system", "content": "Be brief." })).is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnPrompt {
    /// Each line SoL-Pi adds, with its mechanism and the UTF-16 units around its text.
    lines: Vec<(String, Mechanism, u64)>,
    /// SoL-Pi's tools by name.
    tools: std::collections::BTreeMap<String, Mechanism>,
}

impl OwnPrompt {
    /// `mechanism` registered the tool `name`, listed with `snippet` and these `guidelines`.
    pub fn add_tool(
        &mut self,
        name: &str,
        mechanism: Mechanism,
        snippet: Option<&str>,
        guidelines: &[&str],
    ) {
        self.tools.insert(name.to_owned(), mechanism);
        if let Some(snippet) = snippet.filter(|snippet| !snippet.is_empty()) {
            // `- name: ` before it and a line break after it.
            let around = js_length(name) + 5;
            self.lines.push((snippet.to_owned(), mechanism, around));
        }
        for guideline in guidelines.iter().filter(|text| !text.is_empty()) {
            self.lines.push(((*guideline).to_owned(), mechanism, 3));
        }
    }

    /// The mechanism whose tool `name` is, if it is SoL-Pi's.
    pub fn owner(&self, name: &str) -> Option<Mechanism> {
        self.tools.get(name).copied()
    }

    /// Each mechanism's tokens in a system message (Pi's message: its `content`, its
    /// `sections`, its `toolsAdded`), as calls for [`own_changes`]: a first call that is
    /// not SoL-Pi's (the rest of the message is plain Pi's, so it stays, smaller), then one
    /// per mechanism in [`Mechanism::ALL`]'s order. Empty when SoL-Pi added nothing.
    pub fn system_shares(&self, message: &serde_json::Value) -> Vec<ToolCall> {
        use serde_json::Value;
        let mut texts: Vec<&str> = Vec::new();
        match message.get("content") {
            Some(Value::String(text)) => texts.push(text),
            Some(Value::Array(blocks)) => texts.extend(
                blocks
                    .first()
                    .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
                    .and_then(|block| block.get("text").and_then(Value::as_str)),
            ),
            _ => texts.push(""),
        }
        if let Some(sections) = message.get("sections").and_then(Value::as_object) {
            texts.extend(sections.values().filter_map(Value::as_str));
        }
        let mut units = [0u64; 4];
        // Per mechanism, in `Mechanism::ALL`'s order.
        let slot = |mechanism: Mechanism| layer_of(mechanism) - 1;
        for (line, mechanism, around) in &self.lines {
            if texts.iter().any(|text| text.contains(line.as_str())) {
                units[slot(*mechanism)] += js_length(line) + around;
            }
        }
        let tools = message.get("toolsAdded").and_then(Value::as_array);
        for tool in tools.into_iter().flatten() {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            if let Some(owner) = self.owner(name) {
                units[slot(owner)] += js_json_length(tool);
            } else if let Some(then_run) = tool.pointer("/parameters/properties/then_run") {
                // `"then_run":` and the comma before it.
                units[slot(Mechanism::ActionFusion)] += js_json_length(then_run) + 11;
            }
        }
        if units.iter().all(|units| *units == 0) {
            return Vec::new();
        }
        std::iter::once(ToolCall {
            owner: None,
            tokens: 0,
        })
        .chain(
            Mechanism::ALL
                .iter()
                .zip(units)
                .filter(|(_, units)| *units > 0)
                .map(|(mechanism, units)| ToolCall {
                    owner: Some(*mechanism),
                    tokens: tokens_from_chars(units),
                }),
        )
        .collect()
    }
}

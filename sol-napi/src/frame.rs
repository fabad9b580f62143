//! The request frame: a provider request as the extension sized it in its one walk, each
//! message's role (an index into [`message_roles`]), Pi's estimate of its tokens and its timestamp,
//! as typed arrays, so no string and no message crosses per message. ObservationPack's step
//! reads it; the savings book's request uses the same three arrays.

use napi::bindgen_prelude::{Float64Array, Uint8Array};
use napi_derive::napi;
use sol_obspack::MessageKind;

/// The roles a request's messages are told apart by; a frame's `roles` index this list.
pub(crate) const ROLES: [&str; 9] = [
    "",
    "user",
    "assistant",
    "toolResult",
    "system",
    "custom",
    "bashExecution",
    "compactionSummary",
    "branchSummary",
];

/// The list a frame's role codes index (`""` at 0, for a role not in it).
#[napi]
pub fn message_roles() -> Vec<String> {
    ROLES.map(str::to_owned).to_vec()
}

/// The role at `code`, `""` for an unknown code.
pub(crate) fn role_of(code: u8) -> &'static str {
    ROLES.get(usize::from(code)).copied().unwrap_or("")
}

/// A provider request as the extension sized it, one entry per message in order.
#[napi(object)]
pub struct RequestFrame {
    /// Each message's role, an index into `messageRoles()`.
    pub roles: Uint8Array,
    /// Pi's estimate of each message's tokens.
    pub tokens: Float64Array,
    /// Each message's timestamp in milliseconds, NaN without a numeric one.
    pub stamps: Float64Array,
}

impl RequestFrame {
    /// Each message as ObservationPack's counts see it.
    pub(crate) fn kinds(&self) -> Vec<MessageKind> {
        self.roles
            .iter()
            .map(|&code| match role_of(code) {
                "assistant" => MessageKind::Assistant,
                "toolResult" => MessageKind::ToolResult,
                _ => MessageKind::Other,
            })
            .collect()
    }
}

/// Whether messages of these role codes end with a user prompt: the request starts one.
pub(crate) fn ends_with_prompt(roles: &[u8]) -> bool {
    roles.last().is_some_and(|&code| role_of(code) == "user")
}

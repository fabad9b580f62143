//! The request frame: a provider request as the extension sized it in its one walk, each
//! message's role (an index into [`message_roles`]), Pi's estimate of its tokens and its timestamp,
//! as typed arrays, so no string and no message crosses per message. ObservationPack's step
//! reads it; the savings book's request uses the same three arrays.

use napi::bindgen_prelude::{Float64Array, Uint8Array};
use napi_derive::napi;
use sol_core::message::{ROLE_CODES, role_of_code};
use sol_obspack::MessageKind;

/// The list a frame's role codes index (`""` at 0, for a role not in it).
#[napi]
pub fn message_roles() -> Vec<String> {
    ROLE_CODES.map(str::to_owned).to_vec()
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
            .map(|&code| match role_of_code(code) {
                "assistant" => MessageKind::Assistant,
                "toolResult" => MessageKind::ToolResult,
                _ => MessageKind::Other,
            })
            .collect()
    }
}

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Completes one prompt with a model chosen by provider and model id, blocking until the
/// reply. An asynchronous host does not need this trait: the mechanisms that call a model
/// hand it a [`ModelRequest`] as a value and take the reply back in a later step.
pub trait ModelClient {
    /// Sends `request` and waits for the whole reply.
    fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError>;
}

/// One single-turn model call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRequest {
    /// Provider id in the host's model registry.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// System prompt.
    pub system_prompt: String,
    /// The user turn.
    pub user_text: String,
    /// Upper bound on the reply's length.
    pub max_output_tokens: u32,
    /// Give up after this long (serialized as `timeoutMs`, whole milliseconds).
    #[serde(rename = "timeoutMs", with = "super::millis")]
    pub timeout: Duration,
}

/// A model's reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelReply {
    /// The reply's text blocks, concatenated.
    pub text: String,
    /// The tokens the call used, when the host knows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ModelUsage>,
}

impl ModelReply {
    /// A reply of `text` whose usage is not known.
    pub fn text(text: impl Into<String>) -> ModelReply {
        ModelReply {
            text: text.into(),
            usage: None,
        }
    }

    /// This reply, with the tokens the call used.
    pub fn with_usage(self, input_tokens: u64, output_tokens: u64) -> ModelReply {
        ModelReply {
            usage: Some(ModelUsage {
                input_tokens,
                output_tokens,
            }),
            ..self
        }
    }
}

/// The tokens one model call used, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// Tokens of the request.
    pub input_tokens: u64,
    /// Tokens of the reply.
    pub output_tokens: u64,
}

/// A model call that produced no reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The host has no such model, or no credentials for it.
    #[error("model {provider}/{model} is not available")]
    Unavailable {
        /// The requested provider id.
        provider: String,
        /// The requested model id.
        model: String,
    },
    /// No reply within the request's timeout.
    #[error("model call timed out after {} ms", .after.as_millis())]
    TimedOut {
        /// The timeout that expired.
        after: Duration,
    },
    /// The user aborted the turn.
    #[error("model call was aborted")]
    Aborted,
    /// The provider or the host reported an error.
    #[error("model call failed: {message}")]
    Failed {
        /// The provider's or host's description.
        message: String,
    },
}

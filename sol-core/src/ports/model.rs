use serde::{Deserialize, Serialize};

/// Completes one prompt with a model chosen by provider and model id.
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
    /// Give up after this many milliseconds.
    pub timeout_ms: u64,
}

/// A model's reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelReply {
    /// The reply's text blocks, concatenated.
    pub text: String,
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
    #[error("model call timed out after {after_ms} ms")]
    TimedOut {
        /// The timeout that expired.
        after_ms: u64,
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

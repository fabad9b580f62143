//! The model call: which model, the request, the reply, and what a failed call means.
//!
//! The reducer never calls a model itself. It builds a [`ModelRequest`] that the host
//! sends (a Pi extension through `ctx.modelRegistry.complete()`, a Rust host through a
//! [`sol_core::ModelClient`]) and reads back a [`ReducerReply`].
//!
//! ```
//! use sol_core::{ModelError, SolPiConfig};
//! use sol_reducer::model::{fallback_for_model_error, Route};
//! use sol_reducer::ReasonCode;
//!
//! let route = Route::from_config(&SolPiConfig::default());
//! assert_eq!(route.to_string(), "openai-codex/gpt-5.6-luna");
//! let fallback = fallback_for_model_error(&ModelError::TimedOut { after: sol_reducer::MODEL_TIMEOUT });
//! assert_eq!(fallback.reason, ReasonCode::ModelCallTimeout);
//! ```

use serde::{Deserialize, Serialize};
use sol_core::{ModelError, ModelReply, ModelRequest, SolPiConfig};

use crate::prompt::{SYSTEM_PROMPT, user_text};
use crate::reason::{Fallback, ReasonCode};
pub use crate::records::Usage;
use crate::source::Source;
use crate::{MAX_OUTPUT_TOKENS, MODEL_TIMEOUT};

/// The reducer model: a provider id and a model id in the host's model registry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Route {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub model: String,
}

impl Route {
    /// A route from its two ids.
    pub fn new(provider: impl Into<String>, model: impl Into<String>) -> Route {
        Route {
            provider: provider.into(),
            model: model.into(),
        }
    }

    /// The route `sol-pi.json` configures (`evidencePreservingReducerProvider`/`…Model`).
    pub fn from_config(config: &SolPiConfig) -> Route {
        Route::new(
            config.evidence_preserving_reducer_provider.clone(),
            config.evidence_preserving_reducer_model.clone(),
        )
    }
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.provider, self.model)
    }
}

/// The request for `source`: the reducer instructions, the framed log, at most
/// [`MAX_OUTPUT_TOKENS`] output tokens (a host caps this at the model's own limit) and a
/// [`MODEL_TIMEOUT`] timeout. A Pi host also sets `cacheRetention: "none"`.
pub fn model_request(source: &Source, route: &Route) -> ModelRequest {
    ModelRequest {
        provider: route.provider.clone(),
        model: route.model.clone(),
        system_prompt: SYSTEM_PROMPT.to_owned(),
        user_text: user_text(source),
        max_output_tokens: MAX_OUTPUT_TOKENS,
        timeout: MODEL_TIMEOUT,
    }
}

/// The reducer model's answer, as the host received it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReducerReply {
    /// The reply's text blocks, concatenated.
    pub text: String,
    /// The provider that answered.
    pub provider: String,
    /// The model that answered.
    pub model: String,
    /// The stop reason the host reported, if it reports one; anything other than `stop`
    /// or `length` is an error.
    pub stop_reason: Option<String>,
    /// The error message that came with the reply, if any.
    pub error_message: Option<String>,
    /// Tokens used.
    pub usage: Usage,
}

impl ReducerReply {
    /// A reply from a [`sol_core::ModelClient`]: its text, and its usage when the host
    /// knows it (the total is input plus output; no cache figures).
    pub fn from_model_reply(reply: ModelReply, route: &Route) -> ReducerReply {
        let usage = reply.usage.map_or_else(Usage::default, |usage| Usage {
            input: usage.input_tokens,
            output: usage.output_tokens,
            total_tokens: usage.input_tokens.saturating_add(usage.output_tokens),
            ..Usage::default()
        });
        ReducerReply {
            usage,
            ..ReducerReply::from_text(reply.text, route)
        }
    }

    /// A reply of text alone, with no usage.
    pub fn from_text(text: impl Into<String>, route: &Route) -> ReducerReply {
        ReducerReply {
            text: text.into(),
            provider: route.provider.clone(),
            model: route.model.clone(),
            stop_reason: None,
            error_message: None,
            usage: Usage::default(),
        }
    }

    /// Whether the model finished normally (stop reason `stop`, `length`, or none given).
    pub fn finished(&self) -> bool {
        matches!(self.stop_reason.as_deref(), None | Some("stop" | "length"))
    }
}

/// The fallback for a model call that produced no reply.
pub fn fallback_for_model_error(error: &ModelError) -> Fallback {
    let reason = match error {
        ModelError::Unavailable { .. } => ReasonCode::ReducerModelUnavailable,
        ModelError::TimedOut { .. } => ReasonCode::ModelCallTimeout,
        ModelError::Aborted => ReasonCode::ModelCallAborted,
        ModelError::Failed { .. } => ReasonCode::ModelCallException,
    };
    Fallback::new(reason).with(|facts| facts.error_message = Some(error.to_string()))
}

//! The step account as JavaScript sees it: what one step saved and cost.

use napi_derive::napi;
use sol_core::StepAccount;

/// What one step saved and what it cost (see `sol_core::StepAccount`); numbers, never
/// negative.
#[napi(object, js_name = "StepAccount")]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct JsStepAccount {
    /// UTF-8 bytes removed from what the model is sent.
    pub bytes_removed: f64,
    /// Tokens removed, by Pi's estimate.
    pub tokens_removed: f64,
    /// Provider requests made unnecessary.
    pub requests_avoided: f64,
    /// Model calls the mechanism made itself.
    pub model_calls: f64,
    /// Input tokens of those calls, where reported.
    pub model_input_tokens: f64,
    /// Output tokens of those calls, where reported.
    pub model_output_tokens: f64,
}

/// A step's account as it crosses (the reducer's finished step shows it; the savings book
/// took it inside Rust already): absent when the step saved and cost nothing.
pub(crate) fn crossing(account: StepAccount) -> Option<JsStepAccount> {
    (account != StepAccount::default()).then(|| account.into())
}

impl From<StepAccount> for JsStepAccount {
    fn from(account: StepAccount) -> JsStepAccount {
        JsStepAccount {
            bytes_removed: account.bytes_removed as f64,
            tokens_removed: account.tokens_removed as f64,
            requests_avoided: account.requests_avoided as f64,
            model_calls: account.model_calls as f64,
            model_input_tokens: account.model_input_tokens as f64,
            model_output_tokens: account.model_output_tokens as f64,
        }
    }
}

/// A count from JavaScript: finite and non-negative, else 0 (sizes and token counts are
/// never negative; anything else counts as nothing).
pub(crate) fn count(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        value as u64
    } else {
        0
    }
}

//! Exports only the JavaScript tests call, compiled with the `test-hooks` feature: the addon
//! `npm run build` makes (the one the packages ship, whose typings are `index.d.ts`) has none
//! of them. The JS suites load a debug build with the feature (`sol-napi/test/hooks.mjs`).
//!
//! - `__panicForTests`: a panic inside an export, to prove it reaches JavaScript as an error
//!   and the process keeps running;
//! - `fusionPlanCall`: the first step of a fused call alone (its `then_run` check and path
//!   resolution), to test those against the shared fixtures without running a tool;
//! - `occSizeMessages`, `occObservedMessages`: how `sol-occ` sizes and identifies messages
//!   from the whole messages and from the extension's sizes, which must agree;
//! - `frameInPlace`: the request frame taken from Rust, reading Pi's messages where they are,
//!   for the benchmark that weighs it against the extension's walk.

use napi::bindgen_prelude::{Array, Either, Float64Array, Object, Uint8Array};
use napi::{Env, JsString};
use napi_derive::napi;
use serde_json::Value;
use sol_core::message::{AgentMessage, IMAGE_CHARS, ROLE_CODES, js_json_length, tokens_from_chars};
use sol_fusion::fused;
use sol_occ::tokens::SizedMessage;

use crate::boundary::quiet;
use crate::frame::RequestFrame;
use crate::fusion::path_context;
use crate::occ::{OccObservedMessage, observed_list};

/// Panics on purpose, so the tests can prove a Rust panic reaches JavaScript as
/// an error and leaves the process running. Never called by the extension.
#[napi(catch_unwind, js_name = "__panicForTests")]
pub fn panic_for_tests(message: String) {
    quiet(|| panic!("{message}"));
}

/// A call as the model sent it, for [`fusion_plan_call`].
#[napi(object)]
pub struct FusionCallRequest {
    /// The tool's `path` argument, unresolved.
    pub path: String,
    /// `JSON.stringify(args.then_run)`, absent when the call has no `then_run`.
    pub then_run_json: Option<String>,
    /// `ctx.cwd`.
    pub cwd: String,
    /// The user's home directory.
    pub home: String,
    /// True on native Windows (drive-path forms apply).
    pub windows: bool,
}

/// The follow-up command of a fused call.
#[napi(object)]
pub struct ThenRunArgs {
    /// The bash command, unchanged.
    pub command: String,
    /// Timeout in seconds, when given.
    pub timeout: Option<f64>,
}

/// What to do with a call: `ok` with the resolved target (absent when the path
/// could not be resolved for a plain call, which then runs unqueued), or an
/// error to return to the model before anything is changed.
#[napi(object)]
pub struct FusionCallPlan {
    /// False: reject the call with `error`; nothing has been changed.
    pub ok: bool,
    /// The tool error for the model.
    pub error: Option<String>,
    /// Stable code of that error.
    pub error_code: Option<String>,
    /// The absolute target path, the key of the per-file queue.
    pub target: Option<String>,
    /// The follow-up command, when the call has one.
    pub then_run: Option<ThenRunArgs>,
}

/// Checks `then_run` and resolves the target path of an `edit`/`write` call, as the
/// first step of a `FusedCall` does.
#[napi(catch_unwind)]
pub fn fusion_plan_call(request: FusionCallRequest) -> FusionCallPlan {
    quiet(|| {
        let ctx = path_context(&request.cwd, &request.home, request.windows);
        match fused::plan(&request.path, request.then_run_json.as_deref(), &ctx) {
            Ok(plan) => FusionCallPlan {
                ok: true,
                error: None,
                error_code: None,
                target: plan.target,
                then_run: plan.then_run.map(|then_run| ThenRunArgs {
                    command: then_run.command,
                    timeout: then_run.timeout_seconds,
                }),
            },
            Err((code, message)) => FusionCallPlan {
                ok: false,
                error: Some(message),
                error_code: Some(code.to_owned()),
                target: None,
                then_run: None,
            },
        }
    })
}

/// One message as `sol-occ` sizes it from the whole message (for the host's size check).
#[napi(object)]
pub struct OccSizedMessage {
    /// The role as `sol-occ` reads it.
    pub role: String,
    /// Pi's estimate of the message.
    pub tokens: f64,
    /// Its identity across views.
    pub key: String,
}

impl From<SizedMessage> for OccSizedMessage {
    fn from(message: SizedMessage) -> OccSizedMessage {
        OccSizedMessage {
            role: message.role.as_str().to_owned(),
            tokens: message.tokens as f64,
            key: message.key,
        }
    }
}

/// How `sol-occ` sizes these messages; the host's own sizing must give the same.
#[napi(catch_unwind, ts_args_type = "messages: ReadonlyArray<unknown>")]
pub fn occ_size_messages(messages: Vec<Value>) -> Vec<OccSizedMessage> {
    quiet(|| {
        let messages: Vec<AgentMessage> =
            messages.into_iter().map(AgentMessage::from_value).collect();
        SizedMessage::from_messages(&messages)
            .into_iter()
            .map(OccSizedMessage::from)
            .collect()
    })
}

/// How `sol-occ` identifies host-sized messages (for the host's size check).
#[napi(catch_unwind)]
pub fn occ_observed_messages(observed: Vec<OccObservedMessage>) -> Vec<OccSizedMessage> {
    quiet(|| {
        observed_list(observed)
            .into_iter()
            .map(OccSizedMessage::from)
            .collect()
    })
}

/// Pi's messages sized where they are, from Rust: each message's role code, Pi's estimate of
/// its tokens (the UTF-16 length of its texts and thinking, a tool call's name and its
/// arguments as JSON, an image's fixed size, four characters to a token) and its numeric
/// timestamp, read property by property through Node-API; no message is converted whole.
/// For the benchmark that weighs a walk from Rust against the extension's request frame
/// (`scripts/bench-frame-walk.mjs`); the extension never calls it.
#[napi(catch_unwind)]
pub fn frame_in_place(env: Env, messages: Array<'_>) -> napi::Result<RequestFrame> {
    let count = messages.len();
    let (mut roles, mut tokens, mut stamps) = (Vec::new(), Vec::new(), Vec::new());
    for index in 0..count {
        // One handle scope per message: the handles it reads are released after it.
        let (code, size, stamp) = env.run_in_scope(|| sized_in_place(&messages, index))?;
        roles.push(code);
        tokens.push(size);
        stamps.push(stamp);
    }
    Ok(RequestFrame {
        roles: Uint8Array::new(roles),
        tokens: Float64Array::new(tokens),
        stamps: Float64Array::new(stamps),
    })
}

/// The role code, the estimate and the numeric timestamp (NaN without one) of the message at
/// `index`, read where it is.
fn sized_in_place(messages: &Array<'_>, index: u32) -> napi::Result<(u8, f64, f64)> {
    let Some(message) = messages.get::<Object<'_>>(index)? else {
        return Ok((0, 0.0, f64::NAN));
    };
    let role: Option<String> = message.get("role")?;
    let code = role
        .as_deref()
        .and_then(|role| ROLE_CODES.iter().position(|known| *known == role))
        .map_or(0, |code| u8::try_from(code).unwrap_or(0));
    let stamp = message.get::<f64>("timestamp")?.unwrap_or(f64::NAN);
    let mut chars = 0u64;
    match message.get::<Either<JsString<'_>, Array<'_>>>("content")? {
        Some(Either::A(text)) => chars += text.utf16_len()? as u64,
        Some(Either::B(blocks)) => {
            for at in 0..blocks.len() {
                let Some(block) = blocks.get::<Object<'_>>(at)? else {
                    continue;
                };
                let kind: Option<String> = block.get("type")?;
                chars += match kind.as_deref() {
                    Some("text") => utf16_len(block.get::<JsString<'_>>("text")?)?,
                    Some("thinking") => utf16_len(block.get::<JsString<'_>>("thinking")?)?,
                    Some("image") => IMAGE_CHARS,
                    Some("toolCall") => {
                        let name = utf16_len(block.get::<JsString<'_>>("name")?)?;
                        let arguments: Option<Value> = block.get("arguments")?;
                        name + arguments.as_ref().map_or(0, js_json_length)
                    }
                    _ => 0,
                };
            }
        }
        None => {}
    }
    #[allow(
        clippy::cast_precision_loss,
        reason = "token counts are far below 2^52"
    )]
    Ok((code, tokens_from_chars(chars) as f64, stamp))
}

/// The UTF-16 length of a string property, 0 without one.
fn utf16_len(text: Option<JsString<'_>>) -> napi::Result<u64> {
    Ok(text.map(|text| text.utf16_len()).transpose()?.unwrap_or(0) as u64)
}

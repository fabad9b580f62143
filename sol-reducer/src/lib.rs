//! # sol-reducer: Evidence-Preserving Reducer
//!
//! Evidence-Preserving Reducer is one of the four SoL-Pi token-efficiency mechanisms: long
//! build and test logs are replaced by a model-written receipt, accepted only when every quote
//! is found byte for byte in the archived log. On any doubt the original result is kept.
//!
//! This crate is sans-IO. It never calls a model or reads a file itself: the model call goes
//! through the `sol_core::ModelClient` port (or the host's own client, fed a [`ModelRequest`]
//! built here) and archives through `sol_core::FileSystem`. It reads no clock, no environment
//! and spawns no process; everything it needs arrives as input, and every decision, text and
//! record leaves as a value.
//!
//! [`ModelRequest`]: sol_core::ModelRequest
//!
//! The mechanism is opt-in: it is active only when `sol-pi.json` sets
//! `evidencePreservingReducer` to `true`.
//!
//! ```
//! use sol_core::SolPiConfig;
//!
//! let config = SolPiConfig { evidence_preserving_reducer: true, ..SolPiConfig::default() };
//! assert!(sol_reducer::is_enabled(&config));
//! assert!(!sol_reducer::is_enabled(&SolPiConfig::default()));
//! ```
//!
//! # The pipeline
//!
//! For each result, in this order (each step can end in a [`Fallback`], which leaves the
//! result untouched and names a [`ReasonCode`]):
//!
//! 1. [`candidate`]: a [`ShellResult`] (the harness-neutral input: command, [`ExitStatus`],
//!    output, optionally a full-output log the host trusts) whose command is one of the
//!    [`Policy`]'s build or test commands ([`command::CommandSet`], the specification's list
//!    by default). Pi's tool results go through the [`pi`] adapter: a direct `bash` result or
//!    a fused `edit`/`write` result; codemode script calls and the `codemode` tool never are.
//!    The adapter reads Pi's exit signals ([`exit`], a leaf module the candidate selection
//!    shares) and its trusted `pi-bash-*.log`.
//! 2. [`source`]: the exact log (the full-output log when there is one), between 4,096 bytes
//!    and 600,000 characters, with an exit signal that agrees with the failure flag (only a Pi
//!    result can disagree), and no likely secret ([`secret`]).
//! 3. [`archive`]: the log is stored content-addressed before any model call.
//! 4. [`prompt`] and [`model`]: the request for the reducer model, the log framed as
//!    untrusted data; or a verified receipt from the [`cache`].
//! 5. [`receipt`]: the reply must be a schema-valid receipt whose every quote is in the log
//!    byte for byte, with failure evidence for a failed command: each failing test the log
//!    names, or what else identifies the failure ([`failure`]).
//! 6. [`render`]: the receipt text (naming the policy's shell tool for reading the archive
//!    back), the projected content (only the log is replaced) and
//!    `details.evidencePreservingReducer`; [`journal`] records and the TUI [`notice`].
//!
//! [`step::Reduction`] runs all of it as a sans-IO step: `start` returns the decision or the
//! model request, `finish` takes the reply and returns the decision, each with its journal
//! records and a `sol_core::StepAccount`. [`driver::reduce`] drives it over the ports for a
//! blocking Rust host, [`driver::reduce_with`] around a blocking closure that calls the
//! model; an asynchronous host (the Pi extension, or any `async` Rust host)
//! drives the same two steps around its own model call.
//!
//! # Any harness: a shell result in
//!
//! ```
//! use sol_reducer::camino::Utf8Path;
//! use sol_reducer::sol_core::testing::{MemoryFileSystem, MemorySessionStore, ScriptedModelClient};
//! use sol_reducer::driver::{reduce, Decision, Ports, ReduceContext};
//! use sol_reducer::{ExitStatus, Policy, ReasonCode, Route, ShellResult};
//!
//! let output = "a.c:3:1: error: expected ';' before '}' token\n".repeat(100);
//! let model = ScriptedModelClient::new(); // no receipt queued: the call fails
//! let (fs, session) = (MemoryFileSystem::new(), MemorySessionStore::new());
//! let ports = Ports { fs: &fs, model: &model, session: &session };
//! let route = Route::new("my-provider", "my-small-model");
//! let policy = Policy::default().with_shell_tool("shell");
//! let root = Utf8Path::new("/var/lib/my-agent/session-1");
//! let context = ReduceContext::new(&route, root, "2025-06-01T12:00:00.000Z").with_policy(&policy);
//! let run = ShellResult {
//!     call_id: "7", command: "make", exit: ExitStatus::Code(2), output: &output,
//!     full_output_log: None,
//! };
//! // Any doubt keeps the result as it was.
//! assert_eq!(reduce(&run, &ports, &context, None), Decision::Unchanged(ReasonCode::ModelCallException));
//! ```
//!
//! # An asynchronous host
//!
//! The pending reduction and its request are `Send + 'static`, so an `async` host can hold
//! them across its own model call (here under a tiny executor; any runtime works the same):
//!
//! ```
//! use sol_reducer::camino::Utf8Path;
//! use sol_reducer::sol_core::testing::MemoryFileSystem;
//! use sol_reducer::sol_core::{ModelError, ModelReply, ModelRequest};
//! use sol_reducer::serde_json::json;
//! use sol_reducer::step::{Reduction, Start};
//! use sol_reducer::{ExitStatus, Policy, ReduceContext, ReducerReply, Route, ShellResult};
//!
//! /// The host's own asynchronous model client.
//! async fn ask_model(_request: ModelRequest, log_sha256: String) -> Result<ModelReply, ModelError> {
//!     let receipt = json!({
//!         "schema": "sol-pi-evidence-receipt/1", "source_sha256": log_sha256,
//!         "status": "failure", "uncertain": false,
//!         "evidence": [{"kind": "failure", "quote": "test parser::rejects_empty ... FAILED"}],
//!     });
//!     Ok(ModelReply::text(receipt.to_string()).with_usage(1500, 90))
//! }
//!
//! let log = format!("{}test parser::rejects_empty ... FAILED\n", "test a::b ... ok\n".repeat(300));
//! let route = Route::new("my-provider", "my-small-model");
//! let fs = MemoryFileSystem::new();
//! let done = futures_executor::block_on(async {
//!     let context = ReduceContext {
//!         route: &route,
//!         runtime_root: Utf8Path::new("/var/lib/my-agent/session-1"),
//!         timestamp: "2025-06-01T12:00:00.000Z",
//!         policy: Policy::pi(),
//!         economy: None,
//!     };
//!     let run = ShellResult {
//!         call_id: "7", command: "cargo test", exit: ExitStatus::Code(101), output: &log,
//!         full_output_log: None,
//!     };
//!     let ask = match Reduction::start(&run, &context, &fs, None) {
//!         Start::Done(done) => return done,
//!         Start::AskModel(ask) => ask,
//!     };
//!     // (append ask.journal to the session here, before the call)
//!     let reply = ask_model(ask.request, sol_reducer::sha256_hex(log.as_bytes())).await;
//!     let answer = reply.map(|reply| ReducerReply::from_model_reply(reply, &route));
//!     ask.reduction.finish(answer, "2025-06-01T12:00:02.000Z", None)
//! });
//! let replacement = done.decision.replacement().expect("a verified receipt");
//! assert!(replacement.receipt_text.contains("\nreducer_total_tokens=1590\n"));
//! assert_eq!((done.account.model_input_tokens, done.account.model_output_tokens), (1500, 90));
//! ```
//!
//! # Example: Pi's failing `cargo test` result reduced by a scripted model
//!
//! ```
//! use camino::Utf8Path;
//! use serde_json::json;
//! use sol_core::message::ContentBlock;
//! use sol_core::testing::{MemoryFileSystem, MemorySessionStore, ScriptedModelClient};
//! use sol_reducer::driver::{reduce, Decision, Ports, ReduceContext};
//! use sol_reducer::{Policy, Route, ToolResultView};
//!
//! let log = format!(
//!     "{}test parser::rejects_empty ... FAILED\nerror: test failed, to rerun pass `--lib`\n",
//!     "test parser::accepts_ident ... ok\n".repeat(150),
//! );
//! let text = format!("{log}\n\nCommand exited with code 101");
//! let source_sha256 = sol_reducer::sha256_hex(log.as_bytes());
//! let model = ScriptedModelClient::new().with_reply(json!({
//!     "schema": "sol-pi-evidence-receipt/1",
//!     "source_sha256": source_sha256,
//!     "status": "failure",
//!     "uncertain": false,
//!     "evidence": [{"kind": "failure", "quote": "test parser::rejects_empty ... FAILED"}],
//! }).to_string());
//! let (fs, session) = (MemoryFileSystem::new(), MemorySessionStore::new());
//! let ports = Ports { fs: &fs, model: &model, session: &session };
//! let route = Route::new("openai-codex", "gpt-5.6-luna");
//! let context = ReduceContext {
//!     route: &route,
//!     runtime_root: Utf8Path::new("/s/sol-pi/abc"),
//!     policy: Policy::pi(),
//!     economy: None,
//!     timestamp: "2025-06-01T12:00:00.000Z",
//! };
//! let input = json!({"command": "cargo test"});
//! let content = [ContentBlock::text(text)];
//! let result = ToolResultView {
//!     tool_call_id: "call_1", tool_name: "bash", input: &input, content: &content,
//!     is_error: true, exit_code: Some(101), ..ToolResultView::default()
//! };
//!
//! let Decision::Replaced(replacement) = reduce(&result, &ports, &context, None) else {
//!     panic!("the receipt is valid");
//! };
//! let text = replacement.content[0].as_text().unwrap_or_default();
//! assert!(text.starts_with("sol_pi_evidence_receipt_v1\nstatus=failure\n"));
//! assert!(text.ends_with("\n\nCommand exited with code 101"));
//! assert!(replacement.bytes_removed() > 3000);
//! // The original log is archived, and every decision is journaled.
//! assert_eq!(fs.file(format!(
//!     "/s/sol-pi/abc/evidence-preserving-reducer/objects/{}/{source_sha256}.txt",
//!     &source_sha256[..2],
//! )), Some(log.into_bytes()));
//! let kinds: Vec<_> = session.entries().iter().map(|e| e.data["kind"].clone()).collect();
//! assert_eq!(kinds, ["candidate", "provider_response", "applied"]);
//! ```
//!
//! # One dependency
//!
//! The `sol-core` types (and `camino` paths, where they appear) of this crate's signatures are
//! re-exported, so a host needs no other dependency line for them:
//!
//! ```
//! use sol_reducer::camino::Utf8Path;
//! use sol_reducer::sol_core::StepAccount;
//! assert_eq!(Utf8Path::new("/tmp/pi-bash-1.log").extension(), Some("log"));
//! assert!(StepAccount::default().is_empty());
//! ```

// The crates our public signatures use, so that one dependency line is enough.
#[doc(no_inline)]
pub use camino;
#[doc(no_inline)]
pub use serde_json;
#[doc(no_inline)]
pub use sol_core;
/// The real ports over the operating system (`host::OsFileSystem`, ...), for a Rust host
/// that adds this crate with `features = ["host"]`; the mechanism itself never uses them.
#[cfg(feature = "host")]
pub use sol_host as host;

pub mod archive;
pub mod cache;
pub mod candidate;
pub mod command;
mod digest;
pub mod driver;
pub mod economics;
pub mod exit;
pub mod failure;
pub mod journal;
pub mod model;
pub mod notice;
pub mod pi;
pub mod policy;
pub mod prompt;
pub mod reason;
pub mod receipt;
pub mod records;
pub mod render;
pub mod secret;
pub mod source;
pub mod step;

pub use cache::ReceiptCache;
pub use candidate::{Candidate, CandidateInput, ExitStatus, ShellResult};
pub use driver::{Ports, reduce};
pub use model::{ReducerReply, Route, Usage};
pub use pi::{ToolResultView, select_candidate};
pub use policy::Policy;
pub use reason::{Fallback, FallbackFacts, ReasonCode};
pub use receipt::{ReceiptCheck, VerifiedReceipt, validate_receipt};
pub use render::Replacement;
pub use source::{FullOutput, Source, prepare_source};
pub use step::{AskModel, Decision, Done, ReduceContext, Reduction, Start};

use sol_core::{Mechanism, SolPiConfig};

/// The mechanism this crate implements.
pub const MECHANISM: Mechanism = Mechanism::EvidencePreservingReducer;

/// Whether the configuration turns this mechanism on.
pub fn is_enabled(config: &SolPiConfig) -> bool {
    config.is_enabled(MECHANISM)
}

/// Custom session entry type of the journal.
pub const ENTRY_TYPE: &str = "sol-pi-evidence-preserving-reducer-v1";
/// `schema` of every journal record and of `details.evidencePreservingReducer`.
pub const JOURNAL_SCHEMA: &str = "sol-pi-evidence-preserving-reducer/1";
/// `schema` the reducer model must put in its JSON receipt.
pub const RECEIPT_SCHEMA: &str = "sol-pi-evidence-receipt/1";
/// First line of every receipt text.
pub const RECEIPT_PREFIX: &str = "sol_pi_evidence_receipt_v1";
/// Key of the reducer's object in a reduced result's `details`.
pub const DETAILS_KEY: &str = "evidencePreservingReducer";
/// The reducer's directory under a session's runtime root.
pub const STORE_DIR: &str = "evidence-preserving-reducer";

/// Most evidence items a receipt may carry.
pub const MAX_EVIDENCE_ITEMS: usize = 12;
/// Longest quote, in UTF-16 code units (characters, for text without emoji).
pub const MAX_QUOTE_CHARS: usize = 600;
/// Shortest log worth reducing, in UTF-8 bytes.
pub const MIN_SOURCE_BYTES: usize = 4096;
/// Longest log that is reduced, in UTF-16 code units (JavaScript string length).
pub const MAX_SOURCE_CHARS: usize = 600_000;
/// Most bytes read from Pi's full-output file: three UTF-8 bytes per UTF-16 unit of
/// [`MAX_SOURCE_CHARS`]; a larger file cannot hold a reducible log.
pub const MAX_FULL_OUTPUT_BYTES: u64 = 3 * MAX_SOURCE_CHARS as u64;
/// Output-token limit of the reducer model call.
pub const MAX_OUTPUT_TOKENS: u32 = 2048;
/// Timeout of the reducer model call.
pub const MODEL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(90);
/// Largest reply that is parsed, in bytes: far above any valid receipt (12 quotes of 600
/// characters, escaped), far below what would make parsing costly.
pub const MAX_REPLY_BYTES: usize = 64 * 1024;
/// Entries of the receipt cache.
pub const RECEIPT_CACHE_CAPACITY: usize = 64;

/// The lower-case hex SHA-256 of `bytes`, as used for `source_sha256`, `command_sha256`,
/// `quote_sha256` and archive names.
pub fn sha256_hex(bytes: &[u8]) -> String {
    digest::sha256_hex(bytes)
}

/// The README example, compiled and run as a doctest so that it cannot drift (it uses the
/// real ports of the `host` feature).
#[cfg(all(doctest, feature = "host"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

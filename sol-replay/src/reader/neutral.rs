//! The harness-neutral trajectory: what any agent harness's history amounts to for a replay
//! (prompts, replies with their tool calls, reported usage and model, tool results,
//! timestamps), and the readers of other harnesses' formats that make one.
//!
//! A [`Trajectory`] is built step by step and becomes the [`Session`] Pi would have written
//! for the same conversation ([`Trajectory::into_session`]), which the replay takes like any
//! Pi file. Another harness plugs in with one function from its file to a `Trajectory`, and
//! one [`Format`](super::formats::Format) entry naming it and telling its files apart
//! ([`FORMATS`](super::formats::FORMATS), [`detect`](super::formats::detect)); `sol-pi replay`
//! tries every entry before it reads a file as a Pi session.
//!
//! ```
//! use sol_replay::reader::neutral::{Step, Trajectory, Usage};
//! use sol_replay::replay::{Policy, ReplayOptions, replay_session};
//!
//! let mut run = Trajectory::new("my-harness-run-1");
//! run.push(Step::prompt("Fix the failing test.", 0));
//! run.push(Step::reply("Running the tests.", 1_000)
//!     .call("c1", "bash", serde_json::json!({"command": "cargo test"}))
//!     .usage(Usage { input: 1_200, cache_read: 0, cache_write: 0, output: 40 })
//!     .model("anthropic", "claude-sonnet-4-5"));
//! run.push(Step::result("c1", "bash", "test parse ... FAILED", true, 2_000));
//! run.push(Step::reply("The parser drops the sign.", 3_000)
//!     .usage(Usage { input: 60, cache_read: 1_200, cache_write: 0, output: 30 }));
//! let session = run.into_session("run-1.json").expect("a session");
//! assert_eq!(session.active_branch().len(), 4);
//! let replayed = replay_session(&session, &ReplayOptions::default());
//! assert_eq!(replayed.branches[0].row(Policy::PlainPi).requests, 2);
//! ```

use serde_json::{Value, json};

use super::{ReadError, ReadLimits, Session, read_session_limited};

/// The usage a provider reported for one reply, in tokens: `input` the uncached prompt
/// tokens, `cache_read` and `cache_write` the cached ones, `output` the reply's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Prompt tokens neither read from nor written to the cache.
    pub input: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache.
    pub cache_write: u64,
    /// The reply's tokens.
    pub output: u64,
}

/// One tool call of a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The call's id, which its result names.
    pub id: String,
    /// The tool's name (Pi's own names, `bash`, `read`, `edit`, `write`, mean what they mean
    /// in Pi: an `edit` or `write` then `bash` is Action Fusion's opportunity).
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
}

/// One step of a trajectory; `at_ms` is when it happened (Unix milliseconds; 0 where the
/// harness keeps no time).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The system prompt.
    System {
        /// Its text.
        text: String,
        /// When.
        at_ms: i64,
    },
    /// A user prompt.
    Prompt {
        /// Its text.
        text: String,
        /// When.
        at_ms: i64,
    },
    /// A model reply: one provider request answered.
    Reply {
        /// Its text.
        text: String,
        /// The tools it called.
        calls: Vec<Call>,
        /// The usage its provider reported, if the harness kept it.
        usage: Option<Usage>,
        /// The provider and model that answered, if known.
        model: Option<(String, String)>,
        /// When.
        at_ms: i64,
    },
    /// A tool call's result.
    Result {
        /// The call it answers.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// Its text.
        text: String,
        /// The tool reported a failure.
        is_error: bool,
        /// When.
        at_ms: i64,
    },
}

impl Step {
    /// A user prompt.
    pub fn prompt(text: impl Into<String>, at_ms: i64) -> Step {
        Step::Prompt {
            text: text.into(),
            at_ms,
        }
    }

    /// A reply without calls, usage or model yet ([`call`](Self::call),
    /// [`usage`](Self::usage), [`model`](Self::model) add them).
    pub fn reply(text: impl Into<String>, at_ms: i64) -> Step {
        Step::Reply {
            text: text.into(),
            calls: Vec::new(),
            usage: None,
            model: None,
            at_ms,
        }
    }

    /// A tool call's result.
    pub fn result(
        call_id: impl Into<String>,
        tool: impl Into<String>,
        text: impl Into<String>,
        is_error: bool,
        at_ms: i64,
    ) -> Step {
        Step::Result {
            call_id: call_id.into(),
            tool: tool.into(),
            text: text.into(),
            is_error,
            at_ms,
        }
    }

    /// This reply with one more tool call (another step is unchanged).
    pub fn call(
        mut self,
        id: impl Into<String>,
        tool: impl Into<String>,
        arguments: Value,
    ) -> Step {
        if let Step::Reply { calls, .. } = &mut self {
            calls.push(Call {
                id: id.into(),
                tool: tool.into(),
                arguments,
            });
        }
        self
    }

    /// This reply with the usage its provider reported (another step is unchanged).
    pub fn usage(mut self, reported: Usage) -> Step {
        if let Step::Reply { usage, .. } = &mut self {
            *usage = Some(reported);
        }
        self
    }

    /// This reply as answered by `provider`'s `model` (another step is unchanged).
    pub fn model(mut self, provider: impl Into<String>, name: impl Into<String>) -> Step {
        if let Step::Reply { model, .. } = &mut self {
            *model = Some((provider.into(), name.into()));
        }
        self
    }

    /// The Pi message of this step.
    fn message(&self) -> Value {
        match self {
            Step::System { text, at_ms } => {
                json!({"role": "system", "content": text, "timestamp": at_ms})
            }
            Step::Prompt { text, at_ms } => {
                json!({"role": "user", "content": text, "timestamp": at_ms})
            }
            Step::Reply {
                text,
                calls,
                usage,
                model,
                at_ms,
            } => {
                let mut content = vec![json!({"type": "text", "text": text})];
                content.extend(calls.iter().map(|call| {
                    json!({"type": "toolCall", "id": call.id, "name": call.tool, "arguments": call.arguments})
                }));
                let mut reply = json!({
                    "role": "assistant",
                    "content": content,
                    "stopReason": if calls.is_empty() { "stop" } else { "toolUse" },
                    "timestamp": at_ms,
                });
                if let Some(usage) = usage {
                    reply["usage"] = json!({
                        "input": usage.input,
                        "cacheRead": usage.cache_read,
                        "cacheWrite": usage.cache_write,
                        "output": usage.output,
                    });
                }
                if let Some((provider, name)) = model {
                    reply["provider"] = json!(provider);
                    reply["model"] = json!(name);
                }
                reply
            }
            Step::Result {
                call_id,
                tool,
                text,
                is_error,
                at_ms,
            } => json!({
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": tool,
                "content": [{"type": "text", "text": text}],
                "isError": is_error,
                "timestamp": at_ms,
            }),
        }
    }
}

/// A harness-neutral trajectory: one conversation, step by step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trajectory {
    /// The run's name (the session's id).
    pub id: String,
    /// Its steps, in order.
    pub steps: Vec<Step>,
}

impl Trajectory {
    /// An empty trajectory named `id`.
    pub fn new(id: impl Into<String>) -> Trajectory {
        Trajectory {
            id: id.into(),
            steps: Vec::new(),
        }
    }

    /// Adds the next step.
    pub fn push(&mut self, step: Step) {
        self.steps.push(step);
    }

    /// The Pi session (format 3, one chain of message entries) this trajectory amounts to,
    /// read as [`read_session_limited`] reads a file (`file` names it in messages).
    pub fn into_session(self, file: &str) -> Result<Session, ReadError> {
        let mut lines = String::new();
        let mut push = |value: Value| {
            lines.push_str(&value.to_string());
            lines.push('\n');
        };
        push(
            json!({"type": "session", "version": 3, "id": self.id, "timestamp": "1970-01-01T00:00:00.000Z", "cwd": "/"}),
        );
        for (index, step) in self.steps.iter().enumerate() {
            let parent = index.checked_sub(1).map(|before| format!("m{before}"));
            push(
                json!({"type": "message", "id": format!("m{index}"), "parentId": parent, "timestamp": "1970-01-01T00:00:00.000Z", "message": step.message()}),
            );
        }
        read_session_limited(file, lines.as_bytes(), ReadLimits::default(), |_| {})
    }
}

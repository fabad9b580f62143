//! mini-swe-agent trajectories (`trajectory_format: "mini-swe-agent-1"`), read as the Pi
//! session they amount to, so the replay takes them as it takes Pi's files.
//!
//! A trajectory is one JSON object whose `messages` are the conversation: a system prompt,
//! the task, then each assistant reply with one ```` ```bash ```` block (the command it runs)
//! and the next user message holding the command's output. Each reply carries the usage its
//! provider billed under `extra.response.usage` (OpenAI's shape: `prompt_tokens`,
//! `completion_tokens`, `prompt_tokens_details.cached_tokens`). The reader writes the
//! session Pi would have written for the same conversation: the reply's text and a `bash`
//! tool call with the command, the output as that call's result (an error when its
//! `<returncode>` is not 0), the usage as Pi's (`input` the uncached prompt tokens,
//! `cacheRead` the cached ones), the model as `provider/model` from the response.

use serde_json::{Value, json};

use super::neutral::{Step, Trajectory, Usage};
use super::{ReadError, ReadErrorKind, Session};

/// The format this reader takes.
pub const MINI_SWE_AGENT_FORMAT: &str = "mini-swe-agent-1";

/// Whether a file whose first bytes are `start` is a trajectory rather than a Pi session:
/// a pretty-printed JSON object (a first line of `{` alone), or one line naming the format.
pub fn looks_like_trajectory(start: &[u8]) -> bool {
    let first = start.split(|byte| *byte == b'\n').next().unwrap_or(&[]);
    let first = first.trim_ascii();
    first == b"{"
        || (first.starts_with(b"{")
            && first
                .windows(b"\"trajectory_format\"".len())
                .any(|window| window == b"\"trajectory_format\""))
}

/// The Pi session a trajectory amounts to, read as [`read_session_limited`](super::read_session_limited) reads a file
/// (`file` names it in messages).
///
/// ```
/// use sol_replay::reader::trajectory::read_trajectory;
///
/// let text = r#"{"trajectory_format": "mini-swe-agent-1", "instance_id": "demo", "messages": [
///   {"role": "system", "content": "You run one bash command per reply."},
///   {"role": "user", "content": "Fix the bug."},
///   {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```",
///    "extra": {"response": {"model": "google/gemini-3-pro-preview", "created": 1763510516,
///      "usage": {"prompt_tokens": 1662, "completion_tokens": 106,
///                "prompt_tokens_details": {"cached_tokens": 1000}}}}},
///   {"role": "user", "content": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>"}
/// ]}"#;
/// let session = read_trajectory("demo.traj.json", text.as_bytes()).expect("a trajectory");
/// let branch = session.active_branch();
/// assert_eq!(branch.len(), 4);
/// let reply = branch[2].message().and_then(|m| m.assistant.as_deref()).expect("the reply");
/// assert_eq!(&*reply.tool_calls[0].name, "bash");
/// assert_eq!(reply.usage.map(|u| (u.input, u.cache_read)), Some((662, 1000)));
/// ```
pub fn read_trajectory(file: &str, text: &[u8]) -> Result<Session, ReadError> {
    let bad = |message: String| ReadError {
        file: file.to_owned(),
        line: 1,
        kind: ReadErrorKind::BadTrajectory { message },
    };
    let value: Value = serde_json::from_slice(text).map_err(|error| bad(error.to_string()))?;
    let format = value.get("trajectory_format").and_then(Value::as_str);
    if format != Some(MINI_SWE_AGENT_FORMAT) {
        return Err(bad(format!(
            "its trajectory_format is {}, where this reader takes \"{MINI_SWE_AGENT_FORMAT}\"",
            format.map_or_else(|| "missing".to_owned(), |found| format!("\"{found}\""))
        )));
    }
    let messages = value
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("it has no \"messages\" list".to_owned()))?;
    let id = value
        .get("instance_id")
        .and_then(Value::as_str)
        .unwrap_or("trajectory");
    neutral(id, messages).into_session(file)
}

/// The neutral trajectory of a mini-swe-agent run's messages: each reply with its bash
/// call, each output as that call's result.
fn neutral(id: &str, messages: &[Value]) -> Trajectory {
    let mut run = Trajectory::new(id);
    // The reply waiting for its command's output, and the time of the last reply.
    let mut waiting: Option<String> = None;
    let mut clock = 0i64;
    for (index, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        let text = content_text(message.get("content"));
        let response = message.get("extra").and_then(|extra| extra.get("response"));
        if let Some(created) = response
            .and_then(|r| r.get("created"))
            .and_then(Value::as_i64)
        {
            clock = created.saturating_mul(1000);
        }
        let step = match role {
            "system" => Step::System { text, at_ms: clock },
            "assistant" => {
                let call = format!("call-{index}");
                let command = bash_command(&text);
                let mut reply = Step::reply(text, clock);
                if let Some(command) = &command {
                    reply = reply.call(&call, "bash", json!({"command": command}));
                }
                waiting = command.map(|_| call);
                if let Some(response) = response {
                    reply = reply.usage(usage(response.get("usage")));
                    if let Some(model) = response.get("model").and_then(Value::as_str) {
                        // `provider/model` as the response names the model (a router's
                        // `google/gemini-…`), else with the response's own provider.
                        let provider = response
                            .get("provider")
                            .and_then(Value::as_str)
                            .map_or_else(|| "unknown".to_owned(), str::to_lowercase);
                        let (provider, model) = model
                            .split_once('/')
                            .map_or((provider.as_str(), model), |(p, m)| (p, m));
                        reply = reply.model(provider, model);
                    }
                }
                reply
            }
            _ => match waiting.take() {
                Some(call) => {
                    let failed = return_code(&text).is_some_and(|code| code != 0);
                    Step::result(call, "bash", text, failed, clock)
                }
                None => Step::prompt(text, clock),
            },
        };
        run.push(step);
    }
    run
}

/// A message's text: a string, or the text of its blocks.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The command of a reply's first ```` ```bash ```` block.
fn bash_command(text: &str) -> Option<String> {
    let start = text.find("```bash")? + "```bash".len();
    let rest = text[start..].strip_prefix('\n').unwrap_or(&text[start..]);
    let end = rest.find("```")?;
    Some(rest[..end].trim_end().to_owned())
}

/// The `<returncode>` an output starts with.
fn return_code(text: &str) -> Option<i64> {
    let start = text.find("<returncode>")? + "<returncode>".len();
    let end = text[start..].find("</returncode>")?;
    text[start..start + end].trim().parse().ok()
}

/// OpenAI-shaped usage as Pi's.
fn usage(usage: Option<&Value>) -> Usage {
    let number = |value: Option<&Value>| value.and_then(Value::as_u64).unwrap_or(0);
    let usage = usage.unwrap_or(&Value::Null);
    let prompt = number(usage.get("prompt_tokens"));
    let cached = number(
        usage
            .get("prompt_tokens_details")
            .and_then(|details| details.get("cached_tokens")),
    )
    .min(prompt);
    Usage {
        input: prompt - cached,
        cache_read: cached,
        cache_write: 0,
        output: number(usage.get("completion_tokens")),
    }
}

//! The Pi adapter: Pi's `tool_result` event read into the reducer's [`Candidate`].
//!
//! Everything Pi-specific lives here and in [`exit`]: which tools can be candidates (a
//! direct `bash` result, an `edit`/`write` result fused with a `then_run` command by Action
//! Fusion; never codemode script calls or the `codemode` tool), where the command is
//! (`{"command"}`, `{"then_run": {"command"}}`), how it ended (`structuredContent.exit_code`,
//! the trailing `Command exited with code N`, the first `[then_run:…]` marker; a signal that
//! contradicts `isError` is [`ReasonCode::ExitStateMismatch`]), and Pi's full-output file (a
//! `pi-bash-*.log` directly in the real OS temp directory). A host other than Pi passes a
//! [`crate::candidate::ShellResult`] instead.
//!
//! ```
//! use serde_json::json;
//! use sol_core::message::ContentBlock;
//! use sol_reducer::candidate::CandidateShape;
//! use sol_reducer::pi::{select_candidate, ToolResultView};
//! use sol_reducer::ReasonCode;
//!
//! let input = json!({"path": "src/lib.rs", "then_run": {"command": "cargo test"}});
//! let content = [
//!     ContentBlock::text("Successfully replaced text in src/lib.rs."),
//!     ContentBlock::text("[then_run:succeeded]\nrunning 12 tests\ntest result: ok."),
//! ];
//! let view = ToolResultView { tool_name: "edit", input: &input, content: &content, ..ToolResultView::default() };
//! let candidate = select_candidate(&view).expect("a fused cargo test");
//! assert_eq!(candidate.command, "cargo test");
//! assert_eq!(candidate.inline_log, "running 12 tests\ntest result: ok.");
//! assert!(matches!(candidate.shape, CandidateShape::Fused { block: 1, .. }));
//!
//! let nested = ToolResultView { parent_tool_call_id: Some("call_1"), ..view };
//! assert_eq!(select_candidate(&nested).unwrap_err().reason, ReasonCode::NestedToolCall);
//! ```

/// The exit conventions, where they were first published; they live in [`crate::exit`], which
/// the candidate selection reads without this adapter.
pub use crate::exit;

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use serde_json::Value;
use sol_core::message::ContentBlock;

use crate::candidate::{Candidate, CandidateInput, CandidateShape};
use crate::exit::{ExitSignal, ThenRunMarker, bash_exit_signal, fused_exit_signal};
use crate::policy::Policy;
use crate::reason::{Fallback, ReasonCode};

/// Pi's tools whose results can hold a build or test log: `bash`, and the fused `edit` and
/// `write`.
pub const CANDIDATE_TOOLS: [&str; 3] = ["bash", "edit", "write"];

/// The parts of Pi's `tool_result` event the reducer reads.
#[derive(Debug, Clone, Copy)]
pub struct ToolResultView<'a> {
    /// The call's id, for the journal.
    pub tool_call_id: &'a str,
    /// The tool's name: `bash`, `edit` and `write` can be candidates.
    pub tool_name: &'a str,
    /// The call's arguments: `{command}` for bash, `{…, then_run: {command}}` when fused.
    pub input: &'a Value,
    /// The result's content blocks.
    pub content: &'a [ContentBlock],
    /// The result's `details`, if any.
    pub details: Option<&'a Value>,
    /// The result's `isError` flag.
    pub is_error: bool,
    /// Pi 1.x: set when another tool (a codemode script) made the call.
    pub parent_tool_call_id: Option<&'a str>,
    /// Pi 1.x: `structuredContent.exit_code` of a bash result
    /// ([`structured_exit_code`] reads it).
    pub exit_code: Option<i32>,
    /// The real (symlink-resolved) OS temp directory, where Pi writes its full-output
    /// files; `None` never reads one.
    pub os_temp_dir: Option<&'a Utf8Path>,
}

impl Default for ToolResultView<'_> {
    fn default() -> Self {
        ToolResultView {
            tool_call_id: "",
            tool_name: "",
            input: &Value::Null,
            content: &[],
            details: None,
            is_error: false,
            parent_tool_call_id: None,
            exit_code: None,
            os_temp_dir: None,
        }
    }
}

/// The exit code in a Pi 1.x bash result's `structuredContent` (`{exit_code, …}`), when it
/// is an integer (one beyond `i32` saturates, so a non-zero code stays non-zero).
pub fn structured_exit_code(structured_content: &Value) -> Option<i32> {
    let code = structured_content.get("exit_code")?.as_i64()?;
    Some(code.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32)
}

impl CandidateInput for ToolResultView<'_> {
    fn call_id(&self) -> &str {
        self.tool_call_id
    }

    fn select(&self, policy: &Policy) -> Result<Candidate, Fallback> {
        select_candidate_with(self, policy)
    }
}

/// Picks out a candidate under Pi's default [`Policy`], or says why `view` is not one. No
/// reason returned here is journaled.
pub fn select_candidate(view: &ToolResultView<'_>) -> Result<Candidate, Fallback> {
    select_candidate_with(view, Policy::pi())
}

/// [`select_candidate`] under `policy` (its command set and shell tool name).
pub fn select_candidate_with(
    view: &ToolResultView<'_>,
    policy: &Policy,
) -> Result<Candidate, Fallback> {
    if view.parent_tool_call_id.is_some() {
        return Err(Fallback::new(ReasonCode::NestedToolCall));
    }
    let command = match view.tool_name {
        "bash" => view.input.get("command"),
        "edit" | "write" => view
            .input
            .get("then_run")
            .and_then(|then_run| then_run.get("command")),
        _ => return Err(Fallback::new(ReasonCode::IneligibleTool)),
    };
    let command = match command.and_then(Value::as_str) {
        Some(command) if !command.trim().is_empty() => command,
        _ => return Err(Fallback::new(ReasonCode::NoCommand)),
    };
    if !policy.commands.matches(command) {
        return Err(Fallback::new(ReasonCode::NotDiagnosticCommand));
    }
    let located = if view.tool_name == "bash" {
        locate_bash_log(view)?
    } else {
        locate_fused_log(view.content)?
    };
    let full_output_log = match (located.full_output_hint, view.os_temp_dir) {
        (Some(path), Some(temp)) if is_trusted_full_output_path(&path, temp) => Some(path),
        _ => None,
    };
    Ok(Candidate {
        tool_call_id: view.tool_call_id.to_owned(),
        command: command.to_owned(),
        is_error: view.is_error,
        exit_code: view.exit_code,
        exit_signal: located.exit_signal,
        shape: located.shape,
        inline_log: located.log,
        full_output_log,
        content: view.content.to_vec(),
        details: view.details.cloned(),
        readback_tool: policy.shell_tool.clone(),
    })
}

struct Located {
    shape: CandidateShape,
    log: String,
    exit_signal: ExitSignal,
    full_output_hint: Option<Utf8PathBuf>,
}

fn locate_bash_log(view: &ToolResultView<'_>) -> Result<Located, Fallback> {
    let mut texts = Vec::with_capacity(view.content.len());
    for block in view.content {
        texts.push(
            block
                .as_text()
                .ok_or_else(|| Fallback::new(ReasonCode::NonTextContent))?,
        );
    }
    let log = texts.join("\n");
    let hint = bash_full_output_hint(view.details, &log);
    Ok(Located {
        shape: CandidateShape::Bash,
        exit_signal: bash_exit_signal(view.exit_code, &log),
        full_output_hint: hint,
        log,
    })
}

fn locate_fused_log(content: &[ContentBlock]) -> Result<Located, Fallback> {
    let found = content.iter().enumerate().find_map(|(index, block)| {
        let text = block.as_text()?;
        ThenRunMarker::find_first(text).map(|(marker, at)| (index, text, marker, at))
    });
    let Some((block, text, marker, at)) = found else {
        return Err(Fallback::new(ReasonCode::NoThenRunOutput));
    };
    let head_end = at + marker.as_str().len();
    let suffix = &text[head_end..];
    let mut separator_len = 0;
    loop {
        let rest = &suffix[separator_len..];
        if rest.starts_with("\r\n") {
            separator_len += 2;
        } else if rest.starts_with('\n') {
            separator_len += 1;
        } else {
            break;
        }
    }
    let (separator, log) = suffix.split_at(separator_len);
    let separator = if separator.is_empty() {
        "\n"
    } else {
        separator
    };
    Ok(Located {
        exit_signal: fused_exit_signal(marker, log),
        full_output_hint: inline_full_output_path(log),
        shape: CandidateShape::Fused {
            block,
            marker,
            head: text[..head_end].to_owned(),
            separator: separator.to_owned(),
        },
        log: log.to_owned(),
    })
}

/// The path after the last `Full output: ` in `text`, up to `]` or the end of the line
/// (Pi's truncation notice reads `[Showing lines … Full output: /tmp/pi-bash-….log]`).
pub fn inline_full_output_path(text: &str) -> Option<Utf8PathBuf> {
    const LABEL: &str = "Full output: ";
    let start = text.rfind(LABEL)? + LABEL.len();
    let rest = &text[start..];
    let end = rest.find([']', '\n', '\r']).unwrap_or(rest.len());
    let path = rest[..end].trim();
    (!path.is_empty()).then(|| Utf8PathBuf::from(path))
}

/// The full-output file `view` names (`details.fullOutputPath`, or an inline
/// `Full output: <path>`), trusted or not: what [`is_trusted_full_output_path`] is asked
/// about.
pub fn full_output_hint(view: &ToolResultView<'_>) -> Option<Utf8PathBuf> {
    let texts: Option<Vec<&str>> = view.content.iter().map(ContentBlock::as_text).collect();
    match view.tool_name {
        "bash" => bash_full_output_hint(view.details, &texts?.join("\n")),
        _ => locate_fused_log(view.content).ok()?.full_output_hint,
    }
}

fn bash_full_output_hint(details: Option<&Value>, log: &str) -> Option<Utf8PathBuf> {
    details
        .and_then(|details| details.get("fullOutputPath"))
        .and_then(Value::as_str)
        .filter(|path| !path.is_empty())
        .map(Utf8PathBuf::from)
        .or_else(|| inline_full_output_path(log))
}

/// Whether `path` may be read as Pi's untruncated output: an absolute path whose file name
/// is `pi-bash-<anything>.log` and whose parent is `os_temp_dir` itself.
///
/// The check is lexical: `.` components are ignored, and any `..` component rejects the
/// path. The host must pass the real (symlink-resolved) temp directory, and must read the
/// file only if it is a regular file, without following a link at the final component
/// ([`sol_core::FileSystem::read_no_follow`]), within [`crate::MAX_FULL_OUTPUT_BYTES`].
pub fn is_trusted_full_output_path(path: &Utf8Path, os_temp_dir: &Utf8Path) -> bool {
    let (Some(path), Some(temp)) = (normal_absolute(path), normal_absolute(os_temp_dir)) else {
        return false;
    };
    let Some(name) = path.file_name() else {
        return false;
    };
    let well_named = name
        .strip_prefix("pi-bash-")
        .and_then(|rest| rest.strip_suffix(".log"))
        .is_some_and(|middle| !middle.contains(['/', '\\']));
    well_named && path.parent() == Some(temp.as_path())
}

/// `path` without `.` components and trailing separators; `None` when it is relative or
/// has a `..` component.
fn normal_absolute(path: &Utf8Path) -> Option<Utf8PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut normal = Utf8PathBuf::new();
    for component in path.components() {
        match component {
            Utf8Component::ParentDir => return None,
            Utf8Component::CurDir => {}
            other => normal.push(other.as_str()),
        }
    }
    Some(normal)
}

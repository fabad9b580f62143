//! Which tool results are candidates, and what their log is.
//!
//! A candidate is a direct `bash` result, or an `edit`/`write` result fused with a
//! `then_run` command by Action Fusion, whose command is one of the build and test
//! commands ([`crate::command::is_diagnostic_command`]). Everything here is decided from
//! the event data alone, before any file is read.
//!
//! ```
//! use serde_json::json;
//! use sol_core::message::ContentBlock;
//! use sol_reducer::candidate::{select_candidate, CandidateShape, ToolResultView};
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

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use serde_json::Value;
use sol_core::message::ContentBlock;

use crate::command::is_diagnostic_command;
use crate::exit::{ExitSignal, ThenRunMarker, bash_exit_signal, fused_exit_signal};
use crate::reason::{Fallback, ReasonCode};

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
    pub exit_code: Option<i64>,
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
        }
    }
}

/// The exit code in a Pi 1.x bash result's `structuredContent` (`{exit_code, …}`), when it
/// is an integer.
pub fn structured_exit_code(structured_content: &Value) -> Option<i64> {
    structured_content.get("exit_code")?.as_i64()
}

/// Where the log sits in the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CandidateShape {
    /// A bash result: the text of every block is the log, and a receipt replaces it all.
    Bash,
    /// A fused edit/write result: only the command output after the marker is the log.
    Fused {
        /// Index of the content block holding the marker.
        block: usize,
        /// The marker found first.
        marker: ThenRunMarker,
        /// That block's text up to and including the marker (the mutation's text stays).
        head: String,
        /// The line breaks between the marker and the log (`\n` when there were none).
        separator: String,
    },
}

/// A result whose log may be reduced.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The call's id.
    pub tool_call_id: String,
    /// `bash`, `edit` or `write`.
    pub tool_name: String,
    /// The build or test command that produced the log.
    pub command: String,
    /// The result's `isError` flag.
    pub is_error: bool,
    /// Pi 1.x's structured exit code, if the result had one.
    pub exit_code: Option<i64>,
    /// What the result says about how the command ended.
    pub exit_signal: ExitSignal,
    /// Where the log sits.
    pub shape: CandidateShape,
    /// The log as the result shows it, trailing status line included; for a fused result
    /// only the command output after the marker and its separator.
    pub inline_log: String,
    /// Pi's full-output file as the result names it (`details.fullOutputPath`, or an
    /// inline `Full output: <path>`); not yet checked ([`Candidate::trusted_full_output_path`]).
    pub full_output_hint: Option<Utf8PathBuf>,
    /// The result's content, for the projection.
    pub content: Vec<ContentBlock>,
    /// The result's details, for the projection.
    pub details: Option<Value>,
}

impl Candidate {
    /// The full-output file the host may read in place of the inline log: the hint, if it
    /// passes [`is_trusted_full_output_path`].
    pub fn trusted_full_output_path(&self, os_temp_dir: &Utf8Path) -> Option<&Utf8Path> {
        self.full_output_hint
            .as_deref()
            .filter(|path| is_trusted_full_output_path(path, os_temp_dir))
    }
}

/// Picks out a candidate, or says why `view` is not one. No reason returned here is
/// journaled.
pub fn select_candidate(view: &ToolResultView<'_>) -> Result<Candidate, Fallback> {
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
    if !is_diagnostic_command(command) {
        return Err(Fallback::new(ReasonCode::NotDiagnosticCommand));
    }
    let located = if view.tool_name == "bash" {
        locate_bash_log(view)?
    } else {
        locate_fused_log(view.content)?
    };
    Ok(Candidate {
        tool_call_id: view.tool_call_id.to_owned(),
        tool_name: view.tool_name.to_owned(),
        command: command.to_owned(),
        is_error: view.is_error,
        exit_code: view.exit_code,
        exit_signal: located.exit_signal,
        shape: located.shape,
        inline_log: located.log,
        full_output_hint: located.full_output_hint,
        content: view.content.to_vec(),
        details: view.details.cloned(),
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
    let hint = view
        .details
        .and_then(|details| details.get("fullOutputPath"))
        .and_then(Value::as_str)
        .filter(|path| !path.is_empty())
        .map(Utf8PathBuf::from)
        .or_else(|| inline_full_output_path(&log));
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

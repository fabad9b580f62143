//! Every text of ObservationPack that is not a placeholder or a recall page: the savings
//! notice and status line, the recall badge and labels and the fail-open messages a person
//! sees, and the `obs_recall` tool description the model reads.
//!
//! ```
//! use sol_obspack::text;
//!
//! assert_eq!(
//!     text::savings_notice(12_345),
//!     "⚡ SoL-Pi · Observation Pack\nMoney saved · 12,345 context tokens avoided"
//! );
//! assert_eq!(text::status_text(980), "⚡ Observation Pack · 980 context tokens avoided");
//! assert_eq!(
//!     text::recall_call_label("obs_0123456789abcdef01234567", 15872),
//!     "Recall obs_0123456789abcdef01234567 from byte 15872"
//! );
//! ```

use crate::policy::{
    QUERY_MAX_BYTES, QUERY_MAX_MATCHES, RECALL_CHUNK_MAX_BYTES, RECALL_CHUNK_MAX_LINES,
};

/// The name of the recall tool in Pi, the default of [`Names`].
pub const TOOL_NAME: &str = "obs_recall";

/// The longest tool name [`Names::new`] accepts, in characters: the limit model providers
/// put on tool names.
pub const MAX_TOOL_NAME_CHARS: usize = 64;

/// The model-facing names ObservationPack's texts use: the placeholder's `retrieve:` line,
/// the recall and search page headers and the recall errors name the recall tool by it.
/// The default is Pi's name, [`TOOL_NAME`]; a harness whose recall tool has another name
/// gives it here and registers its tool under the same name.
///
/// ```
/// use sol_obspack::text::Names;
///
/// let names = Names::new("recall_output")?;
/// assert_eq!(names.recall_tool(), "recall_output");
/// assert_eq!(Names::default().recall_tool(), "obs_recall");
/// assert!(Names::new("recall output").is_err());
/// # Ok::<(), sol_obspack::text::ToolNameError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Names {
    recall_tool: String,
}

impl Names {
    /// Names with `recall_tool` as the recall tool's name.
    ///
    /// # Errors
    ///
    /// [`ToolNameError`] unless the name is 1 to [`MAX_TOOL_NAME_CHARS`] characters of
    /// ASCII letters, digits, `_` and `-`: the names model providers accept for tools, and
    /// ones that keep every page header on one line and within its size.
    pub fn new(recall_tool: &str) -> Result<Names, ToolNameError> {
        let valid = !recall_tool.is_empty()
            && recall_tool.len() <= MAX_TOOL_NAME_CHARS
            && recall_tool
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
        if valid {
            Ok(Names {
                recall_tool: recall_tool.to_owned(),
            })
        } else {
            Err(ToolNameError {
                name: recall_tool.to_owned(),
            })
        }
    }

    /// The recall tool's name.
    pub fn recall_tool(&self) -> &str {
        &self.recall_tool
    }
}

impl Default for Names {
    /// Pi's names: the recall tool is [`TOOL_NAME`].
    fn default() -> Self {
        Names {
            recall_tool: TOOL_NAME.to_owned(),
        }
    }
}

/// A tool name [`Names::new`] refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool name {name:?} is not 1 to {MAX_TOOL_NAME_CHARS} ASCII letters, digits, '_' or '-'")]
pub struct ToolNameError {
    /// The name as given.
    pub name: String,
}
/// The recall tool's label in Pi's interface.
pub const TOOL_LABEL: &str = "Recall Observation";
/// The name of the mechanism on the badge and in notices.
pub const MECHANISM_LABEL: &str = "Observation Pack";
/// What a recall saves, on the recall badge.
pub const RECALL_SAVING: &str = "full observation replay avoided";
/// The recall result's label while the page is being read.
pub const RECALL_PARTIAL_LABEL: &str = "Recalling the requested slice...";
/// The key of Pi's footer status entry that shows the saving.
pub const STATUS_KEY: &str = sol_core::tui::STATUS_KEY;
/// How long the status entry stays before the host clears it, in milliseconds.
pub const STATUS_CLEAR_MS: u32 = sol_core::tui::STATUS_CLEAR_MS;

pub use sol_core::tui::format_count;

/// The saving of a first replacement: `<n> context tokens avoided`.
pub fn tokens_saving(removed_tokens: u64) -> String {
    format!("{} context tokens avoided", format_count(removed_tokens))
}

/// The first badge line, on the `obs_recall` call and result: `⚡ SoL-Pi · Observation Pack`.
pub fn badge_title() -> String {
    sol_core::tui::badge_title(MECHANISM_LABEL)
}

/// The second badge line on the `obs_recall` call and result:
/// `Money saved · full observation replay avoided`.
pub fn recall_badge_saving() -> String {
    sol_core::tui::money_saved(RECALL_SAVING)
}

/// The two-line notification shown once per observation, on its first replacement (TUI
/// mode only).
pub fn savings_notice(removed_tokens: u64) -> String {
    sol_core::tui::savings_notice(MECHANISM_LABEL, &tokens_saving(removed_tokens))
}

/// The footer status text shown under [`STATUS_KEY`] for [`STATUS_CLEAR_MS`].
pub fn status_text(removed_tokens: u64) -> String {
    sol_core::tui::status_text(MECHANISM_LABEL, &tokens_saving(removed_tokens))
}

/// The call label under the badge: `Recall <id> from byte <offset>`. `id` is shown as the
/// model wrote it, with control characters as spaces.
pub fn recall_call_label(id: &str, offset: u64) -> String {
    format!("Recall {} from byte {offset}", one_line(id))
}

/// The call label of a search: `Search <id> for <query as JSON> from byte <offset>`.
pub fn search_call_label(id: &str, query: &str, offset: u64) -> String {
    let query = serde_json::Value::from(query).to_string();
    format!("Search {} for {query} from byte {offset}", one_line(id))
}

/// The result label under the badge: `Recalled <bytes> bytes across <lines> lines`.
pub fn recall_result_label(bytes: u64, lines: u64) -> String {
    format!("Recalled {bytes} bytes across {lines} lines")
}

/// The result label of a search: `Found <k> matches in <n> bytes` (`1 match`).
pub fn search_result_label(matches: usize, scanned_bytes: u64) -> String {
    let noun = if matches == 1 { "match" } else { "matches" };
    format!("Found {matches} {noun} in {scanned_bytes} bytes")
}

/// The prefix of ObservationPack's log lines.
pub const LOG_PREFIX: &str = "[observationpack]";

/// The one-line message when ObservationPack leaves a result unchanged because something
/// failed: it names the mechanism, the reason, and that nothing was lost.
pub fn fail_open(reason: &str) -> String {
    format!(
        "SoL-Pi ObservationPack {LOG_PREFIX} fail-open: {}; the result is sent in full and nothing is lost",
        one_line(reason)
    )
}

/// The message when a session has no usable storage directory, so ObservationPack sends
/// every result in full; `reason` says why the directory is missing.
pub fn unavailable(reason: &str) -> String {
    format!(
        "SoL-Pi ObservationPack {LOG_PREFIX} fail-open: no storage directory for this session ({}); \
         large tool results are sent in full",
        one_line(reason)
    )
}

fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The description of `obs_recall` the model reads.
pub fn tool_description() -> String {
    format!(
        "Read back a large tool result that was replaced by an Observation Pack placeholder. \
         Pass the id from the placeholder (obs_ followed by 24 hex digits) and a byte offset: \
         each call returns one page of the original text, exactly as the tool produced it, up to \
         {RECALL_CHUNK_MAX_BYTES} bytes or {RECALL_CHUNK_MAX_LINES} lines, after a header that gives \
         next_offset and eof. Start at offset 0 and call again with next_offset until eof=true to \
         read everything. To find something instead, add query: a case-sensitive literal text (not \
         a pattern, up to {QUERY_MAX_BYTES} bytes) that may span lines; the result lists up to \
         {QUERY_MAX_MATCHES} matches per call, each with its line number, byte offset and the \
         surrounding text, and next_offset continues the search."
    )
}

/// The one-line prompt snippet that tells the model the tool exists.
pub fn prompt_snippet() -> &'static str {
    "Recall the exact original of a large tool result that a placeholder replaced, page by page, \
     or search it for a literal text"
}

/// The description of the `id` parameter.
pub fn id_description() -> &'static str {
    "The observation id from the placeholder, such as obs_0123456789abcdef01234567."
}

/// The description of the `offset` parameter.
pub fn offset_description() -> &'static str {
    "Byte offset to start at, a whole number: 0 for the beginning, then the next_offset of the \
     previous result. Defaults to 0."
}

/// The description of the `query` parameter.
pub fn query_description() -> String {
    format!(
        "Optional. Search for this exact text instead of reading a page: case-sensitive, literal \
         (no wildcards or regular expressions), 1 to {QUERY_MAX_BYTES} bytes, spaces and line \
         breaks included. Keep the same query and pass next_offset to see further matches."
    )
}

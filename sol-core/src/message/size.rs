//! Pi's size estimate of a message: `ceil(chars / 4)`, where `chars` is the JavaScript
//! length (UTF-16 code units) of the parts the model reads, and an image counts
//! [`IMAGE_CHARS`].
//!
//! Typed messages are sized from their fields; an [`AgentMessage::Other`] (a role this crate
//! does not model, or a known role in an unexpected shape) is sized from its JSON by the
//! same rules, so both give the same figure for the same JSON.

use serde_json::Value;

use super::{AgentMessage, AssistantBlock, ContentBlock, UserContent};

/// Characters Pi counts for one image block.
pub const IMAGE_CHARS: u64 = 4800;

/// `ceil(units / 4)`.
pub fn tokens_from_chars(units: u64) -> u64 {
    units.div_ceil(4)
}

/// Pi's estimate of a tool call block's share of its message (its name and its arguments as
/// JSON), in tokens: what the message loses without the call.
///
/// ```
/// use serde_json::json;
/// use sol_core::message::tool_call_tokens;
///
/// let call = json!({"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}});
/// assert_eq!(tool_call_tokens(&call), 5); // "bash" and {"command":"ls"}: 20 characters
/// ```
pub fn tool_call_tokens(block: &Value) -> u64 {
    tokens_from_chars(assistant_value_block_chars(block))
}

/// Length of `text` as JavaScript counts it (UTF-16 code units).
///
/// Every message is measured on every request, so this runs over the whole conversation
/// each time: ASCII text (most tool output) is one unit per byte, which `is_ascii` finds
/// without decoding a character.
///
/// ```
/// use sol_core::message::js_length;
///
/// assert_eq!(js_length("ls -la"), 6);
/// assert_eq!(js_length("é"), 1); // two UTF-8 bytes, one UTF-16 unit
/// assert_eq!(js_length("🦀"), 2); // four UTF-8 bytes, a surrogate pair
/// ```
pub fn js_length(text: &str) -> u64 {
    if text.is_ascii() {
        return text.len() as u64;
    }
    text.chars().map(|c| c.len_utf16() as u64).sum()
}

/// The length of `JSON.stringify(value)` as JavaScript counts it (UTF-16 code units), which is
/// how Pi sizes a tool call's arguments and a system message's tool declarations. It is
/// serde_json's text but for numbers, which JavaScript writes its own way: `5000000000` where
/// serde_json writes `5000000000.0`, `1e+21` for `1e21`, `0.000001` for `1e-6`. The
/// extension's JavaScript measures the same length with `String(number)`.
///
/// ```
/// use serde_json::json;
/// use sol_core::message::js_json_length;
///
/// assert_eq!(js_json_length(&json!({"command": "ls"})), 16);
/// assert_eq!(js_json_length(&json!(5e9)), "5000000000".len() as u64);
/// assert_eq!(js_json_length(&json!(1e21)), "1e+21".len() as u64);
/// assert_eq!(js_json_length(&json!(0.000001)), "0.000001".len() as u64);
/// assert_eq!(js_json_length(&json!(1.5e-7)), "1.5e-7".len() as u64);
/// assert_eq!(js_json_length(&json!(["é", "\n", -0.5])), "[\"é\",\"\\n\",-0.5]".len() as u64 - 1);
/// ```
pub fn js_json_length(value: &Value) -> u64 {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => js_number_length(number),
        Value::String(text) => json_string_length(text),
        Value::Array(items) => {
            let separators = items.len().saturating_sub(1) as u64;
            2 + separators + items.iter().map(js_json_length).sum::<u64>()
        }
        Value::Object(fields) => {
            let separators = fields.len().saturating_sub(1) as u64;
            let fields: u64 = fields
                .iter()
                .map(|(key, field)| json_string_length(key) + 1 + js_json_length(field))
                .sum();
            2 + separators + fields
        }
    }
}

/// A JSON string literal's length: its quotes, and the escapes `JSON.stringify` writes.
fn json_string_length(text: &str) -> u64 {
    let escaped: u64 = text
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\u{8}' | '\t' | '\n' | '\u{c}' | '\r' => 2,
            c if u32::from(c) < 0x20 => 6,
            c => c.len_utf16() as u64,
        })
        .sum();
    escaped + 2
}

/// The length of a number as JavaScript writes it (`Number.prototype.toString`).
fn js_number_length(number: &serde_json::Number) -> u64 {
    if let Some(integer) = number.as_i64() {
        return integer.to_string().len() as u64;
    }
    if let Some(integer) = number.as_u64() {
        return integer.to_string().len() as u64;
    }
    number.as_f64().map_or(4, js_float_length)
}

/// ECMAScript's `Number::toString` for a float, by length: the shortest digits that read back
/// as the same number (Rust's `{:e}` gives them), written plainly when the decimal exponent is
/// from -6 to 21, else as `d.ddde±x`. Not finite: `null`, as `JSON.stringify` writes it.
fn js_float_length(value: f64) -> u64 {
    if !value.is_finite() {
        return 4;
    }
    if value == 0.0 {
        return 1;
    }
    let sign = u64::from(value < 0.0);
    let shortest = format!("{:e}", value.abs());
    let (mantissa, exponent) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).count() as i64;
    // The value is 0.d1d2…dk × 10^n.
    let n = exponent.parse::<i64>().unwrap_or(0) + 1;
    let length = if digits <= n && n <= 21 {
        n
    } else if 0 < n && n <= 21 {
        digits + 1
    } else if -6 < n && n <= 0 {
        2 - n + digits
    } else {
        let written = (n - 1).unsigned_abs().to_string().len() as i64;
        let mantissa = if digits == 1 { 1 } else { digits + 1 };
        mantissa + 2 + written
    };
    sign + length.unsigned_abs()
}

impl AgentMessage {
    /// Pi's estimate of this message's size in tokens, `ceil(chars / 4)`; 0 for a role Pi
    /// does not size.
    ///
    /// ```
    /// use serde_json::json;
    /// use sol_core::message::AgentMessage;
    ///
    /// let prompt = AgentMessage::from_value(json!({"role": "user", "content": "Fix the failing test"}));
    /// assert_eq!(prompt.estimated_tokens(), 5); // 20 characters
    /// let bash = AgentMessage::from_value(json!({"role": "bashExecution", "command": "ls", "output": "a"}));
    /// assert_eq!(bash.estimated_tokens(), 1);
    /// ```
    pub fn estimated_tokens(&self) -> u64 {
        tokens_from_chars(self.estimated_chars())
    }

    /// The characters behind [`AgentMessage::estimated_tokens`].
    pub fn estimated_chars(&self) -> u64 {
        match self {
            AgentMessage::User(message) => match &message.content {
                UserContent::Text(text) => js_length(text),
                UserContent::Blocks(blocks) => blocks.iter().map(content_block_chars).sum(),
            },
            AgentMessage::Assistant(message) => {
                message.content.iter().map(assistant_block_chars).sum()
            }
            AgentMessage::ToolResult(result) => {
                result.content.iter().map(content_block_chars).sum()
            }
            AgentMessage::Other(value) => value_chars(value),
        }
    }

    /// The `timestamp` field as text, when it is a number or a string (Pi writes Unix
    /// milliseconds); `None` otherwise.
    pub fn timestamp_text(&self) -> Option<String> {
        let millis = match self {
            AgentMessage::User(message) => message.timestamp,
            AgentMessage::Assistant(message) => message.timestamp,
            AgentMessage::ToolResult(result) => result.timestamp,
            AgentMessage::Other(value) => {
                return match value.get("timestamp")? {
                    Value::Number(number) => Some(number.to_string()),
                    Value::String(text) => Some(text.clone()),
                    _ => None,
                };
            }
        };
        millis.map(|millis| millis.to_string())
    }
}

fn content_block_chars(block: &ContentBlock) -> u64 {
    match block {
        ContentBlock::Text { text } => js_length(text),
        ContentBlock::Image { .. } => IMAGE_CHARS,
    }
}

fn assistant_block_chars(block: &AssistantBlock) -> u64 {
    match block {
        AssistantBlock::Text { text, .. } => js_length(text),
        AssistantBlock::Thinking { thinking, .. } => js_length(thinking),
        AssistantBlock::ToolCall {
            name, arguments, ..
        } => js_length(name) + js_json_length(arguments),
        AssistantBlock::Other(value) => assistant_value_block_chars(value),
    }
}

/// The same rules over a message's JSON, for every role Pi sizes.
fn value_chars(message: &Value) -> u64 {
    match message.get("role").and_then(Value::as_str).unwrap_or("") {
        "user" | "custom" | "toolResult" => content_value_chars(message.get("content")),
        "assistant" => message
            .get("content")
            .and_then(Value::as_array)
            .map_or(0, |blocks| {
                blocks.iter().map(assistant_value_block_chars).sum()
            }),
        "system" => system_chars(message),
        "bashExecution" => string_field(message, "command") + string_field(message, "output"),
        "branchSummary" | "compactionSummary" => string_field(message, "summary"),
        _ => 0,
    }
}

fn string_field(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_str).map_or(0, js_length)
}

/// Text blocks and images of a `content` that is a string or a block list.
fn content_value_chars(content: Option<&Value>) -> u64 {
    match content {
        Some(Value::String(text)) => js_length(text),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|block| match block.get("type").and_then(Value::as_str) {
                Some("text") => string_field(block, "text"),
                Some("image") => IMAGE_CHARS,
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

fn assistant_value_block_chars(block: &Value) -> u64 {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => string_field(block, "text"),
        Some("thinking") => string_field(block, "thinking"),
        Some("toolCall") => {
            let arguments = block.get("arguments").unwrap_or(&Value::Null);
            // JSON.stringify of the arguments.
            string_field(block, "name") + js_json_length(arguments)
        }
        _ => 0,
    }
}

/// A Pi 1.x system message: its content, its named sections and the tools it adds, counted as
/// Pi counts them: every section's `length` (`Object.values`: an object's values or a list's
/// items; a text section its length, a list its item count; Pi cannot size any other value,
/// which counts nothing here), and the tools' JSON when they are there (not `null`, `false`,
/// `0` or an empty string, which JavaScript skips).
fn system_chars(message: &Value) -> u64 {
    let mut chars = content_value_chars(message.get("content"));
    let length = |value: &Value| match value {
        Value::String(text) => js_length(text),
        Value::Array(items) => items.len() as u64,
        _ => 0,
    };
    chars += match message.get("sections") {
        Some(Value::Object(sections)) => sections.values().map(length).sum(),
        Some(Value::Array(sections)) => sections.iter().map(length).sum(),
        Some(Value::String(text)) => js_length(text),
        _ => 0,
    };
    let present = |tools: &&Value| match tools {
        Value::Null | Value::Bool(false) => false,
        Value::Number(number) => number.as_f64() != Some(0.0),
        Value::String(text) => !text.is_empty(),
        _ => true,
    };
    if let Some(tools) = message.get("toolsAdded").filter(present) {
        chars += js_json_length(tools);
    }
    chars
}

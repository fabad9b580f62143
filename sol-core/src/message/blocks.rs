use serde::de::Deserializer;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::{Extra, HasExtra, typed_without};
use crate::ids::ToolCallId;

/// A text or image block of a user message or tool result.
///
/// Only blocks of exactly these shapes are accepted (no extra fields), so that a message
/// with anything else stays [`super::AgentMessage::Other`] and keeps every byte.
///
/// A block must be a JSON object: serde's derived reading of a tagged enum would also take a
/// sequence such as `[1, "", ""]` as an image (variant index, then the fields in order) and
/// write it back as an object, so the reading is written out here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    /// `{"type":"text","text":...}`.
    Text {
        /// The text.
        text: String,
    },
    /// `{"type":"image","data":...,"mimeType":...}`.
    Image {
        /// Base64-encoded image bytes.
        data: String,
        /// Media type, such as `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Text { text: text.into() }
    }

    /// An image block.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> ContentBlock {
        ContentBlock::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            ContentBlock::Image { .. } => None,
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ContentBlockVisitor)
    }
}

/// Reads a [`ContentBlock`] from an object with exactly the fields of its type.
struct ContentBlockVisitor;

impl<'de> serde::de::Visitor<'de> for ContentBlockVisitor {
    type Value = ContentBlock;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a text block or an image block (an object)")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<ContentBlock, A::Error> {
        use serde::de::Error as _;
        const FIELDS: &[&str] = &["type", "text", "data", "mimeType"];
        // Slots in the order of FIELDS.
        let mut slots: [Option<String>; 4] = Default::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let Some(index) = FIELDS.iter().position(|field| *field == key) else {
                return Err(A::Error::unknown_field(&key, FIELDS));
            };
            if slots[index].is_some() {
                return Err(A::Error::duplicate_field(FIELDS[index]));
            }
            slots[index] = Some(map.next_value()?);
        }
        let [kind, text, data, mime_type] = slots;
        match (kind.as_deref(), text, data, mime_type) {
            (Some("text"), Some(text), None, None) => Ok(ContentBlock::Text { text }),
            (Some("image"), None, Some(data), Some(mime_type)) => {
                Ok(ContentBlock::Image { data, mime_type })
            }
            (None, ..) => Err(A::Error::missing_field("type")),
            _ => Err(A::Error::custom(
                "not a text block (type, text) or an image block (type, data, mimeType)",
            )),
        }
    }
}

/// The content of a user message: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// `"content": "..."`.
    Text(String),
    /// `"content": [{"type":"text",...}, {"type":"image",...}]`.
    Blocks(Vec<ContentBlock>),
}

/// A block of an assistant message.
///
/// Provider signatures (`textSignature`, `thinkingSignature`, `thoughtSignature`, ...) are
/// common here and must survive a round trip, so each modelled variant keeps its other fields
/// in `extra`; a block of any other type, or of an unexpected shape, is kept verbatim in
/// [`AssistantBlock::Other`].
#[derive(Debug, Clone, PartialEq)]
pub enum AssistantBlock {
    /// `{"type":"text","text":...}`.
    Text {
        /// The text.
        text: String,
        /// Fields not modelled here.
        extra: Extra,
    },
    /// `{"type":"thinking","thinking":...}`.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// Fields not modelled here.
        extra: Extra,
    },
    /// `{"type":"toolCall","id":...,"name":...,"arguments":{...}}`.
    ToolCall {
        /// The call's id, echoed by its tool result.
        id: ToolCallId,
        /// The tool's name.
        name: String,
        /// The arguments the model chose (an object, `{}` when they did not parse).
        arguments: Value,
        /// Fields not modelled here.
        extra: Extra,
    },
    /// Any other block, kept verbatim.
    Other(Value),
}

impl AssistantBlock {
    /// A text block without extra fields.
    pub fn text(text: impl Into<String>) -> AssistantBlock {
        AssistantBlock::Text {
            text: text.into(),
            extra: Extra::new(),
        }
    }

    /// A tool call block without extra fields.
    pub fn tool_call(
        id: impl Into<ToolCallId>,
        name: impl Into<String>,
        arguments: Value,
    ) -> AssistantBlock {
        AssistantBlock::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            extra: Extra::new(),
        }
    }

    /// Interprets a JSON value; falls back to [`AssistantBlock::Other`] instead of failing.
    pub fn from_value(value: Value) -> AssistantBlock {
        let typed = match value.get("type").and_then(Value::as_str) {
            Some("text") => typed_without(&value, "type").map(|b: TextRepr| AssistantBlock::Text {
                text: b.text,
                extra: b.extra,
            }),
            Some("thinking") => {
                typed_without(&value, "type").map(|b: ThinkingRepr| AssistantBlock::Thinking {
                    thinking: b.thinking,
                    extra: b.extra,
                })
            }
            Some("toolCall") => {
                typed_without(&value, "type").map(|b: ToolCallRepr| AssistantBlock::ToolCall {
                    id: b.id,
                    name: b.name,
                    arguments: b.arguments,
                    extra: b.extra,
                })
            }
            _ => None,
        };
        typed.unwrap_or(AssistantBlock::Other(value))
    }
}

impl<'de> Deserialize<'de> for AssistantBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(AssistantBlock::from_value)
    }
}

impl Serialize for AssistantBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "type", rename_all = "camelCase")]
        enum Tagged<'a> {
            Text {
                text: &'a str,
                #[serde(flatten)]
                extra: &'a Extra,
            },
            Thinking {
                thinking: &'a str,
                #[serde(flatten)]
                extra: &'a Extra,
            },
            ToolCall {
                id: &'a ToolCallId,
                name: &'a str,
                arguments: &'a Value,
                #[serde(flatten)]
                extra: &'a Extra,
            },
        }
        let tagged = match self {
            AssistantBlock::Text { text, extra } => Tagged::Text { text, extra },
            AssistantBlock::Thinking { thinking, extra } => Tagged::Thinking { thinking, extra },
            AssistantBlock::ToolCall {
                id,
                name,
                arguments,
                extra,
            } => Tagged::ToolCall {
                id,
                name,
                arguments,
                extra,
            },
            AssistantBlock::Other(value) => return value.serialize(serializer),
        };
        tagged.serialize(serializer)
    }
}

#[derive(Deserialize)]
struct TextRepr {
    text: String,
    #[serde(flatten)]
    extra: Extra,
}

#[derive(Deserialize)]
struct ThinkingRepr {
    thinking: String,
    #[serde(flatten)]
    extra: Extra,
}

#[derive(Deserialize)]
struct ToolCallRepr {
    id: ToolCallId,
    name: String,
    arguments: Value,
    #[serde(flatten)]
    extra: Extra,
}

macro_rules! has_extra {
    ($($repr:ty),*) => {
        $(impl HasExtra for $repr {
            fn extra_mut(&mut self) -> &mut Extra {
                &mut self.extra
            }
        })*
    };
}

has_extra!(TextRepr, ThinkingRepr, ToolCallRepr);

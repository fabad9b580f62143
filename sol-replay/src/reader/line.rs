//! One line of a session file as JSON, with the two things Pi writes that a strict JSON
//! parser refuses: a lone UTF-16 surrogate escape, and a line torn by a writer that stopped
//! (alone, or with the next entry Pi appended to it when it resumed the session).

use serde_json::Value;
use serde_json::error::Category;

/// What a line that is not JSON as it stands turned out to be.
#[derive(Debug)]
pub(crate) enum Broken {
    /// A prefix of a JSON object, cut short: what a writer that stopped leaves. `lost` is
    /// the id and parent id of the entry it began, when the part written holds them.
    Torn { lost: Option<LostEntry> },
    /// A torn prefix of `torn_bytes` bytes, then a whole entry: Pi 0.84.2 resuming a
    /// session whose last line was torn appends its next entry to that line.
    TornThenEntry {
        torn_bytes: usize,
        lost: Option<LostEntry>,
        entry: Box<Value>,
    },
    /// Neither: the line is broken in another way (serde_json's error on the whole line).
    Invalid(serde_json::Error),
}

/// The id and parent of an entry whose line was torn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LostEntry {
    pub id: String,
    pub parent: Option<String>,
}

/// Parses one line (without its line end). Lone surrogate escapes are read as U+FFFD.
pub(crate) fn parse(text: &[u8]) -> Result<Value, Broken> {
    match serde_json::from_slice(text) {
        Ok(value) => Ok(value),
        Err(error) => {
            let fixed = replace_lone_surrogates(text);
            let text = fixed.as_deref().unwrap_or(text);
            match fixed.as_deref().map(serde_json::from_slice::<Value>) {
                Some(Ok(value)) => Ok(value),
                Some(Err(error)) => Err(classify(text, error)),
                None => Err(classify(text, error)),
            }
        }
    }
}

/// What a line that does not parse is: torn, torn then an entry, or broken.
fn classify(text: &[u8], error: serde_json::Error) -> Broken {
    // First the appended entry: a torn part that stops after a `:` or a `[` and is followed
    // by a whole object is still a prefix of JSON as a whole.
    if let Some(merged) = torn_then_entry(text) {
        return merged;
    }
    if is_torn(text, &error) {
        return Broken::Torn {
            lost: lost_entry(text),
        };
    }
    Broken::Invalid(error)
}

/// A torn part followed by a whole entry, if `text` is that. Pi appends
/// `JSON.stringify(entry)`, which starts with `{"type":"`, right after the torn bytes. An
/// object inside that entry is followed by its parent's closing bracket, so does not parse
/// to the end of the line; a content block inside the torn part can, when the cut fell right
/// after it, but it has no `parentId`, which every entry has.
fn torn_then_entry(text: &[u8]) -> Option<Broken> {
    const START: &[u8] = b"{\"type\":\"";
    let mut end = text.len();
    while let Some(at) = rfind(&text[..end], START) {
        end = at;
        if at == 0 {
            return None;
        }
        let Ok(entry) = serde_json::from_slice::<Value>(&text[at..]) else {
            continue;
        };
        let is_entry = entry.get("id").is_some_and(Value::is_string)
            && entry
                .get("parentId")
                .is_some_and(|parent| parent.is_null() || parent.is_string());
        if !is_entry {
            continue;
        }
        let torn = text[..at].trim_ascii();
        let torn_error = serde_json::from_slice::<Value>(torn).err()?;
        if !is_torn(torn, &torn_error) {
            return None;
        }
        return Some(Broken::TornThenEntry {
            torn_bytes: at,
            lost: lost_entry(torn),
            entry: Box::new(entry),
        });
    }
    None
}

/// Whether `text`, which failed with `error`, is a prefix of a JSON object that stops
/// early: serde_json ran out of input (perhaps in the middle of a UTF-8 character).
fn is_torn(text: &[u8], error: &serde_json::Error) -> bool {
    if !text.starts_with(b"{") {
        return false;
    }
    if error.classify() == Category::Eof {
        return true;
    }
    // Cut inside a character: serde_json reports the incomplete character itself.
    match std::str::from_utf8(text) {
        Err(utf8) if utf8.error_len().is_none() => {
            serde_json::from_slice::<Value>(&text[..utf8.valid_up_to()])
                .err()
                .is_some_and(|error| error.classify() == Category::Eof)
        }
        _ => false,
    }
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .rposition(|window| window == needle)
}

/// The `id` and `parentId` of the object a torn line began, when the members written
/// before the cut hold both: the prefix is closed after its last whole top-level member.
fn lost_entry(torn: &[u8]) -> Option<LostEntry> {
    let mut depth = 0u32;
    let mut in_string = false;
    let mut escaped = false;
    let mut last_member_end = None;
    for (index, byte) in torn.iter().enumerate() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => last_member_end = Some(index),
            _ => {}
        }
    }
    let end = last_member_end?;
    let mut closed = torn[..end].to_vec();
    closed.push(b'}');
    let value: Value =
        serde_json::from_slice(&replace_lone_surrogates(&closed).unwrap_or(closed)).ok()?;
    let id = value.get("id")?.as_str()?.to_owned();
    let parent = match value.get("parentId")? {
        Value::Null => None,
        Value::String(parent) => Some(parent.clone()),
        _ => return None,
    };
    Some(LostEntry { id, parent })
}

/// `text` with every `\uXXXX` escape of a lone UTF-16 surrogate replaced by `\ufffd` (the
/// same six bytes, so columns stay where they were); `None` when there is none.
///
/// JavaScript strings may hold a lone surrogate, and `JSON.stringify` writes it as such an
/// escape (Pi writes a tool's text as the tool returned it); `JSON.parse` reads it back.
/// serde_json refuses it, as a Rust string cannot hold it. U+FFFD is one UTF-16 code unit,
/// as the surrogate was, and three UTF-8 bytes, as Node encodes a lone surrogate: the
/// token and byte estimates are the ones Pi makes. A well-formed pair is kept.
pub(crate) fn replace_lone_surrogates(text: &[u8]) -> Option<Vec<u8>> {
    let mut fixed: Option<Vec<u8>> = None;
    let mut index = 0;
    let unit_at = |at: usize| -> Option<u16> {
        let escape = text.get(at..at + 6)?;
        if escape[0] != b'\\' || escape[1] != b'u' {
            return None;
        }
        let hex = std::str::from_utf8(&escape[2..]).ok()?;
        u16::from_str_radix(hex, 16).ok()
    };
    // A backslash is only valid inside a string, where it starts an escape: no need to know
    // where strings start, which a torn line would confuse.
    while index < text.len() {
        match text[index] {
            b'\\' => match unit_at(index) {
                Some(0xD800..=0xDBFF) => {
                    if matches!(unit_at(index + 6), Some(0xDC00..=0xDFFF)) {
                        index += 12;
                    } else {
                        replace(&mut fixed, text, index);
                        index += 6;
                    }
                }
                Some(0xDC00..=0xDFFF) => {
                    replace(&mut fixed, text, index);
                    index += 6;
                }
                Some(_) => index += 6,
                // Any other escape is two bytes (`\"`, `\\`, `\n`, ...).
                None => index += 2,
            },
            _ => index += 1,
        }
    }
    fixed
}

fn replace(fixed: &mut Option<Vec<u8>>, text: &[u8], at: usize) {
    let bytes = fixed.get_or_insert_with(|| text.to_vec());
    bytes[at..at + 6].copy_from_slice(b"\\ufffd");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_the_replacement_character_and_pairs_stay() {
        let fix = |text: &str| {
            replace_lone_surrogates(text.as_bytes())
                .map(|bytes| String::from_utf8(bytes).expect("UTF-8"))
        };
        assert_eq!(
            fix(r#"{"a":"x\ud800y"}"#).as_deref(),
            Some(r#"{"a":"x\ufffdy"}"#)
        );
        assert_eq!(
            fix(r#"{"a":"\udc00"}"#).as_deref(),
            Some(r#"{"a":"\ufffd"}"#)
        );
        assert_eq!(fix(r#"{"a":"\ud83d\ude00"}"#), None);
        assert_eq!(fix(r#"{"a":"\\ud800"}"#), None);
        assert_eq!(
            fix(r#"{"a":"\ud800\ud800"}"#).as_deref(),
            Some(r#"{"a":"\ufffd\ufffd"}"#)
        );
        assert_eq!(fix(r#"{"\ud800":1}"#).as_deref(), Some(r#"{"\ufffd":1}"#));
    }

    #[test]
    fn a_torn_line_is_told_from_a_broken_one() {
        let entry = r#"{"type":"label","id":"b","parentId":"a","timestamp":"t"}"#;
        let Err(Broken::Torn { lost }) = parse(&entry.as_bytes()[..40]) else {
            panic!("torn");
        };
        assert_eq!(
            lost,
            Some(LostEntry {
                id: "b".to_owned(),
                parent: Some("a".to_owned())
            })
        );
        let merged = format!("{}{entry}", &entry[..30]);
        let Err(Broken::TornThenEntry {
            torn_bytes,
            entry: value,
            ..
        }) = parse(merged.as_bytes())
        else {
            panic!("torn then entry");
        };
        assert_eq!((torn_bytes, value["id"].as_str()), (30, Some("b")));
        assert!(matches!(
            parse(br#"{"type":"label",}"#),
            Err(Broken::Invalid(_))
        ));
        // Cut inside a character.
        let text = "{\"type\":\"label\",\"id\":\"é".as_bytes();
        assert!(matches!(
            parse(&text[..text.len() - 1]),
            Err(Broken::Torn { .. })
        ));
    }
}

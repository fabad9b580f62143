//! A message's identity where it has no timestamp: a digest of its content.

use serde_json::Value;

/// The identity of a message without a timestamp: its role and a 64-bit FNV-1a digest of its
/// JSON value, object keys in sorted order (so that the order a writer chose does not
/// matter), as 16 hex digits.
///
/// ```
/// use serde_json::json;
/// use sol_core::message::content_key;
///
/// let a = content_key("user", &json!({"role": "user", "content": "hi"}));
/// let b = content_key("user", &json!({"content": "hi", "role": "user"}));
/// assert_eq!(a, b);
/// assert_ne!(a, content_key("user", &json!({"role": "user", "content": "ho"})));
/// assert_eq!(a.len(), "user#".len() + 16);
/// ```
pub fn content_key(role: &str, message: &Value) -> String {
    let mut digest = Fnv1a::default();
    digest.value(message);
    format!("{role}#{:016x}", digest.0)
}

/// FNV-1a, 64 bits, over a canonical encoding of a JSON value.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Fnv1a {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn bytes(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// A tag byte, then a length-prefixed text: no two values encode alike.
    fn text(&mut self, tag: u8, text: &str) {
        self.bytes(&[tag]);
        self.bytes(&(text.len() as u64).to_le_bytes());
        self.bytes(text.as_bytes());
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.bytes(b"n"),
            Value::Bool(flag) => self.bytes(if *flag { b"t" } else { b"f" }),
            Value::Number(number) => self.text(b'#', &number.to_string()),
            Value::String(text) => self.text(b's', text),
            Value::Array(items) => {
                self.bytes(b"[");
                self.bytes(&(items.len() as u64).to_le_bytes());
                items.iter().for_each(|item| self.value(item));
            }
            Value::Object(fields) => {
                let mut sorted: Vec<_> = fields.iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(b.0));
                self.bytes(b"{");
                self.bytes(&(sorted.len() as u64).to_le_bytes());
                for (key, field) in sorted {
                    self.text(b'k', key);
                    self.value(field);
                }
            }
        }
    }
}

use camino::Utf8Path;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{
    CONFIG_KEYS, ConfigError, DEFAULT_KEEP_RECENT_OUTPUTS, KEY_CACHE_AWARE,
    KEY_CACHE_WRITE_READ_RATIO, KEY_KEEP_RECENT_OUTPUTS, KEY_PRICES, KEY_REDUCER_MODEL,
    KEY_REDUCER_PROVIDER, KEY_VERSION, MAX_KEEP_RECENT_OUTPUTS, Mechanism, SolPiConfig,
};
use crate::price::PriceTable;

/// Parses and validates the bytes of a configuration file.
///
/// A leading UTF-8 byte-order mark (which some Windows editors write) is skipped. Bytes
/// that are not UTF-8 or not a single JSON document give [`ConfigError::Unreadable`]. A
/// top-level key that appears twice gives [`ConfigError::DuplicateKey`], checked after
/// unknown keys and before `version` (see [`validate_config`] for the whole order): a
/// duplicate is never resolved by guessing which value was meant. Nested objects are not
/// searched for duplicates, except `prices`, the one key whose value is an object: a price
/// given twice there is [`ConfigError::InvalidPrices`] (`has a duplicate key: input`), also
/// after unknown top-level keys and before `version`. `path` only names the file in errors.
///
/// ```
/// use camino::Utf8Path;
/// use sol_core::parse_config;
///
/// let path = Utf8Path::new("/work/app/.pi/sol-pi.json");
/// let twice = br#"{"version": 1, "actionFusion": false, "actionFusion": true}"#;
/// let error = parse_config(twice, path).unwrap_err();
/// assert_eq!((error.code(), error.key()), ("duplicate_key", Some("actionFusion")));
/// assert_eq!(error.to_string(), "Duplicate SoL-Pi config key: actionFusion (in /work/app/.pi/sol-pi.json)");
/// assert!(parse_config(b"\xef\xbb\xbf{\"version\": 1}", path).is_ok());
/// ```
pub fn parse_config(bytes: &[u8], path: &Utf8Path) -> Result<SolPiConfig, ConfigError> {
    let unreadable = |reason: String| ConfigError::Unreadable {
        path: path.to_owned(),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|error| {
        unreadable(format!(
            "not valid UTF-8 (first bad byte at offset {})",
            error.valid_up_to()
        ))
    })?;
    let text = text.strip_prefix(BYTE_ORDER_MARK).unwrap_or(text);
    let document: Document =
        serde_json::from_str(text).map_err(|error| unreadable(format!("invalid JSON: {error}")))?;
    validate(&document.value, document.first_duplicate.as_deref(), path)
}

/// U+FEFF, the byte-order mark, as it starts a file saved "with BOM".
const BYTE_ORDER_MARK: char = '\u{FEFF}';

/// A parsed configuration file: the document, and the first top-level key that appeared
/// more than once (a `Value` keeps only the last value of a repeated key, silently).
struct Document {
    value: Value,
    first_duplicate: Option<String>,
}

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Document, D::Error> {
        deserializer.deserialize_any(DocumentVisitor)
    }
}

/// Reads a top-level object entry by entry; any other document is read as a plain `Value`.
struct DocumentVisitor;

impl DocumentVisitor {
    fn plain(value: Value) -> Document {
        Document {
            value,
            first_duplicate: None,
        }
    }
}

impl<'de> Visitor<'de> for DocumentVisitor {
    type Value = Document;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a JSON document")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Document, A::Error> {
        let mut object = Map::new();
        let mut first_duplicate = None;
        while let Some(key) = access.next_key::<String>()? {
            // The one key whose value is an object is read the same way, so a price given
            // twice is found too (named `prices.<key>`).
            let (value, inner_duplicate) = if key == KEY_PRICES {
                let inner: Document = access.next_value()?;
                (inner.value, inner.first_duplicate)
            } else {
                (access.next_value()?, None)
            };
            if object.contains_key(&key) {
                first_duplicate.get_or_insert_with(|| key.clone());
            }
            if let Some(inner) = inner_duplicate {
                first_duplicate.get_or_insert_with(|| format!("{KEY_PRICES}.{inner}"));
            }
            object.insert(key, value);
        }
        Ok(Document {
            value: Value::Object(object),
            first_duplicate,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, access: A) -> Result<Document, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(access)).map(DocumentVisitor::plain)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Document, E> {
        Ok(DocumentVisitor::plain(Value::Bool(value)))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Document, E> {
        Ok(DocumentVisitor::plain(Value::from(value)))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Document, E> {
        Ok(DocumentVisitor::plain(Value::from(value)))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Document, E> {
        Ok(DocumentVisitor::plain(Value::from(value)))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Document, E> {
        Ok(DocumentVisitor::plain(Value::from(value)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Document, E> {
        Ok(DocumentVisitor::plain(Value::Null))
    }
}

/// Validates a parsed configuration document and overlays it on the defaults.
///
/// Checks run in a fixed order and the first failure is returned: not an object; a key
/// outside the schema (the first in document order, before `version` is looked at); a
/// repeated key (only [`parse_config`] can see one: a `Value` holds each key once);
/// `version` missing or not numerically 1; a mechanism flag that is not boolean (in
/// registration order); a ratio that is not a finite number `>= 0`; `cacheAware` that is
/// not boolean; `keepRecentOutputs` that is not `true`, `false` or a whole number from 0 to
/// 1000 (`true` is 10, `false` 0, `4.0` is 4); a reducer provider or
/// model that is not a string or blank; `prices` that is not an object, then its first key
/// (in document order) that is not a price, then its first price (in the order `input`,
/// `cacheRead`, `cacheWrite`, `output`) that is not a number from 0 to 1,000,000. Provider
/// and model are trimmed.
pub fn validate_config(value: &Value, path: &Utf8Path) -> Result<SolPiConfig, ConfigError> {
    validate(value, None, path)
}

/// [`validate_config`], with the first repeated top-level key the parser saw.
fn validate(
    value: &Value,
    first_duplicate: Option<&str>,
    path: &Utf8Path,
) -> Result<SolPiConfig, ConfigError> {
    let path_buf = || path.to_owned();
    let Value::Object(object) = value else {
        return Err(ConfigError::NotAnObject { path: path_buf() });
    };

    if let Some(key) = object
        .keys()
        .find(|key| !CONFIG_KEYS.contains(&key.as_str()))
    {
        return Err(ConfigError::UnknownKey {
            path: path_buf(),
            key: key.clone(),
        });
    }

    // After unknown keys, so a misspelt key is named as such even when it is repeated, and
    // before any value is read, so no check looks at only one of two values.
    if let Some(key) = first_duplicate {
        if let Some(price) = key.strip_prefix("prices.") {
            return Err(ConfigError::InvalidPrices {
                path: path_buf(),
                reason: format!("has a duplicate key: {price}"),
            });
        }
        return Err(ConfigError::DuplicateKey {
            path: path_buf(),
            key: key.to_owned(),
        });
    }

    // 1 and 1.0 are the same JSON number; "1" is not.
    if object.get(KEY_VERSION).and_then(Value::as_f64) != Some(1.0) {
        return Err(ConfigError::UnsupportedVersion { path: path_buf() });
    }

    let mut config = SolPiConfig::default();

    for mechanism in Mechanism::ALL {
        let key = mechanism.config_key();
        if let Some(flag) = object.get(key) {
            let Value::Bool(enabled) = flag else {
                return Err(ConfigError::NotBoolean {
                    path: path_buf(),
                    key: key.to_owned(),
                });
            };
            *config.flag_mut(mechanism) = *enabled;
        }
    }

    if let Some(ratio) = object.get(KEY_CACHE_WRITE_READ_RATIO) {
        match ratio.as_f64() {
            // Adding 0.0 turns -0.0 into 0.0, so the effective value prints as 0.
            Some(ratio) if ratio.is_finite() && ratio >= 0.0 => {
                config.cache_write_read_ratio = ratio + 0.0;
            }
            _ => return Err(ConfigError::InvalidRatio { path: path_buf() }),
        }
    }

    if let Some(flag) = object.get(KEY_CACHE_AWARE) {
        let Value::Bool(enabled) = flag else {
            return Err(ConfigError::NotBoolean {
                path: path_buf(),
                key: KEY_CACHE_AWARE.to_owned(),
            });
        };
        config.cache_aware = *enabled;
    }

    if let Some(keep) = object.get(KEY_KEEP_RECENT_OUTPUTS) {
        config.keep_recent_outputs = match keep {
            Value::Bool(true) => DEFAULT_KEEP_RECENT_OUTPUTS,
            Value::Bool(false) => 0,
            number => match number.as_f64() {
                // Whole and in range, so the cast below is exact.
                Some(n)
                    if n.fract() == 0.0
                        && (0.0..=f64::from(MAX_KEEP_RECENT_OUTPUTS)).contains(&n) =>
                {
                    n as u32
                }
                _ => return Err(ConfigError::InvalidKeepRecentOutputs { path: path_buf() }),
            },
        };
    }

    if let Some(provider) = non_blank_string(object, KEY_REDUCER_PROVIDER, path)? {
        config.evidence_preserving_reducer_provider = provider;
    }
    if let Some(model) = non_blank_string(object, KEY_REDUCER_MODEL, path)? {
        config.evidence_preserving_reducer_model = model;
    }
    if let Some(prices) = object.get(KEY_PRICES) {
        config.prices = price_table(prices).map_err(|reason| ConfigError::InvalidPrices {
            path: path_buf(),
            reason,
        })?;
    }

    Ok(config)
}

/// The default prices overlaid with those of `value`, or why it cannot be. The range rule
/// is [`PriceTable::validated`]'s; a given price that is not a JSON number is read as NaN,
/// which that rule rejects like any other value outside the range, so the first bad price
/// is named in the order of the fields whatever is wrong with it.
fn price_table(value: &Value) -> Result<PriceTable, String> {
    let Value::Object(object) = value else {
        return Err("must be an object".to_owned());
    };
    let mut prices = PriceTable::default();
    if let Some(key) = object.keys().find(|key| prices.field_mut(key).is_none()) {
        return Err(format!("has an unknown key: {key}"));
    }
    for key in super::PRICE_KEYS {
        let (Some(given), Some(slot)) = (object.get(key), prices.field_mut(key)) else {
            continue;
        };
        // Adding 0.0 turns -0.0 into 0.0.
        *slot = given.as_f64().unwrap_or(f64::NAN) + 0.0;
    }
    prices
        .validated()
        .map_err(|error| format!("{} must be a number from 0 to 1000000", error.field))
}

/// The trimmed string under `key`, `None` when the key is absent.
fn non_blank_string(
    object: &Map<String, Value>,
    key: &str,
    path: &Utf8Path,
) -> Result<Option<String>, ConfigError> {
    let Some(value) = object.get(key) else {
        return Ok(None);
    };
    let trimmed = value
        .as_str()
        .map(|text| text.trim_matches(is_js_whitespace));
    match trimmed {
        Some(text) if !text.is_empty() => Ok(Some(text.to_owned())),
        _ => Err(ConfigError::EmptyString {
            path: path.to_owned(),
            key: key.to_owned(),
        }),
    }
}

/// Whitespace as JavaScript's `String.prototype.trim` sees it, so that a file accepted by
/// the TypeScript tooling around Pi is trimmed the same way here: Unicode `White_Space`
/// minus NEL (U+0085), plus the byte-order mark (U+FEFF).
fn is_js_whitespace(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}'
}

#[cfg(test)]
mod tests {
    use super::is_js_whitespace;

    #[test]
    fn whitespace_matches_javascript_trim() {
        for c in [
            ' ', '\t', '\n', '\r', '\u{0B}', '\u{0C}', '\u{A0}', '\u{2028}', '\u{FEFF}',
        ] {
            assert!(is_js_whitespace(c), "{c:?} is trimmed by JavaScript");
        }
        for c in ['\u{85}', 'a', '\u{200B}', '_'] {
            assert!(!is_js_whitespace(c), "{c:?} is kept by JavaScript");
        }
    }
}

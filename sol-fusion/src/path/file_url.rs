//! `file://` URLs decoded the way Node's `fileURLToPath` decodes them.
//!
//! Node first parses the string with the WHATWG URL parser and then converts the parsed
//! host and pathname. Only the parts of the parser that a `file://` URL can reach are
//! reproduced here: tab and newline removal, trailing space trimming, the host, `\` as a
//! separator, dot segments (also percent-encoded ones), the drive letter quirks and the
//! end of the path at `?` or `#`. Known gaps, all in hosts: IPv6 literals are rejected,
//! numeric IPv4 hosts are not rewritten and internationalised names are only lower-cased.

use super::PathError;

/// What a file URL starts with. Only this exact, lower-case spelling makes a URL; anything
/// else (`FILE:///x`, `file:/x`) is an ordinary relative path.
pub(super) const PREFIX: &str = "file://";

/// The decoded POSIX path of a file URL; it starts with `/` but is not yet normalised.
pub(super) fn to_posix_path(input: &str, url: &str) -> Result<String, PathError> {
    let parsed = Parsed::new(url);
    let host = parsed.host(input)?;
    if !host.is_empty() {
        return Err(PathError::ForeignHost {
            input: input.to_owned(),
        });
    }
    if contains_encoded(&parsed.pathname, b"/") {
        return Err(PathError::EncodedSeparator {
            input: input.to_owned(),
        });
    }
    decode(input, &parsed.pathname)
}

/// The decoded Windows path of a file URL: `C:\…` or `\\server\share…`, not yet normalised.
///
/// Stricter than Node where Node returns something that is not absolute: `file:///C:` is
/// the root `C:\` (Node: the drive-relative `C:`), while `file:///C:x` and a server without
/// a share (`file://server/`) are errors.
pub(super) fn to_windows_path(input: &str, url: &str) -> Result<String, PathError> {
    let parsed = Parsed::new(url);
    let host = parsed.host(input)?;
    if contains_encoded(&parsed.pathname, b"/\\") {
        return Err(PathError::EncodedSeparator {
            input: input.to_owned(),
        });
    }
    let pathname = decode(input, &parsed.pathname.replace('/', "\\"))?;
    let not_absolute = || PathError::NotAbsolute {
        input: input.to_owned(),
    };
    if !host.is_empty() {
        // `\\server\` without a share is no absolute path: Windows and Node would read it
        // as `\server` on the current drive. Repeated separators before the share are
        // accepted, as in Node.
        let after_root = pathname.trim_start_matches('\\');
        let share = after_root.split('\\').next().unwrap_or_default();
        if share.is_empty() {
            return Err(not_absolute());
        }
        return Ok(format!("\\\\{host}{pathname}"));
    }
    let drive = pathname.get(1..3).filter(|drive| is_drive(drive, b':'));
    match (drive, pathname.get(3..)) {
        (Some(drive), Some("")) => Ok(format!("{drive}\\")),
        (Some(drive), Some(rest)) if rest.starts_with('\\') => Ok(format!("{drive}{rest}")),
        _ => Err(not_absolute()),
    }
}

/// A file URL split the way the WHATWG parser splits it, before percent-decoding.
struct Parsed {
    /// The host as written (still percent-encoded), empty when there is none.
    raw_host: String,
    /// The serialised pathname: `/` followed by the segments joined by `/`.
    pathname: String,
}

impl Parsed {
    fn new(url: &str) -> Parsed {
        // The parser drops every tab and newline, and trailing C0 controls and spaces.
        let cleaned: String = url
            .chars()
            .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
            .collect();
        let cleaned = cleaned.trim_end_matches(|c: char| c <= ' ');
        let after_slashes = cleaned.get(PREFIX.len()..).unwrap_or_default();
        let before_query = after_slashes.split(['?', '#']).next().unwrap_or_default();
        let host_end = before_query.find(['/', '\\']).unwrap_or(before_query.len());
        let (raw_host, path) = before_query.split_at(host_end);
        // `file://C:/x` names drive C, not a host called `C:`.
        let (raw_host, path) = if is_drive(raw_host, b':') || is_drive(raw_host, b'|') {
            ("", before_query)
        } else {
            (raw_host, path.strip_prefix(['/', '\\']).unwrap_or(path))
        };
        Parsed {
            raw_host: raw_host.to_owned(),
            pathname: serialize_path(path),
        }
    }

    /// The host after percent-decoding and lower-casing, with `localhost` mapped to empty.
    fn host(&self, input: &str) -> Result<String, PathError> {
        if self.raw_host.is_empty() {
            return Ok(String::new());
        }
        let invalid = || PathError::InvalidHost {
            input: input.to_owned(),
        };
        let bytes = percent_decode_lenient(&self.raw_host);
        let host = String::from_utf8(bytes)
            .map_err(|_| invalid())?
            .to_lowercase();
        if host.chars().any(is_forbidden_in_host) {
            return Err(invalid());
        }
        Ok(if host == "localhost" {
            String::new()
        } else {
            host
        })
    }
}

/// Runs the WHATWG path state over `path` (the part after the host's `/`) and serialises
/// the resulting segment list.
fn serialize_path(path: &str) -> String {
    let buffers: Vec<&str> = path.split(['/', '\\']).collect();
    let last = buffers.len() - 1;
    let mut segments: Vec<String> = Vec::new();
    for (index, buffer) in buffers.into_iter().enumerate() {
        let at_end = index == last;
        if is_double_dot(buffer) {
            // A lone first segment that starts with a drive (`C:`, but also `C:x`) is never
            // removed. The WHATWG text says "is a drive letter"; Node's parser (ada 2.9,
            // Node 20) also keeps longer segments, and agreeing with Node matters more.
            let keeps_drive = segments.len() == 1
                && segments[0]
                    .get(..2)
                    .is_some_and(|start| is_drive(start, b':'));
            if !keeps_drive {
                segments.pop();
            }
            if at_end {
                segments.push(String::new());
            }
        } else if is_single_dot(buffer) {
            if at_end {
                segments.push(String::new());
            }
        } else if segments.is_empty() && (is_drive(buffer, b':') || is_drive(buffer, b'|')) {
            segments.push(format!("{}:", &buffer[..1]));
        } else {
            segments.push(buffer.to_owned());
        }
    }
    segments
        .iter()
        .map(|segment| format!("/{segment}"))
        .collect()
}

fn is_single_dot(buffer: &str) -> bool {
    buffer == "." || buffer.eq_ignore_ascii_case("%2e")
}

fn is_double_dot(buffer: &str) -> bool {
    matches!(
        buffer.to_ascii_lowercase().as_str(),
        ".." | ".%2e" | "%2e." | "%2e%2e"
    )
}

/// Whether `text` is an ASCII letter followed by `separator` (`:` or `|`).
fn is_drive(text: &str, separator: u8) -> bool {
    matches!(text.as_bytes(), [letter, sep] if letter.is_ascii_alphabetic() && *sep == separator)
}

/// The WHATWG forbidden domain code points (with `%` already decoded away).
fn is_forbidden_in_host(c: char) -> bool {
    c <= ' '
        || c == '\u{7F}'
        || matches!(
            c,
            '#' | '%' | '/' | ':' | '<' | '>' | '?' | '@' | '[' | '\\' | ']' | '^' | '|'
        )
}

/// Whether `pathname` contains `%` followed by the hex code of one of `bytes`, in any case.
fn contains_encoded(pathname: &str, bytes: &[u8]) -> bool {
    pathname.as_bytes().windows(3).any(|window| {
        window[0] == b'%' && hex_pair(window[1], window[2]).is_some_and(|b| bytes.contains(&b))
    })
}

/// Percent-decodes `pathname` strictly, like `decodeURIComponent`.
fn decode(input: &str, pathname: &str) -> Result<String, PathError> {
    let mut bytes = Vec::with_capacity(pathname.len());
    let mut rest = pathname.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first != b'%' {
            bytes.push(first);
            rest = tail;
            continue;
        }
        let byte = match tail {
            [high, low, ..] => hex_pair(*high, *low),
            _ => None,
        };
        let byte = byte.ok_or_else(|| PathError::InvalidPercentEncoding {
            input: input.to_owned(),
        })?;
        bytes.push(byte);
        rest = &tail[2..];
    }
    let decoded = String::from_utf8(bytes).map_err(|_| PathError::InvalidUtf8 {
        input: input.to_owned(),
    })?;
    if decoded.contains('\0') {
        return Err(PathError::NulByte {
            input: input.to_owned(),
        });
    }
    Ok(decoded)
}

/// Percent-decodes what can be decoded and keeps any other `%` as it is, like the URL
/// parser does for hosts.
fn percent_decode_lenient(text: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if let (b'%', [high, low, after @ ..]) = (first, tail)
            && let Some(byte) = hex_pair(*high, *low)
        {
            bytes.push(byte);
            rest = after;
            continue;
        }
        bytes.push(first);
        rest = tail;
    }
    bytes
}

fn hex_pair(high: u8, low: u8) -> Option<u8> {
    let digit = |byte: u8| char::from(byte).to_digit(16);
    let value = digit(high)? * 16 + digit(low)?;
    u8::try_from(value).ok()
}

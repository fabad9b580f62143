//! SHA-256 in lower-case hex, the one hash every identifier of this crate uses.

use sha2::{Digest, Sha256};

/// The lower-case hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    hex
}

/// Lines of `text` the way the archive counts them: one per LF, plus one for a non-empty
/// last line without a trailing LF.
pub(crate) fn line_count(text: &str) -> u64 {
    let newlines = text.bytes().filter(|&byte| byte == b'\n').count() as u64;
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// Length of `text` in UTF-16 code units, the unit Pi (JavaScript) measures strings in.
pub(crate) fn utf16_len(text: &str) -> usize {
    sol_core::message::js_length(text) as usize
}

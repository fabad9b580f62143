//! Role codes: the compact form in which a host lists a request's messages (one byte each,
//! an index into [`ROLE_CODES`]), so that no message crosses to be told apart by its role.

/// The roles a request's messages are told apart by; a code is an index into this list, and
/// 0 (`""`) stands for any role not in it.
pub const ROLE_CODES: [&str; 9] = [
    "",
    "user",
    "assistant",
    "toolResult",
    "system",
    "custom",
    "bashExecution",
    "compactionSummary",
    "branchSummary",
];

/// The role of `code`, `""` for a code outside [`ROLE_CODES`].
///
/// ```
/// use sol_core::message::{ROLE_CODES, role_of_code};
///
/// assert_eq!(role_of_code(3), "toolResult");
/// assert_eq!(role_of_code(200), "");
/// assert!(ROLE_CODES.iter().enumerate().all(|(code, role)| role_of_code(code as u8) == *role));
/// ```
pub fn role_of_code(code: u8) -> &'static str {
    ROLE_CODES.get(usize::from(code)).copied().unwrap_or("")
}

/// Whether messages of these role codes end with a user prompt: the request starts one.
pub fn ends_with_prompt(codes: &[u8]) -> bool {
    codes
        .last()
        .is_some_and(|&code| role_of_code(code) == "user")
}

//! How many more provider requests a result is expected to ride in: the horizon the
//! cache-aware policies weigh a saving over.
//!
//! A saving that repeats on every later request (a placeholder read instead of the original,
//! a receipt instead of a log) is worth its size times the requests still to come, and those
//! are unknown. The estimate is the one a running process gives without a model of the task:
//! a session that has already carried `n` requests is expected to carry about `n` more (the
//! median of a duration whose only known fact is its age), never fewer than
//! [`MIN_HORIZON_REQUESTS`]. It is deliberately simple and deterministic, so a live session
//! and a replay of its file decide alike.
//!
//! ```
//! use sol_core::horizon::{MIN_HORIZON_REQUESTS, expected_remaining_requests};
//!
//! assert_eq!(expected_remaining_requests(0), MIN_HORIZON_REQUESTS);
//! assert_eq!(expected_remaining_requests(40), 40);
//! ```

/// The fewest requests a horizon counts, however young the session.
pub const MIN_HORIZON_REQUESTS: u32 = 2;

/// The requests expected after the current one, for a context that already carried
/// `carried_requests` (its assistant messages).
pub fn expected_remaining_requests(carried_requests: u32) -> u32 {
    carried_requests.max(MIN_HORIZON_REQUESTS)
}

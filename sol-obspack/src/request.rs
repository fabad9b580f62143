//! Where each packed result sits in a request, counted once from the request's end.
//!
//! A host describes the request as it has it: each message's kind and Pi's estimate of its
//! tokens, and the index of each result it found packed. [`locate`] gives every such result
//! the counts the step reads ([`Carried`]: the earlier requests that carried it, the tokens
//! and the tool outputs after it) and the request's own ([`Located`]: its assistant
//! messages, the tokens after the newest one). No host counts anything itself.

use crate::pack::{Carried, Handle, Seen};

/// What a message of a request is, as the counts see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// A model reply: each one after a result is an earlier request that carried it.
    Assistant,
    /// A tool's output: the recent-outputs placement keeps the newest ones in full.
    ToolResult,
    /// Anything else (a prompt, a system message, a custom or summary message).
    Other,
}

/// One request located: the results in the order given, and the request's own counts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Located {
    /// Each result given whose index is inside the request, in the order given.
    pub carried: Vec<Carried>,
    /// The assistant messages the request carries (the request's number is one more).
    pub assistants: u32,
    /// The tokens of the messages after the newest assistant message: what the previous
    /// request did not carry. All of them when there is no assistant message.
    pub new_tokens: u64,
}

/// Locates the results `(index, handle)` in a request of `kinds[i]` messages of `tokens[i]`
/// tokens each (a missing size counts 0). A result's counts are of the messages strictly
/// after it; an index past the request's end is left out. Linear in the request's length.
pub fn locate(kinds: &[MessageKind], tokens: &[u64], results: &[(usize, Handle)]) -> Located {
    // Suffix counts, from the end: after[i] holds the counts of the messages after i.
    let mut after = vec![(0u32, 0u64, 0u32); kinds.len()];
    let (mut assistants, mut sum, mut outputs) = (0u32, 0u64, 0u32);
    let mut new_tokens = None;
    for (index, kind) in kinds.iter().enumerate().rev() {
        after[index] = (assistants, sum, outputs);
        match kind {
            MessageKind::Assistant => {
                new_tokens.get_or_insert(sum);
                assistants = assistants.saturating_add(1);
            }
            MessageKind::ToolResult => outputs = outputs.saturating_add(1),
            MessageKind::Other => {}
        }
        sum = sum.saturating_add(tokens.get(index).copied().unwrap_or(0));
    }
    let carried = results
        .iter()
        .filter_map(|&(index, handle)| {
            let &(prior_requests, tokens_after, newer_outputs) = after.get(index)?;
            Some(Carried {
                seen: Seen::new(handle, prior_requests),
                tokens_after,
                newer_outputs,
            })
        })
        .collect();
    Located {
        carried,
        assistants,
        new_tokens: new_tokens.unwrap_or(sum),
    }
}

//! `locate`: each result's counts are those of the messages after it, against a direct
//! count of the definition, on any request; and one request spelled out.

use proptest::prelude::*;
use sol_obspack::{Handle, Located, MessageKind, locate};

fn kind() -> impl Strategy<Value = MessageKind> {
    prop_oneof![
        Just(MessageKind::Assistant),
        Just(MessageKind::ToolResult),
        Just(MessageKind::Other),
    ]
}

/// The definition, counted directly for each result: quadratic, and obviously right.
fn direct(kinds: &[MessageKind], tokens: &[u64], results: &[(usize, Handle)]) -> Located {
    let size = |i: usize| tokens.get(i).copied().unwrap_or(0);
    let after = |index: usize, kind: MessageKind| {
        (index + 1..kinds.len())
            .filter(|&j| kinds[j] == kind)
            .count() as u32
    };
    let newest = kinds
        .iter()
        .rposition(|&kind| kind == MessageKind::Assistant);
    Located {
        carried: results
            .iter()
            .filter(|&&(index, _)| index < kinds.len())
            .map(|&(index, handle)| sol_obspack::Carried {
                seen: sol_obspack::Seen::new(handle, after(index, MessageKind::Assistant)),
                tokens_after: (index + 1..kinds.len()).map(size).sum(),
                newer_outputs: after(index, MessageKind::ToolResult),
            })
            .collect(),
        assistants: kinds
            .iter()
            .filter(|&&kind| kind == MessageKind::Assistant)
            .count() as u32,
        new_tokens: (newest.map_or(0, |i| i + 1)..kinds.len()).map(size).sum(),
    }
}

proptest! {
    #[test]
    fn locate_counts_what_comes_after_each_result(
        kinds in prop::collection::vec(kind(), 0..60),
        tokens in prop::collection::vec(0u64..100_000, 0..60),
        indexes in prop::collection::vec(0usize..70, 0..12),
    ) {
        let results: Vec<(usize, Handle)> = indexes
            .iter()
            .enumerate()
            .map(|(n, &index)| (index, Handle::from_number(n as u32)))
            .collect();
        prop_assert_eq!(locate(&kinds, &tokens, &results), direct(&kinds, &tokens, &results));
    }
}

#[test]
fn a_request_spelled_out() {
    use MessageKind::{Assistant as A, Other as O, ToolResult as R};
    // prompt, call, result (packed, handle 7), call, result, reply, prompt
    let kinds = [O, A, R, A, R, A, O];
    let tokens = [10, 20, 5_000, 30, 40, 50, 60];
    let located = locate(
        &kinds,
        &tokens,
        &[(2, Handle::from_number(7)), (9, Handle::from_number(8))],
    );
    assert_eq!(located.assistants, 3);
    assert_eq!(
        located.new_tokens, 60,
        "only the prompt after the newest reply is new"
    );
    assert_eq!(
        located.carried.len(),
        1,
        "an index past the end is left out"
    );
    let carried = located.carried[0];
    assert_eq!(
        carried.seen,
        sol_obspack::Seen::new(Handle::from_number(7), 2)
    );
    assert_eq!(carried.tokens_after, 30 + 40 + 50 + 60);
    assert_eq!(carried.newer_outputs, 1);
    // No assistant message: everything is new.
    assert_eq!(locate(&[O, R], &[3, 4], &[]).new_tokens, 7);
}

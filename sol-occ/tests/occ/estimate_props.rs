//! The estimate against a brute-force oracle of Pi's cut point: the same cut, and priced
//! savings that never exceed what Pi actually removes.

use proptest::prelude::*;
use proptest::sample::select;
use sol_occ::estimate::{
    EntryKind, NativeProjection, ObservedContext, ProjectedEntry, estimate_native_cut,
};
use sol_occ::tokens::{MessageRole, SizedMessage};

fn role() -> impl Strategy<Value = MessageRole> {
    select(vec![
        MessageRole::User,
        MessageRole::Assistant,
        MessageRole::Assistant,
        MessageRole::ToolResult,
        MessageRole::ToolResult,
        MessageRole::System,
        MessageRole::Custom,
        MessageRole::BashExecution,
        MessageRole::BranchSummary,
        MessageRole::Other,
    ])
}

/// A key from the pool, or (`None`) one that no observation holds.
fn key_of(key: Option<u8>) -> String {
    key.map_or_else(|| "never-observed".to_owned(), |k| format!("k{k}"))
}

/// Entries with at most one message each (or none: metadata), optionally after a
/// compaction summary; keys are drawn from a small pool so that some collide.
fn projection() -> impl Strategy<Value = NativeProjection> {
    let entry = prop_oneof![
        5 => (role(), 0u64..400, prop::option::of(0u8..24)).prop_map(|(role, tokens, key)| {
            vec![SizedMessage { role, tokens, key: key_of(key) }]
        }),
        1 => Just(Vec::new()),
    ];
    (
        prop::option::of((0u64..600, prop::option::of(0u8..24))),
        prop::collection::vec(entry, 0..14),
        any::<bool>(),
    )
        .prop_map(|(summary, messages, leaf_is_compaction)| {
            let mut entries = Vec::new();
            if let Some((tokens, key)) = summary {
                entries.push(ProjectedEntry {
                    id: Some("summary".into()),
                    kind: EntryKind::Compaction,
                    messages: vec![SizedMessage {
                        role: MessageRole::CompactionSummary,
                        tokens,
                        key: key_of(key),
                    }],
                });
            }
            for (index, messages) in messages.into_iter().enumerate() {
                let kind = if messages.is_empty() {
                    EntryKind::Other
                } else {
                    EntryKind::Message
                };
                entries.push(ProjectedEntry {
                    id: Some(format!("e{index}")),
                    kind,
                    messages,
                });
            }
            NativeProjection {
                entries,
                leaf_is_compaction,
            }
        })
}

fn observed() -> impl Strategy<Value = Vec<SizedMessage>> {
    prop::collection::vec(
        (0u8..24, 0u64..800).prop_map(|(key, tokens)| SizedMessage {
            role: MessageRole::User,
            tokens,
            key: format!("k{key}"),
        }),
        0..20,
    )
}

/// Pi's cut, stated declaratively and computed by brute force.
fn oracle_cut(projection: &NativeProjection, keep: u64) -> usize {
    let entries = &projection.entries;
    let start = entries
        .iter()
        .position(|e| e.kind == EntryKind::Compaction && !e.messages.is_empty())
        .map_or(0, |i| i + 1);
    let n = entries.len();
    let tokens = |i: usize| entries[i].messages.iter().map(|m| m.tokens).sum::<u64>();
    let suffix = |i: usize| (i..n).map(tokens).sum::<u64>();
    let cut_points: Vec<usize> = (start..n)
        .filter(|&i| {
            entries[i].kind != EntryKind::Compaction
                && entries[i].messages.iter().any(|m| m.role.is_cut_point())
        })
        .collect();
    if cut_points.is_empty() {
        return start;
    }
    let reached = (start..n)
        .filter(|&i| tokens(i) > 0 && suffix(i) >= keep)
        .max();
    let mut cut = match reached {
        Some(i) => cut_points
            .iter()
            .copied()
            .filter(|&p| p >= i)
            .min()
            .unwrap_or(cut_points[cut_points.len() - 1]),
        None => cut_points[0],
    };
    while cut > start
        && entries[cut - 1].kind != EntryKind::Compaction
        && entries[cut - 1].messages.is_empty()
    {
        cut -= 1;
    }
    cut
}

/// What Pi really removes: every non-system message before the cut, plus the previous
/// summary when there is any.
fn oracle_removed(projection: &NativeProjection, cut: usize) -> (u64, usize) {
    let entries = &projection.entries;
    let start = usize::from(
        entries
            .first()
            .is_some_and(|e| e.kind == EntryKind::Compaction),
    );
    let removed: Vec<&SizedMessage> = entries[start..cut]
        .iter()
        .filter(|e| e.kind != EntryKind::Compaction)
        .flat_map(|e| e.messages.iter())
        .filter(|m| m.role != MessageRole::System)
        .collect();
    let mut tokens: u64 = removed.iter().map(|m| m.tokens).sum();
    if !removed.is_empty() && start == 1 {
        tokens += entries[0].messages.iter().map(|m| m.tokens).sum::<u64>();
    }
    (tokens, removed.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn the_estimate_never_exceeds_what_pi_removes(
        projection in projection(),
        seen in observed(),
        keep in prop_oneof![Just(0u64), 0u64..1_500],
    ) {
        let estimate = estimate_native_cut(&projection, keep, &ObservedContext::new(&seen));
        let cut = oracle_cut(&projection, keep);
        prop_assert_eq!(estimate.first_kept_index, cut);
        let (real, count) = oracle_removed(&projection, cut);
        prop_assert_eq!(estimate.removed_messages, count);
        prop_assert!(estimate.removable_tokens <= real, "{} > {}", estimate.removable_tokens, real);
        let observed_total: u64 = seen.iter().map(|m| m.tokens).sum();
        prop_assert!(estimate.removable_tokens <= observed_total);
        prop_assert!(estimate.priced_messages <= estimate.removed_messages);
        if estimate.compactable {
            prop_assert!(count > 0 && !projection.leaf_is_compaction);
        }
    }

    #[test]
    fn a_fully_observed_projection_is_priced_in_full(
        projection in projection(),
        keep in 0u64..1_500,
    ) {
        // Give every message a unique identity and observe exactly those messages.
        let mut projection = projection;
        let mut next = 0;
        for entry in &mut projection.entries {
            for message in &mut entry.messages {
                message.key = format!("unique{next}");
                next += 1;
            }
        }
        let seen: Vec<SizedMessage> = projection.messages().cloned().collect();
        let estimate = estimate_native_cut(&projection, keep, &ObservedContext::new(&seen));
        let (real, _) = oracle_removed(&projection, oracle_cut(&projection, keep));
        prop_assert_eq!(estimate.removable_tokens, real);
    }

    #[test]
    fn messages_sharing_an_identity_are_paired_in_order(
        projection in projection(),
        keep in 0u64..1_500,
        pool in 1u8..4,
    ) {
        // Messages made in the same millisecond share a key: draw every key from a pool of
        // one to three, observe the same messages in the same order, and every removed
        // message is still priced at its own size.
        let mut projection = projection;
        let mut next = 0u8;
        for entry in &mut projection.entries {
            for message in &mut entry.messages {
                message.key = format!("same-ms{}", next % pool);
                next = next.wrapping_add(1);
            }
        }
        let seen: Vec<SizedMessage> = projection.messages().cloned().collect();
        let estimate = estimate_native_cut(&projection, keep, &ObservedContext::new(&seen));
        let (real, count) = oracle_removed(&projection, oracle_cut(&projection, keep));
        prop_assert_eq!(estimate.removable_tokens, real);
        prop_assert_eq!(estimate.priced_messages, count);
    }
}

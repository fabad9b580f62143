//! The recent-outputs placement (`keepRecentOutputs`) as a host drives it: medium results
//! packed with the compact placeholder, the newest outputs kept in full, a quoted result kept
//! longer, everything waiting replaced when a prompt comes after the cache lifetime, the
//! chance of a cache miss learned from the provider's reports, and placeholders that never
//! go back to full.

use proptest::prelude::*;
use sol_obspack::pack::{Carried, Pack, Seen};
use sol_obspack::placement::{PlacementReason, Shape};
use sol_obspack::quote::{quotable_lines, reply_quotes};
use sol_obspack::recent::{PromptFacts, ReportedInput, keeps_recent};
use sol_obspack::{FULL_SENDS, Handle, Names, QUOTED_KEEP_FACTOR, observe};

/// A medium output of about `bytes` bytes whose lines name `tag`.
fn output(tag: &str, bytes: usize) -> String {
    let line = format!("{tag}: a line of build output long enough to be quoted later\n");
    line.repeat(bytes / line.len() + 1)
}

fn admit(pack: &mut Pack, text: &str) -> Handle {
    pack.admit(observe("bash", "call", text), text)
}

/// Result `n` of `handles` (one per tool output, in order) as request `request` carries it:
/// output n came before request n + 1.
fn carried(handles: &[Handle], request: u32) -> Vec<Carried> {
    let count = handles.len().min(request as usize);
    (0..count)
        .map(|n| Carried {
            seen: Seen::new(handles[n], request - n as u32 - 1),
            tokens_after: 2_000 * u64::from(request - n as u32),
            newer_outputs: (count - n - 1) as u32,
        })
        .collect()
}

fn shape(request: u32) -> Shape {
    Shape {
        new_tokens: 500,
        rewritten: false,
        carried_requests: request - 1,
        ..Shape::default()
    }
}

#[test]
fn a_recent_pack_packs_medium_results_with_the_compact_placeholder() {
    let mut pack = Pack::with_recent_outputs(Names::default(), 4);
    let text = output("medium", 3_000);
    let handle = admit(&mut pack, &text);
    let packed = pack.get(handle).expect("admitted");
    assert!(packed.placeholder.starts_with("[tool output archived: "));
    assert!(packed.placeholder.len() < 300);
    assert!(packed.removed_tokens > 500);
    assert_eq!(pack.threshold_bytes(), sol_obspack::MEDIUM_THRESHOLD_BYTES);
}

#[test]
fn the_newest_outputs_stay_in_full_and_a_quoted_one_longer() {
    let keep = 3;
    let mut pack = Pack::with_recent_outputs(Names::default(), keep);
    let texts: Vec<String> = (0..12).map(|n| output(&format!("out{n}"), 2_000)).collect();
    let handles: Vec<Handle> = texts.iter().map(|text| admit(&mut pack, text)).collect();
    // A reply quotes a line of output 1 (an edit's oldText).
    let quoted_line = texts[1].lines().next().expect("a line");
    let reply = serde_json::json!([{"type": "toolCall", "name": "edit", "arguments": {"oldText": quoted_line}}]);
    pack.on_reply(&reply_quotes(reply.as_array().expect("blocks")), None);
    // At request 12 output n has 11 - n newer outputs; a prompt after the cache lifetime
    // lets every replacement ride along, so only the recent rule keeps results in full.
    let expired = PromptFacts {
        starts_prompt: true,
        expired: true,
    };
    let step = pack.on_context_recent(12, &carried(&handles, 12), shape(12), expired, 12.5);
    let placement = step.placement.expect("placed");
    for (n, reason) in placement.reasons.iter().enumerate() {
        let newer = 11 - n as u32;
        let want = if 11 - n < FULL_SENDS as usize {
            PlacementReason::FullSend
        } else if newer < keep || (n == 1 && newer < keep * QUOTED_KEEP_FACTOR) {
            PlacementReason::Recent
        } else {
            PlacementReason::RidesRewrite
        };
        assert_eq!(*reason, want, "output {n} with {newer} newer");
    }
    let replaced: Vec<bool> = placement
        .reasons
        .iter()
        .map(|reason| reason.replaces())
        .collect();
    assert_eq!(step.replace, replaced);
}

#[test]
fn a_quoted_result_is_kept_while_it_is_among_the_newest_three_times_keep() {
    let mut pack = Pack::with_recent_outputs(Names::default(), 2);
    let texts: Vec<String> = (0..8).map(|n| output(&format!("q{n}"), 1_500)).collect();
    let handles: Vec<Handle> = texts.iter().map(|text| admit(&mut pack, text)).collect();
    let quotes = quotable_lines([texts[2].as_str()]);
    pack.on_reply(&quotes, None);
    let expired = PromptFacts {
        starts_prompt: true,
        expired: true,
    };
    let step = pack.on_context_recent(8, &carried(&handles, 8), shape(8), expired, 12.5);
    // Output 2 has 5 newer outputs: fewer than 2 × 3, so it stays; output 1 (6 newer) goes.
    assert!(!step.replace[2]);
    assert!(step.replace[1]);
    assert!(step.replace[0]);
    assert!(!step.replace[7] && !step.replace[6]);
}

/// A request that starts a new prompt within the cache lifetime.
const AT_A_PROMPT: PromptFacts = PromptFacts {
    starts_prompt: true,
    expired: false,
};

/// The 30th request, with little new at its end.
fn deep_request() -> Shape {
    Shape {
        new_tokens: 200,
        rewritten: false,
        carried_requests: 30,
        ..Shape::default()
    }
}

#[test]
fn the_miss_chance_at_a_prompt_is_learned_from_the_reports() {
    // One large result waiting, deep in the context: the rewrite it causes outweighs its
    // saving while the cache is trusted, and no longer once the provider missed it at
    // most prompts.
    let deep = |pack: &mut Pack| {
        let text = output("large", 12_000);
        let handle = admit(pack, &text);
        vec![Carried {
            seen: Seen::new(handle, FULL_SENDS + 3),
            tokens_after: 60_000,
            newer_outputs: 20,
        }]
    };
    let (prompt, request) = (AT_A_PROMPT, deep_request());
    let mut trusting = Pack::with_recent_outputs(Names::default(), 10);
    let items = deep(&mut trusting);
    let step = trusting.on_context_recent(6, &items, request, prompt, 12.5);
    assert_eq!(step.replace, [false]);

    let mut learned = Pack::with_recent_outputs(Names::default(), 10);
    let items = deep(&mut learned);
    let sent = ReportedInput {
        all_input: 100_000,
        cache_read: 99_000,
    };
    learned.on_reply(&[], Some(sent));
    for _ in 0..40 {
        // Each request starts a prompt whose reply read nothing from the cache.
        let _ = learned.on_context_recent(6, &[], request, prompt, 12.5);
        learned.on_reply(
            &[],
            Some(ReportedInput {
                all_input: 100_000,
                cache_read: 0,
            }),
        );
    }
    let step = learned.on_context_recent(6, &items, request, prompt, 12.5);
    assert_eq!(step.replace, [true]);
    let placement = step.placement.expect("placed");
    assert_eq!(placement.reasons, [PlacementReason::Economic]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Over random sessions of medium and large outputs, replies that quote some of them
    /// and prompts after the cache lifetime: a result is never replaced while the recent
    /// rule keeps it, never before its third request, and never goes back to full once
    /// replaced; a prompt after the lifetime replaces everything else that waits.
    #[test]
    fn recent_outputs_stay_and_placeholders_never_go_back(
        sizes in prop::collection::vec(1_100usize..16_000, 1..14),
        keep in 1u32..6,
        quoted in prop::collection::vec(any::<bool>(), 14),
        expired_at in prop::collection::vec(any::<bool>(), 16),
    ) {
        let mut pack = Pack::with_recent_outputs(Names::default(), keep);
        let texts: Vec<String> = sizes.iter().enumerate().map(|(n, size)| output(&format!("r{n}"), *size)).collect();
        let handles: Vec<Handle> = texts.iter().map(|text| admit(&mut pack, text)).collect();
        let mut is_quoted = vec![false; texts.len()];
        let mut shown = vec![false; texts.len()];
        for request in 1..=16u32 {
            let items = carried(&handles, request);
            let prompt = PromptFacts { starts_prompt: expired_at[request as usize - 1], expired: expired_at[request as usize - 1] };
            let step = pack.on_context_recent(request, &items, shape(request), prompt, 12.5);
            for (n, replace) in step.replace.iter().enumerate() {
                let item = &items[n];
                let kept = keeps_recent(texts[n].len() as u64, item.newer_outputs, is_quoted[n], keep);
                prop_assert!(!shown[n] || *replace, "result {} went back to full", n);
                if !shown[n] {
                    if kept || item.seen.prior_requests < FULL_SENDS {
                        prop_assert!(!*replace, "result {} replaced while kept", n);
                    } else if prompt.expired {
                        prop_assert!(*replace, "result {} waited past an expired cache", n);
                    }
                }
                shown[n] |= *replace;
            }
            // The reply to this request quotes the newest output when the case says so.
            let newest = items.len().saturating_sub(1);
            if !items.is_empty() && quoted[newest] {
                pack.on_reply(&quotable_lines([texts[newest].as_str()]), None);
                is_quoted[newest] = true;
            }
        }
    }
}

#[test]
fn the_newest_reply_is_taken_once_however_many_requests_carry_it() {
    // The same deep result as above: only a provider that missed its cache at many prompts
    // makes replacing it pay. One reply that missed, carried by forty requests, is one miss.
    let text = output("large", 12_000);
    let (prompt, request) = (AT_A_PROMPT, deep_request());
    let mut pack = Pack::with_recent_outputs(Names::default(), 10);
    let handle = admit(&mut pack, &text);
    let items = [Carried {
        seen: Seen::new(handle, FULL_SENDS + 3),
        tokens_after: 60_000,
        newer_outputs: 20,
    }];
    let identity = |n: u64| sol_obspack::ContentDigest(n);
    pack.on_newest_reply(
        identity(1),
        &[],
        Some(ReportedInput {
            all_input: 100_000,
            cache_read: 99_000,
        }),
    );
    for _ in 0..40 {
        let _ = pack.on_context_recent(6, &[], request, prompt, 12.5);
        pack.on_newest_reply(
            identity(2),
            &[],
            Some(ReportedInput {
                all_input: 100_000,
                cache_read: 0,
            }),
        );
    }
    let step = pack.on_context_recent(6, &items, request, prompt, 12.5);
    assert_eq!(step.replace, [false], "one miss is not forty");
}

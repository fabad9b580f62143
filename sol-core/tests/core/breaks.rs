//! The cache breaks a provider billed: found from its reports, put down to what the session
//! shows, and shown in the `/sol-pi` table.

use proptest::prelude::*;
use sol_core::Mechanism;
use sol_core::savings::{
    Book, BreakCause, BreakFacts, Change, Part, PriceTable, ReportedUsage, ResponseUsage, SentPart,
    break_cause, rewritten_tokens,
};

proptest! {
    #[test]
    fn a_break_is_what_the_cache_did_not_read(previous in 0..10_000_000u64, read in 0..10_000_000u64) {
        let slack = (previous / 20).max(64);
        match rewritten_tokens(previous, read) {
            Some(tokens) => {
                prop_assert!(read + slack < previous);
                prop_assert_eq!(tokens, previous - read);
            }
            None => prop_assert!(read + slack >= previous),
        }
    }

    #[test]
    fn a_cause_is_the_first_fact_that_holds(facts in prop::array::uniform5(any::<bool>())) {
        let [model_changed, system_changed, compaction, placement, after_lifetime] = facts;
        let cause = break_cause(&BreakFacts { model_changed, system_changed, compaction, placement, after_lifetime });
        let order = [
            BreakCause::ModelSwitch,
            BreakCause::SystemPrompt,
            BreakCause::Compaction,
            BreakCause::Placement,
            BreakCause::Lifetime,
        ];
        let expected = facts.iter().zip(order).find_map(|(holds, cause)| holds.then_some(cause));
        prop_assert_eq!(cause, expected.unwrap_or(BreakCause::Unknown));
    }
}

fn reported(cache_read: u64, cache_write: u64) -> ResponseUsage {
    ResponseUsage {
        estimated_output: 10,
        reported: Some(ReportedUsage {
            requests: 1,
            input: 0,
            cache_read,
            cache_write,
            output: 10,
        }),
    }
}

#[test]
fn the_breaks_a_provider_reported_are_booked_with_their_cause_and_shown() {
    let part = |key, tokens| Part { key, tokens };
    let (system, task, log) = (part(1, 2_000), part(2, 100), part(3, 9_000));
    let mut book = Book::new();
    book.answered_by("anthropic/claude", None);
    // 1. The first request writes the cache; 2. the next reads it all.
    book.begin_request(vec![SentPart::unchanged(system), SentPart::unchanged(task)]);
    book.end_request(reported(0, 2_100), false);
    book.begin_request([system, task, log].map(SentPart::unchanged).to_vec());
    book.end_request(reported(2_100, 9_000), false);
    // 3. A placeholder replaces the log: the provider reads only up to it.
    let placeholder = SentPart {
        part: part(4, 200),
        changes: vec![Change {
            by: Mechanism::ObservationPack,
            before: Some(log),
        }],
    };
    book.begin_request(vec![
        SentPart::unchanged(system),
        SentPart::unchanged(task),
        placeholder.clone(),
    ]);
    book.end_request(reported(2_100, 200), false);
    // 4. A new prompt after the cache lifetime: nothing is read.
    let prompt = part(5, 50);
    book.begin_request(vec![
        SentPart::unchanged(system),
        SentPart::unchanged(task),
        placeholder.clone(),
        SentPart::unchanged(prompt),
    ]);
    book.after_cache_lifetime();
    book.end_request(reported(0, 2_350), false);
    // 5. Another model answers: nothing is read either.
    book.answered_by("openai/gpt", None);
    book.begin_request(vec![
        SentPart::unchanged(system),
        SentPart::unchanged(task),
        placeholder,
        SentPart::unchanged(prompt),
    ]);
    book.end_request(reported(0, 2_350), false);
    let breaks = &book.savings().breaks;
    assert_eq!(
        (breaks.breaks, breaks.full, breaks.tokens),
        (3, 2, 9_000 + 2_300 + 2_350)
    );
    let causes: Vec<(BreakCause, u64)> = breaks
        .causes
        .iter()
        .map(|(cause, totals)| (*cause, totals.tokens))
        .collect();
    assert_eq!(
        causes,
        vec![
            (BreakCause::ModelSwitch, 2_350),
            (BreakCause::Placement, 9_000),
            (BreakCause::Lifetime, 2_300)
        ]
    );
    let report = book.savings().report(&PriceTable::default());
    let line = report
        .to_string()
        .lines()
        .find(|line| line.starts_with("Cache rewrites"))
        .map(str::to_owned);
    assert_text_snapshot!("sol_pi_cache_breaks", line.unwrap_or_default());
    // Without reports of a cache, nothing is judged.
    let mut quiet = Book::new();
    for _ in 0..2 {
        quiet.begin_request(vec![SentPart::unchanged(system)]);
        quiet.end_request(reported(0, 0), false);
    }
    assert!(quiet.savings().breaks.is_empty());
}

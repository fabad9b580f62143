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
    fn a_cause_is_the_first_fact_that_holds(facts in prop::array::uniform6(any::<bool>())) {
        let [model_changed, compaction, system_changed, placement, after_lifetime, new_prompt] = facts;
        let cause = break_cause(&BreakFacts { model_changed, system_changed, compaction, placement, after_lifetime, new_prompt });
        let order = [
            BreakCause::ModelSwitch,
            BreakCause::Compaction,
            BreakCause::SystemPrompt,
            BreakCause::Placement,
            BreakCause::Lifetime,
            BreakCause::NewPrompt,
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

#[test]
fn an_expired_cache_breaks_every_layer_an_unknown_break_none_and_a_placement_only_where_it_is() {
    let part = |key, tokens| Part { key, tokens };
    let (system, log, prompt) = (part(1, 2_000), part(2, 9_000), part(3, 50));
    let placeholder = SentPart {
        part: part(4, 200),
        changes: vec![Change {
            by: Mechanism::ObservationPack,
            before: Some(log),
        }],
    };
    // A book of three requests; the third as `third`, answered with `usage`, after the cache
    // lifetime when `late`.
    let run = |third: Vec<SentPart>, usage: ResponseUsage, late: bool| {
        let mut book = Book::new();
        book.begin_request(vec![SentPart::unchanged(system)]);
        book.end_request(reported(0, 2_000), false);
        book.begin_request(vec![SentPart::unchanged(system), SentPart::unchanged(log)]);
        book.end_request(reported(2_000, 9_000), false);
        book.begin_request(third);
        if late {
            book.after_cache_lifetime();
        }
        book.end_request(usage, false);
        book.savings().clone()
    };
    let third_read = |savings: &sol_core::savings::Savings, layer: usize| {
        savings.layers[layer].cache_read - 2_000
    };
    // The cache expired before a new prompt: no layer reads anything of the third request.
    let expired = run(
        [system, log, prompt].map(SentPart::unchanged).to_vec(),
        reported(0, 11_050),
        true,
    );
    assert_eq!((third_read(&expired, 0), third_read(&expired, 4)), (0, 0));
    assert_eq!(expired.breaks.causes[&BreakCause::Lifetime].breaks, 1);
    // No report of the cache: the lifetime alone says so.
    let unreported = ResponseUsage {
        estimated_output: 10,
        reported: None,
    };
    let silent = run(
        [system, log, prompt].map(SentPart::unchanged).to_vec(),
        unreported,
        true,
    );
    assert_eq!((third_read(&silent, 0), third_read(&silent, 4)), (0, 0));
    assert!(silent.breaks.is_empty());
    // In time, no report: the prefix is read.
    let kept = run(
        [system, log, prompt].map(SentPart::unchanged).to_vec(),
        unreported,
        false,
    );
    assert_eq!(
        (third_read(&kept, 0), third_read(&kept, 4)),
        (11_000, 11_000)
    );
    // A break without a visible cause is shown, not carried into the layers.
    let unknown = run(
        [system, log, prompt].map(SentPart::unchanged).to_vec(),
        reported(500, 10_550),
        false,
    );
    assert_eq!(
        (third_read(&unknown, 0), third_read(&unknown, 4)),
        (11_000, 11_000)
    );
    assert_eq!(unknown.breaks.causes[&BreakCause::Unknown].breaks, 1);
    // A placeholder breaks the cache as sent only: plain Pi still reads the log.
    let placed = run(
        vec![
            SentPart::unchanged(system),
            placeholder,
            SentPart::unchanged(prompt),
        ],
        reported(2_000, 250),
        false,
    );
    assert_eq!(
        (third_read(&placed, 0), third_read(&placed, 4)),
        (11_000, 2_000)
    );
    assert_eq!(placed.breaks.causes[&BreakCause::Placement].breaks, 1);
}

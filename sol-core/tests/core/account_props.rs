//! Properties of the step account: the fold is order-independent and never wraps.

use proptest::prelude::*;
use sol_core::StepAccount;

fn account() -> impl Strategy<Value = StepAccount> {
    (
        any::<u64>(),
        any::<u64>(),
        0..4u64,
        0..4u64,
        any::<u32>(),
        any::<u32>(),
    )
        .prop_map(
            |(bytes, tokens, requests, calls, input, output)| StepAccount {
                bytes_removed: bytes,
                tokens_removed: tokens,
                requests_avoided: requests,
                model_calls: calls,
                model_input_tokens: u64::from(input),
                model_output_tokens: u64::from(output),
            },
        )
}

proptest! {
    #[test]
    fn the_fold_does_not_depend_on_the_order(mut steps in prop::collection::vec(account(), 0..12)) {
        let forward: StepAccount = steps.iter().copied().sum();
        steps.reverse();
        let backward: StepAccount = steps.iter().copied().sum();
        prop_assert_eq!(forward, backward);
        for step in &steps {
            prop_assert!(forward.bytes_removed >= step.bytes_removed);
            prop_assert!(forward.model_calls >= step.model_calls);
        }
    }

    #[test]
    fn a_removed_text_never_counts_a_negative_saving(
        original_bytes in 0..100_000u64,
        replacement_bytes in 0..100_000u64,
        original_units in 0..100_000u64,
        replacement_units in 0..100_000u64,
    ) {
        let account = StepAccount::removed_text(original_bytes, original_units, replacement_bytes, replacement_units);
        prop_assert_eq!(account.bytes_removed, original_bytes.saturating_sub(replacement_bytes));
        prop_assert!(account.tokens_removed <= original_units.div_ceil(4));
        prop_assert_eq!(account.requests_avoided + account.model_calls, 0);
        prop_assert_eq!(account.is_empty(), account.bytes_removed == 0 && account.tokens_removed == 0);
    }
}

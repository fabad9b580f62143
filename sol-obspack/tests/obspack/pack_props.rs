//! The `context` step against the rule the Pi shell applied before it moved here (the
//! oracle below), over random branches of requests.

use proptest::prelude::*;
use sol_core::StepAccount;
use sol_obspack::pack::{Handle, Pack, Seen};
use sol_obspack::{FULL_SENDS, LedgerRecord, observe};

/// The shell's rule before the step API, kept as the oracle: full below `FULL_SENDS`
/// (recorded), the placeholder from then on, recorded and announced only at exactly
/// `FULL_SENDS`.
fn oracle(pack: &Pack, request: u32, seen: &[Seen]) -> (Vec<bool>, Vec<LedgerRecord>, u64) {
    let mut replace = Vec::new();
    let mut records = Vec::new();
    let mut announced = 0;
    for item in seen {
        let packed = pack.get(item.handle).expect("a known handle");
        if item.prior_requests < FULL_SENDS {
            replace.push(false);
            records.push(LedgerRecord::full(
                &packed.observation,
                request,
                item.prior_requests + 1,
            ));
            continue;
        }
        replace.push(true);
        if item.prior_requests == FULL_SENDS {
            records.push(LedgerRecord::placeholder(
                &packed.observation,
                request,
                item.prior_requests + 1,
                &packed.placeholder,
            ));
            announced += packed.removed_tokens;
        }
    }
    (replace, records, announced)
}

fn log(lines: usize, seed: u32) -> String {
    (0..lines)
        .map(|n| format!("case {seed}-{n} ... ok\n"))
        .collect()
}

proptest! {
    #[test]
    fn the_step_equals_the_shell_rule(
        sizes in prop::collection::vec((600..1_500usize, any::<u32>()), 1..6),
        requests in prop::collection::vec(prop::collection::vec((0..6usize, 0..8u32), 0..10), 1..8),
    ) {
        let mut pack = Pack::new();
        let texts: Vec<String> = sizes.iter().map(|&(lines, seed)| log(lines, seed)).collect();
        let handles: Vec<Handle> = texts
            .iter()
            .map(|text| pack.admit(observe("bash", "", text), text))
            .collect();
        for (number, request) in requests.iter().enumerate() {
            let seen: Vec<Seen> = request
                .iter()
                .map(|&(which, prior)| Seen { handle: handles[which % handles.len()], prior_requests: prior })
                .collect();
            let request_number = number as u32 + 1;
            let step = pack.on_context(request_number, &seen);
            let (replace, records, announced) = oracle(&pack, request_number, &seen);
            prop_assert_eq!(&step.replace, &replace);
            prop_assert_eq!(&step.ledger, &records);
            prop_assert_eq!(step.first_replacement_tokens, announced);
            // The account counts every placeholder sent, the announcement only first ones.
            let expected: StepAccount = seen
                .iter()
                .zip(&replace)
                .filter(|(_, replaced)| **replaced)
                .map(|(item, _)| {
                    let packed = pack.get(item.handle).expect("known");
                    StepAccount {
                        bytes_removed: packed.observation.bytes - packed.placeholder.len() as u64,
                        tokens_removed: packed.removed_tokens,
                        ..StepAccount::default()
                    }
                })
                .sum();
            prop_assert_eq!(step.account, expected);
            prop_assert!(step.account.tokens_removed >= step.first_replacement_tokens);
        }
    }

    /// Over a growing branch (one more request each time), each result is recorded
    /// `FULL_SENDS` times in full and once as a placeholder, whatever request it appeared in.
    #[test]
    fn a_growing_branch_records_each_result_full_twice_then_once_replaced(
        appear_at in prop::collection::vec(0..6u32, 1..5),
        requests in 1..10u32,
    ) {
        let mut pack = Pack::new();
        let texts: Vec<String> = (0..appear_at.len()).map(|i| log(700, i as u32)).collect();
        let handles: Vec<Handle> = texts.iter().map(|text| pack.admit(observe("bash", "", text), text)).collect();
        let mut full = vec![0u32; handles.len()];
        let mut replaced = vec![0u32; handles.len()];
        for request in 1..=requests {
            let seen: Vec<Seen> = handles
                .iter()
                .zip(&appear_at)
                .filter(|(_, at)| **at < request)
                .map(|(handle, at)| Seen { handle: *handle, prior_requests: request - 1 - at })
                .collect();
            for record in pack.on_context(request, &seen).ledger {
                let index = handles
                    .iter()
                    .position(|h| match &record {
                        LedgerRecord::Full { id, .. } | LedgerRecord::Placeholder { id, .. } => {
                            *id == pack.get(*h).expect("known").observation.id
                        }
                        _ => false,
                    })
                    .expect("a record of an admitted result");
                match record {
                    LedgerRecord::Full { .. } => full[index] += 1,
                    LedgerRecord::Placeholder { .. } => replaced[index] += 1,
                    _ => {}
                }
            }
        }
        for (i, at) in appear_at.iter().enumerate() {
            let carried = requests.saturating_sub(*at);
            prop_assert_eq!(full[i], carried.min(FULL_SENDS));
            prop_assert_eq!(replaced[i], u32::from(carried > FULL_SENDS));
        }
    }
}

#[test]
fn a_handle_the_pack_never_gave_out_is_sent_in_full_and_recorded_nowhere() {
    let pack = Pack::new();
    let step = pack.on_context(
        5,
        &[Seen {
            handle: Handle::from_number(7),
            prior_requests: 4,
        }],
    );
    assert_eq!(step.replace, [false]);
    assert!(step.ledger.is_empty());
    assert!(step.account.is_empty());
}

//! The savings ledger: its totals are the sum of its requests, the rows add up to the total
//! exactly, a mechanism that never acted shows zeros, and a replayed session gives the live
//! figures. Plus the texts people read: the `/sol-pi` table, the status line, money.

use proptest::prelude::*;
use sol_core::savings::{
    Book, LAYERS, LayerTokens, Ledger, Money, Part, PartForms, PriceTable, ReportScale,
    ReportedUsage, RequestFacts, ResponseUsage, Savings, SentPart,
};
use sol_core::{Mechanism, StepAccount};

fn mechanism() -> impl Strategy<Value = Mechanism> {
    prop::sample::select(Mechanism::ALL.to_vec())
}

fn part() -> impl Strategy<Value = Part> {
    (0..6u64, 0..5_000u64).prop_map(|(key, tokens)| Part { key, tokens })
}

fn forms() -> impl Strategy<Value = PartForms> {
    (
        prop::option::weighted(0.9, part()),
        prop::collection::vec((mechanism(), prop::option::weighted(0.8, part())), 0..3),
    )
        .prop_map(|(sent, changes)| PartForms {
            sent,
            changes: changes
                .into_iter()
                .map(|(by, before)| sol_core::savings::Change { by, before })
                .collect(),
        })
}

fn request() -> impl Strategy<Value = RequestFacts> {
    (
        prop::collection::vec(forms(), 0..8),
        0..2_000u64,
        prop::option::weighted(0.1, mechanism()),
    )
        .prop_map(|(parts, output_tokens, avoided_by)| RequestFacts {
            parts,
            output_tokens,
            avoided_by,
            caused_by: None,
            cache_read_limit: None,
        })
}

fn step() -> impl Strategy<Value = (Mechanism, StepAccount)> {
    (mechanism(), 0..3u64, 0..50_000u64, 0..5_000u64).prop_map(|(m, calls, input, output)| {
        let account = StepAccount {
            model_calls: calls,
            model_input_tokens: input,
            model_output_tokens: output,
            tokens_removed: input / 3,
            ..StepAccount::default()
        };
        (m, account)
    })
}

fn prices() -> impl Strategy<Value = PriceTable> {
    (0..100_000u32, 0..100_000u32, 0..100_000u32, 0..100_000u32).prop_map(|(a, b, c, d)| {
        PriceTable {
            input: f64::from(a) / 1000.0,
            cache_read: f64::from(b) / 1000.0,
            cache_write: f64::from(c) / 1000.0,
            output: f64::from(d) / 1000.0,
        }
    })
}

fn run(
    requests: &[RequestFacts],
    steps: &[(Mechanism, StepAccount)],
) -> (Ledger, Vec<[LayerTokens; LAYERS]>) {
    let mut ledger = Ledger::new();
    let added = requests.iter().map(|r| ledger.record_request(r)).collect();
    for (m, account) in steps {
        ledger.record_step(*m, *account);
    }
    (ledger, added)
}

/// Requests that each keep a leading share of the one before (`keep` of it, in tenths) and
/// add their own forms, with how many leading forms each shares with the one before.
fn growing_requests() -> impl Strategy<Value = Vec<(RequestFacts, usize)>> {
    prop::collection::vec((request(), 0..=10usize), 0..16).prop_map(|steps| {
        let mut previous: Vec<PartForms> = Vec::new();
        steps
            .into_iter()
            .map(|(mut request, keep)| {
                let kept = previous.len() * keep / 10;
                let mut parts = previous[..kept].to_vec();
                parts.append(&mut request.parts);
                let shared = parts
                    .iter()
                    .zip(&previous)
                    .take_while(|(now, before)| now == before)
                    .count();
                previous.clone_from(&parts);
                (RequestFacts { parts, ..request }, shared)
            })
            .collect()
    })
}

fn reported() -> impl Strategy<Value = ReportedUsage> {
    (0..50u64, 0..200_000u64, 0..50_000u64, 0..5_000u64).prop_map(
        |(input, cache_read, cache_write, output)| ReportedUsage {
            requests: 1,
            input,
            cache_read,
            cache_write,
            output,
        },
    )
}

proptest! {
    #[test]
    fn a_report_scale_gives_back_the_request_it_was_found_from(
        read in 0..100_000u64,
        write in 0..100_000u64,
        reported in reported(),
        other in (0..100_000u64, 0..100_000u64),
    ) {
        let estimated = LayerTokens { requests: 1, cache_read: read, cache_write: write, output: 7 };
        let Some(scale) = ReportScale::new(&estimated, &reported) else {
            prop_assert!(read + write == 0 || reported.all_input() == 0);
            return Ok(());
        };
        let billed = scale.apply(&estimated);
        prop_assert_eq!(billed.cache_read, reported.cache_read);
        prop_assert_eq!(billed.cache_write, reported.input + reported.cache_write);
        prop_assert_eq!((billed.requests, billed.output), (1, 7));
        // Any other layer: its input scaled, its read never beyond it.
        let layer = LayerTokens { requests: 1, cache_read: other.0.min(other.1), cache_write: other.1 - other.0.min(other.1), output: 0 };
        let priced = scale.apply(&layer);
        let total = u128::from(layer.input()) * u128::from(reported.all_input()) / u128::from(read + write);
        prop_assert_eq!(u128::from(priced.input()), total);
    }

    #[test]
    fn a_calibrated_book_of_a_session_without_sol_pi_is_its_reports_in_every_layer(
        steps in prop::collection::vec((1..3_000u64, prop::option::weighted(0.8, reported())), 1..20),
    ) {
        let mut book = Book::new();
        book.calibrate_to_reports(4);
        let mut parts = Vec::new();
        let (mut billed, mut read) = (0u64, 0u64);
        for (index, (tokens, report)) in steps.iter().enumerate() {
            parts.push(SentPart::unchanged(Part { key: index as u64, tokens: *tokens }));
            book.begin_request(parts.clone());
            let estimated: u64 = parts.iter().map(|part| part.part.tokens).sum();
            match report.filter(|report| report.all_input() > 0) {
                Some(report) => {
                    billed += report.all_input();
                    read += report.cache_read;
                }
                None => {
                    // No report: Pi's estimate, the prefix shared with the request before.
                    billed += estimated;
                    read += estimated - tokens;
                }
            }
            book.end_request_with(ResponseUsage { estimated_output: 5, reported: *report }, false, &[]);
        }
        for layer in book.savings().layers {
            prop_assert_eq!(layer.input(), billed);
            prop_assert_eq!(layer.cache_read, read);
        }
    }

    #[test]
    fn a_request_compared_from_where_it_changed_adds_what_the_whole_request_adds(
        requests in growing_requests(),
        cut in 0..=10usize,
    ) {
        let (mut whole, mut from) = (Ledger::new(), Ledger::new());
        for (request, shared) in &requests {
            // Any claim up to the true shared length gives the same figures.
            let unchanged = shared * cut / 10;
            prop_assert_eq!(from.record_request_from(request, unchanged), whole.record_request(request));
            from.record_output(request.output_tokens);
            whole.record_output(request.output_tokens);
        }
        prop_assert_eq!(from.savings(), whole.savings());
    }

    #[test]
    fn the_totals_are_the_sum_of_the_requests(requests in prop::collection::vec(request(), 0..12)) {
        let (ledger, added) = run(&requests, &[]);
        for layer in 0..LAYERS {
            let mut sum = LayerTokens::default();
            for request in &added {
                sum.requests += request[layer].requests;
                sum.cache_read += request[layer].cache_read;
                sum.cache_write += request[layer].cache_write;
                sum.output += request[layer].output;
            }
            prop_assert_eq!(ledger.savings().layers[layer], sum);
        }
        // Each request's input in a layer is the sum of its parts present there.
        for (request, figures) in requests.iter().zip(&added) {
            for (layer, figure) in figures.iter().enumerate() {
                let expected: u64 = if request.exists_in(layer) {
                    request.parts.iter().filter_map(|p| p.at(layer)).map(|p| p.tokens).sum()
                } else {
                    0
                };
                prop_assert_eq!(figure.input(), expected);
            }
        }
    }

    #[test]
    fn the_rows_add_up_to_the_total_exactly(
        requests in prop::collection::vec(request(), 0..12),
        steps in prop::collection::vec(step(), 0..6),
        prices in prices(),
    ) {
        let (ledger, _) = run(&requests, &steps);
        let report = ledger.savings().report(&prices);
        prop_assert_eq!(report.total_net(), report.plain_cost - report.sent_cost);
        let tokens: i128 = report.rows.iter().map(|r| r.input_tokens_saved).sum();
        prop_assert_eq!(tokens, report.total_input_tokens_saved());
        let requests_saved: i128 = report.rows.iter().map(|r| r.requests_avoided).sum();
        prop_assert_eq!(requests_saved, i128::from(report.plain.requests) - i128::from(report.sent.requests));
        for row in &report.rows {
            prop_assert_eq!(row.net, row.gross - row.own_cost);
            prop_assert!(row.own_cost >= Money::ZERO);
            prop_assert!(row.requests_avoided >= 0, "a request exists in every layer below the one that avoids it");
        }
    }

    #[test]
    fn a_mechanism_that_never_acted_shows_zero(
        requests in prop::collection::vec(request(), 0..12),
        idle in mechanism(),
        prices in prices(),
    ) {
        let requests: Vec<RequestFacts> = requests
            .into_iter()
            .map(|mut r| {
                for p in &mut r.parts {
                    p.changes.retain(|c| c.by != idle);
                }
                if r.avoided_by == Some(idle) {
                    r.avoided_by = None;
                }
                r
            })
            .collect();
        let (ledger, _) = run(&requests, &[]);
        let report = ledger.savings().report(&prices);
        prop_assert_eq!(report.rows.len(), 4);
        let row = report.row(idle);
        prop_assert_eq!(row.mechanism, idle);
        prop_assert_eq!(row.input_tokens_saved, 0);
        prop_assert_eq!(row.requests_avoided, 0);
        prop_assert_eq!(row.net, Money::ZERO);
        prop_assert_eq!(row.account, StepAccount::default());
    }

    #[test]
    fn a_replayed_session_gives_the_live_figures(
        requests in prop::collection::vec(request(), 0..12),
        steps in prop::collection::vec(step(), 0..6),
    ) {
        let (live, _) = run(&requests, &steps);
        let (replayed, _) = run(&requests, &steps);
        prop_assert_eq!(live.savings(), replayed.savings());
        // What is persisted reads back as the same totals.
        let json = serde_json::to_string(live.savings()).expect("totals serialize");
        let read: Savings = serde_json::from_str(&json).expect("totals read back");
        prop_assert_eq!(&read, live.savings());
        let resumed = Ledger::resume(read);
        prop_assert_eq!(resumed.savings(), live.savings());
    }

    #[test]
    fn money_is_shown_within_half_of_its_last_digit(pico in -(1i128 << 80)..(1i128 << 80)) {
        let shown = Money(pico).to_string();
        let negative = shown.starts_with('-');
        let digits = shown.trim_start_matches('-').trim_start_matches('$').replace(',', "");
        let (whole, fraction) = digits.split_once('.').expect("a decimal point");
        prop_assert!(fraction.len() == 2 || fraction.len() == 4);
        let unit = 10i128.pow(12 - fraction.len() as u32);
        let value = (whole.parse::<i128>().expect("whole dollars") * 10i128.pow(fraction.len() as u32)
            + fraction.parse::<i128>().expect("cents"))
            * unit;
        let signed = if negative { -value } else { value };
        prop_assert!((signed - pico).abs() * 2 <= unit, "{pico} shown as {shown}");
        prop_assert_eq!(fraction.len() == 4, value < 1_000_000_000_000);
        prop_assert_eq!(negative, pico < 0 && value > 0);
    }

    #[test]
    fn the_first_and_last_layers_are_the_original_and_the_sent_forms(forms in forms()) {
        prop_assert_eq!(forms.at(LAYERS - 1), forms.sent);
        let original = forms.changes.first().map_or(forms.sent, |c| c.before);
        prop_assert_eq!(forms.at(0), original);
    }
}

#[test]
fn a_prefix_shared_with_the_previous_request_is_a_cache_read() {
    let a = Part {
        key: 1,
        tokens: 100,
    };
    let b = Part { key: 2, tokens: 40 };
    let c = Part { key: 3, tokens: 7 };
    let mut ledger = Ledger::new();
    let first = ledger.record_request(&RequestFacts::sent(vec![PartForms::unchanged(a)]));
    assert_eq!((first[4].cache_read, first[4].cache_write), (0, 100));
    let second = ledger.record_request(&RequestFacts::sent(vec![
        PartForms::unchanged(a),
        PartForms::unchanged(b),
    ]));
    assert_eq!((second[4].cache_read, second[4].cache_write), (100, 40));
    // A change in the first part rewrites everything after it, in the layers that have it.
    let third = ledger.record_request(&RequestFacts::sent(vec![
        PartForms::changed(Some(a), Mechanism::ObservationPack, Some(c)),
        PartForms::unchanged(b),
    ]));
    assert_eq!((third[4].cache_read, third[4].cache_write), (0, 47));
    assert_eq!((third[0].cache_read, third[0].cache_write), (140, 0));
}

/// A short session in which every mechanism acts once: the facts a host would record.
fn scripted_session() -> Ledger {
    let part = |key, tokens| Part { key, tokens };
    let system = part(1, 3_000);
    let task = part(2, 200);
    let edit = part(3, 400);
    let build_log = part(4, 14_000);
    let placeholder = part(5, 160);
    let test_log = part(6, 9_000);
    let receipt = part(7, 350);
    let summary = part(8, 900);
    let reply = part(9, 300);
    let mut ledger = Ledger::new();
    let same = PartForms::unchanged;
    // 1. The task; the model edits with a fused command.
    ledger.record_request(&RequestFacts {
        output_tokens: 120,
        ..RequestFacts::sent(vec![same(system), same(task)])
    });
    // The command turn plain Pi would have needed.
    ledger.record_request(&RequestFacts {
        output_tokens: 60,
        avoided_by: Some(Mechanism::ActionFusion),
        ..RequestFacts::sent(vec![same(system), same(task), same(edit)])
    });
    ledger.record_step(
        Mechanism::ActionFusion,
        StepAccount {
            requests_avoided: 1,
            ..StepAccount::default()
        },
    );
    // 2.-3. The build log is sent in full twice, then packed.
    for _ in 0..2 {
        ledger.record_request(&RequestFacts {
            output_tokens: 80,
            ..RequestFacts::sent(vec![same(system), same(task), same(edit), same(build_log)])
        });
    }
    let packed = PartForms::changed(
        Some(build_log),
        Mechanism::ObservationPack,
        Some(placeholder),
    );
    // 4. The test log arrives and is replaced by its verified receipt.
    let reduced = PartForms::changed(
        Some(test_log),
        Mechanism::EvidencePreservingReducer,
        Some(receipt),
    );
    ledger.record_request(&RequestFacts {
        output_tokens: 90,
        ..RequestFacts::sent(vec![
            same(system),
            same(task),
            same(edit),
            packed.clone(),
            reduced.clone(),
        ])
    });
    ledger.record_step(
        Mechanism::EvidencePreservingReducer,
        StepAccount {
            model_calls: 1,
            model_input_tokens: 9_400,
            model_output_tokens: 300,
            ..StepAccount::default()
        },
    );
    // 5. A plan step ends: OCC compacts the history into a summary.
    let gone = |p: PartForms| PartForms {
        sent: None,
        changes: [
            p.changes,
            vec![sol_core::savings::Change {
                by: Mechanism::OnlineContextCompact,
                before: p.sent,
            }],
        ]
        .concat(),
    };
    ledger.record_request(&RequestFacts {
        output_tokens: 70,
        ..RequestFacts::sent(vec![
            same(system),
            gone(same(task)),
            gone(same(edit)),
            gone(packed),
            gone(reduced),
            PartForms::changed(None, Mechanism::OnlineContextCompact, Some(summary)),
            same(reply),
        ])
    });
    ledger.record_step(
        Mechanism::OnlineContextCompact,
        StepAccount {
            model_calls: 1,
            model_input_tokens: 4_500,
            model_output_tokens: 900,
            ..StepAccount::default()
        },
    );
    ledger
}

#[test]
fn the_sol_pi_table() {
    let report = scripted_session().savings().report(&PriceTable::default());
    assert_eq!(report.total_net(), report.plain_cost - report.sent_cost);
    assert_text_snapshot!("sol_pi_table", report.to_string());
    assert_text_snapshot!("sol_pi_status_line", report.status_line());
}

#[test]
fn an_empty_session_has_every_row_at_zero() {
    let report = Ledger::new().savings().report(&PriceTable::default());
    assert_text_snapshot!(
        "sol_pi_table_empty",
        format!("{report}\n{}", report.status_line())
    );
}

#[test]
fn money_is_shown_to_the_cent_or_below_a_dollar_to_a_hundredth_of_a_cent() {
    let shown: Vec<String> = [
        0i128,
        49_999_999,
        50_000_000,
        31_200_000_000,
        -31_200_000_000,
        999_995_000_000,
        1_234_567_000_000_000,
    ]
    .iter()
    .map(|&pico| format!("{pico} -> {}", Money(pico)))
    .collect();
    assert_text_snapshot!("money_display", shown.join("\n"));
}

#[test]
fn a_bad_price_is_named() {
    let bad = [f64::NAN, -1.0, 1e7, f64::INFINITY];
    let errors: Vec<String> = bad
        .iter()
        .map(|&value| {
            PriceTable {
                cache_write: value,
                ..PriceTable::default()
            }
            .validated()
            .expect_err("a bad price")
            .to_string()
        })
        .collect();
    assert_text_snapshot!("price_errors", errors.join("\n"));
    assert_eq!(PriceTable::default().validated(), Ok(PriceTable::default()));
}

fn totals_entry(id: &str, data: serde_json::Value) -> sol_core::session::SessionEntry {
    sol_core::session::SessionEntry::from_value(serde_json::json!({
        "type": "custom",
        "id": id,
        "parentId": null,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "customType": sol_core::savings::SAVINGS_ENTRY_TYPE,
        "data": data,
    }))
}

proptest! {
    #[test]
    fn the_totals_entry_reads_back_as_written(
        requests in prop::collection::vec(request(), 0..8),
        steps in prop::collection::vec(step(), 0..4),
    ) {
        let (ledger, _) = run(&requests, &steps);
        let entry = totals_entry("t1", ledger.savings().to_entry_data());
        let read = Savings::from_entry(&entry).expect("a totals entry");
        prop_assert_eq!(read.as_ref(), Ok(ledger.savings()));
    }

    #[test]
    fn any_entry_data_is_read_or_named_never_a_panic(data in prop_oneof![
        Just(serde_json::json!(null)),
        any::<i64>().prop_map(serde_json::Value::from),
        "[a-z]{0,6}".prop_map(serde_json::Value::from),
        (prop::option::of(0..3u64), any::<i64>()).prop_map(|(version, n)| {
            let mut object = serde_json::json!({"layers": [{"requests": n}], "basis": "charactersOverFour"});
            if let Some(version) = version {
                object["version"] = serde_json::json!(version);
            }
            object
        }),
    ]) {
        match Savings::from_entry_data(&data) {
            Ok(savings) => prop_assert_eq!(data["version"].as_u64(), Some(1), "{:?}", savings),
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }
}

#[test]
fn a_branch_restores_its_newest_readable_totals_and_names_the_rest() {
    let older = scripted_session().savings().clone();
    let branch = [
        totals_entry("a", Ledger::new().savings().to_entry_data()),
        totals_entry("b", older.to_entry_data()),
        totals_entry("c", serde_json::json!({"version": 2})),
        totals_entry("d", serde_json::json!({"version": 1, "layers": "many"})),
        totals_entry("e", serde_json::json!([1, 2])),
    ];
    let restored = sol_core::savings::restore_savings(&branch);
    assert_eq!(restored.savings, older);
    let rejected: Vec<String> = restored.rejected.iter().map(ToString::to_string).collect();
    assert_text_snapshot!("savings_entry_rejections", rejected.join("\n"));
    assert_eq!(
        sol_core::savings::restore_savings(&[]),
        sol_core::savings::RestoredSavings::default()
    );
    // A live session's book goes on from the same totals and warns of each entry it skipped.
    let mut book = sol_core::savings::SessionBook::default();
    let warnings = book.restore(&branch);
    assert_eq!(warnings.len(), rejected.len());
    assert_text_snapshot!("savings_restore_warnings", warnings.join("\n"));
    assert_eq!(
        book.report(&PriceTable::default()).to_string(),
        older.report_per_model(&PriceTable::default()).to_string()
    );
    assert_eq!(
        book.take_totals(),
        None,
        "nothing changed since the entry was written"
    );
}

#[test]
fn the_sol_pi_table_with_each_model_at_its_registry_prices() {
    use sol_core::savings::ModelPrices;
    let agent = ModelPrices::of(&PriceTable {
        input: 5.0,
        cache_read: 0.5,
        cache_write: 6.25,
        output: 25.0,
    });
    let reducer = ModelPrices::of(&PriceTable {
        input: 1.0,
        cache_read: 0.1,
        cache_write: 1.25,
        output: 5.0,
    });
    let mut ledger = Ledger::new();
    ledger.set_model("anthropic/claude-opus-4-5", Some(agent));
    let log = Part {
        key: 2,
        tokens: 12_000,
    };
    let system = Part {
        key: 1,
        tokens: 2_000,
    };
    for _ in 0..2 {
        ledger.record_request(&RequestFacts::sent(vec![
            PartForms::unchanged(system),
            PartForms::unchanged(log),
        ]));
        ledger.record_output(100);
    }
    ledger.set_model("local/qwen", None);
    ledger.record_request(&RequestFacts::sent(vec![
        PartForms::unchanged(system),
        PartForms::changed(
            Some(log),
            Mechanism::EvidencePreservingReducer,
            Some(Part {
                key: 3,
                tokens: 400,
            }),
        ),
    ]));
    ledger.record_output(100);
    ledger.record_step_by(
        Mechanism::EvidencePreservingReducer,
        StepAccount {
            model_calls: 1,
            model_input_tokens: 12_500,
            model_output_tokens: 300,
            ..StepAccount::default()
        },
        "anthropic/claude-haiku-4-5",
        Some(reducer),
    );
    ledger.record_reported(&sol_core::savings::ReportedUsage {
        requests: 3,
        input: 0,
        cache_read: 16_300,
        cache_write: 14_500,
        output: 290,
    });
    let report = ledger.savings().report_per_model(&PriceTable::default());
    assert_eq!(report.total_net(), report.plain_cost - report.sent_cost);
    assert_text_snapshot!("sol_pi_table_per_model", report.to_string());
}

/// A cache break carries to the same message in every layer: where the provider's read ended
/// after the message ObservationPack replaced, plain Pi's request (which carries the whole
/// log there) reads to the same message, not to the same token.
#[test]
fn a_cache_break_carries_to_the_same_message_in_every_layer() {
    let part = |key, tokens| Part { key, tokens };
    let (head, log, tail, next, last) = (
        part(1, 1_000),
        part(2, 9_000),
        part(3, 4_000),
        part(4, 500),
        part(5, 300),
    );
    let placeholder = SentPart {
        part: part(6, 120),
        changes: vec![sol_core::savings::Change {
            by: Mechanism::ObservationPack,
            before: Some(log),
        }],
    };
    let mut book = Book::new();
    book.calibrate_to_reports(LAYERS - 1);
    let answer = |book: &mut Book, reported: ReportedUsage| {
        book.end_request_with(
            ResponseUsage {
                estimated_output: 10,
                reported: Some(reported),
            },
            false,
            &[],
        );
    };
    let sent = |parts: &[Part]| {
        let mut sent: Vec<SentPart> = parts.iter().copied().map(SentPart::unchanged).collect();
        sent.insert(1, placeholder.clone());
        sent
    };
    book.begin_request(
        [head, log, tail]
            .into_iter()
            .map(SentPart::unchanged)
            .collect(),
    );
    answer(
        &mut book,
        ReportedUsage {
            requests: 1,
            cache_write: 14_000,
            ..ReportedUsage::default()
        },
    );
    book.begin_request(sent(&[head, tail, next]));
    answer(
        &mut book,
        ReportedUsage {
            requests: 1,
            cache_read: 1_000,
            cache_write: 4_620,
            ..ReportedUsage::default()
        },
    );
    let before = book.savings().layers;
    // The provider read the head, the placeholder and the tail, not `next`: 500 tokens short
    // of the 5,620 the request shares with the one before.
    book.begin_request(sent(&[head, tail, next, last]));
    answer(
        &mut book,
        ReportedUsage {
            requests: 1,
            cache_read: 5_120,
            cache_write: 800,
            ..ReportedUsage::default()
        },
    );
    let added = |layer: usize| {
        let (now, then) = (book.savings().layers[layer], before[layer]);
        (
            now.cache_read - then.cache_read,
            now.cache_write - then.cache_write,
        )
    };
    assert_eq!(added(LAYERS - 1), (5_120, 800));
    // Plain Pi's request to the same message: head, log and tail.
    assert_eq!(added(0), (14_000, 800));
}

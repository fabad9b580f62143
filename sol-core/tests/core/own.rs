//! SoL-Pi's own requests: a session recorded with SoL-Pi's tool turns (`update_plan`,
//! `obs_recall`) has, on its plain-Pi side, exactly the requests of the same session made
//! without them; and every priced figure scales with the prices.

use proptest::prelude::*;
use sol_core::savings::{
    Book, Change, LAYERS, ModelPrices, Money, Part, PriceTable, Report, ResponseUsage, SentPart,
    ToolCall, own_changes,
};
use sol_core::{Mechanism, StepAccount};

/// A tool SoL-Pi adds: Online Context Compact's plan or ObservationPack's recall.
fn own_mechanism() -> impl Strategy<Value = Mechanism> {
    prop_oneof![
        Just(Mechanism::OnlineContextCompact),
        Just(Mechanism::ObservationPack)
    ]
}

/// A SoL-Pi tool call: its mechanism, its call's tokens, its result's and its output's.
type OwnCall = (Mechanism, u64, u64, u64);

fn own_call() -> impl Strategy<Value = OwnCall> {
    (own_mechanism(), 1..400u64, 1..2_000u64, 1..300u64)
}

/// One step of the model's work: a call of another tool (its tokens, its result's, the
/// response's output), with SoL-Pi turns before it that only call SoL-Pi's tools, and a
/// SoL-Pi call made in the same response.
#[derive(Debug, Clone)]
struct Work {
    call: u64,
    result: u64,
    output: u64,
    own_turns: Vec<OwnCall>,
    mixed: Option<OwnCall>,
}

fn work(own: bool) -> impl Strategy<Value = Work> {
    let turns = if own { 0..3usize } else { 0..1usize };
    (
        1..500u64,
        1..20_000u64,
        1..500u64,
        prop::collection::vec(own_call(), turns),
        prop::option::weighted(0.3, own_call()),
    )
        .prop_map(move |(call, result, output, own_turns, mixed)| Work {
            call,
            result,
            output,
            own_turns,
            mixed: mixed.filter(|_| own),
        })
}

/// A message of the conversation: what a host reports of it.
#[derive(Debug, Clone)]
struct Message {
    id: u64,
    tokens: u64,
    /// An assistant message's tool calls, or a tool result's tool (`result`).
    calls: Vec<ToolCall>,
    result: bool,
}

/// A form's key: equal for the same message in the same form only.
fn key(id: u64, tokens: u64) -> u64 {
    id.wrapping_mul(1_000_003).wrapping_add(tokens)
}

/// The request as a host reports it: each message with its changes, SoL-Pi's own traffic
/// first (as the addon builds them).
fn parts(history: &[Message]) -> Vec<SentPart> {
    history
        .iter()
        .map(|message| {
            let part = Part {
                key: key(message.id, message.tokens),
                tokens: message.tokens,
            };
            let own = if message.result {
                message
                    .calls
                    .iter()
                    .filter_map(|call| call.owner)
                    .map(|owner| (owner, None))
                    .collect()
            } else {
                own_changes(message.tokens, &message.calls)
            };
            SentPart {
                part,
                changes: own
                    .into_iter()
                    .map(|(by, tokens)| Change {
                        by,
                        before: tokens.map(|tokens| Part {
                            key: key(message.id, tokens),
                            tokens,
                        }),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Runs the session: with SoL-Pi's own turns and calls when `with_own`, else the same work
/// without them (what plain Pi does).
fn run(steps: &[Work], with_own: bool) -> Book {
    run_by(steps, with_own, None)
}

/// [`run`] with every request answered by the model `m/1`, at these prices when given.
fn run_by(steps: &[Work], with_own: bool, model: Option<Option<ModelPrices>>) -> Book {
    let mut book = Book::new();
    if let Some(prices) = model {
        book.answered_by("m/1", prices);
        book.record_step_by(
            Mechanism::EvidencePreservingReducer,
            StepAccount {
                model_calls: 1,
                model_input_tokens: 5_000,
                model_output_tokens: 300,
                ..StepAccount::default()
            },
            "m/1",
            prices,
        );
    }
    let mut next_id = 10u64;
    let mut id = || {
        next_id += 1;
        next_id
    };
    let mut history = vec![
        Message {
            id: 1,
            tokens: 3_000,
            calls: Vec::new(),
            result: false,
        },
        Message {
            id: 2,
            tokens: 200,
            calls: Vec::new(),
            result: false,
        },
    ];
    let respond =
        |book: &mut Book, history: &[Message], output: u64, owners: &[Option<Mechanism>]| {
            book.begin_request(parts(history));
            let usage = ResponseUsage {
                estimated_output: output,
                reported: None,
            };
            book.end_request_with(usage, false, owners);
        };
    for step in steps {
        if with_own {
            for &(owner, call, result, output) in &step.own_turns {
                respond(&mut book, &history, output, &[Some(owner)]);
                let calls = vec![ToolCall {
                    owner: Some(owner),
                    tokens: call,
                }];
                history.push(Message {
                    id: id(),
                    tokens: call,
                    calls: calls.clone(),
                    result: false,
                });
                history.push(Message {
                    id: id(),
                    tokens: result,
                    calls,
                    result: true,
                });
            }
        }
        let mixed = step.mixed.filter(|_| with_own);
        let mut calls = vec![ToolCall {
            owner: None,
            tokens: step.call,
        }];
        let mut output = step.output;
        if let Some((owner, call, _, extra)) = mixed {
            calls.push(ToolCall {
                owner: Some(owner),
                tokens: call,
            });
            output += extra;
        }
        let owners: Vec<Option<Mechanism>> = calls.iter().map(|call| call.owner).collect();
        respond(&mut book, &history, output, &owners);
        let tokens = calls.iter().map(|call| call.tokens).sum();
        let (assistant, result) = (id(), id());
        history.push(Message {
            id: assistant,
            tokens,
            // Plain Pi's message has no SoL-Pi call and so nothing to mark.
            calls: if mixed.is_some() { calls } else { Vec::new() },
            result: false,
        });
        history.push(Message {
            id: result,
            tokens: step.result,
            calls: Vec::new(),
            result: false,
        });
        if let Some((owner, _, result, _)) = mixed {
            history.push(Message {
                id: id(),
                tokens: result,
                calls: vec![ToolCall {
                    owner: Some(owner),
                    tokens: 0,
                }],
                result: true,
            });
        }
    }
    book
}

/// Every figure of a report, in picodollars.
fn figures(report: &Report) -> Vec<i128> {
    let mut all = vec![report.plain_cost.0, report.sent_cost.0];
    for row in &report.rows {
        all.extend([row.gross.0, row.own_cost.0, row.net.0]);
    }
    all
}

fn prices() -> impl Strategy<Value = PriceTable> {
    // Whole micro-dollars per million tokens: every product is exact.
    (
        0..20_000_000u64,
        0..20_000_000u64,
        0..20_000_000u64,
        0..80_000_000u64,
    )
        .prop_map(|(input, cache_read, cache_write, output)| {
            let dollars = |micro: u64| micro as f64 / 1_000_000.0;
            PriceTable {
                input: dollars(input),
                cache_read: dollars(cache_read),
                cache_write: dollars(cache_write),
                output: dollars(output),
            }
        })
}

proptest! {
    #[test]
    fn a_session_without_sol_pi_requests_has_a_plain_side_equal_to_its_sent_side(
        steps in prop::collection::vec(work(false), 0..12),
    ) {
        let book = run(&steps, false);
        let layers = book.savings().layers;
        for layer in 1..LAYERS {
            prop_assert_eq!(layers[layer], layers[0]);
        }
    }

    #[test]
    fn a_request_sol_pi_caused_never_lowers_the_plain_side(
        steps in prop::collection::vec(work(true), 0..12),
        table in prices(),
    ) {
        let plain = run(&steps, false);
        let with_own = run(&steps, true);
        let (alone, counted) = (plain.savings().layers[0], with_own.savings().layers[0]);
        // Plain Pi's requests are exactly those of the session made without SoL-Pi's turns...
        prop_assert_eq!(counted.requests, alone.requests);
        prop_assert_eq!(counted.cache_read, alone.cache_read);
        prop_assert_eq!(counted.cache_write, alone.cache_write);
        // ...but for the output of a SoL-Pi call made beside other work, which stays.
        prop_assert!(counted.output >= alone.output);
        if steps.iter().all(|step| step.mixed.is_none()) {
            prop_assert_eq!(counted.output, alone.output);
        }
        prop_assert!(
            with_own.savings().report(&table).plain_cost >= plain.savings().report(&table).plain_cost
        );
        // The requests as sent hold every SoL-Pi turn.
        let turns: usize = steps.iter().map(|step| step.own_turns.len()).sum();
        prop_assert_eq!(
            with_own.savings().layers[LAYERS - 1].requests,
            (steps.len() + turns) as u64
        );
    }

    #[test]
    fn prices_scale_every_figure_linearly(
        steps in prop::collection::vec(work(true), 0..8),
        table in prices(),
        factor in 1..1_000u32,
    ) {
        let book = run(&steps, true);
        let scaled = PriceTable {
            input: table.input * f64::from(factor),
            cache_read: table.cache_read * f64::from(factor),
            cache_write: table.cache_write * f64::from(factor),
            output: table.output * f64::from(factor),
        };
        let once = figures(&book.savings().report(&table));
        let many = figures(&book.savings().report(&scaled));
        let expected: Vec<i128> = once.iter().map(|figure| figure * i128::from(factor)).collect();
        prop_assert_eq!(many, expected);
    }
}

proptest! {
    #[test]
    fn each_model_is_priced_at_its_own_prices_and_one_without_at_the_default(
        steps in prop::collection::vec(work(true), 0..8),
        own in prices(),
        default in prices(),
    ) {
        // A model with prices of its own: the report is the one at those prices.
        let book = run_by(&steps, true, Some(Some(ModelPrices::of(&own))));
        let mut per_model = book.savings().report_per_model(&default);
        prop_assert_eq!(figures(&per_model), figures(&book.savings().report(&own)));
        prop_assert_eq!(per_model.model_prices.clone(), vec![("m/1".to_owned(), Some(own))]);
        // A model without: the default's, and the same figures as a session that named none.
        let unpriced = run_by(&steps, true, Some(None));
        per_model = unpriced.savings().report_per_model(&default);
        prop_assert_eq!(figures(&per_model), figures(&unpriced.savings().report(&default)));
        prop_assert_eq!(per_model.model_prices, vec![("m/1".to_owned(), None)]);
        let unnamed = run(&steps, true).savings().report_per_model(&default);
        prop_assert!(unnamed.model_prices.is_empty());
        prop_assert_eq!(&unnamed.plain_cost, &unpriced.savings().report(&default).plain_cost);
    }
}

#[test]
fn a_turn_that_only_updates_the_plan_costs_online_context_compact() {
    let steps = [Work {
        call: 50,
        result: 4_000,
        output: 60,
        own_turns: vec![(Mechanism::OnlineContextCompact, 80, 40, 90)],
        mixed: None,
    }];
    let report = run(&steps, true).savings().report(&PriceTable::default());
    let occ = report.row(Mechanism::OnlineContextCompact);
    assert_eq!(occ.requests_avoided, -1);
    assert!(occ.net < Money::ZERO, "{occ:?}");
    assert_eq!(report.plain.requests, 1);
    assert_eq!(report.sent.requests, 2);
}

proptest! {
    /// SoL-Pi's share of a system message is exactly what its tools added: the declarations
    /// (as JSON, a quarter of their UTF-16 length rounded up) and its lines where the prompt
    /// holds them; a prompt without them has no share, whatever Pi's own tools and text.
    #[test]
    fn the_system_share_is_what_sol_pi_added_and_nothing_else(
        text in "[ -~\n]{0,200}",
        others in prop::collection::vec("[a-z]{1,12}", 0..5),
        description in "[ -~é]{0,300}",
        with_line in any::<bool>(),
    ) {
        use serde_json::json;
        use sol_core::savings::{OwnPrompt, ToolCall};
        let mut own = OwnPrompt::default();
        let snippet = "Recall an archived tool output";
        own.add_tool("obs_recall", Mechanism::ObservationPack, Some(snippet), &[]);
        let others: Vec<_> = others
            .iter()
            .filter(|name| name.as_str() != "obs_recall")
            .map(|name| json!({ "name": name, "description": description }))
            .collect();
        let plain = json!({ "role": "system", "content": text, "toolsAdded": others });
        prop_assert!(text.contains(snippet) || own.system_shares(&plain).is_empty());
        let declaration = json!({ "name": "obs_recall", "description": description });
        let mut tools = others.clone();
        tools.push(declaration.clone());
        let content = if with_line { format!("{text}\n- obs_recall: {snippet}\n") } else { text.clone() };
        let message = json!({ "role": "system", "content": content, "toolsAdded": tools });
        let units = |text: &str| text.encode_utf16().count() as u64;
        let mut expected = units(&declaration.to_string());
        if with_line || text.contains(snippet) {
            expected += units(snippet) + units("obs_recall") + 5;
        }
        prop_assert_eq!(
            own.system_shares(&message),
            vec![
                ToolCall { owner: None, tokens: 0 },
                ToolCall { owner: Some(Mechanism::ObservationPack), tokens: expected.div_ceil(4) },
            ]
        );
    }
}

//! The session book: from what a host saw of each request, it rebuilds what plain Pi and
//! each partial configuration would have sent. Checked against a model conversation whose
//! plain and sent request lists are built independently and priced here by the prefix rule.

use proptest::prelude::*;
use sol_core::savings::{
    Book, Change, LayerTokens, Part, ReportedUsage, ResponseUsage, SAVINGS_ENTRY_VERSION, Savings,
    SentPart,
};
use sol_core::{Mechanism, StepAccount};

/// One thing that happens in the model conversation.
#[derive(Debug, Clone)]
enum Event {
    /// A message of this many tokens joins the history.
    Append(u64),
    /// ObservationPack replaces a message not yet compacted (picked by this number) by a
    /// placeholder of this many tokens, if it has none.
    Place(usize, u64),
    /// A request, then its response.
    Request,
    /// The last response ran a fused command; a request follows.
    Fused,
    /// A request, then Online Context Compact summarizes (this share, in tenths, of) the
    /// history into a summary of this many tokens.
    Compact(u8, u64),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => (1..3_000u64).prop_map(Event::Append),
        2 => (any::<usize>(), 1..200u64).prop_map(|(at, tokens)| Event::Place(at, tokens)),
        4 => Just(Event::Request),
        1 => Just(Event::Fused),
        1 => (1..10u8, 1..400u64).prop_map(|(tenths, tokens)| Event::Compact(tenths, tokens)),
    ]
}

#[derive(Debug, Clone, Copy)]
struct Message {
    id: u64,
    tokens: u64,
    placeholder: Option<u64>,
    /// Online Context Compact's continuation after a summary: only the requests as sent
    /// carry it.
    added: bool,
}

impl Message {
    fn original(&self) -> Part {
        Part {
            key: self.id * 2,
            tokens: self.tokens,
        }
    }

    fn as_packed(&self) -> Part {
        match self.placeholder {
            Some(tokens) => Part {
                key: self.id * 2 + 1,
                tokens,
            },
            None => self.original(),
        }
    }
}

/// The conversation, and the request lists of each configuration, built without the book.
#[derive(Default)]
struct Model {
    history: Vec<Message>,
    /// The summary's key and tokens, and how many leading messages it stands for.
    summary: Option<(u64, u64, usize)>,
    next_id: u64,
    plain: Vec<Vec<Part>>,
    /// Plain Pi with the requests fused commands saved put back.
    unfused: Vec<Vec<Part>>,
    packed: Vec<Vec<Part>>,
    sent: Vec<Vec<Part>>,
    /// A second book fed each request as what it adds to the previous one
    /// ([`Book::record_request_from`]), with the parts it was given last.
    incremental: Option<(Book, Vec<SentPart>)>,
}

impl Model {
    fn request(&mut self, book: &mut Book, fused: bool) {
        let original = self.history.iter().filter(|message| !message.added);
        let plain: Vec<Part> = original.clone().map(Message::original).collect();
        let packed: Vec<Part> = original.map(Message::as_packed).collect();
        let mut parts = Vec::new();
        let mut sent = Vec::new();
        let covered = self.summary.map_or(0, |(_, _, covered)| covered);
        if let Some((key, tokens, _)) = self.summary {
            let part = Part { key, tokens };
            sent.push(part);
            parts.push(SentPart {
                part,
                changes: vec![Change {
                    by: Mechanism::OnlineContextCompact,
                    before: None,
                }],
            });
        }
        for message in &self.history[covered..] {
            let part = message.as_packed();
            sent.push(part);
            if message.added {
                parts.push(SentPart {
                    part,
                    changes: vec![Change {
                        by: Mechanism::OnlineContextCompact,
                        before: None,
                    }],
                });
                continue;
            }
            parts.push(SentPart {
                part,
                changes: message
                    .placeholder
                    .map(|_| Change {
                        by: Mechanism::ObservationPack,
                        before: Some(message.original()),
                    })
                    .into_iter()
                    .collect(),
            });
        }
        let response = ResponseUsage {
            estimated_output: 10,
            reported: None,
        };
        if let Some((second, previous)) = &mut self.incremental {
            let kept = parts
                .iter()
                .zip(previous.iter())
                .take_while(|(now, before)| now == before)
                .count();
            if fused {
                second.fused_command();
            }
            second.record_request_from(kept, parts[kept..].to_vec());
            second.record_response(response);
            previous.clone_from(&parts);
        }
        if fused {
            book.fused_command();
            self.unfused.push(plain.clone());
        }
        book.record_request(parts);
        book.record_response(response);
        self.unfused.push(plain.clone());
        self.plain.push(plain);
        self.packed.push(packed);
        self.sent.push(sent);
    }

    fn apply(&mut self, book: &mut Book, event: &Event) {
        match *event {
            Event::Append(tokens) => {
                self.next_id += 1;
                self.history.push(Message {
                    id: self.next_id,
                    tokens,
                    placeholder: None,
                    added: false,
                });
            }
            Event::Place(at, tokens) => {
                let covered = self.summary.map_or(0, |(_, _, covered)| covered);
                let open = self.history.len() - covered;
                if open > 0 {
                    let message = &mut self.history[covered + at % open];
                    if message.placeholder.is_none() && !message.added && tokens < message.tokens {
                        message.placeholder = Some(tokens);
                    }
                }
            }
            Event::Request => self.request(book, false),
            Event::Fused => self.request(book, true),
            Event::Compact(tenths, tokens) => {
                self.request(book, false);
                let covered = self.summary.map_or(0, |(_, _, covered)| covered);
                let share = self.history.len() * usize::from(tenths) / 10;
                if share > covered {
                    self.next_id += 1;
                    self.summary = Some((u64::MAX - self.next_id, tokens, share));
                    // The continuation that follows the summary.
                    self.next_id += 1;
                    self.history.push(Message {
                        id: self.next_id,
                        tokens: 40,
                        placeholder: None,
                        added: true,
                    });
                }
            }
        }
    }
}

/// The prefix rule, counted here: what a request shares from the start with the previous
/// one is a cache read. Output is left out: only requests really sent have one.
fn priced(requests: &[Vec<Part>]) -> LayerTokens {
    let mut layer = LayerTokens::default();
    let mut previous: &[Part] = &[];
    for parts in requests {
        let shared = parts
            .iter()
            .zip(previous)
            .take_while(|(a, b)| a.key == b.key)
            .count();
        layer.requests += 1;
        layer.cache_read += parts[..shared].iter().map(|p| p.tokens).sum::<u64>();
        layer.cache_write += parts[shared..].iter().map(|p| p.tokens).sum::<u64>();
        previous = parts;
    }
    layer
}

fn run(events: &[Event]) -> (Book, Model) {
    let mut book = Book::new();
    let mut model = Model::default();
    for event in events {
        model.apply(&mut book, event);
    }
    (book, model)
}

proptest! {
    #[test]
    fn a_request_given_as_what_it_adds_is_booked_as_the_whole_request(
        events in prop::collection::vec(event(), 0..60),
    ) {
        let mut book = Book::new();
        let mut model = Model {
            incremental: Some((Book::new(), Vec::new())),
            ..Model::default()
        };
        for event in &events {
            model.apply(&mut book, event);
        }
        let (second, _) = model.incremental.as_ref().expect("kept");
        prop_assert_eq!(second.savings(), book.savings());
    }

    #[test]
    fn every_layer_is_what_that_configuration_would_have_sent(
        events in prop::collection::vec(event(), 0..40),
    ) {
        let (book, model) = run(&events);
        let mut layers = book.savings().layers;
        for layer in &mut layers {
            prop_assert_eq!(layer.output, 10 * model.sent.len() as u64, "the responses' output");
            layer.output = 0;
        }
        prop_assert_eq!(layers[0], priced(&model.unfused), "plain Pi, with the fused commands' turns");
        prop_assert_eq!(layers[1], priced(&model.plain), "with Action Fusion");
        prop_assert_eq!(layers[2], priced(&model.packed), "with ObservationPack");
        prop_assert_eq!(layers[3], layers[2], "the reducer changed nothing");
        prop_assert_eq!(layers[4], priced(&model.sent), "as sent");
    }

    #[test]
    fn a_resumed_book_keeps_the_counts_and_prices_its_first_request_as_a_write(
        events in prop::collection::vec(event(), 1..30),
        later in prop::collection::vec(event(), 0..15),
    ) {
        let (mut live, mut model) = run(&events);
        let data = live.savings().to_entry_data();
        prop_assert_eq!(data["version"].as_u64(), Some(SAVINGS_ENTRY_VERSION));
        let mut resumed = Book::resume(Savings::from_entry_data(&data).expect("reads back"));
        prop_assert_eq!(resumed.savings(), live.savings());
        let mut shadow = Model {
            history: model.history.clone(),
            summary: model.summary,
            next_id: model.next_id,
            ..Model::default()
        };
        for event in &later {
            model.apply(&mut live, event);
            shadow.apply(&mut resumed, event);
        }
        let (a, b) = (live.savings(), resumed.savings());
        // What a summary from before the resume stands for is not persisted: it counts as
        // Pi's own from then on, so only the layers with Online Context Compact are the same.
        let same = if shadow.summary.is_some() { 4..5 } else { 0..5 };
        for layer in 0..5 {
            prop_assert_eq!(a.layers[layer].requests, b.layers[layer].requests);
            prop_assert_eq!(a.layers[layer].output, b.layers[layer].output);
        }
        for layer in same {
            prop_assert_eq!(a.layers[layer].input(), b.layers[layer].input(), "only the cache split differs");
            prop_assert!(b.layers[layer].cache_write >= a.layers[layer].cache_write);
        }
    }

    #[test]
    fn the_provider_reports_are_summed_as_given(
        reports in prop::collection::vec((0..5_000u64, 0..5_000u64, 0..5_000u64, 0..900u64), 0..10),
    ) {
        let mut book = Book::new();
        for &(input, cache_read, cache_write, output) in &reports {
            book.record_request(vec![SentPart::unchanged(Part { key: 1, tokens: 3 })]);
            book.record_response(ResponseUsage {
                estimated_output: 7,
                reported: Some(ReportedUsage { requests: 1, input, cache_read, cache_write, output }),
            });
        }
        let reported = book.savings().reported;
        let given: Vec<_> = reports.iter().filter(|r| r.0 + r.1 + r.2 + r.3 > 0).collect();
        prop_assert_eq!(reported.requests, given.len() as u64);
        prop_assert_eq!(reported.cache_read, given.iter().map(|r| r.1).sum::<u64>());
        // A reported output wins over the estimate; without one the estimate counts.
        let outputs: u64 = reports.iter().map(|r| if r.3 > 0 { r.3 } else { 7 }).sum();
        prop_assert_eq!(book.savings().layers[4].output, outputs);
    }
}

#[test]
fn a_fused_command_saves_one_request_per_turn_however_many_calls_it_made() {
    let mut book = Book::new();
    let part = Part {
        key: 5,
        tokens: 100,
    };
    book.fused_command();
    book.fused_command();
    let added = book.record_request(vec![SentPart::unchanged(part)]);
    assert_eq!(added.len(), 2);
    // The avoided request is only in plain Pi's layer, the one sent in every layer.
    assert_eq!(added[0].map(|layer| layer.requests), [1, 0, 0, 0, 0]);
    assert_eq!(added[1].map(|layer| layer.requests), [1; 5]);
    let layers = book.savings().layers;
    assert_eq!((layers[0].requests, layers[1].requests), (2, 1));
    // The avoided request wrote the prefix; the one sent then read it.
    assert_eq!((layers[0].cache_write, layers[0].cache_read), (100, 100));
}

/// The step is what marks the turn: Action Fusion's step that avoided a request needs no
/// second call, any other mechanism's step (or a fused step that avoided none) marks nothing.
#[test]
fn an_action_fusion_step_that_avoided_a_request_marks_the_next_turn() {
    let part = Part {
        key: 5,
        tokens: 100,
    };
    let avoided = StepAccount {
        requests_avoided: 1,
        ..StepAccount::default()
    };
    let requests = |steps: &[(Mechanism, StepAccount)]| {
        let mut book = Book::new();
        for (mechanism, account) in steps {
            book.record_step(*mechanism, *account);
        }
        book.record_request(vec![SentPart::unchanged(part)]).len()
    };
    assert_eq!(requests(&[(Mechanism::ActionFusion, avoided)]), 2);
    assert_eq!(
        requests(&[
            (Mechanism::ActionFusion, avoided),
            (Mechanism::ActionFusion, avoided)
        ]),
        2
    );
    assert_eq!(
        requests(&[(Mechanism::ActionFusion, StepAccount::default())]),
        1
    );
    assert_eq!(requests(&[(Mechanism::ObservationPack, avoided)]), 1);
    let mut book = Book::new();
    book.record_step_by(Mechanism::ActionFusion, avoided, "p/m", None);
    assert_eq!(
        book.record_request(vec![SentPart::unchanged(part)]).len(),
        2
    );
}

#[test]
fn a_request_that_failed_unbilled_is_dropped_with_its_response() {
    let mut book = Book::new();
    let part = Part {
        key: 5,
        tokens: 100,
    };
    let nothing = ResponseUsage::default();
    book.begin_request(vec![SentPart::unchanged(part)]);
    book.end_request(nothing, true);
    assert_eq!(book.savings().layers[4].requests, 0);
    // Aborted while streaming: the provider answered part of it, so it was billed.
    let partial = ResponseUsage {
        estimated_output: 12,
        reported: None,
    };
    book.begin_request(vec![SentPart::unchanged(part)]);
    book.end_request(partial, true);
    // Ended normally, even with no output at all.
    book.begin_request(vec![SentPart::unchanged(part)]);
    book.end_request(nothing, false);
    let sent = book.savings().layers[4];
    assert_eq!((sent.requests, sent.output), (2, 12));
    // A response with no request begun is not counted.
    book.end_request(partial, false);
    assert_eq!(book.savings().layers[4].requests, 2);
}

#[test]
fn a_request_step_counts_with_its_request_and_not_for_one_that_never_went_out() {
    let mut book = Book::new();
    let part = Part {
        key: 5,
        tokens: 100,
    };
    let replaced = |tokens| sol_core::StepAccount {
        tokens_removed: tokens,
        ..sol_core::StepAccount::default()
    };
    let answered = ResponseUsage {
        estimated_output: 10,
        reported: None,
    };
    let pack = |book: &Book| book.savings().steps[1].tokens_removed;
    // A step for a request an extension aborted before it began: replaced by the next one.
    book.record_request_step(Mechanism::ObservationPack, replaced(1_000));
    book.record_request_step(Mechanism::ObservationPack, replaced(300));
    book.begin_request(vec![SentPart::unchanged(part)]);
    assert_eq!(pack(&book), 0, "counted only with its response");
    book.end_request(answered, false);
    assert_eq!(pack(&book), 300);
    // A request that failed unbilled takes its step with it.
    book.record_request_step(Mechanism::ObservationPack, replaced(70));
    book.begin_request(vec![SentPart::unchanged(part)]);
    book.end_request(ResponseUsage::default(), true);
    assert_eq!(pack(&book), 300);
    // A request begun again without a response never went out: its step goes too.
    book.record_request_step(Mechanism::ObservationPack, replaced(20));
    book.begin_request(vec![SentPart::unchanged(part)]);
    book.begin_request(vec![SentPart::unchanged(part)]);
    book.end_request(answered, false);
    assert_eq!(pack(&book), 300);
}

#[test]
fn the_turn_a_fused_command_saved_is_counted_without_the_commands_output() {
    let part = |key, tokens| Part { key, tokens };
    let (system, task, edit, result) = (part(1, 2_000), part(2, 100), part(3, 50), part(4, 9_000));
    let usage = ResponseUsage {
        estimated_output: 20,
        reported: None,
    };
    let mut book = Book::new();
    book.begin_request(vec![SentPart::unchanged(system), SentPart::unchanged(task)]);
    book.end_request(usage, false);
    book.fused_command();
    book.begin_request(
        [system, task, edit, result]
            .into_iter()
            .map(SentPart::unchanged)
            .collect(),
    );
    // The edit's own result, before the command's output was appended to it.
    book.fused_results(vec![(3, part(5, 30))]);
    book.end_request(usage, false);
    let plain = book.savings().layers[0];
    assert_eq!(plain.requests, 3);
    // The saved turn wrote the edit and its short result; the next request, the output.
    assert_eq!(plain.cache_write, 2_100 + 50 + 30 + 9_000);
    assert_eq!(plain.cache_read, 2 * 2_100 + 50);
    let sent = book.savings().layers[4];
    assert_eq!(
        (sent.requests, sent.cache_read, sent.cache_write),
        (2, 2_100, 2_100 + 50 + 9_000)
    );
}

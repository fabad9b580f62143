//! The book a host keeps for one session: what it saw of each request, turned into
//! [`RequestFacts`] for the [`Ledger`].
//!
//! A host reports each request as sent, part by part, with the changes SoL-Pi made to each
//! part ([`SentPart`]). Two facts are not visible in a single request, and the book keeps
//! them: the parts an Online Context Compact summary stands for (the parts of the previous
//! request that the summary's first request no longer carries), and the model turn a fused
//! command made unnecessary.

use std::collections::{BTreeMap, BTreeSet};

use super::ledger::{ReportScale, Reporting, RequestTerms};
use super::{Change, LAYERS, LayerTokens, Ledger, ModelPrices, Part, PartForms, Savings};
use crate::{Mechanism, StepAccount};

/// One part of a request as sent, with what SoL-Pi changed in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentPart {
    /// The part as sent.
    pub part: Part,
    /// SoL-Pi's changes to it, earliest first; empty for an untouched part. A change by
    /// Online Context Compact with no `before` marks its summary (or its continuation).
    pub changes: Vec<Change>,
}

impl SentPart {
    /// A part SoL-Pi did not touch.
    pub fn unchanged(part: Part) -> SentPart {
        SentPart {
            part,
            changes: Vec::new(),
        }
    }

    fn is_compaction(&self) -> bool {
        self.changes
            .iter()
            .any(|change| change.by == Mechanism::OnlineContextCompact && change.before.is_none())
    }
}

/// The usage of one model response: the host's estimate and what the provider reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResponseUsage {
    /// Output tokens by the host's estimate of the response.
    pub estimated_output: u64,
    /// What the provider reported for the request, when it did.
    pub reported: Option<ReportedUsage>,
}

impl ResponseUsage {
    /// Whether the request was billed: a response that ended in an abort or an error
    /// (`failed`) with no output and no reported usage was not (a request aborted before it
    /// went out, a provider error), and costs nothing.
    pub fn billed(&self, failed: bool) -> bool {
        !failed
            || self.estimated_output > 0
            || self.reported.is_some_and(|reported| !reported.is_empty())
    }
}

/// Token figures a provider reported for one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReportedUsage {
    /// Requests with a report (one per response; a sum in [`Savings::reported`]).
    pub requests: u64,
    /// Input tokens the provider neither read from nor wrote to its cache.
    pub input: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
    /// Input tokens written to the cache.
    pub cache_write: u64,
    /// Output tokens.
    pub output: u64,
}

/// A Pi object's field as a count: a finite number above 0, truncated; anything
/// else (missing, negative, not a number) counts 0.
fn count_of(value: Option<&serde_json::Value>) -> u64 {
    value
        .and_then(serde_json::Value::as_f64)
        .filter(|n| n.is_finite() && *n > 0.0)
        .map_or(0, |n| n as u64)
}

impl ReportedUsage {
    /// The usage Pi records for a provider's response (an assistant message's `usage`, a
    /// compaction's): `input`, `cacheRead`, `cacheWrite` and `output`, each a count (a field
    /// that is missing or not a positive number counts 0), as one request's report.
    pub fn from_pi_usage(usage: &serde_json::Value) -> ReportedUsage {
        ReportedUsage::from_pi_fields(
            usage.get("input"),
            usage.get("cacheRead"),
            usage.get("cacheWrite"),
            usage.get("output"),
        )
    }

    /// [`from_pi_usage`](Self::from_pi_usage) from the four fields it reads, for a host that
    /// takes only those of the object (each as the object holds it, `None` when missing).
    pub fn from_pi_fields(
        input: Option<&serde_json::Value>,
        cache_read: Option<&serde_json::Value>,
        cache_write: Option<&serde_json::Value>,
        output: Option<&serde_json::Value>,
    ) -> ReportedUsage {
        ReportedUsage {
            requests: 1,
            input: count_of(input),
            cache_read: count_of(cache_read),
            cache_write: count_of(cache_write),
            output: count_of(output),
        }
    }

    /// Whether the report says anything (a provider that reports nothing gives zeros).
    pub fn is_empty(&self) -> bool {
        self.input == 0 && self.cache_read == 0 && self.cache_write == 0 && self.output == 0
    }

    /// Every input token of the report.
    pub fn all_input(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    pub(crate) fn add(&mut self, other: &ReportedUsage) {
        self.requests = self.requests.saturating_add(other.requests.max(1));
        self.input = self.input.saturating_add(other.input);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.output = self.output.saturating_add(other.output);
    }
}

/// Whether a provider's report says anything of its cache.
fn has_cache(reported: &ReportedUsage) -> bool {
    reported.cache_read.saturating_add(reported.cache_write) > 0
}

/// A session's running account, fed with what the host saw.
///
/// ```
/// use sol_core::Mechanism;
/// use sol_core::savings::{Book, Change, Part, ResponseUsage, SentPart};
///
/// let mut book = Book::new();
/// let prompt = Part { key: 1, tokens: 500 };
/// let log = Part { key: 2, tokens: 9_000 };
/// for _ in 0..2 {
///     book.record_request(vec![SentPart::unchanged(prompt), SentPart::unchanged(log)]);
///     book.record_response(ResponseUsage { estimated_output: 40, reported: None });
/// }
/// // The third request carries ObservationPack's placeholder instead of the log.
/// let placeholder = SentPart {
///     part: Part { key: 3, tokens: 120 },
///     changes: vec![Change { by: Mechanism::ObservationPack, before: Some(log) }],
/// };
/// book.record_request(vec![SentPart::unchanged(prompt), placeholder]);
/// let plain = book.savings().layers[0];
/// let sent = book.savings().layers[4];
/// assert_eq!(plain.input() - sent.input(), 8_880);
/// assert_eq!(plain.output, 80);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Book {
    ledger: Ledger,
    /// The previous request's parts in every form.
    previous: Vec<PartForms>,
    /// `part_starts[i]`: where the forms of the previous request's part `i` begin in
    /// `previous` (a summary's first: the parts it stands for), one more entry than parts.
    part_starts: Vec<usize>,
    /// Each compaction summary's key, with the parts it stands for (`None`: unknown, it
    /// counts as Pi's own).
    compactions: BTreeMap<u64, Option<Vec<PartForms>>>,
    /// The last response's calls included a fused command: the model's next turn was saved.
    fused: bool,
    /// The fused commands' results in the request being recorded, each by its index with its
    /// form without the command's output: what the saved turn's request carried.
    fused_results: Vec<(usize, Part)>,
    /// The cache read limit of the request being recorded (a break not of SoL-Pi's making).
    read_limit: Option<u64>,
    /// The model that answered last, and whether the next request's differs.
    last_model: Option<String>,
    model_changed: bool,
    /// The reported input of the last request with a report of its cache: what a provider
    /// had cached for the next one.
    cached_input: Option<u64>,
    /// A request begun and not answered yet.
    pending: Option<Pending>,
    /// The steps of the request being prepared, by mechanism (the latest of each), taken
    /// by the next [`Book::begin_request`].
    upcoming: BTreeMap<Mechanism, StepAccount>,
    /// The layer whose requests the provider's reports describe, once the book prices from
    /// them ([`Book::calibrate_to_reports`]).
    calibrated: Option<usize>,
    /// The scale the next request recorded follows ([`Book::follow_scale`]).
    given_scale: Option<ReportScale>,
}

/// A request begun and not answered yet, with the steps that made it.
#[derive(Debug, Clone, Default)]
struct Pending {
    /// The previous request's parts it starts with, unchanged ([`Book::begin_request_from`]).
    kept: usize,
    /// The mechanism that would have made it unnecessary.
    avoided_by: Option<Mechanism>,
    /// The parts after those.
    parts: Vec<SentPart>,
    steps: BTreeMap<Mechanism, StepAccount>,
    /// The results of fused commands in `parts`, each by its index with its form without
    /// the command's output ([`Book::fused_results`]).
    fused: Vec<(usize, Part)>,
    /// It starts with a new user prompt sent after the cache lifetime.
    after_lifetime: bool,
    /// It starts with a new user prompt.
    new_prompt: bool,
}

impl Book {
    /// An empty book.
    pub fn new() -> Book {
        Book::default()
    }

    /// A book that goes on from persisted totals (a resumed or forked session). What earlier
    /// compactions stood for is not persisted: their summaries count as Pi's own from here
    /// on, so Online Context Compact's saving is not overstated after a resume.
    pub fn resume(savings: Savings) -> Book {
        Book {
            ledger: Ledger::resume(savings),
            ..Book::default()
        }
    }

    /// The totals so far.
    pub fn savings(&self) -> &Savings {
        self.ledger.savings()
    }

    /// From now on, a request whose response carries the provider's usage
    /// ([`Book::end_request_with`]) is priced from that report, which describes the request
    /// of `layer` (the requests as sent: 4; plain Pi's, in a replay of a session recorded
    /// without SoL-Pi: 0); the other layers keep their difference from it and the provider's
    /// cache breaks. A request without a report keeps Pi's estimate.
    pub fn calibrate_to_reports(&mut self, layer: usize) {
        self.calibrated = Some(layer.min(LAYERS - 1));
    }

    /// The scale the last request recorded followed its report at, if it did: what a book
    /// of a policy that never sent the request needs to price it alike ([`Book::follow_scale`]).
    pub fn report_scale(&self) -> Option<ReportScale> {
        self.ledger.last_scale()
    }

    /// The next request recorded follows `scale` (found by the book that holds the request
    /// as it was sent) rather than a report of its own.
    pub fn follow_scale(&mut self, scale: Option<ReportScale>) {
        self.given_scale = scale;
    }

    /// Adds one mechanism step's account. An Action Fusion step that avoided a request (a
    /// fused command ran) marks the model's next turn as avoided ([`Book::fused_command`]).
    pub fn record_step(&mut self, mechanism: Mechanism, account: StepAccount) {
        self.fused_step(mechanism, &account);
        self.ledger.record_step(mechanism, account);
    }

    fn fused_step(&mut self, mechanism: Mechanism, account: &StepAccount) {
        if mechanism == Mechanism::ActionFusion && account.requests_avoided > 0 {
            self.fused_command();
        }
    }

    /// Adds one mechanism step's account whose model calls the model `key`
    /// (`provider/model`) answered, at `prices` from Pi's model registry when it has them:
    /// the reducer's calls at the reducer model's prices, a compaction summary at the
    /// summarizing model's.
    pub fn record_step_by(
        &mut self,
        mechanism: Mechanism,
        account: StepAccount,
        key: &str,
        prices: Option<ModelPrices>,
    ) {
        self.fused_step(mechanism, &account);
        self.ledger.record_step_by(mechanism, account, key, prices);
    }

    /// The requests recorded from now on (the one begun last included) are answered by the
    /// model `key` (`provider/model`), at `prices` from Pi's model registry when it has them.
    pub fn answered_by(&mut self, key: &str, prices: Option<ModelPrices>) {
        self.ledger.set_model(key, prices);
        if self.last_model.as_deref() != Some(key) {
            self.model_changed = self.last_model.is_some();
            self.last_model = Some(key.to_owned());
        }
    }

    /// The request being answered goes to another model than the one before it
    /// ([`Book::answered_by`]), until its response is recorded: that model's provider holds
    /// none of the prefix in its cache.
    pub fn model_changed(&self) -> bool {
        self.model_changed
    }

    /// ObservationPack archived one output of `bytes`.
    pub fn record_archived(&mut self, bytes: u64) {
        self.ledger.record_archived(bytes);
    }

    /// The model recalled `bytes` from ObservationPack's archive.
    pub fn record_recall(&mut self, bytes: u64) {
        self.ledger.record_recall(bytes);
    }

    /// The model's last response ran a fused command (`then_run`): without Action Fusion
    /// the model would have asked for the command in one more turn. Counted once per
    /// response, however many fused calls it made, since a model asks for parallel
    /// commands in one turn.
    pub fn fused_command(&mut self) {
        self.fused = true;
    }

    /// Records one request as sent and returns what each request it recorded added to each
    /// layer (the request a fused command avoided first, when there is one).
    ///
    /// The request a fused command avoided is counted with the context of the request that
    /// follows it, which is what the model would have been sent then, up to the command's
    /// own result.
    pub fn record_request(&mut self, parts: Vec<SentPart>) -> Vec<[LayerTokens; LAYERS]> {
        self.record(0, parts, None, None, None)
    }

    /// [`Book::record_request`] for a request whose first `kept` parts are the previous
    /// request's, unchanged, followed by `tail`: the book and its ledger work on the tail only,
    /// so a host that knows what changed (a replay) records a long session in time linear in
    /// what each request adds. The figures are those of the whole request.
    pub fn record_request_from(
        &mut self,
        kept: usize,
        tail: Vec<SentPart>,
    ) -> Vec<[LayerTokens; LAYERS]> {
        self.record(kept, tail, None, None, None)
    }

    /// Records a request that `mechanism` caused (its response only called SoL-Pi's own
    /// tools, [`super::request_cause`]): it counts only from that mechanism's layer up, as
    /// does its response ([`Book::record_response`]).
    pub fn record_caused_request(
        &mut self,
        mechanism: Mechanism,
        parts: Vec<SentPart>,
    ) -> Vec<[LayerTokens; LAYERS]> {
        self.record(0, parts, None, Some(mechanism), None)
    }

    /// Records a request that was sent but that `mechanism` would have made unnecessary (a
    /// replay of a session recorded without it): it counts only in the layers before that
    /// mechanism, as does its response ([`Book::record_response`]).
    pub fn record_avoidable_request(
        &mut self,
        mechanism: Mechanism,
        parts: Vec<SentPart>,
    ) -> Vec<[LayerTokens; LAYERS]> {
        self.record(0, parts, Some(mechanism), None, None)
    }

    /// [`Book::record_avoidable_request`] as [`Book::record_request_from`] takes a request.
    pub fn record_avoidable_request_from(
        &mut self,
        mechanism: Mechanism,
        kept: usize,
        tail: Vec<SentPart>,
    ) -> Vec<[LayerTokens; LAYERS]> {
        self.record(kept, tail, Some(mechanism), None, None)
    }

    /// Records the request made of the previous request's first `kept` parts and `tail`,
    /// priced from `reported` when the book is calibrated.
    fn record(
        &mut self,
        kept: usize,
        tail: Vec<SentPart>,
        avoided_by: Option<Mechanism>,
        caused_by: Option<Mechanism>,
        reported: Option<ReportedUsage>,
    ) -> Vec<[LayerTokens; LAYERS]> {
        let fused_results = std::mem::take(&mut self.fused_results);
        // A fused result is recorded in a form of its own: it is never among the kept parts.
        let kept = fused_results.iter().map(|(at, _)| *at).fold(
            kept.min(self.part_starts.len().saturating_sub(1)),
            usize::min,
        );
        let kept_forms = self.part_starts.get(kept).copied().unwrap_or(0);
        // A kept part was in the previous request, so every summary among them is known.
        // Every form of the parts sent: a part the previous request carried in another form
        // (before its placeholder) is still there, not compacted away. Only a summary seen for
        // the first time needs them (most requests have none).
        let fresh_summary = tail
            .iter()
            .any(|sent| sent.is_compaction() && !self.compactions.contains_key(&sent.part.key));
        let present: BTreeSet<u64> = if fresh_summary {
            let earlier = |changes: &[Change]| {
                changes
                    .iter()
                    .filter_map(|change| change.before)
                    .map(|part| part.key)
                    .collect::<Vec<_>>()
            };
            let kept_keys = self.previous[..kept_forms].iter().flat_map(|forms| {
                let own = forms.sent.map(|part| part.key);
                let before = if own.is_some() {
                    earlier(&forms.changes)
                } else {
                    Vec::new()
                };
                own.into_iter().chain(before)
            });
            let tail_keys = tail
                .iter()
                .flat_map(|sent| std::iter::once(sent.part.key).chain(earlier(&sent.changes)));
            kept_keys.chain(tail_keys).collect()
        } else {
            BTreeSet::new()
        };
        let mut forms = Vec::with_capacity(tail.len());
        let mut starts = Vec::with_capacity(tail.len());
        // The history a new summary stands for is claimed once: a continuation first seen in
        // the same request stands for nothing of it.
        let mut claimed = false;
        let mut fused_forms = Vec::new();
        for (offset, mut sent) in tail.into_iter().enumerate() {
            starts.push(kept_forms + forms.len());
            if let Some(&(_, without)) = fused_results.iter().find(|(at, _)| *at == kept + offset) {
                fused_forms.push((kept_forms + forms.len(), without));
            }
            if sent.is_compaction() {
                if !self.compactions.contains_key(&sent.part.key) {
                    // A summary first seen with no request before it in this book (a resumed
                    // session): what it stands for is unknown, so it counts as Pi's own.
                    let removed = (!self.previous.is_empty()).then(|| {
                        if std::mem::replace(&mut claimed, true) {
                            Vec::new()
                        } else {
                            self.removed_since_previous(&present)
                        }
                    });
                    self.compactions.insert(sent.part.key, removed);
                }
                match self.compactions.get(&sent.part.key) {
                    Some(Some(removed)) => forms.extend(removed.iter().cloned()),
                    _ => sent.changes.retain(|change| {
                        change.by != Mechanism::OnlineContextCompact || change.before.is_some()
                    }),
                }
            }
            forms.push(PartForms {
                sent: Some(sent.part),
                changes: sent.changes,
            });
        }
        // The request just sent becomes the next one's previous request, in place.
        self.previous.truncate(kept_forms);
        self.previous.append(&mut forms);
        self.part_starts.truncate(kept);
        self.part_starts.extend(starts);
        self.part_starts.push(self.previous.len());
        let terms = |avoided_by, caused_by, cache_read_limit, reported| RequestTerms {
            output_tokens: 0,
            avoided_by,
            caused_by,
            cache_read_limit,
            reported,
        };
        let mut added = Vec::with_capacity(2);
        let mut unchanged = kept_forms;
        if std::mem::take(&mut self.fused) {
            // The saved turn's request: the fused results did not hold the commands' output
            // yet. It is the request with those forms swapped, recorded and swapped back.
            let mut swapped = Vec::with_capacity(fused_forms.len());
            for &(at, without) in &fused_forms {
                if let Some(slot) = self.previous.get_mut(at) {
                    swapped.push((at, std::mem::replace(slot, PartForms::unchanged(without))));
                    unchanged = unchanged.min(at);
                }
            }
            let avoided = terms(Some(Mechanism::ActionFusion), None, None, None);
            added.push(self.ledger.record_forms(&self.previous, avoided, unchanged));
            for (at, forms) in swapped {
                self.previous[at] = forms;
            }
        }
        let limit = std::mem::take(&mut self.read_limit);
        let reported = match std::mem::take(&mut self.given_scale) {
            Some(scale) => Some(Reporting::Scaled(scale)),
            None => reported
                .filter(|reported| reported.all_input() > 0)
                .zip(self.calibrated)
                .map(|(reported, layer)| Reporting::Of(reported, layer)),
        };
        let sent = terms(avoided_by, caused_by, limit, reported);
        added.push(self.ledger.record_forms(&self.previous, sent, unchanged));
        added
    }

    /// A request the host is about to send; it is recorded with its response
    /// ([`Book::end_request`]). An earlier request with no response never went out and is
    /// dropped.
    pub fn begin_request(&mut self, parts: Vec<SentPart>) {
        self.begin_request_from(0, parts);
    }

    /// [`Book::begin_request`] for a request whose first `kept` parts are the previous
    /// request's, unchanged, followed by `tail` ([`Book::record_request_from`]).
    pub fn begin_request_from(&mut self, kept: usize, tail: Vec<SentPart>) {
        self.pending = Some(Pending {
            kept,
            avoided_by: None,
            parts: tail,
            steps: std::mem::take(&mut self.upcoming),
            fused: Vec::new(),
            after_lifetime: false,
            new_prompt: false,
        });
    }

    /// [`Book::begin_request_from`] for a request that was sent but that `mechanism` would
    /// have made unnecessary ([`Book::record_avoidable_request`]).
    pub fn begin_avoidable_request_from(
        &mut self,
        mechanism: Mechanism,
        kept: usize,
        tail: Vec<SentPart>,
    ) {
        self.begin_request_from(kept, tail);
        if let Some(pending) = &mut self.pending {
            pending.avoided_by = Some(mechanism);
        }
    }

    /// The request begun last starts with a new user prompt: a cache break it shows (within
    /// the cache lifetime) is put down to that.
    pub fn starts_with_prompt(&mut self) {
        if let Some(pending) = &mut self.pending {
            pending.new_prompt = true;
        }
    }

    /// The request begun last starts with a new user prompt sent after the provider's cache
    /// lifetime: a cache break it shows is put down to that.
    pub fn after_cache_lifetime(&mut self) {
        if let Some(pending) = &mut self.pending {
            pending.after_lifetime = true;
        }
    }

    /// The request begun last holds the results of fused commands: each by its index in the
    /// request, with its form without the command's output. The model turn the fused command
    /// saved ([`Book::fused_command`]) is counted with that form: in plain Pi the command's
    /// output came only after that turn. Without this, the saved turn is counted with the
    /// output.
    pub fn fused_results(&mut self, results: Vec<(usize, Part)>) {
        if let Some(pending) = &mut self.pending {
            pending.fused = results;
        }
    }

    /// The account of a step that changed the request being prepared (ObservationPack's
    /// replacements in it): it counts with that request, when it is billed, and not at all
    /// when the request never goes out (an extension aborted it). A later step of the same
    /// mechanism before the request begins replaces it: it was for a request that never
    /// began.
    pub fn record_request_step(&mut self, mechanism: Mechanism, account: StepAccount) {
        self.upcoming.insert(mechanism, account);
    }

    /// The response to the request begun last, `failed` when it ended in an abort or an
    /// error: both are recorded, unless the request was not billed
    /// ([`ResponseUsage::billed`]), which is dropped. Nothing happens without a begun request.
    pub fn end_request(&mut self, usage: ResponseUsage, failed: bool) {
        self.end_request_with(usage, failed, &[]);
    }

    /// [`Book::end_request`] for a response that made tool calls of these `owners` (each the
    /// mechanism whose tool it called, `None` for any other tool): a response that called
    /// only SoL-Pi's tools makes its request one that plain Pi never sent
    /// ([`super::request_cause`]).
    pub fn end_request_with(
        &mut self,
        usage: ResponseUsage,
        failed: bool,
        owners: &[Option<Mechanism>],
    ) {
        let Some(Pending {
            kept,
            avoided_by,
            parts,
            steps,
            fused,
            after_lifetime,
            new_prompt,
        }) = self.pending.take()
        else {
            return;
        };
        if usage.billed(failed) {
            let model_changed = std::mem::take(&mut self.model_changed);
            let observed = self.observed_break(usage.reported);
            // The cause is looked for only where there is a break to explain.
            let cause = observed.map(|_| {
                let mut facts = self.break_facts(kept, &parts, model_changed);
                facts.after_lifetime = after_lifetime;
                facts.new_prompt = new_prompt || after_lifetime;
                super::break_cause(&facts)
            });
            // A break with a visible cause of the provider's or the user's (an expired cache, a
            // switch, a new system prompt) happens in every layer at the same point. SoL-Pi's
            // placements and compactions do not exist in the layers below them, which the
            // layers' prefixes already show; a break without a visible cause, or at a new prompt
            // within the lifetime, is shown, not carried (it may be the provider's way of
            // counting, or the client's cache marks). A book priced from the
            // reports carries every break the report shows ([`Ledger::calibrate`]).
            let carried = |cause: super::BreakCause| {
                matches!(
                    cause,
                    super::BreakCause::Lifetime
                        | super::BreakCause::ModelSwitch
                        | super::BreakCause::SystemPrompt
                )
            };
            let from_report = self.given_scale.is_some()
                || (self.calibrated.is_some()
                    && usage
                        .reported
                        .is_some_and(|reported| reported.all_input() > 0));
            self.read_limit = match (cause, observed) {
                _ if from_report => None,
                (Some(cause), Some((_, read))) => carried(cause).then_some(read),
                // Without a report of the cache: an expired cache is read from nowhere.
                _ if after_lifetime && !usage.reported.is_some_and(|r| has_cache(&r)) => Some(0),
                _ => None,
            };
            self.fused_results = fused;
            let cause_of_request = super::request_cause(owners.iter().copied());
            self.record(kept, parts, avoided_by, cause_of_request, usage.reported);
            if let (Some(cause), Some((tokens, read))) = (cause, observed) {
                self.ledger.record_break(cause, tokens, read == 0);
            }
            self.record_response(usage);
            for (mechanism, account) in steps {
                self.ledger.record_step(mechanism, account);
            }
        }
    }

    /// What a request about to be recorded (the previous request's first `kept` parts, then
    /// `parts`) shows that can explain a cache break.
    fn break_facts(
        &self,
        kept: usize,
        parts: &[SentPart],
        model_changed: bool,
    ) -> super::BreakFacts {
        let sent: BTreeSet<u64> = self
            .previous
            .iter()
            .filter_map(|forms| forms.sent.map(|part| part.key))
            .collect();
        let first_before = self.previous.iter().find_map(|forms| forms.sent);
        super::BreakFacts {
            model_changed,
            system_changed: kept == 0
                && first_before
                    .zip(parts.first())
                    .is_some_and(|(before, now)| before.key != now.part.key),
            compaction: parts
                .iter()
                .any(|sent| sent.is_compaction() && !self.compactions.contains_key(&sent.part.key)),
            placement: parts.iter().any(|part| {
                !sent.contains(&part.part.key)
                    && part.changes.iter().any(|change| {
                        change.by != Mechanism::OnlineContextCompact
                            && change
                                .before
                                .is_some_and(|before| sent.contains(&before.key))
                    })
            }),
            after_lifetime: false,
            new_prompt: false,
        }
    }

    /// The cache break a request's report shows, if any (the tokens written again, the
    /// tokens read): it read less than the previous request's reported input. A provider
    /// that reports no cache at all is not judged.
    fn observed_break(&mut self, reported: Option<ReportedUsage>) -> Option<(u64, u64)> {
        let reported = reported.filter(has_cache);
        let previous = std::mem::replace(
            &mut self.cached_input,
            reported.map(|reported| reported.all_input()),
        );
        let now = reported?;
        let tokens = super::rewritten_tokens(previous?, now.cache_read)?;
        Some((tokens, now.cache_read))
    }

    /// Records the response to the last request.
    pub fn record_response(&mut self, usage: ResponseUsage) {
        let output = usage
            .reported
            .filter(|reported| reported.output > 0)
            .map_or(usage.estimated_output, |reported| reported.output);
        self.ledger.record_output(output);
        if let Some(reported) = usage.reported.filter(|reported| !reported.is_empty()) {
            self.ledger.record_reported(&reported);
        }
    }

    /// The parts of the previous request that a new compaction summary stands for: those
    /// the current request no longer carries, each marked as removed by Online Context
    /// Compact. Parts an earlier summary stood for go with it when it is removed too, and
    /// stay with it when it is kept.
    fn removed_since_previous(&self, present: &BTreeSet<u64>) -> Vec<PartForms> {
        let mut removed = Vec::new();
        let mut owner_kept = false;
        for forms in self.previous.iter().rev() {
            match forms.sent {
                Some(part) => {
                    let kept = present.contains(&part.key);
                    if matches!(self.compactions.get(&part.key), Some(Some(_))) {
                        owner_kept = kept;
                    }
                    if !kept {
                        let mut changes = forms.changes.clone();
                        changes.push(Change {
                            by: Mechanism::OnlineContextCompact,
                            before: Some(part),
                        });
                        removed.push(PartForms {
                            sent: None,
                            changes,
                        });
                    }
                }
                None if !owner_kept => removed.push(forms.clone()),
                None => {}
            }
        }
        removed.reverse();
        removed
    }
}

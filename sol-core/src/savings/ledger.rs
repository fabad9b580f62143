//! The per-request facts and the ledger that folds them into per-layer totals.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ReportedUsage;
use crate::{Mechanism, StepAccount};

/// Plain Pi, then each mechanism switched on in [`Mechanism::ALL`]'s order: five layers.
pub const LAYERS: usize = 5;

/// The layer a mechanism switches on: its changes are present from this layer up.
pub fn layer_of(mechanism: Mechanism) -> usize {
    match mechanism {
        Mechanism::ActionFusion => 1,
        Mechanism::ObservationPack => 2,
        Mechanism::EvidencePreservingReducer => 3,
        Mechanism::OnlineContextCompact => 4,
    }
}

/// One part of a request (a message) in one form: what identifies its content and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Part {
    /// Equal for equal content, different otherwise (a digest of the content, never an id a
    /// provider chose): the cache prefix is compared on it.
    pub key: u64,
    /// The part's input tokens.
    pub tokens: u64,
}

/// A mechanism's change of one part: what the part was before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The mechanism that changed the part.
    pub by: Mechanism,
    /// The part before the change; `None` when the mechanism added it (a compaction
    /// summary, a continuation).
    pub before: Option<Part>,
}

/// A part of a request as sent, with the changes that led to it, earliest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartForms {
    /// The part as sent; `None` when a mechanism removed it (compacted history).
    pub sent: Option<Part>,
    /// The changes, in the order they were made; empty for an untouched part.
    pub changes: Vec<Change>,
}

impl PartForms {
    /// A part no mechanism touched.
    pub fn unchanged(part: Part) -> PartForms {
        PartForms {
            sent: Some(part),
            changes: Vec::new(),
        }
    }

    /// A part one mechanism changed from `before` to `sent` (either may be `None`: added,
    /// removed).
    pub fn changed(before: Option<Part>, by: Mechanism, sent: Option<Part>) -> PartForms {
        PartForms {
            sent,
            changes: vec![Change { by, before }],
        }
    }

    /// The part in `layer`: its form after the last change made by a mechanism of the
    /// layers up to `layer`, its original form if there is none.
    pub fn at(&self, layer: usize) -> Option<Part> {
        let mut form = self.changes.first().map_or(self.sent, |first| first.before);
        for (index, change) in self.changes.iter().enumerate() {
            if layer_of(change.by) <= layer {
                form = self
                    .changes
                    .get(index + 1)
                    .map_or(self.sent, |next| next.before);
            }
        }
        form
    }
}

/// One provider request: its parts in order, its output, and whether it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestFacts {
    /// The request's parts, in the order they are sent.
    pub parts: Vec<PartForms>,
    /// The tokens the model answered with.
    pub output_tokens: u64,
    /// The mechanism that made this request unnecessary: it exists only in the layers below
    /// that mechanism's (a fused command's turn). `None` for a request that was sent.
    pub avoided_by: Option<Mechanism>,
    /// The mechanism that caused this request: it exists only from that mechanism's layer
    /// up (a turn that only calls SoL-Pi's own tools, [`super::request_cause`]). `None` for
    /// a request plain Pi makes too.
    #[serde(default)]
    pub caused_by: Option<Mechanism>,
    /// The most the provider's cache gave this request in every layer: a cache that expired or
    /// broke for a reason of its own (not SoL-Pi's) breaks it at the same point whatever was
    /// sent. `None`: the prefix shared with the layer's previous request is read.
    #[serde(default)]
    pub cache_read_limit: Option<u64>,
}

impl RequestFacts {
    /// A request that was sent, with no output counted.
    pub fn sent(parts: Vec<PartForms>) -> RequestFacts {
        RequestFacts {
            parts,
            output_tokens: 0,
            avoided_by: None,
            caused_by: None,
            cache_read_limit: None,
        }
    }

    /// Whether the request exists in `layer`: below the mechanism that avoided it, from
    /// the mechanism that caused it up.
    pub fn exists_in(&self, layer: usize) -> bool {
        RequestTerms::of(self).exists_in(layer)
    }
}

/// The tokens of every request of one layer, split as the provider bills them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LayerTokens {
    /// Provider requests.
    pub requests: u64,
    /// Input tokens of the prefix shared with the previous request (a cache read).
    pub cache_read: u64,
    /// The other input tokens (a cache write).
    pub cache_write: u64,
    /// Output tokens.
    pub output: u64,
}

impl LayerTokens {
    /// All input tokens.
    pub fn input(&self) -> u64 {
        self.cache_read.saturating_add(self.cache_write)
    }

    fn add(&mut self, other: &LayerTokens) {
        self.requests = self.requests.saturating_add(other.requests);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.output = self.output.saturating_add(other.output);
    }
}

/// How the token counts were made, said beside every figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TokenBasis {
    /// Pi's estimate: a quarter of the UTF-16 units of each text, rounded up.
    #[default]
    CharactersOverFour,
}

impl TokenBasis {
    /// How the basis is named to people.
    pub fn label(self) -> &'static str {
        match self {
            TokenBasis::CharactersOverFour => "Pi's estimate (characters / 4)",
        }
    }
}

/// A session's totals: what is persisted, and what a report is made from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Savings {
    /// Per layer, plain Pi first and the requests as sent last.
    pub layers: [LayerTokens; LAYERS],
    /// Per mechanism, in [`Mechanism::ALL`]'s order: the sum of its step accounts.
    pub steps: [StepAccount; 4],
    /// How the tokens were counted.
    pub basis: TokenBasis,
    /// What the providers reported for the requests as sent, where they did.
    pub reported: ReportedUsage,
    /// ObservationPack's archive: what it stored and what the model read back.
    pub archive: ArchiveTotals,
    /// Each model's share of the figures above, by `provider/model`, with its prices from
    /// Pi's model registry (empty where the host named no model, as replay does).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelTotals>,
    /// The cache breaks the provider billed for the requests as sent.
    #[serde(skip_serializing_if = "super::CacheBreaks::is_empty")]
    pub breaks: super::CacheBreaks,
    /// The requests priced from the provider's reported usage rather than from Pi's
    /// estimate, and how far the estimate was from those reports.
    #[serde(skip_serializing_if = "Calibration::is_empty")]
    pub calibration: Calibration,
}

/// The requests whose figures follow the provider's report ([`super::Book::calibrate_to_reports`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Calibration {
    /// Requests priced from their report.
    pub requests: u64,
    /// Their input tokens by Pi's estimate, in the layer the report describes.
    pub estimated_input: u64,
    /// Their input tokens as the provider reported them.
    pub reported_input: u64,
}

impl Calibration {
    /// Whether no request was priced from a report.
    pub fn is_empty(&self) -> bool {
        self.requests == 0
    }
}

/// Prices of one model in picodollars per token (dollars per million tokens × 1,000,000):
/// exact, and comparable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ModelPrices {
    /// Uncached input.
    pub input: u64,
    /// Cache reads.
    pub cache_read: u64,
    /// Cache writes (a provider with no write premium gives the input price).
    pub cache_write: u64,
    /// Output.
    pub output: u64,
}

impl ModelPrices {
    /// The prices of a table.
    pub fn of(table: &super::PriceTable) -> ModelPrices {
        ModelPrices {
            input: crate::price::per_token(table.input),
            cache_read: crate::price::per_token(table.cache_read),
            cache_write: crate::price::per_token(table.cache_write),
            output: crate::price::per_token(table.output),
        }
    }

    /// The prices of a model as Pi's model registry gives them (dollars per million tokens):
    /// a cache price of 0 means the provider has no such price and bills those tokens as
    /// input. `None` for a price out of range, or a model that is free of charge in every
    /// field (the registry's way of not knowing).
    pub fn from_registry(
        input: f64,
        output: f64,
        cache_read: f64,
        cache_write: f64,
    ) -> Option<ModelPrices> {
        let or_input = |price: f64| if price > 0.0 { price } else { input };
        let table = super::PriceTable {
            input,
            cache_read: or_input(cache_read),
            cache_write: or_input(cache_write),
            output,
        }
        .validated()
        .ok()?;
        let prices = ModelPrices::of(&table);
        (prices != ModelPrices::default()).then_some(prices)
    }

    /// The prices of a model's `cost` in Pi's model registry (`input`, `output`, `cacheRead`,
    /// `cacheWrite`, dollars per million tokens): `None` without a numeric `input` and
    /// `output`; a missing cache price counts 0 (billed as input), as [`Self::from_registry`]
    /// reads it.
    pub fn from_registry_cost(cost: &serde_json::Value) -> Option<ModelPrices> {
        let price = |key: &str| cost.get(key).and_then(serde_json::Value::as_f64);
        ModelPrices::from_registry(
            price("input")?,
            price("output")?,
            price("cacheRead").unwrap_or(0.0),
            price("cacheWrite").unwrap_or(0.0),
        )
    }

    /// The prices as a table (dollars per million tokens).
    #[allow(
        clippy::cast_precision_loss,
        reason = "validated prices are far below 2^52"
    )]
    pub fn table(&self) -> super::PriceTable {
        let dollars = |picodollars: u64| picodollars as f64 / 1_000_000.0;
        super::PriceTable {
            input: dollars(self.input),
            cache_read: dollars(self.cache_read),
            cache_write: dollars(self.cache_write),
            output: dollars(self.output),
        }
    }
}

/// The input and output tokens of model calls a mechanism made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CallTokens {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
}

/// One model's share of a session's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ModelTotals {
    /// Its prices from Pi's model registry; `None` where the registry had none (it is priced
    /// at the report's table).
    pub prices: Option<ModelPrices>,
    /// The tokens of the requests it answered, per layer.
    pub layers: [LayerTokens; LAYERS],
    /// The tokens of the mechanisms' calls it answered, per mechanism in
    /// [`Mechanism::ALL`]'s order.
    pub own: [CallTokens; 4],
}

impl ModelTotals {
    fn add(&mut self, other: &ModelTotals) {
        if other.prices.is_some() {
            self.prices = other.prices;
        }
        for (layer, added) in self.layers.iter_mut().zip(&other.layers) {
            layer.add(added);
        }
        for (own, added) in self.own.iter_mut().zip(&other.own) {
            own.input = own.input.saturating_add(added.input);
            own.output = own.output.saturating_add(added.output);
        }
    }
}

/// Two accounts together, field by field (saturating): the totals over several sessions or
/// branches. The token basis is the left one's (there is only one).
///
/// ```
/// use sol_core::savings::Savings;
///
/// let mut one = Savings::default();
/// one.layers[0].requests = 2;
/// one.archive.recalls = 1;
/// let mut both = one.clone();
/// both += &one;
/// assert_eq!((both.layers[0].requests, both.archive.recalls), (4, 2));
/// ```
impl std::ops::AddAssign<&Savings> for Savings {
    fn add_assign(&mut self, other: &Savings) {
        for (layer, added) in self.layers.iter_mut().zip(&other.layers) {
            layer.add(added);
        }
        for (step, added) in self.steps.iter_mut().zip(&other.steps) {
            *step += *added;
        }
        let (reported, added) = (&mut self.reported, &other.reported);
        reported.requests = reported.requests.saturating_add(added.requests);
        reported.input = reported.input.saturating_add(added.input);
        reported.cache_read = reported.cache_read.saturating_add(added.cache_read);
        reported.cache_write = reported.cache_write.saturating_add(added.cache_write);
        reported.output = reported.output.saturating_add(added.output);
        let (archive, added) = (&mut self.archive, &other.archive);
        archive.archived = archive.archived.saturating_add(added.archived);
        archive.archived_bytes = archive.archived_bytes.saturating_add(added.archived_bytes);
        archive.recalls = archive.recalls.saturating_add(added.recalls);
        archive.recalled_bytes = archive.recalled_bytes.saturating_add(added.recalled_bytes);
        self.breaks.add(&other.breaks);
        let (calibration, added) = (&mut self.calibration, &other.calibration);
        calibration.requests = calibration.requests.saturating_add(added.requests);
        calibration.estimated_input = calibration
            .estimated_input
            .saturating_add(added.estimated_input);
        calibration.reported_input = calibration
            .reported_input
            .saturating_add(added.reported_input);
        for (key, added) in &other.models {
            self.models.entry(key.clone()).or_default().add(added);
        }
    }
}

/// What ObservationPack archived and what the model recalled, in UTF-8 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ArchiveTotals {
    /// Tool outputs archived.
    pub archived: u64,
    /// Their bytes.
    pub archived_bytes: u64,
    /// `obs_recall` pages and searches returned.
    pub recalls: u64,
    /// Their bytes.
    pub recalled_bytes: u64,
}

/// The running account of a session: [`Savings`] plus the previous request of each layer,
/// which the next request's cache prefix is compared with.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    savings: Savings,
    previous: [LayerPrevious; LAYERS],
    /// The layers the last request exists in: its output is counted there.
    last: [bool; LAYERS],
    /// The model that answers the requests recorded from now on (`provider/model`).
    model: Option<String>,
    /// The scale the last request followed its report at.
    last_scale: Option<ReportScale>,
}

/// One layer's previous request, kept so that the next request is compared with it from
/// where the two can differ only.
#[derive(Debug, Clone)]
struct LayerPrevious {
    /// Its parts' keys, in order.
    keys: Vec<u64>,
    /// `sums[i]`: the tokens of its first `i` parts (one more entry than `keys`).
    sums: Vec<u64>,
    /// `starts[f]`: how many of its parts the first `f` part forms of its request gave
    /// (one more entry than the request's forms).
    starts: Vec<usize>,
    /// How many leading part forms its request shares with the request recorded last (a
    /// layer a request does not exist in keeps an older one).
    same_forms: usize,
}

impl LayerPrevious {
    /// The tokens before form `form` of this layer's request and the tokens through it;
    /// `None` when the request has fewer forms.
    fn form_span(&self, form: usize) -> Option<(u64, u64)> {
        let start = *self.sums.get(*self.starts.get(form)?)?;
        let end = self
            .starts
            .get(form + 1)
            .and_then(|&part| self.sums.get(part))
            .map_or(start, |&end| end);
        Some((start, end))
    }

    /// The point `tokens` into the request: the form it falls in and how far into it.
    fn point_at(&self, tokens: u64) -> Option<ReadPoint> {
        let boundaries = self
            .starts
            .partition_point(|&part| self.sums.get(part).is_some_and(|&sum| sum <= tokens));
        let form = boundaries.checked_sub(1)?;
        let (start, end) = self.form_span(form)?;
        Some(ReadPoint {
            form,
            into: tokens - start,
            of: end - start,
        })
    }

    /// The tokens of this layer's request up to `point`: the forms before it whole, then the
    /// same share of its form. `None` when the request has fewer forms.
    fn tokens_at(&self, point: ReadPoint) -> Option<u64> {
        let (start, end) = self.form_span(point.form)?;
        let size = end - start;
        let into = if point.of == 0 {
            0
        } else {
            let share = u128::from(point.into) * u128::from(size) / u128::from(point.of);
            u64::try_from(share).unwrap_or(u64::MAX).min(size)
        };
        Some(start + into)
    }
}

impl Default for LayerPrevious {
    fn default() -> LayerPrevious {
        LayerPrevious {
            keys: Vec::new(),
            sums: vec![0],
            starts: vec![0],
            same_forms: 0,
        }
    }
}

/// What a request is besides its parts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestTerms {
    pub(crate) output_tokens: u64,
    pub(crate) avoided_by: Option<Mechanism>,
    pub(crate) caused_by: Option<Mechanism>,
    pub(crate) cache_read_limit: Option<u64>,
    /// How the request's figures follow the provider's report ([`Ledger::calibrate`]).
    pub(crate) reported: Option<Reporting>,
}

/// Where a request's report comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reporting {
    /// The report of the request of this layer (the book holds the request that was sent).
    Of(super::ReportedUsage, usize),
    /// The scale another book found for the same request (a book of a policy only).
    Scaled(ReportScale),
}

/// How one provider report turns a request's estimated figures into billed ones: the
/// report's input over the estimate's (the provider's tokenizer), and the point its cache
/// read to. Found from the request that was sent ([`super::Book::report_scale`]) and
/// applied to every layer of every book that prices the same request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportScale {
    estimated: u64,
    billed: u64,
    /// The estimate's cache read, scaled.
    expected_read: u64,
    /// The reported cache read.
    read: u64,
    /// The provider read less than the estimate shared with the previous request: its cache
    /// lost the history from some message on.
    broke: bool,
    /// Where in the request its cache read ended, by message: every layer reads to the same
    /// point of its own request where the provider broke the cache.
    read_at: Option<ReadPoint>,
}

/// A point in a request, by its part forms (one per message of the request as sent): `into`
/// tokens into form `form`, which held `of` tokens where the point was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ReadPoint {
    form: usize,
    into: u64,
    of: u64,
}

impl ReportScale {
    /// The scale of `reported` for a request estimated at `estimated`; `None` when either
    /// has no input.
    pub fn new(estimated: &LayerTokens, reported: &super::ReportedUsage) -> Option<ReportScale> {
        let (input, billed) = (estimated.input(), reported.all_input());
        if input == 0 || billed == 0 {
            return None;
        }
        let mut scale = ReportScale {
            estimated: input,
            billed,
            expected_read: 0,
            read: reported.cache_read.min(billed),
            broke: false,
            read_at: None,
        };
        scale.expected_read = scale.scaled(estimated.cache_read);
        scale.broke = super::rewritten_tokens(scale.expected_read, scale.read).is_some();
        Some(scale)
    }

    fn scaled(&self, tokens: u64) -> u64 {
        let scaled = u128::from(tokens) * u128::from(self.billed) / u128::from(self.estimated);
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }

    /// The reported cache read in the estimate's tokens.
    fn estimated_read(&self) -> u64 {
        let read = u128::from(self.read) * u128::from(self.estimated) / u128::from(self.billed);
        u64::try_from(read).unwrap_or(u64::MAX)
    }

    /// `tokens` (one layer's estimate of the request) as billed. Where the provider broke the
    /// cache, no layer reads beyond the token the provider read to; otherwise each layer's
    /// read moves by the difference between the report and the estimate. The request the
    /// report is of comes out as the report.
    pub fn apply(&self, tokens: &LayerTokens) -> LayerTokens {
        self.apply_at(tokens, None)
    }

    /// [`ReportScale::apply`] for a layer whose request reaches the point the provider's
    /// read ended at after `point` estimated tokens: where the cache broke, the layer reads
    /// to that point of its own request (the same message, the same share of it), so a
    /// layer with longer or shorter messages before the point reads more or less.
    fn apply_at(&self, tokens: &LayerTokens, point: Option<u64>) -> LayerTokens {
        let total = self.scaled(tokens.input());
        let own = self.scaled(tokens.cache_read);
        let read = if self.broke {
            // A layer that reaches the point after as many tokens as the reference reads
            // what the provider read, exactly.
            let at = point.filter(|&point| point != self.estimated_read());
            own.min(at.map_or(self.read, |point| self.scaled(point)))
        } else {
            let moved = i128::from(own) + i128::from(self.read) - i128::from(self.expected_read);
            u64::try_from(moved.clamp(0, i128::from(total))).unwrap_or(0)
        }
        .min(total);
        LayerTokens {
            cache_read: read,
            cache_write: total - read,
            ..*tokens
        }
    }
}

impl RequestTerms {
    fn of(request: &RequestFacts) -> RequestTerms {
        RequestTerms {
            output_tokens: request.output_tokens,
            avoided_by: request.avoided_by,
            caused_by: request.caused_by,
            cache_read_limit: request.cache_read_limit,
            reported: None,
        }
    }

    fn exists_in(self, layer: usize) -> bool {
        self.avoided_by.is_none_or(|by| layer < layer_of(by))
            && self.caused_by.is_none_or(|by| layer >= layer_of(by))
    }
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Ledger {
        Ledger::default()
    }

    /// A ledger that goes on from persisted totals (a resumed or forked session). The
    /// previous requests are not persisted, so the next request of every layer is priced as
    /// a full cache write, as a provider whose cache has expired would bill it.
    pub fn resume(savings: Savings) -> Ledger {
        Ledger {
            savings,
            ..Ledger::default()
        }
    }

    /// The totals so far.
    pub fn savings(&self) -> &Savings {
        &self.savings
    }

    /// Adds one mechanism step's account.
    pub fn record_step(&mut self, mechanism: Mechanism, account: StepAccount) {
        let slot = &mut self.savings.steps[layer_of(mechanism) - 1];
        *slot += account;
    }

    /// The requests recorded from now on are answered by the model `key` (`provider/model`),
    /// at `prices` when Pi's model registry has them.
    pub fn set_model(&mut self, key: &str, prices: Option<ModelPrices>) {
        self.note_model(key, prices);
        self.model = Some(key.to_owned());
    }

    fn note_model(&mut self, key: &str, prices: Option<ModelPrices>) -> &mut ModelTotals {
        let totals = self.savings.models.entry(key.to_owned()).or_default();
        if prices.is_some() {
            totals.prices = prices;
        }
        totals
    }

    /// Adds one mechanism step's account whose model calls the model `key` answered, at
    /// `prices` when known.
    pub fn record_step_by(
        &mut self,
        mechanism: Mechanism,
        account: StepAccount,
        key: &str,
        prices: Option<ModelPrices>,
    ) {
        self.record_step(mechanism, account);
        let own = &mut self.note_model(key, prices).own[layer_of(mechanism) - 1];
        own.input = own.input.saturating_add(account.model_input_tokens);
        own.output = own.output.saturating_add(account.model_output_tokens);
    }

    /// Adds one request, in every layer it exists in, and returns what it added per layer
    /// (the totals are exactly the sum of these).
    pub fn record_request(&mut self, request: &RequestFacts) -> [LayerTokens; LAYERS] {
        self.record_request_from(request, 0)
    }

    /// [`Ledger::record_request`] for a request whose first `unchanged` part forms are those
    /// of the request recorded last, in every form: each layer compares only the rest with
    /// its previous request, so a request that adds to the one before costs what it adds,
    /// not its whole length. Any `unchanged` gives the same figures as 0 when it is true.
    pub fn record_request_from(
        &mut self,
        request: &RequestFacts,
        unchanged: usize,
    ) -> [LayerTokens; LAYERS] {
        self.record_forms(&request.parts, RequestTerms::of(request), unchanged)
    }

    pub(crate) fn record_forms(
        &mut self,
        forms: &[PartForms],
        terms: RequestTerms,
        unchanged: usize,
    ) -> [LayerTokens; LAYERS] {
        let unchanged = unchanged.min(forms.len());
        let mut added = [LayerTokens::default(); LAYERS];
        let mut tail: Vec<Part> = Vec::new();
        for (layer, previous) in self.previous.iter_mut().enumerate() {
            previous.same_forms = previous.same_forms.min(unchanged);
            let exists = terms.exists_in(layer);
            self.last[layer] = exists;
            if !exists {
                continue;
            }
            // The parts of the first `same_forms` forms are the previous request's; compare
            // the rest.
            let from_form = previous.same_forms;
            let base = previous.starts[from_form];
            tail.clear();
            previous.starts.truncate(from_form + 1);
            for form in &forms[from_form..] {
                tail.extend(form.at(layer));
                previous.starts.push(base + tail.len());
            }
            let matched = tail
                .iter()
                .zip(&previous.keys[base..])
                .take_while(|(part, key)| part.key == **key)
                .count();
            previous.keys.truncate(base);
            previous.keys.extend(tail.iter().map(|part| part.key));
            previous.sums.truncate(base + 1);
            let mut sum = previous.sums[base];
            for part in &tail {
                sum = sum.saturating_add(part.tokens);
                previous.sums.push(sum);
            }
            previous.same_forms = forms.len();
            let read = previous.sums[base + matched];
            let read = terms.cache_read_limit.map_or(read, |limit| read.min(limit));
            added[layer] = LayerTokens {
                requests: 1,
                cache_read: read,
                cache_write: sum - read,
                output: terms.output_tokens,
            };
        }
        self.last_scale = None;
        if let Some(reporting) = terms.reported {
            self.calibrate(&mut added, reporting, terms);
        }
        for (totals, tokens) in self.savings.layers.iter_mut().zip(&added) {
            totals.add(tokens);
        }
        if let Some(model) = &self.model
            && let Some(totals) = self.savings.models.get_mut(model)
        {
            for (layer, tokens) in totals.layers.iter_mut().zip(&added) {
                layer.add(tokens);
            }
        }
        added
    }

    /// Makes one request's figures follow what the provider reported for it: the request of
    /// layer `reference` (the requests as sent live; plain Pi's in a replay of a session
    /// recorded without SoL-Pi) or the nearest layer the request exists in, or a scale
    /// another book found. Every layer keeps its own
    /// figures through the report's [`ReportScale`]; the reference layer comes out as the
    /// report.
    fn calibrate(
        &mut self,
        added: &mut [LayerTokens; LAYERS],
        reporting: Reporting,
        terms: RequestTerms,
    ) {
        let (scale, reference) = match reporting {
            // A request that does not exist in the reference layer (one SoL-Pi caused, in a
            // session without it; one a mechanism avoided) is scaled at the nearest layer it
            // exists in: its report is of that request all the same.
            Reporting::Of(reported, reference) => {
                let layer = (0..LAYERS)
                    .filter(|layer| terms.exists_in(*layer))
                    .min_by_key(|layer| layer.abs_diff(reference));
                let scale = layer.and_then(|layer| {
                    let mut scale = ReportScale::new(&added[layer], &reported)?;
                    scale.read_at = self.previous[layer].point_at(scale.estimated_read());
                    Some(scale)
                });
                (scale, layer)
            }
            Reporting::Scaled(scale) => (Some(scale), None),
        };
        self.last_scale = scale;
        let Some(scale) = scale else {
            return;
        };
        for (layer, tokens) in added.iter_mut().enumerate() {
            if terms.exists_in(layer) {
                // The reference layer reads what the report says; the others, to the same
                // point of their own request (or to the same token, where theirs has fewer
                // messages).
                let point = scale
                    .read_at
                    .filter(|_| Some(layer) != reference)
                    .and_then(|point| self.previous[layer].tokens_at(point));
                *tokens = scale.apply_at(tokens, point);
            }
        }
        let calibration = &mut self.savings.calibration;
        calibration.requests = calibration.requests.saturating_add(1);
        calibration.estimated_input = calibration.estimated_input.saturating_add(scale.estimated);
        calibration.reported_input = calibration.reported_input.saturating_add(scale.billed);
    }

    /// The scale the last request recorded was priced at, when it followed a report.
    pub fn last_scale(&self) -> Option<ReportScale> {
        self.last_scale
    }

    /// Adds the output of the last recorded request's response, in every layer that
    /// request exists in.
    pub fn record_output(&mut self, tokens: u64) {
        let model = self
            .model
            .as_ref()
            .and_then(|model| self.savings.models.get_mut(model));
        let mut by_model = model.map(|totals| &mut totals.layers);
        for (layer, totals) in self.savings.layers.iter_mut().enumerate() {
            if self.last[layer] {
                totals.output = totals.output.saturating_add(tokens);
                if let Some(layers) = by_model.as_mut() {
                    layers[layer].output = layers[layer].output.saturating_add(tokens);
                }
            }
        }
    }

    /// Adds one output ObservationPack archived, of `bytes`.
    pub fn record_archived(&mut self, bytes: u64) {
        let archive = &mut self.savings.archive;
        archive.archived = archive.archived.saturating_add(1);
        archive.archived_bytes = archive.archived_bytes.saturating_add(bytes);
    }

    /// Adds one recall the model made, of `bytes`.
    pub fn record_recall(&mut self, bytes: u64) {
        let archive = &mut self.savings.archive;
        archive.recalls = archive.recalls.saturating_add(1);
        archive.recalled_bytes = archive.recalled_bytes.saturating_add(bytes);
    }

    /// Adds what a provider reported for a request as sent.
    pub fn record_reported(&mut self, usage: &ReportedUsage) {
        self.savings.reported.add(usage);
    }

    /// Adds a cache break the provider billed.
    pub fn record_break(&mut self, cause: super::BreakCause, tokens: u64, full: bool) {
        self.savings.breaks.record(cause, tokens, full);
    }
}

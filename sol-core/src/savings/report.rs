//! A session's savings priced: the rows `/sol-pi` shows and the status line.

use std::fmt;

use serde::Serialize;

use super::{
    ArchiveTotals, LAYERS, LayerTokens, ModelPrices, ModelTotals, Money, PriceTable, ReportedUsage,
    Savings, TokenBasis,
};
use crate::tui::group_digits;
use crate::{Mechanism, StepAccount};

/// One mechanism's saving.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// Provider requests it made unnecessary.
    pub requests_avoided: i128,
    /// Input tokens the layer before it sent, less those of the layer with it.
    pub input_tokens_saved: i128,
    /// The priced difference between the two layers (cache reads and writes as billed).
    pub gross: Money,
    /// What its own model calls cost.
    pub own_cost: Money,
    /// `gross - own_cost`: what it saved, negative for a loss.
    pub net: Money,
    /// The sum of its step accounts.
    pub account: StepAccount,
}

/// A session's savings at one price table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// One row per mechanism, in [`Mechanism::ALL`]'s order, also for one that never acted.
    pub rows: [Row; 4],
    /// Plain Pi's requests (layer 0).
    pub plain: LayerTokens,
    /// The requests as sent (layer 4).
    pub sent: LayerTokens,
    /// What plain Pi's requests would have cost.
    pub plain_cost: Money,
    /// What the requests as sent cost, with the mechanisms' own model calls.
    pub sent_cost: Money,
    /// The prices used (for every model when `model_prices` is empty, else for a model
    /// without prices of its own).
    pub prices: PriceTable,
    /// Each model the session named, by `provider/model`, with its prices from Pi's model
    /// registry (`None`: it had none); empty when every model is priced at `prices`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub model_prices: Vec<(String, Option<PriceTable>)>,
    /// How the tokens were counted.
    pub basis: TokenBasis,
    /// What the providers reported for the requests as sent.
    pub reported: ReportedUsage,
    /// ObservationPack's archive.
    pub archive: ArchiveTotals,
    /// The cache breaks the provider billed for the requests as sent.
    #[serde(skip_serializing_if = "super::CacheBreaks::is_empty")]
    pub breaks: super::CacheBreaks,
    /// What they cost beyond reading the same tokens from the cache, at `prices`.
    #[serde(skip_serializing_if = "Money::is_zero")]
    pub breaks_cost: Money,
    /// The requests priced from the provider's reports, and the estimate's distance from them.
    #[serde(skip_serializing_if = "super::Calibration::is_empty")]
    pub calibration: super::Calibration,
}

impl Savings {
    /// The savings priced at `prices`, every model alike (`prices` in `sol-pi.json`,
    /// replay's `--price-*`).
    pub fn report(&self, prices: &PriceTable) -> Report {
        self.priced(prices, false)
    }

    /// The savings with each model's requests and calls at that model's prices from Pi's
    /// model registry, and those of a model without registry prices (or of no named model)
    /// at `prices`.
    pub fn report_per_model(&self, prices: &PriceTable) -> Report {
        self.priced(prices, true)
    }

    fn priced(&self, prices: &PriceTable, per_model: bool) -> Report {
        let default = ModelPrices::of(prices);
        let at = |p: &ModelPrices, read: u64, write: u64, input: u64, output: u64| {
            Money::of_tokens(read, p.cache_read)
                + Money::of_tokens(write, p.cache_write)
                + Money::of_tokens(input, p.input)
                + Money::of_tokens(output, p.output)
        };
        // The models with their own prices; the rest of every figure is at `prices`.
        let priced: Vec<(&ModelTotals, ModelPrices)> = if per_model {
            self.models
                .values()
                .filter_map(|totals| totals.prices.map(|p| (totals, p)))
                .collect()
        } else {
            Vec::new()
        };
        let costs: [Money; LAYERS] = std::array::from_fn(|index| {
            let whole = &self.layers[index];
            let (mut read, mut write, mut output) =
                (whole.cache_read, whole.cache_write, whole.output);
            let mut cost = Money::ZERO;
            for (totals, p) in &priced {
                let part = &totals.layers[index];
                cost = cost + at(p, part.cache_read, part.cache_write, 0, part.output);
                read = read.saturating_sub(part.cache_read);
                write = write.saturating_sub(part.cache_write);
                output = output.saturating_sub(part.output);
            }
            cost + at(&default, read, write, 0, output)
        });
        let rows = Mechanism::ALL.map(|mechanism| {
            let index = super::layer_of(mechanism);
            let (before, with) = (&self.layers[index - 1], &self.layers[index]);
            let account = self.steps[index - 1];
            let (mut input, mut output) = (account.model_input_tokens, account.model_output_tokens);
            let mut own_cost = Money::ZERO;
            for (totals, p) in &priced {
                let calls = &totals.own[index - 1];
                own_cost = own_cost + at(p, 0, 0, calls.input, calls.output);
                input = input.saturating_sub(calls.input);
                output = output.saturating_sub(calls.output);
            }
            let own_cost = own_cost + at(&default, 0, 0, input, output);
            let gross = costs[index - 1] - costs[index];
            Row {
                mechanism,
                requests_avoided: i128::from(before.requests) - i128::from(with.requests),
                input_tokens_saved: i128::from(before.input()) - i128::from(with.input()),
                gross,
                own_cost,
                net: gross - own_cost,
                account,
            }
        });
        let own: Money = rows.iter().map(|row| row.own_cost).sum();
        Report {
            plain: self.layers[0],
            sent: self.layers[LAYERS - 1],
            plain_cost: costs[0],
            sent_cost: costs[LAYERS - 1] + own,
            rows,
            prices: *prices,
            model_prices: if per_model {
                self.models
                    .iter()
                    .map(|(key, totals)| (key.clone(), totals.prices.map(|p| p.table())))
                    .collect()
            } else {
                Vec::new()
            },
            basis: self.basis,
            reported: self.reported,
            archive: self.archive,
            breaks: self.breaks.clone(),
            calibration: self.calibration,
            breaks_cost: Money::of_tokens(self.breaks.tokens, default.cache_write)
                - Money::of_tokens(self.breaks.tokens, default.cache_read),
        }
    }
}

impl Report {
    /// The row of `mechanism`.
    pub fn row(&self, mechanism: Mechanism) -> &Row {
        &self.rows[super::layer_of(mechanism) - 1]
    }

    /// The session's net saving: the sum of the rows' nets, and exactly `plain_cost -
    /// sent_cost`.
    pub fn total_net(&self) -> Money {
        self.rows.iter().map(|row| row.net).sum()
    }

    /// Input tokens saved over all mechanisms.
    pub fn total_input_tokens_saved(&self) -> i128 {
        i128::from(self.plain.input()) - i128::from(self.sent.input())
    }

    /// The one-line running total for a status bar, e.g.
    /// `SoL-Pi saved $0.0312 (-38.0 % cost, -82.6 % tokens)`, or `SoL-Pi cost $0.0180 more
    /// (+13.9 % cost, -51.1 % tokens)` while the mechanisms' own calls outweigh their savings.
    pub fn status_line(&self) -> String {
        if self.plain.requests == 0 {
            return "SoL-Pi: no requests yet".to_owned();
        }
        let net = self.total_net();
        let (verb, amount, more) = if net < Money::ZERO {
            ("cost", Money::ZERO - net, " more")
        } else {
            ("saved", net, "")
        };
        format!(
            "SoL-Pi {verb} {amount}{more} ({} cost, {} tokens)",
            change(self.sent_cost, self.plain_cost),
            change_tokens(self.sent.input(), self.plain.input()),
        )
    }
}

/// The table `/sol-pi` shows.
impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "SoL-Pi savings for this session: {} provider requests sent, {} without SoL-Pi",
            group_digits(u128::from(self.sent.requests)),
            group_digits(u128::from(self.plain.requests)),
        )?;
        let header = [
            "Mechanism",
            "Requests saved",
            "Input tokens saved",
            "Priced saving",
            "Own model cost",
            "Net saving",
        ];
        let mut lines: Vec<[String; 6]> = vec![header.map(str::to_owned)];
        for row in &self.rows {
            lines.push([
                row.mechanism.label().to_owned(),
                crate::tui::format_signed_count(row.requests_avoided),
                crate::tui::format_signed_count(row.input_tokens_saved),
                row.gross.to_string(),
                row.own_cost.to_string(),
                row.net.to_string(),
            ]);
        }
        let own: Money = self.rows.iter().map(|row| row.own_cost).sum();
        lines.push([
            "Total".to_owned(),
            crate::tui::format_signed_count(
                i128::from(self.plain.requests) - i128::from(self.sent.requests),
            ),
            crate::tui::format_signed_count(self.total_input_tokens_saved()),
            (self.total_net() + own).to_string(),
            own.to_string(),
            self.total_net().to_string(),
        ]);
        for line in crate::tui::aligned_lines(&lines) {
            writeln!(f, "{line}")?;
        }
        self.fmt_details(f)?;
        writeln!(
            f,
            "Priced bill: {} instead of {} ({}), with SoL-Pi's own model calls",
            self.sent_cost,
            self.plain_cost,
            change(self.sent_cost, self.plain_cost),
        )?;
        writeln!(
            f,
            "Input tokens sent: {} instead of {} ({})",
            group_digits(u128::from(self.sent.input())),
            group_digits(u128::from(self.plain.input())),
            change_tokens(self.sent.input(), self.plain.input()),
        )?;
        writeln!(
            f,
            "Cache: {} tokens read and {} written as sent; {} read and {} written without SoL-Pi",
            group_digits(u128::from(self.sent.cache_read)),
            group_digits(u128::from(self.sent.cache_write)),
            group_digits(u128::from(self.plain.cache_read)),
            group_digits(u128::from(self.plain.cache_write)),
        )?;
        self.fmt_breaks(f)?;
        let reported = &self.reported;
        if reported.requests > 0 {
            writeln!(
                f,
                "Provider-reported usage as sent ({} requests): {} input, {} cache read, {} cache write, {} output tokens",
                group_digits(u128::from(reported.requests)),
                group_digits(u128::from(reported.input)),
                group_digits(u128::from(reported.cache_read)),
                group_digits(u128::from(reported.cache_write)),
                group_digits(u128::from(reported.output)),
            )?;
            // The live table (priced per model) says how far the estimate is from the reports.
            if !self.model_prices.is_empty() {
                self.fmt_estimate(f)?;
            }
        }
        let table = |p: &PriceTable| {
            format!(
                "input ${:.2}, cache read ${:.2}, cache write ${:.2}, output ${:.2}",
                p.input, p.cache_read, p.cache_write, p.output
            )
        };
        if self.model_prices.is_empty() {
            return write!(
                f,
                "Prices per million tokens: {}; tokens: {}",
                table(&self.prices),
                self.basis.label()
            );
        }
        writeln!(
            f,
            "Prices per million tokens, per model from Pi's model registry:"
        )?;
        for (model, prices) in &self.model_prices {
            match prices {
                Some(prices) => writeln!(f, "  {model}: {}", table(prices))?,
                None => writeln!(f, "  {model}: none in the registry, priced at the default")?,
            }
        }
        write!(
            f,
            "  default: {}; tokens: {}",
            table(&self.prices),
            self.basis.label()
        )
    }
}

impl Report {
    /// The cache rewrites the provider billed, with their causes (nothing without one).
    fn fmt_breaks(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let breaks = &self.breaks;
        if breaks.is_empty() {
            return Ok(());
        }
        let causes: Vec<String> = breaks
            .causes
            .iter()
            .map(|(cause, totals)| {
                format!(
                    "{} {} ({} tokens)",
                    group_digits(u128::from(totals.breaks)),
                    cause.label(),
                    group_digits(u128::from(totals.tokens))
                )
            })
            .collect();
        writeln!(
            f,
            "Cache rewrites the provider billed: {} ({} full), {} tokens written again, {} more than reading them; causes: {}",
            group_digits(u128::from(breaks.breaks)),
            group_digits(u128::from(breaks.full)),
            group_digits(u128::from(breaks.tokens)),
            self.breaks_cost,
            causes.join(", "),
        )
    }

    /// Which figures are estimated, and how far the estimate of the requests as sent is
    /// from what the provider reported for them.
    fn fmt_estimate(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reported = &self.reported;
        let calibration = &self.calibration;
        if calibration.requests > 0 {
            let requests = self.plain.requests.max(self.sent.requests);
            return writeln!(
                f,
                "{} of {} requests priced from the provider's reports (Pi's estimate of their input: {} against them), the rest from Pi's estimate",
                group_digits(u128::from(calibration.requests)),
                group_digits(u128::from(requests)),
                change_tokens(calibration.estimated_input, calibration.reported_input),
            );
        }
        if reported.requests < self.sent.requests {
            return writeln!(
                f,
                "Every request is priced from Pi's estimate; the provider reported {} of the {} requests sent",
                group_digits(u128::from(reported.requests)),
                group_digits(u128::from(self.sent.requests)),
            );
        }
        writeln!(
            f,
            "Every request is priced from Pi's estimate; against the provider's reports it is {} on input and {} on output",
            change_tokens(self.sent.input(), reported.all_input()),
            change_tokens(self.sent.output, reported.output),
        )
    }

    /// One line per mechanism: what it did, in its own terms.
    fn fmt_details(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |value: u64| group_digits(u128::from(value));
        let plural = |value: u64, one: &str, many: &str| {
            format!("{} {}", count(value), if value == 1 { one } else { many })
        };
        let fusion = self.row(Mechanism::ActionFusion);
        writeln!(
            f,
            "{}: {} avoided",
            Mechanism::ActionFusion.label(),
            plural(
                u64::try_from(fusion.requests_avoided).unwrap_or(0),
                "model turn",
                "model turns"
            ),
        )?;
        let archive = &self.archive;
        writeln!(
            f,
            "{}: {} archived ({} bytes), {} ({} bytes)",
            Mechanism::ObservationPack.label(),
            plural(archive.archived, "output", "outputs"),
            count(archive.archived_bytes),
            plural(archive.recalls, "recall", "recalls"),
            count(archive.recalled_bytes),
        )?;
        let reducer = &self.row(Mechanism::EvidencePreservingReducer).account;
        writeln!(
            f,
            "{}: {}, {} bytes ({} tokens) removed; its model read {} and wrote {} tokens",
            Mechanism::EvidencePreservingReducer.label(),
            plural(reducer.model_calls, "model call", "model calls"),
            count(reducer.bytes_removed),
            count(reducer.tokens_removed),
            count(reducer.model_input_tokens),
            count(reducer.model_output_tokens),
        )?;
        let occ = &self.row(Mechanism::OnlineContextCompact).account;
        writeln!(
            f,
            "{}: {}, {} tokens removed from the context; summaries read {} and wrote {} tokens",
            Mechanism::OnlineContextCompact.label(),
            plural(occ.model_calls, "compaction", "compactions"),
            count(occ.tokens_removed),
            count(occ.model_input_tokens),
            count(occ.model_output_tokens),
        )
    }
}

/// `-38.0 %` for a bill that fell from `before` to `after`; `n/a` without a `before`.
fn change(after: Money, before: Money) -> String {
    change_text((after - before).per_mille_of(before))
}

/// [`change`] for a number of tokens.
fn change_tokens(after: u64, before: u64) -> String {
    let delta = i128::from(after) - i128::from(before);
    change_text(crate::price::per_mille(delta, i128::from(before)))
}

fn change_text(per_mille: Option<i128>) -> String {
    let Some(per_mille) = per_mille else {
        return "n/a".to_owned();
    };
    let sign = if per_mille < 0 { "-" } else { "+" };
    let magnitude = per_mille.unsigned_abs();
    format!("{sign}{}.{} %", magnitude / 10, magnitude % 10)
}

//! The priced cost of every fixture session (`fixtures/sessions/corpus/` and
//! `fixtures/sessions/long/`), as Markdown: per file, plain Pi's input tokens and cost, and
//! as ratios to them SoL-Pi as recorded (the totals the live extension wrote into the file),
//! ObservationPack by its fixed rule and by the cache-aware placement, each alone and with
//! Online Context Compact; then, per long scenario, the plain recording against the SoL-Pi
//! recordings of the same steps.
//!
//! ```text
//! cargo run --release -p sol-replay --example cost_table
//! ```
//!
//! Every figure comes from the replay (`replay_session`, the policies' rows, each priced by
//! `sol_core::savings` as the live extension's book prices it) or from the live totals; this
//! program only divides them, and prices the tokens of each kind with the same
//! `PriceTable::cost` for the table of where the cost goes. Tokens are Pi's estimate
//! (characters / 4). Each file's active branch is replayed; the ObservationPack columns are
//! the fixed rule's and the cache-aware placement's on every file (also on a recording made
//! with `cacheAware`, whose own placement is in its "as recorded" column). Not part of the
//! package: it reads the workspace's fixtures.

// A program that prints its results.
#![allow(clippy::print_stdout)]
// The host reads the fixture folders.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;
use sol_core::Mechanism;
use sol_core::savings::{LayerTokens, Money, PriceTable, Report};
use sol_replay::reader::read_session;
use sol_replay::replay::{Policy, PolicyRow, ReplayOptions, replay_session};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/sessions");
const FOLDERS: [&str; 2] = ["corpus", "long"];

/// One replayed file.
struct Replayed {
    folder: &'static str,
    file: String,
    scenario: String,
    sol_pi: bool,
    cache_aware: bool,
    /// Plain Pi's row.
    plain: PolicyRow,
    /// Plain Pi's tokens by kind (the replayed book's first layer).
    plain_layer: LayerTokens,
    /// The fixed and cache-aware rows: ObservationPack, + OCC.
    rows: [PolicyRow; 4],
    /// The live extension's totals, priced.
    recorded: Option<Report>,
}

fn manifest_rows(folder: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{folder}/manifest.json"))
        .expect("the folder's manifest.json");
    let manifest: Value = serde_json::from_str(&text).expect("manifest JSON");
    manifest["files"].as_array().cloned().unwrap_or_default()
}

fn replay(folder: &'static str, row: &Value, prices: &PriceTable) -> Replayed {
    let file = row["file"].as_str().expect("file").to_owned();
    let cache_aware = row["cacheAware"].as_bool().unwrap_or(false);
    // The fixed rule in the ObservationPack columns, whatever the recording ran.
    // Pi's estimate at one price table, as the live extension accounts (the faux provider's
    // reports count uncached input twice, and its model has no prices).
    let options = ReplayOptions {
        prices: *prices,
        from_reports: false,
        per_model_prices: false,
        ..ReplayOptions::default()
    };
    let bytes = std::fs::read(format!("{FIXTURES}/{folder}/{file}")).expect("the session file");
    let session = read_session(&format!("{folder}/{file}"), bytes.as_slice()).expect("a session");
    let replayed = replay_session(&session, &options);
    let branch = replayed.branches.first().expect("an active branch");
    let rows = [
        Policy::ObservationPack,
        Policy::ObservationPackOcc,
        Policy::CacheAwarePack,
        Policy::CacheAwarePackOcc,
    ]
    .map(|policy| branch.row(policy).clone());
    Replayed {
        folder,
        scenario: row["scenario"].as_str().unwrap_or_default().to_owned(),
        sol_pi: row["solPi"].as_bool().unwrap_or(false),
        cache_aware,
        plain: branch.row(Policy::PlainPi).clone(),
        plain_layer: branch.sol_pi.layers[0],
        rows,
        recorded: branch.recorded.as_ref().map(|live| live.report(prices)),
        file,
    }
}

fn ratio(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{:.2}", part / whole)
    } else {
        "n/a".to_owned()
    }
}

/// Money as a float number of picodollars, only to divide two amounts.
fn pico(money: Money) -> f64 {
    money.0 as f64
}

/// `tokens / cost` of `row` as ratios to `plain`'s.
fn pair(tokens: u64, cost: Money, plain_tokens: u64, plain_cost: Money) -> String {
    format!(
        "{} / {}",
        ratio(tokens as f64, plain_tokens as f64),
        ratio(pico(cost), pico(plain_cost))
    )
}

fn main() {
    let prices = PriceTable::default();
    let mut replayed = Vec::new();
    for folder in FOLDERS {
        for row in manifest_rows(folder) {
            replayed.push(replay(folder, &row, &prices));
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Each cell: input tokens / priced cost, as a ratio to plain Pi's on the same file (its \"Plain Pi\" row: the requests rebuilt without SoL-Pi). \"As recorded\" is what the live extension accounted (its newest `sol-pi-savings-totals` entry): the requests as sent with its own model calls, against its own plain layer.\n"
    );
    let _ = writeln!(
        out,
        "| file | SoL-Pi | requests | plain Pi tokens | plain Pi cost | as recorded | ObservationPack | + OCC | cache-aware ObservationPack | + OCC |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for file in &replayed {
        let plain = &file.plain;
        let cell =
            |row: &PolicyRow| pair(row.input_tokens, row.cost, plain.input_tokens, plain.cost);
        let recorded = file.recorded.as_ref().map_or_else(
            || "-".to_owned(),
            |live| {
                pair(
                    live.sent.input(),
                    live.sent_cost,
                    live.plain.input(),
                    live.plain_cost,
                )
            },
        );
        let mode = match (file.sol_pi, file.cache_aware) {
            (false, _) => "off",
            (true, false) => "on",
            (true, true) => "on, cacheAware",
        };
        let _ = writeln!(
            out,
            "| `{}/{}` | {mode} | {} | {} | {} | {recorded} | {} | {} | {} | {} |",
            file.folder,
            file.file,
            plain.requests,
            sol_core::tui::format_count(plain.input_tokens),
            plain.cost,
            cell(&file.rows[0]),
            cell(&file.rows[1]),
            cell(&file.rows[2]),
            cell(&file.rows[3]),
        );
    }

    // The long scenarios across files: the plain recording against each SoL-Pi recording.
    let mut scenarios: BTreeMap<&str, Vec<&Replayed>> = BTreeMap::new();
    for file in replayed.iter().filter(|file| file.folder == "long") {
        scenarios.entry(&file.scenario).or_default().push(file);
    }
    let _ = writeln!(
        out,
        "\nLong scenarios across recordings: the plain recording's plain Pi (input tokens, cost) against each SoL-Pi recording of the same steps as the live extension sent them (its requests as sent, with its own model calls: the reducer's and OCC's summaries). Ratios: input tokens / priced cost.\n"
    );
    let _ = writeln!(
        out,
        "| scenario | plain Pi requests | plain Pi tokens | plain Pi cost | SoL-Pi requests sent | SoL-Pi tokens sent | SoL-Pi cost | ratio | cache-aware requests sent | cache-aware tokens sent | cache-aware cost | ratio |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (scenario, files) in scenarios {
        let Some(plain) = files.iter().find(|file| !file.sol_pi) else {
            continue;
        };
        let sent = |cache_aware: bool| {
            files
                .iter()
                .find(|file| file.sol_pi && file.cache_aware == cache_aware)
                .and_then(|file| file.recorded.as_ref())
        };
        let column = |live: Option<&Report>| {
            live.map_or_else(
                || "- | - | - | -".to_owned(),
                |live| {
                    format!(
                        "{} | {} | {} | {}",
                        live.sent.requests,
                        sol_core::tui::format_count(live.sent.input()),
                        live.sent_cost,
                        pair(
                            live.sent.input(),
                            live.sent_cost,
                            plain.plain.input_tokens,
                            plain.plain.cost
                        )
                    )
                },
            )
        };
        let _ = writeln!(
            out,
            "| {scenario} | {} | {} | {} | {} | {} |",
            plain.plain.requests,
            sol_core::tui::format_count(plain.plain.input_tokens),
            plain.plain.cost,
            column(sent(false)),
            column(sent(true)),
        );
    }
    breakdown(&mut out, &replayed, &prices);
    let _ = writeln!(
        out,
        "\nPrices per million tokens: input ${:.2}, cache read ${:.2}, cache write ${:.2}, output ${:.2}; each request is priced as a prompt cache bills it: the prefix shared with the previous request is a cache read, the rest a cache write.",
        prices.input, prices.cache_read, prices.cache_write, prices.output
    );
    print!("{out}");
}

/// Where each long recording's cost goes: cache reads, cache writes and output of the
/// requests (as sent, for a SoL-Pi recording: the live totals' last layer), and the own model
/// calls of the reducer and of Online Context Compact's summaries.
fn breakdown(out: &mut String, replayed: &[Replayed], prices: &PriceTable) {
    let _ = writeln!(
        out,
        "\nWhere the cost of each long recording goes (requests as sent; a plain recording's are plain Pi's):\n"
    );
    let _ = writeln!(
        out,
        "| file | requests | cache read tokens | cache read | cache write tokens | cache write | output | reducer's model | OCC's summaries | total |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for file in replayed.iter().filter(|file| file.folder == "long") {
        let (layer, reducer, occ, total) = match &file.recorded {
            Some(live) => (
                live.sent,
                live.row(Mechanism::EvidencePreservingReducer).own_cost,
                live.row(Mechanism::OnlineContextCompact).own_cost,
                live.sent_cost,
            ),
            None => (file.plain_layer, Money::ZERO, Money::ZERO, file.plain.cost),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {reducer} | {occ} | {total} |",
            file.file,
            layer.requests,
            sol_core::tui::format_count(layer.cache_read),
            prices.cost(layer.cache_read, 0, 0, 0),
            sol_core::tui::format_count(layer.cache_write),
            prices.cost(0, layer.cache_write, 0, 0),
            prices.cost(0, 0, 0, layer.output),
        );
    }
}

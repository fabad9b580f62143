//! What `sol-pi replay` prints: per session the `/sol-pi` table of SoL-Pi as replayed and the
//! policies side by side, then the totals over every file; as text, Markdown or JSON.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Value, json};
use sol_core::savings::{Report, Savings};

use crate::prices::ModelPriceTable;
use sol_core::tui::{format_count as count, format_signed_count};

use crate::replay::{BranchReplay, MASK_TEXT, Policy, PolicyRow, ReplayOptions, SessionReplay};

/// The output forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Aligned plain text for a terminal.
    #[default]
    Text,
    /// GitHub Markdown tables.
    Markdown,
    /// One JSON document.
    Json,
}

/// How tokens are counted and requests priced, printed with every report.
pub const METHOD: &str = "Tokens are Pi's estimate (characters / 4) of each message as it is sent; \
each request is priced as a prompt cache bills it: the prefix shared with the policy's previous \
request is a cache read, everything from the first changed message on a cache write.";

/// What "Recalls needed" counts, printed with every report.
pub const RELIANCE: &str = "Recalls needed: the results a policy replaced that a later reply \
quoted (one of its lines of 40 or more characters repeated as a line of the reply) while no \
message still sent in full held that line, \
so the model relied on what the policy hid; each is priced as the recall it would have needed \
(one more request reading the context from the cache, the recalled page written, a short \
reply) and is not in the policy's cost.";

/// How a request with the provider's reported usage is priced, printed unless `--estimated`.
pub const REPORTED: &str = "Where the session holds the usage the provider reported for a request, \
the request that was sent is priced as reported, and every policy's request is its estimate scaled by \
the report's input over the estimate's; where the provider read less of its cache than the estimate \
shared with the previous request (a cache break), every policy reads its own request up to the same \
message (and the same share of it) where the provider's read ended.";

/// The totals over several sessions: every active branch (and with `--all-branches` every
/// other one) added up.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Sessions replayed.
    pub sessions: usize,
    /// Branches replayed.
    pub branches: usize,
    /// SoL-Pi as replayed, summed.
    pub sol_pi: Savings,
    /// The policies' rows, summed.
    pub policies: Vec<PolicyRow>,
}

impl Totals {
    /// The totals of `sessions`.
    pub fn of(sessions: &[SessionReplay]) -> Totals {
        let mut totals = Totals {
            sessions: sessions.len(),
            ..Totals::default()
        };
        for branch in sessions.iter().flat_map(|session| &session.branches) {
            totals.branches += 1;
            totals.sol_pi += &branch.sol_pi;
            if totals.policies.is_empty() {
                totals.policies = branch.policies.clone();
                continue;
            }
            for (sum, row) in totals.policies.iter_mut().zip(&branch.policies) {
                sum.requests += row.requests;
                sum.input_tokens += row.input_tokens;
                sum.cost = sum.cost + row.cost;
                sum.requests_saved += row.requests_saved;
                sum.input_tokens_saved += row.input_tokens_saved;
                sum.net_saved = sum.net_saved + row.net_saved;
                sum.recalls_needed += row.recalls_needed;
                sum.recall_cost = sum.recall_cost + row.recall_cost;
            }
        }
        totals
    }
}

/// The whole report of `sessions` in `format`.
pub fn render(sessions: &[SessionReplay], options: &ReplayOptions, format: Format) -> String {
    match format {
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&json_report(sessions, options))
                .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"));
            text.push('\n');
            text
        }
        Format::Text | Format::Markdown => {
            let markdown = format == Format::Markdown;
            let mut out = String::new();
            for session in sessions {
                session_text(&mut out, session, options, markdown);
            }
            if sessions.len() > 1 {
                totals_text(&mut out, &Totals::of(sessions), options, markdown);
            }
            method_text(&mut out, options, markdown);
            out
        }
    }
}

/// The JSON document: sessions, totals, prices and the counting method.
pub fn json_report(sessions: &[SessionReplay], options: &ReplayOptions) -> Value {
    let totals = Totals::of(sessions);
    json!({
        "sessions": sessions,
        "totals": {
            "sessions": totals.sessions,
            "branches": totals.branches,
            "solPi": totals.sol_pi,
            "solPiReport": priced(&totals.sol_pi, options),
            "policies": totals.policies,
        },
        "options": options,
        "maskText": MASK_TEXT,
        "method": METHOD,
    })
}

fn heading(out: &mut String, markdown: bool, level: usize, text: &str) {
    if markdown {
        let _ = writeln!(out, "{} {text}\n", "#".repeat(level));
    } else {
        let _ = writeln!(out, "{text}");
        let _ = writeln!(out, "{}", "=".repeat(text.chars().count()));
    }
}

fn session_text(out: &mut String, session: &SessionReplay, options: &ReplayOptions, md: bool) {
    heading(out, md, 2, &session.file);
    let _ = writeln!(
        out,
        "Pi session format {}, {} entries, {} bytes.",
        session.version,
        count(session.entries as u64),
        count(session.bytes),
    );
    for warning in &session.warnings {
        let _ = writeln!(out, "Warning: {warning}");
    }
    if !session.system_prompt_recorded {
        let _ = writeln!(
            out,
            "The file holds no system prompt (Pi 0.84.2 does not write it): every request is counted without it, in every policy alike."
        );
    }
    for branch in &session.branches {
        let _ = writeln!(out);
        branch_text(out, branch, options, md);
    }
    let _ = writeln!(out);
}

fn branch_text(out: &mut String, branch: &BranchReplay, options: &ReplayOptions, md: bool) {
    let which = if branch.active {
        "Active branch"
    } else {
        "Branch"
    };
    let title = format!(
        "{which} ending at {}: {} entries, {} messages",
        branch.leaf,
        count(branch.entries as u64),
        count(branch.messages as u64)
    );
    if md {
        let _ = writeln!(out, "### {title}\n");
    } else {
        let _ = writeln!(out, "{title}");
    }
    let report = priced(&branch.sol_pi, options);
    let _ = writeln!(out, "SoL-Pi as replayed:");
    block(out, md, &report.to_string());
    let _ = writeln!(out);
    let _ = writeln!(out, "Policies side by side:");
    policy_table(out, &branch.policies, options.mask_keep, md);
    let fusion = &branch.fusion;
    let _ = writeln!(
        out,
        "Action Fusion: {} fused {} made; {} {} (an edit or write, then bash in the next turn) whose requests carried {} context tokens.",
        count(fusion.fused),
        plural(fusion.fused, "call", "calls"),
        count(fusion.opportunities),
        plural(fusion.opportunities, "opportunity", "opportunities"),
        count(fusion.opportunity_tokens),
    );
    let reducer = &branch.reducer;
    let _ = writeln!(
        out,
        "Reducer: {} {} ({} bytes of logs for its model{}); its calls would read {} tokens ({} at the input price); with cacheAware, {} of them would pay for {} call ({} tokens, {}); a replay calls no model, so no receipt is written and no saving priced for it.",
        count(reducer.candidates),
        plural(reducer.candidates, "candidate", "candidates"),
        count(reducer.log_bytes),
        if reducer.receipts > 0 {
            format!(
                "; the session already holds {} {}",
                count(reducer.receipts),
                plural(reducer.receipts, "receipt", "receipts")
            )
        } else {
            String::new()
        },
        count(reducer.call_input_tokens),
        options.prices.cost(0, 0, reducer.call_input_tokens, 0),
        count(reducer.economic),
        plural(reducer.economic, "its", "their"),
        count(reducer.economic_call_input_tokens),
        options
            .prices
            .cost(0, 0, reducer.economic_call_input_tokens, 0),
    );
    let compactions = &branch.compactions;
    let occ = if compactions.plan_calls == 0 {
        "no update_plan call, so OCC has no plan step to compact at".to_owned()
    } else {
        format!(
            "{} {} at completed plan steps, as recorded",
            count(compactions.occ),
            plural(compactions.occ, "compaction", "compactions")
        )
    };
    let _ = writeln!(
        out,
        "Online Context Compact: {occ}; Pi's own compactions: {}.",
        count(compactions.pi)
    );
    if let (Some(redecided), Some(ratio)) = (compactions.redecided, options.occ_ratio) {
        let _ = writeln!(
            out,
            "Online Context Compact decided again at cacheWriteReadRatio {ratio}: {} {} (its session machine on this branch, a {}-token summary assumed each); the ObservationPack + OCC row is this one.",
            count(redecided),
            plural(redecided, "compaction", "compactions"),
            count(sol_occ::economics::MEMO_TOKENS),
        );
    }
    let _ = writeln!(
        out,
        "Masking: every tool output but the last {} of a request sent as \"{MASK_TEXT}\"; {} {} masked.",
        options.mask_keep,
        count(branch.masked_outputs),
        plural(branch.masked_outputs, "output", "outputs"),
    );
    let recent = branch.row(Policy::RecentPack);
    let _ = writeln!(
        out,
        "Recent-outputs ObservationPack: results its compact placeholder halves (over {} bytes) as that placeholder once {} newer tool outputs follow them (over {} bytes, after their two full sends; {} newer outputs for a result a reply quoted), placed where the provider's cache breaks or the saving beats {}x the rewrite; {} {} replaced, {} later relied on.",
        count(sol_obspack::MEDIUM_THRESHOLD_BYTES),
        options.keep_recent_outputs,
        count(sol_obspack::THRESHOLD_BYTES),
        options
            .keep_recent_outputs
            .saturating_mul(sol_obspack::QUOTED_KEEP_FACTOR),
        sol_obspack::placement::RECENT_CAUTION,
        count(recent.results_replaced),
        plural(recent.results_replaced, "result", "results"),
        count(recent.recalls_needed),
    );
    if let Some(recorded) = &branch.recorded {
        let live = priced(recorded, options);
        let _ = writeln!(
            out,
            "Recorded live by SoL-Pi on this branch: {} requests sent, {} without SoL-Pi; net saving {}.",
            count(live.sent.requests),
            count(live.plain.requests),
            live.total_net(),
        );
    }
}

fn totals_text(out: &mut String, totals: &Totals, options: &ReplayOptions, md: bool) {
    heading(
        out,
        md,
        2,
        &format!(
            "Totals over {} sessions ({} branches)",
            totals.sessions, totals.branches
        ),
    );
    let _ = writeln!(out, "SoL-Pi as replayed:");
    block(out, md, &priced(&totals.sol_pi, options).to_string());
    let _ = writeln!(out);
    let _ = writeln!(out, "Policies side by side:");
    policy_table(out, &totals.policies, options.mask_keep, md);
    let _ = writeln!(out);
}

/// A branch's or the totals' SoL-Pi figures, priced as the options say: each model at its own
/// prices where models are priced on their own.
fn priced(savings: &Savings, options: &ReplayOptions) -> Report {
    if options.per_model_prices {
        savings.report_per_model(&options.prices)
    } else {
        savings.report(&options.prices)
    }
}

fn method_text(out: &mut String, options: &ReplayOptions, md: bool) {
    let prices = &options.prices;
    let table = format!(
        "input ${:.2}, cache read ${:.2}, cache write ${:.2}, output ${:.2}",
        prices.input, prices.cache_read, prices.cache_write, prices.output
    );
    if options.per_model_prices {
        let models = ModelPriceTable::bundled();
        let _ = writeln!(
            out,
            "Prices per million tokens: each model at its own, from the model list of Pi {} ({}, {} models); a model it lacks at {table}.",
            models.pi,
            models.generated,
            models.len()
        );
    } else {
        let _ = writeln!(out, "Prices per million tokens, every model: {table}.");
    }
    let _ = writeln!(out, "{METHOD}");
    let _ = writeln!(out, "{RELIANCE}");
    if options.from_reports {
        let _ = writeln!(out, "{REPORTED}");
    }
    if md {
        let _ = writeln!(out);
    }
}

fn block(out: &mut String, md: bool, text: &str) {
    if md {
        let _ = writeln!(out, "```\n{text}\n```");
    } else {
        let _ = writeln!(out, "{text}");
    }
}

fn policy_table(out: &mut String, rows: &[PolicyRow], mask_keep: usize, md: bool) {
    let header = [
        "Policy",
        "Requests",
        "Input tokens",
        "Cost",
        "Requests saved",
        "Input tokens saved",
        "Net saving",
        "Recalls needed",
    ];
    let mut lines: Vec<[String; 8]> = vec![header.map(str::to_owned)];
    for row in rows {
        let unpriced = |text: String| if row.priced { text } else { "n/a".to_owned() };
        let label = match row.policy {
            Policy::ObservationMasking => format!("Masking (last {mask_keep} outputs)"),
            policy => policy.label().to_owned(),
        };
        lines.push([
            label,
            count(row.requests),
            count(row.input_tokens),
            unpriced(row.cost.to_string()),
            format_signed_count(row.requests_saved),
            format_signed_count(row.input_tokens_saved),
            unpriced(row.net_saved.to_string()),
            match row.policy {
                Policy::PlainPi | Policy::ActionFusion | Policy::ReducerCandidates => {
                    "-".to_owned()
                }
                _ if row.recalls_needed == 0 => "0".to_owned(),
                _ => format!("{} ({})", count(row.recalls_needed), row.recall_cost),
            },
        ]);
        if row.policy == Policy::PlainPi {
            // The plain row is the reference: nothing saved.
            if let Some(last) = lines.last_mut() {
                last[4] = "-".to_owned();
                last[5] = "-".to_owned();
                last[6] = "-".to_owned();
            }
        }
    }
    if md {
        for (index, line) in lines.iter().enumerate() {
            let _ = writeln!(out, "| {} |", line.join(" | "));
            if index == 0 {
                let _ = writeln!(out, "|---|{}", "---:|".repeat(7));
            }
        }
        let _ = writeln!(out);
        return;
    }
    for line in sol_core::tui::aligned_lines(&lines) {
        let _ = writeln!(out, "{line}");
    }
}

fn plural<'a>(value: u64, one: &'a str, many: &'a str) -> &'a str {
    if value == 1 { one } else { many }
}

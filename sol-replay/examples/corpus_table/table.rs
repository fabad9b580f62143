//! The per-corpus table of `corpus_table`, from replays already made (no I/O): shared with
//! the test that builds it from fixture files (`tests/replay/corpus_table.rs`).

use std::fmt::Write as _;

use sol_core::savings::Money;
use sol_replay::replay::{BranchReplay, Policy, SessionReplay};

/// One corpus: a top-level folder's replayed sessions.
pub(crate) struct Corpus {
    /// The folder's name.
    pub(crate) name: String,
    /// Its sessions, replayed, in path order.
    pub(crate) sessions: Vec<SessionReplay>,
    /// Files that looked like sessions but failed to read.
    pub(crate) unreadable: usize,
}

/// The policies shown: every one of [`Policy::ALL`] but plain Pi, the baseline, and those
/// whose rows are not priced (the reducer's candidates).
fn shown_policies(corpora: &[Corpus]) -> Vec<Policy> {
    Policy::ALL
        .into_iter()
        .filter(|policy| *policy != Policy::PlainPi)
        .filter(|policy| active_branches(corpora.iter()).all(|branch| branch.row(*policy).priced))
        .collect()
}

/// The active branch of every session of `corpora`.
fn active_branches<'a>(
    corpora: impl Iterator<Item = &'a Corpus>,
) -> impl Iterator<Item = &'a BranchReplay> {
    corpora
        .flat_map(|corpus| corpus.sessions.iter())
        .filter_map(|session| session.branches.first())
}

/// `part / whole` to two decimals, or `n/a` for nothing to divide by.
fn ratio(part: Money, whole: Money) -> String {
    if whole.is_positive() {
        // Floats only to divide two amounts.
        format!("{:.2}", part.0 as f64 / whole.0 as f64)
    } else {
        "n/a".to_owned()
    }
}

/// One table row's cells for `branches` (the name is the caller's).
fn cost_row(branches: &[&BranchReplay], policies: &[Policy]) -> String {
    let plain: Money = branches
        .iter()
        .map(|branch| branch.row(Policy::PlainPi).cost)
        .sum();
    let requests: u64 = branches
        .iter()
        .map(|branch| branch.row(Policy::PlainPi).requests)
        .sum();
    let mut row = format!(
        "{} | {} | {plain} |",
        branches.len(),
        sol_core::tui::format_count(requests)
    );
    for policy in policies {
        let cost: Money = branches.iter().map(|branch| branch.row(*policy).cost).sum();
        let recalls: u64 = branches
            .iter()
            .map(|branch| branch.row(*policy).recalls_needed)
            .sum();
        let replaced: u64 = branches
            .iter()
            .map(|branch| branch.row(*policy).results_replaced)
            .sum();
        let _ = write!(row, " {} / {recalls} of {replaced} |", ratio(cost, plain));
    }
    row
}

/// One table row's cells: of `branches`, how many cost more under each policy than plain Pi.
fn worse_row(branches: &[&BranchReplay], policies: &[Policy]) -> String {
    let mut row = format!("{} |", branches.len());
    for policy in policies {
        let worse = branches
            .iter()
            .filter(|branch| branch.row(*policy).cost > branch.row(Policy::PlainPi).cost)
            .count();
        let _ = write!(row, " {worse} |");
    }
    row
}

/// The two tables as Markdown: per corpus (and over all of them when there are several),
/// plain Pi's cost and each policy's cost ratio and recalls needed; then how many sessions
/// each policy costs more on than plain Pi.
pub(crate) fn corpus_table(corpora: &[Corpus]) -> String {
    let policies = shown_policies(corpora);
    let header = |first: &str| {
        let mut header = first.to_owned();
        for policy in &policies {
            let _ = write!(header, " {} |", policy.label());
        }
        let mut rule = "|---|".to_owned() + &"---:|".repeat(first.matches('|').count() - 2);
        rule.push_str(&"---:|".repeat(policies.len()));
        (header, rule)
    };
    let mut rows: Vec<(String, Vec<&BranchReplay>)> = corpora
        .iter()
        .map(|corpus| {
            (
                format!("`{}`", corpus.name),
                active_branches(std::iter::once(corpus)).collect(),
            )
        })
        .collect();
    if corpora.len() > 1 {
        rows.push(("all".to_owned(), active_branches(corpora.iter()).collect()));
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "Each policy's cell: its cost as a ratio to plain Pi's over the corpus (the sum of its cost over the sum of plain Pi's) / the recalls it needed (results it replaced that a later reply quoted) of the results it replaced. Plain Pi's cost is its row's, priced from the provider's reported usage at each model's prices (what was billed, as the replay rebuilds it). Active branch of each session.\n"
    );
    let (head, rule) = header("| corpus | sessions | plain Pi requests | plain Pi cost |");
    let _ = writeln!(out, "{head}\n{rule}");
    for (name, branches) in &rows {
        let _ = writeln!(out, "| {name} | {}", cost_row(branches, &policies));
    }
    let _ = writeln!(
        out,
        "\nSessions on which the policy costs more than plain Pi:\n"
    );
    let (head, rule) = header("| corpus | sessions |");
    let _ = writeln!(out, "{head}\n{rule}");
    for (name, branches) in &rows {
        let _ = writeln!(out, "| {name} | {}", worse_row(branches, &policies));
    }
    let unreadable: usize = corpora.iter().map(|corpus| corpus.unreadable).sum();
    if unreadable > 0 {
        let _ = writeln!(
            out,
            "\n{unreadable} file(s) failed to read and are not counted (named on stderr)."
        );
    }
    out
}

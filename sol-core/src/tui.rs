//! The savings treatment every mechanism shares in Pi's interactive terminal: the
//! lightning badge, the "Money saved" line, the notice, the keyed status, and
//! en-US number formatting. Mechanism crates supply their label and saving.
//!
//! ```
//! use sol_core::tui;
//!
//! assert_eq!(tui::badge_title("Observation Pack"), "⚡ SoL-Pi · Observation Pack");
//! assert_eq!(tui::money_saved("3 tokens"), "Money saved · 3 tokens");
//! assert_eq!(tui::format_count(1_234_567), "1,234,567");
//! ```

/// Status key shared by every mechanism, so a newer saving replaces the older one.
pub const STATUS_KEY: &str = "sol-pi-savings";

/// The status key of the session's running total (`/sol-pi`'s one-line form), kept apart from
/// the mechanisms' passing notices so neither clears the other.
pub const TOTAL_STATUS_KEY: &str = "sol-pi-total";
/// How long the status entry stays before the host clears it, in milliseconds.
pub const STATUS_CLEAR_MS: u32 = 4000;

/// `n` with en-US thousands separators: `1234567` is `1,234,567`.
pub fn format_count(n: u64) -> String {
    group_digits(u128::from(n))
}

/// [`format_count`] of a difference: a minus when it is negative (`-1,200`).
///
/// ```
/// assert_eq!(sol_core::tui::format_signed_count(-1_200), "-1,200");
/// assert_eq!(sol_core::tui::format_signed_count(7), "7");
/// ```
pub fn format_signed_count(value: i128) -> String {
    let sign = if value < 0 { "-" } else { "" };
    format!("{sign}{}", group_digits(value.unsigned_abs()))
}

/// The lines of a table whose first column is left-aligned and every other right-aligned,
/// two spaces apart, each line without trailing spaces (the `/sol-pi` table and the replay's
/// policy table).
///
/// ```
/// let rows = [["Name", "Count"], ["apples", "7"], ["figs", "1,200"]];
/// assert_eq!(
///     sol_core::tui::aligned_lines(&rows),
///     ["Name    Count", "apples      7", "figs    1,200"]
/// );
/// ```
pub fn aligned_lines<const N: usize>(rows: &[[impl AsRef<str>; N]]) -> Vec<String> {
    let widths: Vec<usize> = (0..N)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].as_ref().chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|row| {
            let mut text = String::new();
            for (column, cell) in row.iter().enumerate() {
                let cell = cell.as_ref();
                if column == 0 {
                    text.push_str(&format!("{cell:<width$}", width = widths[0]));
                } else {
                    text.push_str(&format!("  {cell:>width$}", width = widths[column]));
                }
            }
            text.trim_end().to_owned()
        })
        .collect()
}

/// [`format_count`] for the wider sums of the savings report.
pub(crate) fn group_digits(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The badge's first line: `⚡ SoL-Pi · <label>`.
pub fn badge_title(label: &str) -> String {
    format!("\u{26A1} SoL-Pi \u{00B7} {label}")
}

/// The badge's second line: `Money saved · <saving>`.
pub fn money_saved(saving: &str) -> String {
    format!("Money saved \u{00B7} {saving}")
}

/// The two-line notification: the badge title, a line break, the saving line.
pub fn savings_notice(label: &str, saving: &str) -> String {
    format!("{}\n{}", badge_title(label), money_saved(saving))
}

/// The footer status text shown under [`STATUS_KEY`]: `⚡ <label> · <saving>`.
pub fn status_text(label: &str, saving: &str) -> String {
    format!("\u{26A1} {label} \u{00B7} {saving}")
}

//! The savings notice shown in Pi's interactive terminal after a receipt is applied.
//!
//! Only the TUI shows it (`ctx.mode === "tui"`); it never enters messages, prompts or
//! print/JSON/RPC output.
//!
//! ```
//! use sol_reducer::notice::{format_bytes, savings_notice};
//!
//! assert_eq!(format_bytes(512), "512 B");
//! assert_eq!(format_bytes(1536), "1.5 KiB");
//! assert_eq!(format_bytes(3 * 1024 * 1024), "3 MiB");
//! assert_eq!(
//!     savings_notice(20_480),
//!     "⚡ SoL-Pi · Evidence Reducer\nMoney saved · 20 KiB removed from future prompts"
//! );
//! ```

/// The mechanism's name in notices.
pub const MECHANISM_LABEL: &str = "Evidence Reducer";
/// The key of Pi's footer status entry that shows the saving.
pub const STATUS_KEY: &str = sol_core::tui::STATUS_KEY;
/// How long the status entry stays before the host clears it, in milliseconds.
pub const STATUS_CLEAR_MS: u32 = sol_core::tui::STATUS_CLEAR_MS;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// `bytes` for people: `x.y MiB` from 1 MiB, `x.y KiB` from 1 KiB, else `n B`; one
/// decimal, rounded half up, with a trailing `.0` dropped.
pub fn format_bytes(bytes: u64) -> String {
    let (unit, name) = if bytes >= MIB {
        (MIB, "MiB")
    } else if bytes >= KIB {
        (KIB, "KiB")
    } else {
        return format!("{bytes} B");
    };
    // Tenths of the unit, rounded half up, in integers so no float rounding creeps in.
    let tenths = (u128::from(bytes) * 20 + u128::from(unit)) / (u128::from(unit) * 2);
    let (whole, tenth) = (tenths / 10, tenths % 10);
    if tenth == 0 {
        format!("{whole} {name}")
    } else {
        format!("{whole}.{tenth} {name}")
    }
}

/// `<bytes> removed from future prompts`.
pub fn savings_text(bytes_removed: u64) -> String {
    format!(
        "{} removed from future prompts",
        format_bytes(bytes_removed)
    )
}

/// The notification: `⚡ SoL-Pi · Evidence Reducer`, a line break, then
/// `Money saved · <bytes> removed from future prompts`.
pub fn savings_notice(bytes_removed: u64) -> String {
    sol_core::tui::savings_notice(MECHANISM_LABEL, &savings_text(bytes_removed))
}

/// The footer status entry: `⚡ Evidence Reducer · <bytes> removed from future prompts`.
pub fn savings_status(bytes_removed: u64) -> String {
    sol_core::tui::status_text(MECHANISM_LABEL, &savings_text(bytes_removed))
}

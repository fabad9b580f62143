//! The bodies of SoL-Pi's fuzz targets.
//!
//! Every mechanism parses or checks text it did not write: the config file, the model's
//! tool arguments and replies, paths, archive ids, recall offsets and queries, its own
//! records read back from disk, and Pi's session files. Each function here takes raw bytes,
//! feeds them to one of those readers and asserts what must hold for any input: no panic,
//! the same answer twice, and the target's own invariants (a verified quote is in the log
//! byte for byte, a recall page is the original's bytes within its limits, a resolved path
//! is absolute and normalised, a record read back is the record written, ...).
//!
//! Two runners share these bodies: the cargo-fuzz project in `fuzz/` (one `fuzz_targets/`
//! file per target, nightly, optional) and this crate's test, which runs every target over
//! its seed corpus in `fixtures/fuzz/<target>/` and over a fixed number of seeded proptest
//! inputs on stable. A failed invariant panics, which both runners report as a crash.
//!
//! Structured targets split their input into fields at the byte `0xFF`, which never occurs
//! in UTF-8, so every field of a seed stays readable text.

mod targets;

pub use targets::*;

/// A fuzz target: its name (the folder of its seeds, the file in `fuzz/fuzz_targets/`) and
/// its body.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The target's name.
    pub name: &'static str,
    /// Runs one input; panics when an invariant does not hold.
    pub run: fn(&[u8]),
}

/// Every target, in a fixed order.
pub const TARGETS: &[Target] = &[
    Target {
        name: "config",
        run: config,
    },
    Target {
        name: "update_plan",
        run: update_plan,
    },
    Target {
        name: "then_run",
        run: then_run,
    },
    Target {
        name: "receipt",
        run: receipt,
    },
    Target {
        name: "path",
        run: path,
    },
    Target {
        name: "recall",
        run: recall,
    },
    Target {
        name: "placeholder",
        run: placeholder,
    },
    Target {
        name: "ledger",
        run: ledger,
    },
    Target {
        name: "store",
        run: store,
    },
    Target {
        name: "session",
        run: session,
    },
    Target {
        name: "secret_gate",
        run: secret_gate,
    },
];

/// The field separator of structured inputs.
pub const SEPARATOR: u8 = 0xFF;

/// Splits `data` at [`SEPARATOR`] into at most `n` fields; missing fields are empty.
pub fn fields(data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = data.splitn(n, |byte| *byte == SEPARATOR).collect();
    out.resize(n, &[]);
    out
}

/// `bytes` as text, invalid sequences replaced (readers of JS strings see UTF-8 only).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

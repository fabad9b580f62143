//! The worst cases of receipt validation, run with
//! `cargo bench -p sol-reducer --bench quote_worst_case`.
//!
//! A receipt is checked against a log of up to 600,000 characters: each of its at most 12
//! quotes (at most 600 characters each) is searched for byte for byte, its line counted, and
//! a failing log is scanned for the failing tests its receipt must quote. These cases give
//! the search as much to do as a hostile log and a hostile reply can:
//!
//! - `near-miss`: a log of one repeated character, and quotes of 599 of it followed by a
//!   character that occurs only at the very end: every position is a partial match;
//! - `near-miss, rejected`: the same, but the last quote misses by its final character, so
//!   all 12 searches run to the end and the receipt is still refused;
//! - `periodic`: a log that repeats a 7-byte period, quotes that follow the period for 599
//!   characters and break it at the end;
//! - `multibyte`: the same near misses in 2-, 3- and 4-byte characters (600 UTF-16 units);
//! - `one line`: the whole log on one line, failing, with 12 failure quotes at its end;
//! - `many failures`: a failing log that names 20,000 failing tests, which the failure
//!   evidence check reads in full.
//!
//! Each case prints the median and the slowest of its runs.

// A benchmark needs a clock and prints its figures: the purity rules of clippy.toml are for
// the library, not for this measuring harness.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::json;
use sol_reducer::{MAX_SOURCE_CHARS, ReceiptCheck, sha256_hex, validate_receipt};

const RUNS: usize = 15;

struct Case {
    name: &'static str,
    log: String,
    quotes: Vec<(&'static str, String)>,
    is_error: bool,
    expect_ok: bool,
}

fn main() {
    let cases = [
        near_miss(false),
        near_miss(true),
        periodic(),
        multibyte('é'),
        multibyte('€'),
        multibyte('🦀'),
        one_line(),
        many_failures(),
    ];
    println!(
        "{:<28} {:>10} {:>7} {:>12} {:>12}",
        "case", "log bytes", "quotes", "median", "slowest"
    );
    let mut worst = Duration::ZERO;
    for case in &cases {
        let sha = sha256_hex(case.log.as_bytes());
        let evidence: Vec<_> = case
            .quotes
            .iter()
            .map(|(kind, quote)| json!({"kind": kind, "quote": quote}))
            .collect();
        let reply = json!({
            "schema": "sol-pi-evidence-receipt/1",
            "source_sha256": sha,
            "status": if case.is_error { "failure" } else { "success" },
            "uncertain": false,
            "evidence": evidence,
        })
        .to_string();
        let check = ReceiptCheck {
            log: &case.log,
            source_sha256: &sha,
            is_error: case.is_error,
        };
        let outcome = validate_receipt(&reply, &check);
        assert_eq!(
            outcome.is_ok(),
            case.expect_ok,
            "{}: {:?}",
            case.name,
            outcome.err()
        );
        let mut times: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let started = Instant::now();
                black_box(validate_receipt(black_box(&reply), black_box(&check)).is_ok());
                started.elapsed()
            })
            .collect();
        times.sort();
        let slowest = times[RUNS - 1];
        worst = worst.max(slowest);
        println!(
            "{:<28} {:>10} {:>7} {:>9.2} ms {:>9.2} ms",
            case.name,
            case.log.len(),
            case.quotes.len(),
            ms(times[RUNS / 2]),
            ms(slowest)
        );
    }
    println!("worst case, slowest run: {:.2} ms", ms(worst));
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// `fill` repeated to `chars` characters in all, then `end`.
fn filled(fill: char, end: &str) -> String {
    let count = MAX_SOURCE_CHARS - end.encode_utf16().count();
    let mut log: String = std::iter::repeat_n(fill, count / fill.len_utf16()).collect();
    log.push_str(end);
    log
}

fn near_miss(rejected: bool) -> Case {
    // Twelve distinct endings, all at the very end of the log.
    let endings = "ABCDEFGHIJKL";
    let log = filled('a', endings);
    let quotes = (0..12)
        .map(|n| {
            if rejected && n == 11 {
                // Missing by its last character: the search runs to the end.
                return ("target", format!("{}Z", "a".repeat(599)));
            }
            // The 600 characters that end with the n-th ending: found only at the end.
            let end = log.len() - endings.len() + n + 1;
            ("target", log[end - 600..end].to_owned())
        })
        .collect();
    Case {
        name: if rejected {
            "near-miss, rejected"
        } else {
            "near-miss"
        },
        log,
        quotes,
        is_error: false,
        expect_ok: !rejected,
    }
}

fn periodic() -> Case {
    let period = "abcabd\n";
    let body: String = period.repeat(MAX_SOURCE_CHARS / period.len() - 1);
    let log = format!("{body}abcabdX");
    let quotes = (0..12)
        .map(|n| {
            let mut quote: String = period.chars().cycle().skip(n).take(599).collect();
            quote.push('#');
            ("target", quote)
        })
        .collect();
    Case {
        name: "periodic, all missing",
        log,
        quotes,
        is_error: false,
        expect_ok: false,
    }
}

fn multibyte(fill: char) -> Case {
    let log = filled(fill, "Z");
    let units = 600 / fill.len_utf16();
    let quote: String = std::iter::repeat_n(fill, units - 1).chain(['Z']).collect();
    let quotes = (0..12).map(|_| ("target", quote.clone())).collect();
    Case {
        name: match fill.len_utf8() {
            2 => "multibyte (2-byte)",
            3 => "multibyte (3-byte)",
            _ => "multibyte (4-byte)",
        },
        log,
        quotes,
        is_error: false,
        expect_ok: true,
    }
}

fn one_line() -> Case {
    let failures: String = (0..12)
        .map(|n| format!("test t::case_{n:02} ... FAILED\n"))
        .collect();
    let log = filled('x', &format!("\n{failures}"));
    let quotes = (0..12)
        .map(|n| ("failure", format!("test t::case_{n:02} ... FAILED")))
        .collect();
    Case {
        name: "one line, failing",
        log,
        quotes,
        is_error: true,
        expect_ok: true,
    }
}

fn many_failures() -> Case {
    let mut log = String::new();
    let mut n = 0;
    let summary = "test result: FAILED. 0 passed; many failed\n";
    loop {
        let line = format!("test suite::case_{n:05} ... FAILED\n");
        if log.len() + line.len() + summary.len() > MAX_SOURCE_CHARS {
            break;
        }
        log.push_str(&line);
        n += 1;
    }
    log.push_str(summary);
    // The first twelve failing tests quoted: what the check asks of a receipt.
    let quotes = (0..12)
        .map(|n| ("failure", format!("test suite::case_{n:05} ... FAILED")))
        .collect();
    Case {
        name: "many failures",
        log,
        quotes,
        is_error: true,
        expect_ok: true,
    }
}

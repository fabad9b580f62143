//! Properties: accepted quotes are always in the log, and the parsers never panic.

use camino::Utf8Path;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Value, json};
use sol_core::message::ContentBlock;
use sol_reducer::exit::{StatusLine, bash_exit_signal, split_status_line};
use sol_reducer::notice::format_bytes;
use sol_reducer::pi::{is_trusted_full_output_path, select_candidate};
use sol_reducer::secret::find_likely_secret;
use sol_reducer::{Decision, ReceiptCheck, ToolResultView, sha256_hex, validate_receipt};

use crate::secret::{SecretCase, secret_cases};
use crate::support::{Harness, OwnedResult, bash, fixture, reason};

/// Lines that look like build and test output, with the odd failure and odd spacing.
fn log_line() -> impl Strategy<Value = String> {
    prop_oneof![
        select(vec![
            "test a::b ... ok",
            "test a::c ... FAILED",
            "error[E0308]: mismatched types",
            "  left: 1",
            " right: 2",
            "",
            "    at Object.<anonymous> (src/a.test.ts:3:9)",
            "E   assert 1 == 2",
            "warning: unused variable: `x`",
            "\ttab\tseparated",
            "ünïcödé 中文 😀",
        ])
        .prop_map(str::to_owned),
        "[ -~]{0,40}",
        "\\PC{0,20}",
    ]
}

fn log() -> impl Strategy<Value = String> {
    prop::collection::vec(log_line(), 1..40).prop_map(|lines| lines.join("\n"))
}

/// A quote for `log`: sometimes an exact slice, sometimes a near miss, sometimes noise.
fn quote_for(log: String) -> impl Strategy<Value = String> {
    let chars: Vec<char> = log.chars().collect();
    let len = chars.len();
    // Mostly non-empty slices of at most 80 characters, like real quotes.
    let slice = (0..=len, 0usize..80).prop_map(move |(start, width)| {
        let end = (start + width.max(1)).min(len);
        chars[start.min(end)..end].iter().collect::<String>()
    });
    prop_oneof![
        10 => slice.clone(),
        2 => slice.clone().prop_map(|quote| quote.replace("  ", " ")),
        1 => slice.prop_map(|quote| format!("{quote} ")),
        2 => "\\PC{0,30}",
        1 => select(vec!["test a::c ... FAILED", "error", "ok", "  left: 1\n right: 2"]).prop_map(str::to_owned),
    ]
}

fn receipt_for(log: String, sha: String, is_error: bool) -> impl Strategy<Value = String> {
    let kind = prop_oneof![
        12 => select(vec!["fatal", "failure", "warning", "target", "summary"]),
        1 => Just("info"),
    ];
    let item = (kind, quote_for(log))
        .prop_map(|(kind, quote)| json!({"kind": kind, "quote": quote}))
        .boxed();
    let items = prop_oneof![
        4 => prop::collection::vec(item.clone(), 0..4),
        1 => prop::collection::vec(item, 0..14),
    ];
    (items, any::<bool>(), 0u8..12).prop_map(move |(evidence, uncertain, shape)| {
        let status = if is_error { "failure" } else { "success" };
        let mut receipt = json!({
            "schema": "sol-pi-evidence-receipt/1",
            "source_sha256": sha,
            "status": status,
            "uncertain": uncertain,
            "evidence": evidence,
        });
        // Now and then, damage the shape too.
        match shape {
            0 => receipt["status"] = Value::from(if is_error { "success" } else { "failure" }),
            1 => receipt["source_sha256"] = Value::from("0".repeat(64)),
            2 => return format!("```json\n{receipt}\n```"),
            _ => {}
        }
        receipt.to_string()
    })
}

fn case() -> impl Strategy<Value = (String, bool, String)> {
    (log(), any::<bool>()).prop_flat_map(|(log, is_error)| {
        let sha = sha256_hex(log.as_bytes());
        (
            Just(log.clone()),
            Just(is_error),
            receipt_for(log, sha, is_error),
        )
    })
}

fn caught_cases() -> Vec<SecretCase> {
    secret_cases()
        .into_iter()
        .filter(|case| case.caught)
        .collect()
}

/// A caught form of the table, its credential (when the table marks one) replaced by a
/// generated value.
fn secret_line() -> impl Strategy<Value = String> {
    (
        select(caught_cases()),
        "[a-zA-Z]{4,8}[0-9]{2,4}[a-zA-Z0-9]{2,8}",
    )
        .prop_map(|(case, generated)| match &case.secret {
            Some(secret) => case.line.replace(secret.as_str(), &generated),
            None => case.line.clone(),
        })
}

/// A build log of generated lines and lines of a real fixture log, over the 4 KiB minimum.
fn build_log() -> impl Strategy<Value = Vec<String>> {
    let real: Vec<String> = fixture("cargo-test-failure")
        .output
        .lines()
        .chain(fixture("pytest-failure").output.lines())
        .filter(|line| !line.starts_with("Command exited"))
        .map(str::to_owned)
        .collect();
    prop::collection::vec(prop_oneof![2 => log_line(), 3 => select(real)], 150..260)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn every_accepted_quote_is_in_the_log((log, is_error, reply) in case()) {
        let sha = sha256_hex(log.as_bytes());
        let check = ReceiptCheck { log: &log, source_sha256: &sha, is_error };
        if let Ok(receipt) = validate_receipt(&reply, &check) {
            prop_assert!(receipt.evidence.len() <= 12);
            for item in &receipt.evidence {
                prop_assert!(log.contains(&item.quote), "{:?} is not in the log", item.quote);
                prop_assert!(!item.quote.is_empty());
                let line = log[..log.find(&item.quote).expect("found")].matches('\n').count() as u64 + 1;
                prop_assert_eq!(item.line, line);
            }
            prop_assert_eq!(receipt.status.as_str(), if is_error { "failure" } else { "success" });
        }
    }

    #[test]
    fn the_driver_applies_only_verified_receipts((log, is_error, reply) in case()) {
        // Pad the log over the minimum so the model is asked.
        let padded = format!("{log}\n{}", "build step done\n".repeat(260));
        let reply = reply.replace(&sha256_hex(log.as_bytes()), &sha256_hex(padded.as_bytes()));
        let harness = Harness::new().replying(reply);
        let result = bash("make", &padded, is_error);
        match harness.run(&result) {
            Decision::Replaced(replacement) => {
                let text = replacement.content[0].as_text().expect("text");
                for line in text.lines().filter(|line| line.starts_with("- kind=")) {
                    let quote = line.split_once(" quote=").expect("a quote").1;
                    let quote: String = serde_json::from_str(quote).expect("a JSON string");
                    prop_assert!(padded.contains(&quote));
                }
                prop_assert!(replacement.summary.receipt_bytes < replacement.summary.source_bytes);
                prop_assert_eq!(replacement.is_error, is_error);
            }
            Decision::Unchanged(reason) => {
                // Nothing was lost: the log is archived whenever the model was asked.
                if !harness.model.requests().is_empty() {
                    prop_assert_eq!(harness.archived(&padded), Some(padded.clone().into_bytes()));
                }
                prop_assert!(reason.code() != "ineligible-tool");
            }
        }
    }

    #[test]
    fn exit_signal_reading_never_panics(
        text in "\\PC{0,60}(\n\nCommand (exited with code -?[0-9]{1,25}|timed out after [0-9.]{1,5} seconds|aborted))?\n{0,2}",
        code in prop::option::of(any::<i32>()),
        tool in select(vec!["bash", "edit", "write"]),
        marker in select(vec!["", "[then_run:succeeded]", "[then_run:failed]", "[then_run:skipped]"]),
        is_error in any::<bool>(),
    ) {
        let _ = bash_exit_signal(code, &text);
        let (log, status) = split_status_line(&text);
        prop_assert!(text.starts_with(log));
        if let Some(status) = status {
            prop_assert!(StatusLine::parse(status).is_some());
            prop_assert!(text.trim_end_matches(['\n', '\r']).ends_with(status));
        } else {
            prop_assert_eq!(log, text.as_str());
        }
        let input = json!({"command": "make", "then_run": {"command": "make"}});
        let content = [ContentBlock::text("Successfully wrote to a"), ContentBlock::text(format!("{marker}{text}"))];
        let view = ToolResultView {
            tool_name: tool, input: &input, content: &content, is_error, exit_code: code,
            ..ToolResultView::default()
        };
        let _ = select_candidate(&view);
    }

    #[test]
    fn the_secret_gate_never_panics(text in "\\PC{0,200}", extra in "[ -~\n]{0,200}") {
        let _ = find_likely_secret(&text);
        let _ = find_likely_secret(&format!("{text}{extra}"));
    }

    #[test]
    fn a_token_in_any_surrounding_text_is_caught(
        before in "[ -~\n]{0,80}",
        after in "[ -~\n]{0,80}",
        token in select(vec![
            "-----BEGIN RSA PRIVATE KEY-----",
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz",
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        ]),
    ) {
        let text = format!("{before}\n{token}\n{after}");
        prop_assert!(find_likely_secret(&text).is_some());
    }

    #[test]
    fn a_secret_anywhere_in_a_log_is_never_sent(
        lines in build_log(),
        secret in secret_line(),
        at in any::<prop::sample::Index>(),
        prefix in prop_oneof![Just(String::new()), "[ -~]{0,24} ", select(vec!["E       ", "[INFO] ", "stderr: ", "  ", "> "]).prop_map(str::to_owned)],
        is_error in any::<bool>(),
    ) {
        let mut lines = lines;
        let index = at.index(lines.len() + 1);
        lines.insert(index, format!("{prefix}{secret}"));
        let log = lines.join("\n");
        let text = if is_error { format!("{log}\n\nCommand exited with code 101") } else { log.clone() };
        let harness = Harness::new().replying("{}");
        let decision = harness.run(&bash("cargo test", &text, is_error));
        prop_assert_eq!(reason(&decision), "likely-secret");
        prop_assert!(harness.model.requests().is_empty(), "the model was asked");
        prop_assert!(harness.archive_is_empty(), "the log was archived");
        let record = harness.journal().pop().expect("a fallback record");
        prop_assert!(!record.to_string().contains(&secret), "the journal holds the secret");
    }

    #[test]
    fn lines_that_are_not_secrets_never_fire_anywhere_in_a_clean_log(
        lines in prop::collection::vec(select(fixture("cargo-test-failure").output.lines().map(str::to_owned).collect::<Vec<_>>()), 0..80),
        negatives in prop::collection::vec(select(secret_cases().into_iter().filter(|case| !case.caught).map(|case| case.line).collect::<Vec<_>>()), 1..12),
        positions in prop::collection::vec(any::<prop::sample::Index>(), 12),
    ) {
        let mut log = lines;
        for (negative, at) in negatives.into_iter().zip(positions) {
            let index = at.index(log.len() + 1);
            // The line after a bare password prompt is its echoed answer
            // (`password-after-prompt`): a prompt keeps what a terminal prints after it.
            if negative.to_ascii_lowercase().ends_with("password:") {
                log.insert(index, "Sorry, try again.".to_owned());
            }
            log.insert(index, negative);
        }
        let text = log.join("\n");
        prop_assert_eq!(find_likely_secret(&text), None, "{}", text);
    }

    #[test]
    fn trusted_paths_are_exactly_pi_bash_logs_in_the_temp_dir(
        dir in select(vec!["/tmp", "/tmp/", "/var/folders/x/T", "/tmp/sub", "/tmp/..", "tmp"]),
        name in prop_oneof!["pi-bash-[a-z0-9.]{0,6}\\.log(\\.bak)?", "[a-z0-9.-]{0,12}"],
    ) {
        let path = format!("{dir}/{name}");
        let trusted = is_trusted_full_output_path(Utf8Path::new(&path), Utf8Path::new("/tmp"));
        let expected = matches!(dir, "/tmp" | "/tmp/")
            && name.starts_with("pi-bash-")
            && name.ends_with(".log")
            && name.len() >= "pi-bash-.log".len();
        prop_assert_eq!(trusted, expected, "{}", path);
    }

    #[test]
    fn byte_formatting_never_ends_in_zero_tenths(bytes in any::<u64>()) {
        let text = format_bytes(bytes);
        prop_assert!(!text.contains(".0 "));
        prop_assert!(text.ends_with(" B") || text.ends_with(" KiB") || text.ends_with(" MiB"));
    }
}

#[test]
fn the_owned_result_view_is_faithful() {
    let result: OwnedResult = bash("make", "x", true);
    let view = result.view();
    assert_eq!(
        (view.tool_name, view.is_error, view.content.len()),
        ("bash", true, 1)
    );
}

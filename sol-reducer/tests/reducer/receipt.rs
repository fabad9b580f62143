//! Receipt validation, check by check.

use serde_json::{Value, json};
use sol_reducer::receipt::{EvidenceKind, ReceiptStatus, Rejection, validate_receipt};
use sol_reducer::{MAX_REPLY_BYTES, ReceiptCheck, VerifiedReceipt, sha256_hex};

use crate::support::{failing_log, passing_log};

struct Case {
    log: String,
    sha: String,
    is_error: bool,
}

impl Case {
    fn failing() -> Case {
        let log = failing_log(20);
        Case {
            sha: sha256_hex(log.as_bytes()),
            log,
            is_error: true,
        }
    }

    fn passing() -> Case {
        let log = passing_log(20);
        Case {
            sha: sha256_hex(log.as_bytes()),
            log,
            is_error: false,
        }
    }

    fn check(&self) -> ReceiptCheck<'_> {
        ReceiptCheck {
            log: &self.log,
            source_sha256: &self.sha,
            is_error: self.is_error,
        }
    }

    fn receipt(&self, evidence: Value) -> Value {
        json!({
            "schema": "sol-pi-evidence-receipt/1",
            "source_sha256": self.sha,
            "status": if self.is_error { "failure" } else { "success" },
            "uncertain": false,
            "evidence": evidence,
        })
    }

    fn good(&self) -> Value {
        if self.is_error {
            self.receipt(json!([
                {"kind": "failure", "quote": "test parser::rejects_empty_input ... FAILED"},
                {"kind": "summary", "quote": "test result: FAILED. 20 passed; 1 failed"},
            ]))
        } else {
            self.receipt(json!([{"kind": "summary", "quote": "test result: ok. 20 passed"}]))
        }
    }

    fn validate(&self, reply: &str) -> Result<VerifiedReceipt, Rejection> {
        validate_receipt(reply, &self.check())
    }

    fn reason(&self, reply: &Value) -> &'static str {
        self.validate(&reply.to_string())
            .expect_err("rejected")
            .reason
            .code()
    }
}

fn with(mut value: Value, key: &str, field: Value) -> Value {
    value[key] = field;
    value
}

#[test]
fn a_good_receipt_is_verified_with_lines_and_hashes() {
    let case = Case::failing();
    let receipt = case.validate(&case.good().to_string()).expect("verified");
    assert_eq!(receipt.status, ReceiptStatus::Failure);
    assert!(!receipt.uncertain);
    assert_eq!(receipt.evidence.len(), 2);
    let first = &receipt.evidence[0];
    assert_eq!(first.kind, EvidenceKind::Failure);
    assert_eq!(first.line, 22);
    assert_eq!(first.quote_sha256, sha256_hex(first.quote.as_bytes()));
    assert_eq!(receipt.evidence[1].line, 30);
}

#[test]
fn one_fenced_json_block_is_tolerated() {
    let case = Case::passing();
    let json = serde_json::to_string_pretty(&case.good()).expect("json");
    for reply in [
        format!("```json\n{json}\n```"),
        format!("```\n{json}\n```\n"),
        format!("  ```JSON\n{json}```  "),
        format!("\n{json}\n"),
    ] {
        assert!(case.validate(&reply).is_ok(), "{reply}");
    }
    for reply in [
        format!("Here is the receipt:\n```json\n{json}\n```"),
        format!("```json\n{json}\n```\nDone."),
        format!("```json\n{json}\n```\n```json\n{json}\n```"),
        format!("```python\n{json}\n```"),
        format!("```json\n{json}"),
    ] {
        assert_eq!(
            case.validate(&reply).expect_err("rejected").reason.code(),
            "invalid-json",
            "{reply}"
        );
    }
}

#[test]
fn non_json_and_oversize_replies_are_rejected() {
    let case = Case::passing();
    for reply in ["", "The tests passed.", "{\"schema\": ", "{} {}", "NaN"] {
        assert_eq!(
            case.validate(reply).expect_err("rejected").reason.code(),
            "invalid-json",
            "{reply:?}"
        );
    }
    let mut padded = case.good();
    padded["padding"] = json!("x".repeat(MAX_REPLY_BYTES));
    let rejection = case.validate(&padded.to_string()).expect_err("oversize");
    assert_eq!(rejection.reason.code(), "reply-too-large");
    // Just under the limit is parsed (and passes: unknown keys are ignored).
    let mut fits = case.good();
    let room = MAX_REPLY_BYTES - fits.to_string().len() - r#","padding":"""#.len();
    fits["padding"] = json!("x".repeat(room));
    assert_eq!(fits.to_string().len(), MAX_REPLY_BYTES);
    assert!(case.validate(&fits.to_string()).is_ok());
}

#[test]
fn the_schema_checks() {
    let case = Case::failing();
    let good = case.good();
    let cases = [
        json!([good.clone()]),
        json!("receipt"),
        json!(null),
        with(good.clone(), "schema", json!("sol-pi-evidence-receipt/2")),
        with(good.clone(), "schema", json!(null)),
        with(
            good.clone(),
            "source_sha256",
            json!(sha256_hex(b"another log")),
        ),
        with(
            good.clone(),
            "source_sha256",
            json!(case.sha.to_uppercase()),
        ),
        with(good.clone(), "status", json!("success")),
        with(good.clone(), "status", json!("FAILURE")),
        with(good.clone(), "uncertain", json!("false")),
        with(good.clone(), "uncertain", json!(null)),
        with(good.clone(), "evidence", json!({"kind": "failure"})),
        with(good.clone(), "evidence", json!(null)),
    ];
    for reply in cases {
        assert_eq!(case.reason(&reply), "schema-mismatch", "{reply}");
    }
    let mut missing = good.clone();
    missing.as_object_mut().expect("object").remove("uncertain");
    assert_eq!(case.reason(&missing), "schema-mismatch");
}

#[test]
fn at_most_twelve_items() {
    let case = Case::passing();
    let item = json!({"kind": "summary", "quote": "test result: ok. 20 passed"});
    let twelve = case.receipt(Value::Array(vec![item.clone(); 12]));
    let receipt = case.validate(&twelve.to_string()).expect("twelve is fine");
    // Duplicates are dropped silently.
    assert_eq!(receipt.evidence.len(), 1);
    let thirteen = case.receipt(Value::Array(vec![item; 13]));
    assert_eq!(case.reason(&thirteen), "schema-mismatch");
}

#[test]
fn every_item_needs_a_known_kind_and_a_verbatim_quote() {
    let case = Case::passing();
    let bad_items = [
        json!({"kind": "info", "quote": "running 21 tests"}),
        json!({"kind": "Summary", "quote": "running 21 tests"}),
        json!({"quote": "running 21 tests"}),
        json!({"kind": "summary", "quote": 3}),
        json!({"kind": "summary"}),
        json!({"kind": "summary", "quote": ""}),
        json!("running 21 tests"),
        json!({"kind": "summary", "quote": "running 22 tests"}),
    ];
    for item in bad_items {
        let reply = case.receipt(json!([item]));
        assert_eq!(case.reason(&reply), "unverifiable-quote", "{item}");
    }
}

#[test]
fn quotes_are_matched_byte_for_byte() {
    let case = Case::passing();
    let variants = [
        "test result:  ok. 20 passed",
        "test result: ok.  20 passed",
        "TEST RESULT: OK. 20 PASSED",
        "test result: ok. 20 passed; 0 failed;  0 ignored",
        " test module_000::behaves ... ok",
        "test module_000::behaves ... ok\r\ntest module_001::behaves ... ok",
        "test module_000::behaves ... ok \ntest module_001::behaves ... ok",
        "test module_000::behaves … ok",
        "test result: ok. 20 passed\u{200b}",
    ];
    for quote in variants {
        let reply = case.receipt(json!([{"kind": "summary", "quote": quote}]));
        assert_eq!(case.reason(&reply), "unverifiable-quote", "{quote:?}");
    }
    let exact = "test module_000::behaves ... ok\ntest module_001::behaves ... ok";
    let reply = case.receipt(json!([{"kind": "target", "quote": exact}]));
    let receipt = case
        .validate(&reply.to_string())
        .expect("a multi-line quote");
    assert_eq!(receipt.evidence[0].line, 2);
}

#[test]
fn quotes_are_at_most_600_utf16_units() {
    let long_line = "é".repeat(600);
    let emoji_line = "😀".repeat(300);
    let log = format!("{}\n{long_line}x\n{emoji_line}😀\n", passing_log(5));
    let sha = sha256_hex(log.as_bytes());
    let check = ReceiptCheck {
        log: &log,
        source_sha256: &sha,
        is_error: false,
    };
    let reply = |quote: &str| {
        json!({
            "schema": "sol-pi-evidence-receipt/1", "source_sha256": sha, "status": "success",
            "uncertain": true, "evidence": [{"kind": "target", "quote": quote}],
        })
        .to_string()
    };
    assert!(validate_receipt(&reply(&long_line), &check).is_ok());
    assert!(validate_receipt(&reply(&emoji_line), &check).is_ok());
    for too_long in [format!("{long_line}x"), format!("{emoji_line}😀")] {
        let rejection = validate_receipt(&reply(&too_long), &check).expect_err("too long");
        assert_eq!(rejection.reason.code(), "unverifiable-quote");
        assert!(rejection.detail.contains("600"), "{}", rejection.detail);
    }
}

#[test]
fn a_failing_log_needs_a_quoted_failure() {
    let case = Case::failing();
    let only_summary = case.receipt(json!([
        {"kind": "summary", "quote": "test result: FAILED. 20 passed; 1 failed"},
    ]));
    assert_eq!(case.reason(&only_summary), "missing-failure-evidence");
    let failure_without_signal = case.receipt(json!([
        {"kind": "failure", "quote": "test parser::rejects_empty_input"},
    ]));
    assert_eq!(
        case.reason(&failure_without_signal),
        "missing-failure-evidence"
    );
    let none = case.receipt(json!([]));
    assert_eq!(case.reason(&none), "missing-failure-evidence");
    // The assertion alone does not say which test failed.
    let fatal =
        case.receipt(json!([{"kind": "fatal", "quote": "assertion failed: tokens.is_empty()"}]));
    assert_eq!(case.reason(&fatal), "missing-failure-evidence");
    let named = case.receipt(json!([
        {"kind": "failure", "quote": "thread 'parser::rejects_empty_input' panicked at src/parser.rs:41:9:"},
        {"kind": "fatal", "quote": "assertion failed: tokens.is_empty()"},
    ]));
    assert!(case.validate(&named.to_string()).is_ok());
}

#[test]
fn a_failing_log_without_failure_words_needs_no_failure_quote() {
    let log = "step 1 ... done\n".repeat(300);
    let sha = sha256_hex(log.as_bytes());
    let check = ReceiptCheck {
        log: &log,
        source_sha256: &sha,
        is_error: true,
    };
    let reply = json!({
        "schema": "sol-pi-evidence-receipt/1", "source_sha256": sha, "status": "failure",
        "uncertain": true, "evidence": [],
    });
    let receipt = validate_receipt(&reply.to_string(), &check).expect("accepted");
    assert!(receipt.uncertain && receipt.evidence.is_empty());
}

#[test]
fn a_passing_log_needs_no_failure_quote_and_may_quote_nothing() {
    let case = Case::passing();
    let receipt = case
        .validate(&case.receipt(json!([])).to_string())
        .expect("accepted");
    assert_eq!(receipt.status, ReceiptStatus::Success);
}

#[test]
fn duplicates_are_dropped_but_the_same_quote_may_have_two_kinds() {
    let case = Case::failing();
    let reply = case.receipt(json!([
        {"kind": "failure", "quote": "test parser::rejects_empty_input ... FAILED"},
        {"kind": "failure", "quote": "test parser::rejects_empty_input ... FAILED"},
        {"kind": "target", "quote": "test parser::rejects_empty_input ... FAILED"},
    ]));
    let receipt = case.validate(&reply.to_string()).expect("verified");
    let kinds: Vec<&str> = receipt
        .evidence
        .iter()
        .map(|item| item.kind.as_str())
        .collect();
    assert_eq!(kinds, ["failure", "target"]);
}

#[test]
fn evidence_kinds_round_trip() {
    for kind in EvidenceKind::ALL {
        assert_eq!(EvidenceKind::parse(kind.as_str()), Some(kind));
    }
    assert_eq!(EvidenceKind::parse("error"), None);
}

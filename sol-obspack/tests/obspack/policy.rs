//! The constants and the send decision.

use sol_obspack::policy::{
    CHARS_PER_TOKEN, RECALL_CHUNK_MAX_BYTES, RECALL_CHUNK_MAX_LINES, SEARCH_CONTEXT_BYTES,
};
use sol_obspack::{
    EXCERPT_HEAD_BYTES, EXCERPT_TAIL_BYTES, FULL_SENDS, QUERY_MAX_BYTES, QUERY_MAX_MATCHES,
    RECALL_HEADER_RESERVE_BYTES, RECALL_HEADER_RESERVE_LINES, RECALL_MAX_BYTES, RECALL_MAX_LINES,
    RECEIPT_MARKER_LINE, SendDecision, THRESHOLD_BYTES, decide,
};

#[test]
fn the_constants_have_their_specified_values() {
    assert_eq!(THRESHOLD_BYTES, 10_240);
    assert_eq!(FULL_SENDS, 2);
    assert_eq!((EXCERPT_HEAD_BYTES, EXCERPT_TAIL_BYTES), (512, 512));
    assert_eq!((RECALL_MAX_BYTES, RECALL_MAX_LINES), (16_384, 400));
    assert_eq!(
        (RECALL_HEADER_RESERVE_BYTES, RECALL_HEADER_RESERVE_LINES),
        (512, 2)
    );
    assert_eq!(
        (RECALL_CHUNK_MAX_BYTES, RECALL_CHUNK_MAX_LINES),
        (15_872, 398)
    );
    assert_eq!((QUERY_MAX_BYTES, QUERY_MAX_MATCHES), (256, 20));
    assert_eq!(SEARCH_CONTEXT_BYTES, 80);
    assert_eq!(CHARS_PER_TOKEN, 4);
    assert_eq!(RECEIPT_MARKER_LINE, "sol_pi_evidence_receipt_v1");
}

#[test]
fn two_full_sends_then_one_first_replacement_then_replacements() {
    assert_eq!(decide(0), SendDecision::Full { send_number: 1 });
    assert_eq!(decide(1), SendDecision::Full { send_number: 2 });
    assert_eq!(
        decide(2),
        SendDecision::Replace {
            first_replacement: true
        }
    );
    for prior in [3, 4, 100, u32::MAX] {
        assert_eq!(
            decide(prior),
            SendDecision::Replace {
                first_replacement: false
            }
        );
    }
}

#[test]
fn a_branch_decides_from_its_own_history() {
    // Branch A ran three requests after the result; its sibling B, forked right after the
    // tool result, ran one. The host counts per branch, so B still sends the result in full.
    let after_a = 3;
    let after_b = 1;
    assert!(matches!(decide(after_a), SendDecision::Replace { .. }));
    assert_eq!(decide(after_b), SendDecision::Full { send_number: 2 });
}

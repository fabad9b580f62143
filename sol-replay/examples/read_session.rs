//! Reads a small Pi session file held in memory (a fork made with `/tree`, a tool call, a
//! compaction, a SoL-Pi entry and a last line a crashed writer left torn) and prints what
//! the reader kept: the header, each branch root first, and the warning.

// A program that prints its results.
#![allow(clippy::print_stdout)]

use sol_replay::reader::{EntryKind, Session, read_session};

const FILE: &str = concat!(
    r#"{"type":"session","version":3,"id":"019d0b4e-demo","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/work/demo"}"#,
    "\n",
    r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-03-02T09:00:01.000Z","message":{"role":"user","content":"Why does the test fail?","timestamp":1772442001000}}"#,
    "\n",
    r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-03-02T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call-1","name":"bash","arguments":{"command":"cargo test"}}],"stopReason":"toolUse","usage":{"input":12,"output":30,"cacheRead":0,"cacheWrite":900},"timestamp":1772442002000}}"#,
    "\n",
    r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-03-02T09:00:03.000Z","message":{"role":"toolResult","toolCallId":"call-1","toolName":"bash","content":[{"type":"text","text":"test parse ... FAILED\nexpected 3, got 4"}],"isError":true,"timestamp":1772442003000}}"#,
    "\n",
    r#"{"type":"custom","id":"a4","parentId":"a3","timestamp":"2026-03-02T09:00:03.500Z","customType":"sol-pi-savings-totals","data":{"version":1}}"#,
    "\n",
    r#"{"type":"branch_summary","id":"b1","parentId":"a2","timestamp":"2026-03-02T09:00:04.000Z","fromId":"a4","summary":"Ran the tests once."}"#,
    "\n",
    r###"{"type":"compaction","id":"c1","parentId":"b1","timestamp":"2026-03-02T09:00:05.000Z","summary":"## Goal\nFix the parse test.","firstKeptEntryId":"b1","tokensBefore":1200}"###,
    "\n",
    r#"{"type":"message","id":"c2","parentId":"c1","timestamp":"2026-03-02T09:00:0"#,
);

fn main() {
    let session = read_session("demo.jsonl", FILE.as_bytes()).expect("a Pi session");
    let header = session.header();
    println!(
        "{}: session {} (format version {}) in {}",
        session.file(),
        header.id,
        header.version,
        header.cwd.as_deref().unwrap_or("?")
    );
    println!(
        "{} entries on {} lines, {} bytes",
        session.entries().len(),
        session.lines(),
        session.bytes()
    );
    for (n, leaf) in session.leaves().enumerate() {
        let active = if Some(leaf) == session.leaf() {
            " (active)"
        } else {
            ""
        };
        println!("branch {}{active}:", n + 1);
        for entry in session.branch(leaf) {
            println!(
                "  line {}: {} {}",
                entry.line(),
                entry.id(),
                describe(&session, entry.kind())
            );
        }
    }
    for warning in session.warnings() {
        println!("warning: {warning}");
    }
}

fn describe(session: &Session, kind: &EntryKind) -> String {
    match kind {
        EntryKind::Message(message) => {
            let mut text = format!("{} message, {} tokens", message.role.name(), message.tokens);
            for call in message.tool_calls() {
                text.push_str(&format!(", calls {} ({})", call.name, call.id));
            }
            if let Some(result) = &message.tool_result {
                text.push_str(&format!(
                    ", {} result of {} bytes, digest {}{}",
                    result.tool_name,
                    result.text_bytes,
                    result.digest,
                    if result.is_error { ", an error" } else { "" }
                ));
            }
            text
        }
        EntryKind::Compaction(compaction) => {
            let kept = compaction.first_kept_entry_id.as_deref().unwrap_or("?");
            let kept_line = session
                .index_of(kept)
                .map_or(0, |index| session.entry(index).line());
            format!(
                "compaction, summary {} tokens, keeps from {kept} (line {kept_line})",
                compaction.summary_tokens
            )
        }
        EntryKind::BranchSummary { tokens, .. } => format!("branch summary, {tokens} tokens"),
        EntryKind::Custom { custom_type, data } => {
            format!("custom {custom_type}, data kept: {}", data.is_some())
        }
        other => other.entry_type().to_owned(),
    }
}

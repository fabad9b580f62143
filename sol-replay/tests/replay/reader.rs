//! The reader on real session files of every Pi of the matrix, on broken variants of them,
//! and every error and warning text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, BufRead, Read};

use serde_json::Value;
use sol_core::message::AgentMessage;
use sol_core::session::SessionEntry;
use sol_replay::reader::{
    ContentDigest, EntryKind, ReadError, ReadErrorKind, ReadLimits, ReadWarning, Role, Session,
    read_session, read_session_limited, read_session_with_progress,
};

use crate::support::{RECORDINGS, fixture_bytes, read_fixture};

/// The file's lines parsed independently of the reader (the header first).
fn json_lines(name: &str) -> Vec<Value> {
    let bytes = fixture_bytes(name);
    let text = String::from_utf8(bytes).expect("UTF-8");
    text.lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect()
}

/// The active branch by Pi's rule, walked independently: from the last entry up its
/// `parentId` links, root first.
fn pi_branch(entries: &[Value]) -> Vec<String> {
    let by_id: BTreeMap<&str, &Value> = entries
        .iter()
        .map(|entry| (entry["id"].as_str().expect("id"), entry))
        .collect();
    let mut path = Vec::new();
    let mut next = entries.last();
    while let Some(entry) = next {
        path.push(entry["id"].as_str().expect("id").to_owned());
        next = entry["parentId"].as_str().map(|parent| by_id[parent]);
    }
    path.reverse();
    path
}

fn ids(branch: &[&sol_replay::reader::Entry]) -> Vec<String> {
    branch.iter().map(|entry| entry.id().to_owned()).collect()
}

#[test]
fn every_recording_reads_with_its_entries_branches_and_the_same_estimates() {
    for name in RECORDINGS {
        let session = read_fixture(name).unwrap_or_else(|error| panic!("{error}"));
        let lines = json_lines(name);
        let (header, entries) = lines.split_first().expect("header");
        assert_eq!(session.header().version, 3, "{name}");
        assert_eq!(Some(session.header().id.as_str()), header["id"].as_str());
        assert_eq!(session.header().cwd.as_deref(), header["cwd"].as_str());
        assert!(session.warnings().is_empty(), "{name}");
        assert_eq!(session.entries().len(), entries.len(), "{name}");
        assert_eq!(session.lines(), lines.len() as u64);

        // The active branch is Pi's: from the last line's entry up.
        assert_eq!(ids(&session.active_branch()), pi_branch(entries), "{name}");
        // The /tree navigation left one abandoned branch: two leaves, the active one last.
        let branches: Vec<_> = session.branches().collect();
        assert_eq!(branches.len(), 2, "{name}");
        assert_eq!(ids(&branches[1]), pi_branch(entries));
        let fork = session
            .entries()
            .iter()
            .find(|entry| entry.entry_type() == "branch_summary")
            .expect("a branch summary");
        let fork_parent = session
            .entry(fork.parent().expect("parent"))
            .id()
            .to_owned();
        assert!(ids(&branches[0]).contains(&fork_parent), "{name}");
        assert!(!ids(&branches[0]).contains(&fork.id().to_owned()), "{name}");

        // Every entry's facts against the same line read by sol-core's own types.
        for (entry, value) in session.entries().iter().zip(entries) {
            assert_eq!(Some(entry.id()), value["id"].as_str());
            assert_eq!(Some(entry.entry_type()), value["type"].as_str());
            let typed = SessionEntry::from_value(value.clone());
            if let Some(header) = typed.header() {
                assert_eq!(entry.timestamp_ms(), header.epoch_ms());
            }
            match (entry.kind(), &typed) {
                (EntryKind::Message(facts), SessionEntry::Message(message)) => {
                    assert_eq!(facts.tokens, message.message.estimated_tokens());
                    assert_eq!(Some(facts.role.name()), message.message.role());
                    if let AgentMessage::Assistant(assistant) = &message.message {
                        let calls: Vec<(&str, &str)> = assistant
                            .tool_calls()
                            .map(|(id, name, _)| (id.as_str(), name))
                            .collect();
                        let kept: Vec<(&str, &str)> = facts
                            .tool_calls()
                            .iter()
                            .map(|call| (&*call.id, &*call.name))
                            .collect();
                        assert_eq!(kept, calls);
                        let kept = facts.assistant.as_ref().expect("assistant facts");
                        assert_eq!(
                            kept.stop_reason.as_deref(),
                            assistant.stop_reason.as_deref()
                        );
                        let usage = &message.message.to_value()["usage"];
                        let reported = kept.usage.expect("usage");
                        assert_eq!(Some(reported.output), usage["output"].as_u64());
                        assert_eq!(Some(reported.cache_write), usage["cacheWrite"].as_u64());
                    }
                    if let Some(result) = message.message.as_tool_result() {
                        let facts = facts.tool_result.as_ref().expect("tool result facts");
                        assert_eq!(facts.text_bytes, result.text_len_bytes() as u64);
                        let text = result.text_only().expect("text only");
                        assert_eq!(facts.digest, ContentDigest::of_texts([text.as_str()]));
                        assert_eq!(&*facts.tool_call_id, result.tool_call_id.as_str());
                        assert_eq!(&*facts.tool_name, result.tool_name.as_str());
                        assert_eq!(facts.is_error, result.is_error);
                    }
                }
                (EntryKind::Compaction(facts), SessionEntry::Compaction(compaction)) => {
                    assert_eq!(
                        facts.summary_tokens,
                        compaction.summary_message().estimated_tokens()
                    );
                    let kept = facts.first_kept_entry_id.as_deref().expect("first kept");
                    let kept = session.index_of(kept).expect("kept entry in the file");
                    assert!(
                        ids(&session.active_branch())
                            .contains(&session.entry(kept).id().to_owned())
                    );
                }
                (EntryKind::Custom { custom_type, data }, SessionEntry::Custom(custom)) => {
                    assert_eq!(&**custom_type, custom.custom_type.as_str());
                    assert_eq!(custom_type.starts_with("sol-pi-"), data.is_some());
                    if let Some(data) = data {
                        assert_eq!(Some(&**data), custom.data.as_ref());
                    }
                }
                (kind, typed) => {
                    let expected = typed.context_message().map_or(0, |m| m.estimated_tokens());
                    assert_eq!(entry.context_tokens(), expected, "{name} {kind:?}");
                }
            }
        }
        let sol_pi = session
            .entries()
            .iter()
            .filter(|entry| matches!(entry.kind(), EntryKind::Custom { custom_type, .. } if &**custom_type == "sol-pi-savings-totals"))
            .count();
        assert!(sol_pi >= 5, "{name}: SoL-Pi wrote its totals each turn");
    }
}

#[test]
fn the_recordings_hold_every_entry_kind_their_pi_writes() {
    for name in RECORDINGS {
        let session = read_fixture(name).expect("session");
        let mut kinds: Vec<&str> = session
            .entries()
            .iter()
            .map(|entry| entry.entry_type())
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        let mut expected = vec![
            "branch_summary",
            "compaction",
            "custom",
            "custom_message",
            "label",
            "message",
            "model_change",
            "session_info",
            "thinking_level_change",
        ];
        if name != "pi-0.84.2.jsonl" {
            expected.push("context_edit");
            expected.sort_unstable();
        }
        assert_eq!(kinds, expected, "{name}");
        let roles: Vec<&str> = session
            .entries()
            .iter()
            .filter_map(|entry| entry.message().map(|message| message.role.name()))
            .collect();
        for role in ["user", "assistant", "toolResult"] {
            assert!(roles.contains(&role), "{name}: {role}");
        }
        // Pi 1.x writes its system prompt into the session as a message; 0.84.2 does not.
        assert_eq!(
            roles.contains(&"system"),
            name != "pi-0.84.2.jsonl",
            "{name}"
        );
    }
}

/// One line per entry: what the reader kept, for the snapshots of two recordings.
fn outline(session: &Session) -> String {
    let mut text = String::new();
    let header = session.header();
    writeln!(
        text,
        "header: version {}, parentSession {:?}",
        header.version, header.parent_session
    )
    .ok();
    let active = ids(&session.active_branch());
    for entry in session.entries() {
        let parent = entry.parent().map_or("-".to_owned(), |parent| {
            session.entry(parent).line().to_string()
        });
        let mark = if active.contains(&entry.id().to_owned()) {
            '*'
        } else {
            ' '
        };
        let facts = match entry.kind() {
            EntryKind::Message(message) => {
                let mut facts = format!("{} {} tokens", message.role.name(), message.tokens);
                for call in message.tool_calls() {
                    write!(facts, ", calls {} {}", call.name, call.id).ok();
                }
                if let Some(result) = &message.tool_result {
                    write!(
                        facts,
                        ", result of {} {}: {} bytes",
                        result.tool_name, result.tool_call_id, result.text_bytes
                    )
                    .ok();
                }
                facts
            }
            EntryKind::Compaction(compaction) => {
                let kept = compaction
                    .first_kept_entry_id
                    .as_deref()
                    .and_then(|id| session.index_of(id));
                let kept = kept.map_or("?".to_owned(), |index| {
                    session.entry(index).line().to_string()
                });
                format!(
                    "summary {} tokens, keeps from line {kept}",
                    compaction.summary_tokens
                )
            }
            EntryKind::Custom { custom_type, data } => {
                format!("{custom_type}, data kept: {}", data.is_some())
            }
            EntryKind::ContextEdit {
                target_id,
                replacement_tokens,
            } => {
                let target = target_id.as_deref().and_then(|id| session.index_of(id));
                let target = target.map_or("?".to_owned(), |index| {
                    session.entry(index).line().to_string()
                });
                format!("edits line {target}, replacement {replacement_tokens:?} tokens")
            }
            _ => format!("{} context tokens", entry.context_tokens()),
        };
        writeln!(
            text,
            "{mark} line {:>2} (parent {parent:>2}) {}: {facts}",
            entry.line(),
            entry.entry_type()
        )
        .ok();
    }
    let leaves: Vec<String> = session
        .leaves()
        .map(|leaf| session.entry(leaf).line().to_string())
        .collect();
    writeln!(text, "leaves on lines {}", leaves.join(", ")).ok();
    text
}

#[test]
fn outline_of_the_recordings_of_pi_0_84_2_and_1_6_0() {
    assert_text_snapshot!(
        "reader_outline_pi_0_84_2",
        outline(&read_fixture("pi-0.84.2.jsonl").expect("session"))
    );
    assert_text_snapshot!(
        "reader_outline_pi_1_6_0",
        outline(&read_fixture("pi-1.6.0.jsonl").expect("session"))
    );
}

#[test]
fn a_version_2_file_reads_its_hook_message_as_a_custom_message() {
    let session = read_fixture("version-2.jsonl").expect("version 2 reads");
    assert_eq!(session.header().version, 2);
    let hook = session
        .entries()
        .iter()
        .filter_map(|entry| entry.message())
        .find(|message| message.role == Role::Custom)
        .expect("the hookMessage, as custom");
    let expected = AgentMessage::from_value(serde_json::json!({
        "role": "custom", "content": "A note an extension put into the context."
    }));
    assert_eq!(hook.tokens, expected.estimated_tokens());
    assert!(hook.tokens > 0);
}

/// A session file of format 1 or 2 and the same file as Pi migrates it to format 3 (written by
/// the real Pi's `migrateSessionEntries`, `fixtures/sessions/reader/migrate.mjs`): the reader
/// reads both to the same entries, ids, parents and branches.
#[test]
fn formats_1_and_2_read_as_pi_migrates_them_to_3() {
    for (name, version) in [("format-1", 1), ("format-2", 2)] {
        let old = read_fixture(&format!("{name}.jsonl")).expect("an old format reads");
        let migrated = read_fixture(&format!("{name}-migrated.jsonl")).expect("format 3");
        assert_eq!(old.header().version, version, "{name}");
        assert_eq!(migrated.header().version, 3, "{name}");
        assert_eq!(old.header().id, migrated.header().id);
        assert!(old.warnings().is_empty(), "{name}");
        assert_eq!(old.entries(), migrated.entries(), "{name}");
        assert_eq!(old.active_branch(), migrated.active_branch(), "{name}");
    }
}

#[test]
fn a_format_1_file_is_one_linear_branch_with_numbered_ids() {
    let session = read_fixture("format-1.jsonl").expect("format 1 reads");
    let lines = json_lines("format-1.jsonl");
    assert_eq!(session.entries().len(), lines.len() - 1);
    // One leaf; every entry is its predecessor's child.
    assert_eq!(session.leaves().count(), 1);
    assert_eq!(session.active_branch().len(), session.entries().len());
    for (i, entry) in session.entries().iter().enumerate() {
        assert_eq!(entry.id(), format!("{:08x}", i + 1));
        assert_eq!(entry.parent().map(|parent| parent.get()), i.checked_sub(1));
        assert_eq!(Some(entry.entry_type()), lines[i + 1]["type"].as_str());
    }
    // The compaction's firstKeptEntryIndex 7 (the header is 0) names the 7th entry.
    let compaction = session
        .entries()
        .iter()
        .find_map(|entry| match entry.kind() {
            EntryKind::Compaction(facts) => Some(facts),
            _ => None,
        })
        .expect("a compaction");
    assert_eq!(compaction.first_kept_entry_id.as_deref(), Some("00000007"));
    assert_eq!(lines[7]["message"]["content"][0]["text"], "Count its lines");
    // Every reply's usage, as written.
    let reported: Vec<_> = session
        .entries()
        .iter()
        .filter_map(|entry| entry.message()?.assistant.as_ref()?.usage)
        .map(|usage| {
            (
                usage.input,
                usage.output,
                usage.cache_read,
                usage.cache_write,
            )
        })
        .collect();
    let expected: Vec<_> = lines
        .iter()
        .filter(|line| line["message"]["role"] == "assistant")
        .map(|line| {
            let usage = &line["message"]["usage"];
            let n = |key: &str| usage[key].as_u64().expect("a count");
            (n("input"), n("output"), n("cacheRead"), n("cacheWrite"))
        })
        .collect();
    assert_eq!(reported.len(), 5);
    assert_eq!(reported, expected);
}

/// `pi-1.6.0.jsonl` with no header version: Pi reads it as format 1, so it gives every entry a
/// new id and a linear chain (the fork of the recording is gone), and so does the reader.
#[test]
fn a_format_3_file_without_its_version_is_read_as_format_1() {
    let session = read_fixture("version-1.jsonl").expect("reads as format 1");
    let recorded = read_fixture("pi-1.6.0.jsonl").expect("session");
    assert_eq!(session.header().version, 1);
    assert_eq!(session.entries().len(), recorded.entries().len());
    assert_eq!(recorded.leaves().count(), 2);
    assert_eq!(session.leaves().count(), 1);
    assert_eq!(session.active_branch().len(), session.entries().len());
    for (i, (entry, recorded)) in session.entries().iter().zip(recorded.entries()).enumerate() {
        assert_eq!(entry.id(), format!("{:08x}", i + 1));
        assert_ne!(entry.id(), recorded.id());
        assert_eq!(entry.kind(), recorded.kind());
        assert_eq!(entry.line(), recorded.line());
    }
}

/// The error of a fixture that must not read, as its text.
fn error_text(name: &str) -> (u64, ReadErrorKind, String) {
    match read_fixture(name) {
        Ok(_) => panic!("{name} read"),
        Err(error) => (error.line, error.kind.clone(), error.to_string()),
    }
}

#[test]
fn every_broken_fixture_is_named_with_its_line() {
    let cases = [
        ("empty.jsonl", 1, "empty"),
        ("foreign.json", 1, "foreign_json"),
        ("foreign-events.jsonl", 1, "foreign_events"),
        ("unknown-version.jsonl", 1, "unknown_version"),
        ("missing-id.jsonl", 12, "missing_id"),
        ("duplicate-id.jsonl", 13, "duplicate_id"),
        ("missing-parent.jsonl", 8, "missing_parent"),
    ];
    for (name, line, snapshot) in cases {
        let (at, kind, text) = error_text(name);
        assert_eq!(at, line, "{name}: {text}");
        match (snapshot, &kind) {
            ("empty", ReadErrorKind::Empty)
            | ("foreign_json" | "foreign_events", ReadErrorKind::NotASession { .. })
            | ("unknown_version", ReadErrorKind::UnknownVersion { .. })
            | ("missing_id", ReadErrorKind::MissingId { .. })
            | ("duplicate_id", ReadErrorKind::DuplicateId { .. })
            | ("missing_parent", ReadErrorKind::MissingParent { .. }) => {}
            _ => panic!("{name}: unexpected {kind:?}"),
        }
        assert_text_snapshot!(format!("reader_error_{snapshot}"), text);
    }
}

#[test]
fn a_torn_last_line_is_a_warning_and_the_lines_before_it_are_read() {
    let session = read_fixture("torn-last.jsonl").expect("a torn last line still reads");
    let whole = read_fixture("pi-1.6.0.jsonl").expect("session");
    // The same entries but the last whole line's, whose child was the torn line.
    let kept = whole.entries().len() - 1;
    assert!(session.entries()[..kept - 1] == whole.entries()[..kept - 1]);
    assert_eq!(
        session.entries()[kept - 1].id(),
        whole.entries()[kept - 1].id()
    );
    assert!(!session.entries()[kept - 1].has_children());
    assert_eq!(session.entries().len(), kept);
    let [ReadWarning::TornLastLine { line, entries, .. }] = session.warnings() else {
        panic!("one torn-line warning: {:?}", session.warnings());
    };
    assert_eq!(
        (*line, *entries),
        (whole.lines(), whole.entries().len() - 1)
    );
    assert_text_snapshot!(
        "reader_warning_torn_last_line",
        session.warnings()[0].to_string()
    );
}

/// The entries of a file, each as its id and its parent's id.
fn links(session: &Session) -> Vec<(String, Option<String>)> {
    session
        .entries()
        .iter()
        .map(|entry| {
            let parent = entry.parent().map(|p| session.entry(p).id().to_owned());
            (entry.id().to_owned(), parent)
        })
        .collect()
}

#[test]
fn a_session_torn_by_a_crash_and_resumed_by_pi_reads_with_one_warning() {
    // Recorded by record-torn.mjs: the session of surrogate-<v>.jsonl, its last line cut in
    // half, then opened again by the same Pi and continued.
    for (version, torn_line, then_entry) in [("1.6.0", 13, false), ("0.84.2", 12, true)] {
        let before = read_fixture(&format!("surrogate-{version}.jsonl")).expect("session");
        let name = format!("torn-resumed-{version}.jsonl");
        let session = read_fixture(&name).unwrap_or_else(|error| panic!("{name}: {error}"));
        let [
            ReadWarning::TornLine {
                line,
                then_entry: appended,
                adopted,
                ..
            },
        ] = session.warnings()
        else {
            panic!("{name}: one torn-line warning: {:?}", session.warnings());
        };
        assert_eq!(
            (*line, *appended, *adopted),
            (torn_line, then_entry, 0),
            "{name}"
        );
        // Every entry before the torn one is read as it was, and the torn one is left out.
        let kept = before.entries().len() - 1;
        assert_eq!(links(&session)[..kept], links(&before)[..kept], "{name}");
        assert!(session.index_of(before.entries()[kept].id()).is_none());
        // What Pi appended when it resumed hangs from the last entry it could read, which is
        // where Pi went on from, and the active branch runs from the root through it.
        let resumed = &session.entries()[kept];
        assert_eq!(
            resumed.parent().map(|p| session.entry(p).id()),
            Some(before.entries()[kept - 1].id()),
            "{name}"
        );
        assert!(resumed.message().is_some_and(|m| m.role == Role::User));
        let branch = ids(&session.active_branch());
        assert_eq!(branch[0], before.entries()[0].id());
        assert!(branch.iter().any(|id| id == resumed.id()));
        assert!(session.entries().len() > kept + 3, "{name}");
    }
    let session = read_fixture("torn-resumed-0.84.2.jsonl").expect("session");
    assert_text_snapshot!(
        "reader_warning_torn_then_entry",
        session.warnings()[0].to_string()
    );
}

#[test]
fn a_torn_line_whose_entry_had_children_hangs_them_from_its_parent() {
    // Line 10 cut in half, the lines after it whole: its child on line 11 hangs from line
    // 10's parent, where Pi would start the branch at that child.
    let session = read_fixture("broken-middle.jsonl").expect("a torn middle line still reads");
    let whole = read_fixture("pi-1.6.0.jsonl").expect("session");
    let [
        ReadWarning::TornLine {
            line: 10,
            adopted: 1,
            lost_id: Some(lost),
            ..
        },
    ] = session.warnings()
    else {
        panic!("one torn-line warning: {:?}", session.warnings());
    };
    let lost_index = whole.index_of(lost).expect("the lost entry").get();
    assert_eq!(session.entries().len(), whole.entries().len() - 1);
    let mut expected = links(&whole);
    let (_, lost_parent) = expected.remove(lost_index);
    for (_, parent) in &mut expected {
        if parent.as_deref() == Some(lost.as_str()) {
            parent.clone_from(&lost_parent);
        }
    }
    assert_eq!(links(&session), expected);
    assert_text_snapshot!(
        "reader_warning_torn_middle_line",
        session.warnings()[0].to_string()
    );
}

#[test]
fn a_lone_surrogate_escape_pi_wrote_reads_as_the_replacement_character() {
    for version in ["1.6.0", "0.84.2"] {
        let name = format!("surrogate-{version}.jsonl");
        let session = read_fixture(&name).unwrap_or_else(|error| panic!("{name}: {error}"));
        assert!(session.warnings().is_empty());
        let lines = String::from_utf8(fixture_bytes(&name)).expect("UTF-8");
        let probe_line = lines
            .lines()
            .find(|line| line.contains(r#""toolName":"probe""#))
            .expect("the probe's result");
        assert!(probe_line.contains(r"\ud800") && probe_line.contains(r"\udc00"));
        let result = session
            .entries()
            .iter()
            .filter_map(|entry| entry.message())
            .find(|message| {
                message
                    .tool_result
                    .as_deref()
                    .is_some_and(|result| &*result.tool_name == "probe")
            })
            .expect("the probe's result, read");
        // The text as Rust holds it: each lone surrogate one U+FFFD, the pair kept.
        let text = "status of the probe\nbad byte: \u{FFFD} end\nlow half alone: \u{FFFD}, a pair: \u{1F600}\n";
        let facts = result.tool_result.as_deref().expect("facts");
        assert_eq!(facts.text_bytes, text.len() as u64);
        assert_eq!(facts.digest, ContentDigest::of_texts([text]));
        // Pi counts UTF-16 code units: a lone surrogate is one, as U+FFFD is.
        let estimate = AgentMessage::from_value(serde_json::json!({
            "role": "toolResult", "toolCallId": "call-probe", "toolName": "probe",
            "content": [{"type": "text", "text": text}], "isError": false,
        }));
        assert_eq!(result.tokens, estimate.estimated_tokens());
    }
}

#[test]
fn a_line_or_a_file_over_the_limits_is_an_error_naming_the_limit() {
    let limits = ReadLimits {
        max_line_bytes: 100,
        max_file_bytes: 1_000,
    };
    let entry = |id: usize| format!(r#"{{"type":"label","id":"e{id}","parentId":null}}"#);
    // A line of exactly the limit reads.
    let mut exact = entry(0);
    exact.push_str(&" ".repeat(100 - exact.len()));
    let text = format!("{HEADER}\n{exact}\n");
    let session = read_session_limited("l.jsonl", text.as_bytes(), limits, |_| {}).expect("reads");
    assert_eq!(session.entries().len(), 1);
    // One byte more does not.
    let long = format!("{HEADER}\n{exact} \n");
    let error = read_session_limited("l.jsonl", long.as_bytes(), limits, |_| {}).expect_err("long");
    assert_eq!(
        (error.line, &error.kind),
        (2, &ReadErrorKind::LineTooLong { limit: 100 })
    );
    // A line end that never comes: an endless input stops at the limit.
    let header = format!("{HEADER}\n");
    let endless = header.as_bytes().chain(io::repeat(0));
    let error = read_session_limited("zero", io::BufReader::new(endless), limits, |_| {})
        .expect_err("endless");
    assert_eq!(
        (error.line, &error.kind),
        (2, &ReadErrorKind::LineTooLong { limit: 100 })
    );
    let many: String = std::iter::once(HEADER.to_owned())
        .chain((1..40).map(entry))
        .map(|line| line + "\n")
        .collect();
    let error =
        read_session_limited("f.jsonl", many.as_bytes(), limits, |_| {}).expect_err("large");
    assert_eq!(error.kind, ReadErrorKind::FileTooLarge { limit: 1_000 });
    // The texts at the default limits.
    let text = |line: u64, kind: ReadErrorKind| {
        ReadError {
            file: "s.jsonl".to_owned(),
            line,
            kind,
        }
        .to_string()
    };
    assert_text_snapshot!(
        "reader_error_line_too_long",
        text(
            2,
            ReadErrorKind::LineTooLong {
                limit: ReadLimits::default().max_line_bytes
            }
        )
    );
    assert_text_snapshot!(
        "reader_error_file_too_large",
        text(
            9,
            ReadErrorKind::FileTooLarge {
                limit: ReadLimits::default().max_file_bytes
            }
        )
    );
}

#[test]
fn the_input_is_read_once_to_its_end_and_progress_counts_its_bytes() {
    let bytes = fixture_bytes("pi-1.6.0.jsonl");
    let mut reports = Vec::new();
    let session =
        read_session_with_progress("p.jsonl", bytes.as_slice(), |read| reports.push(read))
            .expect("session");
    assert_eq!(session.bytes(), bytes.len() as u64);
    assert_eq!(reports.last(), Some(&(bytes.len() as u64)));
    assert!(reports.windows(2).all(|pair| pair[0] < pair[1]));
    assert_eq!(reports.len() as u64, session.lines());
}

/// A reader that gives some bytes, then fails.
struct Failing<'a>(&'a [u8]);

impl Read for Failing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.0.is_empty() {
            return Err(io::Error::other("the disk went away"));
        }
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

impl BufRead for Failing<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.0.is_empty() {
            return Err(io::Error::other("the disk went away"));
        }
        Ok(self.0)
    }

    fn consume(&mut self, amount: usize) {
        self.0 = &self.0[amount..];
    }
}

/// The error text of reading `text` named `s.jsonl`.
fn read_error(text: &str) -> String {
    match read_session("s.jsonl", text.as_bytes()) {
        Ok(session) => panic!("read: {session:?}"),
        Err(error) => error.to_string(),
    }
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/p"}"#;

#[test]
fn every_other_error_text() {
    let entry = |id: &str, parent: &str| {
        format!(
            r#"{{"type":"label","id":"{id}","parentId":{parent},"timestamp":"2026-03-02T09:00:00.000Z"}}"#
        )
    };
    let texts = [
        ("not_an_object", format!("{HEADER}\n[1,2]\n")),
        ("no_type", format!("{HEADER}\n{{\"id\":\"a\"}}\n")),
        (
            "second_header",
            format!("{HEADER}\n{}\n{HEADER}\n", entry("a", "null")),
        ),
        (
            "invalid_parent_id",
            format!("{HEADER}\n{}\n", entry("a", "7")),
        ),
        (
            "header_without_id",
            "{\"type\":\"session\",\"version\":3}\n".to_owned(),
        ),
        (
            "header_version_text",
            "{\"type\":\"session\",\"version\":\"3\",\"id\":\"s\"}\n".to_owned(),
        ),
        ("torn_header", HEADER[..40].to_owned()),
        ("blank_lines_only", "\n  \n\n".to_owned()),
        (
            "invalid_json",
            format!("{HEADER}\n{{\"type\":\"label\",\"id\":\"a\",}}\n"),
        ),
    ];
    for (name, text) in texts {
        assert_text_snapshot!(format!("reader_error_{name}"), read_error(&text));
    }
    // Bytes that are not UTF-8 inside a line are a broken line, not a panic.
    let mut bytes = format!("{HEADER}\n").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"label\",\"id\":\"a\xff\"}\n");
    let error = read_session("s.jsonl", bytes.as_slice()).expect_err("invalid UTF-8");
    assert!(
        matches!(error.kind, ReadErrorKind::InvalidJson { .. }),
        "{error}"
    );
    assert_text_snapshot!("reader_error_invalid_utf8_bytes", error.to_string());

    let mut input = format!("{HEADER}\n").into_bytes();
    input.extend_from_slice(entry("a", "null").as_bytes());
    input.push(b'\n');
    let error = read_session("s.jsonl", Failing(&input)).expect_err("I/O error");
    assert_eq!(error.line, 3);
    assert_text_snapshot!("reader_error_io", error.to_string());
}

#[test]
fn blank_lines_are_passed_over_as_pi_passes_over_them() {
    let text = format!(
        "\n{HEADER}\n\n{}\n  \n{}\n",
        r#"{"type":"label","id":"a","parentId":null}"#,
        r#"{"type":"label","id":"b","parentId":"a"}"#
    );
    let session = read_session("s.jsonl", text.as_bytes()).expect("session");
    assert_eq!(ids(&session.active_branch()), ["a", "b"]);
    assert_eq!(session.entries()[1].line(), 6);
}

#[test]
fn a_header_alone_is_a_session_without_entries() {
    for text in [HEADER.to_owned(), format!("{HEADER}\n")] {
        let session = read_session("s.jsonl", text.as_bytes()).expect("session");
        assert!(session.entries().is_empty() && session.active_branch().is_empty());
        assert_eq!(session.leaf(), None);
        assert!(session.warnings().is_empty());
    }
}

//! Properties of the reader: any bytes, generated well-formed sessions, and every cut of one.

use proptest::prelude::*;
use serde_json::{Value, json};
use sol_core::message::AgentMessage;
use sol_replay::reader::{ContentDigest, ReadErrorKind, ReadWarning, read_session};

/// One generated entry: its parent (`None` for a root, else an index into the entries
/// before it), its kind and a text.
#[derive(Debug, Clone)]
struct Planned {
    parent: Option<prop::sample::Index>,
    kind: u8,
    text: String,
}

fn planned() -> impl Strategy<Value = Vec<Planned>> {
    let one = (
        prop::option::weighted(0.9, any::<prop::sample::Index>()),
        0u8..8,
        "[a-z é😀\n\"\\\\]{0,24}",
    )
        .prop_map(|(parent, kind, text)| Planned { parent, kind, text });
    prop::collection::vec(one, 0..24)
}

/// The JSON of the planned entries, each with its id and parent id.
fn entries(plan: &[Planned]) -> Vec<(Value, Option<usize>)> {
    let mut out = Vec::new();
    for (i, planned) in plan.iter().enumerate() {
        let parent = if i == 0 {
            None
        } else {
            planned.parent.map(|index| index.index(i))
        };
        let text = planned.text.as_str();
        let mut entry = match planned.kind {
            0 => {
                json!({"type": "message", "message": {"role": "user", "content": text, "timestamp": 1_000 + i}})
            }
            1 => json!({"type": "message", "message": {"role": "assistant", "content": [
                {"type": "text", "text": text},
                {"type": "toolCall", "id": format!("call-{i}"), "name": "bash", "arguments": {"command": text}}],
                "stopReason": "toolUse", "usage": {"input": i, "output": 2, "cacheRead": 3, "cacheWrite": 4}}}),
            2 => {
                json!({"type": "message", "message": {"role": "toolResult", "toolCallId": format!("call-{i}"), "toolName": "bash",
                "content": [{"type": "text", "text": text}, {"type": "text", "text": "tail"}], "isError": i % 2 == 0}})
            }
            3 => json!({"type": "custom", "customType": "sol-pi-savings-totals", "data": {"n": i}}),
            4 => json!({"type": "custom", "customType": "other-extension", "data": {"n": i}}),
            5 => {
                json!({"type": "compaction", "summary": text, "firstKeptEntryId": format!("e{}", parent.unwrap_or(i)), "tokensBefore": 10})
            }
            6 => json!({"type": "branch_summary", "summary": text, "fromId": "e0"}),
            _ => json!({"type": "label", "targetId": "e0", "label": text}),
        };
        entry["id"] = json!(format!("e{i}"));
        entry["parentId"] = parent.map_or(Value::Null, |parent| json!(format!("e{parent}")));
        entry["timestamp"] = json!("2026-03-02T09:00:00.000Z");
        out.push((entry, parent));
    }
    out
}

fn file_of(entries: &[(Value, Option<usize>)]) -> String {
    let mut text = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/p"}"#.to_owned();
    text.push('\n');
    for (entry, _) in entries {
        text.push_str(&entry.to_string());
        text.push('\n');
    }
    text
}

/// The path from entry `leaf` to its root, root first.
fn path(entries: &[(Value, Option<usize>)], leaf: usize) -> Vec<usize> {
    let mut path = vec![leaf];
    while let Some(parent) = entries[*path.last().unwrap_or(&0)].1 {
        path.push(parent);
    }
    path.reverse();
    path
}

// proptest's default of 256 cases, or PROPTEST_CASES (scripts/proptest-explore.sh sets it).
proptest! {
    #[test]
    fn any_bytes_read_or_fail_with_a_line_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        match read_session("any.jsonl", bytes.as_slice()) {
            Ok(session) => prop_assert!(session.bytes() == bytes.len() as u64),
            Err(error) => {
                prop_assert!(error.line >= 1);
                let prefix = format!("any.jsonl:{}: ", error.line);
                prop_assert!(error.to_string().starts_with(&prefix));
            }
        }
    }

    #[test]
    fn json_shaped_lines_read_or_fail_with_a_line_never_panic(
        lines in prop::collection::vec(prop::sample::select(vec![
            r#"{"type":"session","version":3,"id":"s"}"#, r#"{"type":"session","version":9,"id":"s"}"#,
            r#"{"type":"label","id":"a","parentId":null}"#, r#"{"type":"label","id":"b","parentId":"a"}"#,
            r#"{"type":"message","id":"c","parentId":"b","message":{"role":"toolResult","content":7}}"#,
            r#"{"type":"message","id":"d","message":null}"#, r#"{"type":"compaction","id":"e","summary":null}"#,
            r#"{"type":"custom","id":"f","customType":"sol-pi-x"}"#, r#"{"type":"context_edit","id":"g","replacement":{"content":3}}"#,
            r#"{"id":"h"}"#, "[]", "", "{", r#"{"type":"label","parentId":"zz","id":"i"}"#,
        ]), 0..12),
        end in any::<bool>(),
    ) {
        let mut text = lines.join("\n");
        if end { text.push('\n'); }
        if let Err(error) = read_session("j.jsonl", text.as_bytes()) {
            prop_assert!(error.line >= 1 && error.line <= lines.len().max(1) as u64, "{}", error);
        }
    }

    #[test]
    fn a_generated_session_reads_back_its_entries_and_branches(plan in planned()) {
        let entries = entries(&plan);
        let text = file_of(&entries);
        let session = read_session("gen.jsonl", text.as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(session.warnings().is_empty());
        prop_assert_eq!(session.entries().len(), entries.len());
        for (i, (entry, (value, parent))) in session.entries().iter().zip(&entries).enumerate() {
            prop_assert_eq!(entry.id(), format!("e{i}"));
            prop_assert_eq!(entry.line(), i as u64 + 2);
            prop_assert_eq!(entry.parent().map(|p| p.get()), *parent);
            prop_assert_eq!(Some(entry.entry_type()), value["type"].as_str());
            prop_assert_eq!(entry.has_children(), entries.iter().any(|(_, p)| *p == Some(i)));
            if let Some(message) = entry.message() {
                let agent = AgentMessage::from_value(value["message"].clone());
                prop_assert_eq!(message.tokens, agent.estimated_tokens());
                if let Some(result) = &message.tool_result {
                    let texts: Vec<&str> = sol_core::message::text_blocks(&value["message"]).collect();
                    prop_assert_eq!(result.text_bytes, texts.join("\n").len() as u64);
                    prop_assert_eq!(result.digest, ContentDigest::of_texts([texts.join("\n").as_str()]));
                }
            }
        }
        let leaves: Vec<usize> = session.leaves().map(|leaf| leaf.get()).collect();
        let expected: Vec<usize> = (0..entries.len()).filter(|&i| !entries.iter().any(|(_, p)| *p == Some(i))).collect();
        prop_assert_eq!(&leaves, &expected);
        for (leaf, branch) in leaves.iter().zip(session.branches()) {
            let got: Vec<usize> = branch.iter().map(|entry| session.index_of(entry.id()).map_or(usize::MAX, |i| i.get())).collect();
            prop_assert_eq!(got, path(&entries, *leaf));
        }
        let active: Vec<String> = session.active_branch().iter().map(|e| e.id().to_owned()).collect();
        let expected_active: Vec<String> = entries.len().checked_sub(1).map_or_else(Vec::new, |last| path(&entries, last).iter().map(|i| format!("e{i}")).collect());
        prop_assert_eq!(active, expected_active);
    }

    #[test]
    fn a_file_cut_at_any_byte_reads_its_whole_lines_or_names_a_line(plan in planned(), cut in any::<prop::sample::Index>()) {
        let entries = entries(&plan);
        let text = file_of(&entries);
        let bytes = text.as_bytes();
        let at = cut.index(bytes.len() + 1);
        let prefix = &bytes[..at];
        let whole_lines = prefix.iter().filter(|&&b| b == b'\n').count();
        let rest = prefix.len() - prefix.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // A rest that is a whole line without its line end still parses: it counts as read.
        let rest_is_whole = rest > 0 && bytes.get(at) == Some(&b'\n');
        match read_session("cut.jsonl", prefix) {
            Ok(session) => {
                prop_assert!(whole_lines >= 1 || rest_is_whole, "a header must have been read");
                let read_lines = whole_lines + usize::from(rest_is_whole);
                prop_assert_eq!(session.entries().len(), read_lines - 1);
                if rest > 0 && !rest_is_whole {
                    let [ReadWarning::TornLastLine { line, bytes, entries: before, .. }] = session.warnings() else {
                        return Err(TestCaseError::fail(format!("expected a torn-line warning: {:?}", session.warnings())));
                    };
                    prop_assert_eq!(*line, whole_lines as u64 + 1);
                    prop_assert_eq!(*bytes, rest as u64);
                    prop_assert_eq!(*before, whole_lines - 1);
                } else {
                    prop_assert!(session.warnings().is_empty());
                }
            }
            Err(error) => {
                // Only a file without a whole header fails, and it names line 1.
                prop_assert_eq!(whole_lines, 0);
                prop_assert!(!rest_is_whole);
                prop_assert_eq!(error.line, 1);
                prop_assert!(matches!(error.kind, ReadErrorKind::Empty | ReadErrorKind::NotASession { .. }), "{}", error);
            }
        }
    }
}

/// The lone surrogates a text may hold, as `JSON.stringify` escapes them.
const LONE: [&str; 4] = [r"\ud800", r"\udbff", r"\udc00", r"\udfff"];

proptest! {
    #[test]
    fn a_crash_then_a_resume_loses_only_the_torn_line(
        plan in planned().prop_filter("two entries at least", |plan| plan.len() >= 2),
        torn in any::<prop::sample::Index>(),
        cut in any::<prop::sample::Index>(),
        same_line in any::<bool>(),
    ) {
        let mut entries = entries(&plan);
        let torn = torn.index(entries.len() - 1);
        // Pi never names an entry it could not read: what it appends after the crash hangs
        // from an entry it read.
        let torn_parent = entries[torn].1;
        for (value, parent) in entries.iter_mut().skip(torn + 1) {
            if *parent == Some(torn) {
                *parent = torn_parent;
                value["parentId"] = torn_parent.map_or(Value::Null, |p| json!(format!("e{p}")));
            }
        }
        let whole = file_of(&entries);
        let lines: Vec<&str> = whole.lines().collect();
        // Line 1 is the header: the torn entry is on line torn + 2.
        let torn_text = lines[torn + 1];
        let cut = 1 + cut.index(torn_text.len() - 1);
        let mut file = Vec::new();
        for line in &lines[..=torn] {
            file.extend_from_slice(line.as_bytes());
            file.push(b'\n');
        }
        file.extend_from_slice(&torn_text.as_bytes()[..cut]);
        // Pi 1.x ends the torn line when it opens the file; 0.84.2 appends to it.
        if !same_line {
            file.push(b'\n');
        }
        for line in &lines[torn + 2..] {
            file.extend_from_slice(line.as_bytes());
            file.push(b'\n');
        }
        let session = read_session("torn.jsonl", file.as_slice())
            .map_err(|error| TestCaseError::fail(error.to_string()))?;
        let [ReadWarning::TornLine { line, bytes, then_entry, .. }] = session.warnings() else {
            return Err(TestCaseError::fail(format!("one torn-line warning: {:?}", session.warnings())));
        };
        prop_assert_eq!(*line, torn as u64 + 2);
        prop_assert_eq!(*bytes, cut as u64);
        prop_assert_eq!(*then_entry, same_line);
        // Every other entry is read, with its parent.
        let expected: Vec<(String, Option<String>)> = entries
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != torn)
            .map(|(i, (_, parent))| (format!("e{i}"), parent.map(|p| format!("e{p}"))))
            .collect();
        let got: Vec<(String, Option<String>)> = session
            .entries()
            .iter()
            .map(|entry| (entry.id().to_owned(), entry.parent().map(|p| session.entry(p).id().to_owned())))
            .collect();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn lone_surrogate_escapes_read_as_replacement_characters(
        pieces in prop::collection::vec(("[a-z é😀\"\\\\]{0,8}", prop::option::of(0usize..4)), 1..8),
        pair in any::<bool>(),
    ) {
        // A text of pieces, each perhaps followed by a lone surrogate, as Pi writes it.
        let mut escaped = String::new();
        let mut expected = String::new();
        for (piece, lone) in &pieces {
            let json = serde_json::to_string(piece).expect("JSON");
            escaped.push_str(&json[1..json.len() - 1]);
            expected.push_str(piece);
            if let Some(lone) = lone {
                escaped.push_str(LONE[*lone]);
                expected.push('\u{FFFD}');
                if *lone < 2 {
                    // A high half right before a low half would be a pair, not lone.
                    escaped.push('x');
                    expected.push('x');
                }
            }
        }
        if pair {
            // A well-formed pair stays what it is.
            escaped.push_str(r"\ud83d\ude00");
            expected.push('\u{1F600}');
        }
        let header = r#"{"type":"session","version":3,"id":"s"}"#;
        let user = format!(r#"{{"type":"message","id":"a","parentId":null,"message":{{"role":"user","content":"{escaped}"}}}}"#);
        let result = format!(r#"{{"type":"message","id":"b","parentId":"a","message":{{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{{"type":"text","text":"{escaped}"}}],"isError":false}}}}"#);
        let text = format!("{header}\n{user}\n{result}\n");
        let session = read_session("s.jsonl", text.as_bytes()).map_err(|error| TestCaseError::fail(error.to_string()))?;
        prop_assert!(session.warnings().is_empty());
        prop_assert_eq!(session.entries().len(), 2);
        let user = session.entries()[0].message().expect("a message");
        let plain = AgentMessage::from_value(json!({"role": "user", "content": expected}));
        prop_assert_eq!(user.tokens, plain.estimated_tokens());
        let facts = session.entries()[1].message().and_then(|m| m.tool_result.as_deref()).expect("a result");
        prop_assert_eq!(facts.text_bytes, expected.len() as u64);
        prop_assert_eq!(facts.digest, ContentDigest::of_texts([expected.as_str()]));
    }
}

/// One entry of a generated format 1 session: its kind, a text, the number a compaction's
/// `firstKeptEntryIndex` holds (a whole number or not), and whether the line carries a stray
/// `id` and `parentId` of its own (which Pi's migration replaces).
#[derive(Debug, Clone)]
struct OldEntry {
    kind: u8,
    text: String,
    kept: Option<f64>,
    stray_id: bool,
    blank_before: bool,
}

fn old_entries() -> impl Strategy<Value = Vec<OldEntry>> {
    let kept = prop_oneof![(0u32..30).prop_map(f64::from), Just(2.5), Just(-1.0)];
    let one = (
        0u8..7,
        "[a-z é\n\"]{0,16}",
        prop::option::weighted(0.8, kept),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(kind, text, kept, stray_id, blank_before)| OldEntry {
            kind,
            text,
            kept,
            stray_id,
            blank_before,
        });
    prop::collection::vec(one, 0..20)
}

/// An entry as Pi's format 1 wrote it (no id, no parent).
fn old_entry(i: usize, old: &OldEntry) -> Value {
    let text = old.text.as_str();
    let mut entry = match old.kind {
        0 => {
            json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1_000 + i}})
        }
        1 => json!({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "text", "text": text},
            {"type": "toolCall", "id": format!("toolu_{i}"), "name": "bash", "arguments": {"command": text}}],
            "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse",
            "usage": {"input": i, "output": 2, "cacheRead": 3 * i, "cacheWrite": 4, "cost": {"total": 0.001}}}}),
        2 => {
            json!({"type": "message", "message": {"role": "toolResult", "toolCallId": format!("toolu_{i}"), "toolName": "bash",
            "content": [{"type": "text", "text": text}], "isError": false}})
        }
        3 => {
            json!({"type": "message", "message": {"role": "hookMessage", "customType": "notes", "content": text, "display": true}})
        }
        4 => json!({"type": "thinking_level_change", "thinkingLevel": "medium"}),
        5 => json!({"type": "model_change", "provider": "anthropic", "modelId": "claude-opus-4-5"}),
        _ => {
            let mut compaction =
                json!({"type": "compaction", "summary": text, "tokensBefore": 100});
            if let Some(kept) = old.kept {
                compaction["firstKeptEntryIndex"] = json!(kept);
            }
            compaction
        }
    };
    entry["timestamp"] = json!(format!("2025-11-20T10:00:{:02}.000Z", i % 60));
    if old.stray_id {
        entry["id"] = json!("stray");
        entry["parentId"] = json!("nowhere");
    }
    entry
}

/// The same session as Pi migrates it to format 3, written out by the rules of its
/// `migrateV1ToV2` and `migrateV2ToV3`, with the reader's ids (8 hex digits of the position,
/// the header being 0) in place of Pi's random ones.
fn migrated_entry(i: usize, old: &OldEntry) -> Value {
    let position = i + 1;
    let id = |position: usize| format!("{position:08x}");
    let mut entry = old_entry(i, old);
    entry["id"] = json!(id(position));
    entry["parentId"] = if i == 0 {
        Value::Null
    } else {
        json!(id(position - 1))
    };
    if let Some(object) = entry.as_object_mut()
        && let Some(kept) = object.remove("firstKeptEntryIndex")
    {
        let kept = kept.as_f64().unwrap_or(-1.0);
        if kept >= 1.0 && kept.fract() == 0.0 && kept as usize <= position {
            object.insert("firstKeptEntryId".to_owned(), json!(id(kept as usize)));
        }
    }
    if entry["message"]["role"] == "hookMessage" {
        entry["message"]["role"] = json!("custom");
    }
    entry
}

proptest! {
    #[test]
    fn a_format_1_session_reads_as_its_format_3_migration(old in old_entries()) {
        let mut v1 = r#"{"type":"session","id":"s","timestamp":"2025-11-20T10:00:00.000Z","cwd":"/p","provider":"anthropic","modelId":"claude-sonnet-4-5","thinkingLevel":"off"}"#.to_owned();
        v1.push('\n');
        let mut v3 = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-11-20T10:00:00.000Z","cwd":"/p"}"#.to_owned();
        v3.push('\n');
        for (i, entry) in old.iter().enumerate() {
            // A blank line is passed over by Pi and the reader alike; keep the line numbers equal.
            if entry.blank_before {
                v1.push('\n');
                v3.push('\n');
            }
            v1.push_str(&old_entry(i, entry).to_string());
            v1.push('\n');
            v3.push_str(&migrated_entry(i, entry).to_string());
            v3.push('\n');
        }
        let read = |text: &str| read_session("gen.jsonl", text.as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()));
        let (v1, v3) = (read(&v1)?, read(&v3)?);
        prop_assert_eq!(v1.header().version, 1);
        prop_assert_eq!(v3.header().version, 3);
        prop_assert_eq!(v1.entries(), v3.entries());
        prop_assert_eq!(v1.active_branch(), v3.active_branch());
        prop_assert_eq!(v1.active_branch().len(), old.len());
        prop_assert!(v1.leaves().count() == usize::from(!old.is_empty()));
    }
}

proptest! {
    /// Any mini-swe-agent trajectory reads as one message entry per message, in a chain, with
    /// one `bash` call per reply that has a bash block and a usage per reply that has one;
    /// any bytes at all give a session or an error, never a panic.
    #[test]
    fn a_trajectory_reads_as_one_message_per_message(
        messages in prop::collection::vec((0u8..3, "[a-z `\n]{0,40}", any::<bool>(), 0u64..5_000, 0u64..5_000), 0..12),
        noise in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        use sol_replay::reader::trajectory::read_trajectory;
        let _ = read_trajectory("noise.json", &noise);
        let raw: Vec<Value> = messages
            .iter()
            .map(|(role, text, bash, prompt, cached)| {
                let role = ["system", "user", "assistant"][usize::from(*role)];
                let content = if *bash { format!("{text}\n```bash\nls -la\n```") } else { text.clone() };
                let mut message = json!({"role": role, "content": content});
                if role == "assistant" {
                    message["extra"] = json!({"response": {"model": "p/m", "usage": {"prompt_tokens": prompt, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": cached}}}});
                }
                message
            })
            .collect();
        let text = json!({"trajectory_format": "mini-swe-agent-1", "messages": raw}).to_string();
        let session = read_trajectory("t.json", text.as_bytes()).expect("a trajectory reads");
        let branch = session.active_branch();
        prop_assert_eq!(branch.len(), messages.len());
        for ((role, _, bash, prompt, cached), entry) in messages.iter().zip(&branch) {
            let message = entry.message().expect("a message");
            if *role == 2 {
                let reply = message.assistant.as_deref().expect("a reply");
                prop_assert_eq!(reply.tool_calls.len(), usize::from(*bash));
                let usage = reply.usage.expect("its usage");
                prop_assert_eq!((usage.input, usage.cache_read), (prompt - cached.min(prompt), *cached.min(prompt)));
            }
        }
    }
}

/// One generated step of a harness-neutral trajectory.
fn neutral_step() -> impl Strategy<Value = sol_replay::reader::neutral::Step> {
    use sol_replay::reader::neutral::{Step, Usage};
    let text = "[a-z é😀\n\"\\\\]{0,24}";
    prop_oneof![
        text.prop_map(|text| Step::prompt(text, 5)),
        (
            text,
            prop::option::of((0u64..5_000, 0u64..5_000, 0u64..500, 0u64..900)),
            any::<bool>()
        )
            .prop_map(|(text, usage, calls)| {
                let mut reply = Step::reply(text, 6);
                if calls {
                    reply = reply.call("c", "bash", json!({"command": "ls"}));
                }
                if let Some((input, cache_read, cache_write, output)) = usage {
                    reply = reply.usage(Usage {
                        input,
                        cache_read,
                        cache_write,
                        output,
                    });
                }
                reply
            }),
        (text, any::<bool>()).prop_map(|(text, failed)| Step::result("c", "bash", text, failed, 7)),
    ]
}

proptest! {
    /// A harness-neutral trajectory becomes a session of one entry per step, in a chain,
    /// whose replies carry exactly the usage reported: the replay's requests as sent add up
    /// to the steps' usage.
    #[test]
    fn a_neutral_trajectory_is_the_session_of_its_steps(steps in prop::collection::vec(neutral_step(), 0..20)) {
        use sol_replay::reader::neutral::{Step, Trajectory};
        use sol_replay::replay::{ReplayOptions, replay_session};
        let mut run = Trajectory::new("run");
        let mut sums = (0u64, 0u64, 0u64, 0u64, 0u64);
        for step in &steps {
            if let Step::Reply { usage: Some(usage), .. } = step {
                sums.0 += 1;
                sums.1 += usage.input;
                sums.2 += usage.cache_read;
                sums.3 += usage.cache_write;
                sums.4 += usage.output;
            }
            run.push(step.clone());
        }
        let session = run.into_session("run.json").expect("a session");
        prop_assert!(session.warnings().is_empty());
        prop_assert_eq!(session.active_branch().len(), steps.len());
        let replayed = replay_session(&session, &ReplayOptions::default());
        if let Some(branch) = replayed.branches.first() {
            let reported = branch.sol_pi.reported;
            // A reply whose usage is all zeros is one the provider did not bill.
            prop_assert!(reported.requests <= sums.0);
            prop_assert_eq!(
                (reported.input, reported.cache_read, reported.cache_write, reported.output),
                (sums.1, sums.2, sums.3, sums.4)
            );
        } else {
            prop_assert!(steps.is_empty());
        }
    }
}

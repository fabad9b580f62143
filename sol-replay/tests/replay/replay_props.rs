//! Properties of the replay over generated conversations: every figure that counts or costs
//! something is a finite, non-negative number (a saving may be negative, a loss, but is
//! always the difference of two such costs); replaying is deterministic, so a session
//! replayed twice gives twice its totals; and a branch copied into a second branch of the
//! same file replays to the same figures as the branch alone.

use proptest::prelude::*;
use serde_json::{Value, json};
use sol_core::savings::Money;
use sol_replay::reader::read_session;
use sol_replay::render::{Format, Totals, json_report, render};
use sol_replay::replay::{BranchReplay, ReplayOptions, SessionReplay, replay_session};

/// One step of a generated conversation.
#[derive(Debug, Clone)]
enum Step {
    /// A user prompt of this many characters.
    User(usize),
    /// An assistant turn calling these tools (0 bash, 1 edit, 2 edit with then_run, 3
    /// update_plan, 4 read), each answered by a result of the given size (bytes), or an
    /// answer without a call when empty; `failed` ends it in an error with no usage.
    Turn {
        calls: Vec<(u8, usize)>,
        failed: bool,
    },
    /// A compaction keeping the entries from the n-th last message on, by Pi or by OCC
    /// (then followed by OCC's continuation).
    Compact { keep: usize, by_occ: bool },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => (1..400usize).prop_map(Step::User),
        6 => (
            prop::collection::vec((0u8..5, prop_oneof![0..2_000usize, 9_000..30_000usize]), 0..3),
            prop::bool::weighted(0.1),
        )
            .prop_map(|(calls, failed)| Step::Turn { calls, failed }),
        1 => (0..6usize, any::<bool>()).prop_map(|(keep, by_occ)| Step::Compact { keep, by_occ }),
    ]
}

const TOOLS: [&str; 5] = ["bash", "edit", "edit", "update_plan", "read"];

/// The entries of a conversation: JSON values without id and parent (a chain).
fn conversation(steps: &[Step]) -> Vec<Value> {
    let mut entries = vec![
        json!({"type": "message", "message": {"role": "user", "content": "Start", "timestamp": 1}}),
    ];
    let mut messages: Vec<usize> = vec![0];
    for (n, step) in steps.iter().enumerate() {
        match step {
            Step::User(chars) => {
                messages.push(entries.len());
                entries.push(json!({"type": "message", "message": {"role": "user", "content": "u".repeat(*chars), "timestamp": n}}));
            }
            Step::Turn { calls, failed } => {
                let blocks: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(i, (tool, _))| {
                        let mut arguments = match *tool {
                            0 => json!({"command": "cargo test"}),
                            3 => json!({"plan": [{"id": "a", "goal": "Do it", "status": "completed"}]}),
                            _ => json!({"path": "src/lib.rs"}),
                        };
                        if *tool == 2 {
                            arguments["then_run"] = json!({"command": "cargo test"});
                        }
                        json!({"type": "toolCall", "id": format!("c{n}-{i}"), "name": TOOLS[usize::from(*tool)], "arguments": arguments})
                    })
                    .chain(std::iter::once(json!({"type": "text", "text": "ok"})))
                    .collect();
                let mut assistant = json!({"role": "assistant", "content": blocks, "timestamp": n,
                    "stopReason": if *failed { "error" } else if calls.is_empty() { "stop" } else { "toolUse" }});
                if !*failed {
                    assistant["usage"] =
                        json!({"input": 3, "output": 7, "cacheRead": 100, "cacheWrite": 20});
                }
                messages.push(entries.len());
                entries.push(json!({"type": "message", "message": assistant}));
                if *failed {
                    continue;
                }
                for (i, (tool, size)) in calls.iter().enumerate() {
                    let line = "test case ... ok\n";
                    let text = line.repeat(size / line.len() + 1);
                    messages.push(entries.len());
                    entries.push(json!({"type": "message", "message": {"role": "toolResult", "toolCallId": format!("c{n}-{i}"),
                        "toolName": TOOLS[usize::from(*tool)], "content": [{"type": "text", "text": text}], "isError": false, "timestamp": n}}));
                }
            }
            Step::Compact { keep, by_occ } => {
                let kept = messages[messages.len().saturating_sub(keep + 1)];
                entries.push(json!({"type": "compaction", "summary": "s".repeat(200), "firstKeptEntryId": format!("k{kept}"), "tokensBefore": 1000}));
                if *by_occ {
                    entries.push(json!({"type": "custom_message", "customType": "sol-pi-online-context-compact", "content": "Continue.", "display": false}));
                }
            }
        }
    }
    entries
}

/// A session file of `branches`, each a copy of the conversation under its own ids, all
/// starting at the root (so the last one is the active branch).
fn file(entries: &[Value], branches: usize) -> String {
    let mut text = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/p"}"#.to_owned();
    text.push('\n');
    for branch in 0..branches {
        let id = |index: usize| format!("b{branch}-{index}");
        for (index, entry) in entries.iter().enumerate() {
            let mut entry = entry.clone();
            entry["id"] = json!(id(index));
            entry["parentId"] = if index == 0 {
                Value::Null
            } else {
                json!(id(index - 1))
            };
            entry["timestamp"] = json!("2026-03-02T09:00:00.000Z");
            if let Some(kept) = entry.get("firstKeptEntryId").and_then(Value::as_str) {
                let kept: usize = kept[1..].parse().unwrap_or(0);
                entry["firstKeptEntryId"] = json!(id(kept));
            }
            text.push_str(&entry.to_string());
            text.push('\n');
        }
    }
    text
}

fn replay(text: &str, options: &ReplayOptions) -> SessionReplay {
    let session =
        read_session("generated.jsonl", text.as_bytes()).expect("a generated session reads");
    replay_session(&session, options)
}

/// Every number of the JSON report is finite; every one but a saving's is non-negative.
fn assert_figures_sound(value: &Value, path: &str) {
    match value {
        Value::Number(number) => {
            let x = number.as_f64().unwrap_or(f64::NAN);
            assert!(x.is_finite(), "{path} = {number}");
            let saving = ["saved", "Saved", "net", "gross", "Avoided"]
                .iter()
                .any(|word| path.ends_with(word) || path.contains(&format!("{word}/")));
            assert!(saving || x >= 0.0, "{path} = {number}");
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, item)| assert_figures_sound(item, &format!("{path}/{i}"))),
        Value::Object(fields) => fields
            .iter()
            .for_each(|(key, item)| assert_figures_sound(item, &format!("{path}/{key}"))),
        _ => {}
    }
}

fn assert_branch_sound(branch: &BranchReplay, options: &ReplayOptions) {
    let report = branch.sol_pi.report(&options.prices);
    assert_eq!(report.total_net(), report.plain_cost - report.sent_cost);
    let plain = &branch.policies[0];
    for row in &branch.policies {
        assert_eq!(row.cost, plain.cost - row.net_saved, "{:?}", row.policy);
        assert!(row.cost >= Money::ZERO, "{:?}: {}", row.policy, row.cost);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_figure_is_finite_and_every_cost_and_count_non_negative(steps in prop::collection::vec(step(), 0..30)) {
        let options = ReplayOptions::default();
        let replayed = replay(&file(&conversation(&steps), 1), &options);
        for branch in &replayed.branches {
            assert_branch_sound(branch, &options);
        }
        assert_figures_sound(&json_report(std::slice::from_ref(&replayed), &options), "");
    }

    #[test]
    fn a_session_replayed_twice_is_the_same_replay_and_twice_the_totals(steps in prop::collection::vec(step(), 0..30)) {
        let options = ReplayOptions::default();
        let text = file(&conversation(&steps), 1);
        let once = replay(&text, &options);
        let again = replay(&text, &options);
        prop_assert_eq!(&once, &again);
        prop_assert_eq!(render(std::slice::from_ref(&once), &options, Format::Json), render(std::slice::from_ref(&again), &options, Format::Json));
        let single = Totals::of(std::slice::from_ref(&once));
        let double = Totals::of(&[once, again]);
        assert_figures_sound(&serde_json::to_value(&double).unwrap_or_default(), "");
        for (one, two) in single.policies.iter().zip(&double.policies) {
            prop_assert_eq!(two.requests, 2 * one.requests);
            prop_assert_eq!(two.input_tokens, 2 * one.input_tokens);
            prop_assert_eq!(two.net_saved, one.net_saved + one.net_saved);
        }
        for (one, two) in single.sol_pi.layers.iter().zip(&double.sol_pi.layers) {
            prop_assert_eq!(two.input(), 2 * one.input());
        }
    }

    #[test]
    fn a_branch_copied_beside_itself_replays_as_the_branch_alone(steps in prop::collection::vec(step(), 1..20)) {
        let options = ReplayOptions { all_branches: true, ..ReplayOptions::default() };
        let entries = conversation(&steps);
        let alone = replay(&file(&entries, 1), &options);
        let both = replay(&file(&entries, 2), &options);
        prop_assert_eq!(both.branches.len(), 2);
        for branch in &both.branches {
            assert_branch_sound(branch, &options);
            let mut branch = branch.clone();
            // The copies differ only by their ids.
            branch.leaf.clone_from(&alone.branches[0].leaf);
            branch.active = true;
            prop_assert_eq!(&branch, &alone.branches[0]);
        }
        assert_figures_sound(&json_report(std::slice::from_ref(&both), &options), "");
    }
}

/// A tree: the conversation `main` as a chain, and each of `sides` hanging from the main
/// line's entry at its index. Returns the file and each entry's JSON line by id.
fn tree(
    main: &[Value],
    sides: &[(prop::sample::Index, Vec<Value>)],
) -> (String, std::collections::BTreeMap<String, Value>) {
    let mut lines: Vec<Value> = Vec::new();
    let chain =
        |prefix: &str, entries: &[Value], root_parent: Option<String>, lines: &mut Vec<Value>| {
            for (index, entry) in entries.iter().enumerate() {
                let mut entry = entry.clone();
                entry["id"] = json!(format!("{prefix}{index}"));
                entry["parentId"] = if index == 0 {
                    root_parent.clone().map_or(Value::Null, Value::from)
                } else {
                    json!(format!("{prefix}{}", index - 1))
                };
                entry["timestamp"] = json!("2026-03-02T09:00:00.000Z");
                if let Some(kept) = entry.get("firstKeptEntryId").and_then(Value::as_str) {
                    let kept: usize = kept[1..].parse().unwrap_or(0);
                    entry["firstKeptEntryId"] = json!(format!("{prefix}{kept}"));
                }
                lines.push(entry);
            }
        };
    chain("m", main, None, &mut lines);
    for (side, (at, entries)) in sides.iter().enumerate() {
        let parent = format!("m{}", at.index(main.len()));
        chain(&format!("s{side}-"), entries, Some(parent), &mut lines);
    }
    let mut text = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/p"}"#.to_owned();
    text.push('\n');
    let mut by_id = std::collections::BTreeMap::new();
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
        by_id.insert(line["id"].as_str().unwrap_or_default().to_owned(), line);
    }
    (text, by_id)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_branch_of_a_tree_replays_as_the_branch_alone(
        main in prop::collection::vec(step(), 1..14),
        sides in prop::collection::vec((any::<prop::sample::Index>(), prop::collection::vec(step(), 0..6)), 1..4),
        cache_aware in any::<bool>(),
        mask_keep in 0usize..4,
    ) {
        let options = ReplayOptions { all_branches: true, cache_aware, mask_keep, ..ReplayOptions::default() };
        let sides: Vec<_> = sides.into_iter().map(|(at, steps)| (at, conversation(&steps))).collect();
        let (text, by_id) = tree(&conversation(&main), &sides);
        let whole = replay(&text, &options);
        prop_assert!(!whole.branches.is_empty());
        for branch in &whole.branches {
            // The branch's own entries, root first, as a file of their own.
            let mut path = vec![by_id[&branch.leaf].clone()];
            while let Some(parent) = path.last().and_then(|entry| entry["parentId"].as_str()) {
                path.push(by_id[parent].clone());
            }
            path.reverse();
            let mut alone = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-03-02T09:00:00.000Z","cwd":"/p"}"#.to_owned();
            alone.push('\n');
            for entry in &path {
                alone.push_str(&entry.to_string());
                alone.push('\n');
            }
            let single = replay(&alone, &ReplayOptions { all_branches: false, ..options });
            let mut branch = branch.clone();
            branch.active = true;
            prop_assert_eq!(&branch, &single.branches[0]);
        }
    }

    #[test]
    fn a_request_built_from_where_it_changed_replays_as_the_whole_request(
        main in prop::collection::vec(step(), 1..24),
        sides in prop::collection::vec((any::<prop::sample::Index>(), prop::collection::vec(step(), 0..8)), 0..3),
        cache_aware in any::<bool>(),
        mask_keep in 0usize..4,
        occ in any::<bool>(),
    ) {
        let options = ReplayOptions {
            all_branches: true,
            cache_aware,
            mask_keep,
            occ_ratio: occ.then_some(12.5),
            ..ReplayOptions::default()
        };
        let sides: Vec<_> = sides.into_iter().map(|(at, steps)| (at, conversation(&steps))).collect();
        let (text, _) = tree(&conversation(&main), &sides);
        let whole = replay(&text, &ReplayOptions { whole_requests: true, ..options });
        prop_assert_eq!(replay(&text, &options), whole);
    }
}

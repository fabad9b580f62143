//! The reader and the replay on the real sessions of `../shared/corpora/` (see its README),
//! read in place. The expected figures are computed here from the raw file with serde_json,
//! independently of the reader.

use serde_json::Value;
use sol_replay::reader::read_session;
use sol_replay::render::{Format, render};
use sol_replay::replay::{Policy, ReplayOptions, replay_session};

use crate::support::shared_corpora;

/// The bytes of `pi-mono/large-session.jsonl`, or `None` (with a message) when the corpora are
/// not beside the repository.
#[allow(clippy::print_stderr)] // Who runs the test is told that it was skipped.
fn large_session() -> Option<Vec<u8>> {
    let Some(corpora) = shared_corpora() else {
        eprintln!(
            "skipped: no shared/corpora/ beside the repository (expected at <clone>/../shared/corpora)"
        );
        return None;
    };
    let path = corpora.join("pi-mono").join("large-session.jsonl");
    #[allow(clippy::disallowed_methods)] // The corpus is read from disk, in place.
    let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    Some(bytes)
}

/// Pi's session of November 2025 (format 1: no header version, no entry ids), with the usage
/// the provider billed on each reply.
#[test]
fn the_real_format_1_session_of_pi_mono_reads_with_every_reply_and_its_usage() {
    let Some(bytes) = large_session() else { return };
    let lines: Vec<Value> = String::from_utf8(bytes.clone())
        .expect("UTF-8")
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let (header, raw) = lines.split_first().expect("a header");
    assert_eq!(header["type"], "session");
    assert!(header.get("version").is_none(), "format 1 has no version");
    let replies: Vec<&Value> = raw
        .iter()
        .filter(|entry| entry["type"] == "message" && entry["message"]["role"] == "assistant")
        .collect();
    let sum = |key: &str| -> u64 {
        replies
            .iter()
            .map(|reply| reply["message"]["usage"][key].as_u64().expect("a count"))
            .sum()
    };

    let session = read_session(
        "../shared/corpora/pi-mono/large-session.jsonl",
        bytes.as_slice(),
    )
    .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(session.header().version, 1);
    assert!(session.warnings().is_empty());
    assert_eq!(session.entries().len(), raw.len());
    assert_eq!(session.entries().len(), 1018);
    // One linear branch through every entry, in file order.
    assert_eq!(session.leaves().count(), 1);
    assert_eq!(session.active_branch().len(), raw.len());
    let usages: Vec<_> = session
        .entries()
        .iter()
        .filter_map(|entry| entry.message()?.assistant.as_ref())
        .map(|assistant| assistant.usage.expect("every reply carries its usage"))
        .collect();
    assert_eq!(replies.len(), 453);
    assert_eq!(usages.len(), 453);
    let total =
        |field: fn(&sol_replay::reader::Usage) -> u64| -> u64 { usages.iter().map(field).sum() };
    assert_eq!(total(|usage| usage.input), sum("input"));
    assert_eq!(total(|usage| usage.cache_read), sum("cacheRead"));
    assert_eq!(total(|usage| usage.cache_write), sum("cacheWrite"));
    assert_eq!(total(|usage| usage.output), sum("output"));
    assert!(sum("cacheRead") > 0 && sum("cacheWrite") > 0);

    // The replay runs on it and prices a plain-Pi side.
    let options = ReplayOptions::default();
    let replay = replay_session(&session, &options);
    let text = render(&[replay], &options, Format::Text);
    assert!(text.contains("Plain Pi"), "{text}");
}

/// The mini-swe-agent runs of the corpora, in name order.
fn trajectories(corpora: &std::path::Path) -> Vec<std::path::PathBuf> {
    let dir = corpora.join("mini-swe-agent").join("trajs");
    #[allow(clippy::disallowed_methods)] // The corpus is listed and read in place.
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the trajectories")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    files.sort();
    files
}

/// Every mini-swe-agent run of `../shared/corpora/mini-swe-agent/trajs/`, read as the Pi
/// session it amounts to: one request per reply with usage, each reply's usage as reported
/// (summed here from the raw JSON), and a replay whose requests as sent are those replies.
#[test]
fn every_real_mini_swe_agent_run_reads_with_its_replies_and_their_usage() {
    let Some(corpora) = shared_corpora() else {
        return;
    };
    let files = trajectories(&corpora);
    assert!(files.len() >= 60, "{} trajectories", files.len());
    for path in &files {
        #[allow(clippy::disallowed_methods)]
        let bytes = std::fs::read(path).expect("a trajectory");
        assert!(sol_replay::reader::trajectory::looks_like_trajectory(
            &bytes
        ));
        let raw: Value = serde_json::from_slice(&bytes).expect("JSON");
        let (mut replies, mut prompt, mut cached, mut completion) = (0u64, 0u64, 0u64, 0u64);
        for message in raw["messages"].as_array().expect("messages") {
            let usage = &message["extra"]["response"]["usage"];
            if message["role"] == "assistant" && usage.is_object() {
                replies += 1;
                prompt += usage["prompt_tokens"].as_u64().unwrap_or(0);
                cached += usage["prompt_tokens_details"]["cached_tokens"]
                    .as_u64()
                    .unwrap_or(0);
                completion += usage["completion_tokens"].as_u64().unwrap_or(0);
            }
        }
        let name = path.display().to_string();
        let session = sol_replay::reader::trajectory::read_trajectory(&name, &bytes)
            .unwrap_or_else(|error| panic!("{error}"));
        let replayed = replay_session(&session, &ReplayOptions::default());
        let branch = &replayed.branches[0];
        let reported = branch.sol_pi.reported;
        assert_eq!(reported.requests, replies, "{name}");
        assert_eq!(
            (reported.all_input(), reported.cache_read, reported.output),
            (prompt, cached, completion),
            "{name}"
        );
        assert_eq!(branch.sol_pi.layers[4].requests, replies, "{name}");
        // Plain Pi's side is the replies as billed (the run had no SoL-Pi).
        assert_eq!(branch.sol_pi.layers[0].input(), prompt, "{name}");
        assert_eq!(branch.sol_pi.layers[0].cache_read, cached, "{name}");
    }
}

/// The recent-outputs placement on every real session: never dearer than plain Pi (priced
/// from the providers' reports), its recalls a share of the results it replaced, and on the
/// long Pi session cheaper than the fixed rule.
#[test]
fn the_recent_outputs_placement_never_costs_more_than_plain_pi_on_a_real_session() {
    let Some(corpora) = shared_corpora() else {
        return;
    };
    let files = trajectories(&corpora);
    let mut sessions = Vec::new();
    for path in &files {
        #[allow(clippy::disallowed_methods)]
        let bytes = std::fs::read(path).expect("a trajectory");
        let name = path.display().to_string();
        let session = sol_replay::reader::trajectory::read_trajectory(&name, &bytes)
            .unwrap_or_else(|error| panic!("{error}"));
        sessions.push((name, session));
    }
    let large = corpora.join("pi-mono").join("large-session.jsonl");
    #[allow(clippy::disallowed_methods)]
    let bytes = std::fs::read(&large).expect("the Pi session");
    let name = large.display().to_string();
    let session = read_session(&name, bytes.as_slice()).unwrap_or_else(|error| panic!("{error}"));
    sessions.push((name, session));
    for (name, session) in &sessions {
        let replayed = replay_session(session, &ReplayOptions::default());
        let branch = &replayed.branches[0];
        let plain = branch.row(Policy::PlainPi);
        let recent = branch.row(Policy::RecentPack);
        assert!(
            recent.cost <= plain.cost,
            "{name}: {} > {}",
            recent.cost,
            plain.cost
        );
        assert!(recent.recalls_needed <= recent.results_replaced, "{name}");
        assert_eq!(recent.requests, plain.requests, "{name}");
    }
    let (_, pi) = sessions.last().expect("the Pi session");
    let replayed = replay_session(pi, &ReplayOptions::default());
    let branch = &replayed.branches[0];
    let recent = branch.row(Policy::RecentPack);
    assert!(recent.cost < branch.row(Policy::ObservationPack).cost);
    assert!(recent.results_replaced > branch.row(Policy::ObservationPack).results_replaced);
}

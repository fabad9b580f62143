//! The `sol-pi` binary as a user runs it: real processes on the workspace's recorded sessions
//! (`fixtures/sessions/corpus/`) and its broken variants (`fixtures/sessions/reader/`),
//! checking the exit code, what reaches stdout and what reaches stderr.
//!
//! The replay's own figures and tables belong to sol-replay and its snapshots; here only their
//! headings and rows are looked for. The help texts and the usage errors are snapshots
//! (`tests/snapshots/`).

#[macro_use]
extern crate sol_testkit;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use sol_testkit::Sandbox;

/// How each policy's row starts (the masking row names its N).
const POLICIES: [&str; 6] = [
    "Plain Pi",
    "SoL-Pi ObservationPack",
    "SoL-Pi ObservationPack + OCC",
    "Action Fusion",
    "Reducer candidates",
    "Masking",
];

/// The workspace root: the binary runs there, so file names in its output are relative.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

fn corpus(name: &str) -> String {
    format!("fixtures/sessions/corpus/{name}")
}

fn broken(name: &str) -> String {
    format!("fixtures/sessions/reader/{name}")
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn finished(output: Output) -> Run {
    Run {
        code: output.status.code().expect("an exit code, not a signal"),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    }
}

/// `sol-pi <args>` in the workspace root, stdout and stderr piped (so neither is a terminal).
fn sol_pi(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_sol-pi"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .expect("sol-pi runs");
    finished(output)
}

fn replay(args: &[&str]) -> Run {
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    sol_pi(&all)
}

fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|error| {
        panic!("stdout is not JSON ({error}):\n{}", run.stdout);
    })
}

fn assert_policy_rows(text: &str) {
    assert!(text.contains("SoL-Pi as replayed:"), "{text}");
    assert!(text.contains("Policies side by side:"), "{text}");
    for policy in POLICIES {
        assert!(
            text.lines().any(|line| line.starts_with(policy)),
            "no row {policy:?} in\n{text}"
        );
    }
}

#[test]
fn text_report_of_one_session() {
    let file = corpus("resume-1.6.0.jsonl");
    let run = replay(&[&file]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert!(
        run.stdout.starts_with(&format!("{file}\n=")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Active branch ending at "),
        "{}",
        run.stdout
    );
    assert_policy_rows(&run.stdout);
    assert!(run.stdout.contains(
        "a model it lacks at input $3.00, cache read $0.30, cache write $3.75, output $15.00."
    ));
    // One file: no totals.
    assert!(!run.stdout.contains("Totals over"), "{}", run.stdout);
}

#[test]
fn markdown_report() {
    let file = corpus("fork-0.84.2.jsonl");
    let run = replay(&["--md", &file]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(&format!("## {file}\n")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("\n### Active branch ending at "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("| Policy | Requests | Input tokens | Cost | Requests saved |"),
        "{}",
        run.stdout
    );
    for policy in POLICIES {
        assert!(run.stdout.contains(&format!("\n| {policy}")), "{policy}");
    }
}

#[test]
fn json_report_has_sessions_totals_policies_and_prices() {
    let file = corpus("resume-1.6.0.jsonl");
    let run = replay(&["--json", &file]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = json(&run);
    let sessions = report["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["file"], file.as_str());
    assert_eq!(sessions[0]["version"], 3);
    let branches = sessions[0]["branches"].as_array().expect("branches");
    assert_eq!(branches.len(), 1);
    assert_eq!(branches[0]["active"], true);
    let policies = branches[0]["policies"].as_array().expect("policies");
    let names: Vec<&str> = policies
        .iter()
        .map(|row| row["policy"].as_str().expect("a policy name"))
        .collect();
    assert_eq!(
        names,
        [
            "plainPi",
            "observationPack",
            "observationPackOcc",
            "cacheAwarePack",
            "cacheAwarePackOcc",
            "recentPack",
            "actionFusion",
            "reducerCandidates",
            "observationMasking"
        ]
    );
    for row in policies {
        for field in [
            "requests",
            "inputTokens",
            "requestsSaved",
            "inputTokensSaved",
            "resultsReplaced",
        ] {
            assert!(row[field].is_number(), "{field} in {row}");
        }
    }
    assert_eq!(report["totals"]["sessions"], 1);
    assert_eq!(report["totals"]["branches"], 1);
    assert_eq!(
        report["totals"]["policies"].as_array().map(Vec::len),
        Some(9)
    );
    assert!(report["totals"]["solPi"].is_object());
    assert_eq!(
        report["options"],
        serde_json::json!({
            "prices": { "input": 3.0, "cacheRead": 0.3, "cacheWrite": 3.75, "output": 15.0 },
            "maskKeep": 10,
            "allBranches": false,
            "occRatio": null,
            "contextWindow": 200_000,
            "keepRecentTokens": null,
            "placementRatio": 12.5,
            "keepRecentOutputs": 10,
            "cacheAware": false,
            "recentOutputs": false,
            "fromReports": true,
            "perModelPrices": true,
            "cacheLifetimeSeconds": 300,
        })
    );
    assert!(report["method"].is_string());
}

#[test]
fn options_reach_the_replay() {
    let file = corpus("resume-1.6.0.jsonl");
    let run = replay(&[
        "--json",
        "--mask-keep",
        "3",
        "--price-input",
        "1",
        "--price-cache-read",
        "0.125",
        "--price-cache-write",
        "2.5",
        "--price-output",
        "7",
        "--cache-write-read-ratio",
        "2.5",
        "--keep-recent-tokens",
        "150",
        "--context-window",
        "100000",
        "--keep-recent-outputs",
        "4",
        "--recent-outputs",
        &file,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        json(&run)["options"],
        serde_json::json!({
            "prices": { "input": 1.0, "cacheRead": 0.125, "cacheWrite": 2.5, "output": 7.0 },
            "maskKeep": 3,
            "allBranches": false,
            "occRatio": 2.5,
            "contextWindow": 100_000,
            "keepRecentTokens": 150,
            "placementRatio": 2.5,
            "keepRecentOutputs": 4,
            "cacheAware": false,
            "recentOutputs": true,
            "fromReports": true,
            // Prices given price every model.
            "perModelPrices": false,
            "cacheLifetimeSeconds": 300,
        })
    );
    // A ratio that is not one is a usage error.
    let bad = replay(&["--cache-write-read-ratio", "-1", &file]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("'--cache-write-read-ratio <RATIO>'"),
        "{}",
        bad.stderr
    );
    let text = replay(&["--price-cache-read", "0.5", &file]);
    assert!(text.stdout.contains("cache read $0.50"), "{}", text.stdout);
}

#[test]
fn several_files_are_added_up() {
    let files = [
        corpus("resume-1.6.0.jsonl"),
        corpus("fork-0.84.2.jsonl"),
        corpus("compaction-1.6.0.jsonl"),
    ];
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let run = replay(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for file in &files {
        assert!(run.stdout.contains(&format!("{file}\n")), "{file}");
    }
    assert!(
        run.stdout.contains("Totals over 3 sessions"),
        "{}",
        run.stdout
    );
    // Each file's section comes in the order given, the totals after them.
    let at = |text: &str| run.stdout.find(text).expect("present");
    assert!(at(&files[0]) < at(&files[1]) && at(&files[1]) < at(&files[2]));
    assert!(at(&files[2]) < at("Totals over 3 sessions"));

    let mut json_args = vec!["--json"];
    json_args.extend_from_slice(&args);
    let report = json(&replay(&json_args));
    let sessions = report["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 3);
    assert_eq!(report["totals"]["sessions"], 3);
    let requests = |row: &Value| row["requests"].as_u64().expect("requests");
    let plain_total: u64 = sessions
        .iter()
        .map(|session| requests(&session["branches"][0]["policies"][0]))
        .sum();
    assert_eq!(requests(&report["totals"]["policies"][0]), plain_total);
}

#[test]
fn all_branches_replays_each_leaf_of_a_fork() {
    let file = corpus("fork-0.84.2.jsonl");
    let active = json(&replay(&["--json", &file]));
    assert_eq!(
        active["sessions"][0]["branches"].as_array().map(Vec::len),
        Some(1)
    );
    let all = json(&replay(&["--json", "--all-branches", &file]));
    let branches = all["sessions"][0]["branches"].as_array().expect("branches");
    assert_eq!(branches.len(), 2);
    let actives: Vec<bool> = branches
        .iter()
        .map(|branch| branch["active"].as_bool().expect("active"))
        .collect();
    assert_eq!(actives.iter().filter(|&&active| active).count(), 1);
    assert_eq!(all["options"]["allBranches"], true);
    assert_eq!(all["totals"]["branches"], 2);

    let text = replay(&["--all-branches", &file]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert_eq!(text.stdout.matches("Policies side by side:").count(), 2);
}

#[test]
fn files_that_are_not_sessions_fail_with_their_file_and_line() {
    for (name, line) in [
        ("foreign.json", 1),
        ("foreign-events.jsonl", 1),
        ("unknown-version.jsonl", 1),
        ("empty.jsonl", 1),
        ("missing-id.jsonl", 12),
    ] {
        let file = broken(name);
        let run = replay(&[&file]);
        assert_eq!(run.code, 1, "{name}: {}", run.stderr);
        // No file could be read: nothing on stdout, one line on stderr.
        assert_eq!(run.stdout, "", "{name}");
        assert!(
            run.stderr.starts_with(&format!("sol-pi: {file}:{line}: ")),
            "{name}: {}",
            run.stderr
        );
        assert_eq!(run.stderr.lines().count(), 1, "{name}: {}", run.stderr);
    }
    let unknown = replay(&[&broken("unknown-version.jsonl")]);
    assert!(unknown.stderr.contains("version 4"), "{}", unknown.stderr);
}

/// `shared/corpora/` beside the repository (`<clone>/../shared/corpora`, or further up for a
/// git worktree placed deeper), where the real sessions are read in place.
fn shared_corpora() -> Option<PathBuf> {
    root()
        .ancestors()
        .skip(1)
        .map(|dir| dir.join("shared").join("corpora"))
        .find(|corpora| corpora.is_dir())
}

/// Pi's oldest session format (no header version, no entry ids), which Pi still opens: a
/// small file written the way Pi of 2025 wrote it, and the real session of pi-mono.
#[test]
#[allow(clippy::print_stderr)] // Who runs the test is told that a part was skipped.
fn a_session_of_format_1_is_replayed() {
    let small = broken("format-1.jsonl");
    let run = replay(&["--json", &small]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let report = json(&run);
    assert_eq!(report["sessions"][0]["file"], small.as_str(), "{report}");
    assert_eq!(report["sessions"][0]["version"], 1, "{report}");
    assert_eq!(report["sessions"][0]["entries"], 13, "{report}");

    let Some(corpora) = shared_corpora() else {
        eprintln!(
            "skipped the real session: no shared/corpora/ beside the repository \
             (expected at <clone>/../shared/corpora)"
        );
        return;
    };
    let file = corpora.join("pi-mono").join("large-session.jsonl");
    let file = file.to_str().expect("a UTF-8 path");
    let run = replay(&[file]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert!(
        run.stdout.contains("Pi session format 1, 1,018 entries"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(": 1,018 entries, 914 messages"),
        "{}",
        run.stdout
    );
    assert_policy_rows(&run.stdout);
}

#[test]
fn a_broken_file_does_not_stop_the_others() {
    let good = corpus("resume-1.6.0.jsonl");
    let other = corpus("fork-0.84.2.jsonl");
    let bad = broken("missing-id.jsonl");
    let run = replay(&[&good, &bad, &other]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with(&format!("sol-pi: {bad}:12: broken line: ")),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stdout.contains(&format!("{good}\n")));
    assert!(run.stdout.contains(&format!("{other}\n")));
    assert!(!run.stdout.contains(&bad));
    assert!(
        run.stdout.contains("Totals over 2 sessions"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_torn_last_line_is_a_warning() {
    let file = broken("torn-last.jsonl");
    let run = replay(&[&file]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let warning = run
        .stderr
        .strip_prefix(&format!("sol-pi: warning: {file}:"))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(warning.contains("the last line is cut short"), "{warning}");
    assert_eq!(run.stderr.lines().count(), 1);
    // The report carries it too.
    assert!(run.stdout.contains(&format!("{file}:")), "{}", run.stdout);
    assert!(
        run.stdout.contains("the last line is cut short"),
        "{}",
        run.stdout
    );
    assert_policy_rows(&run.stdout);
    let report = json(&replay(&["--json", &file]));
    assert_eq!(
        report["sessions"][0]["warnings"].as_array().map(Vec::len),
        Some(1)
    );
}

/// `sol-pi replay <args>`, given at most `limit` to finish: past it the process is killed
/// and the test fails (a command that hangs or fills memory must not hang the suite).
fn replay_within(args: &[&str], limit: std::time::Duration) -> Run {
    let child = Command::new(env!("CARGO_BIN_EXE_sol-pi"))
        .arg("replay")
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sol-pi runs");
    let pid = child.id();
    let (done, finished_run) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match finished_run.recv_timeout(limit) {
        Ok(output) => finished(output.expect("sol-pi's output")),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("sol-pi replay {args:?} did not finish within {limit:?}");
        }
    }
}

/// Generous: each of these runs takes well under a second once it is right.
const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_at_once_and_the_others_are_replayed() {
    let sandbox = Sandbox::new();
    let fifo = sandbox.path("session.jsonl");
    let made = Command::new("mkfifo")
        .arg(fifo.as_str())
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let good = corpus("resume-1.6.0.jsonl");
    // No writer ever opens the FIFO: a blocking open would wait for ever.
    let run = replay_within(&[fifo.as_str(), &good], LIMIT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "sol-pi: {fifo}: cannot be read: a FIFO (named pipe), not a regular file (a Pi session is a file)\n"
        )
    );
    assert!(
        run.stdout.starts_with(&format!("{good}\n")),
        "{}",
        run.stdout
    );
}

#[cfg(unix)]
#[test]
fn a_link_to_a_device_is_refused_and_the_others_are_replayed() {
    let sandbox = Sandbox::new();
    let link = sandbox.path("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", link.as_std_path()).expect("a link");
    let good = corpus("resume-1.6.0.jsonl");
    let run = replay_within(&[link.as_str(), &good], LIMIT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "sol-pi: {link}: cannot be read: a character device, not a regular file (a Pi session is a file)\n"
        )
    );
    assert!(
        run.stdout.starts_with(&format!("{good}\n")),
        "{}",
        run.stdout
    );
    // A link to a session is followed, as a link to any file.
    let to_good = sandbox.path("good.jsonl");
    std::os::unix::fs::symlink(root().join(&good), to_good.as_std_path()).expect("a link");
    let run = replay_within(&[to_good.as_str()], LIMIT);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
}

#[test]
fn a_file_over_the_size_limit_is_refused_unread() {
    let sandbox = Sandbox::new();
    let big = sandbox.path("big.jsonl");
    // Sparse: it takes no room and no time to make.
    let file = std::fs::File::create(big.as_std_path()).expect("a file");
    file.set_len(sol_pi_cli::READ_LIMITS.max_file_bytes + 1)
        .expect("a sparse file");
    drop(file);
    let good = corpus("resume-1.6.0.jsonl");
    let run = replay_within(&[big.as_str(), &good], LIMIT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "sol-pi: {big}: the file is 1073741825 bytes, more than the 1 GiB (1073741824 bytes) \
             this command reads of one session file; it is not read\n"
        )
    );
    assert!(
        run.stdout.starts_with(&format!("{good}\n")),
        "{}",
        run.stdout
    );
}

#[test]
fn a_line_over_the_line_limit_is_refused_and_the_others_are_replayed() {
    let sandbox = Sandbox::new();
    let long = sandbox.path("long.jsonl");
    // A header, then a sparse run of zero bytes with no line end, past the line limit.
    let header = std::fs::read(root().join(corpus("resume-1.6.0.jsonl"))).expect("corpus");
    let first = header
        .iter()
        .position(|&b| b == b'\n')
        .expect("a header line")
        + 1;
    std::fs::write(long.as_std_path(), &header[..first]).expect("written");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(long.as_std_path())
        .expect("opened");
    file.set_len(first as u64 + sol_pi_cli::READ_LIMITS.max_line_bytes + 10)
        .expect("a sparse tail");
    drop(file);
    let good = corpus("fork-0.84.2.jsonl");
    let run = replay_within(&[long.as_str(), &good], LIMIT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "sol-pi: {long}:2: the line is longer than 64 MiB (67108864 bytes), the most this \
             reader takes in one line of a session file; the file is not read\n"
        )
    );
    assert!(
        run.stdout.starts_with(&format!("{good}\n")),
        "{}",
        run.stdout
    );
}

#[test]
fn a_lone_surrogate_pi_wrote_is_read() {
    for version in ["1.6.0", "0.84.2"] {
        let file = broken(&format!("surrogate-{version}.jsonl"));
        let run = replay(&[&file]);
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{file}");
        assert_policy_rows(&run.stdout);
    }
}

#[test]
fn a_session_torn_by_a_crash_and_resumed_by_pi_is_replayed_with_one_warning() {
    for (version, line) in [("1.6.0", 13), ("0.84.2", 12)] {
        let file = broken(&format!("torn-resumed-{version}.jsonl"));
        let run = replay(&[&file]);
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(
            run.stderr.starts_with(&format!(
                "sol-pi: warning: {file}:{line}: a line cut short by a writer that stopped"
            )),
            "{}",
            run.stderr
        );
        assert_policy_rows(&run.stdout);
        // The branch runs on past the torn line: the resumed prompt's request is replayed.
        let report = json(&replay(&["--json", &file]));
        let session = &report["sessions"][0];
        assert_eq!(session["warnings"].as_array().map(Vec::len), Some(1));
        assert_eq!(session["branches"].as_array().map(Vec::len), Some(1));
    }
}

#[test]
fn a_missing_file_fails_and_the_others_are_printed() {
    let alone = replay(&["no-such-session.jsonl"]);
    assert_eq!(alone.code, 1);
    assert_eq!(alone.stdout, "");
    assert!(
        alone
            .stderr
            .starts_with("sol-pi: no-such-session.jsonl: cannot be opened: "),
        "{}",
        alone.stderr
    );
    let good = corpus("resume-1.6.0.jsonl");
    let with_good = replay(&["no-such-session.jsonl", &good]);
    assert_eq!(with_good.code, 1);
    assert_eq!(with_good.stderr, alone.stderr);
    assert!(with_good.stdout.starts_with(&format!("{good}\n")));
}

#[test]
fn a_directory_is_not_a_session() {
    let run = replay(&["fixtures/sessions/corpus"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with("sol-pi: fixtures/sessions/corpus"),
        "{}",
        run.stderr
    );
}

#[test]
fn prices_out_of_range_are_usage_errors() {
    let file = corpus("resume-1.6.0.jsonl");
    for (option, value) in [
        ("--price-input", "-1"),
        ("--price-cache-read", "NaN"),
        ("--price-cache-write", "inf"),
        ("--price-output", "2000000"),
    ] {
        let run = replay(&[option, value, &file]);
        assert_eq!(run.code, 2, "{option} {value}");
        assert_eq!(run.stdout, "");
        assert!(
            run.stderr.starts_with(&format!(
                "error: invalid value '{value}' for '{option} <DOLLARS>': "
            )),
            "{}",
            run.stderr
        );
    }
    let negative = replay(&["--price-cache-read", "-0.5", &file]);
    assert_text_snapshot!("error_price_out_of_range", negative.stderr);
    let word = replay(&["--price-output", "cheap", &file]);
    assert_eq!(word.code, 2);
    assert_text_snapshot!("error_price_not_a_number", word.stderr);
}

#[test]
fn usage_errors_exit_2() {
    let file = corpus("resume-1.6.0.jsonl");
    let both = replay(&["--json", "--md", &file]);
    assert_eq!(both.code, 2);
    assert_eq!(both.stdout, "");
    assert_text_snapshot!("error_json_and_md", both.stderr);
    let none = replay(&[]);
    assert_eq!(none.code, 2);
    assert_text_snapshot!("error_no_files", none.stderr);
    for args in [
        vec!["replay", "--mask-keep", "-1", &file],
        vec!["replay", "--no-such-option", &file],
        vec!["unknown-command"],
        vec![],
    ] {
        let run = sol_pi(&args);
        assert_eq!(run.code, 2, "{args:?}");
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(!run.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn help_and_version() {
    let help = sol_pi(&["--help"]);
    assert_eq!((help.code, help.stderr.as_str()), (0, ""));
    assert_text_snapshot!("help", help.stdout);
    let replay_help = sol_pi(&["replay", "--help"]);
    assert_eq!((replay_help.code, replay_help.stderr.as_str()), (0, ""));
    assert_text_snapshot!("help_replay", replay_help.stdout);
    let short = sol_pi(&["replay", "-h"]);
    assert_eq!(short.code, 0);
    assert_text_snapshot!("help_replay_short", short.stdout);
    assert_eq!(sol_pi(&["help", "replay"]).stdout, replay_help.stdout);
    let version = sol_pi(&["--version"]);
    assert_eq!(version.code, 0);
    assert_eq!(
        version.stdout,
        format!("sol-pi {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn the_input_files_are_not_changed() {
    let sandbox = Sandbox::new();
    let names = ["resume-1.6.0.jsonl", "fork-0.84.2.jsonl"];
    let mut before = Vec::new();
    for name in names {
        let bytes = std::fs::read(root().join(corpus(name))).expect("corpus file");
        sandbox.write(name, &bytes);
        before.push(bytes);
    }
    let torn = std::fs::read(root().join(broken("torn-last.jsonl"))).expect("torn file");
    sandbox.write("torn-last.jsonl", &torn);
    let bad = std::fs::read(root().join(broken("missing-id.jsonl"))).expect("broken file");
    sandbox.write("missing-id.jsonl", &bad);
    let stamp = |name: &str| {
        std::fs::metadata(sandbox.path(name))
            .and_then(|metadata| metadata.modified())
            .expect("modified time")
    };
    let stamps: Vec<_> = ["resume-1.6.0.jsonl", "torn-last.jsonl"]
        .map(stamp)
        .into_iter()
        .collect();
    let paths: Vec<String> = names
        .iter()
        .chain(&["torn-last.jsonl", "missing-id.jsonl"])
        .map(|name| sandbox.path(name).into_string())
        .collect();
    for extra in [&[][..], &["--json"], &["--md", "--all-branches"]] {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(paths.iter().map(String::as_str));
        let run = replay(&args);
        assert_eq!(run.code, 1, "{}", run.stderr);
    }
    for (name, bytes) in names.iter().zip(&before) {
        assert_eq!(&sandbox.read(name), bytes, "{name} changed");
    }
    assert_eq!(sandbox.read("torn-last.jsonl"), torn);
    assert_eq!(sandbox.read("missing-id.jsonl"), bad);
    let after: Vec<_> = ["resume-1.6.0.jsonl", "torn-last.jsonl"]
        .map(stamp)
        .into_iter()
        .collect();
    assert_eq!(after, stamps);
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    // Over the progress bar's threshold (8 MiB): a real session followed by blank lines, which
    // the reader passes over.
    let sandbox = Sandbox::new();
    let mut bytes = std::fs::read(root().join(corpus("resume-1.6.0.jsonl"))).expect("corpus");
    bytes.resize(bytes.len() + 9 * 1024 * 1024, b'\n');
    let big = sandbox.write("big.jsonl", &bytes);
    let run = replay(&[big.as_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // stderr is a pipe here: not one byte of a bar (no text, no escape, no carriage return).
    assert_eq!(run.stderr, "");
    assert!(run.stdout.contains("Policies side by side:"));
    assert!(!run.stdout.contains('\r') && !run.stdout.contains('\u{1b}'));
}

#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    // The reading end is closed before sol-pi writes: every write to stdout fails with EPIPE.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let files = [
        corpus("resume-1.6.0.jsonl"),
        corpus("fork-0.84.2.jsonl"),
        corpus("compaction-1.6.0.jsonl"),
    ];
    let output = Command::new(env!("CARGO_BIN_EXE_sol-pi"))
        .arg("replay")
        .args(&files)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("sol-pi runs");
    let run = finished(output);
    assert_eq!(run.code, 0);
    assert_eq!(run.stderr, "", "no panic, no message");
}

#[test]
fn a_mini_swe_agent_trajectory_replays_beside_a_pi_session() {
    let trajectory = "fixtures/sessions/trajectory/small.traj.json";
    let run = replay(&["--json", trajectory, &corpus("fork-0.84.2.jsonl")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = json(&run);
    let branch = &report["sessions"][0]["branches"][0];
    // Three replies, each a request priced from its usage at Claude Sonnet 4.5's prices.
    assert_eq!(branch["solPi"]["reported"]["requests"], 3);
    assert_eq!(branch["solPi"]["reported"]["cacheRead"], 330);
    assert_eq!(branch["solPi"]["layers"][0]["cacheRead"], 330);
    assert_eq!(
        branch["solPi"]["models"]["anthropic/claude-sonnet-4-5"]["prices"]["output"],
        15_000_000
    );
    assert_eq!(report["totals"]["sessions"], 2);
    // A JSON object that is not a trajectory of the format: one line, exit 1, the other file
    // still replayed.
    let dir = std::env::temp_dir().join(format!("sol-pi-cli-trajectory-{}", std::process::id()));
    #[allow(clippy::disallowed_methods)] // The test writes its own input.
    {
        std::fs::create_dir_all(&dir).expect("a temp folder");
        std::fs::write(
            dir.join("other.json"),
            "{\n  \"trajectory_format\": \"other-2\"\n}\n",
        )
        .expect("a file");
    }
    let other = dir.join("other.json").display().to_string();
    let run = replay(&[&other, &corpus("fork-0.84.2.jsonl")]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "sol-pi: {other}:1: not a mini-swe-agent trajectory this reader takes: its trajectory_format is \"other-2\", where this reader takes \"mini-swe-agent-1\""
        )
    );
    assert!(run.stdout.contains("fork-0.84.2.jsonl"), "{}", run.stdout);
    #[allow(clippy::disallowed_methods)]
    let _ = std::fs::remove_dir_all(&dir);
}

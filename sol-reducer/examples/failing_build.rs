//! A plain Rust host (no Pi types): it runs a failing test suite through the real shell,
//! then reduces the log twice with a canned reducer model, once with a receipt whose quotes
//! are in the log (accepted) and once with a quote that is not (rejected, the log is kept).
//! Run with `cargo run -p sol-reducer --features host --example failing_build`.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stdout,
    reason = "an example host: it picks its own directory and prints"
)]

use std::time::Duration;

use sol_reducer::camino::Utf8PathBuf;
use sol_reducer::command::CommandSet;
use sol_reducer::host::{OsFileSystem, OsShell};
use sol_reducer::serde_json::json;
use sol_reducer::sol_core::{FileSystem, ModelReply, Shell, ShellRequest};
use sol_reducer::step::{Reduction, Start};
use sol_reducer::{
    ExitStatus, Policy, ReduceContext, ReducerReply, Route, ShellResult, sha256_hex,
};

fn main() {
    // 1. A tiny "test suite" in a fresh directory: 300 passing tests, one failing, exit 1.
    let temp = std::env::temp_dir().join(format!("sol-reducer-example-{}", std::process::id()));
    let dir = Utf8PathBuf::from_path_buf(temp).expect("a UTF-8 temp path");
    let fs = OsFileSystem;
    fs.create_dir_private(&dir).expect("the example directory");
    let suite = "i=0; while [ $i -lt 300 ]; do echo \"test case_$i ... ok\"; i=$((i+1)); done\n\
                 echo 'test parser::rejects_empty ... FAILED'\necho 'assertion failed: tokens.is_empty()'\nexit 1\n";
    fs.create_new(&dir.join("run-tests.sh"), suite.as_bytes())
        .expect("the suite");

    // 2. Run it as the host's shell tool would (sh -c, output and errors in one stream).
    let command = "sh run-tests.sh";
    let request = ShellRequest {
        command: command.into(),
        cwd: dir.clone(),
        timeout: Some(Duration::from_secs(60)),
    };
    let ran = OsShell::new().run(&request).expect("sh runs");
    let (output, exit) = (ran.output, ExitStatus::from(ran.exit));
    println!(
        "ran `{command}`: {exit:?}, {} bytes of output",
        output.len()
    );

    // 3. Reduce it: the policy adds the suite's command to the default build/test commands.
    let policy = Policy {
        commands: CommandSet::default().with(command),
        shell_tool: "shell".into(),
    };
    let route = Route::new("canned", "receipt-writer");
    let root = dir.join("session");
    let context = ReduceContext {
        route: &route,
        runtime_root: &root,
        timestamp: "2025-06-01T12:00:00Z",
        policy: &policy,
    };
    let result = ShellResult {
        call_id: "1",
        command,
        exit,
        output: &output,
        full_output_log: None,
    };
    for quote in [
        "test parser::rejects_empty ... FAILED",
        "test parser::accepts_empty ... FAILED", // not in the log: the receipt is rejected
    ] {
        let Start::AskModel(ask) = Reduction::start(&result, &context, &fs, None) else {
            panic!("a candidate")
        };
        let mut journal = ask.journal; // a host appends these before the call
        let reply = canned_model(&output, quote);
        let answer = Ok(ReducerReply::from_model_reply(reply, &route));
        let done = ask.reduction.finish(answer, "2025-06-01T12:00:01Z", None);
        journal.extend(done.journal);

        // 4. What a harness author wants to see.
        let kinds: Vec<_> = journal
            .iter()
            .filter_map(|record| record["kind"].as_str())
            .collect();
        match done.decision.replacement() {
            Some(replaced) => {
                let text = replaced.receipt_text.replace(dir.as_str(), "<example dir>");
                println!(
                    "\naccepted: the model now reads this receipt instead of the log:\n{text}"
                );
            }
            None => {
                let reason = done.decision.reason().expect("a reason").code();
                println!("\nrejected ({reason}): the log is kept as it was");
            }
        }
        let account = done.account;
        println!("journal: {}", kinds.join(", "));
        println!(
            "saved {} bytes (~{} tokens); the reducer call used {} + {} tokens",
            account.bytes_removed,
            account.tokens_removed,
            account.model_input_tokens,
            account.model_output_tokens
        );
    }
}

/// The reducer model, canned: a receipt quoting `quote` as the failure.
fn canned_model(log: &str, quote: &str) -> ModelReply {
    let receipt = json!({
        "schema": "sol-pi-evidence-receipt/1",
        "source_sha256": sha256_hex(log.as_bytes()),
        "status": "failure",
        "uncertain": false,
        "evidence": [{"kind": "failure", "quote": quote}],
    });
    ModelReply::text(receipt.to_string()).with_usage(1800, 120)
}

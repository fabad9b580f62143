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
use sol_reducer::host::{OsFileSystem, OsShell};
use sol_reducer::serde_json::json;
use sol_reducer::sol_core::{FileSystem, ModelReply, Shell, ShellRequest};
use sol_reducer::{Policy, ReduceContext, Route, ShellResult, driver, sha256_hex};

fn main() {
    // 1. A tiny "test suite" in a fresh directory: 300 passing tests, one failing, exit 1.
    let temp = std::env::temp_dir().join(format!("sol-reducer-example-{:010}", std::process::id()));
    let dir = Utf8PathBuf::from_path_buf(temp).expect("a UTF-8 temp path");
    let fs = OsFileSystem;
    fs.create_dir_private(&dir).expect("the example directory");
    let suite = "i=0; while [ $i -lt 300 ]; do echo \"test case_$i ... ok\"; i=$((i+1)); done\n\
                 echo 'test parser::rejects_empty ... FAILED'\necho 'assertion failed: tokens.is_empty()'\nexit 1\n";
    fs.create_new(&dir.join("run-tests.sh"), suite.as_bytes())
        .expect("the suite");

    // 2. Run it as the host's shell tool would (sh -c, output and errors in one stream).
    let command = "sh run-tests.sh";
    let request = ShellRequest::new(command, dir.clone()).with_timeout(Duration::from_secs(60));
    let ran = OsShell::new().run(&request).expect("sh runs");
    let result = ShellResult::from_outcome("1", command, &ran);
    println!(
        "ran `{command}`: {}, {} bytes of output",
        result.exit,
        ran.output.len()
    );

    // 3. Reduce it: the policy adds the suite's command to the default build/test commands,
    //    and names the host's shell tool in the receipt; the archive goes under `session`.
    let policy = Policy::default()
        .with_command(command)
        .with_shell_tool("shell");
    let route = Route::new("canned", "receipt-writer");
    let root = dir.join("session");
    let context = ReduceContext::new(&route, &root, "2025-06-01T12:00:00Z").with_policy(&policy);
    for quote in [
        "test parser::rejects_empty ... FAILED",
        "test parser::accepts_empty ... FAILED", // not in the log: the receipt is rejected
    ] {
        let done = driver::reduce_with(&result, &context, &fs, None, |_request| {
            Ok(canned_model(&ran.output, quote))
        });

        // 4. What a harness author wants to see: the decision, the call, the journal, and
        //    the receipt the model reads instead of the log.
        println!("\n{done}");
        if let Some(receipt) = done.receipt_text() {
            let receipt = receipt.replace(dir.as_str(), "<example dir>");
            println!("the model now reads this receipt instead of the log:\n{receipt}");
        }
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

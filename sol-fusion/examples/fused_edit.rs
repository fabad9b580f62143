//! Action Fusion in a plain Rust host: an edit of a real file and its follow-up command,
//! run with the real shell through the driver, in one call.
//! Run with `cargo run -p sol-fusion --features host --example fused_edit`.

// An example host edits real files in a folder of its own: the OS calls the pure crate
// never makes are this host's job.
// It prints what the model would see.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use sol_fusion::driver::Session;
use sol_fusion::host::OsShell;
use sol_fusion::path::PathContext;

/// The host's own edit tool: replace `old` with `new` once in the file at `path`.
fn replace(path: &str, old: &str, new: &str) -> Result<&'static str, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path)?;
    if !text.contains(old) {
        return Err(format!("Could not find {old:?} in the file.").into());
    }
    std::fs::write(path, text.replacen(old, new, 1))?;
    Ok("Successfully replaced 1 block.")
}

// The model's `then_run` arguments: a check that passes after the first edit, fails after
// the second.
const PASSES: &str = r#"{"command":"grep -c planet greeting.txt","timeout":30}"#;
const FAILS: &str = r#"{"command":"grep -c planet greeting.txt"}"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("fused-edit-{:010}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("greeting.txt"), "hello world\n")?;
    let cwd = dir.to_str().ok_or("a UTF-8 folder")?;
    let shell = OsShell::new();
    let mut session = Session::new(PathContext::posix(cwd, cwd), &shell);

    // The model's two fused calls: an edit of greeting.txt and its check, each in one call.
    for (old, new, then_run) in [("world", "planet", PASSES), ("planet", "moon", FAILS)] {
        let edit = |target: Option<&str>| replace(target.unwrap_or_default(), old, new);
        let seen = session.call("greeting.txt", Some(then_run), edit);
        let flag = if seen.is_error {
            "error result"
        } else {
            "result"
        };
        let text = seen.to_string();
        println!("edit {old:?} -> {new:?}, {flag}:\n{}\n", text.trim_end());
    }
    let now = std::fs::read_to_string(dir.join("greeting.txt"))?;
    println!("file now: {now:?}");
    println!(
        "model requests avoided: {}",
        session.saved().requests_avoided
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

//! Action Fusion in a plain Rust host: an edit of a real file and its follow-up command,
//! run with the real shell through the driver, in one call.
//! Run with `cargo run -p sol-fusion --features host --example fused_edit`.

// An example host edits real files in a folder of its own: the OS calls the pure crate
// never makes are this host's job.
// It prints what the model would see.
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use sol_fusion::driver::{self, MutationHost};
use sol_fusion::fused::{Capabilities, Finish, FusedCallRequest, MutationResult};
use sol_fusion::guard::TargetLook;
use sol_fusion::host::OsShell;
use sol_fusion::path::{PathContext, Platform};

/// The host's own edit: replace `old` with `new` in the target.
struct Replace {
    old: &'static str,
    new: &'static str,
}

impl MutationHost for Replace {
    fn run_mutation(&mut self, target: Option<&str>) -> MutationResult {
        let edited = target.ok_or("no target".to_owned()).and_then(|path| {
            let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
            if !text.contains(self.old) {
                return Err(format!("Could not find {:?} in the file.", self.old));
            }
            std::fs::write(path, text.replacen(self.old, self.new, 1)).map_err(|e| e.to_string())
        });
        match edited {
            Ok(()) => MutationResult::Returned {
                texts: vec!["Successfully replaced 1 block.".to_owned()],
                is_error: false,
            },
            Err(message) => MutationResult::Threw { message },
        }
    }

    /// A look at the target: its bytes (a real host keeps a hash of them).
    fn look(&mut self, path: &str) -> TargetLook {
        match std::fs::read(path) {
            Ok(bytes) => TargetLook::Digest(String::from_utf8_lossy(&bytes).into_owned()),
            Err(error) => TargetLook::Unreadable(error.to_string()),
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("fused-edit-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("greeting.txt"), "hello world\n")?;
    let cwd = dir.to_str().ok_or("a UTF-8 folder")?;
    let ctx = PathContext {
        cwd,
        home: cwd,
        platform: Platform::Posix,
    };
    let capabilities = Capabilities {
        error_results_kept: true,
    };

    // The model's two calls: an edit checked by a command that passes, then one that fails.
    let calls = [
        (
            Replace {
                old: "world",
                new: "planet",
            },
            r#"{"command":"grep -c planet greeting.txt","timeout":30}"#,
        ),
        (
            Replace {
                old: "planet",
                new: "moon",
            },
            r#"{"command":"grep -c planet greeting.txt"}"#,
        ),
    ];
    let mut avoided = 0;
    for (mut edit, then_run) in calls {
        let request = FusedCallRequest {
            path: "greeting.txt",
            then_run_json: Some(then_run),
            ctx,
            capabilities,
            parent_tool_call_id: None,
        };
        let finish = driver::run_with_shell(&request, &mut edit, &OsShell::new(), cwd);
        let (flag, append, account) = match finish {
            Finish::Return {
                append, account, ..
            } => ("result", append, account),
            Finish::ReturnError { append, account } => ("error result", append, account),
            other => return Err(format!("unexpected end: {other:?}").into()),
        };
        println!(
            "edit {:?} -> {:?}, {flag}:\nSuccessfully replaced 1 block.\n{}\n",
            edit.old,
            edit.new,
            append.join("\n").trim_end()
        );
        avoided += account.requests_avoided;
    }
    println!(
        "file now: {:?}",
        std::fs::read_to_string(dir.join("greeting.txt"))?
    );
    println!("model requests avoided: {avoided}");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

//! Snapshots of every text a model or a person reads.

use serde_json::json;
use sol_fusion::guard::{self, TargetLook, Unguarded};
use sol_fusion::path::{PathContext, Platform, resolve_tool_path};
use sol_fusion::text::{self, MutationTool};
use sol_fusion::then_run::parse_then_run;

#[test]
fn markers() {
    let markers = [text::SUCCEEDED, text::FAILED, text::SKIPPED];
    assert_text_snapshot!("markers", markers.join("\n"));
}

#[test]
fn skipped_texts() {
    let texts = [
        text::skipped_after_mutation_failure(
            "Could not find the exact text in /work/app/src/a.ts. The old text must match exactly.",
        ),
        text::skipped_after_change(text::CHANGED_REASON),
        text::skipped_after_change(&text::unreadable_reason(
            "ENOENT: no such file or directory, open '/work/app/src/a.ts'",
        )),
    ];
    assert_text_snapshot!("skipped_texts", texts.join("\n---\n"));
}

#[test]
fn after_mutation_texts() {
    let block = text::skipped_after_change(text::CHANGED_REASON);
    let texts = [
        text::after_mutation("Successfully wrote 12 bytes to notes.md", &block),
        text::after_mutation("", &block),
    ];
    assert_text_snapshot!("after_mutation_texts", texts.join("\n---\n"));
}

#[test]
fn settings_unreadable_text() {
    assert_text_snapshot!(
        "settings_unreadable",
        text::settings_unreadable(
            "project settings /work/app/.pi/settings.json: Expected property name or '}' in JSON at position 2"
        )
    );
}

#[test]
fn succeeded_blocks() {
    let texts = [
        text::succeeded_block(""),
        text::succeeded_block("test result: ok. 3 passed; 0 failed"),
        text::succeeded_block("line 1\nline 2\n"),
    ];
    assert_text_snapshot!("succeeded_blocks", texts.join("\n---\n"));
}

#[test]
fn failed_texts() {
    let mutation = "Successfully wrote 42 bytes to src/main.ts";
    let texts = [
        text::failed_text(
            mutation,
            "error TS2322: Type 'string' is not assignable to type 'number'.\n\nCommand exited with code 2",
        ),
        text::failed_text(mutation, ""),
        text::failed_text("", "legacy command failure"),
        text::failed_text("", ""),
        text::failed_block("npm ERR! Test failed.\n\nCommand exited with code 1"),
        text::failed_block(""),
    ];
    assert_text_snapshot!("failed_texts", texts.join("\n---\n"));
}

#[test]
fn tui_texts() {
    let texts = [
        format!("label: {}", text::MECHANISM_LABEL),
        format!("saving: {}", text::SAVING),
        format!("badge title: {}", text::badge_title()),
        format!("badge saving: {}", text::badge_saving()),
        format!("notice:\n{}", text::savings_notice()),
        format!(
            "status [{}] for {} ms: {}",
            text::STATUS_KEY,
            text::STATUS_CLEAR_MS,
            text::status_text()
        ),
    ];
    assert_text_snapshot!("tui_texts", texts.join("\n"));
}

#[test]
fn schema_descriptions() {
    let texts = [
        format!(
            "edit then_run: {}",
            text::then_run_description(MutationTool::Edit)
        ),
        format!(
            "write then_run: {}",
            text::then_run_description(MutationTool::Write)
        ),
        format!("command: {}", text::command_description()),
        format!("timeout: {}", text::timeout_description()),
    ];
    assert_text_snapshot!("schema_descriptions", texts.join("\n"));
}

/// What the model and a person read in a harness whose shell is `sh` and whose file tools
/// have other names.
#[test]
fn schema_descriptions_with_other_names() {
    let texts = [
        format!(
            "edit then_run: {}",
            text::then_run_description_with(MutationTool::Edit, "sh")
        ),
        format!(
            "write then_run: {}",
            text::then_run_description_with(MutationTool::Write, "sh")
        ),
        format!("command: {}", text::command_description_with("sh")),
        text::inert_warning("str_replace_editor"),
        text::inert_warning("create_file"),
    ];
    assert_text_snapshot!("schema_descriptions_other_names", texts.join("\n"));
}

#[test]
fn inert_warnings() {
    let texts = [text::inert_warning("edit"), text::inert_warning("write")];
    assert_text_snapshot!("inert_warnings", texts.join("\n"));
}

#[test]
fn then_run_error_messages() {
    let values = [
        json!("npm test"),
        json!(["npm", "test"]),
        json!({"command": "npm test", "cwd": "/tmp"}),
        json!({"timeout": 30}),
        json!({"command": 42}),
        json!({"command": "   "}),
        json!({"command": "npm test", "timeout": 0}),
        json!({"command": "npm test", "timeout": -2.5}),
        json!({"command": "npm test", "timeout": "30"}),
        json!({"command": "npm test", "timeout": null}),
        json!({"command": "npm test", "timeout": 1e308}),
        json!({"command": "npm test", "timeout": 2_147_484}),
        json!({"command": "npm test\u{0}; rm -rf /"}),
    ];
    let texts: Vec<String> = values
        .iter()
        .map(|value| match parse_then_run(Some(value)) {
            Ok(parsed) => format!("{value}\nunexpectedly valid: {parsed:?}\n"),
            Err(error) => format!("{value}\n[{}] {error}\n", error.code()),
        })
        .collect();
    assert_text_snapshot!("then_run_error_messages", texts.join("\n"));
    // The length error, without echoing a 2 MB value.
    let long = json!({ "command": "x".repeat(2 * 1024 * 1024) });
    let error = parse_then_run(Some(&long)).expect_err("too long");
    assert_text_snapshot!(
        "then_run_command_too_long",
        format!("[{}] {error}", error.code())
    );
}

#[test]
fn guard_texts() {
    let mut texts: Vec<String> = Unguarded::ALL
        .into_iter()
        .map(|reason| format!("[{}] {}", reason.code(), guard::unguarded_note(reason)))
        .collect();
    let digest = |hex: &str| TargetLook::Digest(hex.to_owned());
    let unreadable = TargetLook::Unreadable("No such file or directory (os error 2)".to_owned());
    for (before, after) in [
        (digest("aa"), digest("bb")),
        (digest("aa"), TargetLook::Unguarded(Unguarded::Fifo)),
        (digest("aa"), unreadable.clone()),
        (TargetLook::Unguarded(Unguarded::Device), unreadable),
    ] {
        texts.push(format!(
            "{before:?} then {after:?}:\n{:?}",
            guard::decide(&before, &after)
        ));
    }
    assert_text_snapshot!("guard_texts", texts.join("\n"));
}

#[test]
fn path_error_messages() {
    let posix = PathContext {
        cwd: "/work/app",
        home: "/home/dev",
        platform: Platform::Posix,
    };
    let windows = PathContext {
        cwd: r"C:\work\app",
        home: r"C:\Users\dev",
        platform: Platform::Windows,
    };
    let cases = [
        ("", posix),
        ("@", posix),
        ("src/a\0.ts", posix),
        ("file:///work/app/a%2Fb.ts", posix),
        ("file:///C:/work/a%5Cb.ts", windows),
        ("file://buildbox/work/a.ts", posix),
        ("file://user@buildbox/share/a.ts", windows),
        ("file:///work/app/100%.ts", posix),
        ("file:///work/app/caf%E9.ts", posix),
        ("file:///work/app/a.ts", windows),
        (
            "x",
            PathContext {
                cwd: "work/app",
                ..posix
            },
        ),
        ("~/notes.md", PathContext { home: "", ..posix }),
    ];
    let texts: Vec<String> = cases
        .iter()
        .map(|(input, ctx)| match resolve_tool_path(input, ctx) {
            Ok(path) => format!(
                "{input:?} ({:?})\nunexpectedly resolved to {path}\n",
                ctx.platform
            ),
            Err(error) => format!(
                "{input:?} ({:?})\n[{}] {error}\n",
                ctx.platform,
                error.code()
            ),
        })
        .collect();
    assert_text_snapshot!("path_error_messages", texts.join("\n"));
}

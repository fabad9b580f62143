//! Shared builders: owned tool results, the fixture cases, receipts, and a harness over the
//! in-memory ports.

// Reading the fixture files needs std::fs, which clippy.toml forbids in the library.
#![allow(clippy::disallowed_methods)]

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::{Value, json};
use sol_core::message::ContentBlock;
use sol_core::testing::{MemoryFileSystem, MemorySessionStore, ScriptedModelClient};
use sol_reducer::archive::object_path;
use sol_reducer::driver::{Decision, Ports, ReduceContext, reduce};
use sol_reducer::economics::Economy;
use sol_reducer::{ENTRY_TYPE, Policy, ReceiptCache, Route, ToolResultView, sha256_hex};

/// The runtime root every test uses.
pub(crate) const ROOT: &str = "/home/dev/.pi/agent/sessions/--work-app--/sol-pi/session-a";
/// The OS temp directory every test uses.
pub(crate) const TEMP: &str = "/tmp";
/// The journal timestamp every test uses.
pub(crate) const TIMESTAMP: &str = "2025-06-01T12:00:00.000Z";

/// The default reducer route.
pub(crate) fn route() -> Route {
    Route::new("openai-codex", "gpt-5.6-luna")
}

/// A tool result with owned data, viewed as [`ToolResultView`].
#[derive(Debug, Clone)]
pub(crate) struct OwnedResult {
    pub(crate) tool_call_id: String,
    pub(crate) tool_name: String,
    pub(crate) input: Value,
    pub(crate) content: Vec<ContentBlock>,
    pub(crate) details: Option<Value>,
    pub(crate) is_error: bool,
    pub(crate) parent_tool_call_id: Option<String>,
    pub(crate) exit_code: Option<i32>,
}

impl OwnedResult {
    pub(crate) fn view(&self) -> ToolResultView<'_> {
        ToolResultView {
            tool_call_id: &self.tool_call_id,
            tool_name: &self.tool_name,
            input: &self.input,
            content: &self.content,
            details: self.details.as_ref(),
            is_error: self.is_error,
            parent_tool_call_id: self.parent_tool_call_id.as_deref(),
            exit_code: self.exit_code,
            os_temp_dir: Some(Utf8Path::new(TEMP)),
        }
    }

    /// The text of content block `index`.
    pub(crate) fn text(&self, index: usize) -> &str {
        self.content[index].as_text().expect("a text block")
    }
}

/// A `bash` result with one text block.
pub(crate) fn bash(command: &str, text: &str, is_error: bool) -> OwnedResult {
    OwnedResult {
        tool_call_id: "call_bash".to_owned(),
        tool_name: "bash".to_owned(),
        input: json!({"command": command}),
        content: vec![ContentBlock::text(text)],
        details: None,
        is_error,
        parent_tool_call_id: None,
        exit_code: None,
    }
}

/// A fused `tool` result (`edit` or `write`) with `then_run: {command}` and these blocks.
pub(crate) fn fused(tool: &str, command: &str, blocks: &[&str], is_error: bool) -> OwnedResult {
    OwnedResult {
        tool_call_id: format!("call_{tool}"),
        tool_name: tool.to_owned(),
        input: json!({"path": "src/lib.rs", "then_run": {"command": command}}),
        content: blocks
            .iter()
            .map(|text| ContentBlock::text(*text))
            .collect(),
        details: Some(json!({"diff": "-1 a\n+1 b", "patch": "@@ -1 +1 @@\n-a\n+b\n"})),
        is_error,
        parent_tool_call_id: None,
        exit_code: None,
    }
}

/// A failing Rust test log of about `tests` lines, with one failing test near the end.
pub(crate) fn failing_log(tests: usize) -> String {
    let mut log = format!("running {} tests\n", tests + 1);
    for index in 0..tests {
        log.push_str(&format!("test module_{index:03}::behaves ... ok\n"));
    }
    log.push_str("test parser::rejects_empty_input ... FAILED\n\nfailures:\n\n");
    log.push_str("---- parser::rejects_empty_input stdout ----\n");
    log.push_str("thread 'parser::rejects_empty_input' panicked at src/parser.rs:41:9:\n");
    log.push_str("assertion failed: tokens.is_empty()\n\n");
    log.push_str(&format!(
        "test result: FAILED. {tests} passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s\n\n"
    ));
    log.push_str("error: test failed, to rerun pass `--lib`\n");
    log
}

/// A passing Rust test log of about `tests` lines.
pub(crate) fn passing_log(tests: usize) -> String {
    let mut log = format!("running {tests} tests\n");
    for index in 0..tests {
        log.push_str(&format!("test module_{index:03}::behaves ... ok\n"));
    }
    log.push_str(&format!(
        "\ntest result: ok. {tests} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s\n"
    ));
    log
}

/// A receipt reply for the log hashed `sha256`.
pub(crate) fn receipt(sha256: &str, status: &str, evidence: &[(&str, &str)]) -> String {
    let evidence: Vec<Value> = evidence
        .iter()
        .map(|(kind, quote)| json!({"kind": kind, "quote": quote}))
        .collect();
    json!({
        "schema": "sol-pi-evidence-receipt/1",
        "source_sha256": sha256,
        "status": status,
        "uncertain": false,
        "evidence": evidence,
    })
    .to_string()
}

/// The good receipt for [`failing_log`].
pub(crate) fn failing_receipt(log: &str) -> String {
    receipt(
        &sha256_hex(log.as_bytes()),
        "failure",
        &[
            ("failure", "test parser::rejects_empty_input ... FAILED"),
            ("fatal", "assertion failed: tokens.is_empty()"),
            ("target", "error: test failed, to rerun pass `--lib`"),
        ],
    )
}

/// The good receipt for [`passing_log`].
pub(crate) fn passing_receipt(log: &str) -> String {
    let summary = log
        .lines()
        .find(|line| line.starts_with("test result: ok."))
        .expect("a summary line");
    receipt(
        &sha256_hex(log.as_bytes()),
        "success",
        &[("summary", summary)],
    )
}

/// The in-memory ports and everything `reduce` needs.
pub(crate) struct Harness {
    pub(crate) fs: MemoryFileSystem,
    pub(crate) model: ScriptedModelClient,
    pub(crate) session: MemorySessionStore,
    pub(crate) route: Route,
    pub(crate) os_temp_dir: Option<Utf8PathBuf>,
    pub(crate) economy: Option<Economy>,
}

impl Harness {
    pub(crate) fn new() -> Harness {
        Harness::with_fs(MemoryFileSystem::new().with_dir(TEMP))
    }

    pub(crate) fn with_fs(fs: MemoryFileSystem) -> Harness {
        Harness {
            fs,
            model: ScriptedModelClient::new(),
            session: MemorySessionStore::new(),
            route: route(),
            os_temp_dir: Some(Utf8PathBuf::from(TEMP)),
            economy: None,
        }
    }

    /// This harness under the cache-aware policy.
    pub(crate) fn with_economy(self, economy: Economy) -> Harness {
        Harness {
            economy: Some(economy),
            ..self
        }
    }

    pub(crate) fn replying(self, reply: impl Into<String>) -> Harness {
        self.model.push(Ok(sol_core::ModelReply::text(reply)));
        self
    }

    pub(crate) fn run(&self, result: &OwnedResult) -> Decision {
        self.run_with(result, None)
    }

    pub(crate) fn run_with(
        &self,
        result: &OwnedResult,
        cache: Option<&mut ReceiptCache>,
    ) -> Decision {
        let ports = Ports {
            fs: &self.fs,
            model: &self.model,
            session: &self.session,
        };
        let context = ReduceContext {
            route: &self.route,
            runtime_root: Utf8Path::new(ROOT),
            timestamp: TIMESTAMP,
            policy: Policy::pi(),
            economy: self.economy,
        };
        let view = ToolResultView {
            os_temp_dir: self.os_temp_dir.as_deref(),
            ..result.view()
        };
        reduce(&view, &ports, &context, cache)
    }

    /// Every journal record, oldest first (all of the reducer's entry type).
    pub(crate) fn journal(&self) -> Vec<Value> {
        journal_of(&self.session)
    }

    /// The `kind` of every journal record.
    pub(crate) fn kinds(&self) -> Vec<String> {
        self.journal()
            .iter()
            .map(|record| record["kind"].as_str().expect("a kind").to_owned())
            .collect()
    }

    /// The archived copy of `log`, if any.
    pub(crate) fn archived(&self, log: &str) -> Option<Vec<u8>> {
        self.fs.file(archive_path(log))
    }

    /// Whether anything was archived at all.
    pub(crate) fn archive_is_empty(&self) -> bool {
        let store = format!("{ROOT}/evidence-preserving-reducer");
        self.fs
            .paths()
            .iter()
            .all(|path| !path.as_str().starts_with(&store))
    }
}

/// Where `log` is archived.
pub(crate) fn archive_path(log: &str) -> Utf8PathBuf {
    object_path(
        &Utf8Path::new(ROOT).join("evidence-preserving-reducer"),
        &sha256_hex(log.as_bytes()),
    )
}

/// The reason of a decision, panicking on a replacement.
pub(crate) fn reason(decision: &Decision) -> &'static str {
    decision
        .reason()
        .unwrap_or_else(|| panic!("expected the result to stay unchanged, got {decision:?}"))
        .code()
}

/// One case of `fixtures/reducer/`.
pub(crate) struct Fixture {
    pub(crate) name: String,
    pub(crate) result: OwnedResult,
    /// The text of the block stored in `output.txt`.
    pub(crate) output: String,
    /// The scripted reply.
    pub(crate) receipt: String,
}

pub(crate) fn fixtures_dir() -> Utf8PathBuf {
    Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/reducer")
}

pub(crate) fn fixture(name: &str) -> Fixture {
    let dir = fixtures_dir().join(name);
    let read = |file: &str| {
        std::fs::read_to_string(dir.join(file))
            .unwrap_or_else(|error| panic!("{dir}/{file}: {error}"))
    };
    let output = read("output.txt");
    let event: Value = serde_json::from_str(&read("result.json")).expect("result.json is JSON");
    let content = event["content"]
        .as_array()
        .expect("content blocks")
        .iter()
        .map(|block| match block.get("textFile") {
            Some(_) => ContentBlock::text(output.clone()),
            None => serde_json::from_value(block.clone()).expect("a content block"),
        })
        .collect();
    let result = OwnedResult {
        tool_call_id: event["toolCallId"].as_str().expect("toolCallId").to_owned(),
        tool_name: event["toolName"].as_str().expect("toolName").to_owned(),
        input: event["input"].clone(),
        content,
        details: event.get("details").cloned(),
        is_error: event["isError"].as_bool().expect("isError"),
        parent_tool_call_id: None,
        exit_code: event
            .get("structuredContent")
            .and_then(sol_reducer::pi::structured_exit_code),
    };
    Fixture {
        name: name.to_owned(),
        result,
        output,
        receipt: read("receipt.json"),
    }
}

/// Every fixture case, by folder name.
pub(crate) fn fixtures() -> Vec<Fixture> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures/reducer exists")
        .filter_map(|entry| {
            let entry = entry.ok()?;
            entry
                .file_type()
                .ok()?
                .is_dir()
                .then(|| entry.file_name().into_string().ok())?
        })
        .collect();
    names.sort();
    names.iter().map(|name| fixture(name)).collect()
}

/// Every journal record in `session`, oldest first (all of the reducer's entry type).
pub(crate) fn journal_of(session: &MemorySessionStore) -> Vec<Value> {
    session
        .entries()
        .into_iter()
        .map(|entry| {
            assert_eq!(entry.custom_type, ENTRY_TYPE);
            entry.data
        })
        .collect()
}

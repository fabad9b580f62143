//! One function per target; see the crate documentation.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;
use sol_core::FileSystem;
use sol_core::testing::MemoryFileSystem;
use sol_fusion::path::{PathContext, Platform, resolve_tool_path};
use sol_obspack::ledger::{LedgerRecord, ledger_lines};
use sol_obspack::observation::{ObservationId, count_lines, observe};
use sol_obspack::policy::{
    QUERY_MAX_BYTES, QUERY_MAX_MATCHES, RECALL_CHUNK_MAX_BYTES, RECALL_CHUNK_MAX_LINES,
    RECALL_MAX_BYTES, RECALL_MAX_LINES,
};
use sol_obspack::{ObservationStore, recall_page, search_page};
use sol_occ::plan::{MAX_STEPS, analyze_transition, parse_update_plan_named};
use sol_reducer::receipt::{ReceiptCheck, validate_receipt};
use sol_reducer::secret::is_likely_secret;
use sol_reducer::sha256_hex;

use crate::{fields, text};

/// A JSON value from `bytes`, or the bytes as one JSON string when they are not JSON, so
/// both the shapes and the strings of tool arguments are reached.
fn json_or_string(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|_| Value::String(text(bytes)))
}

/// Config validation: `parse_config` over the raw file bytes.
///
/// The same answer twice; a valid config serialized and validated again is the same
/// config; a leading byte-order mark changes nothing.
pub fn config(data: &[u8]) {
    let path = Utf8Path::new("/project/.pi/sol-pi.json");
    let first = sol_core::parse_config(data, path);
    assert_eq!(
        first,
        sol_core::parse_config(data, path),
        "not deterministic"
    );
    if let Ok(config) = &first {
        let value = serde_json::to_value(config).expect("a config serializes");
        let again = sol_core::validate_config(&value, path)
            .unwrap_or_else(|error| panic!("a valid config read back is invalid: {error}"));
        assert_eq!(
            &again, config,
            "a valid config does not read back as itself"
        );
    }
    if !data.starts_with(b"\xEF\xBB\xBF") {
        let mut marked = b"\xEF\xBB\xBF".to_vec();
        marked.extend_from_slice(data);
        let marked = sol_core::parse_config(&marked, path);
        // Only an error's byte offset may move by the mark's three bytes.
        match (&marked, &first) {
            (Ok(with), Ok(without)) => assert_eq!(with, without, "a byte-order mark changed it"),
            (Err(with), Err(without)) => assert_eq!(
                (with.code(), with.key()),
                (without.code(), without.key()),
                "a byte-order mark changed the error"
            ),
            _ => panic!("a byte-order mark changed the outcome: {marked:?} / {first:?}"),
        }
    }
}

/// `update_plan` arguments: the whole call's JSON, under the default and another tool name.
///
/// A valid plan has 1 to `MAX_STEPS` steps with unique, non-empty ids; the transition from
/// it to itself is computed without panicking; the tool name changes errors only.
pub fn update_plan(data: &[u8]) {
    let args = json_or_string(data);
    let plan = parse_update_plan_named(&args, "update_plan");
    let other = parse_update_plan_named(&args, "plan_tool");
    assert_eq!(
        plan.is_ok(),
        other.is_ok(),
        "the tool name changed validity"
    );
    if let Ok(update) = plan {
        assert_eq!(
            Ok(&update),
            other.as_ref(),
            "the tool name changed the plan"
        );
        assert!(
            (1..=MAX_STEPS).contains(&update.steps.len()),
            "{} steps",
            update.steps.len()
        );
        let mut ids: Vec<&str> = update.steps.iter().map(|step| step.id.as_str()).collect();
        assert!(ids.iter().all(|id| !id.trim().is_empty()), "an empty id");
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), update.steps.len(), "duplicate step ids");
        let _ = analyze_transition(&update.steps, &update.steps);
        let _ = analyze_transition(&[], &update.steps);
        let _ = sol_occ::plan::remaining_steps(&update.steps);
    }
}

/// `then_run` arguments of a fused edit or write.
///
/// A parsed request's timeout is positive and its `Duration` agrees with the number the
/// model wrote.
pub fn then_run(data: &[u8]) {
    let value = json_or_string(data);
    let first = sol_fusion::then_run::parse_then_run(Some(&value));
    assert_eq!(
        format!("{first:?}"),
        format!("{:?}", sol_fusion::then_run::parse_then_run(Some(&value))),
        "not deterministic"
    );
    if let Ok(Some(run)) = first {
        assert!(
            !run.command.trim().is_empty(),
            "an empty command was accepted"
        );
        assert_eq!(run.timeout.is_some(), run.timeout_seconds.is_some());
        if let (Some(timeout), Some(seconds)) = (run.timeout, run.timeout_seconds) {
            assert!(!timeout.is_zero(), "a zero timeout");
            assert!(seconds > 0.0 && seconds.is_finite(), "timeout {seconds}");
        }
    }
}

/// Receipt JSON validation and quote verification.
///
/// Fields: the log, the reply (`$SHA256` in it stands for the log's hash, so a seed can be
/// a receipt of its own log), and a flags byte (bit 0: the result's error flag). A receipt
/// that passes quotes the log byte for byte: each quote occurs in the log, on the line it
/// names, under the hash it gives, once per kind.
pub fn receipt(data: &[u8]) {
    let parts = fields(data, 3);
    let log = text(parts[0]);
    let sha = sha256_hex(log.as_bytes());
    let reply = text(parts[1]).replace("$SHA256", &sha);
    let is_error = parts[2].first().is_some_and(|flags| flags & 1 == 1);
    let check = ReceiptCheck {
        log: &log,
        source_sha256: &sha,
        is_error,
    };
    let outcome = validate_receipt(&reply, &check);
    assert_eq!(
        outcome,
        validate_receipt(&reply, &check),
        "not deterministic"
    );
    let Ok(verified) = outcome else { return };
    assert_eq!(
        verified.status.as_str(),
        if is_error { "failure" } else { "success" }
    );
    let mut seen = Vec::new();
    for item in &verified.evidence {
        assert!(!item.quote.is_empty(), "an empty quote passed");
        let at = log
            .find(&item.quote)
            .unwrap_or_else(|| panic!("quote {:?} is not in the log", item.quote));
        let line = log.as_bytes()[..at]
            .iter()
            .filter(|byte| **byte == b'\n')
            .count() as u64
            + 1;
        assert_eq!(item.line, line, "wrong line for {:?}", item.quote);
        assert_eq!(item.quote_sha256, sha256_hex(item.quote.as_bytes()));
        assert!(
            !seen.contains(&(item.kind, &item.quote)),
            "duplicate evidence"
        );
        seen.push((item.kind, &item.quote));
    }
}

/// The forms of working and home directories a path is resolved against when the input
/// names none.
const POSIX_CWD: &str = "/work/app";
const POSIX_HOME: &str = "/home/dev";
const WINDOWS_CWD: &str = r"C:\work\app";
const WINDOWS_HOME: &str = r"C:\Users\dev";

/// Path resolution of a fused call's `path` argument, POSIX and Windows.
///
/// Fields: the path, then optionally the working and home directories. A resolved path is
/// absolute, has no NUL, and on POSIX is normalised (no empty, `.` or `..` segment, no
/// trailing `/`) and resolves to itself; a `file://` URL whose path still holds an encoded
/// separator once its dot segments are removed is refused (never decoded into a `/`).
pub fn path(data: &[u8]) {
    let parts = fields(data, 3);
    let input = text(parts[0]);
    let given_cwd = text(parts[1]);
    let given_home = text(parts[2]);
    let pick = |given: &str, default: &'static str| -> String {
        if given.is_empty() {
            default.to_owned()
        } else {
            given.to_owned()
        }
    };
    let posix_cwd = pick(&given_cwd, POSIX_CWD);
    let posix_home = pick(&given_home, POSIX_HOME);
    let windows_cwd = pick(&given_cwd, WINDOWS_CWD);
    let windows_home = pick(&given_home, WINDOWS_HOME);
    let posix = PathContext::posix(&posix_cwd, &posix_home);
    let windows = PathContext {
        cwd: &windows_cwd,
        home: &windows_home,
        platform: Platform::Windows,
    };
    for ctx in [posix, windows] {
        let first = resolve_tool_path(&input, &ctx);
        assert_eq!(first, resolve_tool_path(&input, &ctx), "not deterministic");
        if encoded_separator_in_file_url(&input, ctx.platform) {
            // Refused, whichever check refuses it first (a bad working directory, a foreign
            // host, a NUL): what must never happen is a path with the separator decoded.
            assert!(
                first.is_err(),
                "{input:?} on {:?}: an encoded separator gave {first:?}",
                ctx.platform
            );
        }
        let Ok(resolved) = first else { continue };
        assert!(!resolved.contains('\0'), "NUL in {resolved:?}");
        match ctx.platform {
            Platform::Posix => {
                assert!(resolved.starts_with('/'), "not absolute: {resolved:?}");
                if resolved != "/" {
                    for segment in resolved[1..].split('/') {
                        assert!(
                            !matches!(segment, "" | "." | ".."),
                            "not normalised: {resolved:?} from {input:?}"
                        );
                    }
                }
                // Decoding can yield a Unicode space, which a second pass would replace.
                if !resolved.chars().any(is_replaced_space) {
                    assert_eq!(
                        resolve_tool_path(&resolved, &ctx).as_deref(),
                        Ok(resolved.as_str()),
                        "a resolved path does not resolve to itself"
                    );
                }
            }
            Platform::Windows => {
                let bytes = resolved.as_bytes();
                let drive = bytes.len() >= 3
                    && bytes[0].is_ascii_alphabetic()
                    && bytes[1] == b':'
                    && bytes[2] == b'\\';
                assert!(
                    drive || resolved.starts_with(r"\\"),
                    "not absolute: {resolved:?} from {input:?}"
                );
            }
        }
    }
}

/// The Unicode spaces that resolution turns into an ASCII space.
fn is_replaced_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Whether `input`, read the way resolution reads it, is a `file://` URL whose path (before
/// `?` or `#`, once its dot segments are removed) holds `%2F`, or on Windows also `%5C`.
fn encoded_separator_in_file_url(input: &str, platform: Platform) -> bool {
    let spaced: String = input
        .chars()
        .map(|c| if is_replaced_space(c) { ' ' } else { c })
        .collect();
    let url = spaced.strip_prefix('@').unwrap_or(&spaced);
    let Some(rest) = url.strip_prefix("file://") else {
        return false;
    };
    // The URL parser drops tabs and newlines anywhere.
    let cleaned: String = rest
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let before_query = cleaned.split(['?', '#']).next().unwrap_or_default();
    // The host ends at the first separator; only the path after it counts.
    let Some(path_start) = before_query.find(['/', '\\']) else {
        return false;
    };
    // The URL parser removes dot segments (also percent-encoded ones) before the path is
    // decoded, so a segment a later `..` removes is never decoded at all.
    let mut segments: Vec<String> = Vec::new();
    for segment in before_query[path_start + 1..].split(['/', '\\']) {
        match segment.to_ascii_lowercase().as_str() {
            "." | "%2e" => {}
            ".." | ".%2e" | "%2e." | "%2e%2e" => {
                segments.pop();
            }
            lower => segments.push(lower.to_owned()),
        }
    }
    segments.iter().any(|segment| {
        segment.contains("%2f") || (platform == Platform::Windows && segment.contains("%5c"))
    })
}

/// Recall ids, offsets and queries over a stored original.
///
/// Fields: the id the model sent, the offset as decimal text, the query, the original.
/// An id is accepted only in its one well-formed spelling; a page is the original's bytes
/// from the offset within the page limits, never splitting a character, and paging from 0
/// reassembles the original; every match of a search is the query at its offset.
pub fn recall(data: &[u8]) {
    let parts = fields(data, 4);
    let id_text = text(parts[0]);
    if let Ok(id) = ObservationId::parse(&id_text) {
        assert_eq!(id.as_str(), id_text, "an id changed when parsed");
    }
    let id = ObservationId::parse(&id_text)
        .unwrap_or_else(|_| observe("bash", "call_0", "fuzz").id.clone());
    let offset = std::str::from_utf8(parts[1])
        .ok()
        .and_then(|digits| digits.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let query = text(parts[2]);
    let original = parts[3];

    match recall_page(&id, original, offset) {
        Ok(page) => check_recall_page(&page, original, offset),
        Err(_) => {
            let valid = std::str::from_utf8(original).is_ok_and(|text| {
                offset <= text.len() as u64 && text.is_char_boundary(offset as usize)
            });
            assert!(!valid, "recall refused a valid offset {offset}");
        }
    }
    if let Ok(text) = std::str::from_utf8(original) {
        let mut offset = 0u64;
        let mut rebuilt = String::new();
        loop {
            let page = recall_page(&id, original, offset).expect("a page at next_offset");
            check_recall_page(&page, original, offset);
            rebuilt.push_str(page.chunk());
            if page.details.eof {
                break;
            }
            assert!(page.details.next_offset > offset, "no progress at {offset}");
            offset = page.details.next_offset;
        }
        assert_eq!(rebuilt, text, "pages do not reassemble the original");
    }

    let Ok(page) = search_page(&id, original, &query, offset) else {
        return;
    };
    assert!(!query.is_empty() && query.len() <= QUERY_MAX_BYTES);
    assert!(
        page.text.len() <= RECALL_MAX_BYTES,
        "{} bytes",
        page.text.len()
    );
    assert!(
        count_lines(page.text.as_bytes()) as usize <= RECALL_MAX_LINES,
        "search page over the line limit"
    );
    let details = &page.details;
    assert!(details.matches.len() <= QUERY_MAX_MATCHES);
    assert!(details.next_offset >= offset && details.next_offset <= original.len() as u64);
    let mut previous = None;
    for found in &details.matches {
        let at = found.byte_offset as usize;
        assert!(found.byte_offset >= offset, "a match before the offset");
        assert!(
            original[at..].starts_with(query.as_bytes()),
            "a match that is not the query"
        );
        assert!(previous < Some(at), "matches out of order");
        previous = Some(at);
        let (start, end) = (found.context_start as usize, found.context_end as usize);
        assert!(start <= at && end <= original.len());
        assert_eq!(found.context.as_bytes(), &original[start..end]);
        let line = original[..at].iter().filter(|byte| **byte == b'\n').count() as u64 + 1;
        assert_eq!(found.line, line, "wrong line number");
    }
}

fn check_recall_page(page: &sol_obspack::RecallPage, original: &[u8], offset: u64) {
    let details = &page.details;
    let chunk = page.chunk();
    assert_eq!(details.offset, offset);
    assert_eq!(details.bytes, chunk.len() as u64);
    assert_eq!(details.next_offset, offset + details.bytes);
    assert_eq!(
        chunk.as_bytes(),
        &original[offset as usize..details.next_offset as usize],
        "a page is not the original's bytes"
    );
    assert!(
        chunk.len() <= RECALL_CHUNK_MAX_BYTES,
        "{} bytes",
        chunk.len()
    );
    assert!(
        count_lines(chunk.as_bytes()) as usize <= RECALL_CHUNK_MAX_LINES,
        "chunk over the line limit"
    );
    assert!(
        page.text.len() <= RECALL_MAX_BYTES,
        "page over the byte limit"
    );
    assert_eq!(details.eof, details.next_offset == original.len() as u64);
}

/// Placeholders of arbitrary tool output (and tool names).
///
/// Fields: the tool name, the text. The placeholder is deterministic, names the id and the
/// sizes, keeps its layout whatever the tool name holds, and its excerpts are the text's own
/// bytes.
pub fn placeholder(data: &[u8]) {
    let parts = fields(data, 2);
    let tool = text(parts[0]);
    let body = text(parts[1]);
    let obs = observe(&tool, "call_0", &body);
    assert_eq!(obs.bytes, body.len() as u64);
    assert_eq!(
        obs.id,
        observe(&tool, "another_call", &body).id,
        "the call id changed the id"
    );
    let shown = sol_obspack::placeholder(&obs, &body);
    assert_eq!(
        shown,
        sol_obspack::placeholder(&obs, &body),
        "not deterministic"
    );
    let lines: Vec<&str> = shown.split('\n').collect();
    assert_eq!(lines[1], format!("id: {}", obs.id), "layout broken");
    assert_eq!(lines[3], format!("original_bytes: {}", obs.bytes));
    let excerpt_start = shown
        .find("\n[first complete lines")
        .or_else(|| shown.find("\n[no complete line fits"))
        .expect("a head excerpt header");
    let excerpts = &shown[excerpt_start..];
    for excerpt_line in excerpts.split('\n').filter(|line| !line.starts_with('[')) {
        assert!(
            body.contains(excerpt_line),
            "excerpt line {excerpt_line:?} is not in the text"
        );
    }
}

/// The records SoL-Pi reads back from disk or from the session: ObservationPack ledger
/// lines, the savings totals entry, OCC's saved state.
///
/// A record that reads is written back the same way and reads again as itself.
pub fn ledger(data: &[u8]) {
    let value = json_or_string(data);
    if let Ok(record) = serde_json::from_value::<LedgerRecord>(value.clone()) {
        let line = ledger_lines(std::slice::from_ref(&record), "2026-01-01T00:00:00.000Z");
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let back: LedgerRecord = serde_json::from_str(&line).expect("a written line reads back");
        assert_eq!(back, record, "a ledger record changed in a round trip");
    }
    if let Ok(savings) = sol_core::savings::Savings::from_entry_data(&value) {
        let written = savings.to_entry_data();
        let back = sol_core::savings::Savings::from_entry_data(&written)
            .expect("written totals read back");
        assert_eq!(
            back.to_entry_data(),
            written,
            "totals changed in a round trip"
        );
    }
    let options = sol_occ::settings::OccOptions::default();
    if let Ok(session) = sol_occ::session::OccSession::from_state_value(options, &value) {
        let written = serde_json::to_value(session.state()).expect("a state serializes");
        let back = sol_occ::session::OccSession::from_state_value(options, &written)
            .expect("a written state reads back");
        assert_eq!(
            back.state(),
            session.state(),
            "state changed in a round trip"
        );
    }
}

/// The verified archive over what a crash or another process left on disk.
///
/// Fields: the original, a selector byte, the bytes found in place of a file. A real
/// observation is archived, then the object, its record or the ledger is overwritten with
/// the found bytes; a verified read returns exactly the original or an error, and a read
/// that heals from history returns exactly the original.
pub fn store(data: &[u8]) {
    let parts = fields(data, 3);
    let original = format!("{}{}", text(parts[0]), "x".repeat(10 * 1024 + 1));
    let which = parts[1].first().copied().unwrap_or(0) % 3;
    let found = parts[2];
    let fs = MemoryFileSystem::new();
    let dir = Utf8PathBuf::from("/sessions/sol-pi/s1/observation-pack");
    let store = ObservationStore::new(&fs, dir.clone());
    let obs = observe("bash", "call_1", &original);
    store
        .ensure_stored(&obs, &original)
        .expect("a fresh archive stores");
    let target = match which {
        0 => store.object_path(&obs.id),
        1 => store.record_path(&obs.id),
        _ => store.ledger_path(),
    };
    fs.replace_private(&target, found).expect("damage written");
    match store.read_verified(&obs.id) {
        Ok(bytes) => assert_eq!(bytes, original.as_bytes(), "verified read gave other bytes"),
        Err(failure) => {
            let history = [("bash", "call_1", original.as_str())];
            let (bytes, _) = store
                .read_or_rebuild(&obs.id, failure, history)
                .expect("history heals the archive");
            assert_eq!(bytes, original.as_bytes(), "a healed read gave other bytes");
        }
    }
    let (bytes, _) = store
        .read_or_rebuild(
            &obs.id,
            sol_obspack::RecallError::UnknownId {
                id: obs.id.as_str().to_owned(),
            },
            [("bash", "call_1", original.as_str())],
        )
        .expect("a second heal");
    assert_eq!(bytes, original.as_bytes());
}

/// Pi session files, line by line.
///
/// The same answer whatever the read buffer's size; a file that reads has at most one
/// entry per line; the branch walk ends.
pub fn session(data: &[u8]) {
    let whole = sol_replay::read_session("fuzz.jsonl", data);
    let small = sol_replay::read_session("fuzz.jsonl", std::io::BufReader::with_capacity(7, data));
    assert_eq!(whole, small, "the buffer size changed the outcome");
    let Ok(session) = whole else { return };
    assert!(session.entries().len() as u64 <= session.lines());
    assert_eq!(session.bytes(), data.len() as u64);
    let branch = session.active_branch();
    assert!(branch.len() <= session.entries().len());
    for branch in session.branches() {
        assert!(branch.len() <= session.entries().len());
    }
}

/// The secret gate: a text with a line the gate judges a secret is itself judged one, so
/// no framing around a credential lets it leave the machine.
pub fn secret_gate(data: &[u8]) {
    let body = text(data);
    let whole = is_likely_secret(&body);
    assert_eq!(whole, is_likely_secret(&body), "not deterministic");
    if !whole {
        for line in body.lines() {
            assert!(
                !is_likely_secret(line),
                "line {line:?} is a secret alone but not inside its text"
            );
        }
    }
}

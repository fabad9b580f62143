//! The whole reducer for a Rust host, over the ports: one call per tool result.
//!
//! A Pi extension runs the same steps itself, because its model call is asynchronous; this
//! driver shows the order they must run in and is what the end-to-end tests exercise:
//!
//! 1. [`select_candidate`] (no I/O, nothing journaled when the result is not a candidate);
//! 2. read Pi's full-output file when the candidate names a trusted one
//!    ([`read_full_output`]);
//! 3. [`prepare_source`]: size bounds, exit signal, secret gate;
//! 4. archive the log ([`archive_source`]) and journal `candidate`, before any model call;
//! 5. reuse a cached receipt after verifying it against the archive ([`reuse_cached`]), or
//!    call the model with [`model_request`] and check its reply ([`apply_reply`]);
//! 6. journal `applied` and return the replacement, or journal `fallback` and leave the
//!    result unchanged.
//!
//! Journal writes are best effort: a session store that fails does not change the
//! decision, since the archive already holds the evidence.

use camino::Utf8Path;
use serde_json::Value;
use sol_core::{FileKind, FileSystem, ModelClient, SessionStore};

use crate::archive::{archive_source, read_archived, store_root};
use crate::cache::{CacheKey, CachedReceipt, ReceiptCache, reuse_cached};
use crate::candidate::{Candidate, ToolResultView, select_candidate};
use crate::journal::{
    JournalHeader, applied_record, cache_hit_record, candidate_record, fallback_record,
    provider_response_record, run_id,
};
use crate::model::{ReducerReply, Route, fallback_for_model_error, model_request};
use crate::reason::{Fallback, ReasonCode};
use crate::render::{Replacement, apply_reply};
use crate::source::{FullOutput, prepare_source};
use crate::{ENTRY_TYPE, MAX_FULL_OUTPUT_BYTES};

/// The ports the driver performs its I/O through.
#[derive(Clone, Copy)]
pub struct Ports<'a> {
    /// Archive writes and the full-output read.
    pub fs: &'a dyn FileSystem,
    /// The reducer model.
    pub model: &'a dyn ModelClient,
    /// The journal.
    pub session: &'a dyn SessionStore,
}

/// Everything besides the result and the ports.
#[derive(Debug, Clone, Copy)]
pub struct ReduceContext<'a> {
    /// The reducer model.
    pub route: &'a Route,
    /// The session's runtime root (`<sessionDir>/sol-pi/<sessionId>`); the archive lives
    /// in its `evidence-preserving-reducer` directory.
    pub runtime_root: &'a Utf8Path,
    /// The real OS temp directory, where Pi writes full-output files; `None` never reads
    /// one.
    pub os_temp_dir: Option<&'a Utf8Path>,
    /// The time of the decision, for journal records.
    pub timestamp: &'a str,
}

/// What to do with a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Return this reduced result instead.
    Replaced(Box<Replacement>),
    /// Keep the original result, for this reason.
    Unchanged(ReasonCode),
}

impl Decision {
    /// The replacement, if the log was reduced.
    pub fn replacement(&self) -> Option<&Replacement> {
        match self {
            Decision::Replaced(replacement) => Some(replacement),
            Decision::Unchanged(_) => None,
        }
    }

    /// The reason, if the result is kept.
    pub fn reason(&self) -> Option<ReasonCode> {
        match self {
            Decision::Replaced(_) => None,
            Decision::Unchanged(reason) => Some(*reason),
        }
    }
}

/// Reads Pi's full-output file for `candidate` when it names a trusted one: a regular file
/// (checked without following links), read without following a link, within
/// [`MAX_FULL_OUTPUT_BYTES`], in UTF-8.
pub fn read_full_output(
    fs: &dyn FileSystem,
    candidate: &Candidate,
    os_temp_dir: &Utf8Path,
) -> FullOutput {
    let Some(path) = candidate.trusted_full_output_path(os_temp_dir) else {
        return FullOutput::NotRead;
    };
    match fs.metadata(path) {
        Ok(Some(metadata)) if metadata.kind == FileKind::File => {}
        Ok(Some(_)) => return FullOutput::Unavailable(format!("not a regular file: {path}")),
        Ok(None) => return FullOutput::Unavailable(format!("no such file: {path}")),
        Err(error) => return FullOutput::Unavailable(error.to_string()),
    }
    match fs.read_no_follow(path, MAX_FULL_OUTPUT_BYTES) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => FullOutput::Read(text),
            Err(_) => FullOutput::Unavailable(format!("not UTF-8: {path}")),
        },
        Err(error) => FullOutput::Unavailable(error.to_string()),
    }
}

/// Runs the reducer on one tool result; see the module documentation. `cache`, when given,
/// is consulted before the model call and filled after a fresh receipt is applied.
pub fn reduce(
    result: &ToolResultView<'_>,
    ports: &Ports<'_>,
    context: &ReduceContext<'_>,
    mut cache: Option<&mut ReceiptCache>,
) -> Decision {
    let run = run_id(context.runtime_root);
    let header = JournalHeader {
        run_id: &run,
        timestamp: context.timestamp,
    };
    let journal = |record: Value| {
        // Best effort: the decision stands whatever the session store does.
        let _ = ports.session.append_custom(ENTRY_TYPE, &record);
    };
    let unchanged = |fallback: Fallback| {
        if fallback.reason.is_journaled() {
            journal(fallback_record(&header, result.tool_call_id, &fallback));
        }
        Decision::Unchanged(fallback.reason)
    };

    let candidate = match select_candidate(result) {
        Ok(candidate) => candidate,
        Err(fallback) => return unchanged(fallback),
    };
    let full_output = match context.os_temp_dir {
        Some(temp) => read_full_output(ports.fs, &candidate, temp),
        None => FullOutput::NotRead,
    };
    let source = match prepare_source(candidate, full_output) {
        Ok(source) => source,
        Err(fallback) => return unchanged(fallback),
    };
    let archive_fallback = |error: &dyn std::fmt::Display| {
        Fallback::new(ReasonCode::ArchiveFailure).with(|facts| {
            facts.source_sha256 = Some(source.sha256().to_owned());
            facts.detail = Some(error.to_string());
        })
    };
    let archived = match archive_source(ports.fs, &store_root(context.runtime_root), &source) {
        Ok(archived) => archived,
        Err(error) => return unchanged(archive_fallback(&error)),
    };
    journal(candidate_record(&header, &source, &archived));

    let key = CacheKey::new(&source, context.route);
    if let Some(cache) = cache.as_deref_mut()
        && let Some(cached) = cache.get(&key)
    {
        journal(cache_hit_record(
            &header,
            &source,
            &cached.provider,
            &cached.model,
        ));
        let reused = read_archived(ports.fs, &archived.path, &archived.sha256, archived.bytes)
            .map_err(|error| archive_fallback(&error))
            .and_then(|text| reuse_cached(&source, &archived, &text, &cached));
        return match reused {
            Ok(replacement) => {
                journal(applied_record(&header, &source, &replacement));
                Decision::Replaced(Box::new(replacement))
            }
            Err(fallback) => {
                cache.remove(&key);
                unchanged(fallback)
            }
        };
    }

    let request = model_request(&source, context.route);
    let reply = match ports.model.complete(&request) {
        Ok(reply) => ReducerReply::from_text(reply.text, context.route),
        Err(error) => {
            return unchanged(
                fallback_for_model_error(&error)
                    .with(|facts| facts.source_sha256 = Some(source.sha256().to_owned())),
            );
        }
    };
    journal(provider_response_record(&header, &source, &reply));
    match apply_reply(&source, &archived, &reply) {
        Ok(replacement) => {
            journal(applied_record(&header, &source, &replacement));
            if let Some(cache) = cache {
                cache.insert(key, CachedReceipt::from_reply(&reply));
            }
            Decision::Replaced(Box::new(replacement))
        }
        Err(fallback) => unchanged(fallback),
    }
}

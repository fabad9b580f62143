//! The driver as it was before the step API, kept as the oracle of the step properties
//! (`step.rs`): the same calls in the same order, over the ports, with no step in between.

use serde_json::Value;
use sol_core::{FileKind, FileSystem};
use sol_reducer::archive::{read_archived, store_root};
use sol_reducer::cache::{CacheKey, CachedReceipt, ReceiptCache, reuse_cached};
use sol_reducer::candidate::Candidate;
use sol_reducer::journal::{
    JournalHeader, applied_record, cache_hit_record, candidate_record, fallback_record,
    provider_response_record, run_id,
};
use sol_reducer::model::{ReducerReply, fallback_for_model_error, model_request};
use sol_reducer::render::apply_reply;
use sol_reducer::source::{FullOutput, prepare_source};
use sol_reducer::{
    Decision, ENTRY_TYPE, Fallback, MAX_FULL_OUTPUT_BYTES, Ports, ReasonCode, ReduceContext,
    ToolResultView, select_candidate,
};

fn read_full_output(fs: &dyn FileSystem, candidate: &Candidate) -> FullOutput {
    let Some(path) = candidate.full_output_log.as_deref() else {
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

/// The old `driver::reduce`.
pub(crate) fn reduce(
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
    let full_output = read_full_output(ports.fs, &candidate);
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
    let archived = match source.archive(ports.fs, &store_root(context.runtime_root)) {
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

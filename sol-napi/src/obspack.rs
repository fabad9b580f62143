//! ObservationPack exports: each large result crosses in once (`obs_prepare`:
//! eligibility, identity, archive, placeholder), the ledger is appended once per
//! `context` event, and `obs_recall` pages or searches a verified original.

use camino::Utf8PathBuf;
use napi_derive::napi;
use serde_json::Value;
use sol_obspack::{
    FULL_SENDS, LedgerRecord, Observation, ObservationId, ObservationStore, RecallError,
    StoreOutcome, THRESHOLD_BYTES, is_packable, placeholder, placeholder_tokens, recall_page,
    removed_tokens, search_page, text,
};

use crate::NativeFileSystem;
use crate::boundary::quiet;

/// The numbers the host's walk needs.
#[napi(object)]
pub struct ObsPolicy {
    /// Results over this many UTF-8 bytes are packed.
    pub threshold_bytes: u32,
    /// Requests that carry a result in full before it is replaced.
    pub full_sends: u32,
}

/// The policy numbers.
#[napi(catch_unwind)]
pub fn obs_policy() -> ObsPolicy {
    quiet(|| ObsPolicy {
        threshold_bytes: u32::try_from(THRESHOLD_BYTES).unwrap_or(u32::MAX),
        full_sends: FULL_SENDS,
    })
}

/// Fixed texts of ObservationPack for the tool and the TUI.
#[napi(object)]
pub struct ObsTexts {
    /// `obs_recall` label.
    pub tool_label: String,
    /// `obs_recall` description.
    pub tool_description: String,
    /// `obs_recall` prompt snippet.
    pub prompt_snippet: String,
    /// Description of `id`.
    pub id_description: String,
    /// Description of `offset`.
    pub offset_description: String,
    /// Description of `query`.
    pub query_description: String,
    /// First badge line.
    pub badge_title: String,
    /// Second badge line of a recall row.
    pub badge_saving: String,
    /// Result label while a recall runs.
    pub recall_partial: String,
}

/// The fixed texts, fetched once at registration.
#[napi(catch_unwind)]
pub fn obs_texts() -> ObsTexts {
    quiet(|| ObsTexts {
        tool_label: text::TOOL_LABEL.to_owned(),
        tool_description: text::tool_description(),
        prompt_snippet: text::prompt_snippet().to_owned(),
        id_description: text::id_description().to_owned(),
        offset_description: text::offset_description().to_owned(),
        query_description: text::query_description(),
        badge_title: text::badge_title(),
        badge_saving: text::recall_badge_saving(),
        recall_partial: text::RECALL_PARTIAL_LABEL.to_owned(),
    })
}

/// A text-only, non-error tool result whose text is well-formed UTF-16 (the host sends
/// nothing else: a lone surrogate would arrive here as U+FFFD).
#[napi(object)]
pub struct ObsCandidate {
    /// Its tool call id (information for the ledger, not part of the identity).
    pub tool_call_id: String,
    /// The tool that produced it.
    pub tool_name: String,
    /// Its text blocks joined with `\n`.
    pub text: String,
}

/// What Rust made of a candidate. `eligible` false: never packed; `error` set:
/// the archive failed, keep the result in full this time.
#[napi(object)]
#[derive(Clone)]
pub struct ObsPrepared {
    /// Large enough and not an evidence receipt.
    pub eligible: bool,
    /// Why it could not be archived (fail open).
    pub error: Option<String>,
    /// Observation id.
    pub id: Option<String>,
    /// Tool name.
    pub tool_name: Option<String>,
    /// Tool call id.
    pub tool_call_id: Option<String>,
    /// SHA-256 of the original, hex.
    pub content_hash: Option<String>,
    /// Original size in UTF-8 bytes.
    pub bytes: Option<f64>,
    /// Original lines.
    pub lines: Option<f64>,
    /// Original estimated tokens.
    pub tokens: Option<f64>,
    /// The placeholder that replaces it after the full sends.
    pub placeholder: Option<String>,
    /// Tokens the placeholder saves per request.
    pub removed_tokens: Option<f64>,
}

impl ObsPrepared {
    fn skipped() -> Self {
        Self::failed(None)
    }

    fn failed(error: Option<String>) -> Self {
        Self {
            eligible: false,
            error,
            id: None,
            tool_name: None,
            tool_call_id: None,
            content_hash: None,
            bytes: None,
            lines: None,
            tokens: None,
            placeholder: None,
            removed_tokens: None,
        }
    }

    fn observation(&self) -> Option<(Observation, &str)> {
        let id = ObservationId::parse(self.id.as_deref()?).ok()?;
        let observation = Observation {
            id,
            tool_name: self.tool_name.clone()?,
            tool_call_id: self.tool_call_id.clone()?,
            content_hash: self.content_hash.clone()?,
            bytes: self.bytes? as u64,
            lines: self.lines? as u64,
            tokens: self.tokens? as u64,
        };
        Some((observation, self.placeholder.as_deref()?))
    }
}

fn store(dir: &str) -> ObservationStore<'static> {
    ObservationStore::new(&NativeFileSystem, Utf8PathBuf::from(dir))
}

fn prepare_one(
    store: &ObservationStore<'_>,
    candidate: &ObsCandidate,
    repaired: &mut Vec<LedgerRecord>,
) -> ObsPrepared {
    if !is_packable(&candidate.text) {
        return ObsPrepared::skipped();
    }
    // One SHA-256 of the text: the store derives the observation it archives.
    let (observation, stored) = store.observe_and_store(
        &candidate.tool_name,
        &candidate.tool_call_id,
        &candidate.text,
    );
    match stored {
        Ok(StoreOutcome::Repaired(damage)) => {
            repaired.push(LedgerRecord::repaired(&observation.id, &damage));
        }
        Ok(_) => {}
        Err(error) => return ObsPrepared::failed(Some(text::fail_open(&error.to_string()))),
    }
    let replacement = placeholder(&observation, &candidate.text);
    let removed = removed_tokens(observation.tokens, placeholder_tokens(&replacement));
    ObsPrepared {
        eligible: true,
        error: None,
        id: Some(observation.id.as_str().to_owned()),
        tool_name: Some(observation.tool_name),
        tool_call_id: Some(observation.tool_call_id),
        content_hash: Some(observation.content_hash),
        bytes: Some(observation.bytes as f64),
        lines: Some(observation.lines as f64),
        tokens: Some(observation.tokens as f64),
        placeholder: Some(replacement),
        removed_tokens: Some(removed as f64),
    }
}

/// Decides, archives and builds placeholders for new candidates, in order. A damaged
/// object or record found on the way is rebuilt from the candidate's text and recorded in
/// the ledger (`repaired`, stamped `timestamp`).
#[napi(catch_unwind)]
pub fn obs_prepare(
    dir: String,
    candidates: Vec<ObsCandidate>,
    timestamp: String,
) -> Vec<ObsPrepared> {
    quiet(|| {
        let store = store(&dir);
        let mut repaired = Vec::new();
        let prepared = candidates
            .iter()
            .map(|candidate| prepare_one(&store, candidate, &mut repaired))
            .collect();
        // The objects are sound now; a ledger failure shows on the host's own append.
        let _ = store.append_ledger(&repaired, &timestamp);
        prepared
    })
}

/// A send to record in the ledger.
#[napi(object)]
pub struct ObsLedgerEvent {
    /// `full` or `placeholder`.
    pub kind: String,
    /// Provider request number on this branch.
    pub request: u32,
    /// Which send of the observation this is.
    pub send_number: u32,
    /// The observation, as `obs_prepare` returned it.
    pub observation: ObsPrepared,
}

/// Appends the records of one `context` event in one write; returns the error text, if any.
#[napi(catch_unwind)]
pub fn obs_ledger_append(
    dir: String,
    events: Vec<ObsLedgerEvent>,
    timestamp: String,
) -> Option<String> {
    quiet(|| {
        let records: Vec<LedgerRecord> = events
            .iter()
            .filter_map(|event| {
                let (observation, replacement) = event.observation.observation()?;
                Some(match event.kind.as_str() {
                    "placeholder" => LedgerRecord::placeholder(
                        &observation,
                        event.request,
                        event.send_number,
                        replacement,
                    ),
                    _ => LedgerRecord::full(&observation, event.request, event.send_number),
                })
            })
            .collect();
        store(&dir)
            .append_ledger(&records, &timestamp)
            .err()
            .map(|error| text::fail_open(&error.to_string()))
    })
}

/// One `obs_recall` call.
#[napi(object)]
pub struct ObsRecallRequest {
    /// The storage directory.
    pub dir: String,
    /// The observation id from a placeholder.
    pub id: String,
    /// Byte offset to start from.
    pub offset: f64,
    /// A literal text to search for instead of paging.
    pub query: Option<String>,
    /// ISO timestamp for the ledger record.
    pub timestamp: String,
    /// The large text results of the current branch, given on a second call after the
    /// first answered `needs_history`: the original is rebuilt from them.
    pub history: Option<Vec<ObsCandidate>>,
}

/// The recall text and details, or the error for the model.
#[napi(object)]
pub struct ObsRecallOutcome {
    /// The tool result text.
    pub text: Option<String>,
    /// The tool result details.
    pub details: Option<Value>,
    /// The tool error.
    pub error: Option<String>,
    /// True when nothing or something damaged is stored under the id and no history was
    /// given: call again with the branch's history, which may rebuild it.
    pub needs_history: bool,
}

fn recall_error(error: &RecallError) -> ObsRecallOutcome {
    ObsRecallOutcome {
        text: None,
        details: None,
        error: Some(error.to_string()),
        needs_history: false,
    }
}

/// Pages (or searches) a stored original after verifying its size and hash. An id that is
/// not stored, or whose object is damaged, is rebuilt from `history` when given.
#[napi(catch_unwind)]
pub fn obs_recall(request: ObsRecallRequest) -> ObsRecallOutcome {
    quiet(|| {
        let id = match ObservationId::parse(&request.id) {
            Ok(id) => id,
            Err(error) => {
                return ObsRecallOutcome {
                    text: None,
                    details: None,
                    error: Some(error.to_string()),
                    needs_history: false,
                };
            }
        };
        // The tool schema admits only integers >= 0; `as` saturates anything else.
        let offset = request.offset as u64;
        let store = store(&request.dir);
        let mut repaired = None;
        let original = match (store.read_verified(&id), &request.history) {
            (Ok(original), _) => original,
            (Err(error), None) if error.is_rebuildable() => {
                return ObsRecallOutcome {
                    text: None,
                    details: None,
                    error: None,
                    needs_history: true,
                };
            }
            (Err(error), Some(history)) => {
                let history = history.iter().map(|candidate| {
                    (
                        candidate.tool_name.as_str(),
                        candidate.tool_call_id.as_str(),
                        candidate.text.as_str(),
                    )
                });
                match store.read_or_rebuild(&id, error, history) {
                    Ok((original, outcome)) => {
                        if let StoreOutcome::Repaired(damage) = outcome {
                            repaired = Some(LedgerRecord::repaired(&id, &damage));
                        }
                        original
                    }
                    Err(error) => return recall_error(&error),
                }
            }
            (Err(error), None) => return recall_error(&error),
        };
        let (text, details, record) = match request.query.as_deref() {
            Some(query) => match search_page(&id, &original, query, offset) {
                Ok(page) => {
                    let record = LedgerRecord::search(&page.details);
                    (page.text, serde_json::to_value(&page.details), record)
                }
                Err(error) => return recall_error(&error),
            },
            None => match recall_page(&id, &original, offset) {
                Ok(page) => {
                    let record = LedgerRecord::recall(&page.details);
                    (page.text, serde_json::to_value(&page.details), record)
                }
                Err(error) => return recall_error(&error),
            },
        };
        // The page is already verified and read; a ledger failure must not lose it.
        let records: Vec<LedgerRecord> = repaired.into_iter().chain([record]).collect();
        let _ = store.append_ledger(&records, &request.timestamp);
        ObsRecallOutcome {
            text: Some(text),
            details: details.ok(),
            error: None,
            needs_history: false,
        }
    })
}

/// The TUI notice and status after the first replacement.
#[napi(object)]
pub struct ObsSavingsNotice {
    /// The notice.
    pub notice: String,
    /// The keyed status text.
    pub status: String,
    /// The status key.
    pub status_key: String,
    /// How long the status stays.
    pub status_clear_ms: u32,
}

/// The savings notice for `removed_tokens` tokens no longer sent per request.
#[napi(catch_unwind)]
pub fn obs_savings_notice(removed_tokens: f64) -> ObsSavingsNotice {
    quiet(|| {
        let removed = if removed_tokens.is_finite() && removed_tokens > 0.0 {
            removed_tokens as u64
        } else {
            0
        };
        ObsSavingsNotice {
            notice: text::savings_notice(removed),
            status: text::status_text(removed),
            status_key: text::STATUS_KEY.to_owned(),
            status_clear_ms: text::STATUS_CLEAR_MS,
        }
    })
}

/// The message when ObservationPack cannot work for this session.
#[napi(catch_unwind)]
pub fn obs_unavailable(reason: String) -> String {
    quiet(|| text::unavailable(&reason))
}

/// The recall row's call label.
#[napi(catch_unwind)]
pub fn obs_recall_call_label(id: String, offset: f64) -> String {
    quiet(|| text::recall_call_label(&id, offset.max(0.0) as u64))
}

/// The recall row's result label.
#[napi(catch_unwind)]
pub fn obs_recall_result_label(bytes: f64, lines: f64) -> String {
    quiet(|| text::recall_result_label(bytes.max(0.0) as u64, lines.max(0.0) as u64))
}

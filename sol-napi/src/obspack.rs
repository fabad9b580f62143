//! ObservationPack in the session engine: `ObsPack`, one per storage directory, which admits
//! each large result once (eligibility, identity, archive, placeholder) and runs the `context`
//! step of `sol_obspack::Pack` on every request (which results go as placeholders, the ledger
//! records, the saving), behind the [`Engine`](crate::engine::Engine)'s `obsAdmit` and
//! `obsContext` (`engine/pack.rs`); `obs_recall` pages or searches a verified original.

use std::sync::{Mutex, PoisonError};

use camino::Utf8PathBuf;
use napi::bindgen_prelude::Uint8Array;
use napi_derive::napi;
use serde_json::Value;
use sol_core::Mechanism;
use sol_core::message::ends_with_prompt;
use sol_core::savings::{ReportedUsage, after_cache_lifetime};
use sol_obspack::{
    ContentDigest, Handle, LedgerRecord, MEDIUM_THRESHOLD_BYTES, Names, ObservationId,
    ObservationStore, Pack, PromptFacts, RecallError, ReportedInput, Seen, Shape, StoreOutcome,
    THRESHOLD_BYTES, locate, parse_offset, recall_page, reply_quotes, search_page, text,
};

use crate::NativeFileSystem;
use crate::account::count;
use crate::boundary::quiet;
use crate::frame::RequestFrame;
use crate::savings::{PiUsage, SharedBook};

/// The fewest UTF-16 units a text needs to possibly exceed `threshold_bytes` UTF-8 bytes.
pub fn min_candidate_units(threshold_bytes: u32) -> u32 {
    threshold_bytes / 3 + 1
}

/// Fixed texts of ObservationPack for the tool and the TUI.
#[napi(object)]
pub struct ObsTexts {
    /// The recall tool's name (Pi's default, `obs_recall`): the name the placeholders and
    /// pages give it.
    pub tool_name: String,
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
        tool_name: text::Names::default().recall_tool().to_owned(),
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

/// A text-only tool result whose texts are well-formed UTF-16 (the host sends nothing
/// else: a lone surrogate would arrive here as U+FFFD).
#[napi(object)]
pub struct ObsCandidate {
    /// Its tool call id (information for the ledger, not part of the identity).
    pub tool_call_id: Option<String>,
    /// The tool that produced it (`unknown` when Pi gives none).
    pub tool_name: Option<String>,
    /// `isError` of the result: an error result is always sent in full.
    pub is_error: Option<bool>,
    /// Its text blocks, in order.
    pub texts: Vec<String>,
}

/// A candidate as the store and the pack read it: the texts joined with `\n`.
pub struct Joined {
    /// The tool call id, or empty.
    pub tool_call_id: String,
    /// The tool name, or `unknown`.
    pub tool_name: String,
    /// The joined text; `None` for an error result, which is never packed or rebuilt from.
    pub text: Option<String>,
}

impl From<&ObsCandidate> for Joined {
    fn from(candidate: &ObsCandidate) -> Self {
        Joined {
            tool_call_id: candidate.tool_call_id.clone().unwrap_or_default(),
            tool_name: candidate
                .tool_name
                .clone()
                .unwrap_or_else(|| "unknown".to_owned()),
            text: (candidate.is_error != Some(true)).then(|| candidate.texts.join("\n")),
        }
    }
}

/// What the pack made of a candidate, in the order they were given.
#[napi(discriminant = "kind", discriminant_case = "camelCase")]
pub enum ObsAdmission {
    /// Archived and admitted: send its placeholder when the pack's step says so.
    Packed {
        /// The number `ObsPack.onContext` takes for it.
        handle: u32,
        /// The text that replaces it.
        placeholder: String,
    },
    /// Not packable (small, an error result, or an evidence receipt): always sent in full.
    Kept,
    /// The archive failed: sent in full this time, and tried again on the next request.
    Failed {
        /// The one-line message for the person (fail open).
        error: String,
    },
}

/// What the shell does for one request: replace where `replace[i]` is 1, show the notice.
#[napi(object)]
pub struct ObsContextStep {
    /// Parallel to the handles given: 1 where the result is sent as its placeholder.
    pub replace: Uint8Array,
    /// The savings notice, when a result was replaced for the first time (TUI only).
    pub notice: Option<ObsSavingsNotice>,
    /// The ledger could not be written (fail open: the request is unchanged otherwise).
    pub error: Option<String>,
}

/// What the host knows of a request beyond its frame, for the cache-aware and recent-outputs
/// placements.
#[napi(object)]
pub struct ObsRequestFacts {
    /// The cache retention asked for (Pi's `PI_CACHE_RETENTION`), if any.
    pub cache_retention: Option<String>,
    /// The current model's `promptCache` in Pi's model registry, as the registry has it.
    #[napi(ts_type = "unknown")]
    pub prompt_cache: Option<Value>,
    /// For the recent-outputs placement: the newest assistant message the request carries
    /// (the reply to the request before), taken once (a request sent again over the same
    /// history counts nothing twice).
    pub reply: Option<ObsReply>,
    /// For the recent-outputs placement, on the first request of a pack made after a resume
    /// or a fork: the content of every earlier assistant message, whose quotes it takes.
    #[napi(ts_type = "Array<unknown>")]
    pub earlier_replies: Option<Vec<Value>>,
}

/// A reply as the recent-outputs placement reads it: the lines it quoted and the usage its
/// provider reported.
#[napi(object)]
pub struct ObsReply {
    /// Its content blocks (text, thinking, tool calls with their arguments).
    #[napi(ts_type = "unknown")]
    pub content: Value,
    /// Pi's `stopReason`: an aborted or failed reply's usage teaches nothing.
    pub stop_reason: Option<String>,
    /// Its `usage` as Pi recorded it (only the fields Rust reads cross).
    pub usage: Option<PiUsage>,
}

impl ObsReply {
    /// The quotes, the report (when the request was billed), and the reply's identity.
    fn read(&self) -> (Vec<ContentDigest>, Option<ReportedInput>, ContentDigest) {
        let blocks = self
            .content
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let quotes = reply_quotes(blocks).into_vec();
        let usage = self
            .usage
            .as_ref()
            .map_or_else(ReportedUsage::default, PiUsage::reported);
        let (input, read, write) = (usage.input, usage.cache_read, usage.cache_write);
        let all_input = input.saturating_add(read).saturating_add(write);
        let failed = sol_core::message::reply_failed(self.stop_reason.as_deref());
        let reported = (!failed && all_input > 0).then_some(ReportedInput {
            all_input,
            cache_read: read,
        });
        let identity = ContentDigest::of_texts([
            self.content.to_string().as_str(),
            self.stop_reason.as_deref().unwrap_or(""),
            &format!("{input} {read} {write}"),
        ]);
        (quotes, reported, identity)
    }
}

/// The settings of ObservationPack's placement, from `sol-pi.json`.
#[napi(object)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ObsPlacement {
    /// The configured `cacheWriteReadRatio`, given when `cacheAware` or `keepRecentOutputs`
    /// is on: results are placed by the cache-aware economics instead of the fixed rule.
    pub cache_aware_ratio: Option<f64>,
    /// `keepRecentOutputs` (not 0): the recent-outputs placement, which packs results over
    /// 256 bytes that its compact placeholder halves.
    pub keep_recent_outputs: Option<u32>,
}

impl ObsPlacement {
    /// The recent-outputs placement's number of outputs kept, when it is on (`keepRecentOutputs`
    /// not 0).
    fn recent_outputs(self) -> Option<u32> {
        self.keep_recent_outputs.filter(|keep| *keep > 0)
    }

    /// The fewest UTF-16 units a text result needs for this placement to pack it: the
    /// recent-outputs placement packs results over 256 bytes, the others over 10 KiB.
    pub(crate) fn min_candidate_units(self) -> u32 {
        let threshold = match self.recent_outputs() {
            Some(_) => MEDIUM_THRESHOLD_BYTES,
            None => THRESHOLD_BYTES,
        };
        min_candidate_units(u32::try_from(threshold).unwrap_or(u32::MAX))
    }

    /// Whether the step reads the request's newest reply (the recent-outputs placement: the
    /// lines it quotes, the usage its provider reported).
    pub(crate) fn reads_replies(self) -> bool {
        self.recent_outputs().is_some()
    }

    /// The ratio the packs place by, when they place by size and position (the recent-outputs
    /// placement always does, at the default ratio when none is given).
    pub(crate) fn ratio(self) -> Option<f64> {
        match self.recent_outputs() {
            Some(_) => Some(
                self.cache_aware_ratio
                    .unwrap_or(sol_core::config::DEFAULT_CACHE_WRITE_READ_RATIO),
            ),
            None => self.cache_aware_ratio,
        }
    }
}

/// ObservationPack for one storage directory: the archive, the ledger and the
/// `sol_obspack::Pack` whose step decides every request.
pub(crate) struct ObsPack {
    dir: Utf8PathBuf,
    pack: Mutex<Pack>,
    /// The `cacheWriteReadRatio` of the cache-aware or recent-outputs placement, when
    /// either is on.
    cache_aware: Option<f64>,
    /// The session's savings book, where the steps record what they archived and saved.
    book: SharedBook,
}

impl ObsPack {
    /// A pack over the session's runtime root (its files go in `observation-pack` there).
    pub(crate) fn new(root: &str, placement: ObsPlacement, book: SharedBook) -> ObsPack {
        let pack = match placement.recent_outputs() {
            Some(keep) => Pack::with_recent_outputs(Names::default(), keep),
            None => Pack::new(),
        };
        ObsPack {
            dir: storage_dir(root),
            pack: Mutex::new(pack),
            cache_aware: placement.ratio(),
            book,
        }
    }

    /// Decides, archives and admits new candidates, in order. A damaged object or record
    /// found on the way is rebuilt from the candidate's text and recorded in the ledger
    /// (`repaired`, stamped `timestamp`).
    pub(crate) fn admit(&self, candidates: &[ObsCandidate], timestamp: &str) -> Vec<ObsAdmission> {
        let store = store(self.dir.as_str());
        let mut pack = self.pack.lock().unwrap_or_else(PoisonError::into_inner);
        let mut repaired = Vec::new();
        let mut archived = 0u64;
        let admitted = candidates
            .iter()
            .map(|candidate| {
                let (admission, bytes) =
                    admit_one(&store, &mut pack, &candidate.into(), &mut repaired);
                archived = archived.saturating_add(bytes);
                admission
            })
            .collect();
        self.book.record_archived(archived);
        // The objects are sound now; a ledger failure shows on the next step's append.
        let _ = store.append_ledger(&repaired, timestamp);
        admitted
    }

    /// The step for the request `frame` describes, which carries the admitted results
    /// `handles[i]` at the indexes `at[i]`. Rust counts where each sits (the earlier requests
    /// that carried it, the tokens and tool outputs after it; `sol_obspack::locate`). A
    /// cache-aware pack places them with `facts` (without them, by the fixed rule). Appends
    /// the step's ledger records (stamped `timestamp`) in one write.
    pub(crate) fn on_context(
        &self,
        frame: &RequestFrame,
        at: &[u32],
        handles: &[u32],
        timestamp: &str,
        facts: Option<ObsRequestFacts>,
        rewritten: bool,
    ) -> ObsContextStep {
        let tokens: Vec<u64> = frame.tokens.iter().map(|&tokens| count(tokens)).collect();
        let results: Vec<(usize, Handle)> = at
            .iter()
            .zip(handles.iter())
            .map(|(&index, &handle)| (index as usize, Handle::from_number(handle)))
            .collect();
        let located = locate(&frame.kinds(), &tokens, &results);
        let request = located.assistants.saturating_add(1);
        let mut pack = self.pack.lock().unwrap_or_else(PoisonError::into_inner);
        let step = match (self.cache_aware, facts) {
            (Some(ratio), Some(facts)) => {
                let request_shape = Shape {
                    new_tokens: located.new_tokens,
                    rewritten,
                    carried_requests: located.assistants,
                    ..Shape::default()
                };
                for earlier in facts.earlier_replies.iter().flatten() {
                    let blocks = earlier.as_array().map(Vec::as_slice).unwrap_or_default();
                    pack.on_reply(&reply_quotes(blocks), None);
                }
                if let Some(reply) = &facts.reply {
                    let (quotes, reported, identity) = reply.read();
                    pack.on_newest_reply(identity, &quotes, reported);
                }
                // Only the recent-outputs placement reads a new prompt's timing, as the
                // book reads it: the prompt against the newest timestamped message before it.
                let prompt = match pack.recent_outputs() {
                    Some(_) if ends_with_prompt(&frame.roles) => PromptFacts {
                        starts_prompt: true,
                        expired: after_cache_lifetime(
                            &frame.stamps,
                            true,
                            facts.cache_retention.as_deref(),
                            facts.prompt_cache.as_ref(),
                        ),
                    },
                    _ => PromptFacts::default(),
                };
                pack.on_context_recent(request, &located.carried, request_shape, prompt, ratio)
            }
            _ => {
                let seen: Vec<Seen> = located.carried.iter().map(|carried| carried.seen).collect();
                pack.on_context(request, &seen)
            }
        };
        drop(pack);
        // It counts with the request it changed, once that is answered.
        self.book
            .record_request_step(Mechanism::ObservationPack, step.account);
        let error = if step.ledger.is_empty() {
            None
        } else {
            store(self.dir.as_str())
                .append_ledger(&step.ledger, timestamp)
                .err()
                .map(|error| text::fail_open(&error.to_string()))
        };
        ObsContextStep {
            replace: Uint8Array::new(step.replace.iter().map(|&r| u8::from(r)).collect()),
            notice: (step.first_replacement_tokens > 0)
                .then(|| savings_notice(step.first_replacement_tokens)),
            error,
        }
    }
}

fn store(dir: &str) -> ObservationStore<'static> {
    ObservationStore::new(&NativeFileSystem, Utf8PathBuf::from(dir))
}

/// ObservationPack's folder under a session's runtime root.
fn storage_dir(root: &str) -> Utf8PathBuf {
    Utf8PathBuf::from(root).join("observation-pack")
}

fn admit_one(
    store: &ObservationStore<'_>,
    pack: &mut Pack,
    candidate: &Joined,
    repaired: &mut Vec<LedgerRecord>,
) -> (ObsAdmission, u64) {
    let Some(text) = candidate.text.as_deref().filter(|text| pack.packs(text)) else {
        return (ObsAdmission::Kept, 0);
    };
    // One SHA-256 of the text: the store derives the observation it archives.
    let (observation, stored) =
        store.observe_and_store(&candidate.tool_name, &candidate.tool_call_id, text);
    // UTF-8 bytes written to the archive now: none when it was already stored (the same
    // output earlier, or in an earlier run of the session).
    let archived = match &stored {
        Ok(StoreOutcome::Reused) => 0,
        _ => text.len() as u64,
    };
    match stored {
        Ok(StoreOutcome::Repaired(damage)) => {
            repaired.push(LedgerRecord::repaired(&observation.id, &damage));
        }
        Ok(_) => {}
        Err(error) => {
            let error = text::fail_open(&error.to_string());
            return (ObsAdmission::Failed { error }, 0);
        }
    }
    let handle = pack.admit(observation, text);
    let placeholder = pack
        .get(handle)
        .map(|packed| packed.placeholder.clone())
        .unwrap_or_default();
    let packed = ObsAdmission::Packed {
        handle: handle.get(),
        placeholder,
    };
    (packed, archived)
}

/// One `obs_recall` call.
#[napi(object)]
pub struct ObsRecallRequest {
    /// The session's runtime root.
    pub root: String,
    /// The observation id from a placeholder.
    pub id: String,
    /// Byte offset to start from (0 when absent).
    pub offset: Option<f64>,
    /// A literal text to search for instead of paging.
    pub query: Option<String>,
    /// ISO timestamp for the ledger record.
    pub timestamp: String,
    /// The large text results of the current branch, given on a second call after the
    /// first answered `needs_history`: the original is rebuilt from them.
    pub history: Option<Vec<ObsCandidate>>,
}

/// What one `obs_recall` call gives the tool.
#[napi(discriminant = "kind", discriminant_case = "camelCase")]
pub enum ObsRecallOutcome {
    /// A page of the original, or of search results.
    Page {
        /// The tool result text.
        text: String,
        /// Its UTF-8 bytes.
        bytes: f64,
        /// The tool result details (the page's or the search's details).
        #[napi(ts_type = "Record<string, unknown>")]
        details: Option<Value>,
    },
    /// The call is refused: a bad id, an offset past the end, an object that cannot be
    /// verified or rebuilt. The message is the tool error.
    Refused {
        /// The tool error.
        error: String,
    },
    /// Nothing or something damaged is stored under the id and no history was given: call
    /// again with the branch's history, which may rebuild it. `error` is the tool error for
    /// a host that has no history to give.
    NeedsHistory {
        /// The tool error.
        error: String,
    },
}

fn recall_error(error: &RecallError) -> ObsRecallOutcome {
    ObsRecallOutcome::Refused {
        error: error.to_string(),
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
                return ObsRecallOutcome::Refused {
                    error: error.to_string(),
                };
            }
        };
        // Not every Pi enforces the schema's integer: a fraction is refused, never rounded.
        let offset = match parse_offset(request.offset, &Names::default()) {
            Ok(offset) => offset,
            Err(error) => return recall_error(&error),
        };
        let store = ObservationStore::new(&NativeFileSystem, storage_dir(&request.root));
        let mut repaired = None;
        let original = match (store.read_verified(&id), &request.history) {
            (Ok(original), _) => original,
            (Err(error), None) if error.is_rebuildable() => {
                return ObsRecallOutcome::NeedsHistory {
                    error: error.to_string(),
                };
            }
            (Err(error), Some(history)) => {
                let joined: Vec<Joined> = history.iter().map(Joined::from).collect();
                let history = joined.iter().filter_map(|candidate| {
                    let text = candidate.text.as_deref()?;
                    Some((
                        candidate.tool_name.as_str(),
                        candidate.tool_call_id.as_str(),
                        text,
                    ))
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
        ObsRecallOutcome::Page {
            bytes: text.len() as f64,
            text,
            details: details.ok(),
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

/// The savings notice for `removed` tokens no longer sent per request.
fn savings_notice(removed: u64) -> ObsSavingsNotice {
    ObsSavingsNotice {
        notice: text::savings_notice(removed),
        status: text::status_text(removed),
        status_key: text::STATUS_KEY.to_owned(),
        status_clear_ms: text::STATUS_CLEAR_MS,
    }
}

/// The message when ObservationPack cannot work for this session.
#[napi(catch_unwind)]
pub fn obs_unavailable(reason: String) -> String {
    quiet(|| text::unavailable(&reason))
}

/// A non-negative whole number at `key` of `value`, else 0.
fn count_at(value: Option<&Value>, key: &str) -> u64 {
    value
        .and_then(|value| value.get(key))
        .and_then(Value::as_f64)
        .map_or(0, |n| n.max(0.0) as u64)
}

/// The recall row's call label, from the call's arguments as they stand (possibly partial).
#[napi(catch_unwind)]
pub fn obs_recall_call_label(#[napi(ts_arg_type = "unknown")] args: Option<Value>) -> String {
    quiet(|| {
        let id = args
            .as_ref()
            .and_then(|args| args.get("id"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        text::recall_call_label(id, count_at(args.as_ref(), "offset"))
    })
}

/// The recall row's result label: the running label while `partial`, else the page's size
/// from its `details`.
#[napi(catch_unwind)]
pub fn obs_recall_result_label(
    partial: bool,
    #[napi(ts_arg_type = "unknown")] details: Option<Value>,
) -> String {
    quiet(|| {
        if partial {
            return text::RECALL_PARTIAL_LABEL.to_owned();
        }
        let details = details.as_ref();
        text::recall_result_label(count_at(details, "bytes"), count_at(details, "lines"))
    })
}

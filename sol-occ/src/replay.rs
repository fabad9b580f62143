//! Replays a recorded Pi session under the Online Context Compact policy and under Pi's
//! threshold-only compaction, and prices both.
//!
//! The input is a session file (JSONL of Pi session entries). The replay follows the active
//! branch (from the last entry back through `parentId`), keeps only its `message` entries,
//! and feeds them to a real [`OccSession`] as Pi would: a `context` event and a counted
//! provider request before every assistant message, `update_plan` calls through
//! [`OccSession::update_plan`], `turn_end` after each turn's tool results, `input` for every
//! user message. When the policy compacts, the simulated context is cut where Pi would cut
//! it and the removed prefix is replaced by a summary of [`ReplayConfig::summary_tokens`]
//! tokens, followed by the continuation reminder. Compactions recorded in the file are
//! ignored: each policy makes its own.
//!
//! # Cost model
//!
//! Costs are in cache-read-equivalent tokens. A request whose context starts with the
//! previous request's context reads that prefix from the cache (1 per token) and writes
//! the rest (`r` per token, `r` = [`ReplayConfig::cache_write_read_ratio`]). The first
//! request after a compaction finds only the system prompt cached and writes everything
//! else. `net_saved` is the cost of the same session without any compaction (ignoring the
//! window) minus the policy's cost: the tokens no longer read, net of every cache rewrite.
//! Output tokens and the summarization call itself are not priced; the policy's own
//! decision leaves them out too.
//!
//! Both policies keep Pi's threshold compaction (compact when the context exceeds
//! `window − reserve` at the end of a turn); under Online Context Compact it is the fallback
//! between boundaries.

use crate::session::StopReason;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};
use sol_core::session::SessionEntry;

use crate::estimate::{
    NativeProjection, ObservedContext, ProjectedEntry, estimate_native_cut, find_cut_index,
};
use crate::plan::TOOL_NAME;
use crate::session::{
    BoundaryMeasurement, CompactionResult, ContextEvent, InputEvent, OccSession, SettledAction,
    TurnEnd, TurnEndOutcome, TurnToolResult,
};
use crate::settings::{
    CompactionSettings, DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS, OccOptions,
    SettingSource,
};
use crate::tokens::SizedMessage;

/// The assumptions of one replay.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayConfig {
    /// Price of a cache write relative to a cache read.
    pub cache_write_read_ratio: f64,
    /// The model's context window.
    pub context_window: u64,
    /// Pi's reserve below the window.
    pub reserve_tokens: u64,
    /// Pi's retained tail.
    pub keep_recent_tokens: u64,
    /// Size of the system prompt (always cached).
    pub system_prompt_tokens: u64,
    /// Size of each compaction summary.
    pub summary_tokens: u64,
}

impl ReplayConfig {
    /// Pi's default compaction settings, a 1,000-token summary and the given ratio, window
    /// and system prompt.
    pub fn new(ratio: f64, context_window: u64, system_prompt_tokens: u64) -> ReplayConfig {
        ReplayConfig {
            cache_write_read_ratio: ratio,
            context_window,
            reserve_tokens: DEFAULT_RESERVE_TOKENS,
            keep_recent_tokens: DEFAULT_KEEP_RECENT_TOKENS,
            system_prompt_tokens,
            summary_tokens: crate::economics::MEMO_TOKENS,
        }
    }

    fn settings(&self) -> CompactionSettings {
        CompactionSettings {
            keep_recent_tokens: self.keep_recent_tokens,
            reserve_tokens: self.reserve_tokens,
            keep_recent_source: SettingSource::Explicit,
            reserve_source: SettingSource::Explicit,
        }
    }
}

/// How one policy fared.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyReport {
    /// Compactions of any trigger.
    pub compactions: u64,
    /// Compactions selected at plan boundaries.
    pub boundary_compactions: u64,
    /// Pi's threshold compactions.
    pub threshold_compactions: u64,
    /// Context tokens the compactions removed, net of the summaries that replaced them.
    pub context_tokens_removed: u64,
    /// Total cost in read-equivalent tokens.
    pub cost: f64,
    /// Cost without compaction minus this cost.
    pub net_saved: f64,
    /// The largest context sent.
    pub peak_context_tokens: u64,
    /// How often each decision reason or boundary skip occurred (OCC only).
    pub boundary_outcomes: BTreeMap<String, u64>,
}

/// The replay of one session at one ratio.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayReport {
    /// Provider requests (assistant messages) replayed.
    pub requests: u64,
    /// Cost without any compaction.
    pub uncompacted_cost: f64,
    /// Largest context without any compaction.
    pub uncompacted_peak_tokens: u64,
    /// Online Context Compact with Pi's threshold compaction as fallback.
    pub occ: PolicyReport,
    /// Pi's threshold compaction alone.
    pub threshold_only: PolicyReport,
}

/// Why a recorded session cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// A line is not JSON.
    #[error("session line {line} is not valid JSON: {message}")]
    InvalidJson {
        /// 1-based line number.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// The file has no message entries.
    #[error("the session has no message entries")]
    NoMessages,
}

impl ReplayError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            ReplayError::InvalidJson { .. } => "invalid_session_json",
            ReplayError::NoMessages => "no_session_messages",
        }
    }
}

/// Reads a session file: one JSON value per non-blank line.
///
/// # Errors
///
/// [`ReplayError::InvalidJson`] for the first line that is not JSON.
pub fn parse_session_jsonl(text: &str) -> Result<Vec<Value>, ReplayError> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str(line).map_err(|error| ReplayError::InvalidJson {
                line: index + 1,
                message: error.to_string(),
            })
        })
        .collect()
}

/// The active branch: from the last entry with an id back to the root through `parentId`,
/// returned root first.
pub fn active_branch(entries: &[Value]) -> Vec<Value> {
    let id_of = |entry: &Value| entry.get("id").and_then(Value::as_str).map(str::to_owned);
    let by_id: BTreeMap<String, &Value> = entries
        .iter()
        .filter_map(|entry| Some((id_of(entry)?, entry)))
        .collect();
    let mut branch = Vec::new();
    let mut cursor = entries
        .iter()
        .rev()
        .find(|entry| entry.get("type").and_then(Value::as_str) != Some("session"))
        .and_then(id_of);
    while let Some(id) = cursor {
        let Some(entry) = by_id.get(&id) else { break };
        if branch.len() > entries.len() {
            break; // a parent cycle
        }
        branch.push((*entry).clone());
        cursor = entry
            .get("parentId")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
    branch.reverse();
    branch
}

/// Replays a session file's text at one configuration.
///
/// # Errors
///
/// [`ReplayError`] when the text is not a session with messages.
pub fn replay_session_jsonl(
    text: &str,
    config: &ReplayConfig,
) -> Result<ReplayReport, ReplayError> {
    replay_session(&parse_session_jsonl(text)?, config)
}

/// Replays session entries at one configuration.
///
/// # Errors
///
/// [`ReplayError::NoMessages`] when the active branch has no message entries.
pub fn replay_session(
    entries: &[Value],
    config: &ReplayConfig,
) -> Result<ReplayReport, ReplayError> {
    let messages: Vec<Value> = active_branch(entries)
        .into_iter()
        .filter(|entry| entry.get("type").and_then(Value::as_str) == Some("message"))
        .collect();
    if messages.is_empty() {
        return Err(ReplayError::NoMessages);
    }
    let baseline = simulate(&messages, config, false);
    let mut occ = simulate(&messages, config, true);
    let mut threshold_only = baseline.policy;
    occ.policy.net_saved = baseline.uncompacted_cost - occ.policy.cost;
    threshold_only.net_saved = baseline.uncompacted_cost - threshold_only.cost;
    Ok(ReplayReport {
        requests: baseline.requests,
        uncompacted_cost: baseline.uncompacted_cost,
        uncompacted_peak_tokens: baseline.uncompacted_peak,
        occ: occ.policy,
        threshold_only,
    })
}

struct Simulation {
    requests: u64,
    uncompacted_cost: f64,
    uncompacted_peak: u64,
    policy: PolicyReport,
}

/// The simulated context and its prices.
struct Context<'a> {
    config: &'a ReplayConfig,
    projection: NativeProjection,
    /// Size of the previous request, if its prefix is still cached.
    cached: Option<u64>,
    uncompacted: u64,
    uncompacted_cached: Option<u64>,
    uncompacted_cost: f64,
    uncompacted_peak: u64,
    synthetic: u64,
    report: PolicyReport,
}

impl Context<'_> {
    fn append(&mut self, entry: &Value) {
        let projected =
            ProjectedEntry::from_session_entry(&SessionEntry::from_value(entry.clone()));
        self.uncompacted = self.uncompacted.saturating_add(projected.tokens());
        self.projection.entries.push(projected);
    }

    fn size(&self) -> u64 {
        self.config
            .system_prompt_tokens
            .saturating_add(self.projection.total_tokens())
    }

    fn observed(&self) -> Vec<SizedMessage> {
        self.projection.messages().cloned().collect()
    }

    fn request_cost(&self, size: u64, cached: Option<u64>) -> f64 {
        let shared = cached.unwrap_or(self.config.system_prompt_tokens).min(size);
        shared as f64 + self.config.cache_write_read_ratio * (size - shared) as f64
    }

    /// Prices one provider request under the policy and without compaction.
    fn request(&mut self) {
        let size = self.size();
        self.report.cost += self.request_cost(size, self.cached);
        self.report.peak_context_tokens = self.report.peak_context_tokens.max(size);
        self.cached = Some(size);
        let uncompacted = self
            .config
            .system_prompt_tokens
            .saturating_add(self.uncompacted);
        self.uncompacted_cost += self.request_cost(uncompacted, self.uncompacted_cached);
        self.uncompacted_peak = self.uncompacted_peak.max(uncompacted);
        self.uncompacted_cached = Some(uncompacted);
    }

    /// Compacts the simulated context the way Pi would; returns the messages after it.
    fn compact(&mut self) -> Vec<SizedMessage> {
        let before = self.projection.total_tokens();
        let entries = &self.projection.entries;
        let start = self.projection.history_start();
        let cut = find_cut_index(
            entries,
            start,
            entries.len(),
            self.config.keep_recent_tokens,
        );
        self.synthetic += 1;
        let summary = SessionEntry::from_value(json!({
            "type": "compaction",
            "id": format!("replay-compaction-{}", self.synthetic),
            "summary": "s".repeat((self.config.summary_tokens as usize).saturating_mul(4)),
            "timestamp": -(self.synthetic as i64),
        }));
        let mut compacted = NativeProjection::from_branch(std::slice::from_ref(&summary));
        compacted.leaf_is_compaction = false;
        compacted.entries.extend(entries[cut..].iter().cloned());
        self.projection = compacted;
        self.cached = None;
        self.report.compactions += 1;
        let after = self.projection.total_tokens();
        self.report.context_tokens_removed = self
            .report
            .context_tokens_removed
            .saturating_add(before.saturating_sub(after));
        self.observed()
    }

    fn over_threshold(&self) -> bool {
        self.size()
            > self
                .config
                .context_window
                .saturating_sub(self.config.reserve_tokens)
    }
}

fn simulate(messages: &[Value], config: &ReplayConfig, with_occ: bool) -> Simulation {
    let mut context = Context {
        config,
        projection: NativeProjection::default(),
        cached: None,
        uncompacted: 0,
        uncompacted_cached: None,
        uncompacted_cost: 0.0,
        uncompacted_peak: 0,
        synthetic: 0,
        report: PolicyReport::default(),
    };
    let options = OccOptions {
        cache_write_read_ratio: Some(config.cache_write_read_ratio),
        keep_recent_tokens: Some(config.keep_recent_tokens),
    };
    let mut occ = OccSession::new(options);
    occ.session_start(&[], Vec::new());
    let mut requests = 0u64;
    let mut turn: Option<TurnEnd> = None;

    for entry in messages {
        let message = entry.get("message").unwrap_or(&Value::Null);
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        match role {
            "assistant" => {
                finish_turn(&mut context, &mut occ, turn.take(), with_occ);
                occ.context(ContextEvent {
                    aborted: false,
                    observation: context.observed().into(),
                });
                occ.before_provider_request(None, config.system_prompt_tokens);
                context.request();
                requests += 1;
                context.append(entry);
                occ.message_end("assistant");
                turn = Some(start_turn(&mut occ, message));
            }
            "toolResult" => {
                context.append(entry);
                let result = TurnToolResult {
                    tool_call_id: string(message, "toolCallId"),
                    tool_name: string(message, "toolName"),
                    is_error: message.get("isError").and_then(Value::as_bool) == Some(true),
                };
                if let Some(turn) = &mut turn
                    && result.tool_name != TOOL_NAME
                {
                    turn.tool_results.push(result);
                }
            }
            "user" => {
                finish_turn(&mut context, &mut occ, turn.take(), with_occ);
                occ.input(&InputEvent {
                    text: user_text(message),
                    streaming_behavior: None,
                });
                context.append(entry);
            }
            _ => context.append(entry),
        }
    }
    finish_turn(&mut context, &mut occ, turn.take(), with_occ);
    Simulation {
        requests,
        uncompacted_cost: context.uncompacted_cost,
        uncompacted_peak: context.uncompacted_peak,
        policy: context.report,
    }
}

fn string(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn user_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Runs the assistant message's `update_plan` calls; the turn collects the other results
/// as they arrive.
fn start_turn(occ: &mut OccSession, message: &Value) -> TurnEnd {
    let mut turn = TurnEnd {
        stop_reason: message
            .get("stopReason")
            .and_then(Value::as_str)
            .map(StopReason::parse),
        aborted: false,
        tool_results: Vec::new(),
    };
    let calls = message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("toolCall"));
    for call in calls {
        if call.get("name").and_then(Value::as_str) != Some(TOOL_NAME) {
            continue;
        }
        let id = string(call, "id");
        let arguments = call.get("arguments").unwrap_or(&Value::Null);
        let is_error = occ.update_plan(&id, arguments, false).is_err();
        turn.tool_results.push(TurnToolResult {
            tool_call_id: id,
            tool_name: TOOL_NAME.to_owned(),
            is_error,
        });
    }
    turn
}

fn finish_turn(
    context: &mut Context<'_>,
    occ: &mut OccSession,
    turn: Option<TurnEnd>,
    with_occ: bool,
) {
    let Some(turn) = turn else { return };
    let outcome = occ.turn_end(&turn);
    if with_occ {
        match outcome {
            TurnEndOutcome::NoBoundary => {}
            TurnEndOutcome::Skipped(skip) => tally(&mut context.report, skip.code()),
            TurnEndOutcome::Evaluate => boundary(context, occ),
        }
    }
    if context.over_threshold() {
        context.report.threshold_compactions += 1;
        let observed = context.compact();
        occ.session_compact(false, observed);
    }
}

fn tally(report: &mut PolicyReport, code: &str) {
    *report.boundary_outcomes.entry(code.to_owned()).or_default() += 1;
}

fn boundary(context: &mut Context<'_>, occ: &mut OccSession) {
    let measurement = BoundaryMeasurement {
        reported_tokens: None,
        usage_context_window: Some(context.config.context_window as f64),
        model_context_window: None,
        system_prompt_tokens: context.config.system_prompt_tokens,
        projection: context.projection.clone(),
        settings: context.config.settings(),
        observed: None,
    };
    let Some(evaluation) = occ.decide_boundary(&measurement) else {
        return;
    };
    tally(&mut context.report, evaluation.decision.reason.code());
    if !evaluation.abort {
        return;
    }
    // The host aborts the run; it settles at once.
    let SettledAction::Compact { .. } = occ.agent_settled(true) else {
        return;
    };
    // Sanity: the cut the session priced is the one the replay applies.
    debug_assert_eq!(
        estimate_native_cut(
            &context.projection,
            context.config.keep_recent_tokens,
            &ObservedContext::new(&context.observed())
        )
        .first_kept_index,
        evaluation.estimate.first_kept_index
    );
    let observed = context.compact();
    context.report.boundary_compactions += 1;
    occ.session_compact(false, observed);
    let summary = "s".repeat((context.config.summary_tokens as usize).saturating_mul(4));
    let follow_up = occ.compaction_finished(&CompactionResult::Completed { summary });
    if let Some(continuation) = follow_up.continuation {
        context.synthetic += 1;
        let reminder = SessionEntry::from_value(json!({
            "type": "custom_message",
            "id": format!("replay-reminder-{}", context.synthetic),
            "customType": continuation.custom_type,
            "content": continuation.content,
            "display": continuation.display,
            "timestamp": -(context.synthetic as i64),
        }));
        let added = ProjectedEntry::from_session_entry(&reminder);
        // The reminder is context the uncompacted session never had.
        context.projection.entries.push(added);
    }
}

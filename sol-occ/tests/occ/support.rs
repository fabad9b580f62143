//! Builders shared by the test modules: Pi messages, branch entries, plans, and a small
//! driver that plays Pi's events against an `OccSession`.

#![allow(dead_code)]

use serde_json::{Value, json};
use sol_core::message::AgentMessage;
use sol_core::session::SessionEntry;
use sol_occ::estimate::NativeProjection;
use sol_occ::session::StopReason;
use sol_occ::session::{
    BoundaryEvaluation, BoundaryMeasurement, ContextEvent, OccSession, TurnEnd, TurnEndOutcome,
    TurnToolResult,
};
use sol_occ::settings::{OccOptions, resolve_compaction_settings};
use std::cell::RefCell;

/// A message read from its JSON.
pub(crate) fn message(value: Value) -> AgentMessage {
    AgentMessage::from_value(value)
}

/// A session entry read from its JSON.
pub(crate) fn entry(value: Value) -> SessionEntry {
    SessionEntry::from_value(value)
}

/// Session entries read from their JSON.
pub(crate) fn entries(values: &[Value]) -> Vec<SessionEntry> {
    SessionEntry::from_values(values.iter().cloned())
}

/// `message` with one field replaced (or removed, for `None`).
pub(crate) fn with_field(message: &AgentMessage, key: &str, value: Option<Value>) -> AgentMessage {
    let mut json = message.to_value();
    if let Some(fields) = json.as_object_mut() {
        match value {
            Some(value) => fields.insert(key.to_owned(), value),
            None => fields.shift_remove(key),
        };
    }
    AgentMessage::from_value(json)
}

/// A user message of `chars` ASCII characters.
pub(crate) fn user(timestamp: i64, chars: usize) -> AgentMessage {
    message(json!({"role": "user", "content": "u".repeat(chars), "timestamp": timestamp}))
}

/// An assistant message with one text block of `chars` characters.
pub(crate) fn assistant(timestamp: i64, chars: usize) -> AgentMessage {
    message(
        json!({"role": "assistant", "content": [{"type": "text", "text": "a".repeat(chars)}],
               "stopReason": "stop", "timestamp": timestamp}),
    )
}

/// A tool result of `chars` characters.
pub(crate) fn tool_result(timestamp: i64, call: &str, chars: usize) -> AgentMessage {
    message(
        json!({"role": "toolResult", "toolCallId": call, "toolName": "bash", "isError": false,
               "content": [{"type": "text", "text": "r".repeat(chars)}], "timestamp": timestamp}),
    )
}

/// Message entries with ids `e0`, `e1`, ... chained by `parentId`.
pub(crate) fn branch_of(messages: &[AgentMessage]) -> Vec<SessionEntry> {
    messages
        .iter()
        .enumerate()
        .map(|(i, message)| message_entry(i, message))
        .collect()
}

/// The entry at position `i` of [`branch_of`]: it depends on the message and `i` only.
fn message_entry(i: usize, message: &AgentMessage) -> SessionEntry {
    let parent = if i == 0 {
        Value::Null
    } else {
        json!(format!("e{}", i - 1))
    };
    entry(
        json!({"type": "message", "id": format!("e{i}"), "parentId": parent,
                 "timestamp": "2026-03-02T09:00:00.000Z", "message": message}),
    )
}

/// `update_plan` arguments from `(id, status)` pairs; goals are `goal <id>`.
pub(crate) fn plan_args(steps: &[(&str, &str)]) -> Value {
    let steps: Vec<Value> = steps
        .iter()
        .map(|(id, status)| json!({"id": id, "goal": format!("goal {id}"), "status": status}))
        .collect();
    json!({ "steps": steps })
}

/// Plays Pi's events against a session with a growing conversation.
pub(crate) struct Driver {
    pub(crate) occ: OccSession,
    pub(crate) messages: Vec<AgentMessage>,
    pub(crate) clock: i64,
    pub(crate) window: f64,
    pub(crate) keep_recent: u64,
    /// `branch_of(&messages)` as far as it was built: `messages` only ever grows, and an
    /// entry depends on its message and position alone, so each measurement builds the
    /// entries of the new messages only (a whole branch per event was the most of the
    /// property tests' time).
    branch: RefCell<Vec<SessionEntry>>,
}

impl Driver {
    pub(crate) fn new(ratio: Option<f64>) -> Driver {
        let mut occ = OccSession::new(OccOptions {
            cache_write_read_ratio: ratio,
            keep_recent_tokens: Some(150),
        });
        occ.session_start(&[], Vec::new());
        Driver {
            occ,
            messages: Vec::new(),
            clock: 0,
            window: 200_000.0,
            keep_recent: 150,
            branch: RefCell::new(Vec::new()),
        }
    }

    fn tick(&mut self) -> i64 {
        self.clock += 1;
        self.clock
    }

    /// One provider request: `context`, `before_provider_request`, the assistant
    /// `message_end`; the conversation grows by a user turn of `chars` characters.
    pub(crate) fn request(&mut self, chars: usize) {
        let stamp = self.tick();
        self.messages.push(user(stamp, chars));
        self.occ.context(ContextEvent::new(false, &self.messages));
        self.occ.before_provider_request(None, 0);
        let stamp = self.tick();
        self.messages.push(assistant(stamp, 8));
        self.occ.message_end("assistant");
    }

    /// An `update_plan` call that must succeed.
    pub(crate) fn plan(
        &mut self,
        call: &str,
        steps: &[(&str, &str)],
    ) -> sol_occ::session::PlanToolOutput {
        self.occ
            .update_plan(call, &plan_args(steps), false)
            .expect("a valid plan")
    }

    /// A normal `turn_end` whose only tool result is the plan call `call`.
    pub(crate) fn turn_end(&mut self, call: &str) -> TurnEndOutcome {
        self.occ.turn_end(&plan_turn(call))
    }

    pub(crate) fn measurement(&self) -> BoundaryMeasurement {
        BoundaryMeasurement {
            reported_tokens: None,
            usage_context_window: Some(self.window),
            model_context_window: None,
            system_prompt_tokens: 0,
            projection: NativeProjection::from_branch(&self.branch()),
            settings: resolve_compaction_settings(None, None, Some(self.keep_recent)),
            observed: None,
        }
    }

    /// The branch of the conversation so far, the same as `branch_of(&self.messages)`.
    fn branch(&self) -> std::cell::Ref<'_, Vec<SessionEntry>> {
        let mut branch = self.branch.borrow_mut();
        assert!(
            branch.len() <= self.messages.len(),
            "the driver's conversation only grows"
        );
        let built = branch.len();
        branch.extend(
            self.messages[built..]
                .iter()
                .enumerate()
                .map(|(i, message)| message_entry(built + i, message)),
        );
        drop(branch);
        self.branch.borrow()
    }

    pub(crate) fn decide(&mut self) -> Option<BoundaryEvaluation> {
        let measurement = self.measurement();
        self.occ.decide_boundary(&measurement)
    }
}

/// A normal turn whose only tool result is the successful plan call `call`.
pub(crate) fn plan_turn(call: &str) -> TurnEnd {
    TurnEnd {
        stop_reason: Some(StopReason::ToolUse),
        aborted: false,
        tool_results: vec![TurnToolResult {
            tool_call_id: call.to_owned(),
            tool_name: "update_plan".to_owned(),
            is_error: false,
        }],
    }
}

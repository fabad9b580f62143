//! The working plan and the arguments of the `update_plan` tool.
//!
//! The model sends its whole plan on every call. [`parse_update_plan`] checks the arguments
//! against the same bounds the host's tool schema declares (the constants below), so a call
//! that passes the schema also passes here and the other way round. String lengths are
//! counted in Unicode code points, as the schema validator counts them, never in bytes.
//!
//! [`analyze_transition`] compares the stored plan with the new one. A step counts as
//! completed only if its id was already in the stored plan with another status: completing a
//! step the model never registered, or restating an already completed plan under new ids,
//! is history and never creates a compaction point.
//!
//! ```
//! use serde_json::json;
//! use sol_occ::plan::{analyze_transition, parse_update_plan, StepStatus};
//!
//! let first = parse_update_plan(&json!({"steps": [
//!     {"id": "build", "goal": "Build the parser", "status": "in_progress"},
//!     {"id": "docs", "goal": "Document it", "status": "pending"},
//! ]}))?;
//! let second = parse_update_plan(&json!({"steps": [
//!     {"id": "build", "goal": "Build the parser", "status": "completed"},
//!     {"id": "docs", "goal": "Document it", "status": "in_progress"},
//! ]}))?;
//! assert_eq!(second.steps[0].status, StepStatus::Completed);
//!
//! let transition = analyze_transition(&first.steps, &second.steps);
//! assert_eq!(transition.completed_step_ids, vec!["build".to_owned()]);
//! assert!(transition.advice.is_empty());
//! # Ok::<(), sol_occ::plan::PlanError>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The name of the tool, fixed by the interface.
pub const TOOL_NAME: &str = "update_plan";
/// Most steps one plan may have (`steps.maxItems`).
pub const MAX_STEPS: usize = 128;
/// Fewest steps one `update_plan` call must send (`steps.minItems`).
pub const MIN_STEPS: usize = 1;
/// Longest step id or goal, in Unicode code points (`maxLength`).
pub const MAX_STEP_TEXT_CHARS: usize = 16_384;
/// Shortest step id or goal, in Unicode code points (`minLength`).
pub const MIN_STEP_TEXT_CHARS: usize = 1;
/// Most entries of `progress.files_changed`.
pub const MAX_FILES_CHANGED: usize = 128;
/// Most entries of `progress.verification`.
pub const MAX_VERIFICATION: usize = 64;
/// Most entries of `progress.decisions`.
pub const MAX_DECISIONS: usize = 64;
/// Longest entry of any progress list, in Unicode code points.
pub const MAX_PROGRESS_ITEM_CHARS: usize = 1000;

/// Argument key of the step list.
pub const KEY_STEPS: &str = "steps";
/// Argument key of the optional progress report.
pub const KEY_PROGRESS: &str = "progress";
/// Key of a step's id.
pub const KEY_ID: &str = "id";
/// Key of a step's goal.
pub const KEY_GOAL: &str = "goal";
/// Key of a step's status.
pub const KEY_STATUS: &str = "status";

/// The status of one plan step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on; a plan should have at most one.
    InProgress,
    /// Finished.
    Completed,
}

impl StepStatus {
    /// Every status, in the order the schema lists them.
    pub const ALL: [StepStatus; 3] = [
        StepStatus::Pending,
        StepStatus::InProgress,
        StepStatus::Completed,
    ];

    /// The JSON value: `pending`, `in_progress` or `completed`.
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::InProgress => "in_progress",
            StepStatus::Completed => "completed",
        }
    }

    /// Reads a JSON status value.
    pub fn parse(text: &str) -> Option<StepStatus> {
        StepStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

impl fmt::Display for StepStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One step of the plan, in the key order the model and the persisted state use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanStep {
    /// Stable identifier chosen by the model; unique within a plan.
    pub id: String,
    /// What the step achieves.
    pub goal: String,
    /// Where the step stands.
    pub status: StepStatus,
}

impl PlanStep {
    /// A step from borrowed parts.
    pub fn new(id: &str, goal: &str, status: StepStatus) -> PlanStep {
        PlanStep {
            id: id.to_owned(),
            goal: goal.to_owned(),
            status,
        }
    }

    /// Whether the step is finished.
    pub fn is_completed(&self) -> bool {
        self.status == StepStatus::Completed
    }
}

/// The optional evidence the model attaches when it completes a step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Files created or changed for the step.
    pub files_changed: Vec<String>,
    /// Commands or checks that verified the step, with their outcome.
    pub verification: Vec<String>,
    /// Decisions worth keeping.
    pub decisions: Vec<String>,
}

impl Progress {
    /// Whether all three lists are empty.
    pub fn is_empty(&self) -> bool {
        self.files_changed.is_empty() && self.verification.is_empty() && self.decisions.is_empty()
    }
}

/// One of the three progress lists, with its bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProgressList {
    /// `progress.files_changed`.
    FilesChanged,
    /// `progress.verification`.
    Verification,
    /// `progress.decisions`.
    Decisions,
}

impl ProgressList {
    /// The three lists in schema order.
    pub const ALL: [ProgressList; 3] = [
        ProgressList::FilesChanged,
        ProgressList::Verification,
        ProgressList::Decisions,
    ];

    /// The argument key.
    pub fn key(self) -> &'static str {
        match self {
            ProgressList::FilesChanged => "files_changed",
            ProgressList::Verification => "verification",
            ProgressList::Decisions => "decisions",
        }
    }

    /// Most entries the list may have.
    pub fn max_items(self) -> usize {
        match self {
            ProgressList::FilesChanged => MAX_FILES_CHANGED,
            ProgressList::Verification => MAX_VERIFICATION,
            ProgressList::Decisions => MAX_DECISIONS,
        }
    }

    fn slot(self, progress: &mut Progress) -> &mut Vec<String> {
        match self {
            ProgressList::FilesChanged => &mut progress.files_changed,
            ProgressList::Verification => &mut progress.verification,
            ProgressList::Decisions => &mut progress.decisions,
        }
    }
}

/// The validated arguments of one `update_plan` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanUpdate {
    /// The whole plan, at least one step.
    pub steps: Vec<PlanStep>,
    /// The progress report, if the call had one.
    pub progress: Option<Progress>,
}

/// What the model recorded for a completed step, kept until the next compaction and passed
/// to it as evidence. JSON keys in camelCase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressSummary {
    /// The first step completed by the call.
    pub step_id: String,
    /// That step's goal.
    pub goal: String,
    /// From the progress report.
    pub files_changed: Vec<String>,
    /// From the progress report.
    pub verification: Vec<String>,
    /// From the progress report.
    pub decisions: Vec<String>,
    /// The goals of every step not yet completed, in plan order.
    pub next_work: Vec<String>,
}

impl ProgressSummary {
    /// The summary for `step` of `plan` with the call's `progress`.
    pub fn new(step: &PlanStep, progress: &Progress, plan: &[PlanStep]) -> ProgressSummary {
        ProgressSummary {
            step_id: step.id.clone(),
            goal: step.goal.clone(),
            files_changed: progress.files_changed.clone(),
            verification: progress.verification.clone(),
            decisions: progress.decisions.clone(),
            next_work: plan
                .iter()
                .filter(|step| !step.is_completed())
                .map(|step| step.goal.clone())
                .collect(),
        }
    }
}

/// Why the arguments of an `update_plan` call, or a stored plan, were rejected.
///
/// Every message names the offending field and ends by saying the plan was not changed,
/// because the model reads it as the tool result and should simply send the plan again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The arguments are not a JSON object.
    #[error(
        "{tool_name} arguments must be an object like {{\"steps\": [{{\"id\": \"1\", \"goal\": \"...\", \"status\": \"pending\"}}]}}, got {found}; the plan was not changed"
    )]
    ArgumentsNotObject {
        /// The plan tool's model-facing name ([`TOOL_NAME`] unless the host named it
        /// otherwise).
        tool_name: String,
        /// The JSON kind that was given.
        found: String,
    },
    /// An argument other than `steps` and `progress`.
    #[error(
        "{tool_name} has an unknown argument {key:?}; only \"steps\" and \"progress\" are allowed; the plan was not changed"
    )]
    UnknownArgument {
        /// The plan tool's model-facing name.
        tool_name: String,
        /// The unknown key.
        key: String,
    },
    /// `steps` is missing or empty.
    #[error(
        "Plan must contain at least one valid step: send the whole plan in \"steps\"; the plan was not changed"
    )]
    NoSteps,
    /// `steps` is not an array.
    #[error("steps must be an array of steps, got {found}; the plan was not changed")]
    StepsNotArray {
        /// The JSON kind that was given.
        found: String,
    },
    /// More than [`MAX_STEPS`] steps.
    #[error("steps has {count} items, at most {MAX_STEPS} are allowed; the plan was not changed")]
    TooManySteps {
        /// How many steps were sent.
        count: usize,
    },
    /// A step is not an object.
    #[error(
        "steps[{index}] must be an object with \"id\", \"goal\" and \"status\", got {found}; the plan was not changed"
    )]
    StepNotObject {
        /// Position of the step.
        index: usize,
        /// The JSON kind that was given.
        found: String,
    },
    /// A step has a key other than `id`, `goal` and `status`.
    #[error(
        "steps[{index}] has an unknown key {key:?}; only \"id\", \"goal\" and \"status\" are allowed; the plan was not changed"
    )]
    UnknownStepKey {
        /// Position of the step.
        index: usize,
        /// The unknown key.
        key: String,
    },
    /// A step lacks `id`, `goal` or `status`.
    #[error("steps[{index}].{field} is missing; the plan was not changed")]
    MissingStepField {
        /// Position of the step.
        index: usize,
        /// `id`, `goal` or `status`.
        field: &'static str,
    },
    /// `id` or `goal` is not a string.
    #[error("steps[{index}].{field} must be a string, got {found}; the plan was not changed")]
    StepFieldNotString {
        /// Position of the step.
        index: usize,
        /// `id` or `goal`.
        field: &'static str,
        /// The JSON kind that was given.
        found: String,
    },
    /// `id` or `goal` is empty.
    #[error("steps[{index}].{field} must not be empty; the plan was not changed")]
    EmptyStepField {
        /// Position of the step.
        index: usize,
        /// `id` or `goal`.
        field: &'static str,
    },
    /// `id` or `goal` is longer than [`MAX_STEP_TEXT_CHARS`] code points.
    #[error(
        "steps[{index}].{field} has {chars} characters, at most {MAX_STEP_TEXT_CHARS} are allowed; the plan was not changed"
    )]
    StepFieldTooLong {
        /// Position of the step.
        index: usize,
        /// `id` or `goal`.
        field: &'static str,
        /// Its length in code points.
        chars: usize,
    },
    /// `status` is not one of the three statuses.
    #[error(
        "steps[{index}].status must be \"pending\", \"in_progress\" or \"completed\", got {found}; the plan was not changed"
    )]
    InvalidStatus {
        /// Position of the step.
        index: usize,
        /// The value that was given (a JSON string is shown quoted).
        found: String,
    },
    /// Two steps share an id.
    #[error(
        "steps[{index}].id {id:?} is used by an earlier step; step ids must be unique; the plan was not changed"
    )]
    DuplicateStepId {
        /// Position of the second step with the id.
        index: usize,
        /// The repeated id.
        id: String,
    },
    /// `progress` is not an object.
    #[error(
        "progress must be an object with \"files_changed\", \"verification\" and \"decisions\" lists, got {found}; the plan was not changed"
    )]
    ProgressNotObject {
        /// The JSON kind that was given.
        found: String,
    },
    /// `progress` has a key other than the three lists.
    #[error(
        "progress has an unknown key {key:?}; only \"files_changed\", \"verification\" and \"decisions\" are allowed; the plan was not changed"
    )]
    UnknownProgressKey {
        /// The unknown key.
        key: String,
    },
    /// A progress list is not an array.
    #[error("progress.{list} must be an array of strings, got {found}; the plan was not changed")]
    ProgressListNotArray {
        /// The list's key.
        list: &'static str,
        /// The JSON kind that was given.
        found: String,
    },
    /// A progress list has too many entries.
    #[error(
        "progress.{list} has {count} items, at most {max} are allowed; the plan was not changed"
    )]
    TooManyProgressItems {
        /// The list's key.
        list: &'static str,
        /// How many entries were sent.
        count: usize,
        /// The bound.
        max: usize,
    },
    /// A progress entry is not a string.
    #[error("progress.{list}[{index}] must be a string, got {found}; the plan was not changed")]
    ProgressItemNotString {
        /// The list's key.
        list: &'static str,
        /// Position in the list.
        index: usize,
        /// The JSON kind that was given.
        found: String,
    },
    /// A progress entry is longer than [`MAX_PROGRESS_ITEM_CHARS`] code points.
    #[error(
        "progress.{list}[{index}] has {chars} characters, at most {MAX_PROGRESS_ITEM_CHARS} are allowed; the plan was not changed"
    )]
    ProgressItemTooLong {
        /// The list's key.
        list: &'static str,
        /// Position in the list.
        index: usize,
        /// Its length in code points.
        chars: usize,
    },
}

impl PlanError {
    /// A stable snake-case identifier of the kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            PlanError::ArgumentsNotObject { .. } => "arguments_not_object",
            PlanError::UnknownArgument { .. } => "unknown_argument",
            PlanError::NoSteps => "no_steps",
            PlanError::StepsNotArray { .. } => "steps_not_array",
            PlanError::TooManySteps { .. } => "too_many_steps",
            PlanError::StepNotObject { .. } => "step_not_object",
            PlanError::UnknownStepKey { .. } => "unknown_step_key",
            PlanError::MissingStepField { .. } => "missing_step_field",
            PlanError::StepFieldNotString { .. } => "step_field_not_string",
            PlanError::EmptyStepField { .. } => "empty_step_field",
            PlanError::StepFieldTooLong { .. } => "step_field_too_long",
            PlanError::InvalidStatus { .. } => "invalid_status",
            PlanError::DuplicateStepId { .. } => "duplicate_step_id",
            PlanError::ProgressNotObject { .. } => "progress_not_object",
            PlanError::UnknownProgressKey { .. } => "unknown_progress_key",
            PlanError::ProgressListNotArray { .. } => "progress_list_not_array",
            PlanError::TooManyProgressItems { .. } => "too_many_progress_items",
            PlanError::ProgressItemNotString { .. } => "progress_item_not_string",
            PlanError::ProgressItemTooLong { .. } => "progress_item_too_long",
        }
    }
}

/// Length of `text` in Unicode code points, the unit of every bound in this module.
pub fn code_points(text: &str) -> usize {
    text.chars().count()
}

/// Validates the arguments of an `update_plan` call; the error texts name Pi's tool,
/// [`TOOL_NAME`] ([`parse_update_plan_named`] for another name).
///
/// The checks run in this order: the kind of value, unknown arguments, `steps` (kind, count,
/// then each step in order: kind, unknown keys, `id`, `goal`, `status`, uniqueness of the
/// id), then `progress`. An empty `steps` array is rejected here although a stored plan may
/// be empty (see [`parse_plan_steps`]).
///
/// # Errors
///
/// A [`PlanError`] describing the first problem found.
pub fn parse_update_plan(args: &Value) -> Result<PlanUpdate, PlanError> {
    parse_update_plan_named(args, TOOL_NAME)
}

/// [`parse_update_plan`] for a plan tool the host registered as `tool_name`: the error
/// texts that name the tool name it so, since the model reads them as the tool result.
///
/// # Errors
///
/// A [`PlanError`] describing the first problem found.
///
/// ```
/// use serde_json::json;
/// use sol_occ::plan::{parse_update_plan, parse_update_plan_named};
///
/// let error = parse_update_plan_named(&json!([]), "set_plan").unwrap_err();
/// assert!(error.to_string().starts_with("set_plan arguments must be an object"));
/// let error = parse_update_plan(&json!({"plan": []})).unwrap_err();
/// assert!(error.to_string().starts_with("update_plan has an unknown argument \"plan\""));
/// ```
pub fn parse_update_plan_named(args: &Value, tool_name: &str) -> Result<PlanUpdate, PlanError> {
    let object = args
        .as_object()
        .ok_or_else(|| PlanError::ArgumentsNotObject {
            tool_name: tool_name.to_owned(),
            found: kind(args).to_owned(),
        })?;
    if let Some(key) = object
        .keys()
        .find(|key| *key != KEY_STEPS && *key != KEY_PROGRESS)
    {
        return Err(PlanError::UnknownArgument {
            tool_name: tool_name.to_owned(),
            key: key.clone(),
        });
    }
    let steps = match object.get(KEY_STEPS) {
        None => return Err(PlanError::NoSteps),
        Some(steps) => parse_plan_steps(steps)?,
    };
    if steps.len() < MIN_STEPS {
        return Err(PlanError::NoSteps);
    }
    let progress = object.get(KEY_PROGRESS).map(parse_progress).transpose()?;
    Ok(PlanUpdate { steps, progress })
}

/// Validates a plan: an array of at most [`MAX_STEPS`] steps with bounded, non-empty ids
/// and goals, known statuses and unique ids. An empty array is a valid (empty) plan; this
/// is how a stored plan is read back.
///
/// # Errors
///
/// A [`PlanError`] describing the first problem found.
pub fn parse_plan_steps(value: &Value) -> Result<Vec<PlanStep>, PlanError> {
    let items = value.as_array().ok_or_else(|| PlanError::StepsNotArray {
        found: kind(value).to_owned(),
    })?;
    if items.len() > MAX_STEPS {
        return Err(PlanError::TooManySteps { count: items.len() });
    }
    let mut seen = BTreeSet::new();
    let mut steps = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let step = parse_step(index, item)?;
        if !seen.insert(step.id.clone()) {
            return Err(PlanError::DuplicateStepId { index, id: step.id });
        }
        steps.push(step);
    }
    Ok(steps)
}

fn parse_step(index: usize, item: &Value) -> Result<PlanStep, PlanError> {
    let object = item.as_object().ok_or_else(|| PlanError::StepNotObject {
        index,
        found: kind(item).to_owned(),
    })?;
    if let Some(key) = object
        .keys()
        .find(|key| ![KEY_ID, KEY_GOAL, KEY_STATUS].contains(&key.as_str()))
    {
        return Err(PlanError::UnknownStepKey {
            index,
            key: key.clone(),
        });
    }
    let id = step_text(object, index, KEY_ID)?;
    let goal = step_text(object, index, KEY_GOAL)?;
    let status = match object.get(KEY_STATUS) {
        None => {
            return Err(PlanError::MissingStepField {
                index,
                field: KEY_STATUS,
            });
        }
        Some(Value::String(text)) => {
            StepStatus::parse(text).ok_or_else(|| PlanError::InvalidStatus {
                index,
                found: format!("{text:?}"),
            })?
        }
        Some(other) => {
            return Err(PlanError::InvalidStatus {
                index,
                found: kind(other).to_owned(),
            });
        }
    };
    Ok(PlanStep { id, goal, status })
}

fn step_text(
    object: &Map<String, Value>,
    index: usize,
    field: &'static str,
) -> Result<String, PlanError> {
    match object.get(field) {
        None => Err(PlanError::MissingStepField { index, field }),
        Some(Value::String(text)) => {
            let chars = code_points(text);
            if chars < MIN_STEP_TEXT_CHARS {
                Err(PlanError::EmptyStepField { index, field })
            } else if chars > MAX_STEP_TEXT_CHARS {
                Err(PlanError::StepFieldTooLong {
                    index,
                    field,
                    chars,
                })
            } else {
                Ok(text.clone())
            }
        }
        Some(other) => Err(PlanError::StepFieldNotString {
            index,
            field,
            found: kind(other).to_owned(),
        }),
    }
}

fn parse_progress(value: &Value) -> Result<Progress, PlanError> {
    let object = value
        .as_object()
        .ok_or_else(|| PlanError::ProgressNotObject {
            found: kind(value).to_owned(),
        })?;
    if let Some(key) = object
        .keys()
        .find(|key| !ProgressList::ALL.iter().any(|list| list.key() == *key))
    {
        return Err(PlanError::UnknownProgressKey { key: key.clone() });
    }
    let mut progress = Progress::default();
    for list in ProgressList::ALL {
        let Some(value) = object.get(list.key()) else {
            continue;
        };
        let items = value
            .as_array()
            .ok_or_else(|| PlanError::ProgressListNotArray {
                list: list.key(),
                found: kind(value).to_owned(),
            })?;
        if items.len() > list.max_items() {
            return Err(PlanError::TooManyProgressItems {
                list: list.key(),
                count: items.len(),
                max: list.max_items(),
            });
        }
        let slot = list.slot(&mut progress);
        for (index, item) in items.iter().enumerate() {
            let Value::String(text) = item else {
                return Err(PlanError::ProgressItemNotString {
                    list: list.key(),
                    index,
                    found: kind(item).to_owned(),
                });
            };
            let chars = code_points(text);
            if chars > MAX_PROGRESS_ITEM_CHARS {
                return Err(PlanError::ProgressItemTooLong {
                    list: list.key(),
                    index,
                    chars,
                });
            }
            slot.push(text.clone());
        }
    }
    Ok(progress)
}

/// The JSON kind of a value, as error messages name it.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A note returned with the tool result when the plan looks inconsistent. Advice never
/// rejects a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanAdvice {
    /// A step id that was already registered now carries a different goal.
    GoalChanged {
        /// The reused id.
        id: String,
    },
    /// More than one step is in progress.
    SeveralInProgress {
        /// The ids of the steps in progress, in plan order.
        ids: Vec<String>,
    },
    /// No step is in progress although some are pending.
    NoneInProgress,
}

impl PlanAdvice {
    /// A stable snake-case identifier of the kind of advice.
    pub fn code(&self) -> &'static str {
        match self {
            PlanAdvice::GoalChanged { .. } => "goal_changed",
            PlanAdvice::SeveralInProgress { .. } => "several_in_progress",
            PlanAdvice::NoneInProgress => "none_in_progress",
        }
    }

    /// The line the model reads under the plan snapshot.
    pub fn text(&self) -> String {
        match self {
            PlanAdvice::GoalChanged { id } => format!(
                "Note: step {id:?} changed goal. Reuse a step id only for the same goal; give new work a new id."
            ),
            PlanAdvice::SeveralInProgress { ids } => format!(
                "Note: {} steps are in_progress ({}). Keep at most one step in_progress and mark finished steps completed.",
                ids.len(),
                quoted_list(ids)
            ),
            PlanAdvice::NoneInProgress => "Note: no step is in_progress while pending steps remain. Mark the pending step you start next as in_progress before working on it.".to_owned(),
        }
    }
}

fn quoted_list(ids: &[String]) -> String {
    ids.iter()
        .map(|id| format!("{id:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What changed between the stored plan and a new one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlanTransition {
    /// Ids that were registered in the previous plan with another status and are now
    /// completed, in the order of the new plan.
    pub completed_step_ids: Vec<String>,
    /// Notes for the model, in a fixed order: changed goals (plan order), several steps in
    /// progress, no step in progress.
    pub advice: Vec<PlanAdvice>,
}

impl PlanTransition {
    /// Whether the update completes a registered step: a plan boundary.
    pub fn is_boundary(&self) -> bool {
        !self.completed_step_ids.is_empty()
    }
}

/// Compares the stored plan with a new one.
///
/// The same comparison applies to every update, including the first after a compaction:
/// restating the same plan yields no completion (completed stays completed), and an id the
/// previous plan did not have is history even when it arrives completed, so a plan re-keyed
/// after a compaction never creates a boundary.
pub fn analyze_transition(previous: &[PlanStep], next: &[PlanStep]) -> PlanTransition {
    let before: BTreeMap<&str, &PlanStep> = previous
        .iter()
        .map(|step| (step.id.as_str(), step))
        .collect();
    let completed_step_ids = next
        .iter()
        .filter(|step| step.is_completed())
        .filter(|step| {
            before
                .get(step.id.as_str())
                .is_some_and(|old| !old.is_completed())
        })
        .map(|step| step.id.clone())
        .collect();

    let mut advice: Vec<PlanAdvice> = next
        .iter()
        .filter(|step| {
            before
                .get(step.id.as_str())
                .is_some_and(|old| old.goal != step.goal)
        })
        .map(|step| PlanAdvice::GoalChanged {
            id: step.id.clone(),
        })
        .collect();
    let in_progress: Vec<String> = next
        .iter()
        .filter(|step| step.status == StepStatus::InProgress)
        .map(|step| step.id.clone())
        .collect();
    if in_progress.len() > 1 {
        advice.push(PlanAdvice::SeveralInProgress { ids: in_progress });
    } else if in_progress.is_empty() && next.iter().any(|step| step.status == StepStatus::Pending) {
        advice.push(PlanAdvice::NoneInProgress);
    }
    PlanTransition {
        completed_step_ids,
        advice,
    }
}

/// Whether the plan has steps and all of them are completed.
pub fn is_fully_completed(plan: &[PlanStep]) -> bool {
    !plan.is_empty() && plan.iter().all(PlanStep::is_completed)
}

/// How many steps are not completed yet: the remaining plan boundaries.
pub fn remaining_steps(plan: &[PlanStep]) -> u64 {
    plan.iter().filter(|step| !step.is_completed()).count() as u64
}

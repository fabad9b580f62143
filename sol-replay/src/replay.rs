//! One branch of a recorded session run again under each context policy, every policy
//! through the savings [`Book`] the live extension keeps.
//!
//! The requests are rebuilt as Pi builds them from the branch: every message, custom
//! message and branch summary in order, and at a compaction its summary followed by the
//! entries from `firstKeptEntryId` on. Before each assistant message that was billed, the
//! context so far is one provider request; the assistant message's usage is its response.
//! Each policy then changes those requests the way its mechanism would:
//!
//! - **ObservationPack**: a result it would archive (text only, not an error, over its
//!   threshold, not a receipt) is sent in full to the first two requests that carry it
//!   and as its placeholder from the third on ([`sol_obspack::decide`], counting the
//!   assistant messages after it in the request, as the extension does).
//! - **Online Context Compact**: its compactions as the session recorded them (a compaction
//!   followed by OCC's continuation or whose OCC state marks it a boundary compaction);
//!   their summaries stand for what the compaction removed, and the summarizer call is
//!   OCC's own cost. A session recorded without SoL-Pi has no `update_plan` steps, so
//!   OCC has no boundary to act at there.
//! - **Action Fusion**: a fused call the session made (`then_run`) saved the model's next
//!   turn; an `edit` or `write` followed, in the next turn, by a `bash` call is an
//!   opportunity: that turn's request would not have been needed.
//! - **Reducer candidates**: the results its candidate selection accepts, counted with the
//!   bytes of the logs it would have sent. Without its model there is no receipt, so no
//!   saving is priced for it.
//! - **Observation masking**: every tool result but the last [`ReplayOptions::mask_keep`]
//!   of a request is replaced by [`MASK_TEXT`] (the simple baseline of the Complexity Trap
//!   study), an outside reference for SoL-Pi.
//!
//! Every policy is priced by the same cache model ([`sol_core::savings`]): a changed
//! prefix is a cache write from that point on.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Value, json};
use sol_core::Mechanism;
use sol_core::StepAccount;
use sol_core::message::AgentMessage;
use sol_core::savings::{
    Book, Change, LAYERS, ModelPrices, Money, Part, PriceTable, Report, ReportedUsage,
    ResponseUsage, SAVINGS_ENTRY_TYPE, Savings, SentPart, ToolCall, layer_of, own_changes,
    prompt_after_lifetime, request_cause,
};

use sol_occ::economics::MEMO_TOKENS;
use sol_occ::plan::TOOL_NAME as PLAN_TOOL;
use sol_occ::session::CORRECTION_PREFIX;
use sol_occ::session::{
    BoundaryMeasurement, CompactionResult, ContextEvent, Effect, InputEvent, OccSession,
    StopReason, TurnEnd, TurnToolResult,
};
use sol_occ::settings::OccOptions;
use sol_occ::tokens::{MessageRole, SizedMessage};

use sol_obspack::placement::{CacheMisses, Pending, Shape, place};
use sol_obspack::recent::keeps_recent;
use sol_reducer::economics::{Economy, weigh};

use crate::prices::ModelPriceTable;
use crate::reader::{
    CompactionFacts as RecordedCompaction, ContentDigest, Entry, EntryKind, MessageFacts,
    PackFacts, Role, Session,
};

/// How many of the newest tool results the masking baseline keeps (the Complexity Trap
/// study's N).
pub const MASK_KEEP: usize = 10;

/// How many of the newest tool outputs the recent-outputs placement keeps in full by
/// default (`keepRecentOutputs: true`).
pub const DEFAULT_KEEP_RECENT_OUTPUTS: u32 = sol_obspack::DEFAULT_KEEP_RECENT_OUTPUTS;

/// The context window a re-decided Online Context Compact measures against by default.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// The text the masking baseline sends instead of an older tool result.
pub const MASK_TEXT: &str = "[Old tool output omitted.]";

/// OCC's continuation message type and its state entry type, as the extension writes them.
const OCC_CONTINUATION: &str = "sol-pi-online-context-compact";
const OCC_STATE: &str = "sol-pi-online-context-state-v1";

/// What a replay assumes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayOptions {
    /// The prices every policy is billed at.
    pub prices: PriceTable,
    /// How many of the newest tool results the masking baseline keeps.
    pub mask_keep: usize,
    /// Replay every leaf's branch, not only the active one.
    pub all_branches: bool,
    /// Decide Online Context Compact's boundaries again at this `cacheWriteReadRatio`
    /// (its real session state machine, fed the branch's plan calls, turns and sizes)
    /// instead of taking the compactions the session recorded; `None` takes the recorded.
    pub occ_ratio: Option<f64>,
    /// The model's context window the re-decided boundaries are measured against.
    pub context_window: u64,
    /// Pi's `keepRecentTokens` for the re-decided compactions (the tail a compaction keeps);
    /// `None` is Pi's default.
    pub keep_recent_tokens: Option<u64>,
    /// The `cacheWriteReadRatio` ObservationPack's cache-aware placement weighs its
    /// rewrites at (the configured one).
    pub placement_ratio: f64,
    /// How many of the newest tool outputs the recent-outputs placement keeps in full
    /// (`keepRecentOutputs`).
    pub keep_recent_outputs: u32,
    /// The session ran with `cacheAware`: SoL-Pi's own rows (and the `/sol-pi` table) place
    /// results by the cache-aware economics, as the live extension did.
    pub cache_aware: bool,
    /// The session ran with `keepRecentOutputs` (at [`keep_recent_outputs`](Self::keep_recent_outputs)):
    /// SoL-Pi's own rows (and the `/sol-pi` table) place results by the recent-outputs
    /// placement, as the live extension did; it wins over [`cache_aware`](Self::cache_aware),
    /// as in the extension.
    #[serde(default)]
    pub recent_outputs: bool,
    /// Price each request that carries the provider's reported usage from that report (its
    /// input, its cache read), every policy alike ([`sol_core::savings::ReportScale`]); a
    /// request without one from Pi's estimate. Off: every request from the estimate.
    pub from_reports: bool,
    /// Price each request at the model that answered it, from the bundled table of Pi's
    /// models ([`crate::prices::ModelPriceTable`]), a model the table lacks at `prices`. Off:
    /// every request at `prices` (the command sets it off when prices are given).
    pub per_model_prices: bool,
    /// How long the provider keeps a prompt cache, in seconds: a request that starts with a
    /// user prompt sent longer than this after the previous response finds its cache expired
    /// (a break put down to the lifetime; without a report, read from nowhere). Anthropic's
    /// default is 5 minutes; a request that asked for long retention keeps it an hour.
    pub cache_lifetime_seconds: u64,
    /// Build and book every request whole instead of from where it differs from the one
    /// before: the same figures, in time quadratic in a branch's length; kept so that tests
    /// can hold the two ways against each other. Not part of a report.
    #[serde(skip)]
    pub whole_requests: bool,
}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions {
            prices: PriceTable::default(),
            mask_keep: MASK_KEEP,
            all_branches: false,
            occ_ratio: None,
            context_window: DEFAULT_CONTEXT_WINDOW,
            keep_recent_tokens: None,
            placement_ratio: sol_core::config::DEFAULT_CACHE_WRITE_READ_RATIO,
            keep_recent_outputs: sol_obspack::DEFAULT_KEEP_RECENT_OUTPUTS,
            cache_aware: false,
            recent_outputs: false,
            from_reports: true,
            per_model_prices: true,
            cache_lifetime_seconds: DEFAULT_CACHE_LIFETIME_SECONDS,
            whole_requests: false,
        }
    }
}

/// The policies a replay compares, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Policy {
    /// What was really sent without SoL-Pi: Pi's own threshold compaction only.
    PlainPi,
    /// SoL-Pi's ObservationPack alone.
    ObservationPack,
    /// ObservationPack and Online Context Compact.
    ObservationPackOcc,
    /// ObservationPack with the cache-aware placement (`cacheAware`).
    CacheAwarePack,
    /// ObservationPack with the cache-aware placement and Online Context Compact.
    CacheAwarePackOcc,
    /// ObservationPack with the recent-outputs placement (`keepRecentOutputs`).
    RecentPack,
    /// Action Fusion: the fused calls made and the opportunities found.
    ActionFusion,
    /// The reducer's candidates (counted, not priced).
    ReducerCandidates,
    /// The masking baseline.
    ObservationMasking,
}

impl Policy {
    /// Every policy, in the order shown.
    pub const ALL: [Policy; 9] = [
        Policy::PlainPi,
        Policy::ObservationPack,
        Policy::ObservationPackOcc,
        Policy::CacheAwarePack,
        Policy::CacheAwarePackOcc,
        Policy::RecentPack,
        Policy::ActionFusion,
        Policy::ReducerCandidates,
        Policy::ObservationMasking,
    ];

    /// The row's label.
    pub fn label(self) -> &'static str {
        match self {
            Policy::PlainPi => "Plain Pi",
            Policy::ObservationPack => "SoL-Pi ObservationPack",
            Policy::ObservationPackOcc => "SoL-Pi ObservationPack + OCC",
            Policy::CacheAwarePack => "Cache-aware ObservationPack",
            Policy::CacheAwarePackOcc => "Cache-aware ObservationPack + OCC",
            Policy::RecentPack => "Recent-outputs ObservationPack",
            Policy::ActionFusion => "Action Fusion",
            Policy::ReducerCandidates => "Reducer candidates",
            Policy::ObservationMasking => "Masking (last N outputs)",
        }
    }
}

/// One policy's figures on one branch.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRow {
    /// The policy.
    pub policy: Policy,
    /// Provider requests sent under it.
    pub requests: u64,
    /// Their input tokens.
    pub input_tokens: u64,
    /// What they cost, with the policy's own model calls.
    pub cost: Money,
    /// Requests fewer than plain Pi.
    pub requests_saved: i128,
    /// Input tokens fewer than plain Pi.
    pub input_tokens_saved: i128,
    /// Plain Pi's cost less this one's (negative for a loss).
    pub net_saved: Money,
    /// Whether the saving is priced (not for the reducer's candidates, whose receipts need
    /// its model).
    pub priced: bool,
    /// Results the policy replaced that the model later relied on: a reply quoted a line of
    /// one ([`crate::reader::quotable_lines`]) after the replacement, while no message still
    /// sent in full held that line. Each would have needed a recall (or given a worse answer).
    pub recalls_needed: u64,
    /// Those recalls priced, each as one more request: the context read from the cache, the
    /// recalled page (up to `obs_recall`'s page) written, a short reply. Not in `cost`.
    pub recall_cost: Money,
    /// The results the policy sent as placeholders (or masks) on some request: what
    /// `recalls_needed` is a share of.
    pub results_replaced: u64,
}

/// What Action Fusion did and could have done on a branch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FusionFacts {
    /// Fused calls the session made (`then_run`), each saving the model's next turn.
    pub fused: u64,
    /// Turns a fused call would have saved: an `edit` or `write`, then `bash` next turn.
    pub opportunities: u64,
    /// The context tokens of those turns' requests.
    pub opportunity_tokens: u64,
}

/// The reducer's candidates on a branch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReducerFacts {
    /// Results it would have reduced.
    pub candidates: u64,
    /// The bytes of the logs it would have sent its model.
    pub log_bytes: u64,
    /// Results that already are receipts (the session ran the reducer); those with the
    /// reducer's record are counted among the candidates, with their logs' bytes.
    pub receipts: u64,
    /// The tokens the reducer calls for the candidates the replay sees would read (the
    /// instructions and the framed logs), as the fixed policy calls for every one.
    pub call_input_tokens: u64,
    /// Of those candidates, the ones the cache-aware economics find worth their call
    /// (`cacheAware`), weighed at the replay's prices, its `cacheWriteReadRatio` and the
    /// assistant messages on the branch when the result came.
    pub economic: u64,
    /// The tokens the reducer calls for the economic candidates would read.
    pub economic_call_input_tokens: u64,
}

/// Compactions on a branch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionFacts {
    /// Online Context Compact's, at completed plan steps.
    pub occ: u64,
    /// Pi's own.
    pub pi: u64,
    /// `update_plan` calls: without them OCC has no boundary.
    pub plan_calls: u64,
    /// With [`ReplayOptions::occ_ratio`]: the compactions OCC made when it decided again.
    pub redecided: Option<u64>,
}

/// The replay of one branch.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchReplay {
    /// The leaf's entry id.
    pub leaf: String,
    /// Whether it is the branch Pi continues (the last line's).
    pub active: bool,
    /// Entries on the branch.
    pub entries: usize,
    /// Message entries on it.
    pub messages: usize,
    /// SoL-Pi as the replay reproduces it: Action Fusion (made and possible),
    /// ObservationPack and Online Context Compact (as recorded); the `/sol-pi` table.
    pub sol_pi: Savings,
    /// One row per policy, in [`Policy::ALL`]'s order.
    pub policies: Vec<PolicyRow>,
    /// Action Fusion's figures.
    pub fusion: FusionFacts,
    /// The reducer's candidates.
    pub reducer: ReducerFacts,
    /// The compactions.
    pub compactions: CompactionFacts,
    /// Tool results the masking baseline replaced in at least one request.
    pub masked_outputs: u64,
    /// The newest totals the live extension recorded on the branch, if it ran.
    pub recorded: Option<Savings>,
}

impl BranchReplay {
    /// The row of `policy`.
    pub fn row(&self, policy: Policy) -> &PolicyRow {
        &self.policies[Policy::ALL
            .iter()
            .position(|known| *known == policy)
            .unwrap_or(0)]
    }
}

/// The replay of one session file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionReplay {
    /// The file's name as given.
    pub file: String,
    /// The header's format version.
    pub version: u64,
    /// Entries in the file.
    pub entries: usize,
    /// Bytes read.
    pub bytes: u64,
    /// What the reader reported (torn lines).
    pub warnings: Vec<String>,
    /// Whether the file holds the system prompt (Pi 1.x writes it as a `system` message;
    /// 0.84.2 does not, so its requests are counted without it).
    pub system_prompt_recorded: bool,
    /// The active branch, then with `all_branches` every other leaf's, in file order.
    pub branches: Vec<BranchReplay>,
}

/// Replays `session` under every policy.
pub fn replay_session(session: &Session, options: &ReplayOptions) -> SessionReplay {
    let table = options.per_model_prices.then(ModelPriceTable::bundled);
    let pricing = Pricing {
        // The reports describe what was sent: plain Pi's requests in a session recorded
        // without SoL-Pi, the requests as sent in one recorded with it.
        reference: options.from_reports.then(|| {
            if recorded_with_sol_pi(session) {
                LAYERS - 1
            } else {
                0
            }
        }),
        models: table.as_ref(),
    };
    let active = session.leaf();
    let mut leaves: Vec<_> = active.into_iter().collect();
    if options.all_branches {
        leaves.extend(session.leaves().filter(|leaf| Some(*leaf) != active));
    }
    let mut shared = if leaves.len() > 1 {
        replay_tree(session, options, pricing)
    } else {
        None
    };
    let branches = leaves
        .into_iter()
        .map(|leaf| {
            let mut replay = shared
                .as_mut()
                .and_then(|replays| replays.remove(&leaf.get()))
                .unwrap_or_else(|| replay_branch(&session.branch(leaf), options, pricing));
            replay.active = Some(leaf) == active;
            replay
        })
        .collect();
    let system_prompt_recorded = session.entries().iter().any(|entry| {
        entry
            .message()
            .is_some_and(|message| message.role == Role::System)
    });
    SessionReplay {
        file: session.file().to_owned(),
        version: session.header().version,
        entries: session.entries().len(),
        bytes: session.bytes(),
        warnings: session.warnings().iter().map(ToString::to_string).collect(),
        system_prompt_recorded,
        branches,
    }
}

/// A prompt cache's lifetime unless told otherwise: Anthropic's default, 5 minutes.
pub const DEFAULT_CACHE_LIFETIME_SECONDS: u64 = 300;

/// How a walk prices its requests.
#[derive(Clone, Copy)]
struct Pricing<'a> {
    /// The layer whose requests the session's reports describe; `None`: every request from
    /// Pi's estimate.
    reference: Option<usize>,
    /// Each model's prices; `None`: every request at the options' prices.
    models: Option<&'a ModelPriceTable>,
}

impl Pricing<'_> {
    /// A book that prices from the reports.
    fn book(&self) -> Book {
        let mut book = Book::new();
        if let Some(layer) = self.reference {
            book.calibrate_to_reports(layer);
        }
        book
    }

    /// The prices of the model `key`, when models are priced on their own.
    fn prices_of(&self, key: &str) -> Option<ModelPrices> {
        self.models.and_then(|table| table.get(key))
    }
}

/// The mechanism whose tool `name` is: ObservationPack's `obs_recall`, Online Context
/// Compact's `update_plan`; `None` for any other tool.
fn tool_owner(name: &str) -> Option<Mechanism> {
    if name == sol_obspack::text::TOOL_NAME {
        Some(Mechanism::ObservationPack)
    } else if name == PLAN_TOOL {
        Some(Mechanism::OnlineContextCompact)
    } else {
        None
    }
}

/// Whether SoL-Pi was loaded when the session was recorded: it wrote an entry of its own.
fn recorded_with_sol_pi(session: &Session) -> bool {
    session.entries().iter().any(|entry| {
        matches!(entry.kind(), EntryKind::Custom { custom_type, .. } if custom_type.starts_with("sol-pi"))
    })
}

/// A message of the context being rebuilt.
#[derive(Debug, Clone)]
struct ContextPart {
    /// The entry's position on the branch.
    position: usize,
    role: PartRole,
    tokens: u64,
    /// What the fixed rule and the cache-aware placement pack (over their threshold).
    pack: Option<PackFacts>,
    /// What the recent-outputs placement packs (over its lower threshold).
    medium: Option<PackFacts>,
    digest: Option<ContentDigest>,
    text_bytes: u64,
    /// A summary or continuation Online Context Compact added.
    by_occ: bool,
    /// A system message's identity (its content); other parts are told apart by position.
    identity: Option<ContentDigest>,
    /// A receipt's removed tokens: before it, the request carried the log.
    receipt_removed: Option<u64>,
    /// SoL-Pi's own tool traffic in it, lowest layer first: each mechanism whose tool it
    /// calls (or whose tool's result it is) and its tokens before that mechanism (`None`: not
    /// there), as `sol_core::savings::own_changes` finds them.
    own: Vec<(Mechanism, Option<u64>)>,
    /// Its tokens in the last request that carried it as SoL-Pi sent it (a placeholder's,
    /// once ObservationPack replaced it): what Online Context Compact sees and removes.
    sent_tokens: u64,
    /// `sent_tokens` under the cache-aware placement, and under the recent-outputs one.
    aware_sent_tokens: u64,
    recent_sent_tokens: u64,
    /// Its role as Online Context Compact tells cut points apart.
    occ_role: MessageRole,
    /// The result of a fused command not yet sent, with its tokens without the command's
    /// output ([`Book::fused_results`]).
    fused_without: Option<u64>,
}

impl ContextPart {
    fn new(position: usize, tokens: u64) -> ContextPart {
        ContextPart {
            position,
            role: PartRole::Other,
            tokens,
            pack: None,
            medium: None,
            digest: None,
            text_bytes: 0,
            by_occ: false,
            identity: None,
            receipt_removed: None,
            own: Vec::new(),
            sent_tokens: tokens,
            aware_sent_tokens: tokens,
            recent_sent_tokens: tokens,
            occ_role: MessageRole::Other,
            fused_without: None,
        }
    }

    /// The part's key in one form: a system message by its content, any other part by its
    /// position on the branch.
    fn key(&self, form: u64) -> u64 {
        match self.identity {
            Some(digest) => (digest.0 | (1 << 63)) & !7 | form,
            None => ((self.position as u64) << 3) | form,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartRole {
    Assistant,
    ToolResult,
    System,
    Other,
}

const ORIGINAL: u64 = 0;
const PLACEHOLDER: u64 = 1;
const MASKED: u64 = 2;
const LOG: u64 = 3;
/// The form of a message before SoL-Pi's own calls in it: `OWN + i` for its `i`-th change.
const OWN: u64 = 4;
/// A fused command's result without the command's output. (A tool result has at most one
/// change of its own, so `OWN + 3` is free for it.)
const FUSED: u64 = 7;

/// The books of one branch, fed request by request.
#[derive(Clone)]
struct Books {
    /// Fusion (made and possible), ObservationPack, OCC: the SoL-Pi table.
    sol_pi: Book,
    /// ObservationPack and OCC, when the branch has a fusion opportunity (else `sol_pi` is
    /// this book); Action Fusion's row is the first layers of `sol_pi`, which no later
    /// mechanism changes.
    pack: Option<Book>,
    /// The masking baseline: its requests as plain Pi's (no mechanism changed them), so
    /// its plain layer is the policy.
    mask: Book,
    /// ObservationPack with the cache-aware placement, and OCC as recorded.
    aware: Book,
    /// ObservationPack with the recent-outputs placement, and OCC as recorded.
    recent: Book,
}

impl Books {
    fn each(&mut self, mut apply: impl FnMut(&mut Book)) {
        apply(&mut self.sol_pi);
        if let Some(pack) = &mut self.pack {
            apply(pack);
        }
        apply(&mut self.mask);
        apply(&mut self.aware);
        apply(&mut self.recent);
    }

    /// Applies `apply` to every book with `fixed`, but to the cache-aware one with `aware`
    /// and to the recent-outputs one with `recent`.
    fn each_with<T: Copy>(
        &mut self,
        [fixed, aware, recent]: [T; 3],
        mut apply: impl FnMut(&mut Book, T),
    ) {
        apply(&mut self.sol_pi, fixed);
        if let Some(pack) = &mut self.pack {
            apply(pack, fixed);
        }
        apply(&mut self.mask, fixed);
        apply(&mut self.aware, aware);
        apply(&mut self.recent, recent);
    }

    /// Applies `apply` to the books whose placement is not the fixed rule's.
    fn placing(&mut self, mut apply: impl FnMut(&mut Book)) {
        apply(&mut self.aware);
        apply(&mut self.recent);
    }

    /// The response to the request each book began: the SoL-Pi book first, which holds the
    /// request the session sent (plain Pi's, or SoL-Pi's as the session ran it) and finds
    /// the scale of its report; every other book's request follows that scale.
    /// `owners` are the owners of the response's tool calls: a response that only calls
    /// SoL-Pi's tools answers a request plain Pi never sent.
    fn answer(&mut self, usage: ResponseUsage, failed: bool, owners: &[Option<Mechanism>]) {
        self.sol_pi.end_request_with(usage, failed, owners);
        let scale = self.sol_pi.report_scale();
        let follow = |book: &mut Book| {
            book.follow_scale(scale);
            book.end_request_with(usage, failed, owners);
        };
        if let Some(pack) = &mut self.pack {
            follow(pack);
        }
        follow(&mut self.aware);
        follow(&mut self.recent);
        follow(&mut self.mask);
    }

    /// Applies `apply` to the books that run ObservationPack by the fixed rule.
    fn packing(&mut self, mut apply: impl FnMut(&mut Book)) {
        apply(&mut self.sol_pi);
        if let Some(pack) = &mut self.pack {
            apply(pack);
        }
    }
}

/// An assistant message's response: its usage, and whether it ended in an abort or error.
fn response(message: &MessageFacts) -> (ResponseUsage, bool) {
    let assistant = message.assistant.as_deref();
    let failed = sol_core::message::reply_failed(assistant.and_then(|a| a.stop_reason.as_deref()));
    let reported = assistant.and_then(|a| a.usage).map(|usage| ReportedUsage {
        requests: 1,
        input: usage.input,
        cache_read: usage.cache_read,
        cache_write: usage.cache_write,
        output: usage.output,
    });
    let usage = ResponseUsage {
        estimated_output: message.tokens,
        reported,
    };
    (usage, failed)
}

/// Per position on the branch: the assistant message's request is one a fused call would
/// have saved (billed, a `bash` call, after an assistant message of the same prompt that
/// edited or wrote without `then_run`).
fn fusion_opportunities(branch: &[&Entry]) -> Vec<bool> {
    let mut unfused_edit = false;
    branch
        .iter()
        .map(|entry| {
            let Some(message) = entry.message() else {
                return false;
            };
            match message.role {
                Role::User => {
                    unfused_edit = false;
                    false
                }
                Role::Assistant => {
                    let calls = message.tool_calls();
                    let (usage, failed) = response(message);
                    let bash = calls.iter().any(|call| &*call.name == "bash");
                    let avoidable = unfused_edit && bash && usage.billed(failed);
                    unfused_edit = calls
                        .iter()
                        .any(|call| matches!(&*call.name, "edit" | "write") && !call.then_run);
                    avoidable
                }
                _ => false,
            }
        })
        .collect()
}

/// Every leaf's branch replayed in one walk of the session tree, by the index of its leaf:
/// each entry is replayed once, and where branches part the walk so far is copied, so the
/// time grows with the entries and the forks, not with the sum of every branch's length.
/// The longest subtree goes on with the walk itself and is taken last, so at most one copy
/// per fork on the way down waits at a time.
///
/// `None` (replay each branch on its own) with a re-decided Online Context Compact, whose
/// numbering of the parts it adds follows the branch's length, or where a fork comes between
/// a compaction and the entry that tells whether OCC made it.
fn replay_tree<'a>(
    session: &'a Session,
    options: &'a ReplayOptions,
    pricing: Pricing<'a>,
) -> Option<BTreeMap<usize, BranchReplay>> {
    if options.occ_ratio.is_some() {
        return None;
    }
    let entries = session.entries();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    let mut roots = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match entry.parent() {
            Some(parent) => children[parent.get()].push(index),
            None => roots.push(index),
        }
    }
    let mut by_occ = vec![false; entries.len()];
    for (index, entry) in entries.iter().enumerate() {
        if matches!(entry.kind(), EntryKind::Compaction(_)) {
            let mut current = index;
            by_occ[index] = loop {
                match children[current].as_slice() {
                    [] => break false,
                    [only] => match occ_verdict(&entries[*only]) {
                        Some(verdict) => break verdict,
                        None => current = *only,
                    },
                    _ => return None,
                }
            };
        }
    }
    // A parent is always on an earlier line: sizes add up from the last entry back.
    let mut sizes = vec![1usize; entries.len()];
    for index in (0..entries.len()).rev() {
        if let Some(parent) = entries[index].parent() {
            sizes[parent.get()] += sizes[index];
        }
    }
    let mut replays = BTreeMap::new();
    let mut pending: Vec<(usize, usize, Walk<'_>)> = roots
        .iter()
        .rev()
        .map(|root| (*root, 0, Walk::new(options, pricing, true, 0)))
        .collect();
    while let Some((index, position, mut walk)) = pending.pop() {
        walk.step(position, &entries[index], || by_occ[index]);
        let Some(&heavy) = children[index].iter().max_by_key(|child| sizes[**child]) else {
            let leaf = entries[index].id();
            let branch = session.branch(session.index_of(leaf)?);
            replays.insert(index, walk.finish(&branch));
            continue;
        };
        let light: Vec<_> = children[index]
            .iter()
            .filter(|child| **child != heavy)
            .map(|child| (*child, position + 1, walk.clone()))
            .collect();
        pending.push((heavy, position + 1, walk));
        pending.extend(light);
    }
    Some(replays)
}

fn replay_branch(branch: &[&Entry], options: &ReplayOptions, pricing: Pricing<'_>) -> BranchReplay {
    // Without an opportunity, ObservationPack's own book would be the SoL-Pi book again.
    let separate_pack = fusion_opportunities(branch).contains(&true);
    let mut walk = Walk::new(options, pricing, separate_pack, branch.len());
    for (position, entry) in branch.iter().enumerate() {
        walk.step(position, entry, || {
            is_occ_compaction(&branch[position + 1..])
        });
    }
    walk.finish(branch)
}

/// The replay of a branch so far, entry by entry: what one entry changes depends only on the
/// entries before it on the branch (and, at a compaction, on whether Online Context Compact
/// made it), so branches that share their first entries share this walk up to where they part.
#[derive(Clone)]
struct Walk<'a> {
    options: &'a ReplayOptions,
    pricing: Pricing<'a>,
    mask_tokens: u64,
    books: Books,
    placement: CacheAware,
    /// The recent-outputs placement.
    recent: CacheAware,
    /// What the provider did at the prompt-start requests so far, and the input of the
    /// last request it reported (the recent-outputs placement's miss chance).
    cache_misses: CacheMisses,
    last_reported_input: Option<u64>,
    context: Vec<ContextPart>,
    /// What the walk keeps of the context between requests.
    tracked: Tracked,
    fusion: FusionFacts,
    reducer: ReducerFacts,
    compactions: CompactionFacts,
    archived: BTreeSet<ContentDigest>,
    /// Per position on the branch: the masking baseline replaced the result there.
    masked: Vec<bool>,
    /// The replaced results the model later relied on, per policy.
    reliance: Reliance,
    messages: usize,
    /// The assistant messages on the branch so far: the session's age in requests, which the
    /// reducer's economics weigh a receipt over (as the live extension counts it).
    assistants: u32,
    /// The position of each entry on the branch so far, by id.
    positions: BTreeMap<&'a str, usize>,
    /// An edit or write without `then_run` since the last prompt (Action Fusion's
    /// opportunity when the next turn runs `bash`), as [`fusion_opportunities`] walks it.
    unfused_edit: bool,
    /// The branch so far had an Action Fusion opportunity.
    any_opportunity: bool,
    /// When the last response came, and the user prompt sent since, if any (milliseconds,
    /// where the messages have timestamps).
    answered_at: Option<i64>,
    prompted_at: Option<Option<i64>>,
    sim: Option<OccSim>,
    /// The reducer's journal on the branch so far recorded its model's answers, with their
    /// reported usage: its calls are priced from those, not from the receipts' own counts.
    reducer_journaled: bool,
}

impl<'a> Walk<'a> {
    /// A walk from a root; `separate_pack` keeps ObservationPack's own book (needed when the
    /// branch has a fusion opportunity), `entries` is the branch's length (where the parts a
    /// re-decided OCC adds are numbered from).
    fn new(
        options: &'a ReplayOptions,
        pricing: Pricing<'a>,
        separate_pack: bool,
        entries: usize,
    ) -> Walk<'a> {
        let mask_tokens = AgentMessage::from_value(json!({
            "role": "toolResult",
            "toolCallId": "",
            "toolName": "",
            "content": [{"type": "text", "text": MASK_TEXT}],
            "isError": false,
        }))
        .estimated_tokens();
        Walk {
            options,
            pricing,
            mask_tokens,
            // Only the SoL-Pi book holds the requests the session sent; the others follow the
            // scale it finds for each ([`Books::answer`]).
            books: Books {
                sol_pi: pricing.book(),
                pack: separate_pack.then(Book::new),
                mask: Book::new(),
                aware: Book::new(),
                recent: Book::new(),
            },
            placement: CacheAware::new(options.placement_ratio, None),
            recent: CacheAware::new(options.placement_ratio, Some(options.keep_recent_outputs)),
            cache_misses: CacheMisses::default(),
            last_reported_input: None,
            context: Vec::new(),
            tracked: Tracked::default(),
            fusion: FusionFacts::default(),
            reducer: ReducerFacts::default(),
            compactions: CompactionFacts::default(),
            archived: BTreeSet::new(),
            masked: Vec::new(),
            reliance: Reliance::default(),
            messages: 0,
            assistants: 0,
            positions: BTreeMap::new(),
            unfused_edit: false,
            any_opportunity: false,
            answered_at: None,
            prompted_at: None,
            sim: options
                .occ_ratio
                .map(|ratio| OccSim::new(ratio, options, entries)),
            reducer_journaled: false,
        }
    }

    /// The entry at `position` on the branch; `occ_compaction` tells, for a compaction,
    /// whether Online Context Compact made it (it looks at the entries after it).
    fn step(&mut self, position: usize, entry: &'a Entry, occ_compaction: impl FnOnce() -> bool) {
        self.positions.insert(entry.id(), position);
        self.masked.push(false);
        self.reliance.push();
        let self_avoidable = self.opportunity(entry);
        let Walk {
            options,
            pricing,
            mask_tokens,
            books,
            placement,
            recent,
            cache_misses,
            last_reported_input,
            context,
            tracked,
            fusion,
            reducer,
            compactions,
            archived,
            masked,
            reliance,
            messages,
            assistants,
            positions,
            answered_at,
            prompted_at,
            sim,
            reducer_journaled,
            ..
        } = self;
        let options: &ReplayOptions = options;
        let mask_tokens = *mask_tokens;
        let position_of = |id: &str| positions.get(id).copied();
        match entry.kind() {
            EntryKind::Message(message) => {
                *messages += 1;
                let mut part = ContextPart {
                    occ_role: MessageRole::parse(message.role.name()),
                    ..ContextPart::new(position, message.tokens)
                };
                match message.role {
                    Role::System => {
                        part.role = PartRole::System;
                        part.identity = message.system_digest;
                        part.own = own_changes(message.tokens, &message.system_own);
                    }
                    Role::Assistant => {
                        *assistants = assistants.saturating_add(1);
                        part.role = PartRole::Assistant;
                        let calls = message.tool_calls();
                        let owners: Vec<Option<Mechanism>> =
                            calls.iter().map(|call| tool_owner(&call.name)).collect();
                        let own_calls: Vec<ToolCall> = calls
                            .iter()
                            .zip(&owners)
                            .map(|(call, owner)| ToolCall {
                                owner: *owner,
                                tokens: call.tokens,
                            })
                            .collect();
                        part.own = own_changes(message.tokens, &own_calls);
                        let (usage, failed) = response(message);
                        // The previous turn ended before this message, billed or not.
                        if let Some(sim) = sim.as_mut() {
                            sim.finish_turn();
                        }
                        if usage.billed(failed) {
                            if let Some(model) = message
                                .assistant
                                .as_deref()
                                .and_then(|a| a.model.as_deref())
                            {
                                let prices = pricing.prices_of(model);
                                books.each(|book| book.answered_by(model, prices));
                                if let Some(sim) = sim.as_mut() {
                                    sim.book.answered_by(model, prices);
                                }
                            }
                            // Another model answers: its provider holds none of this prefix in
                            // its cache, so the request writes it all again and every waiting
                            // replacement rides along, as after a compaction.
                            if books.sol_pi.model_changed() {
                                placement.rewritten = true;
                                recent.rewritten = true;
                            }
                            let avoidable = self_avoidable;
                            if options.whole_requests {
                                tracked.changed(0);
                            }
                            tracked.sync(context);
                            if avoidable {
                                fusion.opportunities += 1;
                                fusion.opportunity_tokens += tracked.total_tokens();
                            }
                            let starts_prompt = prompted_at.is_some();
                            let lifetime_ms = options.cache_lifetime_seconds as f64 * 1000.0;
                            let expired = match (*answered_at, prompted_at.flatten()) {
                                (Some(answered), Some(prompted)) => prompt_after_lifetime(
                                    &[answered as f64, prompted as f64],
                                    true,
                                    lifetime_ms,
                                ),
                                _ => false,
                            };
                            let placed =
                                placement.place(context, tracked, &BTreeSet::new(), 0.0, false);
                            let aware_from = tracked.placed_from(&placed, &tracked.placed);
                            // The recent-outputs placement weighs a rewrite at a prompt by the
                            // chance the provider keeps its cache, once it has reported usage.
                            let miss_chance = match starts_prompt && last_reported_input.is_some() {
                                true => cache_misses.miss_chance(true),
                                false => 0.0,
                            };
                            let recent_placed = recent.place(
                                context,
                                tracked,
                                &reliance.quoted,
                                miss_chance,
                                expired,
                            );
                            let recent_from =
                                tracked.placed_from(&recent_placed, &tracked.recent_placed);
                            let from = tracked.stable_prefix(context, options.mask_keep);
                            // With `keepRecentOutputs` or `cacheAware` the fixed books send that
                            // placement's choice.
                            let live = match (options.recent_outputs, options.cache_aware) {
                                (true, _) => Some((&recent_placed, recent.facts(), recent_from)),
                                (false, true) => Some((&placed, placement.facts(), aware_from)),
                                (false, false) => None,
                            };
                            let fixed_from =
                                live.map_or(from, |(_, _, placed_from)| from.min(placed_from));
                            let fixed_replaced = request(
                                books,
                                context,
                                Sending {
                                    avoidable,
                                    mask_keep: options.mask_keep,
                                    mask_tokens,
                                    placed: live.map(|(placed, facts, _)| (placed, facts)),
                                    from: fixed_from,
                                    removals: &mut tracked.fixed,
                                },
                                archived,
                                masked,
                            );
                            let aware_replaced = placement.request(
                                &mut books.aware,
                                context,
                                &placed,
                                (aware_from, &mut tracked.aware),
                            );
                            let recent_replaced = recent.request(
                                &mut books.recent,
                                context,
                                &recent_placed,
                                (recent_from, &mut tracked.recent),
                            );
                            // The fused commands' results this request carries for the first
                            // time: the turn a fused command saved read them without the
                            // command's output.
                            let fused: Vec<(usize, Part)> = context
                                .iter_mut()
                                .enumerate()
                                .filter_map(|(index, part)| {
                                    let tokens = part.fused_without.take()?;
                                    Some((
                                        index,
                                        Part {
                                            key: part.key(FUSED),
                                            tokens,
                                        },
                                    ))
                                })
                                .collect();
                            if !fused.is_empty() {
                                books.each(|book| book.fused_results(fused.clone()));
                            }
                            reliance.sent(&fixed_replaced, &aware_replaced, &recent_replaced);
                            if let Some(quotes) = message.assistant.as_deref().map(|a| &a.quotes) {
                                let replied = ReplyFacts {
                                    context_tokens: tracked.total_tokens(),
                                    prices: &options.prices,
                                    masked,
                                };
                                reliance.reply(quotes, &replied);
                            }
                            if starts_prompt {
                                books.each(Book::starts_with_prompt);
                            }
                            if expired {
                                books.each(Book::after_cache_lifetime);
                            }
                            tracked.sent(context.len(), placed, recent_placed);
                            books.answer(usage, failed, &owners);
                            if let Some(report) = usage.reported {
                                if let Some(previous) = *last_reported_input {
                                    let missed = CacheMisses::missed(previous, report.cache_read);
                                    cache_misses.observe(starts_prompt, missed);
                                }
                                *last_reported_input = Some(report.all_input());
                            }
                            if let Some(sim) = sim.as_mut() {
                                sim.book.follow_scale(books.sol_pi.report_scale());
                                sim.request(usage, failed);
                            }
                            let fused = calls.iter().filter(|call| call.then_run).count() as u64;
                            if fused > 0 {
                                fusion.fused += fused;
                                let account = StepAccount {
                                    requests_avoided: fused,
                                    ..StepAccount::default()
                                };
                                // The step marks the next turn as avoided too.
                                let mut fuse = |book: &mut Book| {
                                    book.record_step(Mechanism::ActionFusion, account);
                                };
                                books.each(&mut fuse);
                                if let Some(sim) = sim.as_mut() {
                                    fuse(&mut sim.book);
                                }
                            }
                        }
                        compactions.plan_calls += calls
                            .iter()
                            .filter(|call| call.plan_arguments.is_some())
                            .count() as u64;
                    }
                    Role::ToolResult => {
                        part.role = PartRole::ToolResult;
                        if let Some(result) = message.tool_result.as_deref() {
                            part.own = request_cause([tool_owner(&result.tool_name)])
                                .map(|owner| vec![(owner, None)])
                                .unwrap_or_default();
                            // ObservationPack packs a recall's result as the live extension
                            // does; a plan result (which does not exist below OCC's layer, above
                            // ObservationPack's) is never packed.
                            let packs = part.own.iter().all(|(by, _)| {
                                layer_of(*by) <= layer_of(Mechanism::ObservationPack)
                            });
                            part.pack = result.pack.filter(|_| packs);
                            part.medium = result.compact.filter(|_| packs);
                            part.digest = Some(result.digest);
                            part.fused_without = result.fused_without;
                            part.text_bytes = result.text_bytes;
                            if let Some(log) = result.reducer_log {
                                reducer.candidates += 1;
                                reducer.log_bytes += log.bytes;
                                reducer.call_input_tokens += log.call_input_tokens;
                                let economy = Economy {
                                    prices: options.prices,
                                    write_read_ratio: options.placement_ratio,
                                    carried_requests: *assistants,
                                };
                                let verdict =
                                    weigh(log.result_tokens, log.call_input_tokens, economy);
                                if verdict.pays() {
                                    reducer.economic += 1;
                                    reducer.economic_call_input_tokens += log.call_input_tokens;
                                }
                            }
                            reducer.receipts += u64::from(result.receipt);
                            if let Some(reduced) = result.reduced {
                                // The session ran the reducer on this log: a candidate it took.
                                reducer.candidates += 1;
                                reducer.log_bytes += reduced.source_bytes;
                                let removed = reduced.tokens_removed(result.text_bytes);
                                part.receipt_removed = Some(removed);
                                // The model's calls count where the journal recorded its answers
                                // (with the usage reported), else here, as the receipt states.
                                let calls = u64::from(!*reducer_journaled);
                                let account = StepAccount {
                                    bytes_removed: reduced
                                        .sent_bytes()
                                        .saturating_sub(reduced.receipt_bytes),
                                    tokens_removed: removed,
                                    model_calls: calls,
                                    model_input_tokens: reduced.model_tokens * calls,
                                    ..StepAccount::default()
                                };
                                books
                                    .sol_pi
                                    .record_step(Mechanism::EvidencePreservingReducer, account);
                            }
                            if &*result.tool_name == sol_obspack::text::TOOL_NAME {
                                let bytes = result.text_bytes;
                                books.packing(|book| book.record_recall(bytes));
                                books.placing(|book| book.record_recall(bytes));
                                if let Some(sim) = sim.as_mut() {
                                    sim.book.record_recall(bytes);
                                }
                            }
                        }
                    }
                    Role::User => {
                        *prompted_at = Some(message.timestamp);
                        if let Some(sim) = sim.as_mut() {
                            sim.input(message.correction);
                        }
                    }
                    _ => {}
                }
                if message.role == Role::Assistant {
                    *answered_at = message.timestamp.or(*answered_at);
                    *prompted_at = None;
                }
                if let Some(sim) = sim.as_mut() {
                    if let Some(result) = message.tool_result.as_deref() {
                        sim.tool_result(&result.tool_call_id, &result.tool_name, result.is_error);
                    }
                    sim.context.push(part.clone());
                    if message.role == Role::Assistant {
                        sim.start_turn(message);
                    }
                }
                let held = message
                    .tool_result
                    .as_deref()
                    .map(|result| &result.lines)
                    .or(message.assistant.as_deref().map(|reply| &reply.quotes));
                if let Some(lines) = held {
                    reliance.holds(position, part.tokens, lines);
                }
                context.push(part);
            }
            EntryKind::CustomMessage {
                custom_type,
                tokens,
            } => {
                let by_occ = custom_type.as_deref() == Some(OCC_CONTINUATION);
                let part = ContextPart {
                    by_occ,
                    occ_role: MessageRole::Custom,
                    ..ContextPart::new(position, *tokens)
                };
                if let Some(sim) = sim.as_mut().filter(|_| !by_occ) {
                    sim.context.push(part.clone());
                }
                context.push(part);
            }
            EntryKind::BranchSummary { tokens, .. } => {
                let part = ContextPart {
                    occ_role: MessageRole::BranchSummary,
                    ..ContextPart::new(position, *tokens)
                };
                if let Some(sim) = sim.as_mut() {
                    sim.context.push(part.clone());
                }
                context.push(part);
            }
            EntryKind::Compaction(facts) => {
                let by_occ = occ_compaction();
                let first_kept = facts
                    .first_kept_entry_id
                    .as_deref()
                    .and_then(&position_of)
                    .filter(|kept| *kept < position);
                if by_occ {
                    compactions.occ += 1;
                    let account = |sent: fn(&ContextPart) -> u64| {
                        let removed = removed_tokens(context, first_kept, facts, sent);
                        // The summary's request as the provider reported it, where Pi wrote
                        // its usage; else OCC's estimate: what it removed, and the summary.
                        let (input, output) = facts.usage.map_or(
                            (
                                removed.saturating_add(facts.summarizer_output_tokens),
                                facts.summarizer_output_tokens,
                            ),
                            |usage| (usage.all_input(), usage.output),
                        );
                        StepAccount {
                            tokens_removed: removed,
                            model_calls: 1,
                            model_input_tokens: input,
                            model_output_tokens: output,
                            ..StepAccount::default()
                        }
                    };
                    let accounts = [
                        account(|part| part.sent_tokens),
                        account(|part| part.aware_sent_tokens),
                        account(|part| part.recent_sent_tokens),
                    ];
                    // Each book's OCC removes the parts as that book sent them.
                    books.each_with(accounts, |book, account| {
                        book.record_step(Mechanism::OnlineContextCompact, account);
                    });
                } else {
                    compactions.pi += 1;
                }
                apply_compaction(context, facts, position, first_kept, by_occ);
                tracked.changed(0);
                reliance.present_only(context);
                placement.rewritten = true;
                recent.rewritten = true;
                // A re-decided OCC makes its own compactions; Pi's apply to it as recorded.
                if let Some(sim) = sim.as_mut().filter(|_| !by_occ) {
                    apply_compaction(&mut sim.context, facts, position, first_kept, false);
                    sim.occ.on_session_compact(false, sim.observed());
                }
            }
            EntryKind::Custom {
                custom_type,
                data: Some(data),
            } if &**custom_type == sol_reducer::ENTRY_TYPE
                && data.get("kind").and_then(Value::as_str) == Some("provider_response") =>
            {
                // One call of the reducer's model, with the usage its provider reported, at
                // that model's prices.
                *reducer_journaled = true;
                let usage = data
                    .get("usage")
                    .map(crate::reader::Usage::from_value)
                    .unwrap_or_default();
                let account = StepAccount {
                    model_calls: 1,
                    model_input_tokens: usage.all_input(),
                    model_output_tokens: usage.output,
                    ..StepAccount::default()
                };
                let text = |key: &str| data.get(key).and_then(Value::as_str);
                match text("provider").zip(text("model")) {
                    Some((provider, model)) => {
                        let key = format!("{provider}/{model}");
                        let prices = pricing.prices_of(&key);
                        books.sol_pi.record_step_by(
                            Mechanism::EvidencePreservingReducer,
                            account,
                            &key,
                            prices,
                        );
                    }
                    None => books
                        .sol_pi
                        .record_step(Mechanism::EvidencePreservingReducer, account),
                }
            }
            EntryKind::ContextEdit {
                target_id,
                replacement_tokens,
            } => {
                let target = target_id.as_deref().and_then(&position_of);
                apply_edit(context, target, *replacement_tokens);
                // A removal changes what follows every earlier part: built again whole.
                tracked.changed(0);
                reliance.present_only(context);
                if let Some(sim) = sim.as_mut() {
                    apply_edit(&mut sim.context, target, *replacement_tokens);
                }
            }
            _ => {}
        }
    }

    /// Whether the assistant message of `entry` is a request a fused call would have saved,
    /// as [`fusion_opportunities`] decides it.
    fn opportunity(&mut self, entry: &Entry) -> bool {
        let Some(message) = entry.message() else {
            return false;
        };
        match message.role {
            Role::User => {
                self.unfused_edit = false;
                false
            }
            Role::Assistant => {
                let calls = message.tool_calls();
                let (usage, failed) = response(message);
                let bash = calls.iter().any(|call| &*call.name == "bash");
                let avoidable = self.unfused_edit && bash && usage.billed(failed);
                self.unfused_edit = calls
                    .iter()
                    .any(|call| matches!(&*call.name, "edit" | "write") && !call.then_run);
                self.any_opportunity |= avoidable;
                avoidable
            }
            _ => false,
        }
    }

    /// The replay of `branch`, the path this walk went.
    fn finish(mut self, branch: &[&Entry]) -> BranchReplay {
        if !self.any_opportunity {
            // ObservationPack's own book is the SoL-Pi book then.
            self.books.pack = None;
        }
        if let Some(sim) = &mut self.sim {
            sim.finish_turn();
            self.compactions.redecided = Some(sim.compactions);
        }
        let recorded = recorded_totals(branch);
        self.reliance.masked(&self.masked);
        let policies = policy_rows(
            &self.books,
            self.sim.as_ref().map(|sim| &sim.book),
            (&self.options.prices, self.pricing.models.is_some()),
            &self.reliance,
        );
        BranchReplay {
            leaf: branch
                .last()
                .map(|entry| entry.id().to_owned())
                .unwrap_or_default(),
            active: false,
            entries: branch.len(),
            messages: self.messages,
            sol_pi: self.books.sol_pi.savings().clone(),
            policies,
            fusion: self.fusion,
            reducer: self.reducer,
            compactions: self.compactions,
            masked_outputs: self.masked.iter().filter(|masked| **masked).count() as u64,
            recorded,
        }
    }
}

/// Online Context Compact decided again at another `cacheWriteReadRatio`: its real session
/// machine, fed the branch's requests, plan calls, turn ends and prompts, over a context of
/// its own in which its compactions replace the recorded ones (Pi's own still apply), booked
/// with ObservationPack as the extension sends it.
#[derive(Clone)]
struct OccSim {
    occ: OccSession,
    context: Vec<ContextPart>,
    book: Book,
    turn: Option<TurnEnd>,
    archived: BTreeSet<ContentDigest>,
    compactions: u64,
    /// The next position for a part the simulation adds (a summary, a continuation): past
    /// the branch's entries, so that its key is its own.
    next_position: usize,
    context_window: u64,
}

impl OccSim {
    fn new(ratio: f64, options: &ReplayOptions, entries: usize) -> OccSim {
        let mut occ = OccSession::new(OccOptions {
            cache_write_read_ratio: Some(ratio),
            keep_recent_tokens: options.keep_recent_tokens,
        });
        // An empty branch restores nothing, so the step has no warning to carry out.
        occ.on_session_start(&[], Vec::new());
        OccSim {
            occ,
            context: Vec::new(),
            book: Book::new(),
            turn: None,
            archived: BTreeSet::new(),
            compactions: 0,
            next_position: entries,
            context_window: options.context_window,
        }
    }

    /// The context as OCC observes it: each message as it was last sent.
    fn observed(&self) -> Vec<SizedMessage> {
        self.context
            .iter()
            .map(|part| {
                SizedMessage::new(
                    part.occ_role,
                    part.sent_tokens,
                    part.key(ORIGINAL).to_string(),
                )
            })
            .collect()
    }

    fn input(&mut self, correction: bool) {
        self.finish_turn();
        let text = if correction { CORRECTION_PREFIX } else { "" };
        self.occ.on_input(&InputEvent {
            text: text.to_owned(),
            streaming_behavior: None,
        });
    }

    /// One request: the context with ObservationPack's placeholders, then OCC's `context`
    /// and provider request.
    fn request(&mut self, usage: ResponseUsage, failed: bool) {
        self.finish_turn();
        let building = (&mut self.context[..], 0, &mut Removals::default());
        let packed = pack_context(building, &mut self.archived, |_, _| {});
        for bytes in packed.archived {
            self.book.record_archived(bytes);
        }
        self.book.begin_request(packed.parts);
        self.book.end_request_with(usage, failed, &[]);
        self.book
            .record_step(Mechanism::ObservationPack, packed.account);
        let event = ContextEvent {
            aborted: false,
            observation: self.observed().into(),
        };
        self.occ.on_request(event, None, 0);
    }

    /// The assistant message's turn begins: its `update_plan` calls run.
    fn start_turn(&mut self, message: &MessageFacts) {
        let stop_reason = message
            .assistant
            .as_deref()
            .and_then(|assistant| assistant.stop_reason.as_deref())
            .map(StopReason::parse);
        let mut turn = TurnEnd {
            stop_reason,
            aborted: false,
            tool_results: Vec::new(),
        };
        for call in message.tool_calls() {
            if let Some(arguments) = &call.plan_arguments {
                let (result, _) = self.occ.on_update_plan(&call.id, arguments, false);
                turn.tool_results.push(TurnToolResult {
                    tool_call_id: call.id.to_string(),
                    tool_name: PLAN_TOOL.to_owned(),
                    is_error: result.is_err(),
                });
            }
        }
        self.turn = Some(turn);
    }

    fn tool_result(&mut self, id: &str, name: &str, is_error: bool) {
        if let Some(turn) = self.turn.as_mut().filter(|_| name != PLAN_TOOL) {
            turn.tool_results.push(TurnToolResult {
                tool_call_id: id.to_owned(),
                tool_name: name.to_owned(),
                is_error,
            });
        }
    }

    /// The turn ends: at a boundary OCC measures and decides; a selected compaction runs at
    /// once (the host is idle), with a summary of OCC's own assumed size, and its
    /// continuation follows.
    fn finish_turn(&mut self) {
        let Some(turn) = self.turn.take() else {
            return;
        };
        let step = self.occ.on_turn_end(&turn);
        if !step
            .effects
            .iter()
            .any(|effect| matches!(effect, Effect::Measure))
        {
            return;
        }
        let measurement = BoundaryMeasurement::from_observed(self.observed(), self.context_window);
        let step = self.occ.on_decide_boundary(&measurement);
        let selected = step.effects.iter().find_map(|effect| match effect {
            Effect::Decision(evaluation) if evaluation.abort => {
                Some(evaluation.estimate.first_kept_index)
            }
            _ => None,
        });
        let Some(first_kept) = selected else {
            return;
        };
        let step = self.occ.on_agent_settled(true);
        if !step
            .effects
            .iter()
            .any(|effect| matches!(effect, Effect::Compact { .. }))
        {
            return;
        }
        // The system prompt before the cut stays first, then OCC's summary and the kept
        // messages.
        let mut start: Vec<ContextPart> = self
            .context
            .iter()
            .take(first_kept)
            .filter(|part| part.role == PartRole::System)
            .cloned()
            .collect();
        start.push(ContextPart {
            by_occ: true,
            occ_role: MessageRole::CompactionSummary,
            ..ContextPart::new(self.next_position, MEMO_TOKENS)
        });
        self.next_position += 1;
        compact(&mut self.context, |index, _| index >= first_kept, start);
        self.occ.on_session_compact(false, self.observed());
        let summary = "s".repeat(usize::try_from(MEMO_TOKENS * 4).unwrap_or(4_000));
        let step = self
            .occ
            .on_compaction_finished(&CompactionResult::completed(summary));
        self.book
            .record_step(Mechanism::OnlineContextCompact, step.account);
        self.compactions += 1;
        for effect in step.effects {
            if let Effect::SendMessage(continuation) = effect {
                let tokens = sol_obspack::estimate_tokens(&continuation.content);
                self.context.push(ContextPart {
                    by_occ: true,
                    occ_role: MessageRole::Custom,
                    ..ContextPart::new(self.next_position, tokens)
                });
                self.next_position += 1;
                self.occ.on_continuation_sent(true);
            }
        }
    }
}

/// A compaction of `context`: `start` (the system prompt and the summary), then the parts
/// `kept` keeps (given each one's index), less every system message.
fn compact(
    context: &mut Vec<ContextPart>,
    kept: impl Fn(usize, &ContextPart) -> bool,
    start: Vec<ContextPart>,
) {
    let mut index = 0;
    context.retain(|part| {
        index += 1;
        part.role != PartRole::System && kept(index - 1, part)
    });
    context.splice(0..0, start);
}

/// Pi's compaction recorded at `position`: what follows the first kept entry, after its
/// summary and the system prompt Pi 1.x copied into it.
fn apply_compaction(
    context: &mut Vec<ContextPart>,
    facts: &RecordedCompaction,
    position: usize,
    first_kept: Option<usize>,
    by_occ: bool,
) {
    let mut start = Vec::with_capacity(2);
    if let Some((tokens, digest)) = facts.system_message {
        start.push(ContextPart {
            role: PartRole::System,
            identity: Some(digest),
            occ_role: MessageRole::System,
            own: own_changes(tokens, &facts.system_own),
            ..ContextPart::new(position, tokens)
        });
    }
    start.push(ContextPart {
        by_occ,
        occ_role: MessageRole::CompactionSummary,
        ..ContextPart::new(position, facts.summary_tokens)
    });
    let kept = |_, part: &ContextPart| first_kept.is_some_and(|kept| part.position >= kept);
    compact(context, kept, start);
}

/// A 1.x context edit of the entry at `target`: its replacement's size, or its removal.
fn apply_edit(context: &mut Vec<ContextPart>, target: Option<usize>, replacement: Option<u64>) {
    let Some(index) = context
        .iter()
        .position(|part| Some(part.position) == target)
    else {
        return;
    };
    match replacement {
        Some(tokens) => {
            context[index].tokens = tokens;
            context[index].sent_tokens = tokens;
            context[index].aware_sent_tokens = tokens;
            context[index].recent_sent_tokens = tokens;
            context[index].pack = None;
            context[index].medium = None;
        }
        None => {
            context.remove(index);
        }
    }
}

/// A part as plain Pi had it with the changes the session records (Online Context
/// Compact's additions, the reducer's receipts), and as ObservationPack sends it, as its
/// placeholder when `replace` (and it is packed), with the replacement it made, if any.
fn sent_forms(
    part: &ContextPart,
    facts: Option<PackFacts>,
    replace: bool,
) -> (SentPart, SentPart, Option<PackFacts>) {
    let original = Part {
        key: part.key(ORIGINAL),
        tokens: part.tokens,
    };
    let mut base = SentPart {
        part: original,
        changes: if part.by_occ {
            vec![Change {
                by: Mechanism::OnlineContextCompact,
                before: None,
            }]
        } else {
            Vec::new()
        },
    };
    // SoL-Pi's own calls and results: not in plain Pi's requests, or smaller there.
    for (index, &(by, tokens)) in part.own.iter().enumerate() {
        let before = tokens.map(|tokens| Part {
            key: part.key(OWN + index as u64),
            tokens,
        });
        base.changes.push(Change { by, before });
    }
    if let Some(removed) = part.receipt_removed {
        // The request carried the log before the reducer put its receipt there.
        base.changes.push(Change {
            by: Mechanism::EvidencePreservingReducer,
            before: Some(Part {
                key: part.key(LOG),
                tokens: part.tokens.saturating_add(removed),
            }),
        });
    }
    match facts.filter(|_| replace) {
        Some(pack) => {
            // The placeholder after every earlier change: a recall's result ObservationPack
            // replaced is still absent below ObservationPack's layer.
            let mut changes = base.changes.clone();
            changes.push(Change {
                by: Mechanism::ObservationPack,
                before: Some(original),
            });
            let packed = SentPart {
                part: Part {
                    key: part.key(PLACEHOLDER),
                    tokens: pack.placeholder_tokens,
                },
                changes,
            };
            (base, packed, Some(pack))
        }
        None => (base.clone(), base, None),
    }
}

/// How a request is sent beyond its context.
struct Sending<'a> {
    /// Action Fusion would have made it unnecessary.
    avoidable: bool,
    /// The masking baseline's newest results kept.
    mask_keep: usize,
    /// The mask's tokens.
    mask_tokens: u64,
    /// With `cacheAware` or `keepRecentOutputs`: the parts ObservationPack sends as
    /// placeholders, and what it packs of a part (else the fixed rule decides).
    placed: Option<(&'a BTreeSet<usize>, FactsOf)>,
    /// The parts before this index are sent as in the request before, in every book.
    from: usize,
    /// The fixed books' removals per part of the request before.
    removals: &'a mut Removals,
}

/// What a placement packs of a part.
type FactsOf = fn(&ContextPart) -> Option<PackFacts>;

/// One request: the context as sent under each book's policy.
fn request(
    books: &mut Books,
    context: &mut [ContextPart],
    sending: Sending<'_>,
    archived: &mut BTreeSet<ContentDigest>,
    masked: &mut [bool],
) -> Vec<(usize, bool)> {
    let Sending {
        avoidable,
        mask_keep,
        mask_tokens,
        placed,
        from,
        removals,
    } = sending;
    let mut masking = Vec::with_capacity(context.len() - from);
    let mut results_after = 0usize;
    let also = |part: &ContextPart, base: SentPart| {
        let mut mask_form = base;
        if part.role == PartRole::ToolResult {
            if results_after >= mask_keep && mask_tokens < part.tokens {
                masked[part.position] = true;
                // The masking book knows no mechanism: its plain layer is the policy (the
                // mask replaces the result in whatever form it had).
                mask_form = SentPart::unchanged(Part {
                    key: part.key(MASKED),
                    tokens: mask_tokens,
                });
            }
            results_after += 1;
        }
        masking.push(mask_form);
    };
    let packed = match placed {
        Some((placed, facts)) => pack_context_with(
            (context, from, removals),
            archived,
            (facts, |part| &mut part.sent_tokens),
            |index, _| placed.contains(&index),
            also,
        ),
        None => pack_context((context, from, removals), archived, also),
    };
    masking.reverse();
    for bytes in &packed.archived {
        books.packing(|book| book.record_archived(*bytes));
        books.aware.record_archived(*bytes);
    }
    if let Some(pack) = &mut books.pack {
        pack.begin_request_from(from, packed.parts.clone());
    }
    if avoidable {
        books
            .sol_pi
            .begin_avoidable_request_from(Mechanism::ActionFusion, from, packed.parts);
    } else {
        books.sol_pi.begin_request_from(from, packed.parts);
    }
    books.mask.begin_request_from(from, masking);
    books.packing(|book| book.record_step(Mechanism::ObservationPack, packed.account));
    packed.replaced
}

/// ObservationPack's cache-aware placement over a branch, as the extension runs it: each
/// request's packed results placed by [`sol_obspack::placement::place`], placeholders kept
/// once shown, every waiting one replaced on the first request after a compaction. With
/// `keep`, the recent-outputs placement: results over the lower threshold, the newest
/// `keep` tool outputs kept in full.
#[derive(Clone)]
struct CacheAware {
    /// The `cacheWriteReadRatio` it weighs rewrites at.
    ratio: f64,
    /// The recent-outputs placement's `keepRecentOutputs`; `None`: the cache-aware one.
    keep: Option<u32>,
    /// The results whose placeholder it has shown, by content (as the extension's pack
    /// knows them).
    shown: BTreeSet<ContentDigest>,
    /// What its context walk archived (the fixed walk books the cache-aware one's archive).
    archived: BTreeSet<ContentDigest>,
    /// The next request shares no prefix with the one before (the branch's first, the
    /// first after a compaction).
    rewritten: bool,
}

impl CacheAware {
    fn new(ratio: f64, keep: Option<u32>) -> CacheAware {
        CacheAware {
            ratio,
            keep,
            shown: BTreeSet::new(),
            archived: BTreeSet::new(),
            // The branch's first request shares nothing with an earlier one.
            rewritten: true,
        }
    }

    /// What it packs of a part.
    fn facts(&self) -> FactsOf {
        match self.keep {
            Some(_) => |part| part.medium,
            None => |part| part.pack,
        }
    }

    /// The parts of the next request of `context` it sends as placeholders (by index);
    /// `tracked` is synced with `context`. `miss_chance` is the chance the provider misses
    /// the cache anyway, `expired` that its lifetime has passed (a rewrite for sure).
    fn place(
        &mut self,
        context: &[ContextPart],
        tracked: &Tracked,
        quoted: &BTreeSet<usize>,
        miss_chance: f64,
        expired: bool,
    ) -> BTreeSet<usize> {
        let after = tracked.total_tokens();
        let assistants = tracked.assistants_after(0);
        let new_tokens = tracked
            .last_assistant
            .map(|index| tracked.tokens_after(index));
        let facts = self.facts();
        let candidates = match self.keep {
            Some(_) => &tracked.medium,
            None => &tracked.packed,
        };
        let items: Vec<(usize, Pending)> = candidates
            .iter()
            .filter_map(|&index| {
                let part = &context[index];
                let (pack, digest) = (facts(part)?, part.digest?);
                let recent = self.keep.is_some_and(|keep| {
                    let newer = tracked.results_after(index + 1);
                    keeps_recent(
                        part.text_bytes,
                        newer,
                        quoted.contains(&part.position),
                        keep,
                    )
                });
                let pending = Pending {
                    prior_requests: tracked.assistants_after(index + 1),
                    shown: self.shown.contains(&digest),
                    recent,
                    full_tokens: pack.removed_tokens + pack.placeholder_tokens,
                    removed_tokens: pack.removed_tokens,
                    tokens_after: tracked.tokens_after(index),
                };
                Some((index, pending))
            })
            .collect();
        let shape = Shape {
            new_tokens: new_tokens.unwrap_or(after),
            rewritten: self.rewritten || expired,
            carried_requests: assistants,
            miss_chance,
            caution: match self.keep {
                Some(_) => sol_obspack::placement::RECENT_CAUTION,
                None => 1.0,
            },
        };
        self.rewritten = false;
        let pending: Vec<Pending> = items.iter().map(|(_, pending)| *pending).collect();
        let placed = place(&pending, shape, self.ratio);
        let replace: BTreeSet<usize> = items
            .iter()
            .zip(placed.replace())
            .filter(|(_, replace)| *replace)
            .map(|((index, _), _)| *index)
            .collect();
        for index in &replace {
            if let Some(digest) = context[*index].digest {
                self.shown.insert(digest);
            }
        }
        replace
    }

    /// The request of `context` with `placed` as placeholders, booked in `book` (its
    /// response is booked with the others'), built from index `from` on with `removals`,
    /// the per-part removals of its request before.
    fn request(
        &mut self,
        book: &mut Book,
        context: &mut [ContextPart],
        placed: &BTreeSet<usize>,
        (from, removals): (usize, &mut Removals),
    ) -> Vec<(usize, bool)> {
        let sent: fn(&mut ContextPart) -> &mut u64 = match self.keep {
            Some(_) => |part| &mut part.recent_sent_tokens,
            None => |part| &mut part.aware_sent_tokens,
        };
        let facts = self.facts();
        let packed = pack_context_with(
            (context, from, removals),
            &mut self.archived,
            (facts, sent),
            |index, _| placed.contains(&index),
            |_, _| {},
        );
        if self.keep.is_some() {
            for bytes in &packed.archived {
                book.record_archived(*bytes);
            }
        }
        book.begin_request_from(from, packed.parts);
        book.record_step(Mechanism::ObservationPack, packed.account);
        packed.replaced
    }
}

/// The output tokens a recall's request is priced with (the model's short `obs_recall` call).
const RECALL_REPLY_TOKENS: u64 = 50;

/// Which results each policy replaced that the model later relied on: a reply quoted a line
/// of one after its replacement, while no message still sent in full held that line.
#[derive(Clone, Default)]
struct Reliance {
    /// Each quotable line, with the positions of the results and replies that hold it.
    sources: BTreeMap<ContentDigest, Vec<usize>>,
    /// Per position: the message is in the context (a compaction or an edit removes it).
    present: Vec<bool>,
    /// Per position: the last request of the fixed rule's books, and of the cache-aware
    /// placement's, sent it as its placeholder.
    fixed: Vec<bool>,
    aware: Vec<bool>,
    /// Per position: the recent-outputs placement's last request sent it as its placeholder.
    recent: Vec<bool>,
    /// Per position: the message's tokens (a result's recall page is at most these).
    tokens: Vec<u64>,
    /// Per policy (the fixed rule, the cache-aware placement, masking, the recent-outputs
    /// placement): the results relied on after their replacement, by position, each with
    /// its recall's price.
    needed: [BTreeMap<usize, Money>; 4],
    /// The results a reply quoted so far, by position.
    quoted: BTreeSet<usize>,
    /// Per policy as `needed`: every result it sent as its placeholder (or mask), by position.
    replaced: [BTreeSet<usize>; 4],
}

/// What a reply's reliance is priced with.
struct ReplyFacts<'a> {
    /// The context's tokens when it was sent (a recall's request reads them again).
    context_tokens: u64,
    prices: &'a PriceTable,
    /// Per position: the masking baseline sent it as its mask.
    masked: &'a [bool],
}

impl Reliance {
    /// The entry at the next position.
    fn push(&mut self) {
        self.present.push(true);
        self.fixed.push(false);
        self.aware.push(false);
        self.recent.push(false);
        self.tokens.push(0);
    }

    /// The message at `position`, of `tokens`, holds `lines`.
    fn holds(&mut self, position: usize, tokens: u64, lines: &[ContentDigest]) {
        if let Some(slot) = self.tokens.get_mut(position) {
            *slot = tokens;
        }
        for line in lines {
            self.sources.entry(*line).or_default().push(position);
        }
    }

    /// A request went out: the parts built for it, each with whether the fixed rule's books
    /// (`fixed`), the cache-aware placement (`aware`) or the recent-outputs one (`recent`)
    /// sent it as its placeholder.
    fn sent(&mut self, fixed: &[(usize, bool)], aware: &[(usize, bool)], recent: &[(usize, bool)]) {
        let each = [
            (&mut self.fixed, fixed),
            (&mut self.aware, aware),
            (&mut self.recent, recent),
        ];
        for (index, (hidden, built)) in each.into_iter().enumerate() {
            let replaced = &mut self.replaced[[0, 1, 3][index]];
            replaced.extend(
                built
                    .iter()
                    .filter(|(_, hid)| *hid)
                    .map(|(position, _)| *position),
            );
            for &(position, replaced) in built {
                if let Some(slot) = hidden.get_mut(position) {
                    *slot = replaced;
                }
            }
        }
    }

    /// After a compaction or an edit: only the parts of `context` are present.
    fn present_only(&mut self, context: &[ContextPart]) {
        self.present.fill(false);
        for part in context {
            if let Some(slot) = self.present.get_mut(part.position) {
                *slot = true;
            }
        }
    }

    /// A reply to the request just sent quotes `quotes`.
    fn reply(&mut self, quotes: &[ContentDigest], facts: &ReplyFacts<'_>) {
        let prices = ModelPrices::of(facts.prices);
        for quote in quotes {
            let Some(sources) = self.sources.get(quote) else {
                continue;
            };
            let present: Vec<usize> = sources
                .iter()
                .copied()
                .filter(|position| self.present.get(*position) == Some(&true))
                .collect();
            if present.is_empty() {
                continue;
            }
            self.quoted.extend(present.iter().copied());
            let hidden: [&[bool]; 4] = [&self.fixed, &self.aware, facts.masked, &self.recent];
            for (needed, hidden) in self.needed.iter_mut().zip(hidden) {
                if !present
                    .iter()
                    .all(|position| hidden.get(*position) == Some(&true))
                {
                    continue;
                }
                for &position in &present {
                    let page = self.tokens[position].min(sol_obspack::RECALL_MAX_BYTES as u64 / 4);
                    needed.entry(position).or_insert_with(|| {
                        Money::of_tokens(facts.context_tokens, prices.cache_read)
                            + Money::of_tokens(page, prices.cache_write)
                            + Money::of_tokens(RECALL_REPLY_TOKENS, prices.output)
                    });
                }
            }
        }
    }

    /// The masking baseline masked the results at the positions `masked` marks.
    fn masked(&mut self, masked: &[bool]) {
        self.replaced[2] = (0..masked.len())
            .filter(|&position| masked[position])
            .collect();
    }

    /// The results `policy` replaced.
    fn replaced(&self, policy: Policy) -> u64 {
        self.index(policy)
            .map_or(0, |index| self.replaced[index].len() as u64)
    }

    fn index(&self, policy: Policy) -> Option<usize> {
        match policy {
            Policy::ObservationPack | Policy::ObservationPackOcc => Some(0),
            Policy::CacheAwarePack | Policy::CacheAwarePackOcc => Some(1),
            Policy::ObservationMasking => Some(2),
            Policy::RecentPack => Some(3),
            _ => None,
        }
    }

    /// The recalls `policy` needed and their price.
    fn of(&self, policy: Policy) -> (u64, Money) {
        let Some(index) = self.index(policy) else {
            return (0, Money::ZERO);
        };
        let needed = &self.needed[index];
        (needed.len() as u64, needed.values().copied().sum())
    }
}

/// One request's context as ObservationPack sends it, from the first part that can differ
/// from the request before.
struct PackedRequest {
    /// The parts from that one on, in order.
    parts: Vec<SentPart>,
    /// ObservationPack's step account for the whole request.
    account: StepAccount,
    /// The bytes of each result the request archives for the first time.
    archived: Vec<u64>,
    /// The parts built, each by its position on the branch, and whether it went as its
    /// placeholder.
    replaced: Vec<(usize, bool)>,
}

/// The context a request is built from: its parts, the first index to build (the parts
/// before it are sent as in the request before), and the removals of that request per part.
type Building<'a> = (&'a mut [ContextPart], usize, &'a mut Removals);

/// The context as ObservationPack sends it on a request, each part's placeholder decided
/// by the requests that already carried it (the assistant messages after it). Each part's
/// `sent_tokens` becomes its size as sent. `also` sees every part built, from the last to
/// the first, with its form before ObservationPack.
fn pack_context(
    building: Building<'_>,
    archived: &mut BTreeSet<ContentDigest>,
    also: impl FnMut(&ContextPart, SentPart),
) -> PackedRequest {
    let fixed = |_: usize, assistants_after: u32| {
        matches!(
            sol_obspack::decide(assistants_after),
            sol_obspack::SendDecision::Replace { .. }
        )
    };
    pack_context_with(
        building,
        archived,
        (|part| part.pack, |part| &mut part.sent_tokens),
        fixed,
        also,
    )
}

/// What a placement packs of a part, and the field its size as sent goes to.
type PackForms = (
    fn(&ContextPart) -> Option<PackFacts>,
    fn(&mut ContextPart) -> &mut u64,
);

/// [`pack_context`] with the placement `replace(index, assistants_after)`, what it packs of
/// a part (`facts`) and the field each part's size as sent goes to (`sent`).
fn pack_context_with(
    (context, from, removals): Building<'_>,
    archived: &mut BTreeSet<ContentDigest>,
    (facts, sent): PackForms,
    replace: impl Fn(usize, u32) -> bool,
    mut also: impl FnMut(&ContextPart, SentPart),
) -> PackedRequest {
    let from = from.min(context.len());
    let mut parts = Vec::with_capacity(context.len() - from);
    let mut removed = Vec::with_capacity(context.len() - from);
    let mut archived_bytes = Vec::new();
    let mut replaced_parts = Vec::with_capacity(context.len() - from);
    let mut assistants_after = 0u32;
    for (index, part) in context.iter_mut().enumerate().skip(from).rev() {
        let (base, pack_form, replaced) =
            sent_forms(part, facts(part), replace(index, assistants_after));
        if facts(part).is_some()
            && let Some(digest) = part.digest
            && archived.insert(digest)
        {
            archived_bytes.push(part.text_bytes);
        }
        replaced_parts.push((part.position, replaced.is_some()));
        removed.push(replaced.map_or((0, 0), |pack| (pack.removed_tokens, pack.removed_bytes)));
        *sent(part) = pack_form.part.tokens;
        if part.role == PartRole::Assistant {
            assistants_after = assistants_after.saturating_add(1);
        }
        also(part, base);
        parts.push(pack_form);
    }
    parts.reverse();
    removed.reverse();
    removals.replace_from(from, removed);
    PackedRequest {
        parts,
        account: StepAccount {
            tokens_removed: removals.tokens,
            bytes_removed: removals.bytes,
            ..StepAccount::default()
        },
        archived: archived_bytes,
        replaced: replaced_parts,
    }
}

/// What ObservationPack removed from each part of a request (tokens, bytes), and the sums.
#[derive(Clone, Default)]
struct Removals {
    each: Vec<(u64, u64)>,
    tokens: u64,
    bytes: u64,
}

impl Removals {
    /// The removals of the parts from `from` on are `removed` now.
    fn replace_from(&mut self, from: usize, removed: Vec<(u64, u64)>) {
        for (tokens, bytes) in self.each.drain(from.min(self.each.len())..) {
            self.tokens -= tokens;
            self.bytes -= bytes;
        }
        for &(tokens, bytes) in &removed {
            self.tokens += tokens;
            self.bytes += bytes;
        }
        self.each.extend(removed);
    }
}

/// What a walk keeps of its context between requests, so that each request is built and
/// booked from the first part that can differ from the request before: most requests only
/// add to the one before, and a long branch then replays in time linear in its entries.
#[derive(Clone, Default)]
struct Tracked {
    /// `tokens[i]`: the tokens of the context's first `i` parts; `assistants[i]`: the
    /// assistant messages among them. One more entry than the parts indexed.
    tokens: Vec<u64>,
    assistants: Vec<u32>,
    /// `results[i]`: the tool results among the first `i` parts.
    results: Vec<u32>,
    /// The indexed parts that ObservationPack packed (the placement's candidates), and
    /// those the recent-outputs placement packs.
    packed: Vec<usize>,
    medium: Vec<usize>,
    /// The last indexed assistant message.
    last_assistant: Option<usize>,
    /// How many leading parts of the context the sums describe.
    indexed: usize,
    /// The context's length at the request before, and the first part changed in place or
    /// removed since (the request before's length when none was).
    sent_len: usize,
    changed_from: usize,
    /// The removals of the books that send by the fixed rule, and of the cache-aware book.
    fixed: Removals,
    aware: Removals,
    recent: Removals,
    /// The parts the cache-aware placement, and the recent-outputs one, sent as
    /// placeholders in the request before.
    placed: BTreeSet<usize>,
    recent_placed: BTreeSet<usize>,
}

impl Tracked {
    /// The context changed from part `index` on (in place or by a removal).
    fn changed(&mut self, index: usize) {
        self.changed_from = self.changed_from.min(index);
        self.indexed = self.indexed.min(index);
    }

    /// Indexes the parts added since (or changed at and after `changed`).
    fn sync(&mut self, context: &[ContextPart]) {
        let from = self.indexed.min(context.len());
        if self.tokens.is_empty() {
            self.tokens.push(0);
            self.assistants.push(0);
            self.results.push(0);
        }
        self.tokens.truncate(from + 1);
        self.assistants.truncate(from + 1);
        self.results.truncate(from + 1);
        self.packed.retain(|index| *index < from);
        self.medium.retain(|index| *index < from);
        self.last_assistant = self.last_assistant.filter(|index| *index < from);
        let (mut tokens, mut assistants) = (self.tokens[from], self.assistants[from]);
        let mut results = self.results[from];
        for (index, part) in context.iter().enumerate().skip(from) {
            tokens = tokens.saturating_add(part.tokens);
            if part.role == PartRole::Assistant {
                assistants = assistants.saturating_add(1);
                self.last_assistant = Some(index);
            }
            if part.role == PartRole::ToolResult {
                results = results.saturating_add(1);
            }
            if part.pack.is_some() && part.digest.is_some() {
                self.packed.push(index);
            }
            if part.medium.is_some() && part.digest.is_some() {
                self.medium.push(index);
            }
            self.tokens.push(tokens);
            self.assistants.push(assistants);
            self.results.push(results);
        }
        self.indexed = context.len();
    }

    fn total_tokens(&self) -> u64 {
        self.tokens.last().copied().unwrap_or(0)
    }

    /// The tokens of the parts after part `index`.
    fn tokens_after(&self, index: usize) -> u64 {
        self.total_tokens() - self.tokens[index + 1]
    }

    /// The assistant messages from part `index` on.
    fn assistants_after(&self, index: usize) -> u32 {
        self.assistants.last().copied().unwrap_or(0) - self.assistants[index]
    }

    /// The tool results from part `index` on.
    fn results_after(&self, index: usize) -> u32 {
        self.results.last().copied().unwrap_or(0) - self.results[index.min(self.results.len() - 1)]
    }

    /// The first part the fixed rule or the masking baseline can send otherwise than in the
    /// request before: each replaces a part once enough assistant messages (or results)
    /// follow it and never puts it back, so only the parts that the request before had
    /// fewer than that after can change.
    fn stable_prefix(&self, context: &[ContextPart], mask_keep: usize) -> usize {
        let mut from = self.sent_len.min(self.changed_from).min(context.len());
        let (mut assistants, mut results) = (0u32, 0usize);
        while from > 0 && (assistants < sol_obspack::FULL_SENDS || results < mask_keep) {
            from -= 1;
            match context[from].role {
                PartRole::Assistant => assistants += 1,
                PartRole::ToolResult => results += 1,
                _ => {}
            }
        }
        from
    }

    /// The first part a placement whose choice is `placed` sends otherwise than in the
    /// request before, where it chose `before`.
    fn placed_from(&self, placed: &BTreeSet<usize>, before: &BTreeSet<usize>) -> usize {
        let unchanged = self.sent_len.min(self.changed_from);
        placed
            .symmetric_difference(before)
            .next()
            .map_or(unchanged, |index| unchanged.min(*index))
    }

    /// A request of `len` parts went out, with `placed` as the cache-aware placement's and
    /// `recent_placed` as the recent-outputs one's.
    fn sent(&mut self, len: usize, placed: BTreeSet<usize>, recent_placed: BTreeSet<usize>) {
        self.sent_len = len;
        self.changed_from = len;
        self.placed = placed;
        self.recent_placed = recent_placed;
    }
}

/// Whether the compaction whose following entries are `after` was Online Context
/// Compact's: its continuation follows before the next message, or its state says the
/// compaction was at the boundary it selected.
fn is_occ_compaction(after: &[&Entry]) -> bool {
    after
        .iter()
        .find_map(|entry| occ_verdict(entry))
        .unwrap_or(false)
}

/// What `entry`, after a compaction, says of it: `Some(true)` Online Context Compact's,
/// `Some(false)` not, `None` nothing (look at the next entry).
fn occ_verdict(entry: &Entry) -> Option<bool> {
    match entry.kind() {
        EntryKind::Message(_) | EntryKind::Compaction(_) => Some(false),
        EntryKind::CustomMessage { custom_type, .. }
            if custom_type.as_deref() == Some(OCC_CONTINUATION) =>
        {
            Some(true)
        }
        EntryKind::Custom {
            custom_type,
            data: Some(data),
        } if &**custom_type == OCC_STATE => {
            let count = |key: &str| data.get(key).and_then(Value::as_u64);
            Some(matches!(
                (count("lastCompactionRequestCount"), count("lastBoundaryRequestCount")),
                (Some(compaction), Some(boundary)) if compaction == boundary && compaction > 0
            ))
        }
        _ => None,
    }
}

/// The context tokens a compaction removed, as Online Context Compact accounts them: the
/// parts before the first one it kept (all of them without one; the system prompt stays)
/// as they were last sent, less the summary.
fn removed_tokens(
    context: &[ContextPart],
    first_kept: Option<usize>,
    facts: &RecordedCompaction,
    sent: fn(&ContextPart) -> u64,
) -> u64 {
    let kept = first_kept.unwrap_or(usize::MAX);
    let removed: u64 = context
        .iter()
        .filter(|part| part.position < kept && part.role != PartRole::System)
        .map(sent)
        .sum();
    removed.saturating_sub(facts.summarizer_output_tokens)
}

/// The branch's newest readable `sol-pi-savings-totals`, if it has one.
fn recorded_totals(branch: &[&Entry]) -> Option<Savings> {
    branch.iter().rev().find_map(|entry| match entry.kind() {
        EntryKind::Custom {
            custom_type,
            data: Some(data),
        } if &**custom_type == SAVINGS_ENTRY_TYPE => Savings::from_entry_data(data).ok(),
        _ => None,
    })
}

/// The policies' rows, each from its own book and mechanisms.
fn policy_rows(
    books: &Books,
    redecided: Option<&Book>,
    (prices, per_model): (&PriceTable, bool),
    reliance: &Reliance,
) -> Vec<PolicyRow> {
    let report = |book: &Book| match per_model {
        true => book.savings().report_per_model(prices),
        false => book.savings().report(prices),
    };
    let sol_pi = report(&books.sol_pi);
    let pack = report(redecided.or(books.pack.as_ref()).unwrap_or(&books.sol_pi));
    let mask = report(&books.mask);
    let aware = report(&books.aware);
    let recent = report(&books.recent);
    let plain = &sol_pi;
    let row = |policy: Policy, report: &Report, mechanisms: &[Mechanism]| {
        let rows = mechanisms.iter().map(|mechanism| report.row(*mechanism));
        let (requests_saved, input_tokens_saved, net_saved) = rows.fold(
            (0i128, 0i128, Money::ZERO),
            |(requests, tokens, net), row| {
                (
                    requests + row.requests_avoided,
                    tokens + row.input_tokens_saved,
                    net + row.net,
                )
            },
        );
        PolicyRow {
            policy,
            requests: sub(plain.plain.requests, requests_saved),
            input_tokens: sub(plain.plain.input(), input_tokens_saved),
            cost: plain.plain_cost - net_saved,
            requests_saved,
            input_tokens_saved,
            net_saved,
            priced: policy != Policy::ReducerCandidates,
            recalls_needed: reliance.of(policy).0,
            recall_cost: reliance.of(policy).1,
            results_replaced: reliance.replaced(policy),
        }
    };
    vec![
        row(Policy::PlainPi, plain, &[]),
        row(
            Policy::ObservationPack,
            &pack,
            &[Mechanism::ObservationPack],
        ),
        row(
            Policy::ObservationPackOcc,
            &pack,
            &[Mechanism::ObservationPack, Mechanism::OnlineContextCompact],
        ),
        row(
            Policy::CacheAwarePack,
            &aware,
            &[Mechanism::ObservationPack],
        ),
        row(
            Policy::CacheAwarePackOcc,
            &aware,
            &[Mechanism::ObservationPack, Mechanism::OnlineContextCompact],
        ),
        row(Policy::RecentPack, &recent, &[Mechanism::ObservationPack]),
        row(Policy::ActionFusion, plain, &[Mechanism::ActionFusion]),
        row(Policy::ReducerCandidates, plain, &[]),
        PolicyRow {
            policy: Policy::ObservationMasking,
            requests: mask.plain.requests,
            input_tokens: mask.plain.input(),
            cost: mask.plain_cost,
            requests_saved: i128::from(plain.plain.requests) - i128::from(mask.plain.requests),
            input_tokens_saved: i128::from(plain.plain.input()) - i128::from(mask.plain.input()),
            net_saved: plain.plain_cost - mask.plain_cost,
            priced: true,
            recalls_needed: reliance.of(Policy::ObservationMasking).0,
            recall_cost: reliance.of(Policy::ObservationMasking).1,
            results_replaced: reliance.replaced(Policy::ObservationMasking),
        },
    ]
}

fn sub(value: u64, minus: i128) -> u64 {
    u64::try_from(i128::from(value) - minus).unwrap_or(0)
}

//! Decision records: a forwarding decision with its reasons, in words and in
//! the JSON form `mcfed run --report json` prints (one object per line).
//!
//! The field names are a public contract: scripts read them. Add fields;
//! never rename or remove one.

use serde::{Deserialize, Serialize};

use mcfed_protocol::SimTime;

mod aps;
mod oracle;

pub use oracle::{FigureDifference, OracleVerdict};

use crate::mode::ScheduleMode;
use crate::policy::{Candidate, Decision, Eligibility, LostOn, Outcome, PendReason, Tier, Verdict};
use crate::view::RemoteView;

/// Whether a decision forwarded the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeKind {
    /// Sent to a remote queue.
    Forwarded,
    /// Kept at the submission cluster.
    Pending,
}

/// One candidate queue in a [`DecisionRecord`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CandidateRecord {
    /// `queue@cluster`.
    pub queue: String,
    /// The queue's PRIORITY (null: no counters yet).
    pub priority: Option<u32>,
    /// Total slots.
    pub total: Option<u32>,
    /// Available slots.
    pub available: Option<u32>,
    /// Running slots.
    pub running: Option<u32>,
    /// Pending slots.
    pub pending: Option<u32>,
    /// Preemptable available slots.
    pub preemptable_available: Option<u32>,
    /// PRIORITY of the lowest-priority queue it can preempt (null: none).
    pub victim_priority: Option<u32>,
    /// Imported jobs pending there.
    pub imported_pending: Option<u32>,
    /// Its IMPT_JOBBKLG (null: infinit, or no counters yet).
    pub impt_jobbklg: Option<u32>,
    /// Age of its figures, in seconds.
    pub view_age: Option<f64>,
    /// Where its figures start from: `counters` (a counter update) or
    /// `hello` (the static facts sent on connecting; its workload is
    /// unknown); null when nothing is known.
    #[serde(default)]
    pub known_from: Option<String>,
    /// Whether it could take the job.
    pub eligible: bool,
    /// Its tier (`free slots`, `slots after preemption`, ...).
    pub tier: Option<String>,
    /// Its slot score.
    pub score: Option<i64>,
    /// `won`, `lost`, `ineligible` or `held`.
    pub verdict: String,
    /// Why, in words.
    pub why: String,
}

/// One forwarding decision, as reported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// Always `decision` (other record kinds may share a stream).
    pub record: String,
    /// Emulated time of the decision, in seconds.
    pub time: f64,
    /// The job's name.
    pub job: String,
    /// The job's id at the submission cluster.
    pub job_id: u64,
    /// The submission cluster.
    pub cluster: String,
    /// The send queue the job was submitted to.
    pub send_queue: String,
    /// Slots the job asks for.
    pub slots: u32,
    /// How many times the job had been forwarded before this decision.
    pub attempt: u32,
    /// MC_PLUGIN_SCHEDULE_ENHANCE, canonically spelt.
    pub mode: String,
    /// `forwarded` or `pending`.
    pub outcome: OutcomeKind,
    /// `queue@cluster` when forwarded.
    pub target: Option<String>,
    /// Why, in words.
    pub reason: String,
    /// The tier the decision was made in.
    pub tier: Option<String>,
    /// Age in seconds of the oldest remote view consulted.
    pub view_age: Option<f64>,
    /// Whether the decision was made without knowing some eligible
    /// queue's workload: its figures come from the hello only (before its
    /// cluster's first counter update, or from a cluster that sends none).
    /// Seed 004: such decisions "do not accurately account for remote
    /// queue workload".
    #[serde(default)]
    pub workload_unknown: bool,
    /// Every remote queue of the send queue, in SNDJOBS_TO order.
    pub candidates: Vec<CandidateRecord>,
    /// Why the job is being decided again (refused or returned), if it is.
    pub note: Option<String>,
    /// What the same mode would have chosen from the true counters at that
    /// instant (runs with the oracle on: chaos runs, `--oracle`).
    pub oracle: Option<OracleVerdict>,
    /// The queues the job was forwarded to before this decision, in order
    /// (`queue@cluster`), so a job going back and forth shows its loop.
    #[serde(default)]
    pub forwarded_before: Vec<String>,
    /// The job's APS value in its send queue's order when it was decided
    /// (a send queue with APS_PRIORITY, or one of its QUEUE_GROUP; null
    /// elsewhere): the value that put it where it was decided.
    #[serde(default)]
    pub aps_value: Option<f64>,
    /// `system` (`bmod -aps "system=V"`, ahead of every calculated value)
    /// or `calculated`; null outside APS send queues.
    #[serde(default)]
    pub aps_kind: Option<String>,
    /// How many jobs of its APS group submitted before it were still
    /// waiting for their turn: those its APS value put it ahead of (null
    /// outside APS send queues).
    #[serde(default)]
    pub aps_ahead_of: Option<u32>,
}

/// A decision as the forwarder keeps it until someone reads it: the
/// decision itself (with every candidate's figures) and who it was about.
/// Rendering it to a [`DecisionRecord`] (names, words, JSON-ready strings)
/// costs far more than deciding, so it is done only when a record is read;
/// long replays that only count decisions never pay for it.
#[derive(Clone, Debug)]
pub struct DecisionEntry {
    /// The decision.
    pub decision: Decision,
    /// The job's name.
    pub job: std::sync::Arc<str>,
    /// The job's id at the submission cluster.
    pub job_id: u64,
    /// The send queue.
    pub send_queue: mcfed_protocol::QueueName,
    /// Slots asked for.
    pub slots: u32,
    /// Earlier forwards of the job.
    pub attempt: u32,
    /// Why the job is being decided again, if it is.
    pub note: Option<String>,
    /// The oracle's verdict, when the oracle is on.
    pub oracle: Option<OracleVerdict>,
    /// Where the job was forwarded before.
    pub forwarded_before: Vec<crate::view::RemoteQueueId>,
    /// Where its send queue's APS order put it (APS send queues only).
    pub aps: Option<crate::node::ApsStanding>,
}

impl DecisionEntry {
    /// Whether the decision forwarded the job.
    pub fn forwarded(&self) -> bool {
        self.decision.target().is_some()
    }

    /// Whether the oracle marked the decision stale.
    pub fn stale(&self) -> bool {
        self.oracle.as_ref().is_some_and(|oracle| oracle.stale)
    }
}

/// Who and what a decision was about.
#[derive(Clone, Copy, Debug)]
pub struct DecisionContext<'a> {
    /// When.
    pub now: SimTime,
    /// The job's name.
    pub job: &'a str,
    /// The job's id at the submission cluster.
    pub job_id: u64,
    /// The submission cluster.
    pub cluster: &'a str,
    /// The send queue.
    pub send_queue: &'a str,
    /// Slots asked for.
    pub slots: u32,
    /// Earlier forwards of the job.
    pub attempt: u32,
}

fn score_name(mode: ScheduleMode, tier: Tier) -> &'static str {
    match (mode, tier) {
        (ScheduleMode::Default, _) => "available slots",
        (ScheduleMode::ResourceOnly, _) | (_, Tier::FreeSlots) => "available - pending",
        _ => "preemptable available - pending",
    }
}

fn secs(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64()
}

fn victim_text(victim: Option<u32>) -> String {
    victim.map_or_else(|| "none".to_owned(), |priority| priority.to_string())
}

/// Why a queue lacking requirement `word` cannot take the job: a boolean
/// resource none of its hosts has, or a host type or model none is of
/// (`type==X`; seed 004: a host group satisfies a host type requirement
/// "when any one of the hosts available is the host type requested").
pub(crate) fn missing_text(word: &str) -> String {
    match word.split_once("==") {
        Some((kind, name)) => format!("no host of the queue is of {kind} `{name}`"),
        None => format!("no host of the queue offers resource `{word}`"),
    }
}

fn ineligible_why(view: &RemoteView, candidate: &Candidate, slots: u32) -> String {
    match candidate.eligibility {
        Eligibility::Eligible => String::new(),
        Eligibility::Unknown => format!(
            "nothing known of it yet: no hello or counter update from {}",
            view.cluster_of(candidate.queue)
        ),
        Eligibility::MissingResource(resource) => missing_text(view.resource_name(resource)),
        Eligibility::TooFewSlots { total } => {
            format!("the queue has {total} slots in all; the job needs {slots}")
        }
        Eligibility::TooFewGpuSlots { qualified } => format!(
            "the queue's hosts with the GPUs the job asks for on each host have {qualified} slots in all; the job needs {slots}"
        ),
        Eligibility::Refused => format!(
            "it refused the job; not tried again for it until {} sends its counters again",
            view.cluster_of(candidate.queue)
        ),
        Eligibility::BacklogFull { limit } => {
            format!(
                "no slots for the job, free or after preemption, and IMPT_JOBBKLG reached ({limit} imported jobs pending)"
            )
        }
        Eligibility::Unreachable => format!(
            "remote cluster unreachable: the link to {} is down or its counters are too old",
            view.cluster_of(candidate.queue)
        ),
    }
}

fn lost_why(mode: ScheduleMode, candidate: &Candidate, lost: LostOn) -> String {
    let Some(figures) = candidate.figures else {
        return String::new();
    };
    let tier = candidate.tier().unwrap_or(Tier::Any);
    match lost {
        LostOn::Tier { winner } => format!(
            "the winner has {}; this queue has {}",
            winner.describe(),
            tier.describe()
        ),
        LostOn::QueuePriority { winner } => format!(
            "queue priority {} is below the winner's {winner} (HIGH_QUEUE_PRIORITY)",
            figures.priority
        ),
        LostOn::VictimPriority { winner } => format!(
            "it would preempt a queue of priority {}, the winner one of priority {} (PREEMPTABLE_QUEUE_PRIORITY)",
            victim_text(figures.victim_priority),
            victim_text(winner)
        ),
        LostOn::Score { winner } => format!(
            "{} is {}, the winner's is {winner}",
            score_name(mode, tier),
            candidate.score().unwrap_or_default()
        ),
        LostOn::Order => "tied with the winner, which comes first in SNDJOBS_TO".to_owned(),
    }
}

/// The sentence saying why the winner won: the key on which it beat the
/// closest other eligible queue.
fn won_why(decision: &Decision, view: &RemoteView, winner: &Candidate) -> String {
    let mode = decision.mode;
    let tier = winner.tier().unwrap_or(Tier::Any);
    let Some(figures) = winner.figures else {
        return String::new();
    };
    let closest = decision
        .candidates
        .iter()
        .enumerate()
        .filter_map(|(index, candidate)| match decision.verdict(index) {
            Verdict::Lost(lost) => Some((index, candidate, lost)),
            _ => None,
        })
        .max_by_key(|(index, _, lost)| (key_depth(*lost), std::cmp::Reverse(*index)))
        .map(|(_, candidate, lost)| (candidate, lost));
    let scope = match tier {
        Tier::Any => String::new(),
        other => format!(" among queues with {}", other.describe()),
    };
    let Some((runner_up, lost)) = closest else {
        return format!("the only eligible queue{scope}");
    };
    let other = view.queue_ref(runner_up.queue);
    match lost {
        LostOn::Tier { .. } => format!(
            "it has {}; {other} has {}",
            tier.describe(),
            runner_up.tier().unwrap_or(Tier::Any).describe()
        ),
        LostOn::QueuePriority { .. } => format!(
            "highest queue priority{scope}: {} against {} at {other} (HIGH_QUEUE_PRIORITY)",
            figures.priority,
            runner_up.figures.map_or(0, |f| f.priority)
        ),
        LostOn::VictimPriority { .. } => format!(
            "it can preempt the lowest-priority queue{scope}: priority {} against {} at {other} (PREEMPTABLE_QUEUE_PRIORITY)",
            victim_text(figures.victim_priority),
            victim_text(runner_up.figures.and_then(|f| f.victim_priority))
        ),
        LostOn::Score { .. } => format!(
            "largest {}{scope}: {} against {} at {other}",
            score_name(mode, tier),
            winner.score().unwrap_or_default(),
            runner_up.score().unwrap_or_default()
        ),
        LostOn::Order => format!("tied with {other}{scope}; comes first in SNDJOBS_TO"),
    }
}

/// Later keys mean a closer contest.
fn key_depth(lost: LostOn) -> u8 {
    match lost {
        LostOn::Tier { .. } => 0,
        LostOn::QueuePriority { .. } => 1,
        LostOn::VictimPriority { .. } => 2,
        LostOn::Score { .. } => 3,
        LostOn::Order => 4,
    }
}

/// The reason a decision gives, in words.
pub fn describe_reason(decision: &Decision, view: &RemoteView, slots: u32) -> String {
    match &decision.outcome {
        Outcome::Forward(target) => {
            let why = decision
                .winner()
                .map(|winner| won_why(decision, view, winner))
                .unwrap_or_default();
            format!("{}: {why}", view.queue_ref(*target))
        }
        Outcome::Pend(PendReason::NoRemoteQueues) => {
            "the send queue lists no remote queue (SNDJOBS_TO)".to_owned()
        }
        Outcome::Pend(PendReason::NoCountersYet) => {
            let mut clusters: Vec<String> = decision
                .candidates
                .iter()
                .map(|candidate| view.cluster_of(candidate.queue).to_string())
                .collect();
            clusters.dedup();
            format!(
                "remote queues unknown: no hello or counter update yet from {}",
                clusters.join(", ")
            )
        }
        Outcome::Pend(PendReason::NoEligibleQueue) => {
            format!(
                "no eligible remote queue ({})",
                every_why(decision, view, slots)
            )
        }
        Outcome::Pend(PendReason::NoQueueCanTake) => {
            format!(
                "no remote queue can take the job as the federation stands ({}); it is decided again when a remote queue's slots in all, resources or reachability change",
                every_why(decision, view, slots)
            )
        }
        Outcome::Pend(PendReason::RemoteUnreachable) => {
            format!(
                "remote cluster unreachable ({})",
                every_why(decision, view, slots)
            )
        }
        Outcome::Pend(PendReason::ForwardCapReached { cap }) => {
            format!("forwarded {cap} times already (MAX_FORWARDS); the job stays pending here")
        }
        Outcome::Pend(PendReason::NoSlotsEvenAfterPreemption) => {
            "no remote queue has slots for the job even after preemption (PENDING_WHEN_NOSLOTS)"
                .to_owned()
        }
    }
}

/// Why each candidate of `decision` was ineligible, in words.
fn every_why(decision: &Decision, view: &RemoteView, slots: u32) -> String {
    let reasons: Vec<String> = decision
        .candidates
        .iter()
        .map(|candidate| {
            format!(
                "{}: {}",
                view.queue_ref(candidate.queue),
                ineligible_why(view, candidate, slots)
            )
        })
        .collect();
    reasons.join("; ")
}

/// What a reason says when the decision did not know some eligible
/// queue's workload.
pub const WORKLOAD_UNKNOWN: &str =
    " [made before a counter update: remote workload not accounted for]";

/// Whether some eligible candidate of `decision` is known from a hello
/// only.
fn workload_unknown(decision: &Decision) -> bool {
    decision.candidates.iter().any(|candidate| {
        candidate.eligibility == Eligibility::Eligible
            && candidate.figures.is_some_and(|f| !f.from_counters)
    })
}

impl DecisionRecord {
    /// Renders `entry` of submission cluster `cluster`, resolving names
    /// through `view` (names only ever get added to a view, so any later
    /// state of the view that made the decision will do).
    pub fn from_entry(entry: &DecisionEntry, cluster: &str, view: &RemoteView) -> Self {
        let mut record = DecisionRecord::new(
            &entry.decision,
            view,
            DecisionContext {
                now: entry.decision.at,
                job: &entry.job,
                job_id: entry.job_id,
                cluster,
                send_queue: entry.send_queue.as_str(),
                slots: entry.slots,
                attempt: entry.attempt,
            },
        );
        record.note = entry.note.clone();
        record.oracle = entry.oracle.clone();
        record.forwarded_before = entry
            .forwarded_before
            .iter()
            .map(|&queue| view.queue_ref(queue).to_string())
            .collect();
        if let Some(standing) = entry.aps {
            record.cite_aps(standing);
        }
        record
    }

    /// Builds the record of `decision`, resolving names through `view`.
    pub fn new(decision: &Decision, view: &RemoteView, context: DecisionContext<'_>) -> Self {
        let mut reason = describe_reason(decision, view, context.slots);
        let workload_unknown = workload_unknown(decision);
        if workload_unknown {
            reason.push_str(WORKLOAD_UNKNOWN);
        }
        let candidates = decision
            .candidates
            .iter()
            .enumerate()
            .map(|(index, candidate)| {
                let figures = candidate.figures;
                let (verdict, why) = match decision.verdict(index) {
                    Verdict::Won => ("won", won_why(decision, view, candidate)),
                    Verdict::Ineligible => (
                        "ineligible",
                        ineligible_why(view, candidate, context.slots),
                    ),
                    Verdict::Lost(lost) => ("lost", lost_why(decision.mode, candidate, lost)),
                    Verdict::Held => (
                        "held",
                        "eligible, but no queue has slots even after preemption (PENDING_WHEN_NOSLOTS)"
                            .to_owned(),
                    ),
                };
                CandidateRecord {
                    queue: view.queue_ref(candidate.queue).to_string(),
                    priority: figures.map(|f| f.priority),
                    total: figures.map(|f| f.total),
                    available: figures.map(|f| f.available),
                    running: figures.map(|f| f.running),
                    pending: figures.map(|f| f.pending),
                    preemptable_available: figures.map(|f| f.preemptable_available),
                    victim_priority: figures.and_then(|f| f.victim_priority),
                    imported_pending: figures.map(|f| f.imported_pending),
                    impt_jobbklg: figures.and_then(|f| f.impt_jobbklg),
                    view_age: candidate.view_age(decision.at).map(secs),
                    known_from: figures.map(|f| {
                        if f.from_counters { "counters" } else { "hello" }.to_owned()
                    }),
                    eligible: candidate.eligibility == Eligibility::Eligible,
                    tier: candidate.tier().map(|tier| tier.describe().to_owned()),
                    score: candidate.score(),
                    verdict: verdict.to_owned(),
                    why,
                }
            })
            .collect();
        let (outcome, target) = match decision.outcome {
            Outcome::Forward(target) => (
                OutcomeKind::Forwarded,
                Some(view.queue_ref(target).to_string()),
            ),
            Outcome::Pend(_) => (OutcomeKind::Pending, None),
        };
        DecisionRecord {
            record: "decision".to_owned(),
            time: context.now.as_secs_f64(),
            job: context.job.to_owned(),
            job_id: context.job_id,
            cluster: context.cluster.to_owned(),
            send_queue: context.send_queue.to_owned(),
            slots: context.slots,
            attempt: context.attempt,
            mode: decision.mode.to_string(),
            outcome,
            target,
            reason,
            tier: decision.tier.map(|tier| tier.describe().to_owned()),
            view_age: decision.view_age.map(secs),
            workload_unknown,
            candidates,
            note: None,
            oracle: None,
            forwarded_before: Vec::new(),
            aps_value: None,
            aps_kind: None,
            aps_ahead_of: None,
        }
    }
}

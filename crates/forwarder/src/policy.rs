//! The forwarding policy: `decide(job, now)` for every
//! MC_PLUGIN_SCHEDULE_ENHANCE mode, with the figures and the verdict of every
//! candidate.
//!
//! The rules (docs/forwarding.md has them in full, citing seed
//! `004_2db3e68d6519687c.txt`):
//!
//! 1. A remote queue is *eligible* when its cluster has sent counters, it
//!    offers every resource the job needs, it has at least as many slots in
//!    all as the job asks for, and it takes the job under IMPT_JOBBKLG: the
//!    job starts there at once (free slots, or slots after preemption) or
//!    the backlog has room (`mcfed_protocol::takes_import`, the receiver's
//!    rule too).
//! 2. Eligible queues fall in *tiers*. Under COUNT_PREEMPTABLE: queues with
//!    free slots for the job, then queues that have them after preemption,
//!    then the rest (the job would pend there). Under RESOURCE_ONLY and the
//!    default mode every eligible queue is in one tier.
//! 3. The best tier wins; within it the keys are compared in this order:
//!    queue PRIORITY, higher first (HIGH_QUEUE_PRIORITY only); the priority
//!    of the queue it would preempt, lower first (PREEMPTABLE_QUEUE_PRIORITY
//!    only, and only once no queue has free slots); the slot score, larger
//!    first; the queue's place in SNDJOBS_TO, earlier first (the tie rule).
//! 4. The slot score is (available - pending) under RESOURCE_ONLY and in the
//!    free tier of COUNT_PREEMPTABLE; (preemptable available - pending) in
//!    the other tiers of COUNT_PREEMPTABLE; (available) in the default mode.
//! 5. PENDING_WHEN_NOSLOTS: when the best tier is the last one (no slots even
//!    after preemption), the job pends at the submission cluster.

use std::cmp::Ordering;
use std::time::Duration;

use mcfed_protocol::SimTime;

use crate::mode::ScheduleMode;
use crate::view::{Figures, RemoteQueueId, RemoteView, ResourceId};
use scan::scan;

/// What a job needs from a remote queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct JobRequest {
    /// Slots.
    pub slots: u32,
    /// Boolean resources, interned in the view.
    pub resources: Vec<ResourceId>,
    /// GPUs on each host it runs on (`bsub -gpu "num=N"`).
    pub gpus: u32,
    /// Queues that refused the job since their cluster's last update,
    /// sorted: not tried again for it until then (issue 27, item 5).
    pub refused: Vec<RemoteQueueId>,
}

/// A group of candidates that the policy ranks together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// Every eligible queue (RESOURCE_ONLY and the default mode).
    Any,
    /// Free slots for the job.
    FreeSlots,
    /// Slots for the job once lower-priority work is preempted.
    AfterPreemption,
    /// No slots even after preemption; the job would pend there.
    Backlog,
}

impl Tier {
    /// A short description for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Tier::Any => "any eligible queue",
            Tier::FreeSlots => "free slots",
            Tier::AfterPreemption => "slots after preemption",
            Tier::Backlog => "no slots even after preemption",
        }
    }
}

/// Whether a candidate could take the job at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eligibility {
    /// It could.
    Eligible,
    /// No counter update from its cluster yet.
    Unknown,
    /// None of its hosts offers this resource.
    MissingResource(ResourceId),
    /// It has fewer slots in all than the job asks for.
    TooFewSlots {
        /// Its total slots.
        total: u32,
    },
    /// The job asks for GPUs on each host, and the queue's hosts with that
    /// many have fewer slots in all than the job asks for.
    TooFewGpuSlots {
        /// Slots on its hosts with as many GPUs.
        qualified: u32,
    },
    /// It refused the job since its cluster's last update: it is not tried
    /// again for the job until its counters come again.
    Refused,
    /// No slots for the job, free or after preemption, and its
    /// IMPT_JOBBKLG is reached.
    BacklogFull {
        /// Its IMPT_JOBBKLG.
        limit: u32,
    },
    /// Its cluster is unreachable: the link is down, or its last counter
    /// update is too old (LSF's PEND_JOB_RCLUS_UNREACH).
    Unreachable,
}

impl Eligibility {
    /// Whether the queue can never take the job as long as what its
    /// cluster says of it stays the same (its hosts' slots in all, their
    /// resources): the job's size or needs exceed the queue itself, not its
    /// present workload. Counters moving with the workload cannot change
    /// this; only a change of the queue's slots in all or resources can.
    pub fn is_static(self) -> bool {
        matches!(
            self,
            Eligibility::MissingResource(_)
                | Eligibility::TooFewSlots { .. }
                | Eligibility::TooFewGpuSlots { .. }
        )
    }
}

/// The key on which a candidate lost to the winner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LostOn {
    /// The winner was in a better tier.
    Tier {
        /// The winner's tier.
        winner: Tier,
    },
    /// HIGH_QUEUE_PRIORITY: the winner's queue has a higher priority.
    QueuePriority {
        /// The winner's priority.
        winner: u32,
    },
    /// PREEMPTABLE_QUEUE_PRIORITY: the winner would preempt a lower-priority
    /// queue.
    VictimPriority {
        /// The priority of the winner's victim queue.
        winner: Option<u32>,
    },
    /// The winner has a larger slot score.
    Score {
        /// The winner's score.
        winner: i64,
    },
    /// Everything tied; the winner comes first in SNDJOBS_TO.
    Order,
}

/// Where an eligible candidate stands: its tier and its slot score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
    /// The tier it falls in.
    pub tier: Tier,
    /// Its slot score within the tier (see the module docs).
    pub score: i64,
}

impl Candidate {
    /// Its tier, when eligible.
    pub fn tier(&self) -> Option<Tier> {
        self.standing.map(|standing| standing.tier)
    }

    /// Its slot score, when eligible.
    pub fn score(&self) -> Option<i64> {
        self.standing.map(|standing| standing.score)
    }

    /// The comparison keys of an eligible candidate at `index` in its
    /// decision (its place in SNDJOBS_TO).
    fn rank_key(&self, index: usize) -> Option<RankKey> {
        let figures = self.figures?;
        let standing = self.standing?;
        Some(RankKey {
            tier: standing.tier,
            priority: figures.priority,
            victim: figures.victim_priority,
            score: standing.score,
            position: u32::try_from(index).unwrap_or(u32::MAX),
        })
    }

    /// The age of the candidate's figures when decision `at` was made.
    pub fn view_age(&self, at: SimTime) -> Option<Duration> {
        self.figures
            .map(|figures| at.saturating_since(figures.taken_at))
    }
}

/// How a candidate fared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Chosen.
    Won,
    /// Not eligible (see its [`Eligibility`]).
    Ineligible,
    /// Eligible, but worse than the winner on this key.
    Lost(LostOn),
    /// Eligible, but the job pends at the submission cluster
    /// (PENDING_WHEN_NOSLOTS).
    Held,
}

/// One remote queue as the policy saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The queue.
    pub queue: RemoteQueueId,
    /// Its figures at decision time (`None`: unknown).
    pub figures: Option<Figures>,
    /// Whether it could take the job.
    pub eligibility: Eligibility,
    /// Its tier and slot score, when eligible.
    pub standing: Option<Standing>,
}

/// Why a job stays at the submission cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PendReason {
    /// The send queue lists no remote queue.
    NoRemoteQueues,
    /// No remote cluster has sent counters yet.
    NoCountersYet,
    /// Every remote queue is ineligible.
    NoEligibleQueue,
    /// No remote queue can ever take the job as the federation stands:
    /// every one is too small for it in all or lacks a resource it needs
    /// ([`Eligibility::is_static`]). The forwarder decides such a job again
    /// only when a remote queue's slots in all, resources or reachability
    /// change (issue 25: a job that fits nowhere costs nothing meanwhile).
    NoQueueCanTake,
    /// PENDING_WHEN_NOSLOTS and no queue has slots even after preemption.
    NoSlotsEvenAfterPreemption,
    /// Every remote queue that could take the job is at an unreachable
    /// cluster (LSF's PEND_JOB_RCLUS_UNREACH, "remote cluster
    /// unreachable").
    RemoteUnreachable,
    /// The job was forwarded MAX_FORWARDS times and is no longer forwarded.
    ForwardCapReached {
        /// MAX_FORWARDS.
        cap: u32,
    },
}

/// The outcome of a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Forward to this queue.
    Forward(RemoteQueueId),
    /// Keep the job pending at the submission cluster.
    Pend(PendReason),
}

/// A forwarding decision with everything needed to explain it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// What to do.
    pub outcome: Outcome,
    /// The mode that decided.
    pub mode: ScheduleMode,
    /// The winner's tier.
    pub tier: Option<Tier>,
    /// When the decision was made.
    pub at: SimTime,
    /// Age of the oldest view consulted (`None`: no view known).
    pub view_age: Option<Duration>,
    /// Every remote queue of the send queue, in SNDJOBS_TO order.
    pub candidates: Vec<Candidate>,
    /// The winner's index in `candidates` and its keys.
    best: Option<(usize, RankKey)>,
}

impl Decision {
    /// An empty decision, to pass to [`decide_into`].
    pub fn empty(mode: ScheduleMode) -> Self {
        Decision {
            outcome: Outcome::Pend(PendReason::NoRemoteQueues),
            mode,
            tier: None,
            at: SimTime::ZERO,
            view_age: None,
            candidates: Vec::new(),
            best: None,
        }
    }

    /// A decision made without looking at any candidate (the job is held
    /// back for another reason).
    pub fn pend_without_candidates(mode: ScheduleMode, reason: PendReason) -> Self {
        Decision {
            outcome: Outcome::Pend(reason),
            ..Decision::empty(mode)
        }
    }

    /// How the candidate at `index` fared. Worked out on demand from the
    /// figures, so deciding does not pay for explanations nobody reads.
    pub fn verdict(&self, index: usize) -> Verdict {
        let Some(candidate) = self.candidates.get(index) else {
            return Verdict::Ineligible;
        };
        let (Some(key), Some((winner_index, winner_key))) = (candidate.rank_key(index), &self.best)
        else {
            return Verdict::Ineligible;
        };
        if matches!(self.outcome, Outcome::Pend(_)) {
            return Verdict::Held;
        }
        if index == *winner_index {
            return Verdict::Won;
        }
        Verdict::Lost(compare(self.mode, winner_key, &key).1)
    }
    /// The chosen queue, if the job is forwarded.
    pub fn target(&self) -> Option<RemoteQueueId> {
        match self.outcome {
            Outcome::Forward(target) => Some(target),
            Outcome::Pend(_) => None,
        }
    }

    /// The winning candidate, if the job is forwarded.
    pub fn winner(&self) -> Option<&Candidate> {
        match (&self.outcome, &self.best) {
            (Outcome::Forward(_), Some((index, _))) => self.candidates.get(*index),
            _ => None,
        }
    }
}

/// The comparison keys of an eligible candidate; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RankKey {
    tier: Tier,
    priority: u32,
    victim: Option<u32>,
    score: i64,
    position: u32,
}

/// Compares two keys: `Less` means `a` is better. Returns the key that
/// decided it.
#[inline]
fn compare(mode: ScheduleMode, a: &RankKey, b: &RankKey) -> (Ordering, LostOn) {
    let tier = a.tier.cmp(&b.tier);
    if tier != Ordering::Equal {
        return (
            tier,
            LostOn::Tier {
                winner: a.tier.min(b.tier),
            },
        );
    }
    if mode.high_queue_priority() {
        let priority = b.priority.cmp(&a.priority);
        if priority != Ordering::Equal {
            return (
                priority,
                LostOn::QueuePriority {
                    winner: a.priority.max(b.priority),
                },
            );
        }
    }
    if mode.preemptable_queue_priority() && a.tier != Tier::FreeSlots {
        // Lower victim priority first; no victim at all last.
        let key = |victim: Option<u32>| victim.map_or(u64::MAX, u64::from);
        let victim = key(a.victim).cmp(&key(b.victim));
        if victim != Ordering::Equal {
            let winner = if victim == Ordering::Less {
                a.victim
            } else {
                b.victim
            };
            return (victim, LostOn::VictimPriority { winner });
        }
    }
    let score = b.score.cmp(&a.score);
    if score != Ordering::Equal {
        return (
            score,
            LostOn::Score {
                winner: a.score.max(b.score),
            },
        );
    }
    (a.position.cmp(&b.position), LostOn::Order)
}

/// Decides where a job goes among `queues` (a send queue's SNDJOBS_TO, in
/// order), from `view` at `now` under `mode`. Pure: it changes nothing.
pub fn decide(
    view: &RemoteView,
    mode: ScheduleMode,
    queues: &[RemoteQueueId],
    job: &JobRequest,
    now: SimTime,
) -> Decision {
    let mut decision = Decision::empty(mode);
    decision.candidates.reserve_exact(queues.len());
    decide_into(view, mode, queues, job, now, &mut decision);
    decision
}

/// [`decide`], reusing `decision`'s allocation.
pub fn decide_into(
    view: &RemoteView,
    mode: ScheduleMode,
    queues: &[RemoteQueueId],
    job: &JobRequest,
    now: SimTime,
    decision: &mut Decision,
) {
    // One monomorphised loop per mode keeps mode tests out of the hot loop.
    match mode {
        ScheduleMode::Default => {
            scan::<false, false, false, true>(view, queues, job, now, decision)
        }
        ScheduleMode::ResourceOnly => {
            scan::<false, false, false, false>(view, queues, job, now, decision)
        }
        ScheduleMode::CountPreemptable {
            high_queue_priority,
            preemptable_queue_priority,
            ..
        } => match (high_queue_priority, preemptable_queue_priority) {
            (false, false) => scan::<true, false, false, false>(view, queues, job, now, decision),
            (true, false) => scan::<true, true, false, false>(view, queues, job, now, decision),
            (false, true) => scan::<true, false, true, false>(view, queues, job, now, decision),
            (true, true) => scan::<true, true, true, false>(view, queues, job, now, decision),
        },
    }
    finish(mode, queues, now, decision);
}

/// Sets the outcome from the scan's winner.
fn finish(mode: ScheduleMode, queues: &[RemoteQueueId], now: SimTime, decision: &mut Decision) {
    decision.mode = mode;
    decision.at = now;
    decision.tier = None;
    let Some((winner_index, winner_key)) = decision.best else {
        let any_known = decision.candidates.iter().any(|c| c.figures.is_some());
        let any_unreachable = decision
            .candidates
            .iter()
            .any(|c| c.eligibility == Eligibility::Unreachable);
        decision.outcome = Outcome::Pend(if queues.is_empty() {
            PendReason::NoRemoteQueues
        } else if any_unreachable {
            PendReason::RemoteUnreachable
        } else if !any_known {
            PendReason::NoCountersYet
        } else if decision
            .candidates
            .iter()
            .all(|candidate| candidate.eligibility.is_static())
        {
            PendReason::NoQueueCanTake
        } else {
            PendReason::NoEligibleQueue
        });
        return;
    };
    decision.tier = Some(winner_key.tier);
    decision.outcome = if mode.pending_when_noslots() && winner_key.tier == Tier::Backlog {
        Outcome::Pend(PendReason::NoSlotsEvenAfterPreemption)
    } else {
        Outcome::Forward(decision.candidates[winner_index].queue)
    };
}

mod scan;
#[cfg(test)]
mod tests;

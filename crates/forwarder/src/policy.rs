//! The forwarding policy: `decide(job, now)` for every
//! MC_PLUGIN_SCHEDULE_ENHANCE mode, with the figures and the verdict of every
//! candidate.
//!
//! The rules (docs/forwarding.md has them in full, citing seed
//! `004_2db3e68d6519687c.txt`):
//!
//! 1. A remote queue is *eligible* when its cluster has sent counters, it
//!    offers every resource the job needs, it has at least as many slots in
//!    all as the job asks for, and it has free slots for the job or room
//!    under IMPT_JOBBKLG.
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

/// What a job needs from a remote queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRequest {
    /// Slots.
    pub slots: u32,
    /// Boolean resources, interned in the view.
    pub resources: Vec<ResourceId>,
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
            Tier::Backlog => "no slots, room to pend",
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
    /// No free slots for the job and its IMPT_JOBBKLG is reached.
    BacklogFull {
        /// Its IMPT_JOBBKLG.
        limit: u32,
    },
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
    /// Its place in the send queue's SNDJOBS_TO (0 first).
    pub position: u32,
    /// Its figures at decision time (`None`: unknown).
    pub figures: Option<Figures>,
    /// Age of those figures.
    pub view_age: Option<Duration>,
    /// Whether it could take the job.
    pub eligibility: Eligibility,
    /// Its tier, when eligible.
    pub tier: Option<Tier>,
    /// Its slot score, when eligible.
    pub score: Option<i64>,
    /// How it fared.
    pub verdict: Verdict,
}

/// Why a job stays at the submission cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PendReason {
    /// The send queue lists no remote queue.
    NoRemoteQueues,
    /// No remote cluster has sent counters yet.
    NoCountersYet,
    /// Every remote queue is ineligible.
    NoEligibleQueue,
    /// PENDING_WHEN_NOSLOTS and no queue has slots even after preemption.
    NoSlotsEvenAfterPreemption,
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
    /// Age of the oldest view consulted (`None`: no view known).
    pub view_age: Option<Duration>,
    /// Every remote queue of the send queue, in SNDJOBS_TO order.
    pub candidates: Vec<Candidate>,
}

impl Decision {
    /// The chosen queue, if the job is forwarded.
    pub fn target(&self) -> Option<RemoteQueueId> {
        match self.outcome {
            Outcome::Forward(target) => Some(target),
            Outcome::Pend(_) => None,
        }
    }

    /// The winning candidate.
    pub fn winner(&self) -> Option<&Candidate> {
        self.candidates
            .iter()
            .find(|candidate| candidate.verdict == Verdict::Won)
    }
}

/// The comparison keys of an eligible candidate; see the module docs.
#[derive(Clone, Copy, Debug)]
struct RankKey {
    tier: Tier,
    priority: u32,
    victim: Option<u32>,
    score: i64,
    position: u32,
}

/// Compares two keys: `Less` means `a` is better. Returns the key that
/// decided it.
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

fn tier_of(mode: ScheduleMode, figures: &Figures, slots: u32) -> Tier {
    if !mode.counts_preemptable() {
        Tier::Any
    } else if figures.available >= slots {
        Tier::FreeSlots
    } else if figures.preemptable_available >= slots {
        Tier::AfterPreemption
    } else {
        Tier::Backlog
    }
}

fn score_of(mode: ScheduleMode, tier: Tier, figures: &Figures) -> i64 {
    let available = i64::from(figures.available);
    let pending = i64::from(figures.pending);
    match (mode, tier) {
        (ScheduleMode::Default, _) => available,
        (ScheduleMode::ResourceOnly, _) | (_, Tier::FreeSlots) => available - pending,
        _ => i64::from(figures.preemptable_available) - pending,
    }
}

fn eligibility(
    view: &RemoteView,
    queue: RemoteQueueId,
    figures: &Figures,
    job: &JobRequest,
) -> Eligibility {
    if let Some(missing) = view.missing_resource(queue, &job.resources) {
        return Eligibility::MissingResource(missing);
    }
    if figures.total < job.slots {
        return Eligibility::TooFewSlots {
            total: figures.total,
        };
    }
    if figures.available < job.slots && !figures.has_backlog_room() {
        return Eligibility::BacklogFull {
            limit: figures.impt_jobbklg.unwrap_or(u32::MAX),
        };
    }
    Eligibility::Eligible
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
    let mut decision = Decision {
        outcome: Outcome::Pend(PendReason::NoRemoteQueues),
        mode,
        tier: None,
        view_age: None,
        candidates: Vec::with_capacity(queues.len()),
    };
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
    decision.mode = mode;
    decision.tier = None;
    decision.view_age = None;
    decision.candidates.clear();
    let mut best: Option<(usize, RankKey)> = None;
    let mut any_known = false;
    for (position, &queue) in queues.iter().enumerate() {
        let position = u32::try_from(position).unwrap_or(u32::MAX);
        let figures = view.figures(queue).copied();
        let view_age = view.view_age(queue, now);
        let mut candidate = Candidate {
            queue,
            position,
            figures,
            view_age,
            eligibility: Eligibility::Unknown,
            tier: None,
            score: None,
            verdict: Verdict::Ineligible,
        };
        if let Some(figures) = &figures {
            any_known = true;
            if let Some(age) = view_age {
                decision.view_age = Some(decision.view_age.map_or(age, |oldest| oldest.max(age)));
            }
            candidate.eligibility = eligibility(view, queue, figures, job);
            if candidate.eligibility == Eligibility::Eligible {
                let tier = tier_of(mode, figures, job.slots);
                let key = RankKey {
                    tier,
                    priority: figures.priority,
                    victim: figures.victim_priority,
                    score: score_of(mode, tier, figures),
                    position,
                };
                candidate.tier = Some(tier);
                candidate.score = Some(key.score);
                let better = match &best {
                    None => true,
                    Some((_, best_key)) => compare(mode, &key, best_key).0 == Ordering::Less,
                };
                if better {
                    best = Some((decision.candidates.len(), key));
                }
            }
        }
        decision.candidates.push(candidate);
    }

    let Some((winner_index, winner_key)) = best else {
        decision.outcome = Outcome::Pend(if queues.is_empty() {
            PendReason::NoRemoteQueues
        } else if !any_known {
            PendReason::NoCountersYet
        } else {
            PendReason::NoEligibleQueue
        });
        return;
    };
    decision.tier = Some(winner_key.tier);
    let held = mode.pending_when_noslots() && winner_key.tier == Tier::Backlog;
    decision.outcome = if held {
        Outcome::Pend(PendReason::NoSlotsEvenAfterPreemption)
    } else {
        Outcome::Forward(decision.candidates[winner_index].queue)
    };
    for (index, candidate) in decision.candidates.iter_mut().enumerate() {
        let (Some(tier), Some(score), Some(figures)) =
            (candidate.tier, candidate.score, &candidate.figures)
        else {
            continue;
        };
        candidate.verdict = if held {
            Verdict::Held
        } else if index == winner_index {
            Verdict::Won
        } else {
            let key = RankKey {
                tier,
                priority: figures.priority,
                victim: figures.victim_priority,
                score,
                position: candidate.position,
            };
            Verdict::Lost(compare(mode, &winner_key, &key).1)
        };
    }
}

#[cfg(test)]
mod tests;

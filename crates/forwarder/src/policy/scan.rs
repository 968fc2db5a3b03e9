//! The scan at the heart of [`decide`](super::decide): each candidate's
//! eligibility, its tier, slot score and packed rank, monomorphised per
//! mode, and the figures a job asking for GPUs ranks a queue on.

use mcfed_protocol::SimTime;

use super::{Candidate, Decision, Eligibility, JobRequest, Standing, Tier};
use crate::view::{Figures, RemoteQueueId, RemoteView};

#[inline(always)]
fn eligibility(
    view: &RemoteView,
    queue: RemoteQueueId,
    figures: &Figures,
    job: &JobRequest,
) -> Eligibility {
    if !job.resources.is_empty() {
        if let Some(missing) = view.missing_resource(queue, &job.resources) {
            return Eligibility::MissingResource(missing);
        }
    }
    if figures.total < job.slots {
        return Eligibility::TooFewSlots {
            total: figures.total,
        };
    }
    if job.gpus > 0 {
        let qualified = view.gpu_slots(queue).0.slots_for(job.gpus);
        if qualified < job.slots {
            return Eligibility::TooFewGpuSlots { qualified };
        }
    }
    if !job.refused.is_empty() && job.refused.binary_search(&queue).is_ok() {
        return Eligibility::Refused;
    }
    let at_once = mcfed_protocol::starts_at_once(job.slots, figures.preemptable_available);
    if !mcfed_protocol::takes_import(figures.imported_pending, figures.impt_jobbklg, at_once) {
        return Eligibility::BacklogFull {
            limit: figures.impt_jobbklg.unwrap_or(u32::MAX),
        };
    }
    Eligibility::Eligible
}

/// The tier, slot score and packed rank of an eligible queue. The packed
/// rank is larger for a better queue and orders exactly as [`compare`] does
/// except for the SNDJOBS_TO position, which the scan handles by keeping the
/// first of equal ranks. Bits, high to low: tier (2), queue priority (32,
/// HIGH_QUEUE_PRIORITY), victim priority inverted (33,
/// PREEMPTABLE_QUEUE_PRIORITY outside the free tier), score offset by 2^33
/// (35).
#[inline(always)]
fn rank<const CP: bool, const HQP: bool, const PQP: bool, const DEFAULT: bool>(
    figures: &Figures,
    slots: u32,
) -> (Tier, i64, u128) {
    let available = i64::from(figures.available);
    let pending = i64::from(figures.pending);
    let (tier, score) = if !CP {
        (
            Tier::Any,
            if DEFAULT {
                available
            } else {
                available - pending
            },
        )
    } else if figures.available >= slots {
        (Tier::FreeSlots, available - pending)
    } else if figures.preemptable_available >= slots {
        (
            Tier::AfterPreemption,
            i64::from(figures.preemptable_available) - pending,
        )
    } else {
        (
            Tier::Backlog,
            i64::from(figures.preemptable_available) - pending,
        )
    };
    let tier_good: u128 = match tier {
        Tier::Any | Tier::FreeSlots => 3,
        Tier::AfterPreemption => 2,
        Tier::Backlog => 1,
    };
    let priority = if HQP { u128::from(figures.priority) } else { 0 };
    let victim_good = if PQP && tier != Tier::FreeSlots {
        figures
            .victim_priority
            .map_or(0, |victim| (1u128 << 32) - u128::from(victim))
    } else {
        0
    };
    let score_bits = (i128::from(score) + (1i128 << 33)).clamp(0, (1i128 << 35) - 1) as u128;
    let packed = (tier_good << 100) | (priority << 68) | (victim_good << 35) | score_bits;
    (tier, score, packed)
}

pub(super) fn scan<const CP: bool, const HQP: bool, const PQP: bool, const DEFAULT: bool>(
    view: &RemoteView,
    queues: &[RemoteQueueId],
    job: &JobRequest,
    now: SimTime,
    decision: &mut Decision,
) {
    // Every valid packed rank is at least 2^100 (its tier bits are never
    // zero), so zero means "no winner yet".
    let mut best_packed = 0u128;
    let mut best_index = usize::MAX;
    let mut oldest = SimTime::MAX;
    decision.candidates.clear();
    decision
        .candidates
        .extend(queues.iter().enumerate().map(|(index, &queue)| {
            if view.is_unreachable(queue) {
                return Candidate {
                    queue,
                    figures: view.figures(queue).copied(),
                    eligibility: Eligibility::Unreachable,
                    standing: None,
                };
            }
            let Some(figures) = view.figures(queue) else {
                return Candidate {
                    queue,
                    figures: None,
                    eligibility: Eligibility::Unknown,
                    standing: None,
                };
            };
            oldest = oldest.min(figures.taken_at);
            let adjusted;
            let figures = if job.gpus > 0 {
                adjusted = gpu_figures(view, queue, figures, job.gpus);
                &adjusted
            } else {
                figures
            };
            let eligibility = eligibility(view, queue, figures, job);
            let standing = if eligibility == Eligibility::Eligible {
                let (tier, score, packed) = rank::<CP, HQP, PQP, DEFAULT>(figures, job.slots);
                if packed > best_packed {
                    best_packed = packed;
                    best_index = index;
                }
                Some(Standing { tier, score })
            } else {
                None
            };
            Candidate {
                queue,
                figures: Some(*figures),
                eligibility,
                standing,
            }
        }));
    decision.view_age = (oldest != SimTime::MAX).then(|| now.saturating_since(oldest));
    decision.best = decision
        .candidates
        .get(best_index)
        .and_then(|candidate| Some((best_index, candidate.rank_key(best_index)?)));
}

/// `figures` as a job asking for `gpus` GPUs on each host can use them:
/// its available slots are the free slots on hosts with that many GPUs
/// free; the slots preemption adds (preemptable available less available)
/// come on top, up to the slots of the hosts with that many GPUs in all
/// (seed 004's counters, "as for slots", for the slots such a job can use;
/// docs/forwarding.md).
fn gpu_figures(view: &RemoteView, queue: RemoteQueueId, figures: &Figures, gpus: u32) -> Figures {
    let (total, free) = view.gpu_slots(queue);
    let available = figures.available.min(free.slots_for(gpus));
    let by_preemption = figures
        .preemptable_available
        .saturating_sub(figures.available);
    let mut figures = Figures {
        available,
        preemptable_available: available
            .saturating_add(by_preemption)
            .min(total.slots_for(gpus))
            .max(available),
        ..*figures
    };
    figures.follow_victims();
    figures
}

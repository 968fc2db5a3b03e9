//! The preemption relation between a cluster's queues (seed 003), and the
//! warning LSF gives when a preemptive queue can preempt backfill jobs.

use std::cmp::Reverse;

use mcfed_protocol::QueueName;
use rustc_hash::FxHashMap;

use crate::config::{ConfigError, ConfigWarning, QueueConfig, SchedulingParams};
use crate::job::QueueIndex;
use crate::preemption::{QueueFacts, can_preempt, preference};

use super::checks::check_preemption_lists;

/// Which queues may preempt which.
pub(super) struct Relation {
    /// Per queue, the queues it may preempt, most preferred victim first.
    pub(super) victims_of: Vec<Vec<QueueIndex>>,
    /// Per queue, the queues that may preempt it.
    pub(super) preemptors_of: Vec<Vec<QueueIndex>>,
    /// Some queue is PREEMPTIVE or PREEMPTABLE.
    pub(super) enabled: bool,
}

/// The preemption relation. Jobs of backfill queues can be preempted only
/// with PREEMPT_JOBTYPE=BACKFILL; jobs of pool queues never (seed 000: pool
/// queues cannot be preemptable, and a PREEMPTIVE queue's "every lower
/// queue" does not reach them either).
pub(super) fn relation(
    queues: &[QueueConfig],
    queue_by_name: &FxHashMap<QueueName, QueueIndex>,
    params: &SchedulingParams,
) -> Result<Relation, ConfigError> {
    for (index, queue) in queues.iter().enumerate() {
        check_preemption_lists(index, queue, queues, queue_by_name)?;
    }
    let queue_count = queues.len();
    let mut victims_of: Vec<Vec<QueueIndex>> = vec![Vec::new(); queue_count];
    let mut preemptors_of: Vec<Vec<QueueIndex>> = vec![Vec::new(); queue_count];
    for (p, preemptor) in queues.iter().enumerate() {
        for (v, victim) in queues.iter().enumerate() {
            if can_preempt(facts(preemptor), facts(victim))
                && (!victim.backfill || params.preempt_backfill)
                && victim.slot_pool.is_none()
            {
                victims_of[p].push(v);
                preemptors_of[v].push(p);
            }
        }
        // Seed 003: queues with a preference number first, higher first;
        // then lower priority first; configuration order last.
        victims_of[p].sort_by_key(|&v| {
            let victim = &queues[v];
            let preference = preference(&preemptor.preemption, &victim.name);
            (
                preference.is_none(),
                Reverse(preference),
                victim.priority,
                v,
            )
        });
    }
    Ok(Relation {
        victims_of,
        preemptors_of,
        enabled: queues.iter().any(|queue| queue.preemption.is_enabled()),
    })
}

fn facts(queue: &QueueConfig) -> QueueFacts<'_> {
    QueueFacts {
        name: &queue.name,
        priority: queue.priority,
        preemption: &queue.preemption,
    }
}

/// Seed 003: a preemptive queue that can preempt jobs of a backfill queue
/// may delay a higher-priority queue's reserved jobs; LSF allows it with a
/// warning.
pub(super) fn backfill_warnings(
    queues: &[QueueConfig],
    victims_of: &[Vec<QueueIndex>],
    preempt_backfill: bool,
) -> Vec<ConfigWarning> {
    if !preempt_backfill {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for (index, preemptor) in queues.iter().enumerate() {
        let Some(backfill) = victims_of[index]
            .iter()
            .map(|&victim| &queues[victim])
            .find(|victim| victim.backfill)
        else {
            continue;
        };
        let Some(reserving) = queues
            .iter()
            .find(|queue| queue.slot_reserve.is_some() && queue.priority > preemptor.priority)
        else {
            continue;
        };
        warnings.push(ConfigWarning::queue(
            index,
            "PREEMPTION",
            format!(
                "queue `{}` (PRIORITY {}) can preempt backfill jobs of `{}`; this may delay jobs with slot reservations in the higher-priority queue `{}` (PRIORITY {})",
                preemptor.name,
                preemptor.priority,
                backfill.name,
                reserving.name,
                reserving.priority
            ),
        ));
    }
    warnings
}

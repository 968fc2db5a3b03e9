//! The preemption tallies: for each pair of queues where one may preempt
//! the other, the slots the victim queue's running jobs hold on the open
//! hosts of the preemptor. Kept as jobs start and stop, they give the
//! counters' preemptable slots and let a preemptor see at once whether
//! preemption could ever make room.

use crate::job::{Job, QueueIndex};

use super::accounting::Change;
use super::hosts::HostBook;
use super::queues::QueueBook;

/// Slots each queue could preempt, per victim queue.
#[derive(Clone, Debug)]
pub(crate) struct VictimSlots {
    queue_count: usize,
    /// `slots[p * queue_count + v]`: slots held by running jobs of queue
    /// `v` on the open hosts of queue `p`, for pairs where `p` may preempt
    /// `v`.
    slots: Vec<u64>,
}

impl VictimSlots {
    /// Nothing running among `queue_count` queues.
    pub(crate) fn new(queue_count: usize) -> Self {
        VictimSlots {
            queue_count,
            slots: vec![0; queue_count * queue_count],
        }
    }

    /// Slots running jobs of `victim` hold on the open hosts of `preemptor`.
    pub(crate) fn get(&self, preemptor: QueueIndex, victim: QueueIndex) -> u64 {
        self.slots[preemptor * self.queue_count + victim]
    }

    /// `job` starts or stops running (`change.run`): the tallies of every
    /// queue that may preempt its queue follow.
    pub(crate) fn account(
        &mut self,
        job: &Job,
        change: Change,
        queues: &QueueBook,
        hosts: &HostBook,
    ) {
        for &preemptor in &queues[job.queue].preemptors {
            let reachable = hosts.reachable_slots(queues[preemptor].host_set, &job.placement);
            let tally = &mut self.slots[preemptor * self.queue_count + job.queue];
            if change.run > 0 {
                *tally += u64::from(reachable);
            } else {
                *tally -= u64::from(reachable);
            }
        }
    }
}

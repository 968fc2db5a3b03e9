//! The order in which a forwarding session decides the waiting jobs of a
//! FAIRSHARE send queue (seed 002: fwd_job_slots, "the forwarded job slots
//! weighting factor when using the LSF multicluster capability"): the user
//! with the highest dynamic priority first, recomputed after each of its
//! jobs is decided (a forward adds the job's slots to the user's
//! forwarded slots), first come first served within a user. The places of
//! the queue's jobs in the session's submission order are kept; only which
//! of its jobs fills each one changes.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{ForwarderNode, SendOrder};

/// A user of a fairshare send queue with jobs waiting.
struct FairUser {
    priority: f64,
    /// The waiting key of its next job, for ties.
    first: u64,
    user: Arc<str>,
}

impl PartialEq for FairUser {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for FairUser {}
impl PartialOrd for FairUser {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for FairUser {
    /// Highest priority first, then the earliest job.
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .total_cmp(&other.priority)
            .then_with(|| other.first.cmp(&self.first))
    }
}

/// One fairshare send queue's waiting jobs, by user.
#[derive(Default)]
struct FairQueue {
    jobs: FxHashMap<Arc<str>, VecDeque<(u64, u64)>>,
    heap: BinaryHeap<FairUser>,
    /// The user whose job was handed out last, to put back with its new
    /// priority once that job is decided.
    last: Option<Arc<str>>,
}

/// The fairshare send queues' orders for one session.
pub(super) struct FairOrder {
    queues: FxHashMap<usize, FairQueue>,
}

impl FairOrder {
    /// The orders of `node`'s fairshare send queues over `waiting` (waiting
    /// key, job id), by `order`'s priorities.
    pub(super) fn new(node: &ForwarderNode, waiting: &[(u64, u64)], order: &dyn SendOrder) -> Self {
        let mut queues: FxHashMap<usize, FairQueue> = FxHashMap::default();
        for &(key, id) in waiting {
            let Some(job) = node.jobs.get(&id) else {
                continue;
            };
            let send_queue = &node.send_queues[job.send_queue];
            // APS orders a FAIRSHARE send queue of an APS group (`aps`).
            if send_queue.forwarded_slots.is_none() || send_queue.aps_group.is_some() {
                continue;
            }
            queues
                .entry(job.send_queue)
                .or_default()
                .jobs
                .entry(job.spec.user.clone())
                .or_default()
                .push_back((key, id));
        }
        for (&queue, fair) in &mut queues {
            let users: Vec<Arc<str>> = fair.jobs.keys().cloned().collect();
            for user in users {
                if let Some(candidate) = fair.candidate(node, queue, &user, order) {
                    fair.heap.push(candidate);
                }
            }
        }
        FairOrder { queues }
    }

    /// Whether send queue `queue`'s jobs are handed out here.
    pub(super) fn orders(&self, queue: usize) -> bool {
        self.queues.contains_key(&queue)
    }

    /// The next job (waiting key, id) of send queue `queue`.
    pub(super) fn next(
        &mut self,
        node: &ForwarderNode,
        queue: usize,
        order: &dyn SendOrder,
    ) -> Option<(u64, u64)> {
        let fair = self.queues.get_mut(&queue)?;
        if let Some(user) = fair.last.take() {
            if let Some(candidate) = fair.candidate(node, queue, &user, order) {
                fair.heap.push(candidate);
            }
        }
        let best = fair.heap.pop()?;
        let next = fair.jobs.get_mut(&best.user)?.pop_front()?;
        fair.last = Some(best.user);
        Some(next)
    }
}

impl FairQueue {
    /// `user` with its next job and its priority now, if it has a job left.
    fn candidate(
        &self,
        node: &ForwarderNode,
        queue: usize,
        user: &Arc<str>,
        order: &dyn SendOrder,
    ) -> Option<FairUser> {
        let &(first, _) = self.jobs.get(user)?.front()?;
        let forwarded = node.forwarded_slots(queue, user);
        let priority = order
            .priority(&node.send_queues[queue].name, user, forwarded)
            .unwrap_or(f64::NEG_INFINITY);
        Some(FairUser {
            priority,
            first,
            user: user.clone(),
        })
    }
}

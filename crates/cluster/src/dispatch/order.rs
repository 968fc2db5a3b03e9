//! Queue ordering policies: which job a queue's turn tries next. A queue
//! orders its pending jobs one way, chosen once from its configuration:
//!
//! - first come, first served — by user priority, then arrival
//!   ([`arrival`], which jumps over the jobs of a bucket that failed);
//! - user-based fairshare — one job at a time from the share account with
//!   the highest dynamic priority (seed 002, [`fairshare`]);
//! - absolute priority scheduling — the pending jobs and resize requests
//!   of the APS queue and its QUEUE_GROUP by APS value (seed 001,
//!   [`aps`]); the other queues of the group have no turn of their own.
//!
//! [`QueueOrder`] is the closed set of them. The turn itself is one loop
//! ([`Cluster::serve`]): it asks the order for the next job, tries it
//! (`try_dispatch`, or `try_grow` for a resize request), writes a pending
//! job's reason, and tells the order what happened; the order says whether
//! the turn goes on.

mod aps;
mod arrival;
mod fairshare;

use mcfed_protocol::SimTime;

use crate::job::{JobId, QueueIndex};
use crate::scheduler::{Cluster, Transition};

pub(crate) use arrival::WalkBuffers;

use super::{Outcome, Turn};

/// The next job a turn tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Next {
    /// Its queue (in an APS group, not always the queue whose turn it is).
    pub(crate) queue: QueueIndex,
    pub(crate) job: JobId,
    /// A running job's resize request rather than a pending job.
    pub(crate) grow: bool,
}

impl Next {
    fn pending(queue: QueueIndex, job: JobId) -> Self {
        Next {
            queue,
            job,
            grow: false,
        }
    }
}

/// Whether a turn goes on after a try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Stop,
}

/// How a queue's turn orders its jobs (see the module documentation).
pub(crate) enum QueueOrder {
    Arrival(arrival::ArrivalOrder),
    Fairshare(fairshare::FairshareOrder),
    Aps(aps::ApsOrder),
}

impl QueueOrder {
    /// The order of `queue`'s turn at `now`, or `None` when the turn has
    /// nothing to try: no pending job or resize request, a queue stopped
    /// at once (its job limit or pool share, or full hosts it cannot
    /// preempt on), or a queue of an APS group (its jobs go in the APS
    /// queue's turn). A first-come-first-served or fairshare queue's
    /// resize requests go first, in arrival order.
    pub(crate) fn start(
        cluster: &mut Cluster,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) -> Option<QueueOrder> {
        match cluster.queues[queue].aps_group {
            Some(group) if cluster.queues.aps_group(group).parent == queue => {
                aps::ApsOrder::start(cluster, group, now).map(QueueOrder::Aps)
            }
            Some(_) => None,
            None => {
                if !cluster.open_for_turn(queue) {
                    return None;
                }
                if !cluster.queues[queue].resize_pending.is_empty() {
                    cluster.dispatch_resize_requests(queue, now, transitions);
                }
                Some(if cluster.queues[queue].fairshare.is_some() {
                    QueueOrder::Fairshare(fairshare::FairshareOrder::new(cluster, queue, now))
                } else {
                    QueueOrder::Arrival(arrival::ArrivalOrder::new(cluster, queue))
                })
            }
        }
    }

    fn next(&mut self, cluster: &Cluster) -> Option<Next> {
        match self {
            QueueOrder::Arrival(order) => order.next(cluster),
            QueueOrder::Fairshare(order) => order.next(cluster),
            QueueOrder::Aps(order) => order.next(cluster),
        }
    }

    /// The turn's state `next` is tried in.
    fn turn(&mut self, next: &Next) -> &mut Turn {
        match self {
            QueueOrder::Arrival(order) => order.turn(),
            QueueOrder::Fairshare(order) => order.turn(),
            QueueOrder::Aps(order) => order.turn(next),
        }
    }

    fn tried(&mut self, cluster: &mut Cluster, next: &Next, outcome: Outcome) -> Flow {
        match self {
            QueueOrder::Arrival(order) => order.tried(cluster, outcome),
            QueueOrder::Fairshare(order) => order.tried(cluster, outcome),
            QueueOrder::Aps(order) => order.tried(cluster, next, outcome),
        }
    }

    fn finish(self, cluster: &mut Cluster) {
        if let QueueOrder::Arrival(order) = self {
            order.finish(cluster);
        }
    }
}

impl Cluster {
    /// A queue's turn: every job its order gives, tried in turn, until the
    /// order says stop or has none left.
    pub(crate) fn serve(
        &mut self,
        mut order: QueueOrder,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        while let Some(next) = order.next(self) {
            let outcome = if next.grow {
                self.try_grow(next.queue, next.job, now, transitions)
            } else {
                let turn = order.turn(&next);
                self.try_dispatch(next.queue, next.job, now, transitions, turn)
            };
            if let (false, Outcome::Failed { reason, .. }) = (next.grow, outcome) {
                self.set_reason(next.job, reason);
            }
            if order.tried(self, &next, outcome) == Flow::Stop {
                break;
            }
        }
        order.finish(self);
    }
}

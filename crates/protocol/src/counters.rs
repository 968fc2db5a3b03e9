//! Per-queue counters and the counter update an execution cluster sends to
//! the submission clusters every `MC_PLUGIN_UPDATE_INTERVAL`.
//!
//! The figures follow seed `004_2db3e68d6519687c.txt`:
//! - *total slots*: slots on every host the queue dispatches to, counting
//!   hosts that are ok or closed only because they are full;
//! - *available slots*: the free slots among those;
//! - *running slots*: slots running jobs of this queue;
//! - *pending slots*: slots asked for by jobs pending in this queue;
//! - *preemptable available slots*: the slots the queue can reach through
//!   preemption, i.e. its available slots plus the slots held by running jobs
//!   it may preempt on its hosts.

use serde::{Deserialize, Serialize};

use crate::names::{ClusterName, QueueName};
use crate::time::SimTime;

/// Whether a receive queue takes one more forwarded job: it has room in
/// its imported pending-job backlog (IMPT_JOBBKLG, `None`: unbounded).
/// LSF's lsb.queues: once the limit is reached "the queue stops accepting
/// jobs from remote clusters" — whatever its free slots, since a job
/// accepted there may still pend. The one rule both sides use: the
/// receiver on the truth when a job arrives, the sender on its view of the
/// queue (a queue whose backlog is full is not a candidate, in any tier),
/// so a forward the sender believes welcome is refused only when its view
/// was stale. Seed 004's "free slots or space in the MultiCluster pending
/// job threshold" would let the sender pick a queue its receiver then
/// refuses; docs/forwarding.md says why mcfed does not.
pub fn takes_import(imported_pending_jobs: u32, impt_jobbklg: Option<u32>) -> bool {
    impt_jobbklg.is_none_or(|limit| imported_pending_jobs < limit)
}

/// The counters of one queue of an execution cluster, as computed by that
/// cluster from its own state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueCounters {
    /// The cluster that owns the queue.
    pub cluster: ClusterName,
    /// The queue's name.
    pub queue: QueueName,
    /// The queue's PRIORITY.
    pub priority: u32,
    /// Slots on all hosts the queue dispatches to.
    pub total_slots: u32,
    /// Free slots among `total_slots`.
    pub available_slots: u32,
    /// Slots running jobs from this queue.
    pub running_slots: u32,
    /// Slots asked for by jobs pending in this queue.
    pub pending_slots: u32,
    /// Slots the queue can reach through preemption (free slots included).
    pub preemptable_available_slots: u32,
    /// The PRIORITY of the lowest-priority queue whose running jobs this queue
    /// could preempt right now, or `None` when it can preempt nothing.
    pub lowest_preemptable_priority: Option<u32>,
    /// The queue's IMPT_JOBBKLG: how many imported jobs may pend in it
    /// (`None` is LSF's `infinit`).
    pub impt_jobbklg: Option<u32>,
    /// How many jobs forwarded from other clusters pend in the queue now.
    pub imported_pending_jobs: u32,
    /// The boolean resources offered by the queue's hosts (a queue offers a
    /// resource when any of its hosts has it, as LSF's submission cluster
    /// assumes).
    pub resources: Vec<String>,
}

impl QueueCounters {
    /// Whether the queue has room for one more imported pending job under its
    /// IMPT_JOBBKLG.
    pub fn has_backlog_room(&self) -> bool {
        self.impt_jobbklg
            .is_none_or(|limit| self.imported_pending_jobs < limit)
    }
}

/// The highest forward sequence number an execution cluster had received from
/// one submission cluster when it took a counter snapshot. Forwards with a
/// higher number are not yet reflected in the snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardWatermark {
    /// The submission cluster the forwards came from.
    pub submission_cluster: ClusterName,
    /// The sequence number of the last forward received from it (0: none).
    pub last_forward_seq: u64,
}

/// A snapshot of an execution cluster's queue counters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterUpdate {
    /// The execution cluster that took the snapshot.
    pub sender: ClusterName,
    /// Grows by one with every update the sender takes; a receiver ignores an
    /// update whose number is not above the last one it applied.
    pub seq: u64,
    /// The sender's emulated time when it took the snapshot.
    pub taken_at: SimTime,
    /// The counters of every queue of the sender that accepts forwarded jobs.
    pub queues: Vec<QueueCounters>,
    /// Per submission cluster, the last forwarded job the sender had received
    /// when it took the snapshot.
    pub forwards_received: Vec<ForwardWatermark>,
}

impl CounterUpdate {
    /// The last forward from `submission_cluster` reflected in this snapshot
    /// (0 when none was).
    pub fn last_forward_from(&self, submission_cluster: &ClusterName) -> u64 {
        self.forwards_received
            .iter()
            .find(|mark| &mark.submission_cluster == submission_cluster)
            .map_or(0, |mark| mark.last_forward_seq)
    }
}

#[cfg(test)]
mod import_rule_tests {
    use super::takes_import;

    #[test]
    fn only_room_in_the_backlog_takes_a_job() {
        assert!(takes_import(9, Some(10)));
        assert!(!takes_import(10, Some(10)));
        assert!(!takes_import(11, Some(10)));
        // No IMPT_JOBBKLG: always room.
        assert!(takes_import(1_000_000, None));
    }
}

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
//!   it may preempt now on its hosts, within the queue's own limits.
//!
//! Each queue also carries its *slot group*: queues of one cluster with the
//! same slot group draw on the same hosts' slots, so a job forwarded to one
//! of them takes free slots from all of them (docs/forwarding.md). The
//! static facts of a queue ([`QueueFacts`]: priority, total slots,
//! IMPT_JOBBKLG, resources, slot group) travel in the connection's hello,
//! so a submission cluster can forward before the first update.

use serde::{Deserialize, Serialize};

use crate::names::{ClusterName, QueueName};
use crate::time::SimTime;

/// Whether a receive queue takes one more forwarded job: the job starts
/// there at once (`starts_at_once`: free slots for it, or slots the queue
/// can reach through preemption), so it adds nothing to the imported
/// pending-job backlog, or the backlog has room (IMPT_JOBBKLG, `None`:
/// unbounded). Seed 004: the submission cluster "only forwards jobs to a
/// queue with free slots or space in the MultiCluster pending job
/// threshold", and when no queue has either, "the best queue is selected
/// based on the number of preemptable jobs" — a queue whose backlog is full
/// is still a candidate for a job it can start by preemption. LSF's
/// lsb.queues: once the limit is reached the queue stops accepting jobs
/// that would pend there. The one rule both sides use: the receiver on its
/// own figures when a job arrives, the sender on its view of the queue, so
/// a forward the sender believes welcome is refused only when its view was
/// stale (docs/forwarding.md).
pub fn takes_import(
    imported_pending_jobs: u32,
    impt_jobbklg: Option<u32>,
    starts_at_once: bool,
) -> bool {
    starts_at_once || impt_jobbklg.is_none_or(|limit| imported_pending_jobs < limit)
}

/// Whether a job of `slots` slots starts at once in a queue whose
/// preemptable available slots (free slots and slots reachable through
/// preemption, within the queue's own limits) are `preemptable_available`:
/// the test of [`takes_import`]'s `starts_at_once`, on either side.
pub fn starts_at_once(slots: u32, preemptable_available: u32) -> bool {
    preemptable_available >= slots
}

/// The static facts of a receive queue, known as soon as a connection is
/// made (sent in the hello): what a submission cluster forwards on before
/// the first counter update, and, when counters are never sent (no
/// MC_PLUGIN_UPDATE_INTERVAL, or a submission cluster that does not
/// collect them), for good.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueFacts {
    /// The queue's name.
    pub queue: QueueName,
    /// The queue's PRIORITY.
    pub priority: u32,
    /// Slots on all hosts the queue dispatches to.
    pub total_slots: u32,
    /// The queue's IMPT_JOBBKLG (`None` is LSF's `infinit`).
    pub impt_jobbklg: Option<u32>,
    /// The boolean resources offered by the queue's hosts.
    pub resources: Vec<String>,
    /// Queues of the cluster with the same slot group draw on the same
    /// slots.
    pub slot_group: u32,
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
    /// Queues of the cluster with the same slot group draw on the same
    /// slots (their hosts overlap).
    pub slot_group: u32,
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
    fn room_in_the_backlog_or_a_start_at_once_takes_a_job() {
        assert!(takes_import(9, Some(10), false));
        assert!(!takes_import(10, Some(10), false));
        assert!(!takes_import(11, Some(10), false));
        // A job that starts at once adds nothing to a full backlog.
        assert!(takes_import(10, Some(10), true));
        // No IMPT_JOBBKLG: always room.
        assert!(takes_import(1_000_000, None, false));
    }

    #[test]
    fn a_job_starts_at_once_on_its_queues_preemptable_available_slots() {
        use super::starts_at_once;
        assert!(starts_at_once(4, 4));
        assert!(starts_at_once(4, 6));
        assert!(!starts_at_once(4, 3));
    }
}

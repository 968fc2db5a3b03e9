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
//! of them takes free slots from all of them (docs/forwarding.md), and its
//! GPUs ([`GpuSlots`]): the slots of its hosts by how many GPUs they have,
//! and its free slots by how many GPUs are free there, so a job asking
//! for GPUs is filtered and scored on the slots it could use, as a job
//! without is on all of them (issue 27, item 5). The static facts of a
//! queue ([`QueueFacts`]: priority, total slots, IMPT_JOBBKLG, resources,
//! slot group, GPUs) travel in the connection's hello, so a submission
//! cluster can forward before the first update.

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

/// A queue's slots by the GPUs of the hosts they are on: entry `(g, s)`
/// says `s` slots are on hosts with at least `g` GPUs (in all, or free:
/// the counters carry both). Entries go by `g`, one per GPU count some
/// host has (hosts without GPUs are left out), so the slots a job asking
/// for `n` GPUs on each host can use are those of the first entry with
/// `g >= n` ([`GpuSlots::slots_for`]). A job takes its GPUs on every host
/// it runs on, so the slots of every host with enough GPUs are all usable
/// by it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GpuSlots {
    /// `(GPUs, slots on hosts with at least that many)`, by GPUs.
    pub by_gpus: Vec<(u32, u32)>,
}

impl GpuSlots {
    /// The table of hosts given as `(GPUs, slots)` pairs, in any order.
    pub fn from_hosts(hosts: impl IntoIterator<Item = (u32, u32)>) -> Self {
        let mut hosts: Vec<(u32, u32)> = hosts.into_iter().filter(|&(gpus, _)| gpus > 0).collect();
        if hosts.is_empty() {
            return GpuSlots::default();
        }
        hosts.sort_unstable();
        // Slots on hosts with at least `g` GPUs: a running sum from the top.
        let mut by_gpus: Vec<(u32, u32)> = Vec::new();
        let mut slots = 0u32;
        for &(gpus, host_slots) in hosts.iter().rev() {
            slots = slots.saturating_add(host_slots);
            match by_gpus.last_mut() {
                Some(last) if last.0 == gpus => last.1 = slots,
                _ => by_gpus.push((gpus, slots)),
            }
        }
        by_gpus.reverse();
        GpuSlots { by_gpus }
    }

    /// The slots on hosts with at least `gpus` GPUs (`gpus` 0: none are
    /// asked for, and this says nothing: `u32::MAX`).
    pub fn slots_for(&self, gpus: u32) -> u32 {
        if gpus == 0 {
            return u32::MAX;
        }
        self.by_gpus
            .iter()
            .find(|&&(g, _)| g >= gpus)
            .map_or(0, |&(_, slots)| slots)
    }

    /// `slots` of the listed slots are taken (by a job forwarded there,
    /// counted locally before the next update): each entry loses them, as
    /// the submission cluster cannot tell on which hosts.
    pub fn take(&mut self, slots: u32) {
        for entry in &mut self.by_gpus {
            entry.1 = entry.1.saturating_sub(slots);
        }
    }
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
    /// The queue's slots by the GPUs of their hosts (protocol 8).
    pub gpu_slots: GpuSlots,
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
    /// `total_slots` by the GPUs of their hosts (protocol 8).
    pub gpu_slots: GpuSlots,
    /// `available_slots` by the GPUs free on their hosts (protocol 8).
    pub gpu_free_slots: GpuSlots,
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
mod gpu_slots_tests {
    use super::GpuSlots;

    #[test]
    fn a_job_can_use_the_slots_of_hosts_with_as_many_gpus() {
        // Two 4-slot hosts with 2 GPUs, one 8-slot host with 4, one
        // 16-slot host without.
        let table = GpuSlots::from_hosts([(2, 4), (0, 16), (4, 8), (2, 4)]);
        assert_eq!(table.by_gpus, vec![(2, 16), (4, 8)]);
        assert_eq!(table.slots_for(1), 16);
        assert_eq!(table.slots_for(2), 16);
        assert_eq!(table.slots_for(3), 8);
        assert_eq!(table.slots_for(4), 8);
        assert_eq!(table.slots_for(5), 0);
        assert_eq!(table.slots_for(0), u32::MAX);
        assert_eq!(GpuSlots::from_hosts([(0, 8)]).slots_for(1), 0);
    }

    #[test]
    fn slots_taken_leave_every_entry() {
        let mut table = GpuSlots::from_hosts([(1, 4), (2, 2)]);
        table.take(3);
        assert_eq!(table.by_gpus, vec![(1, 3), (2, 0)]);
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

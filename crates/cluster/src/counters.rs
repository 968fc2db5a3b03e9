//! The per-queue counters a cluster computes from its own state, as seed
//! `004_2db3e68d6519687c.txt` defines them (see `mcfed_protocol::counters`),
//! the static facts of its receive queues sent in its hello, and whether a
//! forwarded job is taken (`mcfed_protocol::takes_import`, on the same
//! figures the counters report).

use mcfed_protocol::{QueueCounters, QueueFacts, SimTime};

use crate::job::QueueIndex;
use crate::scheduler::Cluster;

fn to_u32(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// What a queue can reach now: the slot figures of its counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reach {
    /// Free slots of its hosts.
    pub(crate) available: u64,
    /// Free slots plus the slots of running jobs it could preempt now on
    /// its hosts, capped by what its own QJOB_LIMIT leaves.
    pub(crate) preemptable: u64,
    /// The PRIORITY of the lowest-priority queue with such jobs.
    pub(crate) lowest_victim: Option<u32>,
}

impl Cluster {
    /// The slots queue `index` can reach at `now`, free and through
    /// preemption (seed 004's "preemptable available slots: the number of
    /// slots the queue can access through preemption"). Only jobs
    /// [`Cluster::preemptable_now`] says may be preempted count, and never
    /// more than the queue's QJOB_LIMIT leaves: a queue at its limit can
    /// access nothing. Victim queues without NO_PREEMPT_* guards cost O(1)
    /// each (their tallies are kept as jobs start and stop); a guarded
    /// victim queue costs O(its running jobs).
    pub(crate) fn reach(&self, index: QueueIndex, now: SimTime) -> Reach {
        let queue = &self.queues[index];
        let set = &self.hosts.sets[queue.host_set];
        let mut preemptable = set.free_slots;
        let mut lowest_victim: Option<u32> = None;
        for &victim in &queue.victims {
            let slots = self.preemptable_slots_of(index, victim, now);
            if slots > 0 {
                preemptable += slots;
                let priority = self.queues[victim].config.priority;
                lowest_victim = Some(lowest_victim.map_or(priority, |low| low.min(priority)));
            }
        }
        if let Some(limit) = queue.config.job_limit {
            preemptable = preemptable.min(u64::from(limit.saturating_sub(queue.held())));
            if preemptable <= set.free_slots {
                // The limit leaves nothing preemption could add.
                lowest_victim = None;
            }
        }
        Reach {
            available: set.free_slots,
            preemptable,
            lowest_victim,
        }
    }

    /// Slots running jobs of queue `victim` hold on the open hosts of
    /// queue `preemptor` that may be preempted at `now`.
    fn preemptable_slots_of(&self, preemptor: QueueIndex, victim: QueueIndex, now: SimTime) -> u64 {
        let tally = self.victim_slots.get(preemptor, victim);
        let victim_queue = &self.queues[victim];
        if tally == 0 || victim_queue.guards.is_empty() {
            return tally;
        }
        let host_set = self.queues[preemptor].host_set;
        victim_queue
            .running_order
            .iter()
            .filter_map(|&(_, std::cmp::Reverse(id))| self.jobs.get(id))
            .filter(|job| self.preemptable_now(job, now))
            .map(|job| u64::from(self.hosts.reachable_slots(host_set, &job.placement)))
            .sum()
    }

    /// The counters of the queue at `index`, from the cluster's current
    /// state at `now`. Costs O(number of queues), plus the running jobs of
    /// victim queues with NO_PREEMPT_* guards.
    pub fn queue_counters(&self, index: QueueIndex, now: SimTime) -> QueueCounters {
        let queue = &self.queues[index];
        let set = &self.hosts.sets[queue.host_set];
        let reach = self.reach(index, now);
        QueueCounters {
            cluster: self.name.clone(),
            queue: queue.config.name.clone(),
            priority: queue.config.priority,
            total_slots: to_u32(set.total_slots),
            available_slots: to_u32(reach.available),
            running_slots: queue.running_slots,
            pending_slots: queue.pending_slots,
            preemptable_available_slots: to_u32(reach.preemptable),
            lowest_preemptable_priority: reach.lowest_victim,
            impt_jobbklg: queue.config.impt_jobbklg,
            imported_pending_jobs: queue.imported_pending_jobs,
            resources: queue.resources.clone(),
            slot_group: self.hosts.slot_groups[queue.host_set],
        }
    }

    /// The static facts of every receive queue, for the hello.
    pub fn queue_facts(&self) -> Vec<QueueFacts> {
        self.receive_queues()
            .map(|index| {
                let queue = &self.queues[index];
                QueueFacts {
                    queue: queue.config.name.clone(),
                    priority: queue.config.priority,
                    total_slots: to_u32(self.hosts.sets[queue.host_set].total_slots),
                    impt_jobbklg: queue.config.impt_jobbklg,
                    resources: queue.resources.clone(),
                    slot_group: self.hosts.slot_groups[queue.host_set],
                }
            })
            .collect()
    }

    /// Whether queue `index` takes one more forwarded job of `slots` slots
    /// at `now` under IMPT_JOBBKLG ([`mcfed_protocol::takes_import`]): its
    /// backlog has room, or the job starts at once — judged on the figures
    /// its counters would report, less the slots already promised to jobs
    /// taken over a full backlog since the last dispatch pass.
    pub(crate) fn takes_import(&self, index: QueueIndex, slots: u32, now: SimTime) -> bool {
        let queue = &self.queues[index];
        if mcfed_protocol::takes_import(
            queue.imported_pending_jobs,
            queue.config.impt_jobbklg,
            false,
        ) {
            return true;
        }
        let reach = self.reach(index, now);
        let promised = u64::from(queue.promised_slots);
        mcfed_protocol::starts_at_once(slots, to_u32(reach.preemptable.saturating_sub(promised)))
    }

    /// Indices of the queues that receive forwarded jobs (RCVJOBS_FROM set).
    pub fn receive_queues(&self) -> impl Iterator<Item = QueueIndex> + '_ {
        self.queues
            .iter()
            .enumerate()
            .filter(|(_, queue)| queue.config.receive_from.is_some())
            .map(|(index, _)| index)
    }

    /// Slots held by running and suspended jobs of the queue at `index`, and
    /// slots asked for by its pending jobs: `(running, suspended, pending)`.
    pub fn queue_slot_usage(&self, index: QueueIndex) -> (u32, u32, u32) {
        let queue = &self.queues[index];
        (
            queue.running_slots,
            queue.suspended_slots,
            queue.pending_slots,
        )
    }
}

impl Cluster {
    /// Slots in use by running jobs and slots on open hosts, over the whole
    /// cluster: `(in_use, total)`. Costs O(hosts).
    pub fn slot_usage(&self) -> (u64, u64) {
        self.hosts
            .iter()
            .filter(|host| !host.config.closed)
            .fold((0, 0), |(used, total), host| {
                (
                    used + u64::from(host.used),
                    total + u64::from(host.config.max_slots),
                )
            })
    }

    /// Receive queues holding more imported pending jobs than their
    /// IMPT_JOBBKLG (there should never be any).
    pub fn backlog_overflows(&self) -> usize {
        self.queues
            .iter()
            .filter(|queue| {
                queue.config.receive_from.is_some()
                    && queue
                        .config
                        .impt_jobbklg
                        .is_some_and(|limit| queue.imported_pending_jobs > limit)
            })
            .count()
    }
}

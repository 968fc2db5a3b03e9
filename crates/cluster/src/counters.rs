//! The per-queue counters a cluster computes from its own state, as seed
//! `004_2db3e68d6519687c.txt` defines them (see `mcfed_protocol::counters`).

use mcfed_protocol::QueueCounters;

use crate::job::QueueIndex;
use crate::scheduler::Cluster;

fn to_u32(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

impl Cluster {
    /// The counters of the queue at `index`, from the cluster's current
    /// state. Costs O(number of queues).
    pub fn queue_counters(&self, index: QueueIndex) -> QueueCounters {
        let queue = &self.queues[index];
        let set = &self.hosts.sets[queue.host_set];
        let mut preemptable = set.free_slots;
        let mut lowest_victim: Option<u32> = None;
        for &victim in &queue.victims {
            let slots = self.victim_slots.get(index, victim);
            if slots > 0 {
                preemptable += slots;
                let priority = self.queues[victim].config.priority;
                lowest_victim = Some(lowest_victim.map_or(priority, |low| low.min(priority)));
            }
        }
        QueueCounters {
            cluster: self.name.clone(),
            queue: queue.config.name.clone(),
            priority: queue.config.priority,
            total_slots: to_u32(set.total_slots),
            available_slots: to_u32(set.free_slots),
            running_slots: queue.running_slots,
            pending_slots: queue.pending_slots,
            preemptable_available_slots: to_u32(preemptable),
            lowest_preemptable_priority: lowest_victim,
            impt_jobbklg: queue.config.impt_jobbklg,
            imported_pending_jobs: queue.imported_pending_jobs,
            resources: queue.resources.clone(),
        }
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

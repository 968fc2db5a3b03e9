//! The per-queue counters a cluster computes from its own state, as seed
//! `004_2db3e68d6519687c.txt` defines them (see `mcfed_protocol::counters`),
//! the static facts of its receive queues sent in its hello, and whether a
//! forwarded job is taken (`mcfed_protocol::takes_import`, on the same
//! figures the counters report).

use mcfed_protocol::{GpuSlots, QueueCounters, QueueFacts, SimTime};

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
    /// preemption: seed 004's "preemptable available slots: the number of
    /// slots the queue can access through preemption", as a job forwarded
    /// there could actually use them (issue 27, item 6; seed 003: limits
    /// set on a queue count its running and suspended jobs, so suspending
    /// another queue's jobs frees nothing under them). Counted:
    ///
    /// * the free slots of its open hosts and the slots of running jobs it
    ///   may preempt there now ([`Cluster::preemptable_now`]: NO_PREEMPT_*
    ///   guards);
    /// * but no host held by a slot reservation (SLOT_RESERVE) that a job
    ///   arriving in the queue now would have to respect (of a queue
    ///   dispatched earlier, or of this queue): the dispatch places such a
    ///   job on none of its hosts;
    /// * on each host, no more than HJOB_LIMIT leaves the queue there;
    /// * in all, no more than QJOB_LIMIT leaves the queue, and no more
    ///   than UJOB_LIMIT and the MAX_JOBS of lsb.users' `default` give a
    ///   user with no job there (a forwarded job's user, as far as the
    ///   queue can tell).
    ///
    /// The lowest victim priority is that of the victims counted, and none
    /// when the limits leave nothing preemption could add. A queue without
    /// HJOB_LIMIT or such reservations costs O(its victim queues) (their
    /// tallies are kept as jobs start and stop; a guarded victim queue
    /// costs O(its running jobs)); with them, O(its hosts' jobs).
    pub(crate) fn reach(&self, index: QueueIndex, now: SimTime) -> Reach {
        let queue = &self.queues[index];
        let set = self.hosts.set(queue.host_set);
        let reserved = self.reserved_host_sets(index);
        let (usable_free, mut preemptable, mut lowest_victim) =
            if queue.config.host_job_limit.is_some() || !reserved.is_empty() {
                self.reach_by_host(index, now, &reserved)
            } else {
                self.reach_by_queue(index, now)
            };
        let caps = [
            queue
                .config
                .job_limit
                .map(|limit| limit.saturating_sub(queue.held())),
            queue.config.user_job_limit,
            self.users.default_limits().max_jobs,
        ];
        for cap in caps.into_iter().flatten() {
            preemptable = preemptable.min(u64::from(cap));
        }
        if preemptable <= usable_free {
            // The limits leave nothing preemption could add.
            lowest_victim = None;
        }
        // Seed 004: "When an advance reservation is active on a remote
        // cluster, slots within the advance reservation are excluded from
        // the number of available slots."
        let advance = self.advance_held_on(&set.members, now);
        Reach {
            available: set.free_slots.saturating_sub(advance),
            preemptable: preemptable.saturating_sub(advance),
            lowest_victim,
        }
    }

    /// `(free slots, free and preemptable slots, lowest victim priority)`
    /// of queue `index` over its whole host set, from the victim tallies.
    fn reach_by_queue(&self, index: QueueIndex, now: SimTime) -> (u64, u64, Option<u32>) {
        let queue = &self.queues[index];
        let free = self.hosts.set(queue.host_set).free_slots;
        let mut preemptable = free;
        let mut lowest_victim: Option<u32> = None;
        for &victim in &queue.victims {
            let slots = self.preemptable_slots_of(index, victim, now);
            if slots > 0 {
                preemptable += slots;
                let priority = self.queues[victim].config.priority;
                lowest_victim = Some(lowest_victim.map_or(priority, |low| low.min(priority)));
            }
        }
        (free, preemptable, lowest_victim)
    }

    /// The same, host by host: hosts held by `reserved` host sets left
    /// out, each host's slots capped by what HJOB_LIMIT leaves the queue
    /// there.
    fn reach_by_host(
        &self,
        index: QueueIndex,
        now: SimTime,
        reserved: &[usize],
    ) -> (u64, u64, Option<u32>) {
        let queue = &self.queues[index];
        let (mut usable_free, mut preemptable) = (0u64, 0u64);
        let mut lowest_victim: Option<u32> = None;
        for &host in &self.hosts.set(queue.host_set).members {
            let state = &self.hosts[host];
            if state.config.closed
                || reserved
                    .iter()
                    .any(|&set| self.hosts.set(set).contains(host))
            {
                continue;
            }
            let room = queue.config.host_job_limit.map_or(u32::MAX, |limit| {
                limit.saturating_sub(self.tallies.queue_held(host, index))
            });
            let free = state.free().min(room);
            let mut victims = 0u32;
            let mut lowest_here: Option<u32> = None;
            for job in state.jobs.iter().filter_map(|&id| self.jobs.get(id)) {
                if queue.victims.contains(&job.queue) && self.preemptable_now(job, now) {
                    victims += job
                        .placement
                        .iter()
                        .filter(|place| place.host == host)
                        .map(|place| place.slots)
                        .sum::<u32>();
                    let priority = self.queues[job.queue].config.priority;
                    lowest_here = Some(lowest_here.map_or(priority, |low| low.min(priority)));
                }
            }
            let usable = state.free().saturating_add(victims).min(room);
            if usable > free {
                if let Some(priority) = lowest_here {
                    lowest_victim = Some(lowest_victim.map_or(priority, |low| low.min(priority)));
                }
            }
            usable_free += u64::from(free);
            preemptable += u64::from(usable);
        }
        (usable_free, preemptable, lowest_victim)
    }

    /// The host sets a job arriving in queue `index` now could not use for
    /// slot reservations (SLOT_RESERVE): those of such queues dispatched
    /// before it, or of its own (it would come after their jobs), with a
    /// pending parallel job — which holds a reservation there, or makes one
    /// in the next pass (a settled cluster's pending jobs do not fit). A
    /// forwarded job's run limit is not known here, so it is not counted on
    /// to backfill. Costs O(queues).
    fn reserved_host_sets(&self, index: QueueIndex) -> Vec<usize> {
        let position = self.queues.order_positions();
        self.queues
            .iter()
            .enumerate()
            .filter(|(other, queue)| {
                queue.config.slot_reserve.is_some()
                    // Some pending job asks for two slots or more.
                    && queue.pending_slots as usize > queue.pending.len()
                    && (*other == index || position[index] > position[*other])
            })
            .map(|(_, queue)| queue.host_set)
            .collect()
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

    /// The slots of queue `index`'s open hosts by their GPUs, and its free
    /// slots by the GPUs free on their hosts (seed 004's total and
    /// available slots, as a job asking for GPUs on each host can use
    /// them). Costs O(the queue's hosts with GPUs): nothing for a queue
    /// without.
    fn gpu_slots(&self, index: QueueIndex) -> (GpuSlots, GpuSlots) {
        let hosts = &self.queues[index].gpu_hosts;
        if hosts.is_empty() {
            return (GpuSlots::default(), GpuSlots::default());
        }
        let open = || {
            hosts
                .iter()
                .map(|&host| &self.hosts[host])
                .filter(|host| !host.config.closed)
        };
        let total =
            GpuSlots::from_hosts(open().map(|host| (host.config.gpus, host.config.max_slots)));
        let free = GpuSlots::from_hosts(
            open().map(|host| (host.config.gpus.saturating_sub(host.used_gpus), host.free())),
        );
        (total, free)
    }

    /// The counters of the queue at `index`, from the cluster's current
    /// state at `now`. Costs O(number of queues), plus the running jobs of
    /// victim queues with NO_PREEMPT_* guards.
    pub fn queue_counters(&self, index: QueueIndex, now: SimTime) -> QueueCounters {
        let queue = &self.queues[index];
        let set = self.hosts.set(queue.host_set);
        let reach = self.reach(index, now);
        let (gpu_slots, gpu_free_slots) = self.gpu_slots(index);
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
            slot_group: self.hosts.slot_group(queue.host_set),
            gpu_slots,
            gpu_free_slots,
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
                    total_slots: to_u32(self.hosts.set(queue.host_set).total_slots),
                    impt_jobbklg: queue.config.impt_jobbklg,
                    resources: queue.resources.clone(),
                    slot_group: self.hosts.slot_group(queue.host_set),
                    gpu_slots: self.gpu_slots(index).0,
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

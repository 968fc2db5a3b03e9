//! Slot reservation and backfill (SLOT_RESERVE, BACKFILL; docs/scheduling.md,
//! "Slot reservation, backfill, and their preemption"): a parallel job that
//! finds too few free slots holds the free slots of its hosts for
//! MAX_RESERVE_TIME cycles; jobs served after it cannot take them, except
//! backfill jobs whose run limit ends before the reserving job's predicted
//! start (but not in a pool queue with MAX_SLOTS_IN_POOL, SLOT_RESERVE and
//! BACKFILL, whose jobs may not backfill its own reservations, seed 000).
//! A reservation that expires may not be renewed in the next pass.

use mcfed_protocol::SimTime;

use crate::job::{ARRIVAL_MASK, JobId, JobState, QueueIndex, UserId};
use crate::scheduler::Cluster;

/// A pending job holding the free slots of its hosts (SLOT_RESERVE).
#[derive(Clone, Debug)]
pub(crate) struct Reservation {
    pub(crate) job: JobId,
    pub(crate) queue: QueueIndex,
    pub(crate) arrival: u64,
    pub(crate) host_set: usize,
    pub(crate) slots: u32,
    pub(crate) expires_at: SimTime,
    /// When the job could start as running jobs reach their run limits, as
    /// of the current pass (`None`: cannot tell, some job has no limit).
    pub(crate) predicted_start: Option<SimTime>,
}

impl Cluster {
    /// Ends the reservations that expired by `now`; their jobs may not
    /// reserve again in the next pass.
    pub(crate) fn expire_reservations(&mut self, now: SimTime) {
        if self.reservations.iter().all(|r| r.expires_at > now) {
            return;
        }
        let pass = self.cycle.pass;
        let mut kept = Vec::with_capacity(self.reservations.len());
        for reservation in std::mem::take(&mut self.reservations) {
            if reservation.expires_at <= now {
                tracing::debug!(cluster = %self.name, job = %reservation.job, "slot reservation expired");
                // It may not reserve again in the next scheduling session.
                self.queues[reservation.queue].reserve_cooldown = Some((reservation.job, pass + 1));
                self.cycle.dirty = true;
            } else {
                kept.push(reservation);
            }
        }
        self.reservations = kept;
        self.cycle.version += 1;
    }

    /// The free slots reservations of `queue` hold now — of `user`'s jobs
    /// only, when given (the fairshare formula's reserved job slots).
    pub(crate) fn reserved_slots(&self, queue: QueueIndex, user: Option<UserId>) -> u32 {
        if self.reservations.is_empty() {
            return 0;
        }
        self.reservations
            .iter()
            .filter(|reservation| reservation.queue == queue)
            .filter(|reservation| {
                user.is_none_or(|user| {
                    self.jobs
                        .get(reservation.job)
                        .is_some_and(|job| job.user == user)
                })
            })
            .map(|reservation| {
                let free = self.hosts.sets[reservation.host_set].free_slots;
                u32::try_from(free.min(u64::from(reservation.slots))).unwrap_or(u32::MAX)
            })
            .sum()
    }

    /// The free slots slot reservations hold on each host, in
    /// configuration order (`bhosts`' RSV column; they add up to the
    /// queues' RSV of `bqueues`): each reservation
    /// takes, up to its job's slots, the free slots of its hosts, the
    /// hosts with most free slots first (where its job would go), after
    /// the reservations made before it.
    pub fn reserved_slots_by_host(&self) -> Vec<u32> {
        let mut held = vec![0u32; self.hosts.len()];
        for reservation in &self.reservations {
            let mut left = reservation.slots;
            for (host, free) in self.hosts.sets[reservation.host_set].hosts_with_free_slots() {
                if left == 0 {
                    break;
                }
                let take = free.saturating_sub(held[host]).min(left);
                held[host] += take;
                left -= take;
            }
        }
        held
    }

    /// Ends job `id`'s reservation, if it has one.
    pub(crate) fn drop_reservation_of(&mut self, id: JobId) {
        let before = self.reservations.len();
        self.reservations
            .retain(|reservation| reservation.job != id);
        if self.reservations.len() != before {
            self.cycle.version += 1;
        }
    }

    /// Reservations that hold job `id` back, unless it may backfill them:
    /// those of queues served before its queue, and those of its own queue
    /// made by a job submitted before it. Seed 001: "The APS value does not
    /// affect current resource reservation policy" — so a later job that
    /// an APS value, or a higher user priority (`bsub -sp`), puts ahead of
    /// the reserving job in the queue's order does not take its slots
    /// either (issue 27 item 3).
    pub(crate) fn binding_reservations(
        &self,
        queue: QueueIndex,
        id: JobId,
        now: SimTime,
    ) -> Vec<usize> {
        let Some(job) = self.jobs.get(id) else {
            return Vec::new();
        };
        let state = &self.queues[queue];
        self.reservations
            .iter()
            .enumerate()
            .filter(|(_, reservation)| {
                let submitted_later =
                    job.arrival & ARRIVAL_MASK > reservation.arrival & ARRIVAL_MASK;
                let after = self.queues.order_position[queue]
                    > self.queues.order_position[reservation.queue]
                    || (queue == reservation.queue && submitted_later);
                let backfills = state.config.backfill
                    && !(queue == reservation.queue && self.no_backfill_in_own_reservations(queue))
                    && job.spec.run_limit.is_some_and(|limit| {
                        reservation
                            .predicted_start
                            .is_some_and(|start| now + limit <= start)
                    });
                reservation.job != id && after && !backfills
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// Seed 000: "When MAX_SLOTS_IN_POOL, SLOT_RESERVE, and BACKFILL are
    /// defined (in lsb.queues) for the same queue, jobs in the queue cannot
    /// backfill using slots reserved by other jobs in the same queue."
    /// MAX_SLOTS_IN_POOL is read from a pool's first queue, so it counts as
    /// defined for every queue of a pool that has it.
    fn no_backfill_in_own_reservations(&self, queue: QueueIndex) -> bool {
        let state = &self.queues[queue];
        state.config.backfill
            && state.config.slot_reserve.is_some()
            && state
                .pool
                .is_some_and(|pool| self.queues.pools[pool].max_slots.is_some())
    }

    /// SLOT_RESERVE: a parallel job that found too few free slots holds
    /// the free slots of its hosts for MAX_RESERVE_TIME cycles, so later
    /// jobs (bar backfill jobs that finish in time) cannot take them.
    pub(crate) fn reserve_slots(&mut self, queue: QueueIndex, id: JobId, now: SimTime) {
        let state = &self.queues[queue];
        let Some(cycles) = state.config.slot_reserve else {
            return;
        };
        let Some(job) = self.jobs.get(id) else {
            return;
        };
        let cooling = state
            .reserve_cooldown
            .is_some_and(|(job, until)| job == id && self.cycle.pass <= until);
        if job.spec.slots < 2
            || cooling
            || self
                .reservations
                .iter()
                .any(|r| r.queue == queue || r.job == id)
        {
            return;
        }
        let mut reservation = Reservation {
            job: id,
            queue,
            arrival: job.arrival,
            host_set: state.host_set,
            slots: job.spec.slots,
            expires_at: now + self.policy.sleep_time * cycles,
            predicted_start: None,
        };
        reservation.predicted_start = self.predicted_start(&reservation, now);
        tracing::debug!(cluster = %self.name, job = %id, until = %reservation.expires_at, "slots reserved");
        self.reservations.push(reservation);
        self.cycle.version += 1;
    }

    /// Predicts every reservation's start as of `now`.
    pub(crate) fn predict_reservations(&mut self, now: SimTime) {
        for index in 0..self.reservations.len() {
            let start = self.predicted_start(&self.reservations[index], now);
            self.reservations[index].predicted_start = start;
        }
    }

    /// When enough slots of the reservation's hosts will be free, counting
    /// running jobs as ending at their run limits; `None` when a job without
    /// a run limit stands in the way.
    fn predicted_start(&self, reservation: &Reservation, now: SimTime) -> Option<SimTime> {
        let set = &self.hosts.sets[reservation.host_set];
        let mut free = set.free_slots;
        let needed = u64::from(reservation.slots);
        if free >= needed {
            return Some(now);
        }
        let mut ends: Vec<(SimTime, u32)> = Vec::new();
        for &host in &set.members {
            if self.hosts[host].config.closed {
                continue;
            }
            for job in &self.hosts[host].jobs {
                let Some(job) = self.jobs.get(*job).filter(|j| j.state == JobState::Running) else {
                    continue;
                };
                let slots = job
                    .placement
                    .iter()
                    .filter(|place| place.host == host)
                    .map(|place| place.slots)
                    .sum();
                let end = job.spec.run_limit.map_or(SimTime::MAX, |limit| {
                    job.running_since + limit.saturating_sub(job.ran_before())
                });
                ends.push((end, slots));
            }
        }
        ends.sort_unstable();
        for (end, slots) in ends {
            if end == SimTime::MAX {
                return None;
            }
            free += u64::from(slots);
            if free >= needed {
                return Some(end.max(now));
            }
        }
        None
    }
}

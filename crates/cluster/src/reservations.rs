//! Slot reservation and backfill (SLOT_RESERVE, BACKFILL; docs/scheduling.md,
//! "Slot reservation, backfill, and their preemption"): a parallel job that
//! finds too few free slots holds the free slots of its hosts for
//! MAX_RESERVE_TIME cycles; jobs served after it cannot take them, except
//! backfill jobs whose run limit ends before the reserving job's predicted
//! start (but not in a pool queue with MAX_SLOTS_IN_POOL, SLOT_RESERVE and
//! BACKFILL, whose jobs may not backfill its own reservations, seed 000).
//! A reservation that expires may not be renewed in the next pass.
//!
//! A parallel job of a pool queue that its queue's share holds back
//! reserves too (issue 27 item 2): it holds the room its queue's running
//! jobs free in the share, against the later jobs of its own queue only
//! (the other queues of the pool have their own shares).

use mcfed_protocol::SimTime;

use crate::job::{ARRIVAL_MASK, HostIndex, Job, JobId, JobState, QueueIndex, UserId};
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
    /// Made (last) because the job's queue had used its share of its slot
    /// pool, not for want of free slots: it holds the free slots within
    /// that share, and binds only the queue's own later jobs.
    pub(crate) by_share: bool,
}

/// A slot reservation as tests and tools see it ([`Cluster::slot_reservations`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotReservationView {
    /// The pending job holding the slots.
    pub job: JobId,
    /// Its queue.
    pub queue: QueueIndex,
    /// When it lapses.
    pub expires_at: SimTime,
    /// Its job's predicted start as of the last pass (`None`: unknown).
    pub predicted_start: Option<SimTime>,
}

impl Cluster {
    /// The slot reservations held now (SLOT_RESERVE), in the order made.
    pub fn slot_reservations(&self) -> Vec<SlotReservationView> {
        self.reservations
            .iter()
            .map(|reservation| SlotReservationView {
                job: reservation.job,
                queue: reservation.queue,
                expires_at: reservation.expires_at,
                predicted_start: reservation.predicted_start,
            })
            .collect()
    }

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
            .map(|reservation| self.held_slots(reservation))
            .sum()
    }

    /// The free slots `reservation` holds now: up to its job's slots of the
    /// free slots of its hosts — and, for one made by its queue's share,
    /// no more than the share (and its pool's total) leaves the queue.
    fn held_slots(&self, reservation: &Reservation) -> u32 {
        let free = self.hosts.set(reservation.host_set).free_slots;
        let held = u32::try_from(free.min(u64::from(reservation.slots))).unwrap_or(u32::MAX);
        if !reservation.by_share {
            return held;
        }
        let queue = &self.queues[reservation.queue];
        let pool_room = queue.pool.map_or(u32::MAX, |pool| {
            let pool = self.queues.pool(pool);
            pool.total.saturating_sub(pool.running)
        });
        held.min(queue.deserved.saturating_sub(queue.running_slots))
            .min(pool_room)
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
            let mut left = self.held_slots(reservation);
            for (host, free) in self.hosts.set(reservation.host_set).hosts_with_free_slots() {
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
    /// either (issue 27 item 3). One made by its queue's pool share binds
    /// the jobs of that queue only.
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
                let after = (self.queues.order_position(queue)
                    > self.queues.order_position(reservation.queue)
                    && !reservation.by_share)
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
                .is_some_and(|pool| self.queues.pool(pool).max_slots.is_some())
    }

    /// SLOT_RESERVE: a parallel job that found too few free slots holds
    /// the free slots of its hosts for MAX_RESERVE_TIME cycles, so later
    /// jobs (bar backfill jobs that finish in time) cannot take them. With
    /// `by_share`, its queue's share of its slot pool held it back
    /// instead: it holds what its queue's jobs free within the share,
    /// against the queue's later jobs. A job that already holds a
    /// reservation keeps it, now for the reason given.
    pub(crate) fn reserve_slots(
        &mut self,
        queue: QueueIndex,
        id: JobId,
        now: SimTime,
        by_share: bool,
    ) {
        if let Some(index) = self.reservations.iter().position(|r| r.job == id) {
            if self.reservations[index].by_share != by_share {
                self.reservations[index].by_share = by_share;
                let start = self.predicted_start(&self.reservations[index], now);
                self.reservations[index].predicted_start = start;
                self.cycle.version += 1;
            }
            return;
        }
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
            || !self.fits_when_empty(queue, id)
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
            by_share,
        };
        reservation.predicted_start = self.predicted_start(&reservation, now);
        tracing::debug!(cluster = %self.name, job = %id, until = %reservation.expires_at, "slots reserved");
        self.reservations.push(reservation);
        self.cycle.version += 1;
    }

    /// Whether a turn of pool queue `queue`, at its share, should still
    /// try its first job: a SLOT_RESERVE queue with a pending parallel job
    /// and no reservation yet, whose first job may reserve by its share.
    pub(crate) fn may_reserve_by_share(&self, queue: QueueIndex) -> bool {
        let state = &self.queues[queue];
        state.config.slot_reserve.is_some()
            && state.pending_slots as usize > state.pending.len()
            && !self.reservations.iter().any(|r| r.queue == queue)
    }

    /// Whether job `id` would fit in `queue` with nothing running: within
    /// QJOB_LIMIT, UJOB_LIMIT and its pool's MAX_SLOTS_IN_POOL, on the open
    /// hosts with its resources and GPUs, their slots capped by HJOB_LIMIT
    /// and JL/U. A job that never fits does not reserve: its reservation
    /// would hold slots, lapse and be made again for ever.
    fn fits_when_empty(&self, queue: QueueIndex, id: JobId) -> bool {
        let Some(job) = self.jobs.get(id) else {
            return false;
        };
        let state = &self.queues[queue];
        let pool_max = state.pool.and_then(|pool| self.queues.pool(pool).max_slots);
        let queue_cap = [
            state.config.job_limit,
            state.config.user_job_limit,
            pool_max,
        ]
        .into_iter()
        .flatten()
        .min();
        if queue_cap.is_some_and(|cap| cap < job.spec.slots) {
            return false;
        }
        let mut room = 0u32;
        for &host in &self.hosts.set(state.host_set).members {
            let host = &self.hosts[host];
            if host.config.closed
                || !host.has_resources(&job.spec.resources)
                || host.config.gpus < job.spec.gpus
            {
                continue;
            }
            let slots = [state.config.host_job_limit, host.config.user_slot_limit]
                .into_iter()
                .flatten()
                .fold(host.config.max_slots, u32::min);
            room = room.saturating_add(slots);
            if room >= job.spec.slots {
                return true;
            }
        }
        false
    }

    /// Predicts every reservation's start as of `now`.
    pub(crate) fn predict_reservations(&mut self, now: SimTime) {
        for index in 0..self.reservations.len() {
            let start = self.predicted_start(&self.reservations[index], now);
            self.reservations[index].predicted_start = start;
        }
    }

    /// When enough slots of the reservation's hosts will be free — and, for
    /// one made by its queue's share, enough of the share — counting
    /// running jobs as ending at their run limits; `None` when a job without
    /// a run limit stands in the way.
    /// With advance reservations, the slots they will hold are left out
    /// (`Cluster::predicted_start_with_advance`).
    fn predicted_start(&self, reservation: &Reservation, now: SimTime) -> Option<SimTime> {
        let set = self.hosts.set(reservation.host_set);
        let mut free = set.free_slots;
        let needed = u64::from(reservation.slots);
        let state = &self.queues[reservation.queue];
        let mut room = if reservation.by_share {
            u64::from(state.deserved.saturating_sub(state.running_slots))
        } else {
            u64::MAX
        };
        if !self.advance.is_empty() {
            return self.predicted_start_with_advance(reservation, now, room);
        }
        if free >= needed && room >= needed {
            return Some(now);
        }
        let mut ends: Vec<(SimTime, u32, bool)> = Vec::new();
        self.each_running_on(&set.members, |job, _, slots| {
            let end = job.spec.run_limit.map_or(SimTime::MAX, |limit| {
                job.running_since + limit.saturating_sub(job.ran_before())
            });
            ends.push((end, slots, job.queue == reservation.queue));
        });
        ends.sort_unstable();
        for (end, slots, own) in ends {
            if end == SimTime::MAX {
                return None;
            }
            free += u64::from(slots);
            if own {
                room = room.saturating_add(u64::from(slots));
            }
            if free >= needed && room >= needed {
                return Some(end.max(now));
            }
        }
        None
    }

    /// Calls `each(job, host, slots)` for every running job on the open
    /// hosts of `members`, once per host it runs on, with its slots there.
    #[inline]
    pub(crate) fn each_running_on(
        &self,
        members: &[HostIndex],
        mut each: impl FnMut(&Job, HostIndex, u32),
    ) {
        for &host in members {
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
                each(job, host, slots);
            }
        }
    }
}

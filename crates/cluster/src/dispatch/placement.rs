//! Where a job goes: the free slots of its queue's hosts, least-loaded
//! hosts first, within every host-level limit and outside the slots others
//! have reserved.

use mcfed_protocol::SimTime;

use crate::advance::ReservationBounds;
use crate::job::{HostIndex, Job, JobId, PendingReason, Placement, QueueIndex};
use crate::scheduler::Cluster;

/// How to look for a placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlaceMode {
    /// Free slots, every limit, slot reservations.
    Normal,
    /// A job starting by preemption: reservations do not hold it back.
    Preempting,
    /// An upper bound for preemption: every slot of a host counts as free,
    /// and limits that ignore suspended jobs do not count; if this fails,
    /// no preemption can help.
    Optimistic,
}

/// Why no placement was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlacementFailure {
    pub(crate) reason: PendingReason,
    /// Only the lack of free slots stood in the way (no limit, no
    /// reservation): any job as large fails too.
    pub(crate) slots_alone: bool,
}

impl PlacementFailure {
    /// Not enough free slots, and nothing else in the way.
    const SHORTAGE: PlacementFailure = PlacementFailure {
        reason: PendingReason::NotEnoughSlots,
        slots_alone: true,
    };

    /// Held back by `reason`, a limit or a reservation.
    fn blocked(reason: PendingReason) -> Self {
        PlacementFailure {
            reason,
            slots_alone: false,
        }
    }
}

/// One search for a job's placement.
struct Search<'a> {
    job: &'a Job,
    queue: QueueIndex,
    /// Reservations that hold the job back (indices).
    binding: &'a [usize],
    mode: PlaceMode,
    /// Some host-level limit is configured.
    check_limits: bool,
    /// What advance reservations allow the job.
    advance: ReservationBounds,
    /// They take none of any host's free slots from it (read once rather
    /// than the bounds on every host).
    advance_takes_nothing: bool,
}

impl Cluster {
    /// Free slots for job `id` on its queue's hosts, least-loaded hosts
    /// (most free slots) first, or why there are not enough.
    pub(crate) fn find_placement(
        &self,
        queue: QueueIndex,
        id: JobId,
        now: SimTime,
        mode: PlaceMode,
    ) -> Result<Vec<Placement>, PlacementFailure> {
        let Some(job) = self.jobs.get(id) else {
            return Err(PlacementFailure::SHORTAGE);
        };
        self.find_placement_of(queue, job, now, mode)
    }

    /// [`Cluster::find_placement`] for a job the caller holds already (the
    /// pass tries several a job, and each would look it up again).
    pub(crate) fn find_placement_of(
        &self,
        queue: QueueIndex,
        job: &Job,
        now: SimTime,
        mode: PlaceMode,
    ) -> Result<Vec<Placement>, PlacementFailure> {
        let id = job.id;
        let host_set = self.queues[queue].host_set;
        let set = self.hosts.set(host_set);
        let binding = if mode == PlaceMode::Normal && !self.reservations.is_empty() {
            self.binding_reservations(queue, id, now)
        } else {
            Vec::new()
        };
        if binding
            .iter()
            .any(|&r| self.reservations[r].host_set == host_set)
        {
            return Err(PlacementFailure::blocked(PendingReason::SlotsReserved));
        }
        // A job asking for no resources names no advance reservation, so
        // only a shortage can refuse it before the reservations' bounds.
        let mut needed = job.spec.slots;
        let plain = job.spec.resources.is_empty();
        if mode != PlaceMode::Optimistic && plain && set.free_slots < u64::from(needed) {
            return Err(PlacementFailure::SHORTAGE);
        }
        let advance = self.reservation_bounds(job, now);
        match &advance {
            ReservationBounds::Closed => {
                return Err(PlacementFailure::blocked(
                    PendingReason::AdvanceReservationUnavailable,
                ));
            }
            ReservationBounds::Missing => {
                return Err(PlacementFailure::blocked(
                    PendingReason::AdvanceReservationMissing,
                ));
            }
            ReservationBounds::Within { budget, .. } if *budget < job.spec.slots => {
                return Err(PlacementFailure::blocked(
                    PendingReason::AdvanceReservationUnavailable,
                ));
            }
            _ => {}
        }
        let optimistic = mode == PlaceMode::Optimistic;
        let search = Search {
            job,
            queue,
            binding: &binding,
            mode,
            check_limits: self.tallies.tracking().any_host_limit() || !self.limit_book.is_empty(),
            advance_takes_nothing: !matches!(
                advance,
                ReservationBounds::Held(_) | ReservationBounds::Within { .. }
            ),
            advance,
        };
        // Limit sections counting hosts together: what each lets the job
        // take on its hosts, spent as the job is placed.
        let mut budgets = self.host_group_budgets(queue, job.user, (false, optimistic));
        let mut placement = Vec::with_capacity(needed.min(64) as usize);
        let mut first_blocker: Option<PendingReason> = None;
        let mut take_from = |host: HostIndex, free: u32| -> bool {
            match self.room_on_host(&search, host, free) {
                Ok(room) => {
                    let limits = self.limit_book.rules();
                    let budget = budgets
                        .iter()
                        .filter(|(limit, _)| limits[*limit].covers_host(host))
                        .map(|&(_, left)| left)
                        .min()
                        .unwrap_or(u32::MAX);
                    if budget == 0 {
                        first_blocker.get_or_insert(PendingReason::ResourceLimit);
                        return false;
                    }
                    let take = room.min(needed).min(budget);
                    for (limit, left) in &mut budgets {
                        if limits[*limit].covers_host(host) {
                            *left -= take;
                        }
                    }
                    placement.push(Placement { host, slots: take });
                    needed -= take;
                    needed == 0
                }
                Err(blocker) => {
                    if let Some(reason) = blocker {
                        first_blocker.get_or_insert(reason);
                    }
                    false
                }
            }
        };
        let placed = if mode == PlaceMode::Optimistic {
            set.members
                .iter()
                .any(|&host| take_from(host, self.hosts[host].config.max_slots))
        } else {
            set.hosts_with_free_slots()
                .any(|(host, free)| take_from(host, free))
        };
        if placed {
            return Ok(placement);
        }
        if first_blocker.is_none() && matches!(search.advance, ReservationBounds::Held(_)) {
            // Advance reservations took part of the room, and what they
            // hold depends on the job's run limit: not slots alone.
            first_blocker = Some(PendingReason::AdvanceReserved);
        }
        Err(first_blocker.map_or(PlacementFailure::SHORTAGE, PlacementFailure::blocked))
    }

    /// The slots the job may take on `host`, which has `free` free slots:
    /// `Err(None)` when the host is closed, full, or lacks the job's
    /// resources or as many GPUs as it asks for; `Err(Some(NotEnoughGpus))`
    /// when its GPUs are held by running jobs (free when optimistic); `Err(Some(reason))` when a reservation or a limit holds
    /// its slots.
    fn room_on_host(
        &self,
        search: &Search<'_>,
        host: HostIndex,
        free: u32,
    ) -> Result<u32, Option<PendingReason>> {
        let host_state = &self.hosts[host];
        if free == 0
            || host_state.config.closed
            || !host_state.has_resources(&search.job.spec.resources)
            || host_state.config.gpus < search.job.spec.gpus
        {
            return Err(None);
        }
        if search.mode != PlaceMode::Optimistic && !host_state.has_gpus(search.job.spec.gpus) {
            return Err(Some(PendingReason::NotEnoughGpus));
        }
        if search
            .binding
            .iter()
            .any(|&r| self.hosts.set(self.reservations[r].host_set).contains(host))
        {
            return Err(Some(PendingReason::SlotsReserved));
        }
        let free = if search.advance_takes_nothing {
            free
        } else {
            room_under_reservations(&search.advance, host, free)?
        };
        if !search.check_limits {
            return Ok(free);
        }
        let optimistic = search.mode == PlaceMode::Optimistic;
        let room = self
            .host_room(host, search.queue, search.job.user, false, optimistic)
            .map_err(Some)?;
        let limit = self
            .per_host_limit_room(host, search.queue, search.job.user, (false, optimistic))
            .ok_or(Some(PendingReason::ResourceLimit))?;
        Ok(free.min(room).min(limit))
    }
}

/// What advance reservations' `bounds` leave a job of the `free` slots of
/// `host`: `Err(None)` for a host outside the reservation it names,
/// `Err(Some(AdvanceReserved))` when they hold every free slot.
fn room_under_reservations(
    bounds: &ReservationBounds,
    host: HostIndex,
    free: u32,
) -> Result<u32, Option<PendingReason>> {
    let held = match bounds {
        ReservationBounds::Free | ReservationBounds::Closed | ReservationBounds::Missing => {
            return Ok(free);
        }
        ReservationBounds::Held(held) => held,
        ReservationBounds::Within { hosts, held, .. } => {
            if !hosts.contains(&host) {
                return Err(None);
            }
            held
        }
    };
    match free.saturating_sub(held[host]) {
        0 => Err(Some(PendingReason::AdvanceReserved)),
        room => Ok(room),
    }
}

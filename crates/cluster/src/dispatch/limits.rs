//! Whether a job may take more slots under the cluster-wide user limits
//! (the user's and its groups' MAX_JOBS, and lsb.resources' Limit sections
//! through `resource_limits`) and the host-level ones (HJOB_LIMIT, JL/U,
//! JL/P), each counting suspended jobs as `limits::counts_suspended` says,
//! and whether preemption can lift a limit.

use crate::job::{HostIndex, JobId, PendingReason, QueueIndex, UserId};
use crate::limits::{Held, SlotLimit, counts_suspended, per_processor_slots};
use crate::scheduler::Cluster;

impl Cluster {
    /// Whether preemption can lift a limit: only one that does not count
    /// suspended jobs (victims are suspended) or where victims are
    /// terminated.
    pub(crate) fn preemption_relieves(&self, reason: PendingReason) -> bool {
        let limit = match reason {
            PendingReason::UserJobLimit => SlotLimit::UserTotal,
            PendingReason::UserGroupJobLimit => SlotLimit::GroupTotal,
            PendingReason::UserProcessorLimit => SlotLimit::UserPerProcessor,
            PendingReason::UserGroupProcessorLimit => SlotLimit::GroupPerProcessor,
            PendingReason::HostUserLimit => SlotLimit::HostPerUser,
            PendingReason::NotEnoughSlots
            | PendingReason::NotEnoughGpus
            | PendingReason::SlotsReserved => return true,
            _ => return false,
        };
        !self.counts_suspended(limit)
    }

    pub(crate) fn counts_suspended(&self, limit: SlotLimit) -> bool {
        counts_suspended(
            limit,
            self.policy.preemption_enabled,
            self.policy.preempt_for,
        )
    }

    /// The first cluster-wide user limit (the user's or one of its groups'
    /// MAX_JOBS) that `slots` more slots would pass, and whether it is
    /// already reached. With `resuming`, the slots are a suspended job's,
    /// already counted by limits that count suspended jobs. Answered by
    /// one flag while no user or group has a MAX_JOBS (every try asks).
    #[inline]
    pub(crate) fn cluster_limit_block(
        &self,
        user: UserId,
        slots: u32,
        resuming: bool,
    ) -> Option<(PendingReason, bool)> {
        if !self.users.any_max_jobs() {
            return None;
        }
        self.max_jobs_block(user, slots, resuming)
    }

    /// [`Cluster::cluster_limit_block`] when some user or group has a
    /// MAX_JOBS: the user's, then its groups', in order.
    fn max_jobs_block(
        &self,
        user: UserId,
        slots: u32,
        resuming: bool,
    ) -> Option<(PendingReason, bool)> {
        let user = self.users.get(user)?;
        let check = |limit: Option<u32>, held: &Held, kind: SlotLimit| {
            let limit = limit?;
            let counts = self.counts_suspended(kind);
            if resuming && counts {
                return None;
            }
            let counted = held.counted(counts);
            (counted + slots > limit).then_some(counted >= limit)
        };
        if let Some(at_limit) = check(user.limits.max_jobs, &user.held, SlotLimit::UserTotal) {
            return Some((PendingReason::UserJobLimit, at_limit));
        }
        for &group in &user.groups {
            let group = self.users.group(group);
            if let Some(at_limit) = check(group.limits.max_jobs, &group.held, SlotLimit::GroupTotal)
            {
                return Some((PendingReason::UserGroupJobLimit, at_limit));
            }
        }
        None
    }

    /// The slots `user`'s job of `queue` may still take on `host` under the
    /// host-level limits (HJOB_LIMIT, JL/U, JL/P), or the limit that leaves
    /// none. With `resuming`, the job's slots are already counted where
    /// suspended jobs count; with `optimistic`, limits that ignore suspended
    /// jobs are left out (suspending victims could free them).
    pub(crate) fn host_room(
        &self,
        host: HostIndex,
        queue: QueueIndex,
        user: UserId,
        resuming: bool,
        optimistic: bool,
    ) -> Result<u32, PendingReason> {
        let mut room = Room {
            left: u32::MAX,
            resuming,
            optimistic,
        };
        let tracking = self.tallies.tracking();
        if tracking.host_queue && !resuming {
            if let Some(limit) = self.queues[queue].config.host_job_limit {
                let held = self.tallies.queue_held(host, queue);
                room.take(limit, held, PendingReason::HostQueueJobLimit)?;
            }
        }
        let Some(user_state) = self.users.get(user) else {
            return Ok(room.left);
        };
        let config = &self.hosts[host].config;
        if tracking.host_user {
            let held = self.tallies.user_held(host, user);
            if let Some(limit) = config.user_slot_limit {
                let kind = (SlotLimit::HostPerUser, PendingReason::HostUserLimit);
                self.user_limit_on_host(&mut room, limit, held, kind)?;
            }
            if let Some(per_processor) = user_state.limits.slots_per_processor {
                let limit = per_processor_slots(per_processor, config.processor_count());
                let kind = (
                    SlotLimit::UserPerProcessor,
                    PendingReason::UserProcessorLimit,
                );
                self.user_limit_on_host(&mut room, limit, held, kind)?;
            }
        }
        if tracking.host_group {
            for &group in &user_state.groups {
                if let Some(per_processor) = self.users.group(group).limits.slots_per_processor {
                    let limit = per_processor_slots(per_processor, config.processor_count());
                    let held = self.tallies.group_held(host, group);
                    let kind = (
                        SlotLimit::GroupPerProcessor,
                        PendingReason::UserGroupProcessorLimit,
                    );
                    self.user_limit_on_host(&mut room, limit, held, kind)?;
                }
            }
        }
        Ok(room.left)
    }

    /// A per-user or per-group limit on a host (`kind`: the limit, and the
    /// reason it gives), counting suspended jobs as the limit says; left
    /// out where `room` resumes a job it already counts, or (optimistic)
    /// when it ignores suspended jobs.
    fn user_limit_on_host(
        &self,
        room: &mut Room,
        limit: u32,
        held: Option<&Held>,
        (kind, reason): (SlotLimit, PendingReason),
    ) -> Result<(), PendingReason> {
        let counts = self.counts_suspended(kind);
        if (room.resuming && counts) || (room.optimistic && !counts) {
            return Ok(());
        }
        room.take(limit, held.map_or(0, |held| held.counted(counts)), reason)
    }

    /// The cluster-wide limit (a user's or group's MAX_JOBS, or a Limit
    /// section counting no hosts) that `slots` more slots of `user` in
    /// `queue` would pass, if any. Always inlined: every try of the pass
    /// asks, and the call cost more than the answer when no limit is set
    /// (12.7 M instructions of `deep_replay 100000`).
    #[inline(always)]
    pub(crate) fn user_limit_block(
        &self,
        user: UserId,
        queue: QueueIndex,
        slots: u32,
    ) -> Option<LimitBlock> {
        if let Some((reason, at_limit)) = self.cluster_limit_block(user, slots, false) {
            return Some(LimitBlock {
                reason,
                at_limit,
                limit: None,
                relievable: self.preemption_relieves(reason),
            });
        }
        let (limit, at_limit) = self.resource_limit_block(user, queue, slots, false)?;
        Some(LimitBlock {
            reason: PendingReason::ResourceLimit,
            at_limit,
            limit: Some(limit),
            relievable: self.resource_limit_relieved(limit),
        })
    }

    /// Whether suspended job `id` fits back on its hosts under every limit
    /// that does not count it while suspended.
    pub(crate) fn can_resume(&self, id: JobId) -> bool {
        let Some(job) = self.jobs.get(id) else {
            return false;
        };
        if self
            .cluster_limit_block(job.user, job.spec.slots, true)
            .is_some()
            || !self.resumable_under_limits(id)
        {
            return false;
        }
        if !self.resume_fits_reservations(job) {
            return false;
        }
        let check_limits = self.tallies.tracking().any_host_limit();
        job.placement.iter().all(|place| {
            self.hosts[place.host].free() >= place.slots
                && self.hosts[place.host].has_gpus(job.spec.gpus)
                && (!check_limits
                    || self
                        .host_room(place.host, job.queue, job.user, true, false)
                        .is_ok_and(|room| room >= place.slots))
        })
    }
}

/// A cluster-wide limit holding a job back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LimitBlock {
    /// Its pending reason.
    pub(crate) reason: PendingReason,
    /// It is reached already: no job of the user in the queue fits.
    pub(crate) at_limit: bool,
    /// The Limit section, when it is one.
    pub(crate) limit: Option<usize>,
    /// Suspending jobs can lift it.
    pub(crate) relievable: bool,
}

/// The slots a job may still take on one host, as the host-level limits
/// are checked one by one.
struct Room {
    left: u32,
    /// The job is suspended and resuming: limits that count suspended jobs
    /// count it already.
    resuming: bool,
    /// Limits that ignore suspended jobs are left out.
    optimistic: bool,
}

impl Room {
    /// Another limit of `limit` slots, `held` of them held: the room
    /// shrinks to what it leaves, and `reason` if it leaves none.
    fn take(&mut self, limit: u32, held: u32, reason: PendingReason) -> Result<(), PendingReason> {
        let left = limit.saturating_sub(held);
        self.left = self.left.min(left);
        if left == 0 { Err(reason) } else { Ok(()) }
    }
}

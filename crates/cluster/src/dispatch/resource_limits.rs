//! lsb.resources' Limit sections in the pass: whether a job may take more
//! slots (and one more job) under every limit that counts it — those that
//! count no hosts before placement, those that count hosts apart
//! (PER_HOST) host by host, and those that count hosts together (HOSTS) as
//! a budget the placement spends — and whether preemption can lift the
//! limit that holds it back.

use crate::job::{HostIndex, QueueIndex, UserId};
use crate::scheduler::{Cluster, LimitKey};

/// The room a limit instance leaves a job: `None` when its JOBS is
/// reached, else the slots its SLOTS leaves (`u32::MAX` without one).
fn room_left(
    slots: Option<u32>,
    jobs: Option<u32>,
    held_slots: u32,
    held_jobs: u32,
) -> Option<u32> {
    if jobs.is_some_and(|jobs| held_jobs >= jobs) {
        return None;
    }
    Some(slots.map_or(u32::MAX, |slots| slots.saturating_sub(held_slots)))
}

impl Cluster {
    /// What the instance `key` of limit `limit` leaves a job, counting
    /// suspended jobs as the limit says.
    fn limit_room(&self, limit: usize, key: &LimitKey, optimistic: bool) -> Option<u32> {
        let rule = self.limit_book.rule(limit);
        let counts = rule.counts_suspended(self.policy.preemption_enabled);
        if optimistic && !counts {
            return Some(u32::MAX);
        }
        let tally = self.limit_book.tally(key);
        room_left(
            rule.slots,
            rule.jobs,
            tally.slots.counted(counts),
            tally.jobs.counted(counts),
        )
    }

    /// Whether limit `limit` is left out of a check: when `resuming` (the
    /// job is suspended), a limit that counts suspended jobs counts it
    /// already.
    fn skipped(&self, limit: usize, resuming: bool) -> bool {
        resuming
            && self
                .limit_book
                .rule(limit)
                .counts_suspended(self.policy.preemption_enabled)
    }

    /// The first Limit section counting no hosts that `slots` more slots
    /// of `user` in `queue` (one more job) would pass, and whether it is
    /// reached already. With `resuming`, for a suspended job.
    #[inline]
    pub(crate) fn resource_limit_block(
        &self,
        user: UserId,
        queue: QueueIndex,
        slots: u32,
        resuming: bool,
    ) -> Option<(usize, bool)> {
        if self.limit_book.is_empty() {
            return None;
        }
        (0..self.limit_book.rules().len())
            .filter(|&limit| {
                !self.limit_book.rule(limit).names_hosts()
                    && self.limit_book.counts(limit, user, queue)
                    && !self.skipped(limit, resuming)
            })
            .find_map(|limit| {
                let key = self.limit_book.key(limit, user, queue, None);
                match self.limit_room(limit, &key, false) {
                    None => Some((limit, true)),
                    Some(room) if room < slots => Some((limit, room == 0)),
                    Some(_) => None,
                }
            })
    }

    /// Whether suspending jobs can lift Limit section `limit`: only when
    /// it does not count suspended jobs.
    pub(crate) fn resource_limit_relieved(&self, limit: usize) -> bool {
        !self
            .limit_book
            .rule(limit)
            .counts_suspended(self.policy.preemption_enabled)
    }

    /// The slots the Limit sections counting hosts apart leave a job of
    /// `user` in `queue` on `host` (`u32::MAX` when none counts it there),
    /// `None` when one leaves nothing. Optimistic: limits that ignore
    /// suspended jobs are left out.
    pub(crate) fn per_host_limit_room(
        &self,
        host: HostIndex,
        queue: QueueIndex,
        user: UserId,
        (resuming, optimistic): (bool, bool),
    ) -> Option<u32> {
        let mut left = u32::MAX;
        for (limit, rule) in self.limit_book.rules().iter().enumerate() {
            if !(rule.per_host
                && rule.covers_host(host)
                && self.limit_book.counts(limit, user, queue))
                || self.skipped(limit, resuming)
            {
                continue;
            }
            let key = self.limit_book.key(limit, user, queue, Some(host));
            left = left.min(self.limit_room(limit, &key, optimistic)?);
        }
        (left > 0).then_some(left)
    }

    /// The budgets of the Limit sections counting hosts together (HOSTS,
    /// not PER_HOST) that count a job of `user` in `queue`: (limit, slots
    /// it may still take on the limit's hosts). A reached JOBS leaves 0.
    #[inline]
    pub(crate) fn host_group_budgets(
        &self,
        queue: QueueIndex,
        user: UserId,
        (resuming, optimistic): (bool, bool),
    ) -> Vec<(usize, u32)> {
        if self.limit_book.is_empty() {
            return Vec::new();
        }
        (0..self.limit_book.rules().len())
            .filter(|&limit| {
                let rule = self.limit_book.rule(limit);
                rule.names_hosts()
                    && !rule.per_host
                    && self.limit_book.counts(limit, user, queue)
                    && !self.skipped(limit, resuming)
            })
            .map(|limit| {
                let key = self.limit_book.key(limit, user, queue, None);
                (limit, self.limit_room(limit, &key, optimistic).unwrap_or(0))
            })
            .collect()
    }

    /// Whether suspended job `id` fits back under every Limit section that
    /// does not count it while suspended.
    pub(crate) fn resumable_under_limits(&self, id: crate::job::JobId) -> bool {
        if self.limit_book.is_empty() {
            return true;
        }
        let Some(job) = self.jobs.get(id) else {
            return false;
        };
        let (user, queue) = (job.user, job.queue);
        if self
            .resource_limit_block(user, queue, job.spec.slots, true)
            .is_some()
        {
            return false;
        }
        let per_host = job.placement.iter().all(|place| {
            self.per_host_limit_room(place.host, queue, user, (true, false))
                .is_some_and(|room| room >= place.slots)
        });
        per_host
            && self
                .host_group_budgets(queue, user, (true, false))
                .into_iter()
                .all(|(limit, budget)| {
                    let rule = self.limit_book.rule(limit);
                    let on_hosts: u32 = job
                        .placement
                        .iter()
                        .filter(|place| rule.covers_host(place.host))
                        .map(|place| place.slots)
                        .sum();
                    on_hosts <= budget
                })
    }

    /// Whether running job `victim` counts against the same instance of
    /// limit `limit` (counting no hosts) as a job of `user` in `queue`:
    /// suspending it frees room there.
    pub(crate) fn shares_limit(
        &self,
        limit: usize,
        victim: (UserId, QueueIndex),
        user: UserId,
        queue: QueueIndex,
    ) -> bool {
        self.limit_book.counts(limit, victim.0, victim.1)
            && self.limit_book.key(limit, victim.0, victim.1, None)
                == self.limit_book.key(limit, user, queue, None)
    }
}

#[cfg(test)]
mod tests {
    use super::room_left;

    #[test]
    fn room_under_slots_and_jobs() {
        assert_eq!(room_left(Some(4), None, 1, 0), Some(3));
        assert_eq!(room_left(Some(4), Some(2), 1, 2), None);
        assert_eq!(room_left(None, Some(2), 7, 1), Some(u32::MAX));
        assert_eq!(room_left(Some(4), None, 6, 0), Some(0));
    }
}

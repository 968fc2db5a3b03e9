//! Queue-based fairshare in the pass (seed 000): the order queues are
//! served in, each pool's total and its queues' deserved slots, and
//! USE_PRIORITY_IN_POOL's second round.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use mcfed_protocol::SimTime;

use crate::job::{JobId, JobState, QueueIndex, UserId};
use crate::limits::SlotLimit;
use crate::pool::{PoolClaim, allocate};
use crate::scheduler::{Cluster, Transition};

use super::{Outcome, Round, Scope, Turn};

impl Cluster {
    /// A pool queue's decayed slot-hours over its share: lower has had less
    /// than its due.
    pub(crate) fn usage_ratio(&self, queue: QueueIndex, now: SimTime) -> f64 {
        let queue = &self.queues[queue];
        let share = f64::from(queue.share().max(1));
        queue.usage.value_at(now, self.policy.hist_hours) / share
    }

    /// A pool's total and each of its queues' deserved slots (see `pool`).
    pub(super) fn plan_pool(&mut self, pool_index: usize, now: SimTime) {
        let pool = self.queues.pool(pool_index);
        let in_use: u64 = pool
            .queues
            .iter()
            .map(|&queue| u64::from(self.queues[queue].running_slots))
            .sum();
        // Free slots an active advance reservation holds are no queue's
        // (as the counters leave them out, seed 004).
        let held = self.advance_held_on(&self.hosts.set(pool.host_set).members, now);
        let mut total = in_use + self.pool_free_slots(pool.host_set).saturating_sub(held);
        if let Some(max) = pool.max_slots {
            total = total.min(u64::from(max));
        }
        let total = u32::try_from(total).unwrap_or(u32::MAX);
        let mut order = pool.queues.clone();
        let deficits = self.share_deficits(pool_index, now);
        let deficit = |queue: QueueIndex| {
            order_position(&pool.queues, queue).map_or(0.0, |position| deficits[position])
        };
        order.sort_by(|&a, &b| {
            let (qa, qb) = (&self.queues[a], &self.queues[b]);
            deficit(b)
                .total_cmp(&deficit(a))
                .then_with(|| qb.share().cmp(&qa.share()))
                .then_with(|| {
                    self.usage_ratio(a, now)
                        .total_cmp(&self.usage_ratio(b, now))
                })
                .then_with(|| qb.config.priority.cmp(&qa.config.priority))
                .then_with(|| a.cmp(&b))
        });
        let claims: Vec<PoolClaim> = order
            .iter()
            .map(|&queue| PoolClaim {
                share: self.queues[queue].share(),
                need: self.pool_need(queue, pool.host_set),
            })
            .collect();
        for (queue, deserved) in order.into_iter().zip(allocate(total, &claims)) {
            self.queues[queue].deserved = deserved;
        }
        self.queues.pool_mut(pool_index).total = total;
    }

    /// The slots `queue` can run in its pool (on `host_set`): its running
    /// and pending slots, but no more than its own limits let it hold —
    /// QJOB_LIMIT, HJOB_LIMIT on each open host of the pool, and, user by
    /// user, UJOB_LIMIT and what the user's MAX_JOBS (lsb.users) leaves
    /// after its slots in other queues. Seed 000: "Job limits and host
    /// limits are enforced by the scheduler. For example, if LSF
    /// determines that a queue is eligible to run 50 jobs, but the queue
    /// has a job limit of 40 jobs, no more than 40 jobs will run. The
    /// remaining 10 job slots are redistributed among other queues
    /// belonging to the same pool" (issue 27 item 1).
    fn pool_need(&self, queue: QueueIndex, host_set: usize) -> u32 {
        let state = &self.queues[queue];
        let suspended = state.suspended_slots;
        let mut need = state.running_slots.saturating_add(state.pending_slots);
        if let Some(limit) = state.config.job_limit {
            need = need.min(limit.saturating_sub(suspended));
        }
        if let Some(limit) = state.config.host_job_limit {
            let hosts = self
                .hosts
                .set(host_set)
                .members
                .iter()
                .filter(|&&host| !self.hosts[host].config.closed)
                .fold(0u32, |sum, &host| {
                    sum.saturating_add(self.hosts[host].config.max_slots.min(limit))
                });
            need = need.min(hosts.saturating_sub(suspended));
        }
        if state.config.user_job_limit.is_some() || self.users.has_limits() {
            need = need.min(self.users_room_in(queue));
        }
        need
    }

    /// The most `queue`'s users can hold in it: each user's running,
    /// suspended and pending slots there, capped by UJOB_LIMIT and by what
    /// the user's own MAX_JOBS leaves after its slots in other queues.
    /// (Its groups' MAX_JOBS, shared among their users, and lsb.resources
    /// Limits are left to dispatch.)
    fn users_room_in(&self, queue: QueueIndex) -> u32 {
        let state = &self.queues[queue];
        let mut wanted: Vec<(UserId, u32)> = state
            .users
            .iter()
            .filter(|(_, user)| user.held > 0)
            .map(|(&user, figures)| (user, figures.held))
            .chain(state.pending.slots_by_user())
            .collect();
        wanted.sort_unstable_by_key(|&(user, _)| user);
        let mut room = 0u32;
        let mut at = 0;
        while at < wanted.len() {
            let user = wanted[at].0;
            let mut slots = 0u32;
            while at < wanted.len() && wanted[at].0 == user {
                slots = slots.saturating_add(wanted[at].1);
                at += 1;
            }
            if let Some(limit) = state.config.user_job_limit {
                slots = slots.min(limit);
            }
            if let Some(figures) = self.users.get(user) {
                if let Some(max_jobs) = figures.limits.max_jobs {
                    let here = state.users.get(&user).map_or(0, |user| user.held);
                    let counts = self.counts_suspended(SlotLimit::UserTotal);
                    let elsewhere = figures.held.counted(counts).saturating_sub(here);
                    slots = slots.min(max_jobs.saturating_sub(elsewhere));
                }
            }
            room = room.saturating_add(slots);
        }
        room
    }

    /// Each queue of pool `pool_index` (in its order) at `now`: its share
    /// less its part of the pool's accumulated (decayed) slot use — how far
    /// below its due it has been served. Seed 000: accumulated use makes
    /// sure "each queue is not allocated more slots than it deserves, and
    /// other queues in the pool have a chance to run their share of jobs".
    /// With no use yet, each queue's share.
    pub(crate) fn share_deficits(&self, pool_index: usize, now: SimTime) -> Vec<f64> {
        let pool = self.queues.pool(pool_index);
        let used: Vec<f64> = pool
            .queues
            .iter()
            .map(|&queue| {
                self.queues[queue]
                    .usage
                    .value_at(now, self.policy.hist_hours)
                    .max(0.0)
            })
            .collect();
        let all: f64 = used.iter().sum();
        pool.queues
            .iter()
            .zip(&used)
            .map(|(&queue, &used)| {
                let share = f64::from(self.queues[queue].share()) / 100.0;
                if all > 0.0 { share - used / all } else { share }
            })
            .collect()
    }

    /// The free slots of host set `host_set` a pool may count: seed 000's
    /// "free slots to the maximum job slot limit configured either in
    /// lsb.hosts (MXJ) or in lsb.resources for a host or host group". Per
    /// host limits are in the hosts' MXJ already; a Limit section's SLOTS
    /// over a group of hosts (for every user and queue) caps the free
    /// slots on its hosts at what it has left.
    fn pool_free_slots(&self, host_set: usize) -> u64 {
        let set = self.hosts.set(host_set);
        let mut free = set.free_slots;
        for (limit, rule) in self.limit_book.rules().iter().enumerate() {
            let Some(slots) = rule
                .slots
                .filter(|_| rule.names_hosts() && !rule.per_host && rule.covers_everyone())
            else {
                continue;
            };
            let free_on: u64 = set
                .members
                .iter()
                .filter(|&&host| rule.covers_host(host))
                .map(|&host| u64::from(self.hosts[host].free()))
                .sum();
            let counts = rule.counts_suspended(self.policy.preemption_enabled);
            let held = self
                .limit_book
                .tally(&(limit, None, None, None))
                .slots
                .counted(counts);
            let left = u64::from(slots.saturating_sub(held));
            free -= free_on - free_on.min(left);
        }
        free
    }

    /// The pass's queue order: by priority; among equal priorities, pool
    /// queues that have used less of their share first.
    pub(super) fn order_queues(&mut self, now: SimTime) {
        let mut order = self.queues.priority_order().to_vec();
        order.sort_by(|&a, &b| {
            let ratio = |queue: QueueIndex| {
                if self.queues[queue].pool.is_some() {
                    self.usage_ratio(queue, now)
                } else {
                    0.0
                }
            };
            self.queues[b]
                .config
                .priority
                .cmp(&self.queues[a].config.priority)
                .then_with(|| ratio(a).total_cmp(&ratio(b)))
                .then_with(|| a.cmp(&b))
        });
        self.queues.set_dispatch_order(order);
    }

    /// USE_PRIORITY_IN_POOL: the pool's unused slots go to its pending jobs
    /// in arrival order across its queues.
    pub(super) fn pool_second_round(
        &mut self,
        pool: usize,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let members = self.queues.pool(pool).queues.clone();
        let total = self.queues.pool(pool).total;
        if self.queues.pool(pool).running >= total {
            return;
        }
        let mut heap: BinaryHeap<Reverse<(u64, QueueIndex, JobId)>> = members
            .iter()
            .filter_map(|&queue| {
                let (arrival, id) = self.queues[queue].pending.next_after(None)?;
                Some(Reverse((arrival, queue, id)))
            })
            .collect();
        let mut turns: Vec<Turn> = vec![Turn::new(Round::Main); members.len()];
        while let Some(Reverse((arrival, queue, id))) = heap.pop() {
            let running = self.queues.pool(pool).running;
            if running >= total {
                break;
            }
            // Gone since (a chunk took it): the queue is done with.
            if !self.jobs.get(id).is_some_and(|job| {
                job.state == JobState::Pending && job.queue == queue && job.arrival == arrival
            }) {
                continue;
            }
            let member = members.iter().position(|&q| q == queue).unwrap_or(0);
            turns[member].round = Round::PoolSecond {
                room: total - running,
            };
            match self.try_dispatch(queue, id, now, transitions, &mut turns[member]) {
                Outcome::Started => {}
                Outcome::Failed { reason, scope } => {
                    self.set_reason(id, reason);
                    if scope == Scope::Queue {
                        continue;
                    }
                }
            }
            if let Some((next, id)) = self.queues[queue].pending.next_after(Some(arrival)) {
                heap.push(Reverse((next, queue, id)));
            }
        }
    }
}

/// Where `queue` is in `queues`.
fn order_position(queues: &[QueueIndex], queue: QueueIndex) -> Option<usize> {
    queues.iter().position(|&member| member == queue)
}

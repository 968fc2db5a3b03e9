//! The queue book: every queue with its jobs and tallies (pending,
//! running and suspended slots, per-user figures, the order its running
//! jobs are preempted in, its pool usage), the slot pools, and the orders
//! queues are served in. [`QueueBook::account`] keeps a queue's tallies in
//! step as one of its jobs takes or gives back slots.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::{Index, IndexMut};

use mcfed_protocol::{QueueName, SimTime};
use rustc_hash::FxHashMap;

use crate::config::QueueConfig;
use crate::fairshare::{
    DecayingTotal, FairshareFactors, GroupDirectory, JobUse, NodeId, ShareTree, StopKind,
};
use crate::job::{HostIndex, Job, JobId, PendingReason, QueueIndex, UserId};
use crate::preemption::PreemptGuards;

use super::Policy;
use super::accounting::Change;
use super::pending::PendingJobs;

/// One user's figures in one queue.
#[derive(Clone, Debug, Default)]
pub(crate) struct QueueUser {
    /// Slots of the user's running and suspended jobs in the queue
    /// (UJOB_LIMIT).
    pub(crate) held: u32,
    /// The share account its jobs queue in and count against (fairshare
    /// queues only; `None`: no shares).
    pub(crate) leaf: Option<NodeId>,
    /// Pass in which the dispatch stopped looking at the user's jobs, and
    /// why (fairshare queues only).
    pub(crate) stopped: Option<(u64, PendingReason)>,
}

/// What running job `job` weighs in its user's fairshare account.
pub(crate) fn job_use(job: &Job) -> JobUse {
    JobUse {
        slots: job.spec.slots,
        cpu_utilisation: job.spec.cpu_utilisation,
        memory_mb: job.spec.memory_mb,
        running_since: job.running_since,
        ran_before: job.ran_before(),
        run_limit: job.spec.run_limit,
        gpus: job.spec.gpus * u32::try_from(job.placement.len()).unwrap_or(u32::MAX),
    }
}

/// A fairshare queue's share tree (with its USER_SHARES and accounts) and
/// resolved factors.
#[derive(Clone, Debug)]
pub(crate) struct QueueFairshare {
    pub(crate) tree: ShareTree,
    pub(crate) factors: FairshareFactors,
}

impl QueueFairshare {
    /// Job `job` of the user whose leaf is `leaf` moves by `change` at
    /// `now`: the accounts of the leaf and its ancestors follow.
    fn account(&mut self, leaf: NodeId, job: &Job, change: Change, now: SimTime) {
        if change.run == 0 {
            return;
        }
        let used = job_use(job);
        let hist_hours = self.factors.hist_hours;
        let how = if change.held < 0 && !change.resizing {
            StopKind::Ended
        } else {
            StopKind::Suspended
        };
        self.tree.each_account(leaf, |account| {
            if change.run > 0 {
                account.job_runs(&used, hist_hours);
            } else {
                account.job_stops(now, &used, how, hist_hours);
            }
        });
    }
}

/// Where the last pass stopped looking at a queue's pending jobs: every job
/// it did not look at shares the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stop {
    pub(crate) reason: PendingReason,
}

/// A queue and its jobs.
#[derive(Clone, Debug)]
pub(crate) struct Queue {
    pub(crate) config: QueueConfig,
    pub(crate) host_set: usize,
    /// Pending jobs in the queue's order, and in buckets of jobs a pass
    /// cannot tell apart.
    pub(crate) pending: PendingJobs,
    /// Jobs suspended by preemption, by arrival order: they resume when
    /// their hosts have room (jobs stopped by `bstop` are not here).
    pub(crate) suspended: BTreeMap<u64, JobId>,
    /// Running jobs, most preferred victim first (kept only for queues that
    /// other queues may preempt); equal keys put the newest job first.
    pub(crate) running_order: BTreeSet<(Reverse<i64>, Reverse<JobId>)>,
    pub(crate) running_slots: u32,
    pub(crate) suspended_slots: u32,
    pub(crate) pending_slots: u32,
    pub(crate) imported_pending_jobs: u32,
    /// Slots of forwarded jobs taken over a full IMPT_JOBBKLG because they
    /// start at once, since the last dispatch pass.
    pub(crate) promised_slots: u32,
    /// Where the last dispatch pass stopped looking at this queue.
    pub(crate) stopped: Option<Stop>,
    /// Queues this one may preempt, most preferred victim first.
    pub(crate) victims: Vec<QueueIndex>,
    /// Queues that may preempt this one.
    pub(crate) preemptors: Vec<QueueIndex>,
    /// Boolean resources offered by the queue's hosts, sorted.
    pub(crate) resources: Vec<String>,
    /// Total slots on all the queue's hosts, open or closed.
    pub(crate) configured_slots: u64,
    /// The queue's hosts with GPUs (what its counters' GPU figures read).
    pub(crate) gpu_hosts: Vec<HostIndex>,
    /// Per-user figures.
    pub(crate) users: FxHashMap<UserId, QueueUser>,
    /// User-based fairshare, if configured.
    pub(crate) fairshare: Option<QueueFairshare>,
    /// The queue's slot pool.
    pub(crate) pool: Option<usize>,
    /// Slots it deserves in its pool as of the last pass (pool queues).
    pub(crate) deserved: u32,
    /// Decayed slot-hours used (pool queues).
    pub(crate) usage: DecayingTotal,
    /// NO_PREEMPT_* protecting its running jobs.
    pub(crate) guards: PreemptGuards,
    /// A job whose reservation expired, and the last pass in which it may
    /// not reserve again.
    pub(crate) reserve_cooldown: Option<(JobId, u64)>,
    /// The APS group (in [`QueueBook::aps_groups`]) the queue's pending
    /// jobs are ordered in: its own APS_PRIORITY's, or its QUEUE_GROUP
    /// parent's.
    pub(crate) aps_group: Option<usize>,
    /// Running autoresizable jobs with a pending resize allocation request,
    /// by arrival: (the job, when the request began pending).
    pub(crate) resize_pending: BTreeMap<u64, (JobId, SimTime)>,
}

impl Queue {
    /// Slots the queue's running and suspended jobs hold.
    pub(crate) fn held(&self) -> u32 {
        self.running_slots + self.suspended_slots
    }

    /// The SLOT_SHARE of a pool queue.
    pub(crate) fn share(&self) -> u32 {
        self.config.slot_pool.as_ref().map_or(0, |pool| pool.share)
    }

    /// The queue's figures for `user` (named `name`), created on first use
    /// (in a fairshare queue, with the share account its jobs go to,
    /// resolved through `groups`).
    pub(crate) fn user_entry(
        &mut self,
        user: UserId,
        name: &str,
        groups: &GroupDirectory,
    ) -> &mut QueueUser {
        let Queue {
            users, fairshare, ..
        } = self;
        users.entry(user).or_insert_with(|| QueueUser {
            leaf: fairshare
                .as_mut()
                .and_then(|fairshare| fairshare.tree.leaf_for(name, groups)),
            ..QueueUser::default()
        })
    }

    /// Its job `id` moves by `change`: slot tallies, the suspended list,
    /// the victim order and the user's figures follow.
    fn account(
        &mut self,
        id: JobId,
        job: &Job,
        change: Change,
        least_run_time: bool,
        now: SimTime,
    ) {
        let slots = job.spec.slots;
        Change::apply(change.run, &mut self.running_slots, slots);
        Change::apply(change.suspend, &mut self.suspended_slots, slots);
        if change.resumable > 0 {
            self.suspended.insert(job.arrival, id);
        } else if change.resumable < 0 {
            self.suspended.remove(&job.arrival);
        }
        if change.run != 0 && !self.preemptors.is_empty() {
            let entry = (Reverse(victim_key(job, least_run_time)), Reverse(id));
            if change.run > 0 {
                self.running_order.insert(entry);
            } else {
                self.running_order.remove(&entry);
            }
        }
        if change.run != 0 && job.spec.options.is_some() && job.spec.auto_resizes() {
            self.note_resize_request(id, job, change.run > 0, now);
        }
        let user = self.users.entry(job.user).or_default();
        Change::apply(change.held, &mut user.held, slots);
        if let (Some(fairshare), Some(leaf)) = (self.fairshare.as_mut(), user.leaf) {
            fairshare.account(leaf, job, change, now);
        }
    }
}

impl Queue {
    /// An autoresizable job starts (`running`) or stops running: its
    /// pending resize request (for the slots it still may take) is listed
    /// while it runs below its maximum.
    pub(crate) fn note_resize_request(
        &mut self,
        id: JobId,
        job: &Job,
        running: bool,
        now: SimTime,
    ) {
        if running && job.spec.slots < job.spec.max_slots() {
            self.resize_pending.entry(job.arrival).or_insert((id, now));
        } else {
            self.resize_pending.remove(&job.arrival);
        }
    }
}

/// A queue-based fairshare slot pool.
#[derive(Clone, Debug)]
pub(crate) struct Pool {
    pub(crate) name: String,
    /// Member queues, in configuration order.
    pub(crate) queues: Vec<QueueIndex>,
    pub(crate) host_set: usize,
    pub(crate) max_slots: Option<u32>,
    pub(crate) use_priority: bool,
    /// The pool's total as of the last pass.
    pub(crate) total: u32,
    /// Slots its queues' jobs run on now.
    pub(crate) running: u32,
}

/// Up to this many queues, [`QueueBook::index_of`] reads each name rather
/// than hash the one asked for.
const FEW_QUEUES: usize = 8;

/// The cluster's queues and slot pools.
#[derive(Clone, Debug)]
pub(crate) struct QueueBook {
    /// Queues in configuration order (a queue's index is its place here).
    list: Vec<Queue>,
    by_name: FxHashMap<QueueName, QueueIndex>,
    /// Queue indices by PRIORITY, highest first (configuration order breaks
    /// ties).
    priority_order: Vec<QueueIndex>,
    /// The order of the current pass (pools reorder equal priorities).
    dispatch_order: Vec<QueueIndex>,
    /// Position of each queue in `dispatch_order`.
    order_position: Vec<usize>,
    pools: Vec<Pool>,
    /// Absolute priority scheduling's queue groups.
    aps_groups: Vec<crate::aps::ApsGroup>,
}

impl QueueBook {
    /// The queues and pools, served by priority until a pass reorders them.
    pub(crate) fn new(
        list: Vec<Queue>,
        pools: Vec<Pool>,
        aps_groups: Vec<crate::aps::ApsGroup>,
    ) -> Self {
        let mut priority_order: Vec<QueueIndex> = (0..list.len()).collect();
        priority_order.sort_by_key(|&q| (Reverse(list[q].config.priority), q));
        let by_name = list
            .iter()
            .enumerate()
            .map(|(index, queue)| (queue.config.name.clone(), index))
            .collect();
        let mut book = QueueBook {
            list,
            by_name,
            priority_order: priority_order.clone(),
            dispatch_order: Vec::new(),
            order_position: Vec::new(),
            pools,
            aps_groups,
        };
        book.set_dispatch_order(priority_order);
        book
    }

    /// Queue indices by PRIORITY, highest first (configuration order
    /// breaks ties).
    #[inline]
    pub(crate) fn priority_order(&self) -> &[QueueIndex] {
        &self.priority_order
    }

    /// The queue at `position` in this pass's order, if any.
    #[inline]
    pub(crate) fn in_dispatch_order(&self, position: usize) -> Option<QueueIndex> {
        self.dispatch_order.get(position).copied()
    }

    /// Queue `queue`'s position in this pass's order.
    #[inline]
    pub(crate) fn order_position(&self, queue: QueueIndex) -> usize {
        self.order_position[queue]
    }

    /// Each queue's position in this pass's order, by queue index.
    #[inline]
    pub(crate) fn order_positions(&self) -> &[usize] {
        &self.order_position
    }

    /// The slot pools.
    #[inline]
    pub(crate) fn pools(&self) -> &[Pool] {
        &self.pools
    }

    /// Slot pool `pool`.
    #[inline]
    pub(crate) fn pool(&self, pool: usize) -> &Pool {
        &self.pools[pool]
    }

    /// Slot pool `pool`, to change its totals.
    #[inline]
    pub(crate) fn pool_mut(&mut self, pool: usize) -> &mut Pool {
        &mut self.pools[pool]
    }

    /// Absolute priority scheduling's queue groups.
    #[inline]
    pub(crate) fn aps_groups(&self) -> &[crate::aps::ApsGroup] {
        &self.aps_groups
    }

    /// APS queue group `group`.
    #[inline]
    pub(crate) fn aps_group(&self, group: usize) -> &crate::aps::ApsGroup {
        &self.aps_groups[group]
    }

    /// The number of queues.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Every queue, in configuration order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Queue> {
        self.list.iter()
    }

    /// The index of the queue named `name`. A few queues are found sooner
    /// by reading their names than by hashing `name` (every submission
    /// asks).
    pub(crate) fn index_of(&self, name: &str) -> Option<QueueIndex> {
        if self.list.len() <= FEW_QUEUES {
            return self
                .list
                .iter()
                .position(|queue| queue.config.name.as_str() == name);
        }
        self.by_name.get(name).copied()
    }

    /// A pass runs: slots promised to forwarded jobs are theirs to take
    /// now, or no longer promised.
    pub(crate) fn clear_promises(&mut self) {
        for queue in &mut self.list {
            queue.promised_slots = 0;
        }
    }

    /// Sets the order of the current pass.
    pub(crate) fn set_dispatch_order(&mut self, order: Vec<QueueIndex>) {
        self.order_position.resize(self.list.len(), 0);
        for (position, &queue) in order.iter().enumerate() {
            self.order_position[queue] = position;
        }
        self.dispatch_order = order;
    }

    /// Job `id` of queue `job.queue` moves by `change` at `now`: the
    /// queue's tallies and its pool's follow.
    pub(crate) fn account(
        &mut self,
        id: JobId,
        job: &Job,
        change: Change,
        policy: &Policy,
        now: SimTime,
    ) {
        let queue = &mut self.list[job.queue];
        queue.account(id, job, change, policy.preempt_for.least_run_time, now);
        if let (Some(pool), true) = (queue.pool, change.run != 0) {
            let slots = job.spec.slots;
            let delta = (change.run * i64::from(slots)) as f64;
            queue.usage.add_rate(now, delta, policy.hist_hours);
            Change::apply(change.run, &mut self.pools[pool].running, slots);
        }
    }
}

impl Index<QueueIndex> for QueueBook {
    type Output = Queue;

    fn index(&self, queue: QueueIndex) -> &Queue {
        &self.list[queue]
    }
}

impl IndexMut<QueueIndex> for QueueBook {
    fn index_mut(&mut self, queue: QueueIndex) -> &mut Queue {
        &mut self.list[queue]
    }
}

/// The key ordering a queue's running jobs as preemption victims: most
/// recently started first, or (PREEMPT_FOR=LEAST_RUN_TIME) shortest run
/// time first. Both are fixed while the job runs.
pub(crate) fn victim_key(job: &Job, least_run_time: bool) -> i64 {
    let since = i64::try_from(job.running_since.as_millis()).unwrap_or(i64::MAX);
    if least_run_time {
        since - i64::try_from(job.ran_before().as_millis()).unwrap_or(i64::MAX)
    } else {
        since
    }
}

//! The dispatch pass: which queue goes first, which job of a queue goes
//! first, and whether a job may start now, and where.
//!
//! A pass serves the queues in order of PRIORITY (seed 000: queues outside
//! any slot pool merge into this order by priority; among queues of equal
//! priority, pool queues that have used less of their share go first). In
//! each queue's turn:
//!
//! 1. suspended jobs resume first, where their hosts have room again (seed
//!    001: suspended jobs are scheduled before pending ones);
//! 2. pending jobs are tried first come first served, or, in a fairshare
//!    queue, one at a time from the user with the highest dynamic priority,
//!    recomputed after each start (seed 002);
//! 3. a job that cannot start may preempt running jobs of queues its queue
//!    may preempt (see `victims`), and a parallel job of a SLOT_RESERVE
//!    queue reserves the free slots of its hosts.
//!
//! A job starts only within every limit: QJOB_LIMIT, the slots its queue
//! deserves in its pool, UJOB_LIMIT, the user's and its groups' MAX_JOBS,
//! and, host by host, MXJ, HJOB_LIMIT, JL/U and the per-processor JL/P
//! limits, each counting suspended jobs as `limits::counts_suspended` says.
//! After every queue's turn, pools with USE_PRIORITY_IN_POOL hand their
//! unused slots to their pending jobs in arrival order across their queues.
//!
//! The pass never looks at more jobs than it must: a queue whose hosts are
//! full (and that cannot preempt) or that has reached its job limit is
//! skipped at once, and its pending jobs share the reason.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::ops::Bound;

use mcfed_protocol::SimTime;

use crate::fairshare::{AdjustmentInput, ShareAccount, UsageTerms, dynamic_priority};
use crate::job::{HostIndex, JobId, JobState, PendingReason, Placement, QueueIndex, UserId};
use crate::limits::{SlotLimit, counts_suspended, per_processor_slots};
use crate::pool::{PoolClaim, allocate};
use crate::scheduler::{Cluster, Holding, Reservation, Transition};

/// What trying one job gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It started.
    Started,
    /// It stays pending for `reason`; `scope` says which other jobs of the
    /// queue need not be tried in this pass.
    Failed { reason: PendingReason, scope: Scope },
}

/// How far a failure reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Just this job.
    Job,
    /// Every job of the same user in the queue.
    User,
    /// Every job of the queue.
    Queue,
}

fn failed(reason: PendingReason, scope: Scope) -> Outcome {
    Outcome::Failed { reason, scope }
}

/// Which round of a pass a job is tried in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    /// A queue's own turn: a pool queue is held to its deserved slots.
    Main,
    /// USE_PRIORITY_IN_POOL's second round: the pool has `room` unused
    /// slots.
    PoolSecond { room: u32 },
}

/// State carried through one queue's turn.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Turn {
    /// Within one turn free slots only shrink, so once a job without
    /// resource needs fails for want of slots alone, any job as large
    /// fails too.
    smallest_failure: u32,
    round: Round,
}

impl Turn {
    fn new(round: Round) -> Self {
        Turn {
            smallest_failure: u32::MAX,
            round,
        }
    }
}

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

/// A fairshare user waiting for its next job to be tried.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    priority: f64,
    next: u64,
    user: UserId,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    /// Highest priority first, then the earliest job, then the lowest user
    /// number: a max-heap pops the candidate to try next.
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .total_cmp(&other.priority)
            .then_with(|| other.next.cmp(&self.next))
            .then_with(|| other.user.cmp(&self.user))
    }
}

impl Cluster {
    /// The dispatch pass.
    pub(crate) fn dispatch(&mut self, now: SimTime, transitions: &mut Vec<Transition>) {
        self.pass += 1;
        if !self.pools.is_empty() {
            self.order_queues(now);
        }
        if !self.reservations.is_empty() {
            self.predict_reservations(now);
        }
        let mut planned = vec![false; self.pools.len()];
        for position in 0..self.dispatch_order.len() {
            let queue = self.dispatch_order[position];
            // A pool's total is taken when its first queue's turn comes, so
            // it reflects what higher queues outside the pool took.
            if let Some(pool) = self.queues[queue].pool {
                if !planned[pool] {
                    planned[pool] = true;
                    self.plan_pool(pool, now);
                }
            }
            self.resume_suspended(queue, now, transitions);
            self.dispatch_queue(queue, now, transitions);
        }
        for pool in 0..self.pools.len() {
            if self.pools[pool].use_priority {
                self.pool_second_round(pool, now, transitions);
            }
        }
    }

    /// A pool queue's decayed slot-hours over its share: lower has had less
    /// than its due.
    pub(crate) fn usage_ratio(&self, queue: QueueIndex, now: SimTime) -> f64 {
        let queue = &self.queues[queue];
        let share = f64::from(queue.share().max(1));
        queue.usage.value_at(now, self.policy.hist_hours) / share
    }

    /// A pool's total and each of its queues' deserved slots (see `pool`).
    fn plan_pool(&mut self, pool_index: usize, now: SimTime) {
        let pool = &self.pools[pool_index];
        let in_use: u64 = pool
            .queues
            .iter()
            .map(|&queue| u64::from(self.queues[queue].running_slots))
            .sum();
        let mut total = in_use + self.host_sets[pool.host_set].free_slots;
        if let Some(max) = pool.max_slots {
            total = total.min(u64::from(max));
        }
        let total = u32::try_from(total).unwrap_or(u32::MAX);
        let mut order = pool.queues.clone();
        order.sort_by(|&a, &b| {
            let (qa, qb) = (&self.queues[a], &self.queues[b]);
            qb.share()
                .cmp(&qa.share())
                .then_with(|| {
                    self.usage_ratio(a, now)
                        .total_cmp(&self.usage_ratio(b, now))
                })
                .then_with(|| qb.config.priority.cmp(&qa.config.priority))
                .then_with(|| a.cmp(&b))
        });
        let claims: Vec<PoolClaim> = order
            .iter()
            .map(|&queue| {
                let queue = &self.queues[queue];
                let mut need = queue.running_slots.saturating_add(queue.pending_slots);
                if let Some(limit) = queue.config.job_limit {
                    need = need.min(limit.saturating_sub(queue.suspended_slots));
                }
                PoolClaim {
                    share: queue.share(),
                    need,
                }
            })
            .collect();
        for (queue, deserved) in order.into_iter().zip(allocate(total, &claims)) {
            self.queues[queue].deserved = deserved;
        }
        self.pools[pool_index].total = total;
    }

    /// The pass's queue order: by priority; among equal priorities, pool
    /// queues that have used less of their share first.
    fn order_queues(&mut self, now: SimTime) {
        let mut order = self.queue_order.clone();
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
        for (position, &queue) in order.iter().enumerate() {
            self.order_position[queue] = position;
        }
        self.dispatch_order = order;
    }

    pub(crate) fn set_reason(&mut self, id: JobId, reason: PendingReason) {
        let pass = self.pass;
        if let Some(job) = self.jobs.get_mut(&id) {
            job.pending_reason = reason;
            job.reason_pass = pass;
        }
    }

    /// Why a pending job has not started, as of the last dispatch pass.
    /// Jobs the pass did not reach (it stops at a queue's job limit, when no
    /// slot is left, or at a user's limit in a fairshare queue) share the
    /// reason it stopped for.
    pub fn pending_reason(&self, job: &crate::job::Job) -> PendingReason {
        if job.state != JobState::Pending {
            return PendingReason::NewJob;
        }
        if self.pass > 0 && job.reason_pass == self.pass {
            return job.pending_reason;
        }
        let queue = &self.queues[job.queue];
        if let Some((pass, reason)) = queue.users.get(&job.user).and_then(|user| user.stopped) {
            if pass == self.pass {
                return reason;
            }
        }
        queue.stopped.map_or(job.pending_reason, |stop| stop.reason)
    }

    fn resume_suspended(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let state = &self.queues[queue];
        // A suspended job resumes on its own hosts, which are the queue's:
        // with none of them free, none can.
        if state.suspended.is_empty() || self.host_sets[state.host_set].free_slots == 0 {
            return;
        }
        let candidates: Vec<JobId> = self.queues[queue].suspended.values().copied().collect();
        for id in candidates {
            if self.can_resume(id) {
                self.resume(id, now, transitions);
            }
        }
    }

    /// Whether suspended job `id` fits back on its hosts under every limit
    /// that does not count it while suspended.
    fn can_resume(&self, id: JobId) -> bool {
        let Some(job) = self.jobs.get(&id) else {
            return false;
        };
        if self
            .cluster_limit_block(job.user, job.spec.slots, true)
            .is_some()
        {
            return false;
        }
        let check_limits = self.tracking.any_host_limit();
        job.placement.iter().all(|place| {
            self.hosts[place.host].free() >= place.slots
                && (!check_limits
                    || self
                        .host_room(place.host, job.queue, job.user, true, false)
                        .is_ok_and(|room| room >= place.slots))
        })
    }

    fn dispatch_queue(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let state = &mut self.queues[queue];
        state.stopped = None;
        if state.pending.is_empty() {
            return;
        }
        let stop = if state
            .config
            .job_limit
            .is_some_and(|limit| state.held() >= limit)
        {
            Some(PendingReason::QueueJobLimit)
        } else if state.pool.is_some() && state.running_slots >= state.deserved {
            Some(PendingReason::PoolShareUsed)
        } else if self.host_sets[state.host_set].free_slots == 0 && state.victims.is_empty() {
            Some(PendingReason::NotEnoughSlots)
        } else {
            None
        };
        if let Some(reason) = stop {
            state.stopped = Some(crate::scheduler::Stop { reason });
            return;
        }
        if state.fairshare.is_some() {
            self.dispatch_fairshare(queue, now, transitions);
        } else {
            self.dispatch_in_arrival_order(queue, now, transitions);
        }
    }

    fn stop_queue(&mut self, queue: QueueIndex, reason: PendingReason) {
        self.queues[queue].stopped = Some(crate::scheduler::Stop { reason });
    }

    fn dispatch_in_arrival_order(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let mut turn = Turn::new(Round::Main);
        let mut cursor = Bound::Unbounded;
        while let Some((&arrival, &id)) = self.queues[queue]
            .pending
            .range((cursor, Bound::Unbounded))
            .next()
        {
            cursor = Bound::Excluded(arrival);
            if let Outcome::Failed { reason, scope } =
                self.try_dispatch(queue, id, now, transitions, &mut turn)
            {
                self.set_reason(id, reason);
                if scope == Scope::Queue {
                    self.stop_queue(queue, reason);
                    break;
                }
            }
        }
    }

    /// The dynamic priority of `user` in fairshare queue `queue` at `now`
    /// (seed 002), with the figures behind it, or `None` for a queue
    /// without fairshare or a user it has not seen.
    pub(crate) fn user_priority(
        &self,
        queue: QueueIndex,
        user: UserId,
        now: SimTime,
    ) -> Option<(f64, UsageTerms)> {
        let account = &self.queues[queue].users.get(&user)?.account;
        self.account_priority(queue, account, now)
    }

    /// The dynamic priority of the user whose account in `queue` is
    /// `account`.
    pub(crate) fn account_priority(
        &self,
        queue: QueueIndex,
        account: &ShareAccount,
        now: SimTime,
    ) -> Option<(f64, UsageTerms)> {
        let factors = &self.queues[queue].fairshare.as_ref()?.factors;
        let cpu_time = account.cpu_time(now, factors.hist_hours);
        let run_time = account.run_time(now);
        let job_slots = f64::from(account.running_slots);
        let fairshare_adjustment = match &self.adjustment {
            Some(plugin) if factors.fairshare_adjustment > 0.0 => {
                plugin.adjustment(&AdjustmentInput {
                    cpu_time,
                    run_time,
                    job_slots,
                    fwd_job_slots: 0.0,
                    used_slots: job_slots,
                    used_memory_mb: account.memory_mb as f64,
                    cluster_memory_in_use_mb: self.memory_in_use_mb as f64,
                    slot_memory_mb: self.slot_memory_mb,
                })
            }
            _ => 0.0,
        };
        let usage = UsageTerms {
            cpu_time,
            run_time,
            job_slots,
            fwd_job_slots: 0.0,
            fairshare_adjustment,
            historical_gpu_run_time: 0.0,
            gpu_run_time: 0.0,
            gpus: 0.0,
        };
        Some((dynamic_priority(account.shares, &usage, factors), usage))
    }

    fn dispatch_fairshare(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let mut heap: BinaryHeap<Candidate> = self.queues[queue]
            .users
            .iter()
            .filter_map(|(&user, state)| {
                let (&next, _) = state.pending.first_key_value()?;
                let (priority, _) = self.user_priority(queue, user, now)?;
                Some(Candidate {
                    priority,
                    next,
                    user,
                })
            })
            .collect();
        let mut turn = Turn::new(Round::Main);
        while let Some(candidate) = heap.pop() {
            let Some((&arrival, &id)) = self.queues[queue]
                .users
                .get(&candidate.user)
                .and_then(|user| user.pending.range(candidate.next..).next())
            else {
                continue;
            };
            let outcome = self.try_dispatch(queue, id, now, transitions, &mut turn);
            let priority = match outcome {
                Outcome::Started => self
                    .user_priority(queue, candidate.user, now)
                    .map_or(candidate.priority, |(priority, _)| priority),
                Outcome::Failed { reason, scope } => {
                    self.set_reason(id, reason);
                    match scope {
                        Scope::Job => candidate.priority,
                        Scope::User => {
                            let pass = self.pass;
                            if let Some(user) = self.queues[queue].users.get_mut(&candidate.user) {
                                user.stopped = Some((pass, reason));
                            }
                            continue;
                        }
                        Scope::Queue => {
                            self.stop_queue(queue, reason);
                            return;
                        }
                    }
                }
            };
            let has_more = self.queues[queue]
                .users
                .get(&candidate.user)
                .is_some_and(|user| user.pending.range(arrival + 1..).next().is_some());
            if has_more {
                heap.push(Candidate {
                    priority,
                    next: arrival + 1,
                    user: candidate.user,
                });
            }
        }
    }

    /// USE_PRIORITY_IN_POOL: the pool's unused slots go to its pending jobs
    /// in arrival order across its queues.
    fn pool_second_round(&mut self, pool: usize, now: SimTime, transitions: &mut Vec<Transition>) {
        let members = self.pools[pool].queues.clone();
        let total = self.pools[pool].total;
        if self.pools[pool].running >= total {
            return;
        }
        let mut heap: BinaryHeap<Reverse<(u64, QueueIndex)>> = members
            .iter()
            .filter_map(|&queue| {
                let (&arrival, _) = self.queues[queue].pending.first_key_value()?;
                Some(Reverse((arrival, queue)))
            })
            .collect();
        let mut turns: Vec<Turn> = vec![Turn::new(Round::Main); members.len()];
        while let Some(Reverse((arrival, queue))) = heap.pop() {
            let running = self.pools[pool].running;
            if running >= total {
                break;
            }
            let Some(&id) = self.queues[queue].pending.get(&arrival) else {
                continue;
            };
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
            if let Some((&next, _)) = self.queues[queue].pending.range(arrival + 1..).next() {
                heap.push(Reverse((next, queue)));
            }
        }
    }

    /// Tries to start pending job `id` of `queue` now.
    pub(crate) fn try_dispatch(
        &mut self,
        queue: QueueIndex,
        id: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
        turn: &mut Turn,
    ) -> Outcome {
        let Some(job) = self.jobs.get(&id) else {
            return failed(PendingReason::NewJob, Scope::Job);
        };
        let (slots, user, plain) = (job.spec.slots, job.user, job.spec.resources.is_empty());
        let state = &self.queues[queue];
        if let Some(limit) = state.config.job_limit {
            let held = state.held();
            if held + slots > limit {
                let scope = if held >= limit {
                    Scope::Queue
                } else {
                    Scope::Job
                };
                return failed(PendingReason::QueueJobLimit, scope);
            }
        }
        if let Some(pool) = state.pool.map(|pool| &self.pools[pool]) {
            // Queues running above what they deserve keep their jobs, so
            // the pool as a whole is held to its total too.
            if pool.running + slots > pool.total {
                let scope = if pool.running >= pool.total {
                    Scope::Queue
                } else {
                    Scope::Job
                };
                return failed(PendingReason::PoolShareUsed, scope);
            }
        }
        match turn.round {
            Round::Main if state.pool.is_some() && state.running_slots + slots > state.deserved => {
                let scope = if state.running_slots >= state.deserved {
                    Scope::Queue
                } else {
                    Scope::Job
                };
                return failed(PendingReason::PoolShareUsed, scope);
            }
            Round::PoolSecond { room } if slots > room => {
                return failed(PendingReason::PoolShareUsed, Scope::Job);
            }
            _ => {}
        }
        if let Some(limit) = state.config.user_job_limit {
            let held = state.users.get(&user).map_or(0, |user| user.held);
            if held + slots > limit {
                let scope = if held >= limit {
                    Scope::User
                } else {
                    Scope::Job
                };
                return failed(PendingReason::UserQueueJobLimit, scope);
            }
        }
        let can_preempt = !state.victims.is_empty();
        let host_set = state.host_set;
        let block = self.cluster_limit_block(user, slots, false);
        if let Some((reason, at_limit)) = block {
            if !(can_preempt && self.preemption_relieves(reason)) {
                let scope = if at_limit { Scope::User } else { Scope::Job };
                return failed(reason, scope);
            }
        } else if plain && slots >= turn.smallest_failure {
            return failed(PendingReason::NotEnoughSlots, Scope::Job);
        }
        let failure = match block {
            Some((reason, _)) => PlacementFailure {
                reason,
                slots_alone: false,
            },
            None => match self.find_placement(queue, id, now, PlaceMode::Normal) {
                Ok(placement) => {
                    self.start(id, placement, now, transitions);
                    return Outcome::Started;
                }
                Err(failure) => failure,
            },
        };
        if can_preempt && self.preempt_for(queue, id, now, transitions) {
            return Outcome::Started;
        }
        if failure.reason == PendingReason::NotEnoughSlots {
            self.reserve_slots(queue, id, now);
        }
        if failure.slots_alone && plain {
            turn.smallest_failure = turn.smallest_failure.min(slots);
        }
        let scope = if self.host_sets[host_set].free_slots == 0 && !can_preempt {
            Scope::Queue
        } else {
            Scope::Job
        };
        failed(failure.reason, scope)
    }

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
            PendingReason::NotEnoughSlots | PendingReason::SlotsReserved => return true,
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
    /// already counted by limits that count suspended jobs.
    pub(crate) fn cluster_limit_block(
        &self,
        user: UserId,
        slots: u32,
        resuming: bool,
    ) -> Option<(PendingReason, bool)> {
        let user = self.users.get(user as usize)?;
        let check = |limit: Option<u32>, held: &crate::limits::Held, kind: SlotLimit| {
            let limit = limit?;
            let counts = self.counts_suspended(kind);
            if resuming && counts {
                return None;
            }
            let counted = held.counted(counts);
            (counted + slots > limit).then_some(counted >= limit)
        };
        if let Some(at_limit) = check(user.max_jobs, &user.held, SlotLimit::UserTotal) {
            return Some((PendingReason::UserJobLimit, at_limit));
        }
        for &group in &user.groups {
            let group = &self.groups[group];
            if let Some(at_limit) = check(group.max_jobs, &group.held, SlotLimit::GroupTotal) {
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
        let mut room = u32::MAX;
        let mut limit_with = |limit: u32, held: u32, reason: PendingReason| {
            let left = limit.saturating_sub(held);
            room = room.min(left);
            if left == 0 { Err(reason) } else { Ok(()) }
        };
        let tracking = self.tracking;
        if tracking.host_queue && !resuming {
            if let Some(limit) = self.queues[queue].config.host_job_limit {
                let held = self
                    .host_queue_held
                    .get(&(host, queue))
                    .copied()
                    .unwrap_or(0);
                limit_with(limit, held, PendingReason::HostQueueJobLimit)?;
            }
        }
        let Some(user_state) = self.users.get(user as usize) else {
            return Ok(room);
        };
        let host_state = &self.hosts[host];
        let mut per_user = |limit: u32, held: Option<&crate::limits::Held>, kind, reason| {
            let counts = self.counts_suspended(kind);
            if (resuming && counts) || (optimistic && !counts) {
                return Ok(());
            }
            let held = held.map_or(0, |held| held.counted(counts));
            limit_with(limit, held, reason)
        };
        if tracking.host_user {
            let held = self.host_user_held.get(&(host, user));
            if let Some(limit) = host_state.config.user_slot_limit {
                per_user(
                    limit,
                    held,
                    SlotLimit::HostPerUser,
                    PendingReason::HostUserLimit,
                )?;
            }
            if let Some(per_processor) = user_state.slots_per_processor {
                let limit = per_processor_slots(per_processor, host_state.config.processor_count());
                per_user(
                    limit,
                    held,
                    SlotLimit::UserPerProcessor,
                    PendingReason::UserProcessorLimit,
                )?;
            }
        }
        if tracking.host_group {
            for &group in &user_state.groups {
                if let Some(per_processor) = self.groups[group].slots_per_processor {
                    let limit =
                        per_processor_slots(per_processor, host_state.config.processor_count());
                    per_user(
                        limit,
                        self.host_group_held.get(&(host, group)),
                        SlotLimit::GroupPerProcessor,
                        PendingReason::UserGroupProcessorLimit,
                    )?;
                }
            }
        }
        Ok(room)
    }

    /// Reservations that hold job `id` back, unless it may backfill them.
    fn binding_reservations(&self, queue: QueueIndex, id: JobId, now: SimTime) -> Vec<usize> {
        let Some(job) = self.jobs.get(&id) else {
            return Vec::new();
        };
        let state = &self.queues[queue];
        self.reservations
            .iter()
            .enumerate()
            .filter(|(_, reservation)| {
                let after = self.order_position[queue] > self.order_position[reservation.queue]
                    || (queue == reservation.queue && job.arrival > reservation.arrival);
                let backfills = state.config.backfill
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

    /// Free slots for job `id` on its queue's hosts, least-loaded hosts
    /// (most free slots) first, or why there are not enough.
    pub(crate) fn find_placement(
        &self,
        queue: QueueIndex,
        id: JobId,
        now: SimTime,
        mode: PlaceMode,
    ) -> Result<Vec<Placement>, PlacementFailure> {
        let shortage = PlacementFailure {
            reason: PendingReason::NotEnoughSlots,
            slots_alone: true,
        };
        let Some(job) = self.jobs.get(&id) else {
            return Err(shortage);
        };
        let state = &self.queues[queue];
        let set = &self.host_sets[state.host_set];
        let mut needed = job.spec.slots;
        let binding = if mode == PlaceMode::Normal && !self.reservations.is_empty() {
            self.binding_reservations(queue, id, now)
        } else {
            Vec::new()
        };
        if binding
            .iter()
            .any(|&r| self.reservations[r].host_set == state.host_set)
        {
            return Err(PlacementFailure {
                reason: PendingReason::SlotsReserved,
                slots_alone: false,
            });
        }
        let plain = job.spec.resources.is_empty();
        if mode != PlaceMode::Optimistic && plain && set.free_slots < u64::from(needed) {
            return Err(shortage);
        }
        let check_limits = self.tracking.any_host_limit();
        let mut placement = Vec::new();
        let mut first_blocker: Option<PendingReason> = None;
        let mut take_from = |host: HostIndex, free: u32, needed: &mut u32| -> bool {
            let host_state = &self.hosts[host];
            if free == 0
                || host_state.config.closed
                || !host_state.has_resources(&job.spec.resources)
            {
                return false;
            }
            if binding
                .iter()
                .any(|&r| self.host_sets[self.reservations[r].host_set].contains(host))
            {
                first_blocker.get_or_insert(PendingReason::SlotsReserved);
                return false;
            }
            let mut room = free;
            if check_limits {
                match self.host_room(host, queue, job.user, false, mode == PlaceMode::Optimistic) {
                    Ok(limit) => room = room.min(limit),
                    Err(reason) => {
                        first_blocker.get_or_insert(reason);
                        return false;
                    }
                }
            }
            let take = room.min(*needed);
            placement.push(Placement { host, slots: take });
            *needed -= take;
            *needed == 0
        };
        let placed = if mode == PlaceMode::Optimistic {
            set.members
                .iter()
                .any(|&host| take_from(host, self.hosts[host].config.max_slots, &mut needed))
        } else {
            set.hosts_with_free_slots()
                .any(|(host, free)| take_from(host, free, &mut needed))
        };
        if placed {
            return Ok(placement);
        }
        Err(match first_blocker {
            Some(reason) => PlacementFailure {
                reason,
                slots_alone: false,
            },
            None => shortage,
        })
    }

    /// SLOT_RESERVE: a parallel job that found too few free slots holds
    /// the free slots of its hosts for MAX_RESERVE_TIME cycles, so later
    /// jobs (bar backfill jobs that finish in time) cannot take them.
    fn reserve_slots(&mut self, queue: QueueIndex, id: JobId, now: SimTime) {
        let state = &self.queues[queue];
        let Some(cycles) = state.config.slot_reserve else {
            return;
        };
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let cooling = state
            .reserve_cooldown
            .is_some_and(|(job, until)| job == id && self.pass <= until);
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
    }

    fn predict_reservations(&mut self, now: SimTime) {
        for index in 0..self.reservations.len() {
            let start = self.predicted_start(&self.reservations[index], now);
            self.reservations[index].predicted_start = start;
        }
    }

    /// When enough slots of the reservation's hosts will be free, counting
    /// running jobs as ending at their run limits; `None` when a job without
    /// a run limit stands in the way.
    fn predicted_start(&self, reservation: &Reservation, now: SimTime) -> Option<SimTime> {
        let set = &self.host_sets[reservation.host_set];
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
                let Some(job) = self.jobs.get(job).filter(|j| j.state == JobState::Running) else {
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

    /// Moves a running job's slots back to running after a tentative stop.
    pub(crate) fn undo_stop(&mut self, id: JobId, terminated: bool, now: SimTime) {
        let from = if terminated {
            Holding::Nothing
        } else {
            Holding::Suspended
        };
        self.account(id, from, Holding::Running, now);
    }
}

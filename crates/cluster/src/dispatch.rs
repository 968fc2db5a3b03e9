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
//! 2. pending jobs are tried in the order its policy gives (`order`: first
//!    come first served, fairshare by the users' dynamic priorities, or
//!    APS values for an APS queue and its QUEUE_GROUP);
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
//! skipped at once, and its pending jobs share the reason; a
//! first-come-first-served turn jumps over the jobs of a bucket that failed
//! as one (`order::arrival`).
//!
//! Here are the pass and the trial of one job; the queue ordering
//! policies and the turn's loop are in `order`, the pools' order, shares
//! and second round in `pools`, the user and host limits in `limits`, and
//! the search for hosts in `placement`.

mod limits;
mod order;
mod placement;
mod pools;
mod resource_limits;

use mcfed_protocol::SimTime;

use crate::job::{Job, JobId, JobState, PendingReason, QueueIndex, UserId};
use crate::scheduler::{Cluster, Stop, Transition};

use order::QueueOrder;

pub(crate) use limits::LimitBlock;
pub(crate) use order::WalkBuffers;
pub(crate) use placement::{PlaceMode, PlacementFailure};

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
    /// Every later job of the same bucket of the queue's pending jobs
    /// (`scheduler::pending`: the same slots, resources and, where a limit
    /// reads it, user), as long as nothing changes in the books: the
    /// failure depended on nothing else and had no side effect.
    Class,
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

impl Cluster {
    /// The dispatch pass.
    pub(crate) fn dispatch(&mut self, now: SimTime, transitions: &mut Vec<Transition>) {
        self.cycle.pass += 1;
        self.queues.clear_promises();
        if !self.queues.pools().is_empty() {
            self.order_queues(now);
        }
        if !self.reservations.is_empty() {
            self.predict_reservations(now);
        }
        let mut planned = vec![false; self.queues.pools().len()];
        let mut position = 0;
        while let Some(queue) = self.queues.in_dispatch_order(position) {
            position += 1;
            // A pool's total is taken when its first queue's turn comes, so
            // it reflects what higher queues outside the pool took.
            if let Some(pool) = self.queues[queue].pool {
                if !planned[pool] {
                    planned[pool] = true;
                    self.plan_pool(pool, now);
                }
            }
            self.resume_suspended(queue, now, transitions);
            if let Some(order) = QueueOrder::start(self, queue, now, transitions) {
                self.serve(order, now, transitions);
            }
        }
        for pool in 0..self.queues.pools().len() {
            if self.queues.pool(pool).use_priority {
                self.pool_second_round(pool, now, transitions);
            }
        }
    }

    /// Records why pending job `id` did not start in this pass.
    pub(crate) fn set_reason(&mut self, id: JobId, reason: PendingReason) {
        let pass = self.cycle.pass;
        if let Some(job) = self.jobs.get_mut(id) {
            job.pending_reason = reason;
            job.reason_pass = pass;
        }
    }

    /// Why a pending job has not started, as of the last dispatch pass.
    /// Jobs the pass did not reach (it stops at a queue's job limit, when no
    /// slot is left, or at a user's limit in a fairshare queue) share the
    /// reason it stopped for.
    pub fn pending_reason(&self, job: &Job) -> PendingReason {
        if job.state != JobState::Pending {
            return PendingReason::NewJob;
        }
        self.last_pass_reason(job)
    }

    /// Why a suspended (SSUSP) job does not resume now, when an advance
    /// reservation is why: the slots it would resume on are held by one
    /// (a job `bresume` finds stopped before a reservation's start, say).
    /// `None` for other jobs and other reasons (its preemptor still runs).
    pub fn suspend_reason(&self, job: &Job) -> Option<PendingReason> {
        (job.state == JobState::Suspended && !self.resume_fits_reservations(job))
            .then_some(PendingReason::AdvanceReserved)
    }

    /// Why job `job`, pending in its queue's lists, did not start in the
    /// last dispatch pass: the reason written for it, else the one its
    /// bucket's skipped range, its user's stop or its queue's stop in that
    /// pass gives (these belong to the queue: a job leaving it takes its
    /// reason along, `Cluster::remove_pending`).
    pub(crate) fn last_pass_reason(&self, job: &Job) -> PendingReason {
        if self.cycle.pass > 0 && job.reason_pass == self.cycle.pass {
            return job.pending_reason;
        }
        let queue = &self.queues[job.queue];
        if let Some(reason) = queue
            .pending
            .skipped_reason(job.bucket, job.arrival, self.cycle.pass)
        {
            return reason;
        }
        if let Some((pass, reason)) = queue.users.get(&job.user).and_then(|user| user.stopped) {
            if pass == self.cycle.pass {
                return reason;
            }
        }
        queue.stopped.map_or(job.pending_reason, |stop| stop.reason)
    }

    /// Resumes the suspended jobs of `queue` that fit back on their hosts,
    /// in arrival order.
    fn resume_suspended(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let state = &self.queues[queue];
        // A suspended job resumes on its own hosts, which are the queue's:
        // with none of them free, none can.
        if state.suspended.is_empty() || self.hosts.set(state.host_set).free_slots == 0 {
            return;
        }
        let candidates: Vec<JobId> = self.queues[queue].suspended.values().copied().collect();
        for id in candidates {
            if self.can_resume(id) {
                self.resume(id, now, transitions);
            }
        }
    }

    /// Whether `queue`'s turn has anything to try: pending jobs or resize
    /// requests, and no reason to stop at once (which its pending jobs
    /// then share). Its stop from the last pass is cleared either way.
    pub(crate) fn open_for_turn(&mut self, queue: QueueIndex) -> bool {
        let state = &mut self.queues[queue];
        state.stopped = None;
        if state.pending.is_empty() && state.resize_pending.is_empty() {
            return false;
        }
        match self.queue_stop(queue) {
            Some(reason) => {
                self.stop_queue(queue, reason);
                false
            }
            None => true,
        }
    }

    /// Why the pass looks at none of `queue`'s pending jobs, if it does
    /// not: it is at its job limit or pool share, or its hosts are full
    /// and it cannot preempt.
    pub(crate) fn queue_stop(&self, queue: QueueIndex) -> Option<PendingReason> {
        let state = &self.queues[queue];
        if state
            .config
            .job_limit
            .is_some_and(|limit| state.held() >= limit)
        {
            Some(PendingReason::QueueJobLimit)
        } else if state.pool.is_some() && state.running_slots >= state.deserved {
            // Its first job is tried all the same when it may reserve.
            (!self.may_reserve_by_share(queue)).then_some(PendingReason::PoolShareUsed)
        } else if self.hosts.set(state.host_set).free_slots == 0 && state.victims.is_empty() {
            Some(PendingReason::NotEnoughSlots)
        } else {
            None
        }
    }

    /// The pass looks at no more of the queue's jobs: they share `reason`.
    pub(crate) fn stop_queue(&mut self, queue: QueueIndex, reason: PendingReason) {
        self.queues[queue].stopped = Some(Stop { reason });
    }

    /// Whether the pass stopped looking at `user`'s jobs in `queue`.
    pub(crate) fn user_stopped(&self, queue: QueueIndex, user: UserId) -> bool {
        let pass = self.cycle.pass;
        self.queues[queue]
            .users
            .get(&user)
            .and_then(|state| state.stopped)
            .is_some_and(|(at, _)| at == pass)
    }

    /// The pass looks at no more of `user`'s jobs in `queue`: they share
    /// `reason`.
    pub(crate) fn stop_user(&mut self, queue: QueueIndex, user: UserId, reason: PendingReason) {
        let pass = self.cycle.pass;
        self.queues[queue].users.entry(user).or_default().stopped = Some((pass, reason));
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
        let Some(job) = self.jobs.get(id) else {
            return failed(PendingReason::NewJob, Scope::Job);
        };
        let plain = job.spec.resources.is_empty() && job.spec.gpus == 0;
        let (slots, user) = (job.spec.slots, job.user);
        if let Some(outcome) = self.queue_limit_failure(queue, user, slots, turn.round) {
            let reserves = self.queues[queue].config.slot_reserve.is_some() && slots >= 2;
            if turn.round == Round::Main && reserves && held_by_share(outcome) {
                // Seed 000 lets a pool queue reserve (SLOT_RESERVE): the
                // job holds the room its queue's jobs free in the share.
                // Whether it may (its cooldown, its fit) is its own.
                self.reserve_slots(queue, id, now, true);
                return outcome;
            }
            return class_wide(outcome);
        }
        let state = &self.queues[queue];
        let can_preempt = !state.victims.is_empty();
        let host_set = state.host_set;
        let block = self.user_limit_block(user, queue, slots);
        if let Some(block) = block {
            if !(can_preempt && block.relievable) {
                let scope = if block.at_limit {
                    Scope::User
                } else {
                    Scope::Class
                };
                return failed(block.reason, scope);
            }
        } else if plain && slots >= turn.smallest_failure {
            return failed(PendingReason::NotEnoughSlots, Scope::Class);
        }
        let failure = match block {
            Some(block) => PlacementFailure {
                reason: block.reason,
                slots_alone: false,
            },
            None => match self.find_placement_of(queue, job, now, PlaceMode::Normal) {
                Ok(placement) => {
                    let has_options = job.spec.options.is_some();
                    self.start(id, placement, now, transitions);
                    if has_options {
                        self.grow_at_start(queue, id, now, transitions);
                    }
                    if self.queues[queue]
                        .config
                        .chunk_job_size
                        .is_some_and(|size| size > 1)
                    {
                        self.form_chunk(queue, id, now, transitions);
                    }
                    return Outcome::Started;
                }
                Err(failure) => failure,
            },
        };
        if can_preempt && self.preempt_for(queue, id, now, transitions) {
            return Outcome::Started;
        }
        let reserves = self.queues[queue].config.slot_reserve.is_some() && slots >= 2;
        let scope = self.placement_failure_scope(host_set, can_preempt, reserves, failure);
        // A job reserves only in a SLOT_RESERVE queue, or renews the
        // reservation it holds: with neither, there is nothing to look up.
        let may_reserve = reserves || !self.reservations.is_empty();
        if failure.reason == PendingReason::NotEnoughSlots && may_reserve {
            self.reserve_slots(queue, id, now, false);
        }
        if failure.slots_alone && plain {
            turn.smallest_failure = turn.smallest_failure.min(slots);
        }
        failed(failure.reason, scope)
    }

    /// Which pending jobs a placement `failure` in host set `host_set`
    /// stands for, read before the job may reserve: the whole queue when
    /// its hosts have no free slot and it cannot preempt; the job's bucket
    /// when placement read nothing of the job's own — no preemption, no
    /// slot or advance reservations (they read its place in the queue and
    /// its run limit), and no shortage that makes it reserve (`reserves`);
    /// else the job alone.
    fn placement_failure_scope(
        &self,
        host_set: usize,
        can_preempt: bool,
        reserves: bool,
        failure: PlacementFailure,
    ) -> Scope {
        if can_preempt {
            Scope::Job
        } else if self.hosts.set(host_set).free_slots == 0 {
            Scope::Queue
        } else if self.reservations.is_empty()
            && self.advance.is_empty()
            && !(reserves && failure.reason == PendingReason::NotEnoughSlots)
        {
            Scope::Class
        } else {
            Scope::Job
        }
    }

    /// The queue-level limit that holds back a job of `user` asking for
    /// `slots`, if any: QJOB_LIMIT, the pool's total, the queue's deserved
    /// slots in its own turn (or the pool's unused slots in
    /// USE_PRIORITY_IN_POOL's round), UJOB_LIMIT.
    pub(crate) fn queue_limit_failure(
        &self,
        queue: QueueIndex,
        user: UserId,
        slots: u32,
        round: Round,
    ) -> Option<Outcome> {
        let state = &self.queues[queue];
        if let Some(limit) = state.config.job_limit {
            if let Some(scope) = over_limit(state.held(), slots, limit, Scope::Queue) {
                return Some(failed(PendingReason::QueueJobLimit, scope));
            }
        }
        if let Some(pool) = state.pool.map(|pool| self.queues.pool(pool)) {
            // Queues running above what they deserve keep their jobs, so
            // the pool as a whole is held to its total too. When nothing
            // caps the total (MAX_SLOTS_IN_POOL) it is the pool's slots in
            // use plus the free ones, so passing it only means too few free
            // slots: placement says so, and the job may reserve slots within
            // its queue's share — unless the queue could preempt, which
            // would pass the total.
            let uncapped = u64::from(pool.running) + self.hosts.set(pool.host_set).free_slots;
            if u64::from(pool.total) < uncapped || !state.victims.is_empty() {
                if let Some(scope) = over_limit(pool.running, slots, pool.total, Scope::Queue) {
                    return Some(failed(PendingReason::PoolShareUsed, scope));
                }
            }
        }
        let share = match round {
            Round::Main if state.pool.is_some() => {
                over_limit(state.running_slots, slots, state.deserved, Scope::Queue)
            }
            Round::PoolSecond { room } if slots > room => Some(Scope::Job),
            _ => None,
        };
        if let Some(scope) = share {
            return Some(failed(PendingReason::PoolShareUsed, scope));
        }
        if let Some(limit) = state.config.user_job_limit {
            let held = state.users.get(&user).map_or(0, |user| user.held);
            if let Some(scope) = over_limit(held, slots, limit, Scope::User) {
                return Some(failed(PendingReason::UserQueueJobLimit, scope));
            }
        }
        None
    }
}

/// Whether `outcome` is a job held back by its queue's pool share.
fn held_by_share(outcome: Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Failed {
            reason: PendingReason::PoolShareUsed,
            ..
        }
    )
}

/// A queue-level limit's failure, which depends on the job's user and
/// slots alone: it stands for the job's bucket.
fn class_wide(outcome: Outcome) -> Outcome {
    match outcome {
        Outcome::Failed {
            reason,
            scope: Scope::Job,
        } => failed(reason, Scope::Class),
        other => other,
    }
}

/// Whether `slots` more pass `limit` with `held` already held: `None` if
/// they fit; `whole` when nothing more fits at all (no other job of that
/// scope can start), else just this job.
fn over_limit(held: u32, slots: u32, limit: u32, whole: Scope) -> Option<Scope> {
    if held + slots <= limit {
        None
    } else if held >= limit {
        Some(whole)
    } else {
        Some(Scope::Job)
    }
}

//! [`Cluster::account`]: the one function through which a job's hold on
//! slots changes. It moves the job between holding nothing, running and
//! suspended, and has every book that depends on it follow:
//!
//! - the host book: hosts' used slots, the free-slot indexes of their host
//!   sets, the jobs placed on each host;
//! - the per-host tallies of the host-level limits (JL/U, JL/P,
//!   HJOB_LIMIT);
//! - the user book: each user's and group's slots (MAX_JOBS);
//! - the limit book: what each lsb.resources Limit instance holds;
//! - the fairshare adjustment's memory in use;
//! - the queue book: the queue's running and suspended slots and lists,
//!   its victim order, its user's slots (UJOB_LIMIT) and fairshare account,
//!   its pool's usage;
//! - the tallies of slots other queues could preempt.
//!
//! Slot accounting follows seed `003_f223f39848659bbb.txt` (see `limits`):
//! a suspended job does not count against its hosts' MXJ, so the preempting
//! job can use the slots, but it keeps counting against its queue's limits.

use mcfed_protocol::SimTime;

use crate::job::JobId;
use crate::limits::Held;

use super::Cluster;

/// How a job holds slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holding {
    /// Pending, finished, or terminated: no slots.
    Nothing,
    /// Running on its placement.
    Running,
    /// Suspended: keeps its placement but not its hosts' MXJ.
    Suspended,
}

impl Holding {
    fn running(self) -> i64 {
        i64::from(self == Holding::Running)
    }

    fn suspended(self) -> i64 {
        i64::from(self == Holding::Suspended)
    }

    fn holds(self) -> i64 {
        i64::from(self != Holding::Nothing)
    }
}

/// What one move between holdings does to each kind of tally: +1, -1 or 0
/// times the job's slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Change {
    /// Tallies of running slots.
    pub(crate) run: i64,
    /// Tallies of suspended slots.
    pub(crate) suspend: i64,
    /// Tallies of held slots (running or suspended).
    pub(crate) held: i64,
}

impl Change {
    /// The move from `from` to `to`.
    pub(crate) fn new(from: Holding, to: Holding) -> Change {
        Change {
            run: to.running() - from.running(),
            suspend: to.suspended() - from.suspended(),
            held: to.holds() - from.holds(),
        }
    }

    /// Adds (`delta` > 0) or takes away (`delta` < 0) `amount`.
    pub(crate) fn apply(delta: i64, value: &mut u32, amount: u32) {
        if delta > 0 {
            *value += amount;
        } else if delta < 0 {
            *value -= amount;
        }
    }

    /// Moves `amount` slots of a [`Held`] tally.
    pub(crate) fn apply_held(self, held: &mut Held, amount: u32) {
        Change::apply(self.run, &mut held.running, amount);
        Change::apply(self.suspend, &mut held.suspended, amount);
    }
}

impl Cluster {
    /// Moves job `id` from holding `from` to holding `to` at `now`, updating
    /// every tally that depends on it (see the module documentation). The
    /// job's own fields are not touched: the callers set its state, times and
    /// placement around this.
    pub(crate) fn account(&mut self, id: JobId, from: Holding, to: Holding, now: SimTime) {
        if from == to {
            return;
        }
        let Some(job) = self.jobs.get(id) else {
            return;
        };
        let change = Change::new(from, to);
        let groups = &self.users[job.user].groups;
        for &place in &job.placement {
            self.hosts.account(id, place, job.spec.gpus, change);
            self.tallies
                .account(place, job.user, groups, job.queue, change);
        }
        self.users.account(job.user, job.spec.slots, change);
        if !self.limit_book.is_empty() {
            self.limit_book.account(job, change);
        }
        self.adjustment.account(job.spec.memory_mb, change);
        self.queues.account(id, job, change, &self.policy, now);
        if change.run != 0 {
            self.victim_slots
                .account(job, change, &self.queues, &self.hosts);
        }
    }

    /// Stops a running victim in the books only: suspended, or (when
    /// `terminated`) holding nothing.
    pub(crate) fn stop_in_books(&mut self, id: JobId, terminated: bool, now: SimTime) {
        let to = if terminated {
            Holding::Nothing
        } else {
            Holding::Suspended
        };
        self.account(id, Holding::Running, to, now);
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

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
//! A job stopped by `bstop` (USUSP) keeps its hosts' MXJ as well: nothing
//! takes its slots while it waits for `bresume` — unless it was suspended
//! by preemption when it was stopped: then its preemptor holds them, and it
//! holds no MXJ until `bresume` makes it SSUSP again.

use mcfed_protocol::SimTime;

use crate::job::{Job, JobId, JobState};
use crate::limits::Held;

use super::Cluster;

/// How a job holds slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holding {
    /// Pending, finished, or terminated: no slots.
    Nothing,
    /// Running on its placement.
    Running,
    /// Suspended by preemption: keeps its placement but not its hosts'
    /// MXJ (its preemptor runs there), and waits to be resumed.
    Suspended,
    /// Stopped by `bstop` (USUSP): suspended in every tally, but keeping
    /// its hosts' MXJ, and resumed only by `bresume`.
    Stopped,
    /// Stopped by `bstop` while suspended by preemption (USUSP, LSF's
    /// state for it): suspended in every tally, not holding its hosts'
    /// MXJ (its preemptor may still run there), and not resumed until
    /// `bresume`.
    StoppedSuspended,
}

/// How many holdings there are.
const HOLDINGS: usize = 5;

/// Every move between holdings, by `[from][to]`.
const CHANGES: [[Change; HOLDINGS]; HOLDINGS] = {
    const ALL: [Holding; HOLDINGS] = [
        Holding::Nothing,
        Holding::Running,
        Holding::Suspended,
        Holding::Stopped,
        Holding::StoppedSuspended,
    ];
    let mut table = [[Change::between(Holding::Nothing, Holding::Nothing); HOLDINGS]; HOLDINGS];
    let mut from = 0;
    while from < HOLDINGS {
        let mut to = 0;
        while to < HOLDINGS {
            table[from][to] = Change::between(ALL[from], ALL[to]);
            to += 1;
        }
        from += 1;
    }
    table
};

impl Holding {
    /// How `job` holds slots, if it holds any.
    pub(crate) fn of(job: &Job) -> Option<Holding> {
        match job.state {
            JobState::Running => Some(Holding::Running),
            JobState::Suspended => Some(Holding::Suspended),
            JobState::UserSuspended if job.stopped_while_suspended => {
                Some(Holding::StoppedSuspended)
            }
            JobState::UserSuspended => Some(Holding::Stopped),
            JobState::Pending
            | JobState::PendingSuspended
            | JobState::ChunkWaiting
            | JobState::Done
            | JobState::Exited => None,
        }
    }

    const fn running(self) -> i64 {
        matches!(self, Holding::Running) as i64
    }

    const fn suspended(self) -> i64 {
        matches!(
            self,
            Holding::Suspended | Holding::Stopped | Holding::StoppedSuspended
        ) as i64
    }

    const fn occupies(self) -> i64 {
        matches!(self, Holding::Running | Holding::Stopped) as i64
    }

    const fn resumable(self) -> i64 {
        matches!(self, Holding::Suspended) as i64
    }

    const fn holds(self) -> i64 {
        !matches!(self, Holding::Nothing) as i64
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
    /// Hosts' used slots (MXJ): running or stopped.
    pub(crate) occupy: i64,
    /// The queue's list of jobs to resume (suspended by preemption).
    pub(crate) resumable: i64,
    /// A running job's slots change (a resize): it stops in the books
    /// only to run again at once, so fairshare takes the stop as a
    /// suspension, not the end of its run.
    pub(crate) resizing: bool,
}

impl Change {
    /// The move from `from` to `to` (looked up: `account` runs on every
    /// start and finish).
    pub(crate) fn new(from: Holding, to: Holding) -> Change {
        CHANGES[from as usize][to as usize]
    }

    const fn between(from: Holding, to: Holding) -> Change {
        Change {
            run: to.running() - from.running(),
            suspend: to.suspended() - from.suspended(),
            held: to.holds() - from.holds(),
            occupy: to.occupies() - from.occupies(),
            resumable: to.resumable() - from.resumable(),
            resizing: false,
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
        self.apply_change(id, Change::new(from, to), now);
    }

    /// Running job `id` gives back its slots for a resize (it runs again at
    /// once with its new slots: [`Cluster::account`] from nothing to
    /// running).
    pub(crate) fn account_resize_stop(&mut self, id: JobId, now: SimTime) {
        let change = Change {
            resizing: true,
            ..Change::new(Holding::Running, Holding::Nothing)
        };
        self.apply_change(id, change, now);
    }

    /// Has every book follow `change` of job `id` at `now`.
    fn apply_change(&mut self, id: JobId, change: Change, now: SimTime) {
        let Some(job) = self.jobs.get(id) else {
            return;
        };
        self.cycle.version += 1;
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

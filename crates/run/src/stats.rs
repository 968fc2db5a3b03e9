//! A run's counts ([`RunStats`]): what happened, each job counted once by
//! where it came from ([`JobTotals`], [`ByOrigin`]).

use mcfed_cluster::Transition;
use mcfed_federation::Origin;
use mcfed_protocol::{JobEvent, SimTime};

/// Counts of what happened in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunStats {
    /// Events handled.
    pub events: u64,
    /// Jobs submitted during the run.
    pub submitted: u64,
    /// Submissions refused.
    pub refused: u64,
    /// Messages delivered between clusters.
    pub messages: u64,
    /// Counter updates sent.
    pub updates: u64,
    /// Counter updates lost on the way (chaos).
    pub updates_lost: u64,
    /// Counter updates a forwarder ignored as not newer than one applied.
    pub updates_ignored: u64,
    /// Counter updates applied although older than one already applied
    /// (checked independently of the view; must stay zero).
    pub update_regressions: u64,
    /// Samples in which a receive queue held more imported pending jobs than
    /// its IMPT_JOBBKLG (must stay zero).
    pub backlog_overflows: u64,
    /// Forwarding decisions made (recorded ones: a job's first decision and
    /// every change).
    pub decisions: u64,
    /// Decisions that forwarded a job.
    pub forwarded: u64,
    /// Decisions the oracle marked stale.
    pub stale_decisions: u64,
    /// Jobs that started (each job once, wherever it ran; a job requeued
    /// and started again counts in `restarts`): `jobs.started.total()`.
    pub started: u64,
    /// Jobs finished (DONE): `jobs.finished.total()`.
    pub finished: u64,
    /// Starts of jobs that had started before (requeued by preemption or
    /// `brequeue`).
    pub restarts: u64,
    /// Jobs present at start (the scenario's `[[cluster.job]]`).
    pub bundled: u64,
    /// Every job counted once, by where it came from: started, finished,
    /// killed, and where each stood when the run stopped.
    pub jobs: JobTotals,
    /// `[[action]]`s given.
    pub actions: u64,
    /// `[[action]]`s refused.
    pub actions_refused: u64,
    /// Emulated time at which the run stopped.
    pub end: SimTime,
    /// How far behind emulated time a driver on real time woke a member at
    /// worst, in milliseconds of emulated time (a cluster process: its
    /// timers fire late on a busy machine or at a high `--speed`; in-process
    /// runs are never late).
    #[serde(default)]
    pub lag_max_ms: u64,
    /// The longest a message stamped with its sender's time (a counter
    /// update, a job status) took to arrive, in milliseconds of emulated
    /// time (faults delay messages; a launched run's transport does too).
    #[serde(default)]
    pub delivery_max_ms: u64,
}

impl RunStats {
    /// Adds the counts another recorder made (a launcher gathering its
    /// processes'): every count, each counted once where it happened. The
    /// end-of-run parts of the totals (running, suspended, pending, waiting,
    /// in flight) and `end` are not counts: they come from the end states.
    pub fn merge(&mut self, other: &RunStats) {
        let RunStats {
            events,
            submitted,
            refused,
            messages,
            updates,
            updates_lost,
            updates_ignored,
            update_regressions,
            backlog_overflows,
            decisions,
            forwarded,
            stale_decisions,
            started,
            finished,
            restarts,
            bundled,
            jobs,
            actions,
            actions_refused,
            end: _,
            lag_max_ms,
            delivery_max_ms,
        } = *other;
        self.events += events;
        self.submitted += submitted;
        self.refused += refused;
        self.messages += messages;
        self.updates += updates;
        self.updates_lost += updates_lost;
        self.updates_ignored += updates_ignored;
        self.update_regressions += update_regressions;
        self.backlog_overflows += backlog_overflows;
        self.decisions += decisions;
        self.forwarded += forwarded;
        self.stale_decisions += stale_decisions;
        self.started += started;
        self.finished += finished;
        self.restarts += restarts;
        self.bundled += bundled;
        self.jobs.started += jobs.started;
        self.jobs.finished += jobs.finished;
        self.jobs.killed += jobs.killed;
        self.actions += actions;
        self.actions_refused += actions_refused;
        self.lag_max_ms = self.lag_max_ms.max(lag_max_ms);
        self.delivery_max_ms = self.delivery_max_ms.max(delivery_max_ms);
    }

    /// Counts a job transition of a job that came from `origin`: starts
    /// (first starts, or restarts), ends (DONE, EXIT). The recorder counts
    /// with this, so `started`, `finished` and the totals by origin have
    /// one definition.
    pub fn count_transition(&mut self, origin: Origin, transition: &Transition) {
        match transition.event {
            JobEvent::Started if transition.first_start => {
                self.jobs.started.add(origin);
                self.started += 1;
            }
            JobEvent::Started => self.restarts += 1,
            JobEvent::Finished => {
                self.jobs.finished.add(origin);
                self.finished += 1;
            }
            // EXIT: killed by bkill, at its run limit, or at its closed
            // advance reservation's end.
            JobEvent::Killed | JobEvent::RunLimit | JobEvent::ReservationEnded => {
                self.jobs.killed.add(origin)
            }
            _ => {}
        }
    }
}

/// Counts of jobs by where they came from, each job counted once: where
/// it runs (or pends), by how it got there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ByOrigin {
    /// Present at start.
    pub bundled: u64,
    /// Submitted to a local queue of the cluster it is in.
    pub submitted: u64,
    /// Forwarded there from a submission cluster.
    pub forwarded_in: u64,
}

impl ByOrigin {
    /// Counts one job from `origin`.
    pub fn add(&mut self, origin: Origin) {
        match origin {
            Origin::Bundled => self.bundled += 1,
            Origin::Submitted => self.submitted += 1,
            Origin::ForwardedIn => self.forwarded_in += 1,
        }
    }

    /// All of them.
    pub fn total(&self) -> u64 {
        self.bundled + self.submitted + self.forwarded_in
    }
}

impl std::ops::AddAssign for ByOrigin {
    fn add_assign(&mut self, other: ByOrigin) {
        self.bundled += other.bundled;
        self.submitted += other.submitted;
        self.forwarded_in += other.forwarded_in;
    }
}

/// Every job of a run counted once. What happened (`started`,
/// `finished`, `killed`) and where the jobs stood when the run stopped
/// (`running`, `suspended`, `pending` in a cluster's queues; `waiting` and
/// `in_flight` at their submission clusters) add up: the jobs present at
/// start plus those submitted (and not refused) are
/// `finished + killed + running + suspended + pending + waiting +
/// in_flight`, once nothing is in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JobTotals {
    /// Jobs that started.
    pub started: ByOrigin,
    /// Jobs that finished (DONE).
    pub finished: ByOrigin,
    /// Jobs killed (EXIT).
    pub killed: ByOrigin,
    /// Running at the end.
    pub running: ByOrigin,
    /// Suspended at the end (SSUSP, USUSP).
    pub suspended: ByOrigin,
    /// Pending at the end in a cluster's queue (PEND, PSUSP).
    pub pending: ByOrigin,
    /// Jobs of send queues still at their submission cluster at the end
    /// (waiting to be decided, held, or given up after MAX_FORWARDS).
    pub waiting: u64,
    /// Jobs of send queues forwarded but not yet answered at the end.
    pub in_flight: u64,
}

impl JobTotals {
    /// Every job the totals account for.
    pub fn accounted(&self) -> u64 {
        self.finished.total()
            + self.killed.total()
            + self.running.total()
            + self.suspended.total()
            + self.pending.total()
            + self.waiting
            + self.in_flight
    }
}

//! What a run of a scenario is asked ([`RunOptions`]) and what it produced
//! ([`RunOutput`], [`RunStats`]), whichever engine or launcher ran it.

use mcfed_cluster::Transition;
use mcfed_federation::{GroupState, Origin};
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::JobEvent;
use mcfed_protocol::SimTime;

use crate::probe::{PreemptionRecord, Snapshot};
use crate::records::{EventRecord, RecordRef, UsageRecord};
use mcfed_chaos::ChaosConfig;
use mcfed_scenario::Scenario;

/// What a run produced.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    /// Every decision record, in the order decisions were made.
    pub decisions: Vec<DecisionRecord>,
    /// Job events (with [`RunOptions::events`]).
    pub events: Vec<EventRecord>,
    /// Slot usage samples (with [`RunOptions::events`]).
    pub usage: Vec<UsageRecord>,
    /// The order in which decisions, events and samples happened (with
    /// [`RunOptions::events`]).
    pub order: Vec<RecordRef>,
    /// Per cluster, per initial job group, states after the first pass.
    pub initial_states: Vec<Vec<GroupState>>,
    /// The clusters at each probe time, in time order.
    pub snapshots: Vec<Snapshot>,
    /// Every preemption, in the order they happened.
    pub preemptions: Vec<PreemptionRecord>,
    /// Counts of what happened.
    pub stats: RunStats,
    /// What each workload read and skipped.
    pub workloads: Vec<WorkloadReport>,
    /// Scheduling metrics per cluster and queue (the event loop).
    pub metrics: Option<crate::metrics::RunMetrics>,
    /// Why `jobs.csv` could not be written whole, if it could not.
    pub jobs_csv_error: Option<String>,
    /// What each `[[action]]` did, in the order given.
    pub actions: Vec<ActionRecord>,
}

impl ActionRecord {
    /// `action` done: what it printed.
    pub fn done(action: &mcfed_scenario::model::Action, outcome: String) -> Self {
        Self::with(action, true, outcome)
    }

    /// `action` refused: why (a host action's reason is given with its
    /// host, as `bhosts` commands print it).
    pub fn refused(action: &mcfed_scenario::model::Action, why: String) -> Self {
        let outcome = match &action.action {
            mcfed_scenario::model::ActionKind::Host(_) => format!("Host <{}>: {why}", action.job),
            mcfed_scenario::model::ActionKind::Job(_) => why,
        };
        Self::with(action, false, outcome)
    }

    fn with(action: &mcfed_scenario::model::Action, done: bool, outcome: String) -> Self {
        ActionRecord {
            record: "action".to_owned(),
            time: action.at.as_secs_f64(),
            cluster: action.cluster.to_string(),
            job: action.job.clone(),
            command: action.action.to_string(),
            done,
            outcome,
        }
    }
}

impl ActionRecord {
    /// The job event a refused action leaves in the records (`control
    /// refused`, with why); done ones show as the events they caused.
    pub fn refusal_event(&self) -> Option<crate::records::EventRecord> {
        if self.done {
            return None;
        }
        let mut event = crate::records::EventRecord::new(
            self.time,
            &self.cluster,
            &self.job,
            0,
            "control refused",
        );
        event.detail = Some(format!("{}: {}", self.command, self.outcome));
        Some(event)
    }
}

/// What one `[[action]]` did.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ActionRecord {
    /// Always `action`.
    pub record: String,
    /// Emulated time, in seconds.
    pub time: f64,
    /// The cluster it was given at.
    pub cluster: String,
    /// The job, by name.
    pub job: String,
    /// The command, with its options (`bmod -n 2`).
    pub command: String,
    /// Whether it was done (or sent to the job's execution cluster).
    pub done: bool,
    /// What happened, as the command would print it.
    pub outcome: String,
}

/// What one workload (`[[workload]]`) read: its trace's header, the jobs
/// submitted and those skipped, by reason.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorkloadReport {
    /// The workload's name.
    pub name: String,
    /// The trace file.
    pub file: String,
    /// The trace's header comments (`MaxProcs`, ...).
    pub header: Vec<(String, String)>,
    /// Jobs submitted.
    pub submitted: u64,
    /// Jobs skipped.
    pub skipped: mcfed_trace::workload::Skipped,
    /// The first malformed line, if any.
    pub first_error: Option<String>,
}

impl WorkloadReport {
    /// The report of workload `spec`: its trace's header comments, the jobs
    /// submitted and skipped, the first malformed line.
    pub fn new(
        spec: &mcfed_trace::workload::WorkloadSpec,
        header: &[(String, String)],
        submitted: u64,
        skipped: mcfed_trace::workload::Skipped,
        first_error: Option<&str>,
    ) -> Self {
        WorkloadReport {
            name: spec.name.clone(),
            file: spec.swf.display().to_string(),
            header: header.to_vec(),
            submitted,
            skipped,
            first_error: first_error.map(str::to_owned),
        }
    }
}

impl RunOutput {
    /// The snapshot taken at `at`.
    pub fn snapshot_at(&self, at: SimTime) -> Option<&Snapshot> {
        self.snapshots
            .iter()
            .find(|snapshot| snapshot.time == at.as_secs_f64())
    }
}

/// How to run a scenario: when it ends, what it looks at on the way, and
/// what it injects and records.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Stop here if earlier than the scenario's end.
    pub until: Option<SimTime>,
    /// Extra times to take snapshots at (besides the expectations'); the
    /// run goes on to the last of them even past the scenario's end.
    pub probes: Vec<SimTime>,
    /// Faults to inject (`None`: the scenario's own `[chaos]`, if any).
    pub chaos: Option<ChaosConfig>,
    /// Compare every decision with the oracle's.
    pub oracle: bool,
    /// Record job events and slot usage.
    pub events: bool,
    /// Count decisions without keeping their records (long replays that
    /// only need the totals; see [`RunStats`]).
    pub count_only: bool,
    /// Run until no work is left (nothing to submit or deliver, no job
    /// running, no wake-up due, and no held job released by a further
    /// round of counter updates) instead of stopping at the scenario's end;
    /// `until` still caps it.
    pub drain: bool,
    /// Write Batsim's `jobs.csv` here as jobs finish.
    pub jobs_csv: Option<std::path::PathBuf>,
}

impl RunOptions {
    /// Every probe time of `scenario` and this plan, sorted, and the time
    /// the run ends.
    pub fn resolve(&self, scenario: &Scenario) -> (Vec<SimTime>, SimTime) {
        let mut probes = scenario.probe_times();
        probes.extend(self.probes.iter().copied());
        probes.sort_unstable();
        probes.dedup();
        let last_extra = self.probes.iter().copied().max().unwrap_or(SimTime::ZERO);
        let end = if self.drain || scenario.drain {
            SimTime::MAX
        } else {
            scenario.end.max(last_extra)
        };
        let end = self.until.map_or(end, |until| until.min(end));
        probes.retain(|&at| at <= end);
        (probes, end)
    }
}

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
            // EXIT: killed by bkill, or at its run limit.
            JobEvent::Killed | JobEvent::RunLimit => self.jobs.killed.add(origin),
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

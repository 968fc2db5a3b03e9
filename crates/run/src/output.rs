//! What a run of a scenario is asked ([`RunOptions`]) and what it produced
//! ([`RunOutput`]), whichever engine or launcher ran it.

use mcfed_chaos::ChaosConfig;
use mcfed_federation::GroupState;
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::SimTime;
use mcfed_scenario::Scenario;

use crate::probe::{PreemptionRecord, Snapshot};
use crate::records::{
    ActionRecord, EventRecord, RecordRef, SummaryRecord, UsageRecord, WorkloadReport,
};
use crate::stats::RunStats;

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
    /// Why the lsb.acct logs could not be written whole, if they could
    /// not.
    pub lsb_acct_error: Option<String>,
    /// What each `[[action]]` did, in the order given.
    pub actions: Vec<ActionRecord>,
    /// Whether the run took the snapshots its expectations look at (the
    /// in-process engines do; a launched run does not).
    pub snapshots_taken: bool,
    /// How far each cluster's process fell behind emulated time (launched
    /// runs).
    pub lags: Vec<crate::records::ClusterLag>,
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
    /// Write each cluster's lsb.acct under this directory as jobs finish
    /// ([`crate::lsb_acct`]).
    pub lsb_acct: Option<std::path::PathBuf>,
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

impl RunOutput {
    /// The run's summary record, if it measured metrics.
    pub fn summary(&self) -> Option<SummaryRecord> {
        let metrics = self.metrics.clone()?;
        let stats = &self.stats;
        Some(SummaryRecord {
            record: "summary".to_owned(),
            end: stats.end.as_secs_f64(),
            submitted: stats.submitted,
            refused: stats.refused,
            started: stats.started,
            finished: stats.finished,
            bundled: stats.bundled,
            restarts: stats.restarts,
            decisions: stats.decisions,
            forwarded: stats.forwarded,
            stale_decisions: stats.stale_decisions,
            jobs: stats.jobs,
            actions: self.actions.clone(),
            metrics,
            workloads: self.workloads.clone(),
            lag: self.lags.clone(),
        })
    }
}

//! The records a run writes besides decisions, for `--events` and
//! `mcfed report`: what happened to each job, and slots in use over time.
//!
//! Every record is one JSON object per line with a `record` field saying
//! its kind: `decision` ([`mcfed_forwarder::DecisionRecord`]), `event`
//! ([`EventRecord`]) or `usage` ([`UsageRecord`]). The field names are a
//! public contract: add fields, never rename them.

use mcfed_scenario::Scenario;
use serde::{Deserialize, Serialize};

/// The last line of a run's JSON records (when the run measured them):
/// the run's totals, its metrics per cluster and queue, and what each
/// workload read — what `--report summary` prints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryRecord {
    /// Always `summary`.
    pub record: String,
    /// Emulated time at which the run stopped, in seconds.
    pub end: f64,
    /// Jobs submitted.
    pub submitted: u64,
    /// Submissions refused.
    pub refused: u64,
    /// Jobs that started (each once).
    pub started: u64,
    /// Jobs finished.
    pub finished: u64,
    /// Jobs present at start.
    #[serde(default)]
    pub bundled: u64,
    /// Starts of jobs that had started before.
    #[serde(default)]
    pub restarts: u64,
    /// Forwarding decisions made.
    #[serde(default)]
    pub decisions: u64,
    /// Decisions that forwarded a job.
    #[serde(default)]
    pub forwarded: u64,
    /// Decisions the oracle marked stale.
    #[serde(default)]
    pub stale_decisions: u64,
    /// Every job counted once, by origin (see [`crate::stats::JobTotals`]).
    #[serde(default)]
    pub jobs: crate::stats::JobTotals,
    /// What each `[[action]]` did.
    #[serde(default)]
    pub actions: Vec<ActionRecord>,
    /// Metrics per cluster and queue.
    pub metrics: crate::metrics::RunMetrics,
    /// What each workload read and skipped.
    pub workloads: Vec<WorkloadReport>,
    /// How far each cluster's process fell behind emulated time at worst
    /// (launched runs only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lag: Vec<ClusterLag>,
}

/// How far one cluster's process fell behind emulated time at worst: its
/// timers fired this much (emulated) time late. Past a fraction of the
/// smallest update interval ([`FAITHFUL_LAG`]), a launched run's decisions
/// may differ from `mcfed run`'s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusterLag {
    /// The cluster.
    pub cluster: String,
    /// The worst lag of its timers, in emulated seconds.
    pub max_lag: f64,
    /// The longest a message stamped with its sender's time took to reach
    /// it, in emulated seconds (faults add their delays).
    #[serde(default)]
    pub max_delivery: f64,
}

impl ClusterLag {
    /// How far behind it fell: its timers' lag, and, in a run without
    /// faults (whose delays are meant), its messages' delay.
    pub fn behind(&self, faults: bool) -> f64 {
        if faults {
            self.max_lag
        } else {
            self.max_lag.max(self.max_delivery)
        }
    }
}

/// The fraction of the smallest MC_PLUGIN_UPDATE_INTERVAL a launched run's
/// processes may fall behind emulated time before it warns that its
/// decisions may differ from `mcfed run`'s. Two events at different
/// clusters closer together than the lag may be taken in the other order
/// (a job's end reported after a submission it preceded), so the bound is
/// tight: 2 % (0.6 s of a 30 s interval); a run whose events are further
/// apart than its lag decides as `mcfed run` does.
pub const FAITHFUL_LAG: f64 = 0.02;

/// The clusters of `lags` that fell behind ([`ClusterLag::behind`]) by
/// more than [`FAITHFUL_LAG`] of `smallest_interval`, worst first.
pub fn unfaithful(
    lags: &[ClusterLag],
    smallest_interval: std::time::Duration,
    faults: bool,
) -> Vec<&ClusterLag> {
    let bound = smallest_interval.as_secs_f64() * FAITHFUL_LAG;
    let mut late: Vec<&ClusterLag> = lags
        .iter()
        .filter(|lag| lag.behind(faults) > bound)
        .collect();
    late.sort_by(|a, b| b.behind(faults).total_cmp(&a.behind(faults)));
    late
}

/// The first line of a run's records: what was run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Always `run`.
    pub record: String,
    /// The scenario's name.
    pub scenario: String,
    /// The scenario's seed.
    pub seed: u64,
    /// The longest MC_PLUGIN_UPDATE_INTERVAL of the run, in seconds.
    pub update_interval: f64,
    /// Each submission cluster's MC_PLUGIN_SCHEDULE_ENHANCE.
    pub modes: Vec<String>,
    /// Whether faults were injected.
    pub chaos: bool,
}

impl RunRecord {
    /// The record that heads this scenario's JSON lines.
    pub fn of(scenario: &Scenario, chaos: bool) -> RunRecord {
        let update_interval = scenario
            .clusters
            .iter()
            .filter_map(|spec| spec.config.update_interval)
            .max()
            .unwrap_or_default();
        RunRecord {
            record: "run".to_owned(),
            scenario: scenario.name.clone(),
            seed: scenario.seed,
            update_interval: update_interval.as_secs_f64(),
            modes: scenario
                .clusters
                .iter()
                .filter_map(|spec| spec.forwarder.as_ref())
                .map(|forwarder| forwarder.mode.to_string())
                .collect(),
            chaos,
        }
    }
}

/// Something that happened to a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Always `event`.
    pub record: String,
    /// Emulated time, in seconds.
    pub time: f64,
    /// The cluster where it happened.
    pub cluster: String,
    /// The job's name.
    pub job: String,
    /// The job's id in `cluster`.
    pub job_id: u64,
    /// `submitted`, `accepted`, `refused`, `returned`, `lost`, `started`,
    /// `suspended`, `resumed`, `requeued`, `finished`; with job control,
    /// `killed`, `stopped`, `held`, `released`, `switched`, `modified`, and
    /// at a submission cluster `control` / `control refused` (an execution
    /// cluster's answer to a command sent there).
    pub event: String,
    /// The queue, when known.
    pub queue: Option<String>,
    /// For a forwarded job: its submission cluster.
    pub source_cluster: Option<String>,
    /// For a forwarded job: its id at the submission cluster.
    pub source_job_id: Option<u64>,
    /// More about it (a refusal's reason, ...).
    pub detail: Option<String>,
}

impl EventRecord {
    /// An event with no queue, source or detail yet.
    pub fn new(time: f64, cluster: &str, job: &str, job_id: u64, event: &str) -> Self {
        EventRecord {
            record: "event".to_owned(),
            time,
            cluster: cluster.to_owned(),
            job: job.to_owned(),
            job_id,
            event: event.to_owned(),
            queue: None,
            source_cluster: None,
            source_job_id: None,
            detail: None,
        }
    }

    /// The event of a job transition in `cluster` (started, suspended,
    /// resumed, requeued, finished, and the job control events killed,
    /// stopped, held, released, switched, modified); a preemption's detail
    /// names the preempting job (named from `preemptions`, the notes of the
    /// same batch). Both the event loop and cluster processes
    /// write these.
    pub fn of_transition(
        cluster: &str,
        transition: &mcfed_cluster::Transition,
        preemptions: &[mcfed_cluster::PreemptionNote],
    ) -> Self {
        let mut record = EventRecord::new(
            transition.at.as_secs_f64(),
            cluster,
            &transition.name,
            transition.job.0,
            transition.event.as_str(),
        );
        record.queue = Some(transition.queue.to_string());
        record.detail = transition.preempted_by.map(|by| {
            let name = preemptions
                .iter()
                .find(|note| note.victim == transition.job && note.at == transition.at)
                .map(|note| format!("{} (job {by})", note.preemptor_name))
                .unwrap_or_else(|| format!("job {by}"));
            format!("preempted by {name}")
        });
        if let mcfed_cluster::JobOrigin::Forwarded { from, source_job } = &transition.origin {
            record.source_cluster = Some(from.to_string());
            record.source_job_id = Some(*source_job);
        }
        record
    }

    /// The event of what submission cluster `cluster`'s forwarder heard
    /// about one of its jobs at `time` (accepted, refused, returned, lost).
    pub fn of_notice(time: f64, cluster: &str, notice: &mcfed_federation::JobNotice) -> Self {
        let mut record = EventRecord::new(
            time,
            cluster,
            &notice.name,
            notice.source_job,
            notice.kind.as_str(),
        );
        record.source_cluster = Some(cluster.to_owned());
        record.source_job_id = Some(notice.source_job);
        record.detail = Some(match &notice.reason {
            Some(reason) => format!("{}: {reason}", notice.from),
            None => notice.from.to_string(),
        });
        record
    }
}

/// Slots in use in one cluster at one time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UsageRecord {
    /// Always `usage`.
    pub record: String,
    /// Emulated time, in seconds.
    pub time: f64,
    /// The cluster.
    pub cluster: String,
    /// Slots running jobs.
    pub slots_in_use: u64,
    /// Slots on open hosts.
    pub total_slots: u64,
}

/// Where a record sits in a run's output vectors: runs write decisions,
/// events and usage samples to separate lists, and this keeps the order in
/// which they happened across the lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordRef {
    /// The decision at this index.
    Decision(usize),
    /// The event at this index.
    Event(usize),
    /// The usage sample at this index.
    Usage(usize),
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
            mcfed_scenario::model::ActionKind::Job(_)
            | mcfed_scenario::model::ActionKind::ReservationAdd { .. }
            | mcfed_scenario::model::ActionKind::ReservationDelete { .. } => why,
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
    pub fn refusal_event(&self) -> Option<EventRecord> {
        if self.done {
            return None;
        }
        let mut event = EventRecord::new(self.time, &self.cluster, &self.job, 0, "control refused");
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
    /// Jobs read from the trace and handed to the federation (the run's
    /// `submitted` and `refused` say how many were taken).
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

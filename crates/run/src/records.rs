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
    /// Every job counted once, by origin (see [`crate::output::JobTotals`]).
    #[serde(default)]
    pub jobs: crate::output::JobTotals,
    /// What each `[[action]]` did.
    #[serde(default)]
    pub actions: Vec<crate::output::ActionRecord>,
    /// Metrics per cluster and queue.
    pub metrics: crate::metrics::RunMetrics,
    /// What each workload read and skipped.
    pub workloads: Vec<crate::output::WorkloadReport>,
}

impl SummaryRecord {
    /// The summary of `output`, if the run measured metrics.
    pub fn of(output: &crate::RunOutput) -> Option<SummaryRecord> {
        let metrics = output.metrics.clone()?;
        let stats = &output.stats;
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
            actions: output.actions.clone(),
            metrics,
            workloads: output.workloads.clone(),
        })
    }
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

//! What happened to each job, step by step: for a job of a send queue,
//! submitted, decided (forwarded where and why, or pending), refused or
//! returned, accepted, started, suspended, finished; for a job of a local
//! queue (present at start, or submitted), started, preempted (suspended
//! or requeued, and by which job), resumed, finished, and the job control
//! commands (stopped, killed, ...).

use std::collections::BTreeMap;

use mcfed_forwarder::{DecisionRecord, OutcomeKind};
use mcfed_run::records::{EventRecord, RecordRef};
use serde::{Deserialize, Serialize};

use crate::input::Records;

/// One step of a job's life.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Emulated time, in seconds.
    pub time: f64,
    /// Where it happened.
    pub cluster: String,
    /// What happened, in words.
    pub what: String,
}

/// A job's life, from its submission cluster's point of view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobTimeline {
    /// The submission cluster.
    pub cluster: String,
    /// The job's id there.
    pub job_id: u64,
    /// The job's name.
    pub job: String,
    /// When it was submitted, if the records say.
    pub submitted: Option<f64>,
    /// Where and when it first started, if it did.
    pub started: Option<(String, f64)>,
    /// Every step, in time order.
    pub steps: Vec<Step>,
    /// Whether it is a job of a local queue (no forwarding story).
    #[serde(default)]
    pub local: bool,
}

/// The timelines of every job, ordered by cluster and job id: every job
/// with a forwarding decision (under its submission cluster, with what
/// happened to it where it was forwarded), and every job of a local queue
/// with a recorded event (`local`).
pub fn timelines(records: &Records) -> Vec<JobTimeline> {
    let mut jobs: BTreeMap<(String, u64), JobTimeline> = BTreeMap::new();
    // Every job with a decision has a timeline.
    for decision in &records.decisions {
        jobs.entry((decision.cluster.clone(), decision.job_id))
            .or_insert_with(|| JobTimeline {
                cluster: decision.cluster.clone(),
                job_id: decision.job_id,
                job: decision.job.clone(),
                submitted: None,
                started: None,
                steps: Vec::new(),
                local: false,
            });
    }
    let order: Vec<RecordRef> = if records.order.is_empty() {
        (0..records.decisions.len())
            .map(RecordRef::Decision)
            .chain((0..records.events.len()).map(RecordRef::Event))
            .collect()
    } else {
        records.order.clone()
    };
    for reference in order {
        match reference {
            RecordRef::Decision(index) => decision_step(&mut jobs, &records.decisions[index]),
            RecordRef::Event(index) => event_step(&mut jobs, &records.events[index]),
            RecordRef::Usage(_) => {}
        }
    }
    jobs.into_values()
        .map(|mut timeline| {
            // Stable: records at the same time keep the order they happened in.
            timeline.steps.sort_by(|a, b| a.time.total_cmp(&b.time));
            timeline
        })
        .collect()
}

fn decision_step(jobs: &mut BTreeMap<(String, u64), JobTimeline>, decision: &DecisionRecord) {
    let Some(timeline) = jobs.get_mut(&(decision.cluster.clone(), decision.job_id)) else {
        return;
    };
    let what = match decision.outcome {
        OutcomeKind::Forwarded => format!(
            "forwarded to {} ({})",
            decision.target.as_deref().unwrap_or("?"),
            decision.reason
        ),
        OutcomeKind::Pending => format!("pending ({})", decision.reason),
    };
    let stale = match &decision.oracle {
        Some(oracle) if oracle.stale => format!(
            " [stale: the true counters pick {}]",
            oracle.target.as_deref().unwrap_or("pending")
        ),
        _ => String::new(),
    };
    timeline.steps.push(Step {
        time: decision.time,
        cluster: decision.cluster.clone(),
        what: format!("{what}{stale}"),
    });
}

fn event_step(jobs: &mut BTreeMap<(String, u64), JobTimeline>, event: &EventRecord) {
    // Events about jobs of send queues carry their source, and name the
    // job by its id at the submission cluster; the others are about jobs
    // of the cluster's local queues (job 0: a refused command about no
    // job found).
    let (cluster, job_id) = match (&event.source_cluster, event.source_job_id) {
        (Some(cluster), Some(job_id)) => (cluster, job_id),
        _ if event.job_id == 0 => return,
        _ => (&event.cluster, event.job_id),
    };
    let local = event.source_cluster.is_none();
    let timeline = match jobs.entry((cluster.clone(), job_id)) {
        std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
        std::collections::btree_map::Entry::Vacant(_) if !local => return,
        std::collections::btree_map::Entry::Vacant(entry) => entry.insert(JobTimeline {
            cluster: cluster.clone(),
            job_id,
            job: event.job.clone(),
            submitted: None,
            started: None,
            steps: Vec::new(),
            local: true,
        }),
    };
    match event.event.as_str() {
        "submitted" => timeline.submitted = Some(event.time),
        "started" if timeline.started.is_none() => {
            timeline.started = Some((event.cluster.clone(), event.time));
        }
        _ => {}
    }
    let detail = event
        .detail
        .as_ref()
        .map(|detail| format!(" ({detail})"))
        .unwrap_or_default();
    let place = if &event.cluster == cluster {
        String::new()
    } else {
        format!(" at {} as job {}", event.cluster, event.job_id)
    };
    timeline.steps.push(Step {
        time: event.time,
        cluster: event.cluster.clone(),
        what: format!("{}{place}{detail}", event.event),
    });
}

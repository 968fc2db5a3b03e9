//! Looking at a running federation: snapshots of every cluster's queues
//! (and of the jobs expectations watch) at given times, and the record of
//! every preemption. Both engines take them the same way, through the
//! functions here, so their outputs compare equal.

use mcfed_cluster::{Cluster, ClusterReport, JobState, PreemptionNote};
use mcfed_protocol::{ClusterName, SimTime};
use serde::Serialize;

/// Every cluster at one time, after everything that happened at that
/// instant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Snapshot {
    /// When, in seconds.
    pub time: f64,
    /// The clusters, in scenario order.
    pub clusters: Vec<ClusterSnapshot>,
}

impl Snapshot {
    /// The snapshot of the cluster named `name`.
    pub fn cluster(&self, name: &str) -> Option<&ClusterSnapshot> {
        self.clusters
            .iter()
            .find(|snapshot| snapshot.report.cluster == name)
    }
}

/// One cluster at one time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterSnapshot {
    /// Its queues, as `bqueues -l` shows them.
    pub report: ClusterReport,
    /// The watched jobs it holds (a finished job is no longer there).
    pub jobs: Vec<JobSnapshot>,
}

/// One job at one time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobSnapshot {
    /// Its name.
    pub name: String,
    /// Its state (`PEND`, `RUN`, `SSUSP`).
    pub state: String,
    /// Why it pends, if it does.
    pub reason: Option<String>,
}

/// A job preempted during a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PreemptionRecord {
    /// When, in seconds.
    pub time: f64,
    /// The cluster.
    pub cluster: String,
    /// The preempted job.
    pub victim: String,
    /// The job that preempted it.
    pub preempted_by: String,
    /// `suspended`, or `requeued` (TERMINATE_WHEN=PREEMPT).
    pub action: String,
}

impl PreemptionRecord {
    /// The record of one preemption in `cluster`.
    pub fn new(cluster: &ClusterName, note: &PreemptionNote) -> Self {
        PreemptionRecord {
            time: note.at.as_secs_f64(),
            cluster: cluster.to_string(),
            victim: note.victim_name.clone(),
            preempted_by: note.preemptor_name.clone(),
            action: if note.requeued {
                "requeued"
            } else {
                "suspended"
            }
            .to_owned(),
        }
    }
}

/// `cluster` at `at`, with the state of the jobs named in `watched`.
pub fn snapshot(cluster: &Cluster, at: SimTime, watched: &[String]) -> ClusterSnapshot {
    let mut jobs: Vec<JobSnapshot> = if watched.is_empty() {
        Vec::new()
    } else {
        cluster
            .jobs()
            .filter(|job| watched.iter().any(|name| **name == *job.spec.name))
            .map(|job| JobSnapshot {
                name: job.spec.name.to_string(),
                state: job.state.as_str().to_owned(),
                reason: (job.state == JobState::Pending)
                    .then(|| cluster.pending_reason(job).describe().to_owned()),
            })
            .collect()
    };
    jobs.sort_by(|a, b| a.name.cmp(&b.name));
    ClusterSnapshot {
        report: cluster.report(at),
        jobs,
    }
}

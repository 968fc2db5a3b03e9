//! Looking at a running federation: snapshots of every cluster's queues
//! (and of the jobs expectations watch) at given times, and the record of
//! every preemption. Both engines take them the same way, through the
//! functions here, so their outputs compare equal.

use mcfed_cluster::{ClusterReport, JobState, PreemptionNote};
use mcfed_federation::history::{GONE, RecordOrigin};
use mcfed_federation::{Member, Route};
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

/// What a run looks at in one cluster besides its queues: jobs (their
/// states and APS values) and queues (their dispatch orders) that
/// expectations name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Watched {
    /// Job names.
    pub jobs: Vec<String>,
    /// Queue names.
    pub queues: Vec<String>,
}

/// One cluster at one time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClusterSnapshot {
    /// Its queues, as `bqueues -l` shows them.
    pub report: ClusterReport,
    /// The watched jobs it holds (a finished job is no longer there).
    pub jobs: Vec<JobSnapshot>,
    /// The watched queues' dispatch orders (job names, first first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub orders: Vec<QueueOrder>,
}

/// The order in which the next dispatch pass would try a queue's pending
/// jobs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QueueOrder {
    /// The queue.
    pub queue: String,
    /// Its pending jobs (and running jobs' resize requests), by name; for
    /// a send queue, its waiting jobs in the order the next forwarding
    /// session decides them; `None` for a fairshare queue without APS (it
    /// picks as it goes).
    pub jobs: Option<Vec<String>>,
}

/// A pending job's APS value, as `bjobs -aps` and `-prio` show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApsSnapshot {
    /// As `bjobs -aps` prints it: `(10)`, `109.00` or `-`.
    pub shown: String,
    /// The value (system or calculated), if it has one.
    pub value: Option<f64>,
    /// `system`, `calculated` or `none`.
    pub kind: String,
    /// Its JPRIORITY.
    pub jpriority: u32,
}

/// One job at one time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobSnapshot {
    /// Its name.
    pub name: String,
    /// Its state (`PEND`, `RUN`, `SSUSP`, `USUSP`, `PSUSP`; `DONE` or
    /// `EXIT` when the run keeps a history).
    pub state: String,
    /// Why it pends, if it does.
    pub reason: Option<String>,
    /// Its APS value, if it pends (or is running with a resize request)
    /// in an APS queue of this cluster's scheduler, or waits here in an
    /// APS send queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aps: Option<ApsSnapshot>,
}

impl ApsSnapshot {
    fn of(entry: &mcfed_cluster::ApsEntry) -> Self {
        let kind = match entry.shown {
            mcfed_cluster::ApsShown::System(_) => "system",
            mcfed_cluster::ApsShown::Calculated(_) => "calculated",
            mcfed_cluster::ApsShown::None => "none",
        };
        ApsSnapshot {
            shown: entry.shown.render(),
            value: entry.shown.value(),
            kind: kind.to_owned(),
            jpriority: entry.jpriority,
        }
    }
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

/// The order in which `member` would next try the pending jobs of
/// `queue` at `at`, by name: its scheduler's dispatch order, or for a send
/// queue its forwarder's (the order the next session decides its waiting
/// jobs in).
fn queue_order(member: &Member, queue: &str, at: SimTime) -> Option<Vec<String>> {
    if member.route(queue) == Route::Forward {
        let forwarder = member.forwarder()?;
        let order = member.forwarding_order(queue, at)?;
        return Some(
            order
                .into_iter()
                .filter_map(|id| forwarder.job(id).map(|job| job.spec.name.to_string()))
                .collect(),
        );
    }
    let cluster = member.cluster();
    let order = cluster.dispatch_order(cluster.queue_index(queue)?, at)?;
    Some(
        order
            .into_iter()
            .filter_map(|id| cluster.job(id).map(|job| job.spec.name.to_string()))
            .collect(),
    )
}

/// `member`'s cluster at `at`, with the state of the jobs named in
/// `watched`: those its scheduler holds, then those of its send queues it
/// still holds, then — when it keeps a history — those that ended (DONE,
/// EXIT).
pub fn snapshot(member: &Member, at: SimTime, watched: &Watched) -> ClusterSnapshot {
    let cluster = member.cluster();
    let mut jobs: Vec<JobSnapshot> = Vec::new();
    let orders = watched
        .queues
        .iter()
        .map(|queue| QueueOrder {
            queue: queue.clone(),
            jobs: queue_order(member, queue, at),
        })
        .collect();
    let watched = &watched.jobs;
    if !watched.is_empty() {
        jobs.extend(
            cluster
                .jobs()
                .filter(|job| watched.iter().any(|name| **name == *job.spec.name))
                .map(|job| JobSnapshot {
                    name: job.spec.name.to_string(),
                    state: job.state.as_str().to_owned(),
                    reason: (job.state == JobState::Pending)
                        .then(|| cluster.pending_reason(job).describe().to_owned()),
                    aps: cluster.aps_entry(job.id, at).as_ref().map(ApsSnapshot::of),
                }),
        );
        let seen = |jobs: &[JobSnapshot], name: &str| jobs.iter().any(|job| job.name == name);
        if let Some(forwarder) = member.forwarder() {
            for job in forwarder.jobs() {
                let held_here = job.remote_queue().is_none();
                if held_here && watched.iter().any(|name| **name == *job.spec.name) {
                    jobs.push(JobSnapshot {
                        name: job.spec.name.to_string(),
                        state: job.state.as_str().to_owned(),
                        reason: None,
                        aps: member
                            .send_queue_aps(job.id, at)
                            .as_ref()
                            .map(ApsSnapshot::of),
                    });
                }
            }
        }
        if let Some(history) = member.history() {
            for record in history.jobs() {
                let ended = record.has_ended() && record.state != GONE;
                let name = &*record.spec.name;
                let remote = record.origin == RecordOrigin::Sent && record.forwarded.is_some();
                if ended
                    && !remote
                    && watched.iter().any(|watched| watched == name)
                    && !seen(&jobs, name)
                {
                    jobs.push(JobSnapshot {
                        name: name.to_owned(),
                        state: record.state.to_owned(),
                        reason: None,
                        aps: None,
                    });
                }
            }
        }
    }
    jobs.sort_by(|a, b| a.name.cmp(&b.name));
    ClusterSnapshot {
        report: member.report(at),
        jobs,
        orders,
    }
}

//! The end of a run's metrics: each cluster's slots, and the jobs that
//! never started (still pending in a queue, or held by a forwarder). Every
//! driver uses it: the event loop and the actor engine with their members
//! at hand, the launcher with each process's [`EndState`] sent to it.

use mcfed_federation::Member;
use mcfed_forwarder::SourceState;
use mcfed_protocol::{ClusterName, SimTime};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{MAX_LISTED_NEVER_STARTED, MetricsRecorder, NeverStarted, RunMetrics};
use crate::stats::JobTotals;

/// What one member holds at the end of a run: its name, its slots, and its
/// jobs still pending, per queue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EndState {
    name: ClusterName,
    slots: u64,
    pending: FxHashMap<String, u64>,
    listed: Vec<NeverStarted>,
    /// Where its jobs stand (the end-of-run parts of the totals).
    jobs: JobTotals,
}

impl EndState {
    /// The member's cluster.
    pub fn cluster(&self) -> &ClusterName {
        &self.name
    }
}

/// `member`'s [`EndState`].
pub fn end_state(member: &Member) -> EndState {
    let cluster = member.cluster();
    let name = member.name().to_string();
    let mut pending: FxHashMap<String, u64> = FxHashMap::default();
    let mut listed = Vec::new();
    let mut note = |queue: &str, job: &str, reason: &str| {
        *pending.entry(queue.to_owned()).or_default() += 1;
        if listed.len() < MAX_LISTED_NEVER_STARTED {
            listed.push(NeverStarted {
                cluster: name.clone(),
                queue: queue.to_owned(),
                job: job.to_owned(),
                reason: reason.to_owned(),
            });
        }
    };
    let mut jobs = JobTotals::default();
    for job in cluster.jobs() {
        let origin = member.job_origin(job);
        match job.state {
            mcfed_cluster::JobState::Pending => {
                jobs.pending.add(origin);
                let queue = cluster.queue_config(job.queue).name.as_str();
                let reason = cluster.pending_reason(job).describe();
                if job.started_at.is_none() {
                    note(queue, &job.spec.name, reason);
                }
            }
            mcfed_cluster::JobState::PendingSuspended => jobs.pending.add(origin),
            mcfed_cluster::JobState::Running => jobs.running.add(origin),
            _ => jobs.suspended.add(origin),
        }
    }
    if let Some(forwarder) = member.forwarder() {
        for job in forwarder.jobs() {
            let reason = match job.state {
                SourceState::Waiting => job.waiting_reason(),
                SourceState::GaveUp => {
                    "Forwarded MAX_FORWARDS times; pending at the submission cluster"
                }
                SourceState::Held => "Held at the submission cluster by bstop",
                SourceState::Forwarded { .. } => {
                    jobs.in_flight += 1;
                    continue;
                }
                _ => continue,
            };
            jobs.waiting += 1;
            let queue = forwarder.send_queue_name(job.send_queue_index()).as_str();
            note(queue, &job.spec.name, reason);
        }
    }
    listed.sort_by(|a, b| (&a.queue, &a.job).cmp(&(&b.queue, &b.job)));
    EndState {
        name: member.name().clone(),
        slots: cluster.slot_usage().1,
        pending,
        listed,
        jobs,
    }
}

/// Adds where the members' jobs stand to the run's totals.
pub fn add_end_totals(totals: &mut JobTotals, states: &[EndState]) {
    for state in states {
        totals.running += state.jobs.running;
        totals.suspended += state.jobs.suspended;
        totals.pending += state.jobs.pending;
        totals.waiting += state.jobs.waiting;
        totals.in_flight += state.jobs.in_flight;
    }
}

/// Finishes `metrics` with the members' end states, the run having
/// stopped at `end`.
pub fn finish(metrics: MetricsRecorder, states: Vec<EndState>, end: SimTime) -> RunMetrics {
    let slots: Vec<(ClusterName, u64)> = states
        .iter()
        .map(|state| (state.name.clone(), state.slots))
        .collect();
    let mut listed: Vec<NeverStarted> = states
        .iter()
        .flat_map(|state| state.listed.iter().cloned())
        .take(MAX_LISTED_NEVER_STARTED)
        .collect();
    let mut pending: Vec<(ClusterName, String, u64)> = states
        .into_iter()
        .flat_map(|state| {
            let name = state.name;
            state
                .pending
                .into_iter()
                .map(move |(queue, count)| (name.clone(), queue, count))
        })
        .collect();
    pending.sort();
    let mut metrics = metrics.finish(&slots, &pending, end);
    metrics.never_started = std::mem::take(&mut listed);
    metrics
}

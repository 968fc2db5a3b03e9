//! The end of a run's metrics: each cluster's slots, and the jobs that
//! never started (still pending in a queue, or held by a forwarder).

use mcfed_federation::Member;
use mcfed_forwarder::SourceState;
use mcfed_protocol::ClusterName;
use mcfed_scenario::metrics::{
    MAX_LISTED_NEVER_STARTED, MetricsRecorder, NeverStarted, RunMetrics,
};
use rustc_hash::FxHashMap;

/// What one member holds at the end of a run: its name, its slots, and its
/// jobs still pending, per queue.
pub(crate) struct EndState {
    name: ClusterName,
    slots: u64,
    pending: FxHashMap<String, u64>,
    listed: Vec<NeverStarted>,
}

/// `member`'s [`EndState`].
pub(crate) fn end_state(member: &Member) -> EndState {
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
    for job in cluster.jobs() {
        if job.state == mcfed_cluster::JobState::Pending {
            let queue = cluster.queue_config(job.queue).name.as_str();
            note(
                queue,
                &job.spec.name,
                cluster.pending_reason(job).describe(),
            );
        }
    }
    if let Some(forwarder) = member.forwarder() {
        for job in forwarder.jobs() {
            let reason = match job.state {
                SourceState::Waiting => "Waiting at the submission cluster for a remote queue",
                SourceState::GaveUp => {
                    "Forwarded MAX_FORWARDS times; pending at the submission cluster"
                }
                _ => continue,
            };
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
    }
}

/// Finishes `metrics` with the members' end states.
pub(crate) fn finish(metrics: MetricsRecorder, states: Vec<EndState>) -> RunMetrics {
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
    let mut metrics = metrics.finish(&slots, &pending);
    metrics.never_started = std::mem::take(&mut listed);
    metrics
}

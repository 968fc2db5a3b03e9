//! The end of a run's metrics: each cluster's slots, and the jobs that
//! never started (still pending in a queue, or held by a forwarder).

use mcfed_federation::Member;
use mcfed_forwarder::SourceState;
use mcfed_protocol::ClusterName;
use mcfed_scenario::metrics::{MetricsRecorder, RunMetrics};
use rustc_hash::FxHashMap;

/// What one member holds at the end of a run: its name, its slots, and its
/// jobs still pending, per queue.
pub(crate) struct EndState {
    name: ClusterName,
    slots: u64,
    pending: FxHashMap<String, u64>,
}

/// `member`'s [`EndState`].
pub(crate) fn end_state(member: &Member) -> EndState {
    let cluster = member.cluster();
    let mut pending: FxHashMap<String, u64> = FxHashMap::default();
    for job in cluster.jobs() {
        if job.state == mcfed_cluster::JobState::Pending {
            let queue = cluster.queue_config(job.queue).name.to_string();
            *pending.entry(queue).or_default() += 1;
        }
    }
    if let Some(forwarder) = member.forwarder() {
        for job in forwarder.jobs() {
            if matches!(job.state, SourceState::Waiting | SourceState::GaveUp) {
                let queue = forwarder
                    .send_queue_name(job.send_queue_index())
                    .to_string();
                *pending.entry(queue).or_default() += 1;
            }
        }
    }
    EndState {
        name: member.name().clone(),
        slots: cluster.slot_usage().1,
        pending,
    }
}

/// Finishes `metrics` with the members' end states.
pub(crate) fn finish(metrics: MetricsRecorder, states: Vec<EndState>) -> RunMetrics {
    let slots: Vec<(ClusterName, u64)> = states
        .iter()
        .map(|state| (state.name.clone(), state.slots))
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
    metrics.finish(&slots, &pending)
}

//! The end of a run's metrics: each cluster's slots, and the jobs that
//! never started (still pending in a queue, or held by a forwarder).

use mcfed_forwarder::SourceState;
use mcfed_protocol::ClusterName;
use mcfed_scenario::metrics::{MetricsRecorder, RunMetrics};
use rustc_hash::FxHashMap;

use crate::federation::Federation;

/// Finishes `metrics` with what `federation` holds at the end.
pub(crate) fn finish(metrics: MetricsRecorder, federation: &Federation) -> RunMetrics {
    let mut slots = Vec::with_capacity(federation.members.len());
    let mut pending: FxHashMap<(ClusterName, String), u64> = FxHashMap::default();
    for member in &federation.members {
        let name = member.name().clone();
        let cluster = member.cluster();
        slots.push((name.clone(), cluster.slot_usage().1));
        for job in cluster.jobs() {
            if job.state == mcfed_cluster::JobState::Pending {
                let queue = cluster.queue_config(job.queue).name.to_string();
                *pending.entry((name.clone(), queue)).or_default() += 1;
            }
        }
        if let Some(forwarder) = member.forwarder() {
            for job in forwarder.jobs() {
                if matches!(job.state, SourceState::Waiting | SourceState::GaveUp) {
                    let queue = forwarder
                        .send_queue_name(job.send_queue_index())
                        .to_string();
                    *pending.entry((name.clone(), queue)).or_default() += 1;
                }
            }
        }
    }
    let mut pending: Vec<(ClusterName, String, u64)> = pending
        .into_iter()
        .map(|((cluster, queue), count)| (cluster, queue, count))
        .collect();
    pending.sort();
    metrics.finish(&slots, &pending)
}

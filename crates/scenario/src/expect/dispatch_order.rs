//! A queue's dispatch order at a time: `at`, `cluster`, `queue`, and
//! `dispatch_order`, the names of its pending jobs in the order the next
//! dispatch pass would try them. The queue is an APS queue (or a queue of
//! an APS group), or a first-come, first-served one: a fairshare queue
//! without APS picks as it goes and has no order.

use mcfed_protocol::{ClusterName, QueueName, SimTime};

use super::{Entry, Kind};
use crate::format::RawExpect;

/// At `at`, the next dispatch pass would try the pending jobs of a queue in
/// this order.
#[derive(Clone, Debug, PartialEq)]
pub struct DispatchOrder {
    /// The cluster.
    pub cluster: ClusterName,
    /// The queue.
    pub queue: QueueName,
    /// When.
    pub at: SimTime,
    /// The jobs, by name, first first.
    pub jobs: Vec<String>,
}

impl Kind for DispatchOrder {
    const NAME: &'static str = "a queue's dispatch order";
    const KEYS: &'static [&'static str] = &["at", "cluster", "queue", "dispatch_order"];

    fn claims(raw: &RawExpect) -> bool {
        raw.dispatch_order.is_some()
    }

    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self> {
        let raw = entry.raw;
        let (cluster, queue, at) = entry.queue_at()?;
        let (_, config) = entry.queue_config(&cluster, &queue)?;
        let in_group = entry
            .specs
            .iter()
            .filter(|spec| spec.config.name == cluster)
            .flat_map(|spec| spec.config.queues.iter())
            .any(|other| other.queue_group.contains(&queue));
        if config.fairshare.is_some() && config.aps_priority.is_none() && !in_group {
            entry.problem(
                "dispatch_order",
                format!(
                    "queue `{queue}` is a fairshare queue without APS: it picks its jobs by user priority as it goes, so it has no order to check"
                ),
            );
            return None;
        }
        Some(DispatchOrder {
            cluster,
            queue,
            at,
            jobs: raw.dispatch_order.clone().unwrap_or_default(),
        })
    }
}

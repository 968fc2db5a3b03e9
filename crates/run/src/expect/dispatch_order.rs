//! Checking the order in which a queue's pending jobs would be tried at a
//! time, in the snapshot of its cluster taken then.

use mcfed_protocol::ClusterName;
use mcfed_scenario::expect::DispatchOrder;

use super::{Check, Found, Run};
use crate::probe::Watched;

impl Check for DispatchOrder {
    fn check(&self, run: Run<'_>) -> Found {
        let DispatchOrder {
            cluster,
            queue,
            at,
            jobs,
        } = self;
        let expected = format!(
            "at {at} queue {queue}@{cluster} tries its pending jobs in the order {}",
            jobs.join(", ")
        );
        let Some(snapshot) = run.cluster_at(*at, cluster.as_str()) else {
            return run.no_snapshot(expected, "no snapshot was taken");
        };
        let order = snapshot
            .orders
            .iter()
            .find(|order| order.queue == queue.as_str())
            .and_then(|order| order.jobs.as_ref());
        match order {
            Some(order) => Found {
                expected,
                held: order == jobs,
                actual: if order.is_empty() {
                    "no pending job".to_owned()
                } else {
                    order.join(", ")
                },
                skipped: None,
            },
            None => Found::failed(
                expected,
                "the queue has no set order (a fairshare queue without APS)",
            ),
        }
    }

    fn watch(&self, cluster: &ClusterName, watched: &mut Watched) {
        if self.cluster == *cluster {
            watched.queues.push(self.queue.to_string());
        }
    }
}

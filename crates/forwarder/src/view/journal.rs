//! What a journal keeps of the view and puts back: each remote cluster's
//! forward numbering, the last update applied from it, and the forwards
//! it has not answered yet.

use mcfed_protocol::{ClusterName, SimTime};

use super::{LoggedForward, RemoteQueueId, RemoteView};

impl RemoteView {
    /// When `cluster` took the snapshot of the last update applied from it.
    pub fn cluster_taken_at(&self, cluster: &ClusterName) -> Option<SimTime> {
        self.cluster_by_name
            .get(cluster)
            .and_then(|&index| self.clusters[index].taken_at)
    }

    /// The sequence number the next forward to `cluster` gets.
    pub fn next_forward_seq(&self, cluster: &ClusterName) -> Option<u64> {
        self.cluster_by_name
            .get(cluster)
            .map(|&index| self.clusters[index].next_forward_seq)
    }

    /// Puts back what a journal kept of `cluster`: forwards are numbered
    /// from `next_forward_seq` at least, and an update whose sequence number
    /// is not above `applied_seq` is ignored as old news.
    pub fn restore_cluster(
        &mut self,
        cluster: &ClusterName,
        next_forward_seq: u64,
        applied_seq: Option<u64>,
    ) {
        let Some(&index) = self.cluster_by_name.get(cluster) else {
            return;
        };
        let remote = &mut self.clusters[index];
        remote.next_forward_seq = remote.next_forward_seq.max(next_forward_seq);
        remote.applied_seq = remote.applied_seq.max(applied_seq);
    }

    /// Logs forward `seq` of `slots` slots to `queue`, not yet reflected in
    /// an update (a forward restored from a journal, still unanswered).
    pub fn restore_forward(&mut self, queue: RemoteQueueId, seq: u64, slots: u32) {
        let cluster = &mut self.clusters[self.queues[queue.index()].cluster];
        cluster.next_forward_seq = cluster.next_forward_seq.max(seq.saturating_add(1));
        let at = cluster.log.partition_point(|logged| logged.seq < seq);
        cluster.log.insert(at, LoggedForward { seq, queue, slots });
        if let Some(figures) = self.current[queue.index()].as_mut() {
            figures.count_forward(slots);
        }
    }

    /// How many forwards to `cluster` are not yet reflected in an update.
    pub fn unreflected_forwards(&self, cluster: &ClusterName) -> usize {
        self.cluster_by_name
            .get(cluster)
            .map_or(0, |&index| self.clusters[index].log.len())
    }

    /// The sequence number of the last update applied from `cluster`.
    pub fn applied_seq(&self, cluster: &ClusterName) -> Option<u64> {
        self.cluster_by_name
            .get(cluster)
            .and_then(|&index| self.clusters[index].applied_seq)
    }
}

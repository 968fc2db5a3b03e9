//! The submission cluster's view of the remote queues it sends to, and the
//! reconciliation of that view with counter updates.
//!
//! Seed `004_2db3e68d6519687c.txt`: "The submission scheduler increments
//! locally stored counter information as jobs are forwarded, and reconciles
//! incoming counter updates to account for all jobs." Here:
//!
//! - every forward to a cluster gets the next *forward sequence number* for
//!   that cluster and is logged with its queue and slots, and the queue's
//!   figures are bumped at once ([`Figures::count_forward`]);
//! - every counter update says the last forward its sender had received
//!   when it took the snapshot. Applying it replaces the *base* figures of
//!   the sender's queues, drops logged forwards the snapshot already
//!   reflects, and replays the rest on top, so a job forwarded after the
//!   snapshot stays counted and one the snapshot reflects is not counted
//!   twice;
//! - an update whose sequence number is not above the last one applied from
//!   that sender (a duplicate or an overtaken one) is ignored;
//! - a refused forward is removed from the log and the view recomputed.

use std::collections::VecDeque;
use std::time::Duration;

use mcfed_protocol::{ClusterName, CounterUpdate, QueueCounters, QueueRef, SimTime};
use rustc_hash::FxHashMap;

/// Index of a remote queue in a [`RemoteView`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RemoteQueueId(pub u32);

impl RemoteQueueId {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of an interned boolean resource name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceId(pub u32);

/// The counter figures of one remote queue, as the submission cluster
/// believes them to be now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    /// The queue's PRIORITY.
    pub priority: u32,
    /// Total slots.
    pub total: u32,
    /// Available (free) slots.
    pub available: u32,
    /// Running slots.
    pub running: u32,
    /// Pending slots.
    pub pending: u32,
    /// Preemptable available slots (free slots included).
    pub preemptable_available: u32,
    /// PRIORITY of the lowest-priority queue it can preempt now.
    pub victim_priority: Option<u32>,
    /// IMPT_JOBBKLG (`None`: infinit).
    pub impt_jobbklg: Option<u32>,
    /// Imported jobs pending in the queue.
    pub imported_pending: u32,
    /// When the execution cluster took the snapshot these figures start from.
    pub taken_at: SimTime,
}

impl Figures {
    fn from_counters(counters: &QueueCounters, taken_at: SimTime) -> Self {
        Figures {
            taken_at,
            priority: counters.priority,
            total: counters.total_slots,
            available: counters.available_slots,
            running: counters.running_slots,
            pending: counters.pending_slots,
            preemptable_available: counters
                .preemptable_available_slots
                .max(counters.available_slots),
            victim_priority: counters.lowest_preemptable_priority,
            impt_jobbklg: counters.impt_jobbklg,
            imported_pending: counters.imported_pending_jobs,
        }
    }

    /// Accounts locally for a job of `slots` slots just forwarded to the
    /// queue: it takes free slots if there are enough, else slots it can
    /// preempt, else it pends there as an imported job.
    pub fn count_forward(&mut self, slots: u32) {
        if self.available >= slots {
            self.available -= slots;
            self.running += slots;
            self.preemptable_available = self.preemptable_available.saturating_sub(slots);
        } else if self.preemptable_available >= slots {
            self.preemptable_available -= slots;
            self.running += slots;
        } else {
            self.pending += slots;
            self.imported_pending += 1;
        }
    }
}

/// A forward not yet reflected in a counter update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LoggedForward {
    seq: u64,
    queue: RemoteQueueId,
    slots: u32,
}

#[derive(Clone, Debug)]
struct RemoteQueue {
    at: QueueRef,
    cluster: usize,
    /// Figures of the last applied update.
    base: Option<Figures>,
    /// Resources the queue's hosts offer, sorted.
    resources: Vec<ResourceId>,
}

#[derive(Clone, Debug)]
struct RemoteCluster {
    name: ClusterName,
    queues: Vec<RemoteQueueId>,
    applied_seq: Option<u64>,
    taken_at: Option<SimTime>,
    next_forward_seq: u64,
    log: VecDeque<LoggedForward>,
}

/// What became of a counter update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateOutcome {
    /// The update replaced the sender's figures.
    Applied,
    /// The update was not newer than one already applied, and was ignored.
    Stale {
        /// The update's sequence number.
        seq: u64,
        /// The last sequence number applied from that sender.
        applied: u64,
    },
    /// The sender is not a cluster this one sends to.
    UnknownSender,
}

/// The submission cluster's view of every remote queue named in its send
/// queues' SNDJOBS_TO.
#[derive(Clone, Debug, Default)]
pub struct RemoteView {
    queues: Vec<RemoteQueue>,
    /// Per queue: the base figures plus the forwards they do not reflect.
    /// Kept apart from [`RemoteQueue`] so `decide` reads one dense array.
    current: Vec<Option<Figures>>,
    /// Per queue: whether it offers any resource at all.
    offers_resources: Vec<bool>,
    /// Per queue: whether its cluster is unreachable (its link is down or
    /// its last update too old; set by the forwarder before each session).
    unreachable: Vec<bool>,
    clusters: Vec<RemoteCluster>,
    by_ref: FxHashMap<QueueRef, RemoteQueueId>,
    cluster_by_name: FxHashMap<ClusterName, usize>,
    resource_ids: FxHashMap<String, ResourceId>,
    resource_names: Vec<String>,
}

impl RemoteView {
    /// An empty view.
    pub fn new() -> Self {
        RemoteView::default()
    }

    /// Registers the remote queue `at` (idempotent) and returns its id.
    pub fn add_queue(&mut self, at: &QueueRef) -> RemoteQueueId {
        if let Some(&id) = self.by_ref.get(at) {
            return id;
        }
        let cluster = match self.cluster_by_name.get(&at.cluster) {
            Some(&cluster) => cluster,
            None => {
                self.clusters.push(RemoteCluster {
                    name: at.cluster.clone(),
                    queues: Vec::new(),
                    applied_seq: None,
                    taken_at: None,
                    next_forward_seq: 1,
                    log: VecDeque::new(),
                });
                let index = self.clusters.len() - 1;
                self.cluster_by_name.insert(at.cluster.clone(), index);
                index
            }
        };
        let id = RemoteQueueId(u32::try_from(self.queues.len()).unwrap_or(u32::MAX));
        self.queues.push(RemoteQueue {
            at: at.clone(),
            cluster,
            base: None,
            resources: Vec::new(),
        });
        self.current.push(None);
        self.offers_resources.push(false);
        self.unreachable.push(false);
        self.clusters[cluster].queues.push(id);
        self.by_ref.insert(at.clone(), id);
        id
    }

    /// The id of remote queue `at`, if registered.
    pub fn queue_id(&self, at: &QueueRef) -> Option<RemoteQueueId> {
        self.by_ref.get(at).copied()
    }

    /// The `queue@cluster` of a remote queue.
    pub fn queue_ref(&self, id: RemoteQueueId) -> &QueueRef {
        &self.queues[id.index()].at
    }

    /// How many remote queues are registered.
    pub fn queue_count(&self) -> usize {
        self.queues.len()
    }

    /// The remote clusters, in registration order.
    pub fn clusters(&self) -> impl Iterator<Item = &ClusterName> {
        self.clusters.iter().map(|cluster| &cluster.name)
    }

    /// The current figures of a remote queue, or `None` before the first
    /// update from its cluster (or when the last update did not list it).
    #[inline]
    pub fn figures(&self, id: RemoteQueueId) -> Option<&Figures> {
        self.current[id.index()].as_ref()
    }

    /// When the snapshot behind a remote queue's figures was taken.
    #[inline]
    pub fn taken_at(&self, id: RemoteQueueId) -> Option<SimTime> {
        self.current[id.index()].map(|figures| figures.taken_at)
    }

    /// The age at `now` of the snapshot behind a remote queue's figures.
    #[inline]
    pub fn view_age(&self, id: RemoteQueueId, now: SimTime) -> Option<Duration> {
        self.taken_at(id).map(|taken| now.saturating_since(taken))
    }

    /// The cluster name of a remote queue.
    pub fn cluster_of(&self, id: RemoteQueueId) -> &ClusterName {
        &self.queues[id.index()].at.cluster
    }

    /// Interns a resource name.
    pub fn resource_id(&mut self, name: &str) -> ResourceId {
        if let Some(&id) = self.resource_ids.get(name) {
            return id;
        }
        let id = ResourceId(u32::try_from(self.resource_names.len()).unwrap_or(u32::MAX));
        self.resource_names.push(name.to_owned());
        self.resource_ids.insert(name.to_owned(), id);
        id
    }

    /// The name of an interned resource.
    pub fn resource_name(&self, id: ResourceId) -> &str {
        &self.resource_names[id.0 as usize]
    }

    /// The first of `needed` (sorted or not) that remote queue `id` does not
    /// offer.
    #[inline]
    pub fn missing_resource(&self, id: RemoteQueueId, needed: &[ResourceId]) -> Option<ResourceId> {
        let first = *needed.first()?;
        if !self.offers_resources[id.index()] {
            return Some(first);
        }
        let offered = &self.queues[id.index()].resources;
        needed
            .iter()
            .copied()
            .find(|resource| offered.binary_search(resource).is_err())
    }

    /// Applies a counter update received at the submission cluster
    /// `receiver`. See the module documentation for the rules.
    pub fn apply_update(
        &mut self,
        receiver: &ClusterName,
        update: &CounterUpdate,
    ) -> UpdateOutcome {
        let Some(&cluster_index) = self.cluster_by_name.get(&update.sender) else {
            return UpdateOutcome::UnknownSender;
        };
        if let Some(applied) = self.clusters[cluster_index].applied_seq {
            if update.seq <= applied {
                return UpdateOutcome::Stale {
                    seq: update.seq,
                    applied,
                };
            }
        }
        let watermark = update.last_forward_from(receiver);
        {
            let cluster = &mut self.clusters[cluster_index];
            cluster.applied_seq = Some(update.seq);
            cluster.taken_at = Some(update.taken_at);
            while cluster
                .log
                .front()
                .is_some_and(|logged| logged.seq <= watermark)
            {
                cluster.log.pop_front();
            }
        }
        let queue_ids = self.clusters[cluster_index].queues.clone();
        for id in queue_ids {
            let at = self.queues[id.index()].at.queue.clone();
            match update.queues.iter().find(|counters| counters.queue == at) {
                Some(counters) => {
                    let mut resources: Vec<ResourceId> = counters
                        .resources
                        .iter()
                        .map(|name| self.resource_id(name))
                        .collect();
                    resources.sort_unstable();
                    resources.dedup();
                    self.offers_resources[id.index()] = !resources.is_empty();
                    let queue = &mut self.queues[id.index()];
                    queue.base = Some(Figures::from_counters(counters, update.taken_at));
                    queue.resources = resources;
                }
                None => self.queues[id.index()].base = None,
            }
        }
        self.recompute(cluster_index);
        UpdateOutcome::Applied
    }

    /// Rebuilds the current figures of a cluster's queues from their base
    /// and the forwards logged since.
    fn recompute(&mut self, cluster_index: usize) {
        for &id in &self.clusters[cluster_index].queues {
            self.current[id.index()] = self.queues[id.index()].base;
        }
        for logged in &self.clusters[cluster_index].log {
            if let Some(figures) = self.current[logged.queue.index()].as_mut() {
                figures.count_forward(logged.slots);
            }
        }
    }

    /// Records a job of `slots` slots forwarded to `queue` now: bumps the
    /// queue's figures and returns the forward's sequence number for its
    /// cluster.
    pub fn record_forward(&mut self, queue: RemoteQueueId, slots: u32) -> u64 {
        let cluster = &mut self.clusters[self.queues[queue.index()].cluster];
        let seq = cluster.next_forward_seq;
        cluster.next_forward_seq += 1;
        cluster.log.push_back(LoggedForward { seq, queue, slots });
        if let Some(figures) = self.current[queue.index()].as_mut() {
            figures.count_forward(slots);
        }
        seq
    }

    /// Forgets everything learnt from `cluster` (it restarted): its queues
    /// are unknown until its next update, whatever sequence number that
    /// carries, and forwards not yet reflected are dropped (the restarted
    /// cluster reports the ones it received from now on).
    pub fn reset_cluster(&mut self, cluster: &ClusterName) {
        let Some(&cluster_index) = self.cluster_by_name.get(cluster) else {
            return;
        };
        let remote = &mut self.clusters[cluster_index];
        remote.applied_seq = None;
        remote.taken_at = None;
        remote.log.clear();
        for id in remote.queues.clone() {
            self.queues[id.index()].base = None;
        }
        self.recompute(cluster_index);
    }

    /// Notes that remote queue `id` refused a job because its IMPT_JOBBKLG
    /// is full: until the next update from its cluster, it counts as full
    /// (so the refused job is not sent straight back to it).
    pub fn mark_backlog_full(&mut self, id: RemoteQueueId) {
        let cluster_index = self.queues[id.index()].cluster;
        if let Some(base) = self.queues[id.index()].base.as_mut() {
            if let Some(limit) = base.impt_jobbklg {
                base.imported_pending = base.imported_pending.max(limit);
            }
        }
        self.recompute(cluster_index);
    }

    /// Forgets forward `seq` to `cluster` (it was refused), undoing its local
    /// increment.
    pub fn forget_forward(&mut self, cluster: &ClusterName, seq: u64) {
        let Some(&cluster_index) = self.cluster_by_name.get(cluster) else {
            return;
        };
        let log = &mut self.clusters[cluster_index].log;
        let before = log.len();
        log.retain(|logged| logged.seq != seq);
        if log.len() != before {
            self.recompute(cluster_index);
        }
    }

    /// Marks every queue of `cluster` unreachable or reachable: an
    /// unreachable queue is no candidate (see [`crate::policy`]).
    pub fn set_unreachable(&mut self, cluster: &ClusterName, unreachable: bool) {
        let Some(&cluster_index) = self.cluster_by_name.get(cluster) else {
            return;
        };
        for &id in &self.clusters[cluster_index].queues {
            self.unreachable[id.index()] = unreachable;
        }
    }

    /// Whether remote queue `id`'s cluster is marked unreachable.
    #[inline]
    pub fn is_unreachable(&self, id: RemoteQueueId) -> bool {
        self.unreachable[id.index()]
    }

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

#[cfg(test)]
mod tests {
    use mcfed_protocol::{ForwardWatermark, QueueName};

    use super::*;

    fn cluster(name: &str) -> ClusterName {
        ClusterName::new(name).expect("valid")
    }

    fn remote(text: &str) -> QueueRef {
        text.parse().expect("valid")
    }

    fn counters(available: u32, pending: u32) -> QueueCounters {
        QueueCounters {
            cluster: cluster("C2"),
            queue: QueueName::new("high").expect("valid"),
            priority: 40,
            total_slots: 100,
            available_slots: available,
            running_slots: 100 - available,
            pending_slots: pending,
            preemptable_available_slots: available,
            lowest_preemptable_priority: None,
            impt_jobbklg: Some(50),
            imported_pending_jobs: 0,
            resources: vec![],
        }
    }

    fn update(seq: u64, available: u32, last_forward: u64) -> CounterUpdate {
        CounterUpdate {
            sender: cluster("C2"),
            seq,
            taken_at: SimTime::from_secs(seq * 30),
            queues: vec![counters(available, 0)],
            forwards_received: vec![ForwardWatermark {
                submission_cluster: cluster("C1"),
                last_forward_seq: last_forward,
            }],
        }
    }

    fn view() -> (RemoteView, RemoteQueueId) {
        let mut view = RemoteView::new();
        let id = view.add_queue(&remote("high@C2"));
        (view, id)
    }

    #[test]
    fn unknown_until_the_first_update() {
        let (mut view, id) = view();
        assert!(view.figures(id).is_none());
        assert_eq!(
            view.apply_update(&cluster("C1"), &update(1, 10, 0)),
            UpdateOutcome::Applied
        );
        assert_eq!(view.figures(id).map(|f| f.available), Some(10));
        assert_eq!(
            view.view_age(id, SimTime::from_secs(40)),
            Some(Duration::from_secs(10))
        );
    }

    #[test]
    fn forward_then_update_that_reflects_it() {
        let (mut view, id) = view();
        view.apply_update(&cluster("C1"), &update(1, 10, 0));
        let seq = view.record_forward(id, 4);
        assert_eq!(seq, 1);
        assert_eq!(view.figures(id).map(|f| f.available), Some(6));
        // The execution cluster received forward 1 and now reports 6 free.
        view.apply_update(&cluster("C1"), &update(2, 6, 1));
        assert_eq!(
            view.figures(id).map(|f| f.available),
            Some(6),
            "not counted twice"
        );
        assert_eq!(view.unreflected_forwards(&cluster("C2")), 0);
    }

    #[test]
    fn update_that_does_not_yet_reflect_a_forward() {
        let (mut view, id) = view();
        view.apply_update(&cluster("C1"), &update(1, 10, 0));
        view.record_forward(id, 4);
        // Snapshot taken before forward 1 arrived: still 10 free there.
        view.apply_update(&cluster("C1"), &update(2, 10, 0));
        assert_eq!(
            view.figures(id).map(|f| f.available),
            Some(6),
            "stays counted"
        );
        assert_eq!(view.unreflected_forwards(&cluster("C2")), 1);
    }

    #[test]
    fn duplicated_and_out_of_order_updates_are_ignored() {
        let (mut view, id) = view();
        view.apply_update(&cluster("C1"), &update(2, 7, 0));
        assert_eq!(
            view.apply_update(&cluster("C1"), &update(2, 9, 0)),
            UpdateOutcome::Stale { seq: 2, applied: 2 }
        );
        assert_eq!(
            view.apply_update(&cluster("C1"), &update(1, 3, 0)),
            UpdateOutcome::Stale { seq: 1, applied: 2 }
        );
        assert_eq!(view.figures(id).map(|f| f.available), Some(7));
        assert_eq!(view.applied_seq(&cluster("C2")), Some(2));
    }

    #[test]
    fn forwards_beyond_free_slots_pend_and_fill_the_backlog() {
        let mut figures = Figures::from_counters(&counters(2, 0), SimTime::ZERO);
        figures.count_forward(1);
        assert_eq!((figures.available, figures.running), (1, 99));
        figures.count_forward(2);
        assert_eq!((figures.pending, figures.imported_pending), (2, 1));
    }

    #[test]
    fn forwards_that_preempt_take_preemptable_slots() {
        let mut base = counters(0, 0);
        base.preemptable_available_slots = 5;
        let mut figures = Figures::from_counters(&base, SimTime::ZERO);
        figures.count_forward(3);
        assert_eq!((figures.preemptable_available, figures.pending), (2, 0));
    }

    #[test]
    fn refused_forward_is_forgotten() {
        let (mut view, id) = view();
        view.apply_update(&cluster("C1"), &update(1, 10, 0));
        let first = view.record_forward(id, 4);
        view.record_forward(id, 2);
        view.forget_forward(&cluster("C2"), first);
        assert_eq!(view.figures(id).map(|f| f.available), Some(8));
    }

    #[test]
    fn unknown_sender_is_reported() {
        let (mut view, _) = view();
        let mut stray = update(1, 1, 0);
        stray.sender = cluster("C9");
        assert_eq!(
            view.apply_update(&cluster("C1"), &stray),
            UpdateOutcome::UnknownSender
        );
    }
}

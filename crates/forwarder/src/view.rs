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
//! - a refused forward is removed from the log and the view recomputed,
//!   and so is one whose job finished (its slots are free again);
//! - before a cluster's first update, its queues' figures start from the
//!   static facts of its hello (priority, total slots, IMPT_JOBBKLG,
//!   resources, slot group) with an empty workload: seed 004 says such
//!   decisions "do not accurately account for remote queue workload", not
//!   that none are made. A cluster that never sends counters (no
//!   MC_PLUGIN_UPDATE_INTERVAL there, or this cluster does not collect
//!   them) stays known this way, its own forwards counted until they end;
//! - queues of one cluster with the same slot group share slots: a job
//!   forwarded to one of them that takes free slots takes them from each
//!   (seed 004's local increments, across queues that share hosts).

use std::collections::VecDeque;
use std::time::Duration;

use mcfed_protocol::{ClusterName, CounterUpdate, QueueCounters, QueueFacts, QueueRef, SimTime};
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
    /// When the execution cluster took the snapshot these figures start from
    /// (for figures from a hello, when the hello came).
    pub taken_at: SimTime,
    /// Whether the figures start from a counter update (`false`: from the
    /// static facts of a hello, with the remote workload unknown).
    pub from_counters: bool,
}

/// Where a forward's slots came from, as the local increment counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Took {
    /// Free slots.
    Free,
    /// Slots reached by preemption.
    Preempted,
    /// None: the job pends there.
    Pending,
}

impl Figures {
    /// The figures without the time they were taken at: what a decision
    /// compares.
    fn untimed(self) -> Figures {
        Figures {
            taken_at: SimTime::ZERO,
            ..self
        }
    }

    /// The static facts of a hello, received at `at`: every slot free,
    /// nothing running or pending.
    fn from_facts(facts: &QueueFacts, at: SimTime) -> Self {
        Figures {
            taken_at: at,
            from_counters: false,
            priority: facts.priority,
            total: facts.total_slots,
            available: facts.total_slots,
            running: 0,
            pending: 0,
            preemptable_available: facts.total_slots,
            victim_priority: None,
            impt_jobbklg: facts.impt_jobbklg,
            imported_pending: 0,
        }
    }

    fn from_counters(counters: &QueueCounters, taken_at: SimTime) -> Self {
        Figures {
            taken_at,
            from_counters: true,
            priority: counters.priority,
            total: counters.total_slots,
            available: counters.available_slots,
            running: counters.running_slots,
            pending: counters.pending_slots,
            preemptable_available: counters.preemptable_available_slots,
            victim_priority: counters.lowest_preemptable_priority,
            impt_jobbklg: counters.impt_jobbklg,
            imported_pending: counters.imported_pending_jobs,
        }
    }

    /// Accounts locally for a job of `slots` slots just forwarded to the
    /// queue: it takes free slots if there are enough, else slots it can
    /// preempt, else it pends there as an imported job. Says which.
    pub fn count_forward(&mut self, slots: u32) -> Took {
        if self.available >= slots {
            self.take_free(slots);
            self.running += slots;
            Took::Free
        } else if self.preemptable_available >= slots {
            self.preemptable_available -= slots;
            self.running += slots;
            Took::Preempted
        } else {
            self.pending += slots;
            self.imported_pending += 1;
            Took::Pending
        }
    }

    /// `slots` free slots of the queue's hosts are taken (by a job of this
    /// queue, or of another queue of the same slot group).
    pub fn take_free(&mut self, slots: u32) {
        self.available = self.available.saturating_sub(slots);
        self.preemptable_available = self.preemptable_available.saturating_sub(slots);
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
    /// Figures from the static facts of the cluster's last hello.
    facts: Option<Figures>,
    /// Resources the queue's hosts offer, sorted.
    resources: Vec<ResourceId>,
    /// Its slot group in its cluster (queues with the same one share
    /// slots), once known.
    slot_group: Option<u32>,
    /// It refused a job because its IMPT_JOBBKLG was full: until its
    /// cluster's next update (or a job of this cluster finishes there), it
    /// counts as full, with nothing free.
    marked_full: bool,
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
    /// Set by [`RemoteView::apply_update`].
    last_update_changed: bool,
    /// Per queue: whether it offers any resource at all.
    offers_resources: Vec<bool>,
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
            facts: None,
            resources: Vec::new(),
            slot_group: None,
            marked_full: false,
        });
        self.current.push(None);
        self.offers_resources.push(false);
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
        let before: Vec<Option<Figures>> = queue_ids
            .iter()
            .map(|id| self.current[id.index()].map(Figures::untimed))
            .collect();
        for &id in &queue_ids {
            let at = self.queues[id.index()].at.queue.clone();
            match update.queues.iter().find(|counters| counters.queue == at) {
                Some(counters) => {
                    self.learn_static(id, &counters.resources, counters.slot_group);
                    let queue = &mut self.queues[id.index()];
                    queue.base = Some(Figures::from_counters(counters, update.taken_at));
                }
                None => self.queues[id.index()].base = None,
            }
            self.queues[id.index()].marked_full = false;
        }
        self.recompute(cluster_index);
        self.last_update_changed = queue_ids
            .iter()
            .zip(&before)
            .any(|(id, before)| self.current[id.index()].map(Figures::untimed) != *before);
        UpdateOutcome::Applied
    }

    /// Whether the last update applied changed any figure a decision reads
    /// (an update that only restates the figures changes no decision: the
    /// forwarder need not decide its waiting jobs again).
    pub fn last_update_changed(&self) -> bool {
        self.last_update_changed
    }

    /// Learns the static facts of `cluster`'s receive queues from its
    /// hello, received at `now`: the figures of its queues until its next
    /// counter update (forwards not yet reflected in one stay counted).
    pub fn apply_facts(&mut self, cluster: &ClusterName, facts: &[QueueFacts], now: SimTime) {
        let Some(&cluster_index) = self.cluster_by_name.get(cluster) else {
            return;
        };
        for id in self.clusters[cluster_index].queues.clone() {
            let at = self.queues[id.index()].at.queue.clone();
            match facts.iter().find(|queue| queue.queue == at) {
                Some(queue) => {
                    self.learn_static(id, &queue.resources, queue.slot_group);
                    self.queues[id.index()].facts = Some(Figures::from_facts(queue, now));
                }
                None => self.queues[id.index()].facts = None,
            }
            self.queues[id.index()].marked_full = false;
        }
        self.recompute(cluster_index);
    }

    /// A remote queue's resources and slot group, as its cluster reported
    /// them.
    fn learn_static(&mut self, id: RemoteQueueId, resources: &[String], slot_group: u32) {
        let mut resources: Vec<ResourceId> = resources
            .iter()
            .map(|name| self.resource_id(name))
            .collect();
        resources.sort_unstable();
        resources.dedup();
        self.offers_resources[id.index()] = !resources.is_empty();
        let queue = &mut self.queues[id.index()];
        queue.resources = resources;
        queue.slot_group = Some(slot_group);
    }

    /// Rebuilds the current figures of a cluster's queues from their base
    /// and the forwards logged since.
    fn recompute(&mut self, cluster_index: usize) {
        for &id in &self.clusters[cluster_index].queues {
            let queue = &self.queues[id.index()];
            let mut figures = queue.base.or(queue.facts);
            if let (Some(figures), true) = (figures.as_mut(), queue.marked_full) {
                if let Some(limit) = figures.impt_jobbklg {
                    figures.imported_pending = figures.imported_pending.max(limit);
                    figures.available = 0;
                    figures.preemptable_available = 0;
                }
            }
            self.current[id.index()] = figures;
        }
        for index in 0..self.clusters[cluster_index].log.len() {
            let logged = self.clusters[cluster_index].log[index];
            self.count(logged.queue, logged.slots);
        }
    }

    /// Counts a forward of `slots` slots to `queue` in the current
    /// figures: the queue's own, and, when it took free slots, those of
    /// the queues of its cluster in the same slot group.
    fn count(&mut self, queue: RemoteQueueId, slots: u32) {
        let Some(figures) = self.current[queue.index()].as_mut() else {
            return;
        };
        if figures.count_forward(slots) != Took::Free {
            return;
        }
        let Some(group) = self.queues[queue.index()].slot_group else {
            return;
        };
        let cluster = self.queues[queue.index()].cluster;
        for &sibling in &self.clusters[cluster].queues {
            if sibling != queue && self.queues[sibling.index()].slot_group == Some(group) {
                if let Some(figures) = self.current[sibling.index()].as_mut() {
                    figures.take_free(slots);
                }
            }
        }
    }

    /// Records a job of `slots` slots forwarded to `queue` now: bumps the
    /// queue's figures (and its slot group's) and returns the forward's
    /// sequence number for its cluster.
    pub fn record_forward(&mut self, queue: RemoteQueueId, slots: u32) -> u64 {
        let cluster = &mut self.clusters[self.queues[queue.index()].cluster];
        let seq = cluster.next_forward_seq;
        cluster.next_forward_seq += 1;
        cluster.log.push_back(LoggedForward { seq, queue, slots });
        self.count(queue, slots);
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
            let queue = &mut self.queues[id.index()];
            queue.base = None;
            queue.facts = None;
            queue.marked_full = false;
        }
        self.recompute(cluster_index);
    }

    /// Notes that remote queue `id` refused a job because its IMPT_JOBBKLG
    /// is full: until the next update from its cluster, it counts as full,
    /// with no slots free or reachable (so the refused job is not sent
    /// straight back to it).
    pub fn mark_backlog_full(&mut self, id: RemoteQueueId) {
        let cluster_index = self.queues[id.index()].cluster;
        self.queues[id.index()].marked_full = true;
        self.recompute(cluster_index);
    }

    /// A job forwarded to `cluster` as forward `seq` finished there: its
    /// forward no longer weighs on the queue, and a queue marked full
    /// ([`RemoteView::mark_backlog_full`]) may take jobs again (this is
    /// what frees it when the cluster sends no counters). Says whether the
    /// view changed.
    pub fn forward_finished(&mut self, cluster: &ClusterName, seq: u64) -> bool {
        let Some(&cluster_index) = self.cluster_by_name.get(cluster) else {
            return false;
        };
        let mut unmarked = false;
        for &id in &self.clusters[cluster_index].queues {
            unmarked |= std::mem::take(&mut self.queues[id.index()].marked_full);
        }
        let log = &mut self.clusters[cluster_index].log;
        if let Ok(position) = log.binary_search_by_key(&seq, |logged| logged.seq) {
            log.remove(position);
            unmarked = true;
        }
        if unmarked {
            self.recompute(cluster_index);
        }
        unmarked
    }

    /// Forgets forward `seq` to `cluster` (it was refused, came back, or
    /// its job finished), undoing its local increment if no update
    /// reflects it yet. O(log n) when it is not in the log.
    pub fn forget_forward(&mut self, cluster: &ClusterName, seq: u64) {
        let Some(&cluster_index) = self.cluster_by_name.get(cluster) else {
            return;
        };
        let log = &mut self.clusters[cluster_index].log;
        // The log is in forward order.
        if let Ok(position) = log.binary_search_by_key(&seq, |logged| logged.seq) {
            log.remove(position);
            self.recompute(cluster_index);
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
mod tests;

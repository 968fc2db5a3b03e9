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

use mcfed_protocol::{ClusterName, CounterUpdate, GpuSlots, QueueFacts, QueueRef, SimTime};
use rustc_hash::FxHashMap;

mod figures;
mod gpus;
mod journal;

pub use figures::{Figures, Took};

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
    /// Grows with every update applied from it, hello and loss of state:
    /// what it says of its queues is new since a given one.
    generation: u64,
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
    /// Per queue: its GPUs.
    gpus: Vec<gpus::QueueGpus>,
    /// Per queue: whether its cluster is unreachable (its link is down or
    /// its last update too old; set by the forwarder before each session).
    unreachable: Vec<bool>,
    clusters: Vec<RemoteCluster>,
    by_ref: FxHashMap<QueueRef, RemoteQueueId>,
    cluster_by_name: FxHashMap<ClusterName, usize>,
    resource_ids: FxHashMap<String, ResourceId>,
    resource_names: Vec<String>,
    /// Grows whenever something that decides whether a queue could ever
    /// take a job changes (see [`RemoteView::fit_epoch`]).
    fit_epoch: u64,
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
                    generation: 0,
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
        self.gpus.push(gpus::QueueGpus::default());
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

    /// A remote queue's slots by the GPUs of their hosts, and its free
    /// slots by the GPUs free there, as the submission cluster believes
    /// them now (empty for a queue without GPUs).
    #[inline]
    pub fn gpu_slots(&self, id: RemoteQueueId) -> (&GpuSlots, &GpuSlots) {
        let gpus = &self.gpus[id.index()];
        (&gpus.total, &gpus.free)
    }

    /// The generation of a remote queue's cluster: it grows with every
    /// update applied from it, every hello, and a loss of its state.
    pub fn generation_of(&self, id: RemoteQueueId) -> u64 {
        self.clusters[self.queues[id.index()].cluster].generation
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

    /// How many remote clusters the view knows.
    pub fn cluster_count(&self) -> usize {
        self.clusters.len()
    }

    /// The index of remote cluster `name` (its place in
    /// [`RemoteView::clusters`]), if known.
    pub fn cluster_index(&self, name: &ClusterName) -> Option<usize> {
        self.cluster_by_name.get(name).copied()
    }

    /// The index of a remote queue's cluster.
    #[inline]
    pub fn cluster_index_of(&self, id: RemoteQueueId) -> usize {
        self.queues[id.index()].cluster
    }

    /// The name of remote cluster `index`.
    pub fn cluster_name(&self, index: usize) -> &ClusterName {
        &self.clusters[index].name
    }

    /// When remote cluster `index` took the snapshot of the last update
    /// applied from it.
    #[inline]
    pub fn taken_at_of(&self, index: usize) -> Option<SimTime> {
        self.clusters[index].taken_at
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
        let before: Vec<(Option<Figures>, GpuSlots)> = queue_ids
            .iter()
            .map(|id| {
                (
                    self.current[id.index()].map(Figures::untimed),
                    self.gpus[id.index()].free.clone(),
                )
            })
            .collect();
        for &id in &queue_ids {
            let at = self.queues[id.index()].at.queue.clone();
            match update.queues.iter().find(|counters| counters.queue == at) {
                Some(counters) => {
                    self.learn_static(id, &counters.resources, counters.slot_group);
                    let queue = &mut self.queues[id.index()];
                    queue.base = Some(Figures::from_counters(counters, update.taken_at));
                    self.gpus[id.index()].base =
                        Some((counters.gpu_slots.clone(), counters.gpu_free_slots.clone()));
                }
                None => {
                    self.queues[id.index()].base = None;
                    self.gpus[id.index()].base = None;
                }
            }
            self.queues[id.index()].marked_full = false;
        }
        self.clusters[cluster_index].generation += 1;
        self.recompute(cluster_index);
        // An update from a cluster counted unreachable (its link was down
        // or its counters too old) may make it a candidate again: that
        // changes decisions even when it restates the figures.
        let was_unreachable = queue_ids.iter().any(|id| self.unreachable[id.index()]);
        self.last_update_changed = was_unreachable
            || queue_ids.iter().zip(&before).any(|(id, (figures, gpus))| {
                self.current[id.index()].map(Figures::untimed) != *figures
                    || self.gpus[id.index()].free != *gpus
            });
        UpdateOutcome::Applied
    }

    /// A number that grows whenever something changes that decides whether
    /// a remote queue could ever take a job, whatever its workload: a
    /// queue's figures become known or unknown, its slots in all or its
    /// resources change, or its cluster becomes reachable or unreachable.
    /// While it stays the same, a job no queue could take
    /// ([`crate::policy::PendReason::NoQueueCanTake`]) still cannot.
    pub fn fit_epoch(&self) -> u64 {
        self.fit_epoch
    }

    /// What [`RemoteView::fit_epoch`] watches of one queue's figures.
    fn fit_of(&self, id: RemoteQueueId) -> Option<u32> {
        self.current[id.index()].map(|figures| figures.total)
    }

    /// Whether the last update applied changed any figure a decision reads,
    /// or came from a cluster counted unreachable (an update that only
    /// restates the figures of a reachable cluster changes no decision:
    /// the forwarder need not decide its waiting jobs again).
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
                    self.gpus[id.index()].facts = Some(queue.gpu_slots.clone());
                }
                None => {
                    self.queues[id.index()].facts = None;
                    self.gpus[id.index()].facts = None;
                }
            }
            self.queues[id.index()].marked_full = false;
        }
        self.clusters[cluster_index].generation += 1;
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
        if queue.resources != resources {
            self.fit_epoch += 1;
        }
        queue.resources = resources;
        queue.slot_group = Some(slot_group);
    }

    /// Rebuilds the current figures of a cluster's queues from their base
    /// and the forwards logged since.
    fn recompute(&mut self, cluster_index: usize) {
        let mut fit_changed = false;
        for &id in &self.clusters[cluster_index].queues {
            let queue = &self.queues[id.index()];
            let mut figures = queue.base.or(queue.facts);
            if let (Some(figures), true) = (figures.as_mut(), queue.marked_full) {
                if let Some(limit) = figures.impt_jobbklg {
                    figures.imported_pending = figures.imported_pending.max(limit);
                    figures.available = 0;
                    figures.preemptable_available = 0;
                    figures.follow_victims();
                }
            }
            // Forwards counted on top never change what `fit_of` reads.
            fit_changed |= self.fit_of(id) != figures.map(|figures| figures.total);
            fit_changed |= self.gpus[id.index()].reset();
            self.current[id.index()] = figures;
        }
        for index in 0..self.clusters[cluster_index].log.len() {
            let logged = self.clusters[cluster_index].log[index];
            self.count(logged.queue, logged.slots);
        }
        if fit_changed {
            self.fit_epoch += 1;
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
        self.gpus[queue.index()].free.take(slots);
        let Some(group) = self.queues[queue.index()].slot_group else {
            return;
        };
        let cluster = self.queues[queue.index()].cluster;
        for &sibling in &self.clusters[cluster].queues {
            if sibling != queue && self.queues[sibling.index()].slot_group == Some(group) {
                if let Some(figures) = self.current[sibling.index()].as_mut() {
                    figures.take_free(slots);
                    self.gpus[sibling.index()].free.take(slots);
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

    /// Forgets everything learnt from `cluster`'s counters (it lost its
    /// state): its queues' figures are unknown until its next update,
    /// whatever sequence number that carries, and forwards not yet
    /// reflected are dropped (the restarted cluster reports the ones it
    /// received from now on). The static facts of its queues stay: they
    /// come from the hello of the connection that told of the loss (its
    /// `Resume` follows the hello).
    pub fn reset_cluster(&mut self, cluster: &ClusterName) {
        let Some(&cluster_index) = self.cluster_by_name.get(cluster) else {
            return;
        };
        let remote = &mut self.clusters[cluster_index];
        remote.applied_seq = None;
        remote.taken_at = None;
        remote.log.clear();
        remote.generation += 1;
        for id in remote.queues.clone() {
            let queue = &mut self.queues[id.index()];
            queue.base = None;
            queue.marked_full = false;
            self.gpus[id.index()].base = None;
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

    /// Marks every queue of `cluster` unreachable or reachable: an
    /// unreachable queue is no candidate (see [`crate::policy`]).
    pub fn set_unreachable(&mut self, cluster: &ClusterName, unreachable: bool) {
        if let Some(&cluster_index) = self.cluster_by_name.get(cluster) {
            self.set_unreachable_at(cluster_index, unreachable);
        }
    }

    /// [`RemoteView::set_unreachable`] for remote cluster `cluster_index`.
    pub fn set_unreachable_at(&mut self, cluster_index: usize, unreachable: bool) {
        for &id in &self.clusters[cluster_index].queues {
            if self.unreachable[id.index()] != unreachable {
                self.unreachable[id.index()] = unreachable;
                self.fit_epoch += 1;
            }
        }
    }

    /// Whether remote queue `id`'s cluster is marked unreachable.
    #[inline]
    pub fn is_unreachable(&self, id: RemoteQueueId) -> bool {
        self.unreachable[id.index()]
    }
}

#[cfg(test)]
mod tests;

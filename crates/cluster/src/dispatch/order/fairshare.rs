//! A fairshare queue's order (seed 002): pending jobs are tried one at a
//! time from the share account with the highest dynamic priority
//! (`fairshare::priority`), recomputed after each try that changed its
//! figures, first come first served within an account. With group shares
//! (`fairshare::tree`), the choice goes down the share tree from the root:
//! at each level the child with the highest priority, until a user's
//! account or a collective one (whose users' jobs go first come, first
//! served).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use mcfed_protocol::SimTime;

use crate::dispatch::{Outcome, Round, Scope, Turn};
use crate::fairshare::tree::ROOT;
use crate::fairshare::{NodeId, NodeKind};
use crate::job::{QueueIndex, UserId};
use crate::scheduler::Cluster;

use super::{Flow, Next};

/// A share account waiting for its next job to be tried.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    priority: f64,
    /// The arrival of its next job (leaves), for ties.
    next: u64,
    node: NodeId,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    /// Highest priority first, then the earliest job, then the account made
    /// first: a max-heap pops the candidate to try next.
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .total_cmp(&other.priority)
            .then_with(|| other.next.cmp(&self.next))
            .then_with(|| other.node.cmp(&self.node))
    }
}

/// One pass over a fairshare queue: a heap of children per interior node
/// visited (few: the root and interior groups), and per node the arrival
/// of the next job to look at in a leaf.
struct FairPass {
    heaps: Vec<(NodeId, BinaryHeap<Candidate>)>,
    cursors: Vec<u64>,
}

impl FairPass {
    fn new(nodes: usize) -> Self {
        FairPass {
            heaps: Vec::new(),
            cursors: vec![0; nodes],
        }
    }

    fn heap(&mut self, node: NodeId) -> Option<&mut BinaryHeap<Candidate>> {
        self.heaps
            .iter_mut()
            .find(|(at, _)| *at == node)
            .map(|(_, heap)| heap)
    }

    fn cursor(&self, node: NodeId) -> u64 {
        self.cursors.get(node).copied().unwrap_or(0)
    }

    fn set_cursor(&mut self, node: NodeId, next: u64) {
        if self.cursors.len() <= node {
            self.cursors.resize(node + 1, 0);
        }
        self.cursors[node] = next;
    }
}

/// A step of the descent: an interior node of the share tree and the
/// child popped from its heap that the descent went into.
#[derive(Clone, Copy, Debug)]
struct Frame {
    node: NodeId,
    child: Option<Candidate>,
}

/// A fairshare queue's order for one turn: the descent from the root to
/// the account whose job is tried, kept between tries (the recursion of
/// the share tree as a stack).
pub(crate) struct FairshareOrder {
    queue: QueueIndex,
    now: SimTime,
    pass: FairPass,
    turn: Turn,
    /// From the root down; the top frame's child, when set, is a leaf.
    frames: Vec<Frame>,
    /// The job being tried: its user, and the reservations before it
    /// (a job that reserves changes its accounts' figures).
    current: Option<(UserId, usize)>,
}

impl FairshareOrder {
    pub(super) fn new(cluster: &Cluster, queue: QueueIndex, now: SimTime) -> Self {
        let nodes = cluster.queues[queue]
            .fairshare
            .as_ref()
            .map_or(0, |fairshare| fairshare.tree.nodes().len());
        let mut order = FairshareOrder {
            queue,
            now,
            pass: FairPass::new(nodes),
            turn: Turn::new(Round::Main),
            frames: Vec::new(),
            current: None,
        };
        order.enter(cluster, ROOT);
        order
    }

    /// The descent goes into interior node `node`, whose children wait in
    /// a heap by priority (made on the first visit of the pass).
    fn enter(&mut self, cluster: &Cluster, node: NodeId) {
        if self.pass.heap(node).is_none() {
            let heap = cluster.children_heap(self.queue, node, &self.pass, self.now);
            self.pass.heaps.push((node, heap));
        }
        self.frames.push(Frame { node, child: None });
    }

    /// The next job: down the tree by highest priority to an account with
    /// a job left to try; an exhausted account or group is dropped and its
    /// parent's next child taken.
    pub(super) fn next(&mut self, cluster: &Cluster) -> Option<Next> {
        loop {
            let frame = *self.frames.last()?;
            let Some(best) = frame.child else {
                let popped = self.pass.heap(frame.node).and_then(BinaryHeap::pop);
                let top = self.frames.len() - 1;
                match popped {
                    Some(best) => {
                        self.frames[top].child = Some(best);
                        if cluster.share_node_kind(self.queue, best.node)
                            == Some(NodeKind::Interior)
                        {
                            self.enter(cluster, best.node);
                        }
                    }
                    None => {
                        // Nothing left below this node in this pass.
                        self.frames.pop();
                        if let Some(parent) = self.frames.last_mut() {
                            parent.child = None;
                        }
                    }
                }
                continue;
            };
            match cluster.leaf_job(self.queue, best.node, &mut self.pass) {
                Some((id, user)) => {
                    self.current = Some((user, cluster.reservations.len()));
                    return Some(Next::pending(self.queue, id));
                }
                None => {
                    let top = self.frames.len() - 1;
                    self.frames[top].child = None;
                }
            }
        }
    }

    pub(super) fn turn(&mut self) -> &mut Turn {
        &mut self.turn
    }

    /// After a try: the accounts on the way down go back in their
    /// parents' heaps (their priorities recomputed if the try changed
    /// their figures) and the next descent starts at the root — unless the
    /// user's own account has nothing more to try this pass (its parent
    /// takes its next child) or the queue's turn is over.
    pub(super) fn tried(&mut self, cluster: &mut Cluster, outcome: Outcome) -> Flow {
        let Some((user, reservations)) = self.current.take() else {
            return Flow::Continue;
        };
        let changed = match outcome {
            Outcome::Started => true,
            Outcome::Failed { reason, scope } => {
                let changed = cluster.reservations.len() != reservations;
                match scope {
                    Scope::Job | Scope::Class => {}
                    Scope::User => {
                        cluster.stop_user(self.queue, user, reason);
                        // A user's own account has nothing more to try; a
                        // collective one goes on with its other users.
                        let leaf = self.frames.last().and_then(|frame| frame.child);
                        if leaf.is_some_and(|leaf| {
                            cluster.share_node_kind(self.queue, leaf.node) == Some(NodeKind::User)
                        }) {
                            if let Some(frame) = self.frames.last_mut() {
                                frame.child = None;
                            }
                            return Flow::Continue;
                        }
                    }
                    Scope::Queue => {
                        cluster.stop_queue(self.queue, reason);
                        return Flow::Stop;
                    }
                }
                changed
            }
        };
        self.climb(cluster, changed);
        Flow::Continue
    }

    /// Back up to the root after a try, each account going back in its
    /// parent's heap: with the priority it had when nothing `changed`,
    /// else recomputed.
    fn climb(&mut self, cluster: &Cluster, changed: bool) {
        for frame in self.frames.iter_mut().rev() {
            let Some(best) = frame.child.take() else {
                continue;
            };
            let known = (!changed).then_some(best.priority);
            if let Some(candidate) =
                cluster.candidate(self.queue, best.node, &self.pass, known, self.now)
            {
                if let Some(heap) = self.pass.heap(frame.node) {
                    heap.push(candidate);
                }
            }
        }
        self.frames.truncate(1);
    }
}

impl Cluster {
    fn share_node_kind(&self, queue: QueueIndex, node: NodeId) -> Option<NodeKind> {
        let fairshare = self.queues[queue].fairshare.as_ref()?;
        Some(fairshare.tree.node(node).kind.clone())
    }

    /// The children of `node` with pending jobs below them, by priority.
    fn children_heap(
        &self,
        queue: QueueIndex,
        node: NodeId,
        pass: &FairPass,
        now: SimTime,
    ) -> BinaryHeap<Candidate> {
        let Some(fairshare) = self.queues[queue].fairshare.as_ref() else {
            return BinaryHeap::new();
        };
        fairshare
            .tree
            .node(node)
            .children
            .iter()
            .filter_map(|&child| self.candidate(queue, child, pass, None, now))
            .collect()
    }

    /// `node` as a candidate for its parent's heap, if it has jobs left to
    /// try in this pass; its priority is `known` when it is, else
    /// computed.
    fn candidate(
        &self,
        queue: QueueIndex,
        node: NodeId,
        pass: &FairPass,
        known: Option<f64>,
        now: SimTime,
    ) -> Option<Candidate> {
        let tree = &self.queues[queue].fairshare.as_ref()?.tree;
        let share = tree.node(node);
        if share.pending_below == 0 {
            return None;
        }
        let next = if share.is_leaf() {
            *share.pending.range(pass.cursor(node)..).next()?.0
        } else {
            u64::MAX
        };
        let priority = match known {
            Some(priority) => priority,
            None => self.node_priority(queue, node, now)?.0,
        };
        Some(Candidate {
            priority,
            next,
            node,
        })
    }

    /// Leaf `leaf`'s next job, first come first served, past the pass's
    /// cursor and skipping the jobs of users stopped in this pass, with
    /// its user.
    fn leaf_job(
        &self,
        queue: QueueIndex,
        leaf: NodeId,
        pass: &mut FairPass,
    ) -> Option<(crate::job::JobId, UserId)> {
        loop {
            let cursor = pass.cursor(leaf);
            let (arrival, id) = self.queues[queue]
                .fairshare
                .as_ref()
                .and_then(|fairshare| fairshare.tree.node(leaf).pending.range(cursor..).next())
                .map(|(&arrival, &id)| (arrival, id))?;
            pass.set_cursor(leaf, arrival + 1);
            let Some(user) = self.jobs.get(id).map(|job| job.user) else {
                continue;
            };
            if !self.user_stopped(queue, user) {
                return Some((id, user));
            }
        }
    }
}

//! A fairshare queue's turn (seed 002): pending jobs are tried one at a
//! time from the share account with the highest dynamic priority,
//! recomputed after each try, first come first served within an account.
//! With group shares (`fairshare::tree`), the choice goes down the share
//! tree from the root: at each level the child with the highest priority,
//! until a user's account or a collective one (whose users' jobs go first
//! come, first served).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use mcfed_protocol::SimTime;

use crate::fairshare::tree::ROOT;
use crate::fairshare::{NodeId, NodeKind, ShareAccount, UsageTerms, dynamic_priority};
use crate::job::{QueueIndex, UserId};
use crate::scheduler::{Cluster, Transition};

use super::{Outcome, Round, Scope, Turn};

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

/// What one step down the share tree did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// A job was tried; `changed`: it started or reserved slots (the
    /// figures of the accounts on its path changed).
    Tried { changed: bool },
    /// Nothing left to try below this node in this pass.
    Exhausted,
    /// The queue's turn is over.
    StopQueue,
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

impl Cluster {
    /// The dynamic priority of share account `node` of fairshare queue
    /// `queue` at `now` (seed 002), with the figures behind it: its figures
    /// are those of every job of its users, with the slots their
    /// reservations hold. With [`Cluster::account_priority`], the one place
    /// a dynamic priority is computed (a user's, through the account its
    /// jobs count against: [`Cluster::dynamic_priority_of`]; absolute
    /// priority scheduling's FS factor is to read it there).
    pub(crate) fn node_priority(
        &self,
        queue: QueueIndex,
        node: NodeId,
        now: SimTime,
    ) -> Option<(f64, UsageTerms)> {
        let tree = &self.queues[queue].fairshare.as_ref()?.tree;
        let reserved = self.reserved_slots_below(queue, node);
        self.account_priority(queue, &tree.node(node).account, reserved, now)
    }

    /// The dynamic priority of the account `account` in `queue`, which
    /// holds `reserved` reserved slots, at `now`: every term of seed 002's
    /// formula, the optional ones as the queue's switches say.
    pub(crate) fn account_priority(
        &self,
        queue: QueueIndex,
        account: &ShareAccount,
        reserved: u32,
        now: SimTime,
    ) -> Option<(f64, UsageTerms)> {
        self.forwarding_account_priority(queue, account, reserved, 0, now)
    }

    /// [`Cluster::account_priority`] with `forwarded` slots of the
    /// account's jobs forwarded to other clusters and not finished (seed
    /// 002's fwd_job_slots, weighed by FWD_JOB_FACTOR).
    fn forwarding_account_priority(
        &self,
        queue: QueueIndex,
        account: &ShareAccount,
        reserved: u32,
        forwarded: u32,
        now: SimTime,
    ) -> Option<(f64, UsageTerms)> {
        let factors = &self.queues[queue].fairshare.as_ref()?.factors;
        let hist_hours = factors.hist_hours;
        let cpu_time = account.cpu_time(now, hist_hours);
        let run_time = if factors.run_time_decay {
            account.decayed_run_time(now, hist_hours)
        } else {
            account.run_time(now)
        };
        let fairshare_adjustment =
            self.adjustment
                .value(factors.fairshare_adjustment, account, cpu_time, run_time);
        let usage = UsageTerms {
            cpu_time,
            run_time,
            historical_run_time: if factors.hist_run_time {
                account.historical_run_time(now, hist_hours)
            } else {
                0.0
            },
            committed_run_time: if factors.committed_run_time > 0.0 {
                account.committed_run_time(now)
            } else {
                0.0
            },
            job_slots: f64::from(account.running_slots + reserved),
            fwd_job_slots: f64::from(forwarded),
            fairshare_adjustment,
            historical_gpu_run_time: if factors.gpu_hist_run_time {
                account.historical_gpu_run_time(now, hist_hours)
            } else {
                0.0
            },
            gpu_run_time: account.gpu_run_time(now),
            gpus: f64::from(account.gpus),
        };
        Some((dynamic_priority(account.shares, &usage, factors), usage))
    }

    /// The dynamic priority of `user` in FAIRSHARE send queue `queue` at
    /// `now`, with `forwarded` slots of the user's jobs forwarded from it
    /// and not finished (the submission cluster's fwd_job_slots; its own
    /// running figures there are zero, a send queue running nothing
    /// locally). `None` for a queue without fairshare, or a user without
    /// shares in it.
    pub fn forwarding_priority(
        &self,
        queue: &str,
        user: &str,
        forwarded: u32,
        now: SimTime,
    ) -> Option<f64> {
        let index = self.queue_index(queue)?;
        let tree = &self.queues[index].fairshare.as_ref()?.tree;
        let shares = tree.leaf_shares(user, &self.users.directory)?;
        self.forwarding_account_priority(index, &ShareAccount::new(shares), 0, forwarded, now)
            .map(|(priority, _)| priority)
    }

    /// Slots the reservations of `queue`'s jobs hold for the users whose
    /// accounts are at or below `node`.
    fn reserved_slots_below(&self, queue: QueueIndex, node: NodeId) -> u32 {
        if self.reservations.is_empty() {
            return 0;
        }
        let Some(fairshare) = self.queues[queue].fairshare.as_ref() else {
            return 0;
        };
        let users = &self.queues[queue].users;
        let mut leaves: Vec<UserId> = users
            .iter()
            .filter(|(_, user)| {
                user.leaf
                    .is_some_and(|leaf| fairshare.tree.covers(node, leaf))
            })
            .map(|(&id, _)| id)
            .collect();
        leaves.sort_unstable();
        leaves
            .into_iter()
            .map(|user| self.reserved_slots(queue, Some(user)))
            .sum()
    }

    pub(super) fn dispatch_fairshare(
        &mut self,
        queue: QueueIndex,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let nodes = self.queues[queue]
            .fairshare
            .as_ref()
            .map_or(0, |fairshare| fairshare.tree.nodes().len());
        let mut pass = FairPass::new(nodes);
        let mut turn = Turn::new(Round::Main);
        while let Step::Tried { .. } =
            self.interior_step(queue, ROOT, &mut pass, now, transitions, &mut turn)
        {}
    }

    /// One try below interior node `node`: its child with the highest
    /// priority, recursively.
    fn interior_step(
        &mut self,
        queue: QueueIndex,
        node: NodeId,
        pass: &mut FairPass,
        now: SimTime,
        transitions: &mut Vec<Transition>,
        turn: &mut Turn,
    ) -> Step {
        if pass.heap(node).is_none() {
            let heap = self.children_heap(queue, node, pass, now);
            pass.heaps.push((node, heap));
        }
        while let Some(best) = pass.heap(node).and_then(BinaryHeap::pop) {
            let leaf = self.share_node_kind(queue, best.node) != Some(NodeKind::Interior);
            let step = if leaf {
                self.leaf_step(queue, best.node, pass, now, transitions, turn)
            } else {
                self.interior_step(queue, best.node, pass, now, transitions, turn)
            };
            match step {
                Step::Exhausted => continue,
                Step::StopQueue => return Step::StopQueue,
                Step::Tried { changed } => {
                    // Nothing changed: the account's figures, and so its
                    // priority, are as they were.
                    let known = (!changed).then_some(best.priority);
                    if let Some(candidate) = self.candidate(queue, best.node, pass, known, now) {
                        if let Some(heap) = pass.heap(node) {
                            heap.push(candidate);
                        }
                    }
                    return step;
                }
            }
        }
        Step::Exhausted
    }

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

    /// One try in leaf `leaf`: its next job, first come first served,
    /// skipping the jobs of users stopped in this pass.
    fn leaf_step(
        &mut self,
        queue: QueueIndex,
        leaf: NodeId,
        pass: &mut FairPass,
        now: SimTime,
        transitions: &mut Vec<Transition>,
        turn: &mut Turn,
    ) -> Step {
        let this_pass = self.cycle.pass;
        loop {
            let cursor = pass.cursor(leaf);
            let Some((arrival, id)) = self.queues[queue]
                .fairshare
                .as_ref()
                .and_then(|fairshare| fairshare.tree.node(leaf).pending.range(cursor..).next())
                .map(|(&arrival, &id)| (arrival, id))
            else {
                return Step::Exhausted;
            };
            pass.set_cursor(leaf, arrival + 1);
            let Some(user) = self.jobs.get(id).map(|job| job.user) else {
                continue;
            };
            let stopped = self.queues[queue]
                .users
                .get(&user)
                .and_then(|state| state.stopped)
                .is_some_and(|(pass, _)| pass == this_pass);
            if stopped {
                continue;
            }
            let reservations = self.reservations.len();
            let Outcome::Failed { reason, scope } =
                self.try_dispatch(queue, id, now, transitions, turn)
            else {
                return Step::Tried { changed: true };
            };
            self.set_reason(id, reason);
            let changed = self.reservations.len() != reservations;
            match scope {
                Scope::Job | Scope::Class => return Step::Tried { changed },
                Scope::User => {
                    if let Some(state) = self.queues[queue].users.get_mut(&user) {
                        state.stopped = Some((this_pass, reason));
                    }
                    // A user's own account has nothing more to try; a
                    // collective one goes on with its other users.
                    return if self.share_node_kind(queue, leaf) == Some(NodeKind::User) {
                        Step::Exhausted
                    } else {
                        Step::Tried { changed }
                    };
                }
                Scope::Queue => {
                    self.stop_queue(queue, reason);
                    return Step::StopQueue;
                }
            }
        }
    }
}

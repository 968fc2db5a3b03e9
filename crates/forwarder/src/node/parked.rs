//! Jobs waiting at the submission cluster that pended, parked until their
//! decision can change (issue 25, item 2: "decide again only when it can
//! change").
//!
//! A session decides the waiting jobs in order, and within a session the
//! view only loses slots: a job shaped like one that just pended (same send
//! queue, slots and resources) pends too, with that decision. So the jobs
//! of a first-come-first-served send queue that pended are kept in
//! *groups* of one shape and one pend reason, in submission order. A
//! session decides only each group's first job, in its place among the
//! others: if it pends for the group's reason, the whole group does, at the
//! cost of one decision; if it is forwarded, the next one is decided in its
//! own place; if it pends for another reason, each job of the group gets
//! that decision's record in its place, as before.
//!
//! A group of jobs no remote queue can ever take
//! ([`PendReason::NoQueueCanTake`]) is not even decided while the view's
//! [`fit_epoch`](crate::view::RemoteView::fit_epoch) stays the one it was
//! decided at and no other waiting job of its send queue and slots is
//! decided in the session (whose record would cite that decision): it
//! costs nothing until a remote queue's slots in all, resources or
//! reachability change.
//!
//! FAIRSHARE and APS send queues are not parked: their order hands each
//! place to the job their priorities say, so every place is walked.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::policy::{JobRequest, PendReason};

/// The shape of a job as the policy sees it: its send queue and what it
/// asks for (slots, resources, GPUs, and the queues that just refused it).
pub(super) type Shape = (usize, JobRequest);

/// Waiting jobs of one shape that last pended for one reason.
#[derive(Clone, Debug)]
struct Group {
    shape: Shape,
    reason: PendReason,
    /// Waiting key → job id, in submission order.
    jobs: BTreeMap<u64, u64>,
    /// The view's fit epoch when the group's reason was last confirmed.
    epoch: u64,
}

/// The parked jobs, by group.
#[derive(Clone, Debug, Default)]
pub(super) struct Parked {
    groups: Vec<Group>,
    by_key: FxHashMap<(Shape, PendReason), usize>,
    len: usize,
}

/// The order in which a session meets the parked groups: each one's first
/// job's waiting key, smallest first.
pub(super) type Heads = BinaryHeap<Reverse<(u64, usize)>>;

impl Parked {
    /// How many jobs are parked.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Parks job `id` (waiting key `key`) of `shape`, which pended for
    /// `reason` with the view at fit epoch `epoch`.
    pub(super) fn park(&mut self, shape: Shape, reason: PendReason, key: u64, id: u64, epoch: u64) {
        let index = match self.by_key.get(&(shape.clone(), reason.clone())) {
            Some(&index) => index,
            None => {
                self.groups.push(Group {
                    shape: shape.clone(),
                    reason: reason.clone(),
                    jobs: BTreeMap::new(),
                    epoch,
                });
                self.by_key.insert((shape, reason), self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        if self.groups[index].jobs.insert(key, id).is_none() {
            self.len += 1;
        }
    }

    /// Takes job `key` out of the group of `shape` and `reason`; says
    /// whether it was there.
    pub(super) fn remove(&mut self, shape: &Shape, reason: &PendReason, key: u64) -> bool {
        let Some(&index) = self.by_key.get(&(shape.clone(), reason.clone())) else {
            return false;
        };
        let removed = self.groups[index].jobs.remove(&key).is_some();
        if removed {
            self.len -= 1;
        }
        removed
    }

    /// Every parked job (waiting key, id), in no particular order.
    pub(super) fn jobs(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.groups
            .iter()
            .flat_map(|group| group.jobs.iter().map(|(&key, &id)| (key, id)))
    }

    /// The groups a session at fit epoch `epoch` must meet, by their first
    /// job: all but those of jobs no queue can take whose reason stands
    /// (same epoch) and whose send queue and slots no other job decided in
    /// the session shares (`deciding`: the send queue and slots of each
    /// waiting job not parked).
    pub(super) fn heads(&self, epoch: u64, deciding: &FxHashSet<(usize, u32)>) -> Heads {
        let standing =
            |group: &Group| group.reason == PendReason::NoQueueCanTake && group.epoch == epoch;
        let mut deciding = deciding.clone();
        for group in &self.groups {
            if !group.jobs.is_empty() && !standing(group) {
                deciding.insert((group.shape.0, group.shape.1.slots));
            }
        }
        self.groups
            .iter()
            .enumerate()
            .filter(|(_, group)| {
                !standing(group) || deciding.contains(&(group.shape.0, group.shape.1.slots))
            })
            .filter_map(|(index, group)| {
                let (&key, _) = group.jobs.first_key_value()?;
                Some(Reverse((key, index)))
            })
            .collect()
    }

    /// Group `index`'s shape and reason.
    pub(super) fn group(&self, index: usize) -> (&Shape, &PendReason) {
        let group = &self.groups[index];
        (&group.shape, &group.reason)
    }

    /// Group `index`'s first job (waiting key, id).
    pub(super) fn first(&self, index: usize) -> Option<(u64, u64)> {
        self.groups[index]
            .jobs
            .first_key_value()
            .map(|(&key, &id)| (key, id))
    }

    /// Takes group `index`'s first job out; returns the group's next first
    /// job's key, to meet it again there.
    pub(super) fn take_first(&mut self, index: usize) -> Option<u64> {
        let jobs = &mut self.groups[index].jobs;
        if jobs.pop_first().is_some() {
            self.len -= 1;
        }
        jobs.first_key_value().map(|(&key, _)| key)
    }

    /// Group `index`'s reason was confirmed at fit epoch `epoch`.
    pub(super) fn confirm(&mut self, index: usize, epoch: u64) {
        self.groups[index].epoch = epoch;
    }

    /// Drops the groups left empty (after a session: their indices change).
    pub(super) fn compact(&mut self) {
        if self.groups.iter().all(|group| !group.jobs.is_empty()) {
            return;
        }
        self.groups.retain(|group| !group.jobs.is_empty());
        self.by_key = self
            .groups
            .iter()
            .enumerate()
            .map(|(index, group)| ((group.shape.clone(), group.reason.clone()), index))
            .collect();
    }
}

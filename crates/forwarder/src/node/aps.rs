//! The order in which a forwarding session decides the waiting jobs of a
//! send queue with APS_PRIORITY and of the send queues of its QUEUE_GROUP
//! (issue 11, item 8; seed 001, "FCFS": "APS overrides the job sort result
//! of FCFS"). Each job's APS value is computed once per session, as the
//! execution side ranks its pending jobs once per dispatch pass: system
//! values first, then calculated values, each highest first; ties go to
//! the earlier submission; jobs the scheduler gives no value (none behind
//! the forwarder) come last, in submission order. The places of the
//! group's jobs in the session's submission order are kept; only which of
//! its jobs fills each one changes. In a FAIRSHARE send queue APS replaces
//! the order by users: FS is a factor like the others.
//!
//! Each job handed out comes with its [`ApsStanding`]: its value and how
//! many jobs of its group submitted before it were still waiting for
//! their turn — the jobs its value put it ahead of — for its decision
//! record.

use std::cmp::Ordering;
use std::sync::Arc;

use mcfed_protocol::SimTime;
use rustc_hash::FxHashMap;

use super::ForwarderNode;
use super::order::{ApsQuery, ApsStanding, ApsValue, SendOrder};

/// One waiting job of an APS group.
struct Ranked {
    value: Option<ApsValue>,
    /// When it was submitted, with its id: what ties go by.
    submitted: (SimTime, u64),
    /// Its place in the group by submission.
    place: usize,
    key: u64,
    id: u64,
}

/// One APS group's waiting jobs, in the order they are handed out.
struct GroupOrder {
    /// Best last, to be popped.
    ranked: Vec<Ranked>,
    /// Which places are still waiting for their turn.
    remaining: Fenwick,
}

/// The APS groups' orders for one session.
pub(super) struct ApsOrder {
    /// By the index of the group's send queue with APS_PRIORITY.
    groups: FxHashMap<usize, GroupOrder>,
}

impl ApsOrder {
    /// The orders of `node`'s APS groups over `waiting` (waiting key, job
    /// id) at `now`, by `order`'s values.
    pub(super) fn new(
        node: &ForwarderNode,
        waiting: &[(u64, u64)],
        order: &dyn SendOrder,
        now: SimTime,
    ) -> Self {
        let mut groups: FxHashMap<usize, Vec<Ranked>> = FxHashMap::default();
        if !node.any_aps {
            return ApsOrder {
                groups: FxHashMap::default(),
            };
        }
        let mut fs_of: FxHashMap<(usize, Arc<str>), Option<f64>> = FxHashMap::default();
        for &(key, id) in waiting {
            let Some(job) = node.jobs.get(&id) else {
                continue;
            };
            let send_queue = &node.send_queues[job.send_queue];
            let Some(group) = send_queue.aps_group else {
                continue;
            };
            let fs = send_queue.forwarded_slots.as_ref().and_then(|_| {
                *fs_of
                    .entry((job.send_queue, job.spec.user.clone()))
                    .or_insert_with(|| {
                        let forwarded = node.forwarded_slots(job.send_queue, &job.spec.user);
                        order.priority(&send_queue.name, &job.spec.user, forwarded)
                    })
            });
            let value = order.aps_value(&ApsQuery {
                id,
                queue: &send_queue.name,
                spec: &job.spec,
                pended: now.saturating_since(job.submitted_at),
                fs,
                set: job.aps,
            });
            groups.entry(group).or_default().push(Ranked {
                value,
                submitted: (job.submitted_at, id),
                place: 0,
                key,
                id,
            });
        }
        let groups = groups
            .into_iter()
            .map(|(group, jobs)| (group, GroupOrder::new(jobs)))
            .collect();
        ApsOrder { groups }
    }

    /// Whether the jobs of APS group `group` are handed out here.
    pub(super) fn orders(&self, group: usize) -> bool {
        self.groups.contains_key(&group)
    }

    /// The next job (waiting key, id) of APS group `group`, with where APS
    /// put it (`None` for a job the scheduler gave no value).
    pub(super) fn next(&mut self, group: usize) -> Option<((u64, u64), Option<ApsStanding>)> {
        let order = self.groups.get_mut(&group)?;
        let next = order.ranked.pop()?;
        let ahead_of = order.remaining.before(next.place);
        order.remaining.take(next.place);
        let standing = next.value.map(|value| ApsStanding { value, ahead_of });
        Some(((next.key, next.id), standing))
    }

    /// Every job of APS group `group`, in the order they are handed out.
    pub(super) fn into_order(mut self, group: usize) -> Vec<u64> {
        let mut jobs = Vec::new();
        while let Some(((_, id), _)) = self.next(group) {
            jobs.push(id);
        }
        jobs
    }
}

impl ForwarderNode {
    /// The order in which the next session would decide the jobs waiting
    /// in send queue `queue` at `now`: for a send queue of an APS group,
    /// every waiting job of its group by APS value (as `order` gives
    /// them); otherwise the queue's own, first come, first served. `None`
    /// for a FAIRSHARE send queue without APS (it picks by user as it
    /// goes) or a name that is no send queue.
    pub fn waiting_order(
        &self,
        queue: &str,
        now: SimTime,
        order: &dyn SendOrder,
    ) -> Option<Vec<u64>> {
        let &index = self.send_queue_by_name.get(queue)?;
        let send_queue = &self.send_queues[index];
        match send_queue.aps_group {
            Some(group) => {
                let waiting =
                    self.waiting_where(|queue| self.send_queues[queue].aps_group == Some(group));
                Some(ApsOrder::new(self, &waiting, order, now).into_order(group))
            }
            None if send_queue.forwarded_slots.is_some() => None,
            None => Some(
                self.waiting_where(|queue| queue == index)
                    .into_iter()
                    .map(|(_, id)| id)
                    .collect(),
            ),
        }
    }

    /// The waiting jobs (waiting key, id) of the send queues `wanted`
    /// takes, in submission order.
    fn waiting_where(&self, wanted: impl Fn(usize) -> bool) -> Vec<(u64, u64)> {
        let mut jobs: Vec<(u64, u64)> = self
            .waiting
            .iter()
            .map(|(&key, &id)| (key, id))
            .chain(self.parked.jobs())
            .filter(|(_, id)| self.jobs.get(id).is_some_and(|job| wanted(job.send_queue)))
            .collect();
        jobs.sort_unstable();
        jobs
    }
}

impl GroupOrder {
    /// `ranked`, given their places by submission, in the order they are
    /// handed out.
    fn new(mut ranked: Vec<Ranked>) -> Self {
        ranked.sort_by_key(|job| job.submitted);
        for (place, job) in ranked.iter_mut().enumerate() {
            job.place = place;
        }
        // Worst first, so that the best is popped first.
        ranked.sort_by(|a, b| decide_before(b, a));
        let remaining = Fenwick::full(ranked.len());
        GroupOrder { ranked, remaining }
    }
}

/// Whether `a` is decided before `b` (`Less`): by APS value, valued jobs
/// before the others, then by submission.
fn decide_before(a: &Ranked, b: &Ranked) -> Ordering {
    let by_value = match (a.value, b.value) {
        (Some(a), Some(b)) => a.order(b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    by_value.then_with(|| a.place.cmp(&b.place))
}

/// A Fenwick tree of 0/1 flags: which places still wait, and how many
/// wait before a given one, in O(log n).
struct Fenwick {
    tree: Vec<i64>,
}

impl Fenwick {
    /// `len` places, all waiting.
    fn full(len: usize) -> Self {
        let mut tree = vec![0; len + 1];
        for index in 1..=len {
            tree[index] += 1;
            let parent = index + (index & index.wrapping_neg());
            if parent <= len {
                tree[parent] += tree[index];
            }
        }
        Fenwick { tree }
    }

    /// How many places before `place` still wait.
    fn before(&self, place: usize) -> u32 {
        let mut index = place.min(self.tree.len().saturating_sub(1));
        let mut sum = 0;
        while index > 0 {
            sum += self.tree[index];
            index &= index - 1;
        }
        u32::try_from(sum.max(0)).unwrap_or(u32::MAX)
    }

    /// `place` no longer waits.
    fn take(&mut self, place: usize) {
        let mut index = place + 1;
        while index < self.tree.len() {
            self.tree[index] -= 1;
            index += index & index.wrapping_neg();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Fenwick;

    #[test]
    fn the_tree_counts_the_places_still_waiting_before_one() {
        let mut tree = Fenwick::full(6);
        assert_eq!(tree.before(0), 0);
        assert_eq!(tree.before(5), 5);
        tree.take(2);
        tree.take(4);
        assert_eq!(tree.before(5), 3);
        assert_eq!(tree.before(3), 2);
        assert_eq!(tree.before(2), 2);
        assert_eq!(Fenwick::full(0).before(0), 0);
    }
}

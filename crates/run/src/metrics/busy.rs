//! Busy slot time: the slot-seconds of running jobs, counted over the
//! intervals each job runs — from a start, resumption or resize to its
//! suspension, stop, requeue, migration, rerun, resize or end — so that a
//! suspended job's slots are not counted beside its preemptor's and a
//! cluster is never more than fully busy.
//!
//! Asked at every start and end, so kept cheap: a cluster's open intervals
//! are found by its name's address (the name every transition of a member
//! shares) and keyed by the job's number alone, and an interval holds the
//! place of the tally its slot-seconds go to, found when it opened.

use mcfed_protocol::{ClusterName, JobEvent, SimTime};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// A job running since `since` on `slots` slots, counted for the queue
/// `queue` of its cluster: an open interval as it travels
/// ([`Running::parts`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Interval {
    pub(super) since: SimTime,
    pub(super) slots: u32,
    pub(super) queue: String,
}

/// An open interval: since when, on how many slots, and the place of the
/// tally (cluster and queue) its slot-seconds go to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Open {
    pub(super) since: SimTime,
    pub(super) slots: u32,
    pub(super) tally: usize,
}

/// The open intervals of one cluster's running jobs, by job number.
#[derive(Clone, Debug)]
struct ClusterRunning {
    cluster: ClusterName,
    open: FxHashMap<u64, Open>,
}

/// The running intervals still open, by cluster and job.
#[derive(Clone, Debug, Default)]
pub(super) struct Running {
    clusters: Vec<ClusterRunning>,
}

impl PartialEq for Running {
    /// The same open intervals, whatever order the clusters came in.
    fn eq(&self, other: &Self) -> bool {
        let open = |running: &Running| {
            running
                .clusters
                .iter()
                .filter(|held| !held.open.is_empty())
                .count()
        };
        open(self) == open(other)
            && self.clusters.iter().all(|held| {
                held.open.is_empty()
                    || other
                        .clusters
                        .iter()
                        .any(|theirs| theirs.cluster == held.cluster && theirs.open == held.open)
            })
    }
}

/// What a transition does to a job's running interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Effect {
    /// A new interval opens (one still open is closed first).
    Open,
    /// The open interval, if any, closes and a new one opens at once.
    Reopen,
    /// The open interval, if any, closes.
    Close,
    /// The interval is untouched.
    Nothing,
}

/// What `event` does to its job's running interval.
pub(super) fn effect_of(event: JobEvent) -> Effect {
    match event {
        JobEvent::Started | JobEvent::Resumed => Effect::Open,
        JobEvent::Resized | JobEvent::Switched => Effect::Reopen,
        JobEvent::Suspended
        | JobEvent::Stopped
        | JobEvent::Requeued
        | JobEvent::Migrated
        | JobEvent::Rerun
        | JobEvent::Finished
        | JobEvent::Killed
        | JobEvent::RunLimit
        | JobEvent::ReservationEnded => Effect::Close,
        JobEvent::Held
        | JobEvent::Released
        | JobEvent::Modified
        | JobEvent::Waiting
        | JobEvent::Pended => Effect::Nothing,
    }
}

impl Open {
    /// This interval, ended at `at`.
    fn closed_at(self, at: SimTime) -> Closed {
        Closed {
            slot_seconds: at.saturating_since(self.since).as_secs_f64() * f64::from(self.slots),
            tally: self.tally,
            until: at,
        }
    }
}

/// A closed interval: where its slot-seconds go, and when it ended.
pub(super) struct Closed {
    pub(super) tally: usize,
    pub(super) slot_seconds: f64,
    pub(super) until: SimTime,
}

impl Running {
    /// The open intervals of `cluster`, found by its name's address first
    /// (names at the same address are the same name), then by its bytes.
    fn of(&mut self, cluster: &ClusterName) -> &mut FxHashMap<u64, Open> {
        let same = |held: &ClusterName| std::ptr::eq(held.as_str(), cluster.as_str());
        let place = self
            .clusters
            .iter()
            .position(|held| same(&held.cluster))
            .or_else(|| {
                self.clusters
                    .iter()
                    .position(|held| held.cluster == *cluster)
            });
        let place = place.unwrap_or_else(|| {
            self.clusters.push(ClusterRunning {
                cluster: cluster.clone(),
                open: FxHashMap::default(),
            });
            self.clusters.len() - 1
        });
        &mut self.clusters[place].open
    }

    /// Opens `interval` for job `job` of `cluster`: the interval still
    /// open, if any (a restart without an end), closes at its start.
    pub(super) fn open(
        &mut self,
        cluster: &ClusterName,
        job: u64,
        interval: Open,
    ) -> Option<Closed> {
        // One lookup: the interval opened replaces the one it closes.
        let replaced = self.of(cluster).insert(job, interval)?;
        Some(replaced.closed_at(interval.since))
    }

    /// Closes job `job`'s open interval of `cluster`, if it has one, and
    /// opens `interval` in its place (a resize, a switch of queue).
    pub(super) fn reopen(
        &mut self,
        cluster: &ClusterName,
        job: u64,
        interval: Open,
    ) -> Option<Closed> {
        let open = self.of(cluster).get_mut(&job)?;
        Some(std::mem::replace(open, interval).closed_at(interval.since))
    }

    /// Closes job `job`'s open interval of `cluster` at `at`, if it has
    /// one.
    pub(super) fn close(&mut self, cluster: &ClusterName, job: u64, at: SimTime) -> Option<Closed> {
        Some(self.of(cluster).remove(&job)?.closed_at(at))
    }

    /// Closes every open interval at `end` (the run stopped with the jobs
    /// still running), in the order of cluster name and job number.
    pub(super) fn close_all(&mut self, end: SimTime) -> Vec<Closed> {
        let mut clusters = std::mem::take(&mut self.clusters);
        clusters.sort_by(|a, b| a.cluster.cmp(&b.cluster));
        let mut closed = Vec::new();
        for held in clusters {
            let mut open: Vec<(u64, Open)> = held.open.into_iter().collect();
            open.sort_by_key(|&(job, _)| job);
            closed.extend(open.into_iter().map(|(_, open)| open.closed_at(end)));
        }
        closed
    }

    /// The open intervals, to send (a process's recorder), each with its
    /// tally's queue name (`queue_of`).
    pub(super) fn parts(
        &self,
        queue_of: impl Fn(usize) -> String,
    ) -> Vec<(ClusterName, u64, Interval)> {
        let mut parts: Vec<_> = self
            .clusters
            .iter()
            .flat_map(|held| {
                held.open.iter().map(|(&job, open)| {
                    let interval = Interval {
                        since: open.since,
                        slots: open.slots,
                        queue: queue_of(open.tally),
                    };
                    (held.cluster.clone(), job, interval)
                })
            })
            .collect();
        parts.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        parts
    }

    /// Adds open intervals received, each counted for the tally
    /// `tally_of` finds by its cluster and queue.
    pub(super) fn merge(
        &mut self,
        parts: Vec<(ClusterName, u64, Interval)>,
        mut tally_of: impl FnMut(&ClusterName, &str) -> usize,
    ) {
        for (cluster, job, interval) in parts {
            let open = Open {
                since: interval.since,
                slots: interval.slots,
                tally: tally_of(&cluster, &interval.queue),
            };
            self.of(&cluster).insert(job, open);
        }
    }
}

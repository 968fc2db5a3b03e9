//! Busy slot time: the slot-seconds of running jobs, counted over the
//! intervals each job runs — from a start, resumption or resize to its
//! suspension, stop, requeue, migration, rerun, resize or end — so that a
//! suspended job's slots are not counted beside its preemptor's and a
//! cluster is never more than fully busy.

use mcfed_cluster::Transition;
use mcfed_protocol::{ClusterName, JobEvent, QueueName, SimTime};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// A job running since `since` on `slots` slots, counted for the queue
/// `queue` of its cluster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Interval {
    pub(super) since: SimTime,
    pub(super) slots: u32,
    pub(super) queue: QueueName,
}

/// The running intervals still open, by cluster and job.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Running {
    open: FxHashMap<(ClusterName, u64), Interval>,
}

/// What a transition does to a job's running interval.
enum Effect {
    Open,
    Close,
    Reopen,
    Nothing,
}

fn effect_of(event: JobEvent) -> Effect {
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

impl Interval {
    /// This interval, ended at `at`.
    fn closed_at(self, at: SimTime) -> Closed {
        Closed {
            slot_seconds: at.saturating_since(self.since).as_secs_f64() * f64::from(self.slots),
            queue: self.queue,
            until: at,
        }
    }
}

/// A closed interval: where its slot-seconds go, and when it ended.
pub(super) struct Closed {
    pub(super) queue: QueueName,
    pub(super) slot_seconds: f64,
    pub(super) until: SimTime,
}

impl Running {
    /// Takes `transition` of `cluster`: the interval it closes, if any.
    pub(super) fn transition(
        &mut self,
        cluster: &ClusterName,
        transition: &Transition,
    ) -> Option<Closed> {
        let at = transition.at;
        let interval = || Interval {
            since: at,
            slots: transition.slots,
            queue: transition.queue.clone(),
        };
        match effect_of(transition.event) {
            // One lookup: the interval opened replaces the one it closes.
            Effect::Open => {
                let key = (cluster.clone(), transition.job.0);
                let replaced = self.open.insert(key, interval());
                replaced.map(|replaced| replaced.closed_at(at))
            }
            Effect::Reopen => {
                let key = (cluster.clone(), transition.job.0);
                let open = self.open.get_mut(&key)?;
                Some(std::mem::replace(open, interval()).closed_at(at))
            }
            Effect::Close => self.close(&(cluster.clone(), transition.job.0), at),
            Effect::Nothing => None,
        }
    }

    fn close(&mut self, key: &(ClusterName, u64), at: SimTime) -> Option<Closed> {
        Some(self.open.remove(key)?.closed_at(at))
    }

    /// Closes every open interval at `end` (the run stopped with the jobs
    /// still running): `(cluster, closed)` each.
    pub(super) fn close_all(&mut self, end: SimTime) -> Vec<(ClusterName, Closed)> {
        let mut keys: Vec<(ClusterName, u64)> = self.open.keys().cloned().collect();
        keys.sort();
        keys.into_iter()
            .filter_map(|key| {
                let closed = self.close(&key, end)?;
                Some((key.0, closed))
            })
            .collect()
    }

    /// The open intervals, to send (a process's recorder).
    pub(super) fn parts(&self) -> Vec<(ClusterName, u64, Interval)> {
        let mut parts: Vec<_> = self
            .open
            .iter()
            .map(|((cluster, job), interval)| (cluster.clone(), *job, interval.clone()))
            .collect();
        parts.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        parts
    }

    /// Adds open intervals received.
    pub(super) fn merge(&mut self, parts: Vec<(ClusterName, u64, Interval)>) {
        for (cluster, job, interval) in parts {
            self.open.insert((cluster, job), interval);
        }
    }
}

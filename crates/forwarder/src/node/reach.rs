//! Unreachable remote clusters (mcfed's MC_UNREACHABLE_UPDATES and
//! MC_RECLAIM_TIME; [`Reachability`] says the rule), and the settling of a
//! job's two copies when the cluster it was taken back from turns out to
//! have started it.
//!
//! A cluster is unreachable while its link is known down, or once its last
//! counter update is older than its limit. Before each session its queues
//! are marked so in the view (no candidates: "remote cluster
//! unreachable"). Once it has been unreachable for the reclaim time, the
//! jobs forwarded there that had not started come back to be decided
//! again, each with a note; the copy left there is withdrawn if it has not
//! started (`JobWithdraw { pending_only: true }`) and remembered
//! ([`LeftBehind`]). The next sync with that cluster does not list it, so
//! the cluster withdraws it whatever its state; it cannot have ended
//! meanwhile, since an execution cluster out of step with its submission
//! cluster holds the ends of its jobs until the sync.
//!
//! A forwarder restored from its journal does not take back a job restored
//! at a remote cluster before that cluster has answered for it (the sync
//! on reconnection asks): what it believes of the job may be out of date
//! (word of a start or an end lost with the process), and the cluster, not
//! having noticed the restart, would not hold the job's end.
//!
//! When that copy is heard to have started before the sync, the one rule is:
//! **the copy decided again wins if it has started; otherwise the copy
//! left behind wins.** The loser is withdrawn whatever its state, so a job
//! finishes once — unless both copies finished before either was heard of,
//! which is logged as an error.

use std::time::Duration;

use mcfed_protocol::{ClusterName, Envelope, JobEvent, JobWithdraw, Message, SimTime};
use rustc_hash::FxHashMap;

use super::reply::{Names, Reply, Then};
use super::{ForwarderNode, Handled, LeftBehind, Reachability, SourceState};

/// What the forwarder knows of its remote clusters' reachability.
#[derive(Clone, Debug)]
pub(super) struct Reach {
    /// How old a cluster's last update may grow.
    stale_after: FxHashMap<ClusterName, Duration>,
    /// How long a cluster stays unreachable before its jobs come back.
    reclaim_after: Option<Duration>,
    /// Clusters whose link is known down, since when.
    down_since: FxHashMap<ClusterName, SimTime>,
    /// When the forwarder started or was restored: a cluster that has
    /// sent no update yet counts as silent from then.
    start: SimTime,
    /// Per cluster, the start of the unreachable spell whose jobs were
    /// taken back already.
    reclaimed_spell: FxHashMap<ClusterName, SimTime>,
    /// Jobs restored from the journal at a remote cluster that has not
    /// said anything about them since: what the forwarder believes of them
    /// may be out of date (word of a start or an end lost with the
    /// process), and their cluster may not know it is out of step, so
    /// they are not taken back until it has answered for them.
    pub(super) unconfirmed: rustc_hash::FxHashSet<u64>,
}

impl Reach {
    pub(super) fn new(config: &Reachability) -> Self {
        Reach {
            stale_after: config.stale_after.iter().cloned().collect(),
            reclaim_after: config.reclaim_after,
            down_since: FxHashMap::default(),
            start: SimTime::ZERO,
            reclaimed_spell: FxHashMap::default(),
            unconfirmed: Default::default(),
        }
    }

    /// Counts silence from `start` (a restored forwarder).
    pub(super) fn restart_at(&mut self, start: SimTime) {
        self.start = start;
    }
}

impl ForwarderNode {
    /// The link to remote cluster `cluster` went down (or came up) at
    /// `now` (a driver that knows its links says so; the in-process
    /// engines go by the age of the counters alone).
    pub fn link(&mut self, cluster: &ClusterName, up: bool, now: SimTime) {
        if up {
            self.reach.down_since.remove(cluster);
            // Back in reach: the jobs waiting here may go there now.
            if !self.waiting.is_empty() {
                self.session_due = true;
            }
        } else {
            self.reach.down_since.entry(cluster.clone()).or_insert(now);
        }
    }

    /// When `cluster`'s current unreachable spell starts (or will start,
    /// if nothing is heard from it meanwhile), if it has a limit or its
    /// link is down.
    fn spell_start(&self, cluster: &ClusterName) -> Option<SimTime> {
        let stale = self.reach.stale_after.get(cluster).map(|limit| {
            let heard = self
                .view
                .cluster_taken_at(cluster)
                .unwrap_or(self.reach.start);
            heard + *limit
        });
        let down = self.reach.down_since.get(cluster).copied();
        match (stale, down) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether remote cluster `cluster` is unreachable at `now`: its link
    /// is down, or its last counter update is older than its limit.
    pub fn is_unreachable(&self, cluster: &ClusterName, now: SimTime) -> bool {
        self.reach.down_since.contains_key(cluster)
            || self.spell_start(cluster).is_some_and(|since| since < now)
    }

    /// Marks each remote cluster's queues reachable or not, in the view
    /// (and the oracle's, which judges figures, not reachability).
    pub(super) fn mark_unreachable(&mut self, now: SimTime) {
        let clusters: Vec<ClusterName> = self.view.clusters().cloned().collect();
        for cluster in clusters {
            let unreachable = self.is_unreachable(&cluster, now);
            self.view.set_unreachable(&cluster, unreachable);
            if let Some(oracle) = &mut self.oracle {
                oracle.set_unreachable(&cluster, unreachable);
            }
        }
    }

    /// When the next cluster holding jobs that have not started would have
    /// been unreachable for the reclaim time (if nothing is heard from it).
    pub(super) fn next_reclaim(&self) -> Option<SimTime> {
        let reclaim = self.reach.reclaim_after?;
        self.unstarted
            .iter()
            .filter(|(_, count)| **count > 0)
            .filter_map(|(cluster, _)| {
                let spell = self.spell_start(cluster)?;
                let done = self.reach.reclaimed_spell.get(cluster) == Some(&spell);
                (!done).then_some(spell + reclaim)
            })
            .min()
    }

    /// Takes back, at `now`, the jobs that have not started at every
    /// cluster unreachable for the reclaim time.
    pub(super) fn reclaim(&mut self, now: SimTime) {
        let Some(reclaim) = self.reach.reclaim_after else {
            return;
        };
        let due: Vec<(ClusterName, SimTime)> = self
            .unstarted
            .iter()
            .filter(|(_, count)| **count > 0)
            .filter_map(|(cluster, _)| {
                let spell = self.spell_start(cluster)?;
                let done = self.reach.reclaimed_spell.get(cluster) == Some(&spell);
                (!done && spell + reclaim <= now && self.is_unreachable(cluster, now))
                    .then(|| (cluster.clone(), spell))
            })
            .collect();
        for (cluster, spell) in due {
            self.reach.reclaimed_spell.insert(cluster.clone(), spell);
            self.reclaim_from(&cluster, reclaim, now);
        }
    }

    /// Takes back the jobs at `cluster` that have not started.
    fn reclaim_from(&mut self, cluster: &ClusterName, reclaim: Duration, now: SimTime) {
        let mut ids: Vec<u64> = self
            .jobs
            .values()
            .filter(|job| {
                matches!(
                    job.state,
                    SourceState::Forwarded { .. } | SourceState::Accepted { .. }
                ) && job
                    .remote_queue()
                    .is_some_and(|to| self.view.cluster_of(to) == cluster)
                    && !self.reach.unconfirmed.contains(&job.id)
            })
            .map(|job| job.id)
            .collect();
        ids.sort_unstable();
        tracing::warn!(at = %now, cluster = %self.cluster, remote = %cluster, jobs = ids.len(), "remote cluster unreachable: its jobs that had not started come back");
        for id in ids {
            let Some(job) = self.jobs.get_mut(&id) else {
                continue;
            };
            let Some(queue) = job.remote_queue() else {
                continue;
            };
            let left = LeftBehind {
                queue,
                forward_seq: job.forward_seq,
                dest_job: job.dest_job(),
            };
            job.left_behind = Some(left);
            self.count_forwarded(id, true);
            self.forget_forward(cluster, left.forward_seq);
            self.withdraw(
                cluster,
                id,
                left.forward_seq,
                true,
                "taken back: unreachable",
            );
            let note = format!(
                "taken back from {}: remote cluster unreachable for {}s (MC_RECLAIM_TIME)",
                self.view.queue_ref(queue),
                reclaim.as_secs()
            );
            self.requeue(id, note);
        }
    }

    /// Tells `cluster` to take job `id`'s copy sent by forward `forward_seq`
    /// away (only if it has not started, with `pending_only`).
    fn withdraw(
        &mut self,
        cluster: &ClusterName,
        id: u64,
        forward_seq: u64,
        pending_only: bool,
        reason: &str,
    ) {
        self.outgoing.push(Envelope {
            from: self.cluster.clone(),
            to: cluster.clone(),
            message: Message::JobWithdraw(JobWithdraw {
                source_job: id,
                forward_seq,
                pending_only,
                reason: reason.to_owned(),
            }),
        });
    }

    /// A reply from `from` about a job, not about its current forward:
    /// if it is about the copy left behind there, settle the two copies.
    pub(super) fn settle(&mut self, from: &ClusterName, reply: Reply) -> Handled {
        let id = reply.source_job;
        let Some(left) = self.left_behind_at(from, id, reply.names) else {
            return Handled::Nothing;
        };
        match reply.then {
            Then::ComeBack { .. } => {
                self.set_left_behind(id, None);
                Handled::Nothing
            }
            Then::Accept { dest_job }
            | Then::Status {
                dest_job,
                event: JobEvent::Requeued,
            } => {
                // Still pending there: take it away if it has not started.
                self.set_left_behind(
                    id,
                    Some(LeftBehind {
                        dest_job: Some(dest_job),
                        ..left
                    }),
                );
                self.withdraw(from, id, left.forward_seq, true, "taken back: unreachable");
                self.session_due = true;
                Handled::Nothing
            }
            Then::Status { dest_job, event } => {
                self.settle_started(from, id, left, dest_job, event)
            }
        }
    }

    /// The copy left behind at `from` started (or finished): the current
    /// copy wins if it has started, else the one left behind.
    fn settle_started(
        &mut self,
        from: &ClusterName,
        id: u64,
        left: LeftBehind,
        dest_job: u64,
        event: JobEvent,
    ) -> Handled {
        let Some(job) = self.jobs.get(&id) else {
            return Handled::Nothing;
        };
        let current_started = matches!(
            job.state,
            SourceState::Running { .. }
                | SourceState::Suspended { .. }
                | SourceState::Stopped { .. }
        );
        self.set_left_behind(id, None);
        if current_started {
            if event == JobEvent::Finished {
                tracing::error!(cluster = %self.cluster, job = id, remote = %from, "a job ran twice: its copy left at an unreachable cluster finished while the copy decided again runs");
            }
            tracing::info!(cluster = %self.cluster, job = id, remote = %from, "the copy decided again has started: the one left behind is withdrawn");
            self.withdraw(
                from,
                id,
                left.forward_seq,
                false,
                "another copy of the job runs",
            );
            return Handled::Nothing;
        }
        tracing::info!(cluster = %self.cluster, job = id, remote = %from, "the copy left behind started first: it stays, the other is withdrawn");
        self.drop_current_copy(id);
        if let Some(job) = self.jobs.get_mut(&id) {
            job.forward_seq = left.forward_seq;
            job.note = None;
        }
        self.status(id, left.queue, dest_job, event);
        Handled::Status {
            source_job: id,
            event,
        }
    }

    /// Withdraws job `id`'s current copy, waiting here or forwarded but not
    /// started.
    fn drop_current_copy(&mut self, id: u64) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        match job.state {
            SourceState::Waiting => {
                let key = job.waiting_key;
                self.waiting.remove(&key);
            }
            SourceState::Forwarded { to, forward_seq } => {
                let cluster = self.view.cluster_of(to).clone();
                self.forget_forward(&cluster, forward_seq);
                self.withdraw(
                    &cluster,
                    id,
                    forward_seq,
                    false,
                    "another copy of the job runs",
                );
            }
            SourceState::Accepted { to, .. } => {
                let cluster = self.view.cluster_of(to).clone();
                let seq = job.forward_seq;
                self.withdraw(&cluster, id, seq, false, "another copy of the job runs");
            }
            SourceState::GaveUp
            | SourceState::Done
            | SourceState::Held
            | SourceState::Running { .. }
            | SourceState::Suspended { .. }
            | SourceState::Stopped { .. }
            | SourceState::HeldThere { .. } => {}
        }
        self.gave_up.retain(|&gave_up| gave_up != id);
    }

    /// The copy of job `id` left behind at `from`, if `names` names it.
    fn left_behind_at(&self, from: &ClusterName, id: u64, names: Names) -> Option<LeftBehind> {
        let left = self.jobs.get(&id)?.left_behind?;
        if self.view.cluster_of(left.queue) != from {
            return None;
        }
        let named = match names {
            Names::Answer { forward_seq } | Names::Forward { forward_seq } => {
                forward_seq == left.forward_seq
            }
            Names::DestJob(dest_job) => left.dest_job.is_none_or(|known| known == dest_job),
        };
        named.then_some(left)
    }

    fn set_left_behind(&mut self, id: u64, left: Option<LeftBehind>) {
        if let Some(job) = self.jobs.get_mut(&id) {
            job.left_behind = left;
        }
        self.note_change(id);
    }
}

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

use super::reply::{Names, Reply, Then};
use super::{ForwarderNode, Handled, LeftBehind, Reachability, SourceState};
use crate::view::RemoteView;

/// What the forwarder knows of its remote clusters' reachability, by the
/// view's cluster index (so the checks before each session and at every
/// wake-up read arrays, not maps keyed by name).
#[derive(Clone, Debug)]
pub(super) struct Reach {
    /// How old a cluster's last update may grow.
    stale_after: Vec<Option<Duration>>,
    /// How long a cluster stays unreachable before its jobs come back.
    reclaim_after: Option<Duration>,
    /// Since when each cluster's link is known down.
    down_since: Vec<Option<SimTime>>,
    /// When the forwarder started or was restored: a cluster that has
    /// sent no update yet counts as silent from then.
    start: SimTime,
    /// Per cluster, the start of the unreachable spell whose jobs were
    /// taken back already.
    reclaimed_spell: Vec<Option<SimTime>>,
    /// Per cluster, how many jobs forwarded there have not started.
    unstarted: Vec<u32>,
    /// Per cluster, the start of its current spell and when its jobs that
    /// have not started come back ([`ForwarderNode::reclaim_due`]), kept
    /// up to date as what it depends on changes, so the next wake-up is
    /// found without asking each cluster again.
    due: Vec<Option<(SimTime, SimTime)>>,
    /// The earliest time in `due`, kept as it changes (the node is asked
    /// for its next wake-up after every step).
    next_due: Option<SimTime>,
    /// Jobs restored from the journal at a remote cluster that has not
    /// said anything about them since: what the forwarder believes of them
    /// may be out of date (word of a start or an end lost with the
    /// process), and their cluster may not know it is out of step, so
    /// they are not taken back until it has answered for them.
    pub(super) unconfirmed: rustc_hash::FxHashSet<u64>,
}

impl Reach {
    /// The rule of `config` for the clusters of `view`.
    pub(super) fn new(config: &Reachability, view: &RemoteView) -> Self {
        let clusters = view.cluster_count();
        let mut stale_after = vec![None; clusters];
        for (cluster, limit) in &config.stale_after {
            if let Some(index) = view.cluster_index(cluster) {
                stale_after[index] = Some(*limit);
            }
        }
        Reach {
            stale_after,
            reclaim_after: config.reclaim_after,
            down_since: vec![None; clusters],
            start: SimTime::ZERO,
            reclaimed_spell: vec![None; clusters],
            unstarted: vec![0; clusters],
            due: vec![None; clusters],
            next_due: None,
            unconfirmed: Default::default(),
        }
    }

    /// Sets cluster `index`'s spell and reclaim time, keeping the earliest
    /// reclaim time: read again from every cluster only when the one that
    /// was the earliest moves later or goes.
    fn set_due(&mut self, index: usize, due: Option<(SimTime, SimTime)>) {
        let was = std::mem::replace(&mut self.due[index], due).map(|(_, at)| at);
        let now = due.map(|(_, at)| at);
        match (now, self.next_due) {
            (Some(at), Some(next)) if at <= next => self.next_due = Some(at),
            (Some(at), None) => self.next_due = Some(at),
            _ if was.is_some() && was == self.next_due && now != was => {
                self.next_due = self.due.iter().flatten().map(|&(_, at)| at).min();
            }
            _ => {}
        }
    }
}

impl ForwarderNode {
    /// The link to remote cluster `cluster` went down (or came up) at
    /// `now` (a driver that knows its links says so; the in-process
    /// engines go by the age of the counters alone).
    pub fn link(&mut self, cluster: &ClusterName, up: bool, now: SimTime) {
        let Some(index) = self.view.cluster_index(cluster) else {
            return;
        };
        if up {
            self.reach.down_since[index] = None;
            // Back in reach: the jobs waiting here may go there now.
            if self.waiting_jobs() > 0 {
                self.session_due = true;
            }
        } else {
            self.reach.down_since[index].get_or_insert(now);
        }
        self.refresh_reclaim(index);
    }

    /// Counts silence from `start` (a restored forwarder).
    pub(super) fn restart_at(&mut self, start: SimTime) {
        self.reach.start = start;
        for index in 0..self.view.cluster_count() {
            self.refresh_reclaim(index);
        }
    }

    /// Job `to`'s queue's cluster has `delta` more jobs that have not
    /// started there.
    pub(super) fn count_unstarted_at(&mut self, to: crate::view::RemoteQueueId, delta: i32) {
        let index = self.view.cluster_index_of(to);
        let count = &mut self.reach.unstarted[index];
        let before = *count;
        *count = count.saturating_add_signed(delta);
        if (before == 0) != (*count == 0) {
            self.refresh_reclaim(index);
        }
    }

    /// Works out again when remote cluster `index`'s jobs would come back
    /// (after what it depends on changed: its jobs not started, its last
    /// update, its link, the spell last reclaimed, the start).
    pub(super) fn refresh_reclaim(&mut self, index: usize) {
        let due = self
            .reach
            .reclaim_after
            .and_then(|reclaim| self.reclaim_due(index, reclaim));
        self.reach.set_due(index, due);
    }

    /// When remote cluster `index`'s current unreachable spell starts (or
    /// will start, if nothing is heard from it meanwhile), if it has a
    /// limit or its link is down.
    fn spell_start(&self, index: usize) -> Option<SimTime> {
        let stale = self.reach.stale_after[index].map(|limit| {
            let heard = self.view.taken_at_of(index).unwrap_or(self.reach.start);
            heard + limit
        });
        let down = self.reach.down_since[index];
        match (stale, down) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether remote cluster `cluster` is unreachable at `now`: its link
    /// is down, or its last counter update is older than its limit.
    pub fn is_unreachable(&self, cluster: &ClusterName, now: SimTime) -> bool {
        self.view
            .cluster_index(cluster)
            .is_some_and(|index| self.unreachable_at(index, now))
    }

    /// [`ForwarderNode::is_unreachable`] for remote cluster `index`.
    fn unreachable_at(&self, index: usize, now: SimTime) -> bool {
        self.reach.down_since[index].is_some()
            || self.spell_start(index).is_some_and(|since| since < now)
    }

    /// Marks each remote cluster's queues reachable or not, in the view
    /// (and the oracle's, which judges figures, not reachability).
    pub(super) fn mark_unreachable(&mut self, now: SimTime) {
        for index in 0..self.view.cluster_count() {
            let unreachable = self.unreachable_at(index, now);
            self.view.set_unreachable_at(index, unreachable);
            if let Some(oracle) = &mut self.oracle {
                oracle.set_unreachable_at(index, unreachable);
            }
        }
    }

    /// When the reclaim time of cluster `index`'s current spell comes, if
    /// jobs forwarded there have not started and they were not taken back
    /// in this spell yet.
    fn reclaim_due(&self, index: usize, reclaim: Duration) -> Option<(SimTime, SimTime)> {
        if self.reach.unstarted[index] == 0 {
            return None;
        }
        let spell = self.spell_start(index)?;
        let done = self.reach.reclaimed_spell[index] == Some(spell);
        (!done).then_some((spell, spell + reclaim))
    }

    /// When the next cluster holding jobs that have not started would have
    /// been unreachable for the reclaim time (if nothing is heard from it).
    pub(super) fn next_reclaim(&self) -> Option<SimTime> {
        let next = self.reach.next_due;
        debug_assert_eq!(
            next,
            self.reach.reclaim_after.and_then(|reclaim| {
                (0..self.view.cluster_count())
                    .filter_map(|index| self.reclaim_due(index, reclaim).map(|(_, due)| due))
                    .min()
            }),
            "the kept reclaim times are out of date"
        );
        next
    }

    /// Takes back, at `now`, the jobs that have not started at every
    /// cluster unreachable for the reclaim time.
    pub(super) fn reclaim(&mut self, now: SimTime) {
        let Some(reclaim) = self.reach.reclaim_after else {
            return;
        };
        for index in 0..self.view.cluster_count() {
            let Some((spell, due)) = self.reach.due[index] else {
                continue;
            };
            if due <= now && self.unreachable_at(index, now) {
                self.reach.reclaimed_spell[index] = Some(spell);
                self.refresh_reclaim(index);
                let cluster = self.view.cluster_name(index).clone();
                self.reclaim_from(&cluster, reclaim, now);
            }
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
            SourceState::Waiting => self.leave_waiting(id),
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

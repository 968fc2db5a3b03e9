//! Keeping forwarded jobs in step with their submission clusters: recalls
//! (MAX_RSCHED_TIME), syncs, withdrawals, a submission cluster that lost
//! its state, and the pending jobs held back while this cluster is out of
//! step with their submission cluster; and what of it a journal keeps.
//!
//! *Out of step*: after this cluster restarted from its journal, and while
//! the link to a submission cluster is down, that cluster may have decided
//! its jobs here again elsewhere (it treats an unreachable cluster's jobs
//! that had not started as returned — not knowing that one had started, if
//! the word was lost). So its pending jobs here are parked — taken out of
//! the scheduler with their ids, so none starts — and its running jobs
//! keep running but cannot end, until its next [`JobSync`] says which it
//! still counts on: those are put back (and end, when their time has
//! come), the others withdrawn. So a job never ends twice.

use indexmap::IndexMap;
use mcfed_protocol::{
    ClusterName, Envelope, JobAccept, JobEvent, JobLost, JobRecall, JobReturn, JobStatus, JobSync,
    JobWithdraw, Message, Resume,
};
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::ClusterNode;
use crate::job::{JobId, JobState};
use crate::scheduler::{JobImage, RestoreReport};

/// A forwarded job that finished here, kept so that the next sync of its
/// submission cluster is answered with its end (the end may have been
/// sent while that cluster was down).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinishedForward {
    /// The submission cluster.
    pub from: ClusterName,
    /// The job's id there.
    pub source_job: u64,
    /// Its id here.
    pub dest_job: u64,
    /// The forward that brought it.
    pub forward_seq: u64,
}

/// One submission cluster's parked jobs, by id, in the order parked (the
/// order they go back to the scheduler in).
pub(super) type ParkedJobs = IndexMap<u64, JobImage, FxBuildHasher>;

/// The most withdrawals of forwards not yet arrived that are remembered.
const MAX_WITHDRAWN: usize = 100_000;

impl ClusterNode {
    /// A peer resumed: if it is a submission cluster whose lineage changed,
    /// it lost its state, so the jobs its earlier lineage forwarded here
    /// are nobody's now, and it numbers its forwards from 1 again.
    pub(super) fn resume(&mut self, from: &ClusterName, resume: &Resume) {
        let is_subscriber = self
            .subscribers
            .iter()
            .any(|subscriber| &subscriber.cluster == from);
        if resume.lineage == 0 || !is_subscriber {
            return;
        }
        let previous = self.lineages.insert(from.clone(), resume.lineage);
        if previous.is_none_or(|previous| previous == resume.lineage) {
            return;
        }
        let orphans: Vec<(u64, JobId)> = self
            .forwarded
            .iter()
            .filter(|((cluster, _), _)| cluster == from)
            .map(|((_, source_job), (job, _))| (*source_job, *job))
            .collect();
        // The parked ones leave too, with a record as the others: a
        // journal replayed must not bring them back.
        for id in self.parked_mut().remove(from).unwrap_or_default().keys() {
            self.cluster.note_change(JobId(*id));
        }
        for (source_job, job) in &orphans {
            self.forwarded.remove(&(from.clone(), *source_job));
            self.cluster.remove_job(*job);
        }
        self.finished_forwarded
            .retain(|(cluster, _), _| cluster != from);
        self.withdrawn.retain(|(cluster, _, _)| cluster != from);
        self.last_forward.remove(from);
        tracing::info!(cluster = %self.name(), peer = %from, withdrawn = orphans.len(), "submission cluster lost its state; its earlier jobs withdrawn");
    }

    /// The submission cluster recalls a job: returned if it still pends.
    pub(super) fn recall(
        &mut self,
        from: &ClusterName,
        recall: &JobRecall,
        out: &mut Vec<Envelope>,
    ) {
        let key = (from.clone(), recall.source_job);
        let Some(&(job, _)) = self.forwarded.get(&key) else {
            return;
        };
        let pending = self.is_parked(from, job)
            || self.cluster.job(job).map(|job| job.state) == Some(JobState::Pending);
        if job.0 != recall.dest_job || !pending {
            tracing::debug!(cluster = %self.name(), from = %from, source_job = recall.source_job, "recall of a job that has started or left: kept");
            return;
        }
        self.forwarded.remove(&key);
        self.drop_job(from, job);
        self.reply(
            from,
            Message::JobReturn(JobReturn {
                source_job: recall.source_job,
                dest_job: job.0,
                reason: recall.reason.clone(),
            }),
            out,
        );
    }

    /// The submission cluster takes a job away (whatever its state, or
    /// only if it has not started); a forward not yet arrived is dropped
    /// when it does.
    pub(super) fn withdraw(&mut self, from: &ClusterName, withdraw: &JobWithdraw) {
        let key = (from.clone(), withdraw.source_job);
        match self.forwarded.get(&key).copied() {
            Some((job, seq))
                if seq == withdraw.forward_seq
                    && withdraw.pending_only
                    && !self.is_parked(from, job)
                    && self.cluster.job(job).map(|job| job.state) != Some(JobState::Pending) =>
            {
                tracing::info!(cluster = %self.name(), from = %from, source_job = withdraw.source_job, job = %job, "withdrawal of a job that started: kept");
            }
            Some((job, seq)) if seq == withdraw.forward_seq => {
                tracing::info!(cluster = %self.name(), from = %from, source_job = withdraw.source_job, job = %job, reason = %withdraw.reason, "withdrawn by its submission cluster");
                self.forwarded.remove(&key);
                self.drop_job(from, job);
            }
            _ if self
                .finished_forwarded
                .get(&key)
                .is_some_and(|&(_, seq)| seq == withdraw.forward_seq) =>
            {
                tracing::warn!(cluster = %self.name(), from = %from, source_job = withdraw.source_job, "withdrawal of a job that already finished here");
            }
            _ => {
                if self.withdrawn.len() >= MAX_WITHDRAWN {
                    self.withdrawn.clear();
                }
                self.withdrawn
                    .insert((from.clone(), withdraw.source_job, withdraw.forward_seq));
            }
        }
    }

    /// Brings the forwarded jobs of `from` in step with what it believes.
    pub(super) fn sync(&mut self, from: &ClusterName, sync: &JobSync, out: &mut Vec<Envelope>) {
        self.unpark(from);
        self.withdrawn.retain(|(cluster, _, _)| cluster != from);
        let listed: FxHashSet<(u64, u64)> = sync
            .jobs
            .iter()
            .map(|held| (held.source_job, held.forward_seq))
            .collect();
        // Jobs here that the submission cluster no longer counts on.
        let withdrawn: Vec<(u64, JobId)> = self
            .forwarded
            .iter()
            .filter(|((cluster, source_job), (_, seq))| {
                cluster == from && !listed.contains(&(*source_job, *seq))
            })
            .map(|((_, source_job), (job, _))| (*source_job, *job))
            .collect();
        for (source_job, job) in withdrawn {
            tracing::info!(cluster = %self.name(), from = %from, source_job, job = %job, "withdrawn: its submission cluster no longer holds it here");
            self.forwarded.remove(&(from.clone(), source_job));
            self.cluster.remove_job(job);
        }
        // Ends it no longer waits for need not be kept.
        self.finished_forwarded
            .retain(|(cluster, source_job), (_, seq)| {
                cluster != from || listed.contains(&(*source_job, *seq))
            });
        for held in &sync.jobs {
            self.answer_held(from, held.source_job, held.forward_seq, out);
        }
    }

    /// Answers for one job a sync lists: accepted, and how it stands; or
    /// lost.
    fn answer_held(
        &mut self,
        from: &ClusterName,
        source_job: u64,
        forward_seq: u64,
        out: &mut Vec<Envelope>,
    ) {
        let key = (from.clone(), source_job);
        let live = self.forwarded.get(&key).copied();
        let finished = self.finished_forwarded.get(&key).copied();
        let at = self.cluster.name().clone();
        match (live, finished) {
            (Some((job, seq)), _) | (None, Some((job, seq))) if seq == forward_seq => {
                self.reply(
                    from,
                    Message::JobAccept(JobAccept {
                        forward_seq: seq,
                        source_job,
                        dest_job: job.0,
                    }),
                    out,
                );
                let state = self.cluster.job(job).map(|job| (job.state, job.started_at));
                let event = match state {
                    Some((JobState::Pending, _)) => None,
                    Some((JobState::Running, _)) => Some(JobEvent::Started),
                    Some((JobState::Suspended, _)) => Some(JobEvent::Suspended),
                    Some((JobState::UserSuspended, _)) => Some(JobEvent::Stopped),
                    Some((JobState::PendingSuspended, _)) => Some(JobEvent::Held),
                    Some((JobState::ChunkWaiting, _)) => Some(JobEvent::Waiting),
                    Some((JobState::Exited, _)) => Some(JobEvent::Killed),
                    Some((JobState::Done, _)) | None => Some(JobEvent::Finished),
                };
                if let Some(event) = event {
                    let at_time = state.and_then(|(_, started)| started).unwrap_or_default();
                    self.reply(
                        from,
                        Message::JobStatus(JobStatus {
                            source_job,
                            dest_job: job.0,
                            event,
                            at: at_time,
                        }),
                        out,
                    );
                }
            }
            _ => self.reply(
                from,
                Message::JobLost(JobLost {
                    source_job,
                    forward_seq,
                    reason: format!(
                        "{at} does not hold the job (it restarted, or the forward was lost)"
                    ),
                }),
                out,
            ),
        }
    }

    /// The link to `peer` went down or came up. While it is down this
    /// cluster is out of step with a submission cluster `peer`: its
    /// pending jobs are parked until its next sync.
    pub fn link(&mut self, peer: &ClusterName, up: bool) {
        if !up {
            self.park_all(peer);
        }
    }

    /// Parks the pending jobs of every submission cluster until its next
    /// sync (after a restart from a journal).
    pub fn out_of_step_with_all(&mut self) {
        let subscribers: Vec<ClusterName> = self
            .subscribers
            .iter()
            .map(|subscriber| subscriber.cluster.clone())
            .collect();
        for subscriber in subscribers {
            self.park_all(&subscriber);
        }
    }

    /// Whether this cluster waits for a sync from `peer` (its pending jobs
    /// are parked).
    pub fn is_out_of_step(&self, peer: &ClusterName) -> bool {
        self.parked.contains_key(peer)
    }

    /// Parks every pending job of submission cluster `peer`, if it is one.
    fn park_all(&mut self, peer: &ClusterName) {
        if !self
            .subscribers
            .iter()
            .any(|subscriber| &subscriber.cluster == peer)
        {
            return;
        }
        self.parked_mut().entry(peer.clone()).or_default();
        let jobs: Vec<JobId> = self
            .forwarded
            .iter()
            .filter(|((cluster, _), _)| cluster == peer)
            .map(|(_, (job, _))| *job)
            .collect();
        for job in jobs {
            self.park_if_out_of_step(peer, job);
        }
    }

    /// Parks job `job` of `from` if this cluster is out of step with it:
    /// a pending job leaves the scheduler, a running one cannot end.
    pub(super) fn park_if_out_of_step(&mut self, from: &ClusterName, job: JobId) {
        if !self.parked.contains_key(from) {
            return;
        }
        match self.cluster.job(job).map(|job| job.state) {
            Some(JobState::Pending | JobState::PendingSuspended | JobState::ChunkWaiting) => {
                if let Some(image) = self.cluster.take_job(job) {
                    if let Some(parked) = self.parked_mut().get_mut(from) {
                        parked.insert(image.id, image);
                    }
                }
            }
            Some(JobState::Running | JobState::Suspended | JobState::UserSuspended) => {
                self.cluster.hold_end(job)
            }
            Some(JobState::Done | JobState::Exited) | None => {}
        }
    }

    /// Puts the parked jobs of `from` back in the scheduler, and lets its
    /// running ones end.
    fn unpark(&mut self, from: &ClusterName) {
        let Some(images) = self.parked_mut().remove(from) else {
            return;
        };
        let report = self.cluster.restore_jobs(images.into_values());
        log_restore(self.name(), &report);
        let held: Vec<JobId> = self
            .forwarded
            .iter()
            .filter(|((cluster, _), _)| cluster == from)
            .map(|(_, (job, _))| *job)
            .collect();
        for job in held {
            self.cluster.release_end(job);
        }
    }

    /// Whether job `job` of submission cluster `from` is parked (out of
    /// the scheduler until `from`'s next sync, but still held here).
    pub fn is_parked(&self, from: &ClusterName, job: JobId) -> bool {
        self.parked
            .get(from)
            .is_some_and(|images| images.contains_key(&job.0))
    }

    /// Takes job `job` of `from` out, parked or in the scheduler.
    fn drop_job(&mut self, from: &ClusterName, job: JobId) {
        if self.is_parked(from, job) {
            if let Some(images) = self.parked_mut().get_mut(from) {
                images.shift_remove(&job.0);
            }
            self.cluster.note_change(job);
        }
        self.cluster.remove_job(job);
    }

    // ------------------------------------------------------------ journal

    /// The forward that brought forwarded job `source_job` of `from`, while
    /// it is here and has not finished.
    pub fn forward_seq_of(&self, from: &ClusterName, source_job: u64) -> Option<u64> {
        self.forwarded
            .get(&(from.clone(), source_job))
            .map(|(_, seq)| *seq)
    }

    /// The forwarded job of `from` with id `source_job` there, if it
    /// finished here and its submission cluster may still ask.
    pub fn finished_forward(&self, from: &ClusterName, source_job: u64) -> Option<FinishedForward> {
        self.finished_forwarded
            .get(&(from.clone(), source_job))
            .map(|&(job, seq)| FinishedForward {
                from: from.clone(),
                source_job,
                dest_job: job.0,
                forward_seq: seq,
            })
    }

    /// Every forwarded job that finished here and is kept for a sync.
    pub fn finished_forwards(&self) -> impl Iterator<Item = FinishedForward> + '_ {
        self.finished_forwarded
            .iter()
            .map(|((from, source_job), &(job, seq))| FinishedForward {
                from: from.clone(),
                source_job: *source_job,
                dest_job: job.0,
                forward_seq: seq,
            })
    }

    /// The jobs parked while out of step with their submission cluster
    /// (in the same order until [`ClusterNode::parking_changes`] changes).
    pub fn parked_jobs(&self) -> impl Iterator<Item = &JobImage> {
        self.parked.values().flat_map(|images| images.values())
    }

    /// How many times the parked jobs may have changed: a submission
    /// cluster out of step, jobs parked, put back in the scheduler or
    /// dropped. A job moves between the scheduler and parking unchanged,
    /// so the scheduler journals no record of it; a journaled member that
    /// sees this change compares the jobs parked with those it saw and
    /// journals each one moved, which a snapshot made in slices encodes
    /// again where it now is (`mcfed-federation`'s `durable` module).
    pub fn parking_changes(&self) -> u64 {
        self.parking_changes
    }

    /// The parked jobs, to change them (counted in
    /// [`ClusterNode::parking_changes`]).
    fn parked_mut(&mut self) -> &mut FxHashMap<ClusterName, ParkedJobs> {
        self.parking_changes += 1;
        &mut self.parked
    }

    /// The image of job `id`, in the scheduler or parked, unless it has
    /// finished or left.
    pub fn job_image(&self, id: JobId) -> Option<JobImage> {
        self.cluster.job_image(id).or_else(|| {
            self.parked
                .values()
                .find_map(|images| images.get(&id.0))
                .cloned()
        })
    }

    /// Notes, from now on, every job that arrives or leaves, for
    /// [`ClusterNode::take_changes`] (a journal).
    pub fn track_changes(&mut self) {
        self.cluster.track_changes();
    }

    /// The jobs that arrived or left since the last call (see
    /// [`Cluster::take_changes`](crate::Cluster::take_changes)).
    pub fn take_changes(&mut self) -> Vec<JobId> {
        self.cluster.take_changes()
    }

    /// The lineage each submission cluster last resumed with.
    pub fn lineages(&self) -> impl Iterator<Item = (&ClusterName, u64)> {
        self.lineages
            .iter()
            .map(|(cluster, &lineage)| (cluster, lineage))
    }

    /// The number of the last counter update taken.
    pub fn update_seq(&self) -> u64 {
        self.update_seq
    }

    /// Puts back the state a journal kept: jobs (with, for forwarded ones,
    /// the forward that brought them), forwarded jobs that finished, the
    /// number of the last counter update and the submission clusters'
    /// lineages. Later job ids follow `next_job_id` at least.
    pub fn restore(&mut self, restored: RestoredNode) -> RestoreReport {
        let RestoredNode {
            jobs,
            finished,
            update_seq,
            next_job_id,
            lineages,
        } = restored;
        let mut images = Vec::with_capacity(jobs.len());
        for (image, forward_seq) in jobs {
            if let (Some((from, source_job)), Some(seq)) = (&image.forwarded_from, forward_seq) {
                self.forwarded
                    .insert((from.clone(), *source_job), (JobId(image.id), seq));
                let last = self.last_forward.entry(from.clone()).or_insert(0);
                *last = (*last).max(seq);
            }
            images.push(image);
        }
        let report = self.cluster.restore_jobs(images);
        log_restore(self.name(), &report);
        for (image_id, _) in &report.refused {
            self.forwarded.retain(|_, (job, _)| job.0 != *image_id);
        }
        for done in finished {
            let last = self.last_forward.entry(done.from.clone()).or_insert(0);
            *last = (*last).max(done.forward_seq);
            self.finished_forwarded.insert(
                (done.from, done.source_job),
                (JobId(done.dest_job), done.forward_seq),
            );
        }
        self.update_seq = self.update_seq.max(update_seq);
        self.cluster.reserve_job_ids(next_job_id);
        self.lineages.extend(lineages);
        report
    }
}

/// What [`ClusterNode::restore`] puts back.
#[derive(Clone, Debug, Default)]
pub struct RestoredNode {
    /// Jobs not finished, each with the forward that brought it (for a
    /// forwarded job).
    pub jobs: Vec<(JobImage, Option<u64>)>,
    /// Forwarded jobs that finished, kept for their submission clusters.
    pub finished: Vec<FinishedForward>,
    /// The number of the last counter update taken.
    pub update_seq: u64,
    /// The id the next job gets, at least.
    pub next_job_id: u64,
    /// The lineage each submission cluster last resumed with.
    pub lineages: Vec<(ClusterName, u64)>,
}

fn log_restore(cluster: &ClusterName, report: &RestoreReport) {
    for (job, why) in &report.refused {
        tracing::warn!(%cluster, job, %why, "a job could not be restored");
    }
    if !report.requeued.is_empty() {
        tracing::warn!(%cluster, jobs = report.requeued.len(), "jobs whose hosts are gone or full run again from the start");
    }
}

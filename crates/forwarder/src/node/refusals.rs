//! A queue that refused a job is not tried again for it until its cluster
//! sends counters again (issue 27, item 5): a refusal says the queue
//! cannot run the job as the submission cluster believed it could (a
//! boolean resource on only some of its hosts, seed 004's pitfall: "it will
//! return to the submission cluster, which may continue forwarding the
//! same job back to the same queue"; GPUs; shares), so sending it straight
//! back, in the same instant, only spends MAX_FORWARDS. A refusal for a
//! full IMPT_JOBBKLG is not kept here: the view counts that queue full for
//! every job until the update ([`crate::view::RemoteView::mark_backlog_full`]).
//!
//! The refused queues are part of what the job asks for
//! ([`JobRequest::refused`](crate::policy::JobRequest)), so its decisions,
//! records and the oracle's all leave them out; a refusal goes once the
//! queue's cluster's generation has moved (an update, a hello, a loss of
//! state), before the next session decides the job again in its place.

use mcfed_protocol::ClusterName;

use super::ForwarderNode;
use crate::view::RemoteQueueId;

impl ForwarderNode {
    /// Queue `to` refused job `id`: it is left out of the job's decisions
    /// until its cluster's next update.
    pub(super) fn note_refusal(&mut self, id: u64, to: RemoteQueueId) {
        let generation = self.view.generation_of(to);
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.refusals.retain(|&(queue, _)| queue != to);
        job.refusals.push((to, generation));
        self.refused_jobs.insert(id);
        self.list_refused(id);
    }

    /// Drops the refusals whose queue's cluster has spoken since; a job
    /// whose refusals change is decided again in its place.
    pub(super) fn expire_refusals(&mut self) {
        if self.refused_jobs.is_empty() {
            return;
        }
        let mut ids: Vec<u64> = self.refused_jobs.iter().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let Some(job) = self.jobs.get(&id) else {
                self.refused_jobs.remove(&id);
                continue;
            };
            let standing = |&(queue, generation): &(RemoteQueueId, u64)| {
                self.view.generation_of(queue) == generation
            };
            if job.refusals.iter().all(standing) {
                continue;
            }
            let kept: Vec<(RemoteQueueId, u64)> =
                job.refusals.iter().copied().filter(standing).collect();
            // What the job asks for changes: out of its parked group.
            self.unpark(id);
            if kept.is_empty() {
                self.refused_jobs.remove(&id);
            }
            if let Some(job) = self.jobs.get_mut(&id) {
                job.refusals = kept;
            }
            self.list_refused(id);
        }
    }

    /// Whether a job waits here with a refusal from a queue of `cluster`
    /// (its update lifts it: the job is to be decided again).
    pub(super) fn refused_at(&self, cluster: &ClusterName) -> bool {
        self.refused_jobs.iter().any(|id| {
            self.jobs.get(id).is_some_and(|job| {
                job.state == super::SourceState::Waiting
                    && job
                        .refusals
                        .iter()
                        .any(|&(queue, _)| self.view.cluster_of(queue) == cluster)
            })
        })
    }

    /// Job `id`'s request lists the queues whose refusals stand.
    fn list_refused(&mut self, id: u64) {
        if let Some(job) = self.jobs.get_mut(&id) {
            let mut refused: Vec<RemoteQueueId> =
                job.refusals.iter().map(|&(queue, _)| queue).collect();
            refused.sort_unstable();
            job.request.refused = refused;
        }
    }
}

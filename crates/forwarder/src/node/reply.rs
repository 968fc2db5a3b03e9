//! Reconciliation of the replies about a forwarded job (`JobAccept`,
//! `JobReject`, `JobReturn`, `JobLost`, `JobStatus`). One rule holds for all
//! of them, written once in [`ForwarderNode::reconcile`]: a reply about a job
//! counts only if it comes from the cluster the job is at and names the
//! forward this cluster knows of; anything else is stale and changes
//! nothing.

use mcfed_protocol::{
    ClusterName, JobAccept, JobEvent, JobLost, JobReject, JobReturn, JobStatus, RejectReason,
};

use super::{CameBack, ForwarderNode, Handled, SourceJob, SourceState};
use crate::view::RemoteQueueId;

/// A reply about a forwarded job, as the reconciliation sees it: which job,
/// how the reply names its forward, and what it says happened.
pub(super) struct Reply {
    pub(super) source_job: u64,
    pub(super) names: Names,
    pub(super) then: Then,
}

/// How a reply names the forward it is about.
#[derive(Clone, Copy, Debug)]
pub(super) enum Names {
    /// The forward's sequence number, in the first answer to it
    /// (`JobAccept`, `JobReject`): it counts only while the job still waits
    /// for that answer.
    Answer { forward_seq: u64 },
    /// The forward's sequence number, whatever became of it since
    /// (`JobLost`).
    Forward { forward_seq: u64 },
    /// The job's id at the execution cluster (`JobReturn`, `JobStatus`); a
    /// forward not yet accepted has no id there to contradict it.
    DestJob(u64),
}

impl Names {
    /// Whether `job` is the job this names, at its current forward.
    fn current(self, job: &SourceJob) -> bool {
        match self {
            Names::Answer { forward_seq } => matches!(
                job.state,
                SourceState::Forwarded { forward_seq: current, .. } if current == forward_seq
            ),
            Names::Forward { forward_seq } => job.forward_seq == forward_seq,
            Names::DestJob(dest_job) => job.dest_job().is_none_or(|current| current == dest_job),
        }
    }
}

/// What a reply says happened to the job.
pub(super) enum Then {
    /// The execution cluster accepted it as `dest_job`.
    Accept { dest_job: u64 },
    /// It comes back to be decided again.
    ComeBack {
        how: CameBack,
        reason: String,
        /// A refusal because the queue's IMPT_JOBBKLG is full.
        backlog_full: bool,
    },
    /// It changed state at the execution cluster, where it is `dest_job`.
    Status { dest_job: u64, event: JobEvent },
}

impl From<JobAccept> for Reply {
    fn from(accept: JobAccept) -> Self {
        Reply {
            source_job: accept.source_job,
            names: Names::Answer {
                forward_seq: accept.forward_seq,
            },
            then: Then::Accept {
                dest_job: accept.dest_job,
            },
        }
    }
}

impl From<JobReject> for Reply {
    fn from(reject: JobReject) -> Self {
        Reply {
            source_job: reject.source_job,
            names: Names::Answer {
                forward_seq: reject.forward_seq,
            },
            then: Then::ComeBack {
                how: CameBack::Refused,
                backlog_full: matches!(reject.reason, RejectReason::BacklogFull { .. }),
                reason: reject.reason.to_string(),
            },
        }
    }
}

impl From<JobReturn> for Reply {
    fn from(returned: JobReturn) -> Self {
        Reply {
            source_job: returned.source_job,
            names: Names::DestJob(returned.dest_job),
            then: Then::ComeBack {
                how: CameBack::Returned,
                reason: returned.reason,
                backlog_full: false,
            },
        }
    }
}

impl From<JobLost> for Reply {
    fn from(lost: JobLost) -> Self {
        Reply {
            source_job: lost.source_job,
            names: Names::Forward {
                forward_seq: lost.forward_seq,
            },
            then: Then::ComeBack {
                how: CameBack::Lost,
                reason: lost.reason,
                backlog_full: false,
            },
        }
    }
}

impl From<JobStatus> for Reply {
    fn from(status: JobStatus) -> Self {
        Reply {
            source_job: status.source_job,
            names: Names::DestJob(status.dest_job),
            then: Then::Status {
                dest_job: status.dest_job,
                event: status.event,
            },
        }
    }
}

impl ForwarderNode {
    /// Applies a reply from `from` if it is about the job's current forward
    /// at `from`, and says what it changed.
    pub(super) fn reconcile(&mut self, from: &ClusterName, reply: Reply) -> Handled {
        let source_job = reply.source_job;
        if !self.jobs.contains_key(&source_job) {
            if let Some(handled) = self.killed_reply(from, &reply) {
                return handled;
            }
        }
        let Some(to) = self.current_forward(from, source_job, reply.names) else {
            if self.about_current_copy(from, source_job, reply.names) {
                // An answer the job is past (an accept of an accepted
                // job, after a restart's sync): its cluster still holds it.
                self.reach.unconfirmed.remove(&source_job);
            }
            return self.settle(from, reply);
        };
        // Its cluster has answered for it since a restart.
        self.reach.unconfirmed.remove(&source_job);
        match reply.then {
            Then::Accept { dest_job } => {
                self.accept(source_job, to, dest_job);
                Handled::Accepted { source_job }
            }
            Then::ComeBack {
                how,
                reason,
                backlog_full,
            } => {
                self.come_back(from, source_job, to, how, &reason, backlog_full);
                Handled::CameBack {
                    source_job,
                    how,
                    reason,
                }
            }
            Then::Status { dest_job, event } => {
                self.status(source_job, to, dest_job, event);
                Handled::Status { source_job, event }
            }
        }
    }

    /// The queue job `id` is at, if it is at a queue of cluster `from` and
    /// `names` names its current forward.
    fn current_forward(&self, from: &ClusterName, id: u64, names: Names) -> Option<RemoteQueueId> {
        let job = self.jobs.get(&id)?;
        let to = job.remote_queue()?;
        if self.view.cluster_of(to) != from {
            tracing::debug!(cluster = %self.cluster, job = id, from = %from, "message about a job that is not at the sender: ignored");
            return None;
        }
        if !names.current(job) {
            tracing::debug!(cluster = %self.cluster, job = id, from = %from, ?names, "reply about another forward of the job: ignored");
            return None;
        }
        Some(to)
    }

    /// Whether a reply from `from` is about job `id`'s current copy, even if
    /// it answers a step the job is past.
    fn about_current_copy(&self, from: &ClusterName, id: u64, names: Names) -> bool {
        self.jobs.get(&id).is_some_and(|job| {
            job.remote_queue()
                .is_some_and(|to| self.view.cluster_of(to) == from)
                && match names {
                    Names::Answer { forward_seq } | Names::Forward { forward_seq } => {
                        forward_seq == job.forward_seq
                    }
                    Names::DestJob(dest_job) => job.dest_job() == Some(dest_job),
                }
        })
    }

    /// The execution cluster took job `id` as `dest_job`: its recall
    /// deadline (MAX_RSCHED_TIME) starts, unless it was recalled already.
    fn accept(&mut self, id: u64, to: RemoteQueueId, dest_job: u64) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let deadline = self.send_queues[job.send_queue]
            .max_rsched_time
            .map(|limit| job.forwarded_at + limit);
        if let (Some(deadline), false) = (deadline, job.recalled) {
            self.recalls.insert((deadline, job.id), job.id);
        }
        self.set_state(id, SourceState::Accepted { to, dest_job });
    }

    /// Job `id` comes back from queue `to` of cluster `from`: its forward no
    /// longer weighs on the queue, and it waits to be decided again with a
    /// note saying why.
    fn come_back(
        &mut self,
        from: &ClusterName,
        id: u64,
        to: RemoteQueueId,
        how: CameBack,
        reason: &str,
        backlog_full: bool,
    ) {
        let Some(forward_seq) = self.jobs.get(&id).map(|job| job.forward_seq) else {
            return;
        };
        self.count_forwarded(id, true);
        self.forget_forward(from, forward_seq);
        if how == CameBack::Refused && !backlog_full {
            self.note_refusal(id, to);
        }
        if backlog_full {
            self.view.mark_backlog_full(to);
            // Not a ping-pong: the queue was full, and the view now
            // knows it until the next update. Counting it against
            // MAX_FORWARDS would strand the job under sustained load.
            if let Some(job) = self.jobs.get_mut(&id) {
                job.forwards = job.forwards.saturating_sub(1);
            }
        }
        let note = format!("{} by {}: {reason}", how.as_str(), self.view.queue_ref(to));
        self.requeue(id, note);
    }

    /// Job `id`, `dest_job` at queue `to`, changed state there; a finished
    /// or killed job (by bkill or at its run limit) is forgotten, and so is
    /// its forward in the view (its slots are free again there).
    pub(super) fn status(&mut self, id: u64, to: RemoteQueueId, dest_job: u64, event: JobEvent) {
        match event {
            JobEvent::Started | JobEvent::Resumed => {
                self.set_state(id, SourceState::Running { to, dest_job });
            }
            JobEvent::Suspended => self.set_state(id, SourceState::Suspended { to, dest_job }),
            JobEvent::Stopped => self.set_state(id, SourceState::Stopped { to, dest_job }),
            JobEvent::Held => self.set_state(id, SourceState::HeldThere { to, dest_job }),
            JobEvent::Requeued
            | JobEvent::Released
            | JobEvent::Migrated
            | JobEvent::Rerun
            | JobEvent::Waiting
            | JobEvent::Pended => {
                self.set_state(id, SourceState::Accepted { to, dest_job });
            }
            JobEvent::Switched | JobEvent::Modified | JobEvent::Resized => {}
            JobEvent::Finished
            | JobEvent::Killed
            | JobEvent::RunLimit
            | JobEvent::ReservationEnded => {
                let Some(forward_seq) = self.jobs.get(&id).map(|job| job.forward_seq) else {
                    return;
                };
                self.count_forwarded(id, true);
                self.forget_job(id);
                let cluster = self.view.cluster_of(to).clone();
                let changed = self.view.forward_finished(&cluster, forward_seq);
                if let Some(oracle) = &mut self.oracle {
                    oracle.forward_finished(&cluster, forward_seq);
                }
                if changed && self.waiting_jobs() > 0 {
                    self.session_due = true;
                }
            }
        }
    }

    /// Drops a forward from the view's log, and from the oracle's: the job
    /// came back (or was killed), so the forward no longer weighs on the
    /// remote queue.
    pub(super) fn forget_forward(&mut self, from: &ClusterName, forward_seq: u64) {
        self.view.forget_forward(from, forward_seq);
        if let Some(oracle) = &mut self.oracle {
            oracle.forget_forward(from, forward_seq);
        }
    }
}

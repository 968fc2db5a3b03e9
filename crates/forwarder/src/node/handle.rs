//! Messages from execution clusters: what [`ForwarderNode::handle`] does
//! with each one, and the [`Handled`] it returns to say what changed.

use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, HeldJob, Hello, JobEvent, JobSync, Message, SimTime,
};

use super::ForwarderNode;
use crate::view::UpdateOutcome;

/// What a message changed at the forwarder (returned by
/// [`ForwarderNode::handle`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handled {
    /// Nothing changed: a message about a job it does not know, a stale
    /// reply, or a message not for the forwarder.
    Nothing,
    /// A counter update, applied or ignored (the view's verdict; a sender
    /// mismatch is [`UpdateOutcome::UnknownSender`]).
    Update(UpdateOutcome),
    /// The execution cluster accepted the job.
    Accepted {
        /// The job's id at the submission cluster.
        source_job: u64,
    },
    /// The job came back to be decided again.
    CameBack {
        /// The job's id at the submission cluster.
        source_job: u64,
        /// How it came back.
        how: CameBack,
        /// Why, in the remote side's words.
        reason: String,
    },
    /// A job killed at an execution cluster (a `JobControl` kill sent there)
    /// came back — returned, refused or lost on the way — so the kill did
    /// not reach it: it ends here, killed.
    KilledOnReturn {
        /// The job's id at the submission cluster.
        source_job: u64,
        /// Its name.
        name: std::sync::Arc<str>,
    },
    /// A forwarded job changed state at the execution cluster (Finished: it
    /// is gone from the forwarder).
    Status {
        /// The job's id at the submission cluster.
        source_job: u64,
        /// What happened to it.
        event: JobEvent,
    },
    /// An execution cluster said hello; `restarted`: with a new incarnation.
    Hello {
        /// Whether it said hello with another incarnation than before.
        restarted: bool,
    },
    /// An execution cluster resumed; `lost_state`: with a new lineage, so
    /// what this cluster knew of its counters is void.
    Resumed {
        /// Whether it resumed with another lineage than before.
        lost_state: bool,
    },
}

/// How a forwarded job came back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CameBack {
    /// The receiving queue refused the forward (`JobReject`).
    Refused,
    /// The execution cluster returned a job it had accepted (`JobReturn`).
    Returned,
    /// The execution cluster does not hold the job (`JobLost`).
    Lost,
}

impl CameBack {
    /// The word for it: "refused", "returned" or "lost".
    pub fn as_str(self) -> &'static str {
        match self {
            CameBack::Refused => "refused",
            CameBack::Returned => "returned",
            CameBack::Lost => "lost",
        }
    }
}

impl ForwarderNode {
    /// Handles a message from execution cluster `from`, and says what it
    /// changed.
    pub fn handle(&mut self, now: SimTime, from: &ClusterName, message: Message) -> Handled {
        match message {
            Message::CounterUpdate(update) => {
                Handled::Update(self.counter_update(now, from, &update))
            }
            Message::JobAccept(accept) => self.reconcile(from, accept.into()),
            Message::JobReject(reject) => self.reconcile(from, reject.into()),
            Message::JobReturn(returned) => self.reconcile(from, returned.into()),
            Message::JobLost(lost) => self.reconcile(from, lost.into()),
            Message::JobStatus(status) => self.reconcile(from, status.into()),
            Message::Hello(hello) => self.hello(now, from, &hello),
            Message::Resume(resume) => self.resume(now, from, resume.lineage),
            Message::JobForward(_)
            | Message::JobRecall(_)
            | Message::JobSync(_)
            | Message::JobWithdraw(_)
            | Message::JobControl(_)
            | Message::JobControlReply(_) => {
                tracing::debug!(kind = message.kind(), "message not for the forwarder");
                Handled::Nothing
            }
        }
    }

    /// Applies a counter update from `from`, unless it comes under another
    /// cluster's name.
    fn counter_update(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        update: &CounterUpdate,
    ) -> UpdateOutcome {
        if &update.sender != from {
            tracing::warn!(cluster = %self.cluster, from = %from, sender = %update.sender, "counter update under another cluster's name ignored");
            return UpdateOutcome::UnknownSender;
        }
        let outcome = self.view.apply_update(&self.cluster, update);
        match outcome {
            UpdateOutcome::Applied => {
                if let Some(index) = self.view.cluster_index(from) {
                    // Heard from: its unreachable spell moves on.
                    self.refresh_reclaim(index);
                }
                // Waiting jobs are decided again when the figures moved; an
                // update that restates them would decide them the same way.
                if self.waiting_jobs() > 0
                    && (self.view.last_update_changed() || self.refused_at(from))
                {
                    self.session_due = true;
                }
            }
            outcome => tracing::debug!(
                at = %now,
                cluster = %self.cluster,
                sender = %update.sender,
                ?outcome,
                "counter update ignored"
            ),
        }
        outcome
    }

    /// An execution cluster said hello (a connection to it was made): the
    /// static facts of its queues are learnt, and it is told which jobs
    /// this cluster believes it holds ([`JobSync`]); it answers for each,
    /// the ones it does not hold come back, and it withdraws the others —
    /// among them any copy left there when it was unreachable, which cannot
    /// have ended meanwhile (an execution cluster out of step with its
    /// submission cluster holds its jobs' ends until the sync). A new
    /// lineage, not a new incarnation, says it lost its state (see
    /// [`ForwarderNode::resume`]).
    fn hello(&mut self, now: SimTime, from: &ClusterName, hello: &Hello) -> Handled {
        if !self.view.clusters().any(|cluster| cluster == from) {
            return Handled::Nothing;
        }
        let incarnation = hello.incarnation;
        let mut restarted = false;
        if incarnation != 0 {
            let previous = self.incarnations.insert(from.clone(), incarnation);
            restarted = previous.is_some_and(|previous| previous != incarnation);
        }
        self.learn_facts(now, from, hello);
        let mut jobs: Vec<HeldJob> = self
            .jobs
            .values()
            .filter(|job| {
                job.remote_queue()
                    .is_some_and(|to| self.view.cluster_of(to) == from)
            })
            .map(|job| HeldJob {
                source_job: job.id,
                forward_seq: job.forward_seq,
            })
            .collect();
        // A job killed there and not answered for is listed too: `from`
        // answers for it (ended, still held, or lost), which settles it.
        jobs.extend(
            self.killed_at(from)
                .map(|(source_job, forward_seq)| HeldJob {
                    source_job,
                    forward_seq,
                }),
        );
        jobs.sort_unstable_by_key(|held| held.source_job);
        self.outgoing.push(Envelope {
            from: self.cluster.clone(),
            to: from.clone(),
            message: Message::JobSync(JobSync { jobs }),
        });
        Handled::Hello { restarted }
    }

    /// An execution cluster resumed. If its lineage changed, it lost its
    /// state: what this cluster knew of it is void, and its queues are
    /// unknown until its next counter update (whatever sequence number that
    /// carries). Its jobs come back when the sync finds it does not hold
    /// them.
    fn resume(&mut self, now: SimTime, from: &ClusterName, lineage: u64) -> Handled {
        if lineage == 0 || !self.view.clusters().any(|cluster| cluster == from) {
            return Handled::Nothing;
        }
        let previous = self.lineages.insert(from.clone(), lineage);
        let lost_state = previous.is_some_and(|previous| previous != lineage);
        if lost_state {
            tracing::info!(at = %now, cluster = %self.cluster, peer = %from, "execution cluster lost its state; its counters are unknown until its next update");
            self.view.reset_cluster(from);
            if let Some(index) = self.view.cluster_index(from) {
                self.refresh_reclaim(index);
            }
            // The oracle forgets the old lineage's forwards too; its
            // figures come again with the next true counters.
            if let Some(oracle) = &mut self.oracle {
                oracle.reset_cluster(from);
            }
        }
        Handled::Resumed { lost_state }
    }
}

impl ForwarderNode {
    /// Learns the static facts of `from`'s receive queues from its hello
    /// (what this cluster forwards on until `from`'s first counter update,
    /// or for good when `from` sends none). Jobs waiting here are decided
    /// again: they may go now.
    pub fn learn_facts(&mut self, now: SimTime, from: &ClusterName, hello: &Hello) {
        if hello.queues.is_empty() {
            return;
        }
        self.view.apply_facts(from, &hello.queues, now);
        if let Some(oracle) = &mut self.oracle {
            oracle.apply_facts(from, &hello.queues, now);
        }
        if self.waiting_jobs() > 0 {
            self.session_due = true;
        }
    }
}

//! A cluster's protocol endpoint, sans-IO: it takes forwarded jobs and
//! answers them, reports forwarded jobs' state changes to their submission
//! clusters, and takes the counter snapshots sent every
//! MC_PLUGIN_UPDATE_INTERVAL.
//!
//! Between processes it also keeps forwarded jobs in step with their
//! submission clusters (`peers`): it returns a job still pending when its
//! submission cluster recalls it (MAX_RSCHED_TIME), answers a
//! [`JobSync`](mcfed_protocol::JobSync) with the jobs it does not hold
//! ([`JobLost`](mcfed_protocol::JobLost)) and the state of those it does,
//! removes a job its submission cluster withdraws, drops the jobs of a
//! submission cluster that lost its state (a
//! [`Resume`](mcfed_protocol::Resume) with a new lineage), and holds back
//! the pending jobs of a submission cluster it is out of step with until
//! its next sync.

mod peers;
mod reservations;

use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, ForwardWatermark, JobAccept, JobAction, JobControl,
    JobControlReply, JobReject, JobSpec, JobStatus, Message, SimTime,
};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::job::{JobId, JobOrigin, QueueIndex};
use crate::scheduler::{Cluster, ControlError, SubmitError, Transition};

pub use peers::{FinishedForward, RestoredNode};

/// A submission cluster that forwards to this cluster.
#[derive(Clone, Debug)]
struct Subscriber {
    cluster: ClusterName,
    /// Receive queues that take jobs from it.
    queues: Vec<QueueIndex>,
    /// Whether it collects this cluster's counters (its
    /// MC_PLUGIN_SCHEDULE_ENHANCE is set).
    collects: bool,
}

/// A cluster with its MultiCluster endpoint.
#[derive(Debug)]
pub struct ClusterNode {
    cluster: Cluster,
    subscribers: Vec<Subscriber>,
    update_seq: u64,
    /// Per submission cluster, the last forward sequence number received.
    last_forward: FxHashMap<ClusterName, u64>,
    transitions: Vec<Transition>,
    /// Forwarded jobs here, by (submission cluster, source job): their id
    /// here and the forward that brought them.
    forwarded: FxHashMap<(ClusterName, u64), (JobId, u64)>,
    /// Forwarded jobs that finished here, likewise (kept until their
    /// submission cluster's next sync no longer lists them).
    finished_forwarded: FxHashMap<(ClusterName, u64), (JobId, u64)>,
    /// The lineage each submission cluster last resumed with.
    lineages: FxHashMap<ClusterName, u64>,
    /// Submission clusters this cluster is out of step with (it restarted,
    /// or the link to them went down): their pending jobs are parked here,
    /// out of the scheduler, until their next sync; by id, in the order
    /// parked.
    parked: FxHashMap<ClusterName, peers::ParkedJobs>,
    /// How many times `parked` was changed ([`ClusterNode::parking_changes`]).
    parking_changes: u64,
    /// Forwards withdrawn before they arrived: (from, source job, forward).
    withdrawn: FxHashSet<(ClusterName, u64, u64)>,
}

impl ClusterNode {
    /// Wraps `cluster`; it sends counters to each of `subscribers` (the
    /// submission clusters that forward to it), for the receive queues that
    /// accept jobs from that cluster.
    pub fn new(cluster: Cluster, subscribers: impl IntoIterator<Item = ClusterName>) -> Self {
        let subscribers = subscribers
            .into_iter()
            .map(|name| {
                let queues = cluster
                    .receive_queues()
                    .filter(|&queue| {
                        cluster
                            .queue_config(queue)
                            .receive_from
                            .as_ref()
                            .is_some_and(|from| from.accepts(&name))
                    })
                    .collect();
                Subscriber {
                    cluster: name,
                    queues,
                    collects: true,
                }
            })
            .collect();
        ClusterNode {
            cluster,
            subscribers,
            update_seq: 0,
            last_forward: FxHashMap::default(),
            transitions: Vec::new(),
            forwarded: FxHashMap::default(),
            finished_forwarded: FxHashMap::default(),
            lineages: FxHashMap::default(),
            parked: FxHashMap::default(),
            parking_changes: 0,
            withdrawn: FxHashSet::default(),
        }
    }

    /// The scheduling core.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// Takes the next job id of the cluster for a job of a send queue
    /// ([`Cluster::take_job_id`]).
    pub fn take_job_id(&mut self) -> JobId {
        self.cluster.take_job_id()
    }

    /// The cluster's name.
    pub fn name(&self) -> &ClusterName {
        self.cluster.name()
    }

    /// Only `collectors` among the subscribers collect this cluster's
    /// counters (seed 004: queue information "is collected by the
    /// submission cluster when MC_PLUGIN_SCHEDULE_ENHANCE ... is set to a
    /// valid value"); the others are sent none.
    pub fn collected_by(mut self, collectors: &[ClusterName]) -> Self {
        for subscriber in &mut self.subscribers {
            subscriber.collects = collectors.contains(&subscriber.cluster);
        }
        self
    }

    /// Whether any submission cluster forwards to this cluster.
    pub fn has_subscribers(&self) -> bool {
        !self.subscribers.is_empty()
    }

    /// Whether any submission cluster collects this cluster's counters.
    pub fn has_collectors(&self) -> bool {
        self.subscribers
            .iter()
            .any(|subscriber| subscriber.collects)
    }

    /// Submits a local job.
    pub fn submit(
        &mut self,
        now: SimTime,
        queue: &str,
        spec: JobSpec,
    ) -> Result<JobId, SubmitError> {
        self.cluster.submit(now, queue, spec, JobOrigin::Local)
    }

    /// Handles a message from cluster `from`; replies go to `out`.
    pub fn handle(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        message: Message,
        out: &mut Vec<Envelope>,
    ) {
        match message {
            Message::JobForward(forward) => self.receive_forward(now, from, &forward, out),
            Message::Hello(_) => {}
            Message::Resume(resume) => self.resume(from, &resume),
            Message::JobRecall(recall) => self.recall(from, &recall, out),
            Message::JobSync(sync) => self.sync(from, &sync, out),
            Message::JobWithdraw(withdraw) => self.withdraw(from, &withdraw),
            other => {
                tracing::debug!(cluster = %self.name(), kind = other.kind(), "message not for the cluster");
            }
        }
    }

    fn reply(&self, to: &ClusterName, message: Message, out: &mut Vec<Envelope>) {
        out.push(Envelope {
            from: self.name().clone(),
            to: to.clone(),
            message,
        });
    }

    fn receive_forward(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        forward: &mcfed_protocol::JobForward,
        out: &mut Vec<Envelope>,
    ) {
        let last = self.last_forward.entry(from.clone()).or_insert(0);
        *last = (*last).max(forward.forward_seq);
        if self
            .withdrawn
            .remove(&(from.clone(), forward.source_job, forward.forward_seq))
        {
            tracing::debug!(cluster = %self.name(), from = %from, source_job = forward.source_job, "forward withdrawn before it arrived: dropped");
            return;
        }
        let reply = match self.cluster.receive_forward(now, from, forward) {
            Ok(job) => {
                tracing::debug!(cluster = %self.name(), from = %from, source_job = forward.source_job, job = %job, "accepted forwarded job");
                self.forwarded.insert(
                    (from.clone(), forward.source_job),
                    (job, forward.forward_seq),
                );
                self.park_if_out_of_step(from, job);
                Message::JobAccept(JobAccept {
                    forward_seq: forward.forward_seq,
                    source_job: forward.source_job,
                    dest_job: job.0,
                })
            }
            Err(reason) => {
                tracing::debug!(cluster = %self.name(), from = %from, source_job = forward.source_job, %reason, "refused forwarded job");
                Message::JobReject(JobReject {
                    forward_seq: forward.forward_seq,
                    source_job: forward.source_job,
                    reason,
                })
            }
        };
        self.reply(from, reply, out);
    }

    /// The forwarded job from `from` with id `source_job` there, if it is
    /// here and has not finished.
    pub fn forwarded_job(&self, from: &ClusterName, source_job: u64) -> Option<JobId> {
        self.forwarded
            .get(&(from.clone(), source_job))
            .map(|(job, _)| *job)
    }

    /// When the node next needs [`ClusterNode::advance`] on its own.
    pub fn next_event_time(&mut self) -> Option<SimTime> {
        self.cluster.next_event_time()
    }

    /// Whether [`ClusterNode::advance`] has work to do at the current time.
    pub fn needs_advance(&self) -> bool {
        self.cluster.needs_dispatch()
    }

    /// Moves the cluster to `now` (finishing and dispatching jobs), tells
    /// submission clusters about their jobs, and appends every job
    /// transition to `transitions`.
    pub fn advance(
        &mut self,
        now: SimTime,
        out: &mut Vec<Envelope>,
        transitions: &mut Vec<Transition>,
    ) {
        self.transitions.clear();
        self.cluster.advance(now, &mut self.transitions);
        self.report_transitions(out, transitions);
    }

    /// Applies a job control command to job `id` at `now` (see
    /// [`Cluster::control`]); a forwarded job's submission cluster hears of
    /// what it changed, as of any other change.
    pub fn control(
        &mut self,
        now: SimTime,
        id: JobId,
        action: &JobAction,
        out: &mut Vec<Envelope>,
        transitions: &mut Vec<Transition>,
    ) -> Result<(), ControlError> {
        self.transitions.clear();
        let result = self.cluster.control(now, id, action, &mut self.transitions);
        self.report_transitions(out, transitions);
        result
    }

    /// A host of this cluster fails or recovers at `now`
    /// ([`Cluster::host_event`]); the submission clusters of forwarded
    /// jobs on it hear what happened to them.
    pub fn host_event(
        &mut self,
        now: SimTime,
        host: &str,
        event: crate::HostEvent,
        out: &mut Vec<Envelope>,
        transitions: &mut Vec<Transition>,
    ) -> Result<(usize, usize), ControlError> {
        self.transitions.clear();
        let result = self
            .cluster
            .host_event(now, host, event, &mut self.transitions);
        self.report_transitions(out, transitions);
        result
    }

    /// A submission cluster's job control command about a job it forwarded
    /// here: applied if the job is here, and answered either way.
    pub fn control_forwarded(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        control: &JobControl,
        out: &mut Vec<Envelope>,
        transitions: &mut Vec<Transition>,
    ) {
        let job = self.forwarded_job(from, control.source_job);
        let outcome = match job {
            Some(id) => self
                .control(now, id, &control.action, out, transitions)
                .map(|()| format!("done at {} (job {id})", self.name()))
                .map_err(|error| format!("{} (job {id}): {error}", self.name())),
            None => Err(format!("{} does not hold the job", self.name())),
        };
        tracing::debug!(cluster = %self.name(), from = %from, source_job = control.source_job, action = %control.action, ?outcome, "job control from the submission cluster");
        self.reply(
            from,
            Message::JobControlReply(JobControlReply {
                source_job: control.source_job,
                dest_job: job.map(|id| id.0),
                action: control.action.clone(),
                outcome,
            }),
            out,
        );
    }

    /// Appends the transitions just made to `transitions`, telling the
    /// submission cluster of each forwarded job what happened to it.
    fn report_transitions(&mut self, out: &mut Vec<Envelope>, transitions: &mut Vec<Transition>) {
        for transition in &self.transitions {
            if let JobOrigin::Forwarded { from, source_job } = &transition.origin {
                if transition.event.ends_job() {
                    let key = (from.clone(), *source_job);
                    if let Some(entry) = self.forwarded.remove(&key) {
                        self.finished_forwarded.insert(key, entry);
                    }
                }
                out.push(Envelope {
                    from: self.cluster.name().clone(),
                    to: from.clone(),
                    message: Message::JobStatus(JobStatus {
                        source_job: *source_job,
                        dest_job: transition.job.0,
                        event: transition.event,
                        at: transition.at,
                    }),
                });
            }
        }
        // Moved, not cloned: the buffer is emptied before its next use.
        // Into an empty vector (as a driver's effects mostly are) the
        // buffers are swapped rather than the transitions copied.
        if transitions.is_empty() {
            std::mem::swap(transitions, &mut self.transitions);
        } else {
            transitions.append(&mut self.transitions);
        }
    }

    /// Takes a counter snapshot of the state at `now`, stamped `stamp` (the
    /// cluster's own clock, which a skew may move off `now`), and appends
    /// one update per submission cluster that collects them to `out`.
    pub fn publish_counters(&mut self, now: SimTime, stamp: SimTime, out: &mut Vec<Envelope>) {
        if !self.has_collectors() {
            return;
        }
        self.update_seq += 1;
        for subscriber in self.subscribers.iter().filter(|s| s.collects) {
            out.push(Envelope {
                from: self.cluster.name().clone(),
                to: subscriber.cluster.clone(),
                message: Message::CounterUpdate(self.snapshot(
                    subscriber,
                    self.update_seq,
                    now,
                    stamp,
                )),
            });
        }
    }

    /// The true counters `submission_cluster` would get if a snapshot were
    /// taken at `now` (stamped `stamp`), numbered `seq` (for the oracle;
    /// sends nothing and does not advance the node's own update numbering).
    pub fn true_counters(
        &self,
        submission_cluster: &ClusterName,
        seq: u64,
        now: SimTime,
        stamp: SimTime,
    ) -> Option<CounterUpdate> {
        self.subscribers
            .iter()
            .find(|subscriber| &subscriber.cluster == submission_cluster)
            .map(|subscriber| self.snapshot(subscriber, seq, now, stamp))
    }

    fn snapshot(
        &self,
        subscriber: &Subscriber,
        seq: u64,
        now: SimTime,
        stamp: SimTime,
    ) -> CounterUpdate {
        CounterUpdate {
            sender: self.cluster.name().clone(),
            seq,
            taken_at: stamp,
            queues: subscriber
                .queues
                .iter()
                .map(|&queue| self.cluster.queue_counters(queue, now))
                .collect(),
            forwards_received: self
                .last_forward
                .get(&subscriber.cluster)
                .map(|&seq| ForwardWatermark {
                    submission_cluster: subscriber.cluster.clone(),
                    last_forward_seq: seq,
                })
                .into_iter()
                .collect(),
        }
    }
}

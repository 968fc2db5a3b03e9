//! The submission side of one cluster, sans-IO: jobs submitted to its send
//! queues, the view of the remote queues, forwarding sessions, and what
//! happens when a forwarded job is refused or comes back.
//!
//! Engines drive it: [`ForwarderNode::submit`] for new jobs,
//! [`ForwarderNode::handle`] for messages from execution clusters, and
//! [`ForwarderNode::schedule`] once per instant in which anything changed.
//! A session decides every job waiting at the submission cluster, in
//! submission order. A job that stays pending is decided again in the next
//! session (after a counter update or a returned job); a record is written
//! for its first decision and whenever its outcome or reason changes.
//!
//! Jobs that cannot stay where they went come back and are decided again:
//! one the receiving queue refuses ([`Message::JobReject`]), one it returns
//! ([`Message::JobReturn`], for instance when this cluster recalls it after
//! it pended there longer than its send queue's MAX_RSCHED_TIME), and one the
//! execution cluster turns out not to hold ([`Message::JobLost`], the answer
//! to the [`JobSync`] sent whenever a connection to it is made, so jobs held
//! by a cluster that restarted come back). Messages about a job are only
//! believed from the cluster the job is at.

use std::collections::BTreeMap;
use std::time::Duration;

use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, HeldJob, JobEvent, JobForward, JobRecall, JobSpec,
    JobSync, Message, QueueName, QueueRef, RejectReason, SimTime,
};
use rustc_hash::FxHashMap;

use crate::mode::ScheduleMode;
use crate::policy::{Decision, JobRequest, Outcome, PendReason, decide, decide_into};
use crate::record::{DecisionEntry, DecisionRecord, OracleVerdict};
use crate::view::{RemoteQueueId, RemoteView, ResourceId, UpdateOutcome};

/// Default cap on how many times one job is forwarded before it is left
/// pending at the submission cluster (mcfed's own parameter, MAX_FORWARDS).
pub const DEFAULT_MAX_FORWARDS: u32 = 8;

/// A send queue: a local queue with SNDJOBS_TO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendQueueConfig {
    /// The local queue's name.
    pub name: QueueName,
    /// SNDJOBS_TO, in order.
    pub send_to: Vec<QueueRef>,
    /// MAX_RSCHED_TIME: how long a job forwarded from this queue may pend at
    /// the execution cluster before it is recalled (`None`: never).
    pub max_rsched_time: Option<Duration>,
}

/// The submission side's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwarderConfig {
    /// The submission cluster.
    pub cluster: ClusterName,
    /// MC_PLUGIN_SCHEDULE_ENHANCE.
    pub mode: ScheduleMode,
    /// Its send queues.
    pub send_queues: Vec<SendQueueConfig>,
    /// How many times one job may be forwarded (MAX_FORWARDS).
    pub max_forwards: u32,
}

/// Why a job could not be submitted to a send queue.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ForwardSubmitError {
    /// The queue is not a send queue of this cluster.
    #[error("`{0}` is not a send queue of this cluster")]
    NotASendQueue(String),
    /// The job asks for no slots.
    #[error("a job needs at least one slot")]
    NoSlots,
}

/// Where a job submitted here stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceState {
    /// Pending at the submission cluster.
    Waiting,
    /// Sent; no answer yet.
    Forwarded {
        /// The receive queue.
        to: RemoteQueueId,
        /// The forward's sequence number.
        forward_seq: u64,
    },
    /// Taken by the execution cluster, not started.
    Accepted {
        /// The receive queue.
        to: RemoteQueueId,
        /// Its id there.
        dest_job: u64,
    },
    /// Running remotely.
    Running {
        /// The receive queue.
        to: RemoteQueueId,
        /// Its id there.
        dest_job: u64,
    },
    /// Suspended remotely.
    Suspended {
        /// The receive queue.
        to: RemoteQueueId,
        /// Its id there.
        dest_job: u64,
    },
    /// Finished remotely.
    Done,
    /// Forwarded MAX_FORWARDS times; left pending here.
    GaveUp,
}

/// A job submitted to one of this cluster's send queues.
#[derive(Clone, Debug)]
pub struct SourceJob {
    /// Its id here.
    pub id: u64,
    /// What it asks for.
    pub spec: JobSpec,
    /// Index of its send queue.
    send_queue: usize,
    request: JobRequest,
    /// When it was submitted.
    pub submitted_at: SimTime,
    /// Where it stands.
    pub state: SourceState,
    /// How many times it has been forwarded.
    pub forwards: u32,
    /// Why it is being decided again, if it is.
    note: Option<String>,
    /// The pend reason last recorded, to record only changes.
    last_pend: Option<PendReason>,
    waiting_key: u64,
    /// The sequence number of its current forward.
    forward_seq: u64,
    /// When it was last forwarded.
    pub forwarded_at: SimTime,
    /// Whether its current forward has been recalled.
    recalled: bool,
    /// The queues it was forwarded to, in order.
    pub previous_targets: Vec<RemoteQueueId>,
}

impl SourceJob {
    /// The remote queue the job is at (forwarded, accepted, running or
    /// suspended there), if any.
    pub fn remote_queue(&self) -> Option<RemoteQueueId> {
        match self.state {
            SourceState::Forwarded { to, .. }
            | SourceState::Accepted { to, .. }
            | SourceState::Running { to, .. }
            | SourceState::Suspended { to, .. } => Some(to),
            SourceState::Waiting | SourceState::Done | SourceState::GaveUp => None,
        }
    }

    /// The job's id at the execution cluster, once it has been accepted.
    pub fn dest_job(&self) -> Option<u64> {
        match self.state {
            SourceState::Accepted { dest_job, .. }
            | SourceState::Running { dest_job, .. }
            | SourceState::Suspended { dest_job, .. } => Some(dest_job),
            _ => None,
        }
    }

    /// The send queue's index in the forwarder.
    pub fn send_queue_index(&self) -> usize {
        self.send_queue
    }
}

#[derive(Clone, Debug)]
struct SendQueue {
    name: QueueName,
    targets: Vec<RemoteQueueId>,
    max_rsched_time: Option<Duration>,
}

/// The submission side of one cluster.
#[derive(Debug)]
pub struct ForwarderNode {
    cluster: ClusterName,
    mode: ScheduleMode,
    max_forwards: u32,
    view: RemoteView,
    send_queues: Vec<SendQueue>,
    send_queue_by_name: FxHashMap<QueueName, usize>,
    jobs: FxHashMap<u64, SourceJob>,
    waiting: BTreeMap<u64, u64>,
    next_job_id: u64,
    next_waiting_key: u64,
    session_due: bool,
    records: Vec<DecisionEntry>,
    /// Jobs that reached MAX_FORWARDS since the last session.
    gave_up: Vec<u64>,
    scratch: Decision,
    /// The oracle's view: the same remote queues fed with the true counters
    /// at each session (see [`ForwarderNode::enable_oracle`]).
    oracle: Option<RemoteView>,
    /// Messages produced while handling messages, sent at the next session.
    outgoing: Vec<Envelope>,
    /// Recall deadlines (MAX_RSCHED_TIME) of accepted jobs: (when, job).
    recalls: BTreeMap<(SimTime, u64), u64>,
    /// The incarnation each execution cluster last said hello with.
    incarnations: FxHashMap<ClusterName, u64>,
}

impl ForwarderNode {
    /// A forwarder for `config`.
    pub fn new(config: ForwarderConfig) -> Self {
        let mut view = RemoteView::new();
        let mut send_queues = Vec::new();
        let mut send_queue_by_name = FxHashMap::default();
        for send_queue in config.send_queues {
            let targets = send_queue
                .send_to
                .iter()
                .map(|at| view.add_queue(at))
                .collect();
            send_queue_by_name.insert(send_queue.name.clone(), send_queues.len());
            send_queues.push(SendQueue {
                name: send_queue.name,
                targets,
                max_rsched_time: send_queue.max_rsched_time,
            });
        }
        ForwarderNode {
            cluster: config.cluster,
            mode: config.mode,
            max_forwards: config.max_forwards,
            view,
            send_queues,
            send_queue_by_name,
            jobs: FxHashMap::default(),
            waiting: BTreeMap::new(),
            next_job_id: 1,
            next_waiting_key: 0,
            session_due: false,
            records: Vec::new(),
            gave_up: Vec::new(),
            oracle: None,
            scratch: Decision::empty(config.mode),
            outgoing: Vec::new(),
            recalls: BTreeMap::new(),
            incarnations: FxHashMap::default(),
        }
    }

    /// The submission cluster's name.
    pub fn cluster(&self) -> &ClusterName {
        &self.cluster
    }

    /// The forwarding mode.
    pub fn mode(&self) -> ScheduleMode {
        self.mode
    }

    /// The view of the remote queues.
    pub fn view(&self) -> &RemoteView {
        &self.view
    }

    /// Whether `queue` is one of this cluster's send queues.
    pub fn is_send_queue(&self, queue: &str) -> bool {
        self.send_queue_by_name.contains_key(queue)
    }

    /// The execution clusters this one sends to.
    pub fn remote_clusters(&self) -> impl Iterator<Item = &ClusterName> {
        self.view.clusters()
    }

    /// A job submitted here, unless it has finished.
    pub fn job(&self, id: u64) -> Option<&SourceJob> {
        self.jobs.get(&id)
    }

    /// How many jobs wait at the submission cluster.
    pub fn waiting_jobs(&self) -> usize {
        self.waiting.len()
    }

    /// Whether a forwarding session is due at `now`: something changed for
    /// it, messages wait to be sent, or one of its timers (a MAX_RSCHED_TIME
    /// recall) has come.
    pub fn needs_session_at(&self, now: SimTime) -> bool {
        self.needs_session() || self.next_event_time().is_some_and(|at| at <= now)
    }

    /// Whether a forwarding session is due for what happened (not counting
    /// timers; see [`ForwarderNode::needs_session_at`]).
    pub fn needs_session(&self) -> bool {
        self.session_due || !self.outgoing.is_empty() || !self.gave_up.is_empty()
    }

    /// Every job submitted here that has not finished, in no particular
    /// order.
    pub fn jobs(&self) -> impl Iterator<Item = &SourceJob> {
        self.jobs.values()
    }

    /// The name of send queue `index`.
    pub fn send_queue_name(&self, index: usize) -> &QueueName {
        &self.send_queues[index].name
    }

    /// The send queues' names, with the remote queues each sends to.
    pub fn send_queues(&self) -> impl Iterator<Item = (&QueueName, &[RemoteQueueId])> {
        self.send_queues
            .iter()
            .map(|queue| (&queue.name, queue.targets.as_slice()))
    }

    /// The incarnation execution cluster `cluster` last said hello with.
    pub fn incarnation_of(&self, cluster: &ClusterName) -> Option<u64> {
        self.incarnations.get(cluster).copied()
    }

    /// When the node next needs [`ForwarderNode::schedule`] on its own (the
    /// next MAX_RSCHED_TIME recall), if ever.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.recalls.keys().next().map(|(at, _)| *at)
    }

    /// Submits a job to send queue `queue`; it is decided in the next
    /// session.
    pub fn submit(
        &mut self,
        now: SimTime,
        queue: &str,
        spec: JobSpec,
    ) -> Result<u64, ForwardSubmitError> {
        let &send_queue = self
            .send_queue_by_name
            .get(queue)
            .ok_or_else(|| ForwardSubmitError::NotASendQueue(queue.to_owned()))?;
        if spec.slots == 0 {
            return Err(ForwardSubmitError::NoSlots);
        }
        let mut resources: Vec<ResourceId> = spec
            .resources
            .iter()
            .map(|name| self.view.resource_id(name))
            .collect();
        resources.sort_unstable();
        resources.dedup();
        let id = self.next_job_id;
        self.next_job_id += 1;
        let request = JobRequest {
            slots: spec.slots,
            resources,
        };
        self.jobs.insert(
            id,
            SourceJob {
                id,
                spec,
                send_queue,
                request,
                submitted_at: now,
                state: SourceState::Waiting,
                forwards: 0,
                note: None,
                last_pend: None,
                waiting_key: 0,
                forward_seq: 0,
                forwarded_at: SimTime::ZERO,
                recalled: false,
                previous_targets: Vec::new(),
            },
        );
        self.enqueue_waiting(id);
        Ok(id)
    }

    fn enqueue_waiting(&mut self, id: u64) {
        let key = self.next_waiting_key;
        self.next_waiting_key += 1;
        if let Some(job) = self.jobs.get_mut(&id) {
            job.waiting_key = key;
            job.state = SourceState::Waiting;
        }
        self.waiting.insert(key, id);
        self.session_due = true;
    }

    /// Sends a job back to wait here after a refusal or a return, unless it
    /// has reached MAX_FORWARDS.
    fn requeue(&mut self, id: u64, note: String) {
        let cap = self.max_forwards;
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.note = Some(note);
        job.last_pend = None;
        if job.forwards >= cap {
            job.state = SourceState::GaveUp;
            self.session_due = true;
            self.gave_up.push(id);
            return;
        }
        self.enqueue_waiting(id);
    }

    /// The job `id` if it is at a queue of cluster `from`, with that queue.
    fn job_at(&self, id: u64, from: &ClusterName) -> Option<(&SourceJob, RemoteQueueId)> {
        let job = self.jobs.get(&id)?;
        let to = job.remote_queue()?;
        if self.view.cluster_of(to) != from {
            tracing::debug!(cluster = %self.cluster, job = id, from = %from, "message about a job that is not at the sender: ignored");
            return None;
        }
        Some((job, to))
    }

    /// Handles a message from execution cluster `from`.
    pub fn handle(&mut self, now: SimTime, from: &ClusterName, message: Message) {
        match message {
            Message::CounterUpdate(update) => {
                if &update.sender != from {
                    tracing::warn!(cluster = %self.cluster, from = %from, sender = %update.sender, "counter update under another cluster's name ignored");
                    return;
                }
                match self.view.apply_update(&self.cluster, &update) {
                    UpdateOutcome::Applied => {
                        if !self.waiting.is_empty() {
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
            }
            Message::JobAccept(accept) => {
                let Some((job, to)) = self.job_at(accept.source_job, from) else {
                    return;
                };
                let SourceState::Forwarded { forward_seq, .. } = job.state else {
                    return;
                };
                if forward_seq != accept.forward_seq {
                    return;
                }
                let deadline = self.send_queues[job.send_queue]
                    .max_rsched_time
                    .map(|limit| job.forwarded_at + limit);
                if let Some(job) = self.jobs.get_mut(&accept.source_job) {
                    job.state = SourceState::Accepted {
                        to,
                        dest_job: accept.dest_job,
                    };
                    if let (Some(deadline), false) = (deadline, job.recalled) {
                        self.recalls.insert((deadline, job.id), job.id);
                    }
                }
            }
            Message::JobReject(reject) => {
                let Some((job, to)) = self.job_at(reject.source_job, from) else {
                    return;
                };
                let SourceState::Forwarded { forward_seq, .. } = job.state else {
                    return;
                };
                if forward_seq != reject.forward_seq {
                    return;
                }
                self.forget_forward(from, forward_seq);
                if let RejectReason::BacklogFull { .. } = reject.reason {
                    self.view.mark_backlog_full(to);
                }
                let note = format!("refused by {}: {}", self.view.queue_ref(to), reject.reason);
                self.requeue(reject.source_job, note);
            }
            Message::JobReturn(returned) => {
                let Some((job, to)) = self.job_at(returned.source_job, from) else {
                    return;
                };
                if job
                    .dest_job()
                    .is_some_and(|dest_job| dest_job != returned.dest_job)
                {
                    return;
                }
                let forward_seq = job.forward_seq;
                self.forget_forward(from, forward_seq);
                let note = format!(
                    "returned by {}: {}",
                    self.view.queue_ref(to),
                    returned.reason
                );
                self.requeue(returned.source_job, note);
            }
            Message::JobLost(lost) => {
                let Some((job, to)) = self.job_at(lost.source_job, from) else {
                    return;
                };
                if job.forward_seq != lost.forward_seq {
                    return;
                }
                self.forget_forward(from, lost.forward_seq);
                let note = format!("lost by {}: {}", self.view.queue_ref(to), lost.reason);
                self.requeue(lost.source_job, note);
            }
            Message::JobStatus(status) => {
                let Some((job, to)) = self.job_at(status.source_job, from) else {
                    return;
                };
                if job
                    .dest_job()
                    .is_some_and(|dest_job| dest_job != status.dest_job)
                {
                    return;
                }
                let Some(job) = self.jobs.get_mut(&status.source_job) else {
                    return;
                };
                let dest_job = status.dest_job;
                match status.event {
                    JobEvent::Started | JobEvent::Resumed => {
                        job.state = SourceState::Running { to, dest_job };
                    }
                    JobEvent::Suspended => job.state = SourceState::Suspended { to, dest_job },
                    JobEvent::Requeued => job.state = SourceState::Accepted { to, dest_job },
                    JobEvent::Finished => {
                        self.jobs.remove(&status.source_job);
                    }
                }
            }
            Message::Hello(hello) => self.hello(now, from, hello.incarnation),
            Message::JobForward(_) | Message::JobRecall(_) | Message::JobSync(_) => {
                tracing::debug!(kind = message.kind(), "message not for the forwarder");
            }
        }
    }

    /// Drops a forward from the view's log, and from the oracle's: the job
    /// came back, so the forward no longer weighs on the remote queue.
    fn forget_forward(&mut self, from: &ClusterName, forward_seq: u64) {
        self.view.forget_forward(from, forward_seq);
        if let Some(oracle) = &mut self.oracle {
            oracle.forget_forward(from, forward_seq);
        }
    }

    /// An execution cluster said hello (a connection to it was made). If it
    /// restarted (a new incarnation), what this cluster knew of it is void:
    /// its queues are unknown until its next counter update. Either way it
    /// is told which jobs this cluster believes it holds ([`JobSync`]); it
    /// answers for each, and the ones it does not hold come back.
    fn hello(&mut self, now: SimTime, from: &ClusterName, incarnation: u64) {
        if !self.view.clusters().any(|cluster| cluster == from) {
            return;
        }
        if incarnation != 0 {
            let previous = self.incarnations.insert(from.clone(), incarnation);
            if previous.is_some_and(|previous| previous != incarnation) {
                tracing::info!(at = %now, cluster = %self.cluster, peer = %from, "execution cluster restarted; its counters are unknown until its next update");
                self.view.reset_cluster(from);
                // The oracle forgets the old incarnation's forwards too; its
                // figures come again with the next true counters.
                if let Some(oracle) = &mut self.oracle {
                    oracle.reset_cluster(from);
                }
            }
        }
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
        jobs.sort_unstable_by_key(|held| held.source_job);
        self.outgoing.push(Envelope {
            from: self.cluster.clone(),
            to: from.clone(),
            message: Message::JobSync(JobSync { jobs }),
        });
    }

    /// Sends the recalls due at `now` (MAX_RSCHED_TIME).
    fn send_recalls(&mut self, now: SimTime, out: &mut Vec<Envelope>) {
        while let Some((&(at, id), _)) = self.recalls.iter().next() {
            if at > now {
                break;
            }
            self.recalls.remove(&(at, id));
            let Some(job) = self.jobs.get_mut(&id) else {
                continue;
            };
            let SourceState::Accepted { to, dest_job } = job.state else {
                continue;
            };
            if job.recalled {
                continue;
            }
            job.recalled = true;
            let limit = self.send_queues[job.send_queue]
                .max_rsched_time
                .unwrap_or_default();
            let at_queue = self.view.queue_ref(to);
            tracing::debug!(cluster = %self.cluster, job = id, at = %at_queue, "recall");
            out.push(Envelope {
                from: self.cluster.clone(),
                to: at_queue.cluster.clone(),
                message: Message::JobRecall(JobRecall {
                    source_job: id,
                    dest_job,
                    reason: format!(
                        "recalled after pending there longer than MAX_RSCHED_TIME ({})",
                        humanize(limit)
                    ),
                }),
            });
        }
    }

    /// Runs a forwarding session at `now` if one is due: decides every
    /// waiting job, appends the forwards to `out` and records decisions.
    pub fn schedule(&mut self, now: SimTime, out: &mut Vec<Envelope>) {
        out.append(&mut self.outgoing);
        self.send_recalls(now, out);
        for id in std::mem::take(&mut self.gave_up) {
            let decision = Decision::pend_without_candidates(
                self.mode,
                PendReason::ForwardCapReached {
                    cap: self.max_forwards,
                },
            );
            self.record(now, id, &decision);
        }
        if !self.session_due {
            return;
        }
        self.session_due = false;
        // Within a session views only lose slots, so a job shaped like one
        // that just pended pends too: reuse that decision.
        let mut pended: FxHashMap<(usize, u32, Vec<ResourceId>), Decision> = FxHashMap::default();
        let waiting: Vec<(u64, u64)> = self.waiting.iter().map(|(&k, &v)| (k, v)).collect();
        for (key, id) in waiting {
            let Some(job) = self.jobs.get(&id) else {
                self.waiting.remove(&key);
                continue;
            };
            let shape = (
                job.send_queue,
                job.request.slots,
                job.request.resources.clone(),
            );
            let decision = if let Some(decision) = pended.get(&shape) {
                if let Outcome::Pend(reason) = &decision.outcome {
                    if job.last_pend.as_ref() == Some(reason) {
                        continue;
                    }
                }
                decision.clone()
            } else {
                let targets = &self.send_queues[job.send_queue].targets;
                let mut decision = std::mem::replace(&mut self.scratch, Decision::empty(self.mode));
                decide_into(
                    &self.view,
                    self.mode,
                    targets,
                    &job.request,
                    now,
                    &mut decision,
                );
                decision
            };
            match decision.outcome {
                Outcome::Forward(target) => {
                    self.record(now, id, &decision);
                    self.scratch = decision;
                    self.waiting.remove(&key);
                    self.forward(now, id, target, out);
                }
                Outcome::Pend(ref reason) => {
                    let changed = job.last_pend.as_ref() != Some(reason);
                    if changed {
                        self.record(now, id, &decision);
                        if let Some(job) = self.jobs.get_mut(&id) {
                            job.last_pend = Some(reason.clone());
                        }
                    }
                    pended.entry(shape).or_insert(decision);
                }
            }
        }
    }

    fn forward(&mut self, now: SimTime, id: u64, target: RemoteQueueId, out: &mut Vec<Envelope>) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let forward_seq = self.view.record_forward(target, job.request.slots);
        if let Some(oracle) = &mut self.oracle {
            oracle.record_forward(target, job.request.slots);
        }
        let at = self.view.queue_ref(target);
        let attempt = job.forwards;
        job.forwards += 1;
        job.note = None;
        job.last_pend = None;
        job.forward_seq = forward_seq;
        job.forwarded_at = now;
        job.recalled = false;
        job.previous_targets.push(target);
        job.state = SourceState::Forwarded {
            to: target,
            forward_seq,
        };
        tracing::debug!(cluster = %self.cluster, job = id, to = %at, at = %now, "forward");
        out.push(Envelope {
            from: self.cluster.clone(),
            to: at.cluster.clone(),
            message: Message::JobForward(JobForward {
                forward_seq,
                source_job: id,
                queue: at.queue.clone(),
                spec: job.spec.clone(),
                submitted_at: job.submitted_at,
                attempt,
            }),
        });
    }

    fn record(&mut self, now: SimTime, id: u64, decision: &Decision) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let oracle = self.oracle.as_ref().map(|oracle| {
            let targets = &self.send_queues[job.send_queue].targets;
            let truth = decide(oracle, self.mode, targets, &job.request, now);
            OracleVerdict::compare(decision, &self.view, &truth, oracle)
        });
        let mut decision = decision.clone();
        // Decisions made without a scan (MAX_FORWARDS) or taken from the
        // session's cache carry another time; this one is made now.
        decision.at = now;
        self.records.push(DecisionEntry {
            decision,
            job: job.spec.name.clone(),
            job_id: id,
            send_queue: self.send_queues[job.send_queue].name.clone(),
            slots: job.request.slots,
            attempt: job.forwards,
            note: job.note.clone(),
            oracle,
            forwarded_before: job.previous_targets.clone(),
        });
    }

    /// Takes the decisions made since the last call, unrendered (see
    /// [`DecisionEntry`]); [`ForwarderNode::render`] turns one into a record.
    pub fn take_entries(&mut self) -> Vec<DecisionEntry> {
        std::mem::take(&mut self.records)
    }

    /// The record of a decision this node made.
    pub fn render(&self, entry: &DecisionEntry) -> DecisionRecord {
        DecisionRecord::from_entry(entry, self.cluster.as_str(), &self.view)
    }

    /// Takes the decision records written since the last call.
    pub fn take_records(&mut self) -> Vec<DecisionRecord> {
        let entries = self.take_entries();
        entries.iter().map(|entry| self.render(entry)).collect()
    }

    /// Turns on the oracle: from now on every recorded decision is compared
    /// with what the same mode would have chosen from the true counters at
    /// that instant, which the engine feeds with
    /// [`ForwarderNode::refresh_oracle`] before each session.
    pub fn enable_oracle(&mut self) {
        if self.oracle.is_none() {
            // Same queues, same forward log, no figures yet.
            self.oracle = Some(self.view.clone());
        }
    }

    /// Whether the oracle is on.
    pub fn has_oracle(&self) -> bool {
        self.oracle.is_some()
    }

    /// Gives the oracle the true counters of one execution cluster (a
    /// snapshot taken now, with the true watermark of received forwards).
    pub fn refresh_oracle(&mut self, truth: &CounterUpdate) {
        if let Some(oracle) = &mut self.oracle {
            oracle.apply_update(&self.cluster, truth);
        }
    }
}

/// A duration as `1h 30m`, `2m`, `45s`.
fn humanize(duration: Duration) -> String {
    let secs = duration.as_secs();
    let (hours, minutes, seconds) = (secs / 3600, (secs / 60) % 60, secs % 60);
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours}h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes}m"));
    }
    if seconds > 0 || parts.is_empty() {
        parts.push(format!("{seconds}s"));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcfed_protocol::{
        CounterUpdate, Hello, JobAccept, JobLost, JobReject, JobReturn, JobStatus, QueueCounters,
    };

    use super::*;

    fn name(text: &str) -> ClusterName {
        ClusterName::new(text).expect("valid")
    }

    fn forwarder(max_rsched_time: Option<Duration>) -> ForwarderNode {
        ForwarderNode::new(ForwarderConfig {
            cluster: name("C1"),
            mode: ScheduleMode::ResourceOnly,
            send_queues: vec![SendQueueConfig {
                name: QueueName::new("send").expect("valid"),
                send_to: vec![
                    "high@C2".parse().expect("valid"),
                    "high@C3".parse().expect("valid"),
                ],
                max_rsched_time,
            }],
            max_forwards: 3,
        })
    }

    fn update(sender: &str, seq: u64, available: u32) -> Message {
        Message::CounterUpdate(CounterUpdate {
            sender: name(sender),
            seq,
            taken_at: SimTime::from_secs(seq * 30),
            queues: vec![QueueCounters {
                cluster: name(sender),
                queue: QueueName::new("high").expect("valid"),
                priority: 40,
                total_slots: 10,
                available_slots: available,
                running_slots: 10 - available,
                pending_slots: 0,
                preemptable_available_slots: available,
                lowest_preemptable_priority: None,
                impt_jobbklg: Some(50),
                imported_pending_jobs: 0,
                resources: Vec::new(),
            }],
            forwards_received: Vec::new(),
        })
    }

    /// A forwarder with counters from C2 (5 free) and C3 (2 free) and one
    /// job forwarded to C2 and accepted there as job 77.
    fn with_job_at_c2(max_rsched_time: Option<Duration>) -> (ForwarderNode, u64) {
        let mut node = forwarder(max_rsched_time);
        let now = SimTime::from_secs(30);
        node.handle(now, &name("C2"), update("C2", 1, 5));
        node.handle(now, &name("C3"), update("C3", 1, 2));
        let id = node
            .submit(
                now,
                "send",
                JobSpec::simple("j", "u", Duration::from_secs(60)),
            )
            .expect("submit");
        let mut out = Vec::new();
        node.schedule(now, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].to, "C2");
        node.handle(
            now,
            &name("C2"),
            Message::JobAccept(JobAccept {
                forward_seq: 1,
                source_job: id,
                dest_job: 77,
            }),
        );
        node.take_records();
        (node, id)
    }

    #[test]
    fn a_hello_brings_a_sync_listing_the_jobs_there() {
        let (mut node, id) = with_job_at_c2(None);
        let hello = Message::Hello(Hello::with_incarnation(name("C2"), 5));
        node.handle(SimTime::from_secs(40), &name("C2"), hello);
        assert!(node.needs_session());
        let mut out = Vec::new();
        node.schedule(SimTime::from_secs(40), &mut out);
        assert_eq!(
            out[0].message,
            Message::JobSync(JobSync {
                jobs: vec![HeldJob {
                    source_job: id,
                    forward_seq: 1
                }]
            })
        );
        // C3 holds nothing from C1.
        node.handle(
            SimTime::from_secs(40),
            &name("C3"),
            Message::Hello(Hello::with_incarnation(name("C3"), 9)),
        );
        out.clear();
        node.schedule(SimTime::from_secs(40), &mut out);
        assert_eq!(out[0].message, Message::JobSync(JobSync { jobs: vec![] }));
    }

    #[test]
    fn a_restarted_cluster_is_unknown_until_its_update_and_its_lost_jobs_come_back() {
        let (mut node, id) = with_job_at_c2(None);
        let now = SimTime::from_secs(40);
        node.handle(
            now,
            &name("C2"),
            Message::Hello(Hello::with_incarnation(name("C2"), 5)),
        );
        let c2 = node
            .view()
            .queue_id(&"high@C2".parse().expect("valid"))
            .expect("queue");
        assert!(
            node.view().figures(c2).is_some(),
            "first hello: nothing to forget"
        );
        node.handle(
            now,
            &name("C2"),
            Message::Hello(Hello::with_incarnation(name("C2"), 6)),
        );
        assert!(
            node.view().figures(c2).is_none(),
            "a new incarnation is unknown"
        );
        // Its first update (sequence numbers start again) is applied.
        node.handle(now, &name("C2"), update("C2", 1, 5));
        assert!(node.view().figures(c2).is_some());
        // A loss from the wrong cluster, or for another forward, is ignored.
        let lost = |forward_seq| {
            Message::JobLost(JobLost {
                source_job: id,
                forward_seq,
                reason: "restarted".into(),
            })
        };
        node.handle(now, &name("C3"), lost(1));
        node.handle(now, &name("C2"), lost(2));
        assert!(matches!(
            node.job(id).map(|job| job.state),
            Some(SourceState::Accepted { .. })
        ));
        node.handle(now, &name("C2"), lost(1));
        assert_eq!(
            node.job(id).map(|job| job.state),
            Some(SourceState::Waiting)
        );
        let mut out = Vec::new();
        node.schedule(now, &mut out);
        let records = node.take_records();
        assert_eq!(records.len(), 1);
        assert!(
            records[0]
                .note
                .as_deref()
                .is_some_and(|note| note.starts_with("lost by high@C2")),
            "{:?}",
            records[0].note
        );
        assert_eq!(records[0].forwarded_before, vec!["high@C2".to_owned()]);
        assert_eq!(records[0].attempt, 1);
    }

    /// A restarted execution cluster holds none of the jobs forwarded to
    /// its previous incarnation: the oracle must not keep counting them, or
    /// it would judge the next decisions on phantom slots.
    #[test]
    fn the_oracle_forgets_the_forwards_a_restarted_cluster_lost() {
        let truth = |sender: &str, seq: u64, available: u32| {
            let Message::CounterUpdate(truth) = update(sender, seq, available) else {
                panic!("an update");
            };
            truth
        };
        let mut node = forwarder(None);
        node.enable_oracle();
        let now = SimTime::from_secs(30);
        node.handle(now, &name("C2"), update("C2", 1, 1));
        node.handle(now, &name("C3"), update("C3", 1, 1));
        node.refresh_oracle(&truth("C2", 1, 1));
        node.refresh_oracle(&truth("C3", 1, 1));
        let hello = |incarnation| Message::Hello(Hello::with_incarnation(name("C2"), incarnation));
        node.handle(now, &name("C2"), hello(5));
        let id = node
            .submit(
                now,
                "send",
                JobSpec::simple("j", "u", Duration::from_secs(60)),
            )
            .expect("submit");
        let mut out = Vec::new();
        node.schedule(now, &mut out);
        assert!(
            out.iter().any(|envelope| envelope.to == "C2"
                && matches!(envelope.message, Message::JobForward(_)))
        );
        // C2 restarts: the job is lost, its slot free again; C2 and C3 tie
        // and C2 comes first in SNDJOBS_TO, unless a phantom forward still
        // weighs on it.
        let later = SimTime::from_secs(40);
        node.handle(later, &name("C2"), hello(6));
        node.handle(later, &name("C2"), update("C2", 1, 1));
        node.handle(
            later,
            &name("C2"),
            Message::JobLost(JobLost {
                source_job: id,
                forward_seq: 1,
                reason: "restarted".into(),
            }),
        );
        node.refresh_oracle(&truth("C2", 2, 1));
        node.refresh_oracle(&truth("C3", 2, 1));
        node.take_records();
        out.clear();
        node.schedule(later, &mut out);
        let records = node.take_records();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].target.as_deref(), Some("high@C2"));
        let oracle = records[0].oracle.as_ref().expect("judged");
        assert_eq!(oracle.target.as_deref(), Some("high@C2"));
        assert!(!oracle.stale, "{oracle:?}");
    }

    #[test]
    fn a_job_pending_remotely_past_max_rsched_time_is_recalled_once() {
        let (mut node, id) = with_job_at_c2(Some(Duration::from_secs(120)));
        assert_eq!(node.next_event_time(), Some(SimTime::from_secs(150)));
        let mut out = Vec::new();
        node.schedule(SimTime::from_secs(149), &mut out);
        assert!(out.is_empty());
        node.schedule(SimTime::from_secs(150), &mut out);
        assert_eq!(
            out,
            vec![Envelope {
                from: name("C1"),
                to: name("C2"),
                message: Message::JobRecall(JobRecall {
                    source_job: id,
                    dest_job: 77,
                    reason: "recalled after pending there longer than MAX_RSCHED_TIME (2m)".into(),
                }),
            }]
        );
        out.clear();
        node.schedule(SimTime::from_secs(200), &mut out);
        assert!(out.is_empty(), "recalled once");
        assert_eq!(node.next_event_time(), None);
        // The return brings it back to be decided again.
        node.handle(
            SimTime::from_secs(151),
            &name("C2"),
            Message::JobReturn(JobReturn {
                source_job: id,
                dest_job: 77,
                reason: "recalled".into(),
            }),
        );
        assert_eq!(
            node.job(id).map(|job| job.state),
            Some(SourceState::Waiting)
        );
    }

    #[test]
    fn a_job_that_started_is_not_recalled() {
        let (mut node, id) = with_job_at_c2(Some(Duration::from_secs(120)));
        node.handle(
            SimTime::from_secs(60),
            &name("C2"),
            Message::JobStatus(JobStatus {
                source_job: id,
                dest_job: 77,
                event: JobEvent::Started,
                at: SimTime::from_secs(60),
            }),
        );
        let mut out = Vec::new();
        node.schedule(SimTime::from_secs(500), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn messages_about_a_job_from_another_cluster_are_ignored() {
        let (mut node, id) = with_job_at_c2(None);
        let now = SimTime::from_secs(40);
        node.handle(
            now,
            &name("C3"),
            Message::JobReject(JobReject {
                forward_seq: 1,
                source_job: id,
                reason: RejectReason::UnknownQueue,
            }),
        );
        node.handle(
            now,
            &name("C3"),
            Message::JobStatus(JobStatus {
                source_job: id,
                dest_job: 77,
                event: JobEvent::Finished,
                at: now,
            }),
        );
        node.handle(
            now,
            &name("C2"),
            Message::JobReturn(JobReturn {
                source_job: id,
                dest_job: 78,
                reason: "not this one".into(),
            }),
        );
        assert!(matches!(
            node.job(id).map(|job| job.state),
            Some(SourceState::Accepted { dest_job: 77, .. })
        ));
        // A counter update under another name is ignored too.
        node.handle(now, &name("C3"), update("C2", 9, 0));
        assert_eq!(node.view().applied_seq(&name("C2")), Some(1));
    }
}

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

use std::collections::BTreeMap;

use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, JobEvent, JobForward, JobSpec, Message, QueueName,
    QueueRef, SimTime,
};
use rustc_hash::FxHashMap;

use crate::mode::ScheduleMode;
use crate::policy::{Decision, JobRequest, Outcome, PendReason, decide, decide_into};
use crate::record::{DecisionContext, DecisionRecord, OracleVerdict};
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
}

#[derive(Clone, Debug)]
struct SendQueue {
    name: QueueName,
    targets: Vec<RemoteQueueId>,
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
    records: Vec<DecisionRecord>,
    /// Jobs that reached MAX_FORWARDS since the last session.
    gave_up: Vec<u64>,
    scratch: Decision,
    /// The oracle's view: the same remote queues fed with the true counters
    /// at each session (see [`ForwarderNode::enable_oracle`]).
    oracle: Option<RemoteView>,
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

    /// Whether a forwarding session is due.
    pub fn needs_session(&self) -> bool {
        self.session_due
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

    /// Handles a message from execution cluster `from`.
    pub fn handle(&mut self, now: SimTime, from: &ClusterName, message: Message) {
        match message {
            Message::CounterUpdate(update) => {
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
                if let Some(job) = self.jobs.get_mut(&accept.source_job) {
                    if let SourceState::Forwarded { to, forward_seq } = job.state {
                        if forward_seq == accept.forward_seq {
                            job.state = SourceState::Accepted {
                                to,
                                dest_job: accept.dest_job,
                            };
                        }
                    }
                }
            }
            Message::JobReject(reject) => {
                let Some(job) = self.jobs.get(&reject.source_job) else {
                    return;
                };
                let SourceState::Forwarded { to, forward_seq } = job.state else {
                    return;
                };
                if forward_seq != reject.forward_seq {
                    return;
                }
                self.view.forget_forward(from, forward_seq);
                if let Some(oracle) = &mut self.oracle {
                    oracle.forget_forward(from, forward_seq);
                }
                let note = format!("refused by {}: {}", self.view.queue_ref(to), reject.reason);
                self.requeue(reject.source_job, note);
            }
            Message::JobReturn(returned) => {
                let Some(job) = self.jobs.get(&returned.source_job) else {
                    return;
                };
                let to = match job.state {
                    SourceState::Accepted { to, .. }
                    | SourceState::Running { to, .. }
                    | SourceState::Suspended { to, .. }
                    | SourceState::Forwarded { to, .. } => to,
                    _ => return,
                };
                let note = format!(
                    "returned by {}: {}",
                    self.view.queue_ref(to),
                    returned.reason
                );
                self.requeue(returned.source_job, note);
            }
            Message::JobStatus(status) => {
                let Some(job) = self.jobs.get_mut(&status.source_job) else {
                    return;
                };
                let to = match job.state {
                    SourceState::Forwarded { to, .. }
                    | SourceState::Accepted { to, .. }
                    | SourceState::Running { to, .. }
                    | SourceState::Suspended { to, .. } => to,
                    _ => return,
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
            Message::Hello(_) | Message::JobForward(_) => {
                tracing::debug!(kind = message.kind(), "message not for the forwarder");
            }
        }
    }

    /// Runs a forwarding session at `now` if one is due: decides every
    /// waiting job, appends the forwards to `out` and records decisions.
    pub fn schedule(&mut self, now: SimTime, out: &mut Vec<Envelope>) {
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
        let send_queue = &self.send_queues[job.send_queue].name;
        let mut record = DecisionRecord::new(
            decision,
            &self.view,
            DecisionContext {
                now,
                job: &job.spec.name,
                job_id: id,
                cluster: self.cluster.as_str(),
                send_queue: send_queue.as_str(),
                slots: job.request.slots,
                attempt: job.forwards,
            },
        );
        record.note = job.note.clone();
        if let Some(oracle) = &self.oracle {
            let targets = &self.send_queues[job.send_queue].targets;
            let truth = decide(oracle, self.mode, targets, &job.request, now);
            record.oracle = Some(OracleVerdict::compare(decision, &self.view, &truth, oracle));
        }
        self.records.push(record);
    }

    /// Takes the decision records written since the last call.
    pub fn take_records(&mut self) -> Vec<DecisionRecord> {
        std::mem::take(&mut self.records)
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

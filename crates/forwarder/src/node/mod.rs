//! The submission side of one cluster, sans-IO: jobs submitted to its send
//! queues, the view of the remote queues, forwarding sessions, and what
//! happens when a forwarded job is refused or comes back.
//!
//! Engines drive it: [`ForwarderNode::submit`] for new jobs,
//! [`ForwarderNode::handle`] for messages from execution clusters (it says
//! what each one changed, as a [`Handled`]), and
//! [`ForwarderNode::schedule`] once per instant in which anything changed.
//! A session decides every job waiting at the submission cluster, in
//! submission order (a FAIRSHARE send queue's jobs by their users' dynamic
//! priorities, an APS send queue's by their APS values, in the places its
//! jobs take in that order: `fair`, `aps`, asked of the scheduler through
//! [`SendOrder`]). A job that stays pending is decided again only when its
//! decision can change (`parked`: a session decides one job per group of
//! jobs of one shape that pended for one reason, and none of a group that
//! no remote queue can take until the federation changes); a record is
//! written for its first decision and whenever its outcome or reason
//! changes. A queue that refused a job is left out of its decisions until
//! its cluster speaks again (`refusals`).
//!
//! Jobs that cannot stay where they went come back and are decided again:
//! one the receiving queue refuses ([`Message::JobReject`]), one it returns
//! ([`Message::JobReturn`], for instance when this cluster recalls it after
//! it pended there longer than its send queue's MAX_RSCHED_TIME), and one the
//! execution cluster turns out not to hold ([`Message::JobLost`], the answer
//! to the [`JobSync`] sent whenever a connection to it is made, so jobs held
//! by a cluster that restarted come back). Messages about a job are only
//! believed from the cluster the job is at, and only when they name its
//! current forward.
//!
//! A remote cluster whose link is down or whose counters grow too old is
//! *unreachable* (`reach`): its queues are no candidates, and once it has
//! been unreachable long enough its jobs that had not started come back
//! and are decided again; the copy left there is withdrawn, and if it turns
//! out to have started after all, the copies are settled so that the job
//! runs once.
//!
//! The node is split by responsibility: this file holds the node itself,
//! its accessors and [`ForwarderNode::submit`]; `config` its configuration;
//! `job` the jobs submitted here; `handle` the messages from execution
//! clusters; `reply` the reconciliation of replies about forwarded jobs;
//! `order` what the scheduler says of the waiting jobs' order;
//! `session` the forwarding sessions and MAX_RSCHED_TIME recalls;
//! `parked` the waiting jobs that pended; `refusals` the queues that
//! refused a job; `records` the decision records and the oracle; `reach`
//! unreachable clusters and the settling of copies; `restore` what a
//! journal keeps and puts back.
//!
//! [`Message::JobReject`]: mcfed_protocol::Message::JobReject
//! [`Message::JobReturn`]: mcfed_protocol::Message::JobReturn
//! [`Message::JobLost`]: mcfed_protocol::Message::JobLost
//! [`JobSync`]: mcfed_protocol::JobSync

mod aps;
mod config;
mod control;
mod fair;
mod handle;
mod job;
mod killed;
mod order;
mod parked;
mod reach;
mod records;
mod refusals;
mod reply;
mod restore;
mod session;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{ClusterName, Envelope, JobSpec, QueueName, SimTime};
use rustc_hash::FxHashMap;

pub use config::{
    DEFAULT_MAX_FORWARDS, DEFAULT_RECLAIM_TIME, DEFAULT_UNREACHABLE_UPDATES, ForwardSubmitError,
    ForwarderConfig, Reachability, SendQueueConfig,
};
pub use control::Controlled;
pub use handle::{CameBack, Handled};
pub use job::{LeftBehind, SourceJob, SourceState};
pub use order::{ApsQuery, ApsStanding, ApsValue, SendOrder, SubmissionOrder};
pub use restore::{RemoteImage, RestoredForwarder, SourceImage, SourceImageState};

use crate::mode::ScheduleMode;
use crate::policy::{Decision, JobRequest};
use crate::record::DecisionEntry;
use crate::view::{RemoteQueueId, RemoteView, ResourceId};

#[derive(Clone, Debug)]
struct SendQueue {
    name: QueueName,
    targets: Vec<RemoteQueueId>,
    max_rsched_time: Option<Duration>,
    /// FAIRSHARE: the slots of each user's jobs forwarded and not finished
    /// (kept only for fairshare send queues).
    forwarded_slots: Option<FxHashMap<Arc<str>, u32>>,
    /// APS_PRIORITY: the send queue whose APS_PRIORITY orders this one's
    /// waiting jobs (itself, or the one whose QUEUE_GROUP names it).
    aps_group: Option<usize>,
}

impl SendQueue {
    /// Whether its jobs that pend are parked (`parked`): those of a
    /// first-come-first-served send queue, not FAIRSHARE or APS.
    fn parks(&self) -> bool {
        self.forwarded_slots.is_none() && self.aps_group.is_none()
    }
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
    /// Whether some send queue is ordered by APS.
    any_aps: bool,
    jobs: FxHashMap<u64, SourceJob>,
    /// Jobs waiting here to be decided at the next session (waiting key →
    /// id), in submission order; those that pended are in `parked`.
    waiting: BTreeMap<u64, u64>,
    /// Waiting jobs that pended, decided again only when their decision
    /// can change (`parked`).
    parked: parked::Parked,
    /// Jobs with refusals standing (`refusals`).
    refused_jobs: rustc_hash::FxHashSet<u64>,
    /// How many times the policy was run on a waiting job.
    decisions_computed: u64,
    /// Tests turn parking off to compare with every job decided at every
    /// session, as before parking.
    #[cfg(test)]
    parking: bool,
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
    /// The lineage each execution cluster last resumed with.
    lineages: FxHashMap<ClusterName, u64>,
    /// Unreachable clusters: the rule, the links, the spells handled.
    reach: reach::Reach,
    /// Jobs changed since the last [`ForwarderNode::take_changes`], when
    /// tracking them for a journal.
    changes: Option<Vec<u64>>,
    /// Jobs killed while at an execution cluster, until it says what became
    /// of them (`killed`).
    killed_away: FxHashMap<u64, killed::KilledAway>,
}

impl ForwarderNode {
    /// A forwarder for `config`.
    pub fn new(config: ForwarderConfig) -> Self {
        let mut view = RemoteView::new();
        let mut send_queues = Vec::new();
        let send_queue_by_name: FxHashMap<QueueName, usize> = config
            .send_queues
            .iter()
            .enumerate()
            .map(|(index, queue)| (queue.name.clone(), index))
            .collect();
        for (index, send_queue) in config.send_queues.into_iter().enumerate() {
            let targets = send_queue
                .send_to
                .iter()
                .map(|at| view.add_queue(at))
                .collect();
            // A group named after no send queue is the queue's own.
            let aps_group = send_queue
                .aps_group
                .as_ref()
                .map(|group| send_queue_by_name.get(group).copied().unwrap_or(index));
            send_queues.push(SendQueue {
                name: send_queue.name,
                targets,
                max_rsched_time: send_queue.max_rsched_time,
                forwarded_slots: send_queue.fairshare.then(FxHashMap::default),
                aps_group,
            });
        }
        let reach = reach::Reach::new(&config.reachability, &view);
        ForwarderNode {
            cluster: config.cluster,
            mode: config.mode,
            max_forwards: config.max_forwards,
            view,
            any_aps: send_queues.iter().any(|queue| queue.aps_group.is_some()),
            send_queues,
            send_queue_by_name,
            jobs: FxHashMap::default(),
            waiting: BTreeMap::new(),
            parked: parked::Parked::default(),
            refused_jobs: Default::default(),
            decisions_computed: 0,
            #[cfg(test)]
            parking: true,
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
            lineages: FxHashMap::default(),
            reach,
            changes: None,
            killed_away: FxHashMap::default(),
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
        self.waiting.len() + self.parked.len()
    }

    /// How many waiting jobs are parked: they pended and are decided again
    /// only when their decision can change (a session decides one job per
    /// group of them).
    pub fn parked_jobs(&self) -> usize {
        self.parked.len()
    }

    /// How many times the forwarding policy has been run on a waiting job
    /// (a decision a session reuses for a job of the same shape, or one
    /// skipped for a parked group, does not count).
    pub fn decisions_computed(&self) -> u64 {
        self.decisions_computed
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
    /// next MAX_RSCHED_TIME recall, or the time an unreachable cluster's
    /// jobs come back), if ever.
    pub fn next_event_time(&self) -> Option<SimTime> {
        let recall = self.recalls.keys().next().map(|(at, _)| *at);
        match (recall, self.next_reclaim()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Submits a job to send queue `queue` under the forwarder's own next
    /// id; it is decided in the next session.
    pub fn submit(
        &mut self,
        now: SimTime,
        queue: &str,
        spec: JobSpec,
    ) -> Result<u64, ForwardSubmitError> {
        self.submit_as(now, self.next_job_id, queue, spec)
    }

    /// Submits a job to send queue `queue` under id `id` (the cluster's
    /// own numbering, so the cluster's ids are unique across its local
    /// queues and its send queues); it is decided in the next session.
    pub fn submit_as(
        &mut self,
        now: SimTime,
        id: u64,
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
        self.next_job_id = self.next_job_id.max(id + 1);
        let request = JobRequest {
            slots: spec.slots,
            resources,
            gpus: spec.gpus,
            refused: Vec::new(),
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
                parked: false,
                refusals: Vec::new(),
                waiting_key: 0,
                forward_seq: 0,
                forwarded_at: SimTime::ZERO,
                recalled: false,
                previous_targets: Vec::new(),
                left_behind: None,
                aps: None,
            },
        );
        self.enqueue_waiting(id);
        Ok(id)
    }

    fn enqueue_waiting(&mut self, id: u64) {
        self.leave_waiting(id);
        let key = self.next_waiting_key;
        self.next_waiting_key += 1;
        if let Some(job) = self.jobs.get_mut(&id) {
            job.waiting_key = key;
        }
        self.set_state(id, SourceState::Waiting);
        self.waiting.insert(key, id);
        self.session_due = true;
    }

    /// Moves job `id` to `state`, keeping the count of jobs not started at
    /// each remote cluster and noting the change for a journal.
    pub(super) fn set_state(&mut self, id: u64, state: SourceState) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let before = std::mem::replace(&mut job.state, state);
        if matches!(state, SourceState::Waiting | SourceState::Forwarded { .. }) {
            // Decided again, or sent anew: nothing restored stands.
            self.reach.unconfirmed.remove(&id);
        }
        self.count_unstarted(before, -1);
        self.count_unstarted(state, 1);
        self.note_change(id);
    }

    /// Takes job `id` out (it finished, or another copy of it did).
    pub(super) fn forget_job(&mut self, id: u64) {
        if let Some(job) = self.jobs.remove(&id) {
            self.reach.unconfirmed.remove(&id);
            self.refused_jobs.remove(&id);
            self.count_unstarted(job.state, -1);
            if job.state == SourceState::Waiting {
                self.waiting.remove(&job.waiting_key);
                if job.parked {
                    self.parked
                        .remove(&job.shape(), &job.parked_reason(), job.waiting_key);
                }
            }
            self.note_change(id);
        }
    }

    /// Takes job `id` off the jobs waiting to be decided, parked or not.
    fn leave_waiting(&mut self, id: u64) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let key = job.waiting_key;
        if job.parked {
            job.parked = false;
            let (shape, reason) = (job.shape(), job.parked_reason());
            self.parked.remove(&shape, &reason, key);
        } else if self.waiting.get(&key) == Some(&id) {
            self.waiting.remove(&key);
        }
    }

    /// Puts parked job `id` back among the jobs decided at the next
    /// session, in its place (its shape or reason is about to change).
    fn unpark(&mut self, id: u64) {
        let Some(job) = self.jobs.get(&id).filter(|job| job.parked) else {
            return;
        };
        let key = job.waiting_key;
        self.leave_waiting(id);
        self.waiting.insert(key, id);
    }

    /// Parks waiting job `id`, which pended in a session at fit epoch
    /// `epoch` (see `parked`).
    fn park(&mut self, id: u64, epoch: u64) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        if job.parked || job.state != SourceState::Waiting || job.last_pend.is_none() {
            return;
        }
        #[cfg(test)]
        if !self.parking {
            return;
        }
        job.parked = true;
        let key = job.waiting_key;
        let (shape, reason) = (job.shape(), job.parked_reason());
        self.waiting.remove(&key);
        self.parked.park(shape, reason, key, id, epoch);
    }

    fn count_unstarted(&mut self, state: SourceState, delta: i32) {
        let (SourceState::Forwarded { to, .. } | SourceState::Accepted { to, .. }) = state else {
            return;
        };
        self.count_unstarted_at(to, delta);
    }

    /// Notes job `id` as changed, when tracking changes for a journal.
    pub(super) fn note_change(&mut self, id: u64) {
        if let Some(changes) = &mut self.changes {
            changes.push(id);
        }
    }

    /// The slots of `user`'s jobs forwarded from send queue `queue` and not
    /// finished (a FAIRSHARE send queue's fwd_job_slots; 0 elsewhere).
    pub fn forwarded_slots(&self, queue: usize, user: &str) -> u32 {
        self.send_queues[queue]
            .forwarded_slots
            .as_ref()
            .and_then(|slots| slots.get(user).copied())
            .unwrap_or(0)
    }

    /// Job `id` left (`gone`) or took up (otherwise) a place among its
    /// user's forwarded jobs: a FAIRSHARE send queue's tally follows.
    fn count_forwarded(&mut self, id: u64, gone: bool) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let Some(slots) = self.send_queues[job.send_queue].forwarded_slots.as_mut() else {
            return;
        };
        let tally = slots.entry(job.spec.user.clone()).or_default();
        if gone {
            *tally = tally.saturating_sub(job.spec.slots);
        } else {
            *tally += job.spec.slots;
        }
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
            self.set_state(id, SourceState::GaveUp);
            self.session_due = true;
            self.gave_up.push(id);
            return;
        }
        self.enqueue_waiting(id);
    }
}

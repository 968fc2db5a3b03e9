//! [`Member`]: one cluster of a federation — scheduler and forwarder —
//! behind one sans-IO interface.

use std::time::Duration;

use mcfed_cluster::{Cluster, ClusterNode, JobOrigin, Transition};
use mcfed_forwarder::{DecisionEntry, DecisionRecord, ForwardSubmitError, ForwarderNode, Handled};
use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, Hello, JobEvent, JobSpec, Message, SimTime,
};

use crate::effects::{Effects, ForwardedIn, JobNotice, NoticeKind, SubmissionNote};
use crate::history::{History, RecordOrigin};
use crate::publish::PublishClock;
use crate::wake::{Pending, next_wake};

/// One cluster of a federation: its scheduler (the execution side) and,
/// when it has send queues, its forwarder (the submission side).
///
/// Every method that depends on time takes `now`, the federation's time.
/// A member whose clock is skewed ([`Member::set_clock_skew`]) stamps its
/// counter updates and makes its forwarding decisions on its own clock;
/// its jobs run in federation time.
#[derive(Debug)]
pub struct Member {
    pub(crate) node: ClusterNode,
    pub(crate) forwarder: Option<ForwarderNode>,
    /// How far this member's clock runs ahead (positive) or behind, in
    /// milliseconds.
    skew_ms: i64,
    /// What changed since the driver last took it, for a journal (`None`:
    /// not journaled).
    pub(crate) journal: Option<Vec<crate::JournalRecord>>,
    /// While journaled, the ids of the send queues' jobs that have an
    /// image (and perhaps of some done since), in order: a snapshot walks
    /// them with a cursor, a slice at a time (the forwarder keeps its jobs
    /// in a hash map, which has no order a walk could go on from). Kept
    /// from the changes journaled ([`Member::enable_journal`]).
    pub(crate) source_ids: std::collections::BTreeSet<u64>,
    /// While journaled, the jobs parked when it last looked.
    pub(crate) parking_seen: crate::durable::ParkingSeen,
    /// The jobs present at start have ids 1 to this.
    pub(crate) bundled: u64,
    /// What the first dispatch pass at time zero did, until a driver takes
    /// it ([`Member::take_start`]).
    pub(crate) start: Vec<Transition>,
    /// The jobs present at start, as submissions, until a driver takes
    /// them with the start.
    pub(crate) start_submissions: Vec<SubmissionNote>,
    /// When counters are next published.
    pub(crate) publish_clock: PublishClock,
    /// What it was built from ([`Member::build`]).
    pub(crate) config: Option<std::sync::Arc<crate::MemberConfig>>,
    /// The job history, when kept ([`Member::keep_history`]).
    pub(crate) history: Option<History>,
    /// When it was restored from its state directory, if it was
    /// ([`Member::restore`]): a history kept from then on enters the jobs
    /// held as the state directory says they stand.
    pub(crate) restored_at: Option<SimTime>,
}

/// Where a job a transition is about came from, for totals that count
/// every job once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Present at start.
    Bundled,
    /// Submitted to this cluster's local queue during the run.
    Submitted,
    /// Forwarded here from a submission cluster.
    ForwardedIn,
}

/// Where a submission to a queue goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// A local queue: the job is scheduled here.
    Local,
    /// A send queue: the forwarder decides where the job runs.
    Forward,
}

/// A submission accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Submitted {
    /// The job's id at this cluster.
    pub job_id: u64,
    /// Whether it went to the forwarder (a send queue).
    pub forwarded: bool,
}

/// Why a submission was refused.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// The scheduler refused it.
    #[error(transparent)]
    Local(#[from] mcfed_cluster::SubmitError),
    /// The forwarder refused it.
    #[error(transparent)]
    Forward(#[from] ForwardSubmitError),
    /// The journal could not make it durable: it is not acknowledged.
    #[error("the journal could not be written; the job is not acknowledged")]
    NotDurable,
}

/// `text` with its first letter in capitals.
pub(crate) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn shift(time: SimTime, millis: i64) -> SimTime {
    let shifted = i128::from(time.as_millis()) + i128::from(millis);
    SimTime::from_millis(u64::try_from(shifted.max(0)).unwrap_or(u64::MAX))
}

impl Member {
    /// A member of `node` and, for a submission cluster, `forwarder`.
    pub fn new(node: ClusterNode, forwarder: Option<ForwarderNode>) -> Self {
        Member {
            node,
            forwarder,
            skew_ms: 0,
            journal: None,
            source_ids: Default::default(),
            parking_seen: Default::default(),
            bundled: 0,
            start: Vec::new(),
            start_submissions: Vec::new(),
            publish_clock: PublishClock::default(),
            config: None,
            history: None,
            restored_at: None,
        }
    }

    /// Keeps a job history from now on (see [`crate::history`]): jobs that
    /// end are kept `clean_period` (CLEAN_PERIOD), for `bjobs -a`, `bhist`
    /// and `bacct`. The jobs the member already holds enter it as they
    /// are: pending since their submission, then the start's transitions;
    /// after a restart from the state directory, each in its state with
    /// the times the state directory kept (parked jobs too), and a note
    /// that the events before the restart are not known.
    pub fn keep_history(&mut self, clean_period: Duration) {
        if self.history.is_some() {
            return;
        }
        let mut history = History::new(clean_period);
        match self.restored_at {
            Some(at) => self.enter_restored(&mut history, at),
            None => self.enter_held(&mut history),
        }
        self.history = Some(history);
        // The start's own transitions are recorded when a driver takes
        // them; if one did already, record them now.
        let start = std::mem::take(&mut self.start);
        for transition in &start {
            self.record_transition(transition);
        }
        self.start = start;
    }

    /// The job history, if kept.
    pub fn history(&self) -> Option<&History> {
        self.history.as_ref()
    }

    /// Hands the driver what the first dispatch pass at time zero did (the
    /// jobs present at start that started, and any preemption among them),
    /// once; drivers take it before anything else, so that every job start
    /// is counted and recorded.
    pub fn take_start(&mut self, effects: &mut Effects) {
        effects.submissions.append(&mut self.start_submissions);
        let start = std::mem::take(&mut self.start);
        if start
            .iter()
            .any(|transition| transition.preempted_by.is_some())
        {
            effects
                .preemptions
                .extend(self.node.cluster().preemption_notes(&start));
        }
        effects.transitions.extend(start);
    }

    /// Where the job of `transition` came from: present at start,
    /// submitted here, or forwarded here.
    pub fn origin_of(&self, transition: &Transition) -> Origin {
        self.origin(&transition.origin, transition.job.0)
    }

    /// Where job `job` of the scheduler came from.
    pub fn job_origin(&self, job: &mcfed_cluster::Job) -> Origin {
        self.origin(&job.origin, job.id.0)
    }

    fn origin(&self, origin: &JobOrigin, id: u64) -> Origin {
        match origin {
            JobOrigin::Forwarded { .. } => Origin::ForwardedIn,
            JobOrigin::Local if id <= self.bundled => Origin::Bundled,
            JobOrigin::Local => Origin::Submitted,
        }
    }

    /// How many jobs were present at start.
    pub fn bundled_jobs(&self) -> u64 {
        self.bundled
    }

    /// Makes this member's clock run `skew_ms` milliseconds ahead of the
    /// federation's (behind when negative).
    pub fn set_clock_skew(&mut self, skew_ms: i64) {
        self.skew_ms = skew_ms;
    }

    /// This member's clock at federation time `now`.
    pub fn local_time(&self, now: SimTime) -> SimTime {
        shift(now, self.skew_ms)
    }

    /// What the member was built from (none for one put together by
    /// hand with [`Member::new`]).
    pub fn config(&self) -> Option<&crate::MemberConfig> {
        self.config.as_deref()
    }

    /// The cluster's name.
    pub fn name(&self) -> &ClusterName {
        self.node.name()
    }

    /// The execution side, for inspection.
    pub fn node(&self) -> &ClusterNode {
        &self.node
    }

    /// The scheduler, for inspection.
    pub fn cluster(&self) -> &Cluster {
        self.node.cluster()
    }

    /// The submission side, for inspection.
    pub fn forwarder(&self) -> Option<&ForwarderNode> {
        self.forwarder.as_ref()
    }

    /// This member's hello: its name and the static facts of its receive
    /// queues (incarnation 0, as in-process). Cluster processes send the
    /// same facts in their transport's hello.
    pub fn hello(&self) -> Hello {
        Hello::new(self.name().clone()).with_queues(self.cluster().queue_facts())
    }

    /// Meets `from` in-process at `now`: its hello's static facts reach
    /// the forwarder, as they do when a process connects. In-process
    /// connections are made once, at time zero, and never lost, so there
    /// is nothing to bring in step (no job list is exchanged).
    pub fn meet(&mut self, now: SimTime, from: &ClusterName, hello: &Hello) {
        let local = self.local_time(now);
        if let Some(forwarder) = &mut self.forwarder {
            forwarder.learn_facts(local, from, hello);
        }
    }

    /// Where a job submitted to `queue` goes: to the forwarder for a send
    /// queue, to the scheduler otherwise.
    pub fn route(&self, queue: &str) -> Route {
        match &self.forwarder {
            Some(forwarder) if forwarder.is_send_queue(queue) => Route::Forward,
            _ => Route::Local,
        }
    }

    /// Submits a job to `queue` (a local queue or a send queue); the
    /// submission, taken or refused, is noted in `effects`.
    pub fn submit(
        &mut self,
        now: SimTime,
        queue: &str,
        spec: JobSpec,
        effects: &mut Effects,
    ) -> Result<Submitted, SubmitError> {
        self.submit_shared(now, &std::sync::Arc::from(queue), spec, effects)
    }

    /// [`Member::submit`] with the queue's name already shared (a
    /// workload's jobs name a few queues): the note of the submission
    /// shares it instead of copying it per job.
    pub fn submit_shared(
        &mut self,
        now: SimTime,
        queue: &std::sync::Arc<str>,
        spec: JobSpec,
        effects: &mut Effects,
    ) -> Result<Submitted, SubmitError> {
        let name = std::sync::Arc::clone(&spec.name);
        let submitted = self.submit_spec(now, queue, spec);
        effects.submissions.push(SubmissionNote {
            name,
            queue: std::sync::Arc::clone(queue),
            bundled: false,
            outcome: match &submitted {
                Ok(submitted) => Ok(*submitted),
                Err(error) => Err(error.to_string()),
            },
        });
        submitted
    }

    fn submit_spec(
        &mut self,
        now: SimTime,
        queue: &str,
        spec: JobSpec,
    ) -> Result<Submitted, SubmitError> {
        let local = self.local_time(now);
        let submitted = match (self.route(queue), &mut self.forwarder) {
            (Route::Forward, Some(forwarder)) => {
                // The submission cluster's MAX_USER_PRIORITY bounds `-sp`,
                // whichever queue the job goes to.
                if let Some(priority) = spec.user_priority() {
                    self.node
                        .cluster()
                        .check_user_priority(priority)
                        .map_err(mcfed_cluster::SubmitError::UserPriority)?;
                }
                self.node.cluster().check_shares(queue, &spec.user)?;
                self.node
                    .cluster()
                    .check_not_forwarding_reservation(queue, &spec)?;
                let id = self.node.take_job_id().0;
                Submitted {
                    job_id: forwarder.submit_as(local, id, queue, spec)?,
                    forwarded: true,
                }
            }
            _ => Submitted {
                job_id: self.node.submit(now, queue, spec)?.0,
                forwarded: false,
            },
        };
        if self.history.is_some() {
            self.record_submission(now, queue, submitted);
        }
        self.note_changes(&[]);
        Ok(submitted)
    }

    /// Takes an envelope from a peer: messages about forwarded jobs and
    /// counters go to the forwarder, jobs and recalls to the scheduler, a
    /// hello to both (the scheduler learns that a submission cluster
    /// restarted, the forwarder that an execution cluster did).
    pub fn receive(&mut self, now: SimTime, envelope: Envelope, effects: &mut Effects) {
        let Envelope { from, message, .. } = envelope;
        // How long a message stamped with its sender's time took to come
        // (faults, or a driver on real time, delay it).
        let stamped = match &message {
            Message::CounterUpdate(update) => Some(update.taken_at),
            Message::JobStatus(status) => Some(status.at),
            _ => None,
        };
        if let Some(sent) = stamped {
            let delay = self.local_time(now).saturating_since(sent);
            effects.delivery_delay = effects.delivery_delay.max(delay);
        }
        match message {
            Message::Hello(_) | Message::Resume(_) => {
                if let Message::Resume(resume) = &message {
                    self.note_lineage(&from, resume.lineage);
                }
                if let Some(forwarder) = &mut self.forwarder {
                    forwarder.handle(shift(now, self.skew_ms), &from, message.clone());
                }
                self.hand_to_scheduler(now, &from, message, effects);
            }
            Message::JobControl(control) => self.control_from(now, &from, &control, effects),
            Message::JobControlReply(reply) => self.control_reply(now, &from, reply, effects),
            message if message.is_for_forwarder() => {
                self.hand_to_forwarder(now, &from, message, effects);
            }
            message => {
                let ends = self.ends_a_sync_can_forget(&from, &message);
                self.hand_to_scheduler(now, &from, message, effects);
                self.note_forgotten_ends(&from, ends);
            }
        }
        self.note_changes(&[]);
    }

    /// Gives the scheduler a message from `from`; the history follows the
    /// jobs it took or gave back.
    fn hand_to_scheduler(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        message: Message,
        effects: &mut Effects,
    ) {
        // A forward this cluster did not hold before and holds after was
        // accepted: noted once, for the figures that count forwarded jobs.
        let forward = match &message {
            Message::JobForward(forward)
                if self.node.forwarded_job(from, forward.source_job).is_none() =>
            {
                Some((
                    forward.source_job,
                    forward.queue.clone(),
                    forward.send_queue.clone(),
                ))
            }
            _ => None,
        };
        let recorded = match (&message, self.history.is_some()) {
            (Message::JobForward(forward), true) => Some(forward.clone()),
            _ => None,
        };
        let sent_back = crate::observe::SentBack::by(&self.node, from, &message);
        self.node.handle(now, from, message, &mut effects.envelopes);
        if let Some((source_job, queue, send_queue)) = forward {
            if let Some(id) = self.node.forwarded_job(from, source_job) {
                effects.forwarded_in.push(ForwardedIn {
                    job_id: id.0,
                    queue,
                    from: from.clone(),
                    send_queue,
                    source_job,
                });
            }
        }
        if let Some(history) = &mut self.history {
            match recorded {
                Some(forward) => {
                    if let Some(id) = self.node.forwarded_job(from, forward.source_job) {
                        let origin = RecordOrigin::ForwardedIn {
                            from: from.clone(),
                            source_job: forward.source_job,
                        };
                        history.submitted(
                            now,
                            id.0,
                            forward.queue.as_str(),
                            &forward.spec,
                            origin,
                            forward.submitted_at,
                        );
                    }
                }
                None => crate::observe::gone_back(history, &self.node, from, sent_back, now),
            }
        }
    }

    /// The link to peer `peer` went down or came up at `now` (a driver
    /// that knows its links says so): a submission cluster's forwarder
    /// counts an execution cluster whose link is down as unreachable; an
    /// execution cluster holds back the pending jobs of a submission
    /// cluster whose link is down until its next sync.
    pub fn link(&mut self, now: SimTime, peer: &ClusterName, up: bool) {
        let local = self.local_time(now);
        if let Some(forwarder) = &mut self.forwarder {
            forwarder.link(peer, up, local);
        }
        self.node.link(peer, up);
        self.note_changes(&[]);
    }

    fn hand_to_forwarder(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        message: Message,
        effects: &mut Effects,
    ) {
        let local = self.local_time(now);
        let Some(forwarder) = &mut self.forwarder else {
            tracing::debug!(cluster = %self.node.name(), kind = message.kind(), "no forwarder for the message");
            return;
        };
        let before = forwarder.view().applied_seq(from);
        let handled = forwarder.handle(local, from, message);
        let name = |source_job: u64| {
            forwarder
                .job(source_job)
                .map(|job| job.spec.name.clone())
                .unwrap_or_else(|| "".into())
        };
        let notice = |source_job, kind, reason| JobNotice {
            source_job,
            name: name(source_job),
            from: from.clone(),
            kind,
            reason,
        };
        match handled {
            Handled::Update(_) => {
                // Checked on the view's sequence numbers, independently of
                // the view's own verdict.
                let after = forwarder.view().applied_seq(from);
                if after != before {
                    if let Some(journal) = &mut self.journal {
                        let remote = forwarder
                            .remote_images()
                            .into_iter()
                            .find(|remote| &remote.cluster == from);
                        journal.extend(remote.map(crate::JournalRecord::Remote));
                    }
                }
                match (before, after) {
                    (Some(before), Some(after)) if after == before => effects.updates.ignored += 1,
                    (Some(before), Some(after)) if after < before => {
                        effects.updates.regressions += 1
                    }
                    (_, Some(_)) => effects.updates.applied += 1,
                    _ => {}
                }
            }
            Handled::Accepted { source_job } => {
                if let Some(history) = &mut self.history {
                    let dest = forwarder.job(source_job).and_then(|job| job.dest_job());
                    history.accepted(source_job, now, dest);
                }
                effects
                    .notices
                    .push(notice(source_job, NoticeKind::Accepted, None))
            }
            Handled::CameBack {
                source_job,
                how,
                reason,
            } => {
                if let Some(history) = &mut self.history {
                    let text = format!("{} by <{from}>: {reason}; pending again", how.as_str());
                    history.enter(source_job, now, "PEND", capitalised(&text));
                }
                effects
                    .notices
                    .push(notice(source_job, NoticeKind::CameBack(how), Some(reason)))
            }
            Handled::Status { source_job, event } => {
                if let Some(history) = &mut self.history {
                    history.remote(source_job, now, from, event);
                }
            }
            Handled::KilledOnReturn { source_job, name } => {
                // The kill crossed it on its way back: killed here.
                let reason = format!(
                    "killed by bkill: it came back from <{from}> after the kill was sent there"
                );
                if let Some(history) = &mut self.history {
                    history.note(source_job, now, capitalised(&reason));
                }
                effects.notices.push(JobNotice {
                    source_job,
                    name,
                    from: self.node.name().clone(),
                    kind: NoticeKind::Control(JobEvent::Killed),
                    reason: Some(reason),
                });
            }
            Handled::Nothing | Handled::Hello { .. } | Handled::Resumed { .. } => {}
        }
    }

    /// Moves the scheduler to `now`: finishes and dispatches jobs, tells
    /// submission clusters about their jobs.
    pub fn advance(&mut self, now: SimTime, effects: &mut Effects) {
        let first = effects.transitions.len();
        self.node
            .advance(now, &mut effects.envelopes, &mut effects.transitions);
        let made = &effects.transitions[first..];
        if made
            .iter()
            .any(|transition| transition.preempted_by.is_some())
        {
            effects
                .preemptions
                .extend(self.node.cluster().preemption_notes(made));
        }
        if self.history.is_some() {
            self.record_transitions(&effects.transitions[first..]);
            if let Some(history) = &mut self.history {
                history.clean(now);
            }
        }
        if self.journal.is_some() {
            self.note_changes(&effects.transitions[first..]);
        }
    }

    /// Whether a forwarding session is due at `now` (jobs to decide,
    /// replies to send, a recall's time reached).
    pub fn session_due(&self, now: SimTime) -> bool {
        let local = self.local_time(now);
        self.forwarder
            .as_ref()
            .is_some_and(|forwarder| forwarder.needs_session_at(local))
    }

    /// Runs a forwarding session at `now`: decides every waiting job, sends
    /// forwards, recalls and replies, and records the decisions. A
    /// FAIRSHARE send queue's jobs go in the order of their users' dynamic
    /// priorities, which the scheduler computes from the send queue's
    /// shares and factors and the forwarder's forwarded slots; an APS send
    /// queue's in the order of their APS values, which the scheduler
    /// computes by the send queue's APS_PRIORITY; a forwarded job carries
    /// its JPRIORITY here (`order`).
    pub fn session(&mut self, now: SimTime, effects: &mut Effects) {
        let local = self.local_time(now);
        if let Some(forwarder) = &mut self.forwarder {
            let first = effects.decisions.len();
            let order = crate::order::ClusterOrder {
                cluster: self.node.cluster(),
                now,
            };
            forwarder.schedule_with(local, &mut effects.envelopes, &order);
            effects.decisions.append(&mut forwarder.take_entries());
            if self.history.is_some() {
                self.record_decisions(now, first, effects);
            }
        }
        self.note_changes(&[]);
    }

    /// Advances the scheduler, then runs a forwarding session if one is
    /// due: what a driver does when the member wakes, unless it must fetch
    /// the oracle's truth between the two ([`Member::wants_truth`]).
    pub fn step(&mut self, now: SimTime, effects: &mut Effects) {
        self.advance(now, effects);
        if self.session_due(now) {
            self.session(now, effects);
        }
    }

    /// The decision records of `entries` (rendering is costly: drivers that
    /// only count decisions skip it).
    pub fn render(&self, entries: &[DecisionEntry]) -> Vec<DecisionRecord> {
        match &self.forwarder {
            Some(forwarder) => entries
                .iter()
                .map(|entry| forwarder.render(entry))
                .collect(),
            None => Vec::new(),
        }
    }

    /// MC_PLUGIN_UPDATE_INTERVAL, when this member publishes counters (it
    /// has one, and some submission cluster collects them: seed 004,
    /// "information is sent by each execution cluster when
    /// MC_PLUGIN_UPDATE_INTERVAL ... is defined, and the submission cluster
    /// is collecting queue information").
    pub fn update_interval(&self) -> Option<Duration> {
        self.node
            .cluster()
            .update_interval()
            .filter(|_| self.node.has_collectors())
    }

    /// When this member next publishes its counters, in federation time
    /// (`None`: it publishes none). Drivers publish with
    /// [`Member::publish_due`] at this time, after everything else that
    /// happens at the same instant, so an update reflects the instant.
    pub fn next_publish(&self) -> Option<SimTime> {
        self.publish_clock.next(self.update_interval()?)
    }

    /// Publishes the counters if a round is due at `now` (the schedule of
    /// [`crate::publish`]); whether it did.
    pub fn publish_due(&mut self, now: SimTime, effects: &mut Effects) -> bool {
        let due = self
            .update_interval()
            .is_some_and(|interval| self.publish_clock.take(now, interval));
        if due {
            self.publish(now, effects);
        }
        due
    }

    /// Lets the round due at `now` pass unsent (the cluster is down: it
    /// sends nothing, and its schedule goes on).
    pub fn skip_publish(&mut self, now: SimTime) {
        if let Some(interval) = self.update_interval() {
            self.publish_clock.take(now, interval);
        }
    }

    /// Sends a counter update to every subscribing submission cluster now,
    /// outside the schedule (drivers use [`Member::publish_due`]).
    pub fn publish(&mut self, now: SimTime, effects: &mut Effects) {
        effects.updates.backlog_overflows += self.node.cluster().backlog_overflows() as u64;
        let first = effects.envelopes.len();
        self.node
            .publish_counters(now, self.local_time(now), &mut effects.envelopes);
        effects.updates.sent += (effects.envelopes.len() - first) as u64;
        if let Some(journal) = &mut self.journal {
            journal.push(crate::JournalRecord::Published {
                seq: self.node.update_seq(),
            });
        }
    }

    /// When this member next needs to be woken ([`next_wake`]), in
    /// federation time.
    pub fn next_wake(&mut self, now: SimTime) -> Option<SimTime> {
        let skew = self.skew_ms;
        let pending = Pending {
            scheduler_now: self.node.needs_advance(),
            scheduler_at: self.node.next_event_time(),
            forwarder_now: self
                .forwarder
                .as_ref()
                .is_some_and(ForwarderNode::needs_session),
            // The forwarder's timers are on this member's clock.
            forwarder_at: self
                .forwarder
                .as_ref()
                .and_then(ForwarderNode::next_event_time)
                .map(|at| shift(at, -skew)),
        };
        next_wake(now, pending)
    }

    /// Whether the forwarder judges its decisions by the oracle, and so
    /// wants the true counters of its execution clusters before each
    /// session ([`Member::refresh_oracle`]).
    pub fn wants_truth(&self) -> bool {
        self.forwarder
            .as_ref()
            .is_some_and(ForwarderNode::has_oracle)
    }

    /// Judges every decision from now on by the oracle.
    pub fn enable_oracle(&mut self) {
        if let Some(forwarder) = &mut self.forwarder {
            forwarder.enable_oracle();
        }
    }

    /// The execution clusters the forwarder sends to.
    pub fn remote_clusters(&self) -> Vec<ClusterName> {
        self.forwarder
            .as_ref()
            .map(|forwarder| forwarder.remote_clusters().cloned().collect())
            .unwrap_or_default()
    }

    /// Feeds the oracle the true counters of one execution cluster.
    pub fn refresh_oracle(&mut self, truth: &CounterUpdate) {
        if let Some(forwarder) = &mut self.forwarder {
            forwarder.refresh_oracle(truth);
        }
    }

    /// The true counters `receiver` would get from this cluster now,
    /// numbered `seq` (the oracle's truth; sends nothing).
    pub fn true_counters(
        &self,
        receiver: &ClusterName,
        seq: u64,
        now: SimTime,
    ) -> Option<CounterUpdate> {
        self.node
            .true_counters(receiver, seq, now, self.local_time(now))
    }
}

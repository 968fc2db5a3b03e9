//! What a member writes in its job history ([`crate::history`]) as its
//! inputs produce effects: the scheduler's transitions, the forwarder's
//! decisions, and the jobs forwarded here that went back.

use std::time::Duration;

use mcfed_cluster::{ClusterNode, ImageState, Job, JobId, JobImage, JobOrigin, Transition};
use mcfed_forwarder::node::SourceJob;
use mcfed_forwarder::{ForwarderNode, OutcomeKind, SourceState};
use mcfed_protocol::{ClusterName, JobRecall, JobWithdraw, Message, SimTime};

use crate::effects::Effects;
use crate::history::{ForwardRecord, GONE, HeldJob, History, RecordOrigin, origin_of};
use crate::member::{Member, Submitted};

impl Member {
    /// Enters the jobs held in `history` as just submitted (the start's
    /// transitions, recorded next, move them on).
    pub(crate) fn enter_held(&self, history: &mut History) {
        for job in self.node.cluster().jobs() {
            let origin = origin_of(&job.origin, job.id.0 <= self.bundled);
            let queue = self.node.cluster().queue_config(job.queue).name.as_str();
            history.submitted(
                job.submitted_at,
                job.id.0,
                queue,
                &job.spec,
                origin,
                job.first_submitted_at,
            );
        }
        if let Some(forwarder) = &self.forwarder {
            for job in forwarder.jobs() {
                let queue = forwarder.send_queue_name(job.send_queue_index()).as_str();
                history.submitted(
                    job.submitted_at,
                    job.id,
                    queue,
                    &job.spec,
                    RecordOrigin::Sent,
                    job.submitted_at,
                );
            }
        }
    }

    /// Enters the jobs held in `history` as they stand, for a member
    /// restored from its state directory at `at`: the scheduler's, those
    /// parked until their submission cluster's sync, and the send
    /// queues'. One pass over them.
    pub(crate) fn enter_restored(&self, history: &mut History, at: SimTime) {
        for job in self.node.cluster().jobs() {
            history.restored(self.scheduler_job(job, at), at);
        }
        for image in self.node.parked_jobs() {
            history.restored(self.parked_job(image, at), at);
        }
        if let Some(forwarder) = &self.forwarder {
            for job in forwarder.jobs() {
                history.restored(sent_job(forwarder, job), at);
            }
        }
    }

    /// What a job of the scheduler says of itself at `at`.
    fn scheduler_job<'a>(&'a self, job: &'a Job, at: SimTime) -> HeldJob<'a> {
        let cluster = self.node.cluster();
        let state = job.state.as_str();
        let since = match state {
            "RUN" => Some(job.running_since),
            _ => pending_since(state, job.started_at, job.submitted_at, job.pended(at), at),
        };
        let exec = job
            .placement
            .iter()
            .map(|place| format!("{}*{}", place.slots, cluster.host_name(place.host)));
        HeldJob {
            id: job.id.0,
            queue: cluster.queue_config(job.queue).name.as_str(),
            spec: &job.spec,
            origin: origin_of(&job.origin, job.id.0 <= self.bundled),
            submitted_at: job.submitted_at,
            first_submitted_at: job.first_submitted_at,
            state,
            since,
            started_at: job.started_at,
            exec: joined(exec),
            forwarded: None,
        }
    }

    /// What a job parked at `at` (held back until its submission cluster's
    /// sync) says of itself.
    fn parked_job<'a>(&self, image: &'a JobImage, at: SimTime) -> HeldJob<'a> {
        let state = match image.state {
            ImageState::Pending => "PEND",
            ImageState::Running => "RUN",
            ImageState::Suspended => "SSUSP",
            ImageState::Stopped | ImageState::StoppedSuspended => "USUSP",
            ImageState::Held => "PSUSP",
        };
        let pended = match image.state {
            ImageState::Pending => at.as_millis().saturating_sub(image.pend_clock),
            _ => image.pend_clock,
        };
        let since = match state {
            "RUN" => Some(image.running_since),
            _ => pending_since(
                state,
                image.started_at,
                image.submitted_at,
                Duration::from_millis(pended),
                at,
            ),
        };
        let origin = match &image.forwarded_from {
            Some((from, source_job)) => RecordOrigin::ForwardedIn {
                from: from.clone(),
                source_job: *source_job,
            },
            None => origin_of(&JobOrigin::Local, image.id <= self.bundled),
        };
        let exec = image
            .placement
            .iter()
            .map(|(host, slots)| format!("{slots}*{host}"));
        HeldJob {
            id: image.id,
            queue: image.queue.as_str(),
            spec: &image.spec,
            origin,
            submitted_at: image.submitted_at,
            first_submitted_at: image.first_submitted_at,
            state,
            since,
            started_at: image.started_at,
            exec: joined(exec),
            forwarded: None,
        }
    }

    /// Records a job just submitted to `queue` in the history (its spec
    /// read from the half that took it, so a member without a history
    /// copies nothing).
    pub(crate) fn record_submission(&mut self, now: SimTime, queue: &str, submitted: Submitted) {
        let Some(history) = &mut self.history else {
            return;
        };
        let spec = match submitted.forwarded {
            true => self
                .forwarder
                .as_ref()
                .and_then(|forwarder| forwarder.job(submitted.job_id))
                .map(|job| &job.spec),
            false => self
                .node
                .cluster()
                .job(mcfed_cluster::JobId(submitted.job_id))
                .map(|job| &job.spec),
        };
        let origin = match submitted.forwarded {
            true => RecordOrigin::Sent,
            false => RecordOrigin::Submitted,
        };
        if let Some(spec) = spec {
            history.submitted(now, submitted.job_id, queue, spec, origin, now);
        }
    }

    /// Records the scheduler's `transitions` in the history.
    pub(crate) fn record_transitions(&mut self, transitions: &[Transition]) {
        for transition in transitions {
            self.record_transition(transition);
        }
    }

    /// Records one transition of the scheduler in the history.
    pub(crate) fn record_transition(&mut self, transition: &Transition) {
        if let Some(history) = &mut self.history {
            history.transition(transition, self.node.cluster());
        }
    }

    /// Records the forwarding decisions from index `first` of `effects` in
    /// the history.
    pub(crate) fn record_decisions(&mut self, now: SimTime, first: usize, effects: &Effects) {
        let (Some(history), Some(forwarder)) = (&mut self.history, &self.forwarder) else {
            return;
        };
        for entry in &effects.decisions[first..] {
            let record = forwarder.render(entry);
            match (record.outcome, &record.target) {
                (OutcomeKind::Forwarded, Some(target)) => {
                    history.forwarded(entry.job_id, now, target, entry.attempt + 1, &record.reason)
                }
                _ => history.note(
                    entry.job_id,
                    now,
                    format!("Pending at the submission cluster: {}", record.reason),
                ),
            }
        }
    }
}

/// Which jobs forwarded here a message from their submission cluster can
/// send back: none (a hello, a forward), the one a recall or withdrawal
/// names, or any (a sync, a resume, anything else).
pub(crate) enum SentBack {
    None,
    One(u64),
    Any,
}

impl SentBack {
    /// What `message` from `from` can send back, read before the
    /// scheduler takes it.
    pub(crate) fn by(node: &ClusterNode, from: &ClusterName, message: &Message) -> SentBack {
        match message {
            Message::Hello(_) | Message::JobForward(_) => SentBack::None,
            Message::JobRecall(JobRecall { source_job, .. })
            | Message::JobWithdraw(JobWithdraw { source_job, .. }) => node
                .forwarded_job(from, *source_job)
                .map_or(SentBack::None, |id| SentBack::One(id.0)),
            _ => SentBack::Any,
        }
    }
}

/// The jobs forwarded here from `from` (those `scope` names) that this
/// cluster no longer holds, in its scheduler or parked (returned on a
/// recall, withdrawn after a sync or a restart), left it at `now` without
/// ending here.
pub(crate) fn gone_back(
    history: &mut History,
    node: &ClusterNode,
    from: &ClusterName,
    scope: SentBack,
    now: SimTime,
) {
    let candidates: Vec<u64> = match scope {
        SentBack::None => return,
        SentBack::One(id) => vec![id],
        // A sync or a resume: the jobs `from` forwarded here that have
        // not ended (an index the history keeps, not a walk of it all).
        SentBack::Any => history.live_forwarded_from(from),
    };
    // A parked job is still held here: it waits for `from`'s sync.
    let held = |id: u64| node.cluster().job(JobId(id)).is_some() || node.is_parked(from, JobId(id));
    let gone: Vec<u64> = candidates
        .into_iter()
        .filter(|id| {
            history.job(*id).is_some_and(|record| {
                !record.has_ended()
                    && matches!(&record.origin, RecordOrigin::ForwardedIn { from: sender, .. } if sender == from)
            }) && !held(*id)
        })
        .collect();
    for id in gone {
        history.enter(
            id,
            now,
            GONE,
            format!("Sent back to cluster <{from}> (recalled or withdrawn)"),
        );
    }
}

/// `Some(submitted_at)` when a job in `state` at `at` is known to have
/// pended since its submission: pending, never started, and its pending
/// time (`pended`, which a hold does not count) all the time since.
fn pending_since(
    state: &str,
    started_at: Option<SimTime>,
    submitted_at: SimTime,
    pended: Duration,
    at: SimTime,
) -> Option<SimTime> {
    (state == "PEND" && started_at.is_none() && pended == at.saturating_since(submitted_at))
        .then_some(submitted_at)
}

/// Hosts as the history shows them (`2*h1 1*h2`), or none.
fn joined(hosts: impl Iterator<Item = String>) -> Option<String> {
    let text = hosts.collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

/// What a send queue's job says of itself: its state and its last
/// forward. When it started, or entered its state, the forwarder does not
/// keep.
fn sent_job<'a>(forwarder: &'a ForwarderNode, job: &'a SourceJob) -> HeldJob<'a> {
    let view = forwarder.view();
    let running = matches!(
        job.state,
        SourceState::Running { .. } | SourceState::Suspended { .. } | SourceState::Stopped { .. }
    );
    let target = job.remote_queue().or(job.previous_targets.last().copied());
    HeldJob {
        id: job.id,
        queue: forwarder.send_queue_name(job.send_queue_index()).as_str(),
        spec: &job.spec,
        origin: RecordOrigin::Sent,
        submitted_at: job.submitted_at,
        first_submitted_at: job.submitted_at,
        state: job.state.as_str(),
        since: None,
        started_at: None,
        exec: job
            .remote_queue()
            .filter(|_| running)
            .map(|to| view.queue_ref(to).cluster.to_string()),
        forwarded: target.map(|to| ForwardRecord {
            target: view.queue_ref(to).to_string(),
            dest_job: job.dest_job(),
            at: job.forwarded_at,
            forwards: job.forwards,
        }),
    }
}

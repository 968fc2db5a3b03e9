//! What a member writes in its job history ([`crate::history`]) as its
//! inputs produce effects: the scheduler's transitions, the forwarder's
//! decisions, and the jobs forwarded here that went back.

use mcfed_cluster::{ClusterNode, JobId, Transition};
use mcfed_forwarder::OutcomeKind;
use mcfed_protocol::{ClusterName, JobRecall, JobWithdraw, Message, SimTime};

use crate::effects::Effects;
use crate::history::{GONE, History, RecordOrigin};
use crate::member::{Member, Submitted};

impl Member {
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

//! What surrounds the member in a cluster process: the outbox actor that
//! hands what the member sends to the transport, and the observer that
//! records what it did (the run's recorder) and prints decisions live.

use std::sync::Arc;

use actix::prelude::*;
use mcfed_actors::{Deliver, MemberActor};
use mcfed_federation::{Effects, Member, NoticeKind, Observer};
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::{ClusterName, Envelope, SimTime};
use mcfed_run::RunStats;
use mcfed_run::metrics::MetricsRecorder;
use mcfed_run::recorder::SharedRecorder;
use mcfed_run::records::{EventRecord, UsageRecord};
use mcfed_run::render;
use mcfed_transport::Transport;

use super::LiveReport;

/// Sends what the actor sends through the transport (or back to the
/// actor, for a message to this cluster itself).
pub(super) struct Outbox {
    pub(super) transport: Arc<Transport>,
    pub(super) local: Option<Local>,
}

/// This process's member actor.
#[derive(Clone)]
pub(super) struct Local {
    pub(super) name: ClusterName,
    pub(super) member: Addr<MemberActor>,
}

impl Local {
    pub(super) fn deliver(&self, envelope: Envelope) {
        self.member.do_send(Deliver(envelope));
    }
}

impl Actor for Outbox {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
pub(super) struct SetLocal(pub(super) Local);

impl Handler<SetLocal> for Outbox {
    type Result = ();
    fn handle(&mut self, SetLocal(local): SetLocal, _: &mut Self::Context) {
        self.local = Some(local);
    }
}

impl Handler<Deliver> for Outbox {
    type Result = ();
    fn handle(&mut self, Deliver(envelope): Deliver, _: &mut Self::Context) {
        if let Some(local) = self
            .local
            .as_ref()
            .filter(|local| local.name == envelope.to)
        {
            local.deliver(envelope);
            return;
        }
        match self.transport.send(envelope) {
            Ok(()) => {}
            // The process is stopping: nothing is lost that matters.
            Err(error @ mcfed_transport::TransportError::Closed) => {
                tracing::debug!(%error, "message dropped at shutdown");
            }
            Err(error) => tracing::warn!(%error, "message dropped"),
        }
    }
}

/// The process's observer: the run's recorder (decisions, job events,
/// usage samples, metrics and counts, kept for the admin channel) and, if
/// asked, each new decision record printed as it is made.
pub(super) struct LiveObserver {
    pub(super) recorder: SharedRecorder,
    pub(super) report: LiveReport,
    /// Admin calls waiting for answers to job control commands.
    pub(super) waiters: ControlWaiters,
    /// Keep only about this many of the newest decision records (a
    /// process not keeping its run's record for `mcfed launch`).
    pub(super) keep_decisions: Option<usize>,
}

impl Observer for LiveObserver {
    fn observe(&mut self, member: &Member, at: SimTime, effects: &Effects) {
        self.waiters.answer(effects);
        let mut recorder = self.recorder.lock();
        let before = recorder.output().decisions.len();
        recorder.observe(member, at, effects);
        if self.report != LiveReport::None {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            for record in &recorder.output().decisions[before..] {
                let line = match self.report {
                    LiveReport::Json => render::decision_json(record).unwrap_or_default(),
                    _ => render::decision_text(record),
                };
                let _ = writeln!(out, "{line}");
            }
            let _ = out.flush();
        }
        if let Some(keep) = self.keep_decisions {
            recorder.keep_newest_decisions(keep);
        }
    }

    fn sample(&mut self, member: &Member, at: SimTime) {
        self.recorder.lock().sample(member, at);
    }

    fn late(&mut self, member: &Member, by: std::time::Duration) {
        self.recorder.lock().late(member, by);
    }
}

/// What the recorder holds, from decision record `from` on (a process's
/// answer to [`mcfed_admin::AdminRequest::Records`]).
pub(super) struct Collected {
    pub(super) records: Vec<DecisionRecord>,
    /// The index after the last record: how many were made.
    pub(super) total: usize,
    pub(super) events: Vec<EventRecord>,
    pub(super) usage: Vec<UsageRecord>,
    pub(super) metrics: MetricsRecorder,
    pub(super) stats: RunStats,
}

/// What `recorder` holds, from decision record `from` on.
pub(super) fn records_from(recorder: &SharedRecorder, from: usize) -> Collected {
    let recorder = recorder.lock();
    let output = recorder.output();
    let dropped = recorder.decisions_dropped();
    Collected {
        records: output
            .decisions
            .get(from.saturating_sub(dropped)..)
            .map(<[_]>::to_vec)
            .unwrap_or_default(),
        total: dropped + output.decisions.len(),
        events: output.events.clone(),
        usage: output.usage.clone(),
        metrics: recorder.metrics().clone(),
        stats: *recorder.stats(),
    }
}

/// The decision records from an index on, at most the newest `limit` of
/// them, and how many there are in all (for the live page, which asks for
/// the new ones only).
pub(super) fn decisions_from(
    recorder: &SharedRecorder,
    from: usize,
    limit: usize,
) -> (Vec<DecisionRecord>, usize) {
    let recorder = recorder.lock();
    let dropped = recorder.decisions_dropped();
    let decisions = &recorder.output().decisions;
    let total = dropped + decisions.len();
    let from = from.max(total.saturating_sub(limit)).max(dropped);
    (
        decisions
            .get(from - dropped..)
            .map(<[_]>::to_vec)
            .unwrap_or_default(),
        total,
    )
}

/// Admin calls waiting for an execution cluster's answer to a job control
/// command sent there, by the job's id at this (its submission) cluster.
#[derive(Clone, Default)]
pub(super) struct ControlWaiters(
    Arc<
        std::sync::Mutex<
            rustc_hash::FxHashMap<u64, Vec<tokio::sync::oneshot::Sender<ControlAnswer>>>,
        >,
    >,
);

/// An execution cluster's answer to a job control command: whether it
/// was done, and what it said.
pub(super) type ControlAnswer = (bool, String);

impl ControlWaiters {
    /// Waits for the answer about job `source_job` (register it before the
    /// command can be answered: inside the member's actor, as it is sent).
    pub(super) fn wait_for(
        &self,
        source_job: u64,
    ) -> tokio::sync::oneshot::Receiver<ControlAnswer> {
        let (tell, answer) = tokio::sync::oneshot::channel();
        if let Ok(mut waiting) = self.0.lock() {
            waiting.entry(source_job).or_default().push(tell);
        }
        answer
    }

    /// Hands the answers among `effects` to whoever waits for them.
    fn answer(&self, effects: &Effects) {
        for notice in &effects.notices {
            let NoticeKind::ControlReply { done } = notice.kind else {
                continue;
            };
            let waiting = self
                .0
                .lock()
                .ok()
                .and_then(|mut waiting| waiting.remove(&notice.source_job));
            for tell in waiting.into_iter().flatten() {
                let _ = tell.send((done, notice.reason.clone().unwrap_or_default()));
            }
        }
    }
}

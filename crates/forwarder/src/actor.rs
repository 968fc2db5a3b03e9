//! The actix actor around a [`ForwarderNode`].
//!
//! It applies counter updates and replies as they arrive, and runs one
//! forwarding session after the mailbox has been drained, so updates that
//! arrive together are all seen by the session. Forwards go to `outbox`;
//! decision records go to `records`.
//!
//! With an oracle source ([`ForwarderActor::with_truth`], a cluster process
//! with the oracle on), each session first asks it for the true counters of
//! every execution cluster ([`FetchTruth`]) and waits for the answer — the
//! mailbox waits too — then refreshes the oracle with them and runs. If
//! some did not come, the session's decisions are not judged: their
//! records carry no `oracle`.

use actix::prelude::*;
use mcfed_protocol::clock::EmulatedClock;
use mcfed_protocol::{ClusterName, CounterUpdate, Envelope, JobSpec, SimTime};

use crate::node::{ForwardSubmitError, ForwarderNode};
use crate::record::DecisionRecord;

/// Submit a job to a send queue.
#[derive(Debug, Message)]
#[rtype(result = "Result<u64, ForwardSubmitError>")]
pub struct SubmitForward {
    /// The send queue.
    pub queue: String,
    /// The job.
    pub spec: JobSpec,
}

/// Decision records from a forwarding session.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct DecisionsMade(pub Vec<DecisionRecord>);

/// Asks for the true counters of these execution clusters, right before a
/// forwarding session (the oracle's refresh in a cluster process).
#[derive(Debug, Message)]
#[rtype(result = "TruthFetched")]
pub struct FetchTruth {
    /// The execution clusters.
    pub clusters: Vec<ClusterName>,
}

/// The answer to [`FetchTruth`].
#[derive(Debug, Default)]
pub struct TruthFetched {
    /// The true counters that came, one update per cluster.
    pub updates: Vec<CounterUpdate>,
    /// Whether every cluster's came.
    pub complete: bool,
}

#[derive(Message)]
#[rtype(result = "()")]
struct Session;

/// Runs `f` with the actor's node and the current emulated time (for
/// inspection commands).
#[derive(Message)]
#[rtype(result = "R")]
pub struct Inspect<R: 'static, F: FnOnce(&ForwarderNode, SimTime) -> R + Send + 'static>(pub F);

/// A submission cluster's forwarder as an actor.
pub struct ForwarderActor {
    node: ForwarderNode,
    clock: EmulatedClock,
    outbox: Recipient<Envelope>,
    records: Recipient<DecisionsMade>,
    truth: Option<Recipient<FetchTruth>>,
    session_queued: bool,
    wakeup: Option<(SimTime, SpawnHandle)>,
    out: Vec<Envelope>,
}

impl ForwarderActor {
    /// An actor around `node`.
    pub fn new(
        node: ForwarderNode,
        clock: EmulatedClock,
        outbox: Recipient<Envelope>,
        records: Recipient<DecisionsMade>,
    ) -> Self {
        ForwarderActor {
            node,
            clock,
            outbox,
            records,
            truth: None,
            session_queued: false,
            wakeup: None,
            out: Vec::new(),
        }
    }

    /// Refreshes the oracle (when on) from `truth` before every session.
    pub fn with_truth(mut self, truth: Recipient<FetchTruth>) -> Self {
        self.truth = Some(truth);
        self
    }

    fn queue_session(&mut self, ctx: &mut Context<Self>) {
        if !self.session_queued {
            self.session_queued = true;
            ctx.notify(Session);
        }
    }
}

impl Actor for ForwarderActor {
    type Context = Context<Self>;
}

impl Handler<Session> for ForwarderActor {
    type Result = ();
    fn handle(&mut self, _: Session, ctx: &mut Self::Context) {
        let Some(truth) = self.truth.as_ref().filter(|_| self.node.has_oracle()) else {
            self.session(ctx, true);
            return;
        };
        let clusters: Vec<ClusterName> = self.node.remote_clusters().cloned().collect();
        let fetch =
            truth
                .send(FetchTruth { clusters })
                .into_actor(self)
                .map(|fetched, actor, ctx| {
                    let fetched = fetched.unwrap_or_default();
                    for update in &fetched.updates {
                        actor.node.refresh_oracle(update);
                    }
                    actor.session(ctx, fetched.complete);
                });
        // Nothing else is handled until the session has run: it sees the
        // view as it was when it was due, and the truth as just fetched.
        ctx.wait(fetch);
    }
}

impl ForwarderActor {
    /// Runs a forwarding session now; `judged`: whether the oracle has the
    /// true counters of every execution cluster for it.
    fn session(&mut self, ctx: &mut Context<Self>, judged: bool) {
        self.session_queued = false;
        let now = self.clock.now();
        self.node.schedule(now, &mut self.out);
        for envelope in self.out.drain(..) {
            self.outbox.do_send(envelope);
        }
        let mut records = self.node.take_records();
        if !judged && !records.is_empty() {
            tracing::warn!(cluster = %self.node.cluster(), at = %now, decisions = records.len(), "the true counters did not all come in time: these decisions are not judged by the oracle");
            for record in &mut records {
                record.oracle = None;
            }
        }
        if !records.is_empty() {
            self.records.do_send(DecisionsMade(records));
        }
        self.rearm_wakeup(ctx);
    }
}

impl ForwarderActor {
    /// Wakes for the next recall (MAX_RSCHED_TIME), if any.
    fn rearm_wakeup(&mut self, ctx: &mut Context<Self>) {
        let next = self.node.next_event_time();
        let current = self.wakeup.as_ref().map(|(at, _)| *at);
        if next != current {
            if let Some((_, handle)) = self.wakeup.take() {
                ctx.cancel_future(handle);
            }
            if let Some(at) = next {
                let delay = self.clock.real_delay_until(at);
                let handle = ctx.run_later(delay, |actor, ctx| {
                    actor.wakeup = None;
                    actor.queue_session(ctx);
                });
                self.wakeup = Some((at, handle));
            }
        }
    }
}

impl Handler<Envelope> for ForwarderActor {
    type Result = ();
    fn handle(&mut self, envelope: Envelope, ctx: &mut Self::Context) {
        let now = self.clock.now();
        self.node.handle(now, &envelope.from, envelope.message);
        if self.node.needs_session() {
            self.queue_session(ctx);
        }
        self.rearm_wakeup(ctx);
    }
}

impl Handler<SubmitForward> for ForwarderActor {
    type Result = Result<u64, ForwardSubmitError>;
    fn handle(&mut self, submit: SubmitForward, ctx: &mut Self::Context) -> Self::Result {
        let now = self.clock.now();
        let id = self.node.submit(now, &submit.queue, submit.spec)?;
        self.queue_session(ctx);
        Ok(id)
    }
}

impl<R: 'static, F: FnOnce(&ForwarderNode, SimTime) -> R + Send + 'static> Handler<Inspect<R, F>>
    for ForwarderActor
where
    R: actix::dev::MessageResponse<ForwarderActor, Inspect<R, F>>,
{
    type Result = R;
    fn handle(&mut self, inspect: Inspect<R, F>, _: &mut Self::Context) -> R {
        (inspect.0)(&self.node, self.clock.now())
    }
}

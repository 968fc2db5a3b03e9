//! The actix actor around a [`ForwarderNode`].
//!
//! It applies counter updates and replies as they arrive, and runs one
//! forwarding session after the mailbox has been drained, so updates that
//! arrive together are all seen by the session. Forwards go to `outbox`;
//! decision records go to `records`.

use actix::prelude::*;
use mcfed_protocol::clock::EmulatedClock;
use mcfed_protocol::{Envelope, JobSpec, SimTime};

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
            session_queued: false,
            wakeup: None,
            out: Vec::new(),
        }
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
        self.session_queued = false;
        let now = self.clock.now();
        self.node.schedule(now, &mut self.out);
        for envelope in self.out.drain(..) {
            self.outbox.do_send(envelope);
        }
        let records = self.node.take_records();
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

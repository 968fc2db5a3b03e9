//! The actix actor around a [`ClusterNode`].
//!
//! The actor owns the node and an [`EmulatedClock`]; it hands the node
//! every message that arrives, advances it once the mailbox has been drained
//! (so everything that arrived at one instant is dispatched together, as the
//! event-loop engine does), wakes itself when the next job finishes, and
//! publishes counters every MC_PLUGIN_UPDATE_INTERVAL. What the node sends
//! goes to `outbox`: a router in-process, the QUIC transport in a process.

use actix::prelude::*;
use mcfed_protocol::clock::EmulatedClock;
use mcfed_protocol::{Envelope, JobSpec, SimTime};

use crate::job::JobId;
use crate::node::ClusterNode;
use crate::scheduler::{PreemptionNote, SubmitError, Transition};

/// Submit a local job to the cluster.
#[derive(Debug, Message)]
#[rtype(result = "Result<JobId, SubmitError>")]
pub struct SubmitLocal {
    /// The queue.
    pub queue: String,
    /// The job.
    pub spec: JobSpec,
}

/// Job transitions, reported to an optional observer.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct TransitionsMade {
    /// The cluster they happened in.
    pub cluster: mcfed_protocol::ClusterName,
    /// What happened.
    pub transitions: Vec<Transition>,
    /// The preemptions among them, with the jobs' names.
    pub preemptions: Vec<PreemptionNote>,
}

/// Runs `f` with the actor's node and the current emulated time (for
/// inspection commands).
#[derive(Message)]
#[rtype(result = "R")]
pub struct Inspect<R: 'static, F: FnOnce(&ClusterNode, SimTime) -> R + Send + 'static>(pub F);

#[derive(Message)]
#[rtype(result = "()")]
struct Advance;

/// A cluster as an actor.
pub struct ClusterActor {
    node: ClusterNode,
    clock: EmulatedClock,
    outbox: Recipient<Envelope>,
    observer: Option<Recipient<TransitionsMade>>,
    advance_queued: bool,
    wakeup: Option<(SimTime, SpawnHandle)>,
    out: Vec<Envelope>,
}

impl ClusterActor {
    /// An actor around `node`, sending through `outbox`.
    pub fn new(node: ClusterNode, clock: EmulatedClock, outbox: Recipient<Envelope>) -> Self {
        ClusterActor {
            node,
            clock,
            outbox,
            observer: None,
            advance_queued: false,
            wakeup: None,
            out: Vec::new(),
        }
    }

    /// Reports every job transition to `observer`.
    pub fn with_observer(mut self, observer: Recipient<TransitionsMade>) -> Self {
        self.observer = Some(observer);
        self
    }

    fn queue_advance(&mut self, ctx: &mut Context<Self>) {
        if !self.advance_queued {
            self.advance_queued = true;
            ctx.notify(Advance);
        }
    }

    fn flush(&mut self) {
        for envelope in self.out.drain(..) {
            self.outbox.do_send(envelope);
        }
    }

    fn publish(&mut self) {
        let now = self.clock.now();
        self.node.publish_counters(now, &mut self.out);
        self.flush();
    }

    fn advance(&mut self, ctx: &mut Context<Self>) {
        let now = self.clock.now();
        let mut transitions = Vec::new();
        self.node.advance(now, &mut self.out, &mut transitions);
        self.flush();
        if let (Some(observer), false) = (&self.observer, transitions.is_empty()) {
            observer.do_send(TransitionsMade {
                cluster: self.node.name().clone(),
                preemptions: self.node.cluster().preemption_notes(&transitions),
                transitions,
            });
        }
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
                    actor.queue_advance(ctx);
                });
                self.wakeup = Some((at, handle));
            }
        }
    }
}

impl Actor for ClusterActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let (Some(interval), true) = (
            self.node.cluster().update_interval(),
            self.node.has_subscribers(),
        ) {
            // The first update comes one interval after emulated time zero
            // (not after the actor started), so processes sharing a clock
            // origin publish at the same emulated instants.
            let first = self.clock.real_delay_until(SimTime::ZERO + interval);
            ctx.run_later(first, move |actor, ctx| {
                actor.publish();
                ctx.run_interval(actor.clock.real_delay(interval), |actor, _| actor.publish());
            });
        }
        self.queue_advance(ctx);
    }
}

impl Handler<Advance> for ClusterActor {
    type Result = ();
    fn handle(&mut self, _: Advance, ctx: &mut Self::Context) {
        self.advance_queued = false;
        self.advance(ctx);
    }
}

impl Handler<Envelope> for ClusterActor {
    type Result = ();
    fn handle(&mut self, envelope: Envelope, ctx: &mut Self::Context) {
        let now = self.clock.now();
        self.node
            .handle(now, &envelope.from, envelope.message, &mut self.out);
        self.flush();
        self.queue_advance(ctx);
    }
}

impl Handler<SubmitLocal> for ClusterActor {
    type Result = Result<JobId, SubmitError>;
    fn handle(&mut self, submit: SubmitLocal, ctx: &mut Self::Context) -> Self::Result {
        let now = self.clock.now();
        let id = self.node.submit(now, &submit.queue, submit.spec)?;
        self.queue_advance(ctx);
        Ok(id)
    }
}

impl<R: 'static, F: FnOnce(&ClusterNode, SimTime) -> R + Send + 'static> Handler<Inspect<R, F>>
    for ClusterActor
where
    R: actix::dev::MessageResponse<ClusterActor, Inspect<R, F>>,
{
    type Result = R;
    fn handle(&mut self, inspect: Inspect<R, F>, _: &mut Self::Context) -> R {
        (inspect.0)(&self.node, self.clock.now())
    }
}

//! [`MemberActor`]: a federation member as an actix actor.
//!
//! The actor owns the member and an [`EmulatedClock`]. It hands the member
//! every envelope and submission that arrives and steps it once the mailbox
//! has been drained (a self-notification), so everything that arrived at
//! one instant is handled together, as in the event loop; it wakes itself
//! when the member asks ([`Member::next_wake`]) and publishes counters when
//! the member's schedule says ([`Member::next_publish`]). What the member
//! sends goes to `outbox`: the QUIC transport in a process, the actor
//! engine's mail in-process; what its inputs produced goes to its observer
//! (a run's recorder), called in place. A driven actor
//! ([`MemberActor::driven`], the in-process actor engine) steps, wakes and
//! publishes only when its driver says, in the order of
//! [`mcfed_federation::instant`].
//!
//! With a truth source ([`MemberActor::with_truth`]: a cluster process with
//! the oracle on), a due forwarding session first asks it for the true
//! counters of every execution cluster ([`FetchTruth`]) and waits — the
//! mailbox waits too — then refreshes the oracle and runs. If some did not
//! come, the session's decisions are not judged: their records carry no
//! `oracle`.

use std::sync::Arc;

use actix::prelude::*;
use mcfed_federation::{Effects, Member, Observer};
use mcfed_protocol::SimTime;

use crate::clock::EmulatedClock;
use crate::durability::Durability;
use crate::messages::{
    Apply, AskActivity, Deliver, Drive, FetchTruth, Inspect, Link, MemberActivity, NotDurable,
    Publish,
};

#[derive(Message)]
#[rtype(result = "()")]
struct Step;

/// A federation member as an actor.
pub struct MemberActor {
    member: Member,
    clock: EmulatedClock,
    outbox: Recipient<Deliver>,
    observer: Option<Box<dyn Observer + Send>>,
    truth: Option<Recipient<FetchTruth>>,
    step_queued: bool,
    wakeup: Option<(SimTime, SpawnHandle)>,
    effects: Effects,
    /// Whether a driver steps, wakes and publishes the member
    /// ([`MemberActor::driven`]: the in-process actor engine, which takes
    /// each instant in the order of [`mcfed_federation::instant`]) rather
    /// than the actor itself, on its own timers (a process). Either way the
    /// member says when.
    driven: bool,
    /// How often to report slot usage to the observer, if at all.
    usage_every: Option<std::time::Duration>,
    /// The journal, when the member is journaled.
    durability: Option<Arc<dyn Durability>>,
    /// Submissions to acknowledge with the next records made durable.
    acks: Vec<crate::durability::AfterDurable>,
}

impl MemberActor {
    /// An actor around `member`, sending through `outbox`.
    pub fn new(member: Member, clock: EmulatedClock, outbox: Recipient<Deliver>) -> Self {
        MemberActor {
            member,
            clock,
            outbox,
            observer: None,
            truth: None,
            step_queued: false,
            wakeup: None,
            effects: Effects::default(),
            driven: false,
            usage_every: None,
            durability: None,
            acks: Vec::new(),
        }
    }

    /// Journals the member through `durability`: nothing an input produced
    /// leaves the actor before its records are durable.
    pub fn with_durability(mut self, durability: Arc<dyn Durability>) -> Self {
        self.member.enable_journal();
        self.durability = Some(durability);
        self
    }

    /// Runs `ack` once the submission just made is durable: with the
    /// records of the step queued after it (so a job submitted and started
    /// at once is written once), at once without a journal.
    fn acknowledge_with_next_step(&mut self, ack: impl FnOnce() + Send + 'static) {
        match &self.durability {
            Some(_) => self.acks.push(Box::new(ack)),
            None => ack(),
        }
    }

    /// Hands the records of the last input to the journal, with `after` to
    /// run once they are durable (at once without a journal); asks for a
    /// snapshot when the journal wants one.
    fn when_durable(&mut self, after: impl FnOnce() + Send + 'static) {
        let Some(durability) = &self.durability else {
            after();
            return;
        };
        let acks = std::mem::take(&mut self.acks);
        let after = move || {
            after();
            for ack in acks {
                ack();
            }
        };
        durability.write(self.member.take_journal(), Box::new(after));
        if durability.wants_snapshot() {
            durability.snapshot(&self.member);
        }
    }

    /// Reports the slots in use to the observer at emulated time zero and
    /// every `every` after (the samples of a run's slots-in-use plot).
    pub fn with_usage_samples(mut self, every: std::time::Duration) -> Self {
        self.usage_every = Some(every).filter(|every| !every.is_zero());
        self
    }

    fn sample_usage(&mut self) {
        if let Some(observer) = &mut self.observer {
            observer.sample(&self.member, self.clock.now());
        }
    }

    /// Steps the member only when sent [`Drive`] and publishes its
    /// counters only when sent [`Publish`]: the actor arms no timer and
    /// does not step on its own after an input. For a driver that orders
    /// every instant itself (the in-process actor engine), which asks when
    /// the member next needs waking with each [`Drive`].
    pub fn driven(mut self) -> Self {
        self.driven = true;
        self
    }

    /// Reports what every input produced to `observer`.
    pub fn with_observer(mut self, observer: impl Observer + Send + 'static) -> Self {
        self.observer = Some(Box::new(observer));
        self
    }

    /// Refreshes the oracle (when on) from `truth` before every session.
    pub fn with_truth(mut self, truth: Recipient<FetchTruth>) -> Self {
        self.truth = Some(truth);
        self
    }

    fn queue_step(&mut self, ctx: &mut Context<Self>) {
        if !self.step_queued && !self.driven {
            self.step_queued = true;
            ctx.notify(Step);
        }
    }

    /// Sends the envelopes, tells the observer the rest, and empties the
    /// effects; `judged`: whether the decisions' oracle verdicts stand.
    fn flush(&mut self, judged: bool) {
        if self.durability.is_some() {
            let envelopes = std::mem::take(&mut self.effects.envelopes);
            let outbox = self.outbox.clone();
            self.when_durable(move || {
                for envelope in envelopes {
                    outbox.do_send(Deliver(envelope));
                }
            });
        }
        if let Some(observer) = &mut self.observer {
            if !judged && !self.effects.decisions.is_empty() {
                tracing::warn!(cluster = %self.member.name(), decisions = self.effects.decisions.len(), "the true counters did not all come in time: these decisions are not judged by the oracle");
                for entry in &mut self.effects.decisions {
                    entry.oracle = None;
                }
            }
            observer.observe(&self.member, self.clock.now(), &self.effects);
        }
        for envelope in self.effects.envelopes.drain(..) {
            self.outbox.do_send(Deliver(envelope));
        }
        self.effects.clear();
    }

    /// Publishes the counters if the member's schedule has a round due.
    fn publish(&mut self) {
        let now = self.clock.now();
        if self.member.publish_due(now, &mut self.effects) {
            self.flush(true);
        }
    }

    /// A timer due at emulated time `at` fired now: tells the observer how
    /// late (the emulated clock runs on real timers, which fire late on a
    /// busy machine or at a high `--speed`).
    fn late(&mut self, at: SimTime) {
        let now = self.clock.now();
        if let Some(observer) = &mut self.observer {
            observer.late(&self.member, now.saturating_since(at));
        }
    }

    /// Arms the actor's own publish timer at the member's next round.
    fn arm_publish(&mut self, ctx: &mut Context<Self>) {
        if let Some(at) = self.member.next_publish() {
            ctx.run_later(self.clock.real_delay_until(at), move |actor, ctx| {
                actor.late(at);
                actor.publish();
                actor.arm_publish(ctx);
            });
        }
    }

    /// Advances the scheduler; runs a due session, after fetching the
    /// truth when the oracle wants it.
    fn step(&mut self, ctx: &mut Context<Self>) {
        self.step_queued = false;
        let now = self.clock.now();
        self.member.advance(now, &mut self.effects);
        self.flush(true);
        if !self.member.session_due(now) {
            self.rearm(ctx);
            return;
        }
        let Some(truth) = self.truth.as_ref().filter(|_| self.member.wants_truth()) else {
            self.session(ctx, true);
            return;
        };
        let clusters = self.member.remote_clusters();
        let fetch =
            truth
                .send(FetchTruth { clusters })
                .into_actor(self)
                .map(|fetched, actor, ctx| {
                    let fetched = fetched.unwrap_or_default();
                    for update in &fetched.updates {
                        actor.member.refresh_oracle(update);
                    }
                    actor.session(ctx, fetched.complete);
                });
        // Nothing else is handled until the session has run: it sees the
        // view as it was when it was due, and the truth as just fetched.
        ctx.wait(fetch);
    }

    fn session(&mut self, ctx: &mut Context<Self>, judged: bool) {
        let now = self.clock.now();
        self.member.session(now, &mut self.effects);
        self.flush(judged);
        self.rearm(ctx);
    }

    /// Schedules the wake-up the member asks for.
    fn rearm(&mut self, ctx: &mut Context<Self>) {
        let now = self.clock.now();
        let next = self.member.next_wake(now);
        if next.is_some_and(|at| at <= now) {
            self.queue_step(ctx);
            return;
        }
        let current = self.wakeup.as_ref().map(|(at, _)| *at);
        if next == current {
            return;
        }
        if let Some((_, handle)) = self.wakeup.take() {
            ctx.cancel_future(handle);
        }
        if let Some(at) = next {
            let delay = self.clock.real_delay_until(at);
            let handle = ctx.run_later(delay, move |actor, ctx| {
                actor.wakeup = None;
                actor.late(at);
                actor.queue_step(ctx);
            });
            self.wakeup = Some((at, handle));
        }
    }
}

impl Actor for MemberActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if !self.driven {
            // On the member's grid from emulated time zero (not from when
            // the actor started), so processes sharing a clock origin
            // publish at the same emulated instants.
            self.arm_publish(ctx);
        }
        if let Some(every) = self.usage_every {
            let first = self.clock.real_delay_until(SimTime::ZERO);
            ctx.run_later(first, move |actor, ctx| {
                actor.sample_usage();
                ctx.run_interval(actor.clock.real_delay(every), |actor, _| {
                    actor.sample_usage()
                });
            });
        }
        // What the first dispatch pass did with the jobs present at start
        // is reported before anything else.
        self.member.take_start(&mut self.effects);
        self.flush(true);
        self.queue_step(ctx);
    }
}

impl Handler<Step> for MemberActor {
    type Result = ();
    fn handle(&mut self, _: Step, ctx: &mut Self::Context) {
        self.step(ctx);
    }
}

impl Handler<Drive> for MemberActor {
    type Result = Option<SimTime>;
    fn handle(&mut self, drive: Drive, _: &mut Self::Context) -> Option<SimTime> {
        let now = self.clock.now();
        match drive {
            Drive::Advance => self.member.advance(now, &mut self.effects),
            // A driven actor fetches no truth: the oracle needs the
            // event loop in-process.
            Drive::Session if self.member.session_due(now) => {
                self.member.session(now, &mut self.effects)
            }
            Drive::Session => {}
        }
        self.flush(true);
        self.member.next_wake(now)
    }
}

impl Handler<Deliver> for MemberActor {
    type Result = ();
    fn handle(&mut self, Deliver(envelope): Deliver, ctx: &mut Self::Context) {
        let now = self.clock.now();
        self.member.receive(now, envelope, &mut self.effects);
        self.flush(true);
        self.queue_step(ctx);
    }
}

impl Handler<Link> for MemberActor {
    type Result = ();
    fn handle(&mut self, link: Link, ctx: &mut Self::Context) {
        let now = self.clock.now();
        self.member.link(now, &link.peer, link.up);
        self.flush(true);
        self.queue_step(ctx);
    }
}

impl Handler<Publish> for MemberActor {
    type Result = Option<SimTime>;
    fn handle(&mut self, _: Publish, _: &mut Self::Context) -> Option<SimTime> {
        self.publish();
        self.member.next_publish()
    }
}

impl Handler<AskActivity> for MemberActor {
    type Result = MessageResult<AskActivity>;
    fn handle(&mut self, _: AskActivity, _: &mut Self::Context) -> Self::Result {
        let now = self.clock.now();
        MessageResult(MemberActivity {
            next_wake: self.member.next_wake(now),
            activity: self.member.activity(now),
        })
    }
}

impl<R, F> Handler<Apply<R, F>> for MemberActor
where
    R: Send + 'static,
    F: FnOnce(&mut Member, SimTime, &mut Effects) -> R + Send + 'static,
{
    type Result = ResponseFuture<Result<R, NotDurable>>;
    fn handle(&mut self, apply: Apply<R, F>, ctx: &mut Self::Context) -> Self::Result {
        let now = self.clock.now();
        let answer = (apply.apply)(&mut self.member, now, &mut self.effects);
        if !apply.changes {
            return Box::pin(std::future::ready(Ok(answer)));
        }
        // Answered, like a submission, once what it changed is durable.
        let (durable, wait) = tokio::sync::oneshot::channel();
        self.acknowledge_with_next_step(move || {
            let _ = durable.send(());
        });
        self.flush(true);
        self.queue_step(ctx);
        Box::pin(async move {
            wait.await.map_err(|_| NotDurable)?;
            Ok(answer)
        })
    }
}

impl<R: 'static, F: FnOnce(&Member, SimTime) -> R + Send + 'static> Handler<Inspect<R, F>>
    for MemberActor
where
    R: actix::dev::MessageResponse<MemberActor, Inspect<R, F>>,
{
    type Result = R;
    fn handle(&mut self, inspect: Inspect<R, F>, _: &mut Self::Context) -> R {
        (inspect.0)(&self.member, self.clock.now())
    }
}

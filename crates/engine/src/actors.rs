//! The actor engine: the same federation as actix actors, one
//! [`MemberActor`] per cluster, on a current-thread tokio runtime whose
//! clock is paused and advances by itself whenever every actor is idle.
//! Emulated time therefore never waits on the wall clock.
//!
//! The members are [driven](MemberActor::driven): a driver takes every
//! instant in the order of [`mcfed_federation::instant`] — the instant's
//! inputs, the members whose timers are due, then rounds of steps and of
//! the messages they sent (collected by a `Mail` actor in place of a
//! transport, and delivered after the round), then counter updates and
//! probes — awaiting each call, so it knows when an instant has settled
//! rather than guessing, and no runtime's order of running actors can make
//! it disagree with the event loop. `mcfed run --engine actors` runs it so
//! the actor shells are exercised and compared with the event loop; a live
//! process runs the same actor undriven, with the QUIC transport as its
//! outbox.

use actix::prelude::*;
use mcfed_actors::{Deliver, EmulatedClock, Inspect, MemberActor};
use mcfed_federation::{Member, Quiescence};
use mcfed_protocol::{Envelope, SimTime};
use mcfed_run::recorder::{Recorder, Recording, SharedRecorder};
use mcfed_run::{RunOptions, RunOutput};
use mcfed_scenario::Scenario;
use rustc_hash::FxHashMap;

use crate::federation::{BuildError, Federation};
use crate::submissions::Streams;

mod driver;

use driver::{Driver, Schedule, Step};

/// Why the actor engine could not run.
#[derive(Debug, thiserror::Error)]
pub enum ActorEngineError {
    /// The federation could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The runtime could not start.
    #[error("cannot start the actor runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// A workload's trace could not be opened.
    #[error("workload: {0}")]
    Workload(#[from] mcfed_trace::SwfError),
    /// An actor stopped before the run ended.
    #[error("an actor stopped unexpectedly: {0}")]
    Mailbox(#[from] MailboxError),
    /// A member's journal stopped (in-process members keep none).
    #[error("a command was not made durable")]
    NotDurable,
}

/// What the members send, held until their round is over (the in-process
/// stand-in for a transport).
#[derive(Default)]
pub(crate) struct Mail {
    envelopes: Vec<Envelope>,
}

impl Actor for Mail {
    type Context = Context<Self>;
}

impl Handler<Deliver> for Mail {
    type Result = ();
    fn handle(&mut self, Deliver(envelope): Deliver, _: &mut Self::Context) {
        self.envelopes.push(envelope);
    }
}

/// Takes every envelope sent since the last take, in the order sent.
#[derive(Message)]
#[rtype(result = "Vec<Envelope>")]
pub(crate) struct TakeMail;

impl Handler<TakeMail> for Mail {
    type Result = MessageResult<TakeMail>;
    fn handle(&mut self, _: TakeMail, _: &mut Self::Context) -> Self::Result {
        MessageResult(std::mem::take(&mut self.envelopes))
    }
}

/// Runs `scenario` with the actor engine until its end (or `until`).
pub fn run(scenario: &Scenario, until: Option<SimTime>) -> Result<RunOutput, ActorEngineError> {
    run_plan(
        scenario,
        &RunOptions {
            until,
            ..RunOptions::default()
        },
    )
}

/// The scenario's submissions, actions and probes up to `end`, latest
/// first.
fn steps(scenario: &Scenario, probes: &[SimTime], end: SimTime) -> Vec<(SimTime, Step)> {
    let submissions = scenario.submissions.iter().enumerate();
    let actions = scenario.actions.iter().enumerate();
    let mut steps: Vec<(SimTime, Step)> = submissions
        .map(|(index, submission)| (submission.at, Step::Submit(index)))
        .chain(actions.map(|(index, action)| (action.at, Step::Action(index))))
        .chain(probes.iter().map(|&at| (at, Step::Probe)))
        .filter(|&(at, _)| at <= end)
        .collect();
    steps.sort();
    steps.reverse();
    steps
}

/// Runs `scenario` with the actor engine under `plan` (its `until`,
/// `probes`, `events` and `drain`; faults and the oracle need the event
/// loop).
pub fn run_plan(scenario: &Scenario, plan: &RunOptions) -> Result<RunOutput, ActorEngineError> {
    let mut federation = Federation::build(scenario)?;
    federation.prepare(None, false);
    federation.keep_history_for(scenario);
    let (probes, end) = plan.resolve(scenario);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?;
    let system = actix_rt::System::with_tokio_rt(move || runtime);
    let initial_states = federation.initial_states.clone();
    let schedule = Schedule {
        steps: steps(scenario, &probes, end),
        streams: Streams::open(scenario)?,
        publishes: federation
            .members
            .iter()
            .map(Member::next_publish)
            .collect(),
    };
    let drain = (plan.drain || scenario.drain).then(|| Quiescence::of(&federation.members));
    let recorder = SharedRecorder::new(Recorder::new(Recording {
        events: plan.events,
        count_only: plan.count_only,
    }));
    let shared = recorder.clone();
    let output = system.block_on(async move {
        let clock = EmulatedClock::start(1.0);
        let mail = Mail::default().start();
        let mut members = Vec::with_capacity(federation.members.len());
        let mut by_name = FxHashMap::default();
        for member in federation.members {
            by_name.insert(member.name().clone(), members.len());
            let actor = MemberActor::new(member, clock, mail.clone().recipient())
                .with_observer(recorder.clone())
                .driven()
                .start();
            members.push(actor);
        }
        let mut driver = Driver::new(scenario, clock, members, by_name, mail, recorder);
        let mut schedule = schedule;
        let stopped = driver.run(&mut schedule, end, drain).await?;
        let mut states = Vec::with_capacity(driver.members.len());
        for member in &driver.members {
            let state = member
                .send(Inspect(|member: &Member, _| {
                    Some(mcfed_run::metrics::end_state(member))
                }))
                .await?;
            states.extend(state);
        }
        let workloads = schedule.streams.reports();
        System::current().stop();
        Ok::<_, ActorEngineError>((states, stopped, workloads))
    });
    let (states, stopped, workloads) = output?;
    let mut output = shared.take().finish(states, stopped, workloads);
    output.initial_states = initial_states;
    output.snapshots_taken = true;
    Ok(output)
}

//! The actor engine: the same federation as actix actors, one
//! [`MemberActor`] per cluster, talking through a router, on a
//! current-thread tokio runtime whose clock is paused and advances by
//! itself whenever every actor is idle. Emulated time therefore never waits
//! on the wall clock.
//!
//! This is the shape a live process has (where the router is replaced by
//! the QUIC transport); `mcfed run --engine actors` runs it in-process so the
//! actor shells are exercised and can be compared with the event loop.

use actix::prelude::*;
use mcfed_actors::{Apply, AskActivity, Deliver, EmulatedClock, Inspect, MemberActor, Publish};
use mcfed_federation::{Activity, Effects, Member, Quiescence};
use mcfed_protocol::{ClusterName, SimTime};
use mcfed_run::probe::{ClusterSnapshot, Snapshot, snapshot};
use mcfed_run::recorder::{Recorder, Recording, SharedRecorder};
use mcfed_run::{RunOptions, RunOutput};
use mcfed_scenario::Scenario;
use mcfed_scenario::model::Submission;
use rustc_hash::FxHashMap;

use crate::federation::{BuildError, Federation};
use crate::submissions::Streams;

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

/// A submission given to a member actor.
type SubmitJob = Apply<(), Box<dyn FnOnce(&mut Member, SimTime, &mut Effects) + Send>>;

/// Routes envelopes to the receiving cluster's actor.
#[derive(Default)]
struct Router {
    endpoints: FxHashMap<ClusterName, Addr<MemberActor>>,
}

impl Actor for Router {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
struct Register(ClusterName, Addr<MemberActor>);

impl Handler<Register> for Router {
    type Result = ();
    fn handle(&mut self, Register(name, endpoints): Register, _: &mut Self::Context) {
        self.endpoints.insert(name, endpoints);
    }
}

impl Handler<Deliver> for Router {
    type Result = ();
    fn handle(&mut self, Deliver(envelope): Deliver, _: &mut Self::Context) {
        match self.endpoints.get(&envelope.to) {
            Some(member) => member.do_send(Deliver(envelope)),
            None => tracing::warn!(to = %envelope.to, "message to an unknown cluster dropped"),
        }
    }
}

/// Lets every actor handle what was sent at the current instant.
async fn settle_instant() {
    for _ in 0..64 {
        tokio::task::yield_now().await;
    }
}

/// Something the driver does at a time, in this order within an instant:
/// submit the job at this index, have the member at this index publish
/// its counters (after everything else at the instant, as in the event
/// loop), take a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Submit(usize),
    Action(usize),
    Stream(usize),
    Publish(usize),
    Probe,
}

/// What the driver does and when: the scenario's submissions and probes,
/// and every member's counter updates.
struct Schedule {
    /// Submissions and probes, latest first.
    steps: Vec<(SimTime, Step)>,
    /// The workloads' traces.
    streams: Streams,
    /// Per member, its next update, as its schedule says.
    publishes: Vec<Option<SimTime>>,
}

impl Schedule {
    /// The next step, without taking it.
    fn peek(&self) -> Option<(SimTime, Step)> {
        let publishes = self
            .publishes
            .iter()
            .enumerate()
            .filter_map(|(index, next)| next.map(|at| (at, Step::Publish(index))));
        let streams = (0..self.streams.len()).filter_map(|index| {
            let next = self.streams.peek(index)?;
            Some((next.at, Step::Stream(index)))
        });
        self.steps
            .last()
            .copied()
            .into_iter()
            .chain(publishes)
            .chain(streams)
            .min()
    }

    /// Takes `step` (the one [`Schedule::peek`] gave); a publish is
    /// scheduled again with what its member answers.
    fn take(&mut self, step: Step) {
        match step {
            Step::Publish(index) => self.publishes[index] = None,
            Step::Stream(_) => {}
            _ => {
                self.steps.pop();
            }
        }
    }

    /// Whether only the periodic updates are left.
    fn only_updates_left(&self) -> bool {
        self.steps.is_empty()
            && (0..self.streams.len()).all(|index| self.streams.peek(index).is_none())
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

/// The running federation, as the driver sees it.
struct Driver<'a> {
    scenario: &'a Scenario,
    clock: EmulatedClock,
    origin: tokio::time::Instant,
    members: Vec<Addr<MemberActor>>,
    by_name: FxHashMap<ClusterName, Addr<MemberActor>>,
    /// The run's recorder, shared with every member actor.
    recorder: SharedRecorder,
    watched: Vec<mcfed_run::probe::Watched>,
}

impl Driver<'_> {
    async fn sleep_until(&self, at: SimTime) {
        let due = self.origin + self.clock.real_delay(at.saturating_since(SimTime::ZERO));
        tokio::time::sleep_until(due).await;
    }

    /// Submits every submission of instant `at` (the scenario's, by index):
    /// each reaches its member's mailbox before any member runs, as the
    /// event loop submits all of an instant before it delivers anything —
    /// so a member numbers its submissions before the forwards that arrive
    /// at the same instant, in both engines. Members count and record
    /// them.
    async fn submit_all(&mut self, indexes: &[usize]) -> Result<(), ActorEngineError> {
        let scenario = self.scenario;
        let requests: Vec<_> = indexes
            .iter()
            .filter_map(|&index| self.request(&scenario.submissions[index]))
            .collect();
        for request in requests {
            // Refusals are counted by the member that refused.
            let _ = request.await?;
        }
        Ok(())
    }

    async fn submit(&mut self, submission: &Submission) -> Result<(), ActorEngineError> {
        if let Some(request) = self.request(submission) {
            let _ = request.await?;
        }
        Ok(())
    }

    /// Sends `submission` to its member (a submission to a cluster the run
    /// does not have is refused here).
    fn request(
        &mut self,
        submission: &Submission,
    ) -> Option<actix::dev::Request<MemberActor, SubmitJob>> {
        let Some(member) = self.by_name.get(&submission.cluster) else {
            self.recorder
                .lock()
                .refused_unknown_cluster(&submission.spec.name, &submission.cluster);
            return None;
        };
        let queue = submission.queue.clone();
        let spec = submission.spec.clone();
        Some(member.send(Apply {
            changes: true,
            apply: Box::new(move |member: &mut Member, now, effects: &mut Effects| {
                // Refusals are noted in the effects and counted there.
                let _ = member.submit(now, &queue, spec, effects);
            }),
        }))
    }

    async fn probe(&mut self, at: SimTime) -> Result<(), ActorEngineError> {
        settle_instant().await;
        let mut clusters: Vec<ClusterSnapshot> = Vec::new();
        for (member, watched) in self.members.iter().zip(&self.watched) {
            let watched = watched.clone();
            let taken = member
                .send(Inspect(move |member: &Member, _| {
                    Some(snapshot(member, at, &watched))
                }))
                .await?;
            clusters.extend(taken);
        }
        self.recorder.lock().snapshot(Snapshot {
            time: at.as_secs_f64(),
            clusters,
        });
        Ok(())
    }

    /// Gives `[[action]]` `index` to its cluster's member.
    async fn act(&mut self, index: usize) -> Result<(), ActorEngineError> {
        let action = &self.scenario.actions[index];
        let Some(member) = self.by_name.get(&action.cluster) else {
            return Ok(());
        };
        let played = action.clone();
        let record = member
            .send(Apply {
                changes: true,
                apply: move |member: &mut Member, now, effects: &mut Effects| {
                    crate::actions::play(&played, member, now, effects)
                },
            })
            .await?
            .map_err(|_| ActorEngineError::NotDurable)?;
        self.recorder.lock().action(record);
        Ok(())
    }

    /// When the next member wakes, and what the members have left to do.
    async fn work(&self) -> Result<(Option<SimTime>, Activity), ActorEngineError> {
        let mut next: Option<SimTime> = None;
        let mut activity = Activity::default();
        for member in &self.members {
            let asked = member.send(AskActivity).await?;
            if let Some(at) = asked.next_wake {
                next = Some(next.map_or(at, |next| next.min(at)));
            }
            activity = activity.and(asked.activity);
        }
        Ok((next, activity))
    }

    /// Member `index` publishes if its round is due; the schedule takes
    /// its next round.
    async fn publish(&self, index: usize) -> Result<Option<SimTime>, ActorEngineError> {
        settle_instant().await;
        Ok(self.members[index].send(Publish).await?)
    }

    /// Runs the schedule to `end`; when draining, stops earlier once no
    /// member has work left (see [`RunOptions::drain`]). The time it
    /// stopped.
    async fn run(
        &mut self,
        schedule: &mut Schedule,
        end: SimTime,
        mut drain: Option<Quiescence>,
    ) -> Result<SimTime, ActorEngineError> {
        loop {
            let next = schedule.peek();
            if let Some(rule) = drain.as_mut().filter(|_| schedule.only_updates_left()) {
                settle_instant().await;
                let now = self.clock.now();
                let (wake, activity) = self.work().await?;
                let step_at = next.map_or(SimTime::MAX, |(at, _)| at);
                if let Some(target) = wake.map(|at| at.max(now)).filter(|&at| at < step_at) {
                    if target > end {
                        return Ok(end);
                    }
                    self.sleep_until(target).await;
                    tokio::task::yield_now().await;
                    continue;
                }
                if rule.drained(now, step_at, activity) {
                    return Ok(now);
                }
            }
            let Some((at, step)) = next.filter(|&(at, _)| at <= end) else {
                self.sleep_until(end).await;
                return Ok(end);
            };
            schedule.take(step);
            self.sleep_until(at).await;
            match step {
                Step::Submit(index) => {
                    let mut batch = vec![index];
                    while let Some((next_at, Step::Submit(next))) = schedule.peek() {
                        if next_at != at {
                            break;
                        }
                        schedule.take(Step::Submit(next));
                        batch.push(next);
                    }
                    self.submit_all(&batch).await?;
                }
                Step::Stream(index) => {
                    if let Some(submission) = schedule.streams.take(index) {
                        self.submit(&submission).await?;
                    }
                }
                Step::Action(index) => self.act(index).await?,
                Step::Publish(index) => {
                    schedule.publishes[index] = self.publish(index).await?;
                }
                Step::Probe => self.probe(at).await?,
            }
        }
    }
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
    let mut steps: Vec<(SimTime, Step)> = scenario
        .submissions
        .iter()
        .enumerate()
        .map(|(index, submission)| (submission.at, Step::Submit(index)))
        .chain(
            scenario
                .actions
                .iter()
                .enumerate()
                .map(|(index, action)| (action.at, Step::Action(index))),
        )
        .chain(probes.iter().map(|&at| (at, Step::Probe)))
        .filter(|&(at, _)| at <= end)
        .collect();
    steps.sort();
    steps.reverse();
    let publishes = federation
        .members
        .iter()
        .map(Member::next_publish)
        .collect();
    let schedule = Schedule {
        steps,
        streams: Streams::open(scenario)?,
        publishes,
    };
    let watched: Vec<mcfed_run::probe::Watched> = scenario
        .clusters
        .iter()
        .map(|spec| mcfed_run::expect::watched(scenario, &spec.config.name))
        .collect();
    let drain = (plan.drain || scenario.drain).then(|| Quiescence::of(&federation.members));
    let recorder = SharedRecorder::new(Recorder::new(Recording {
        events: plan.events,
        count_only: plan.count_only,
    }));
    let shared = recorder.clone();
    let output = system.block_on(async move {
        let clock = EmulatedClock::start(1.0);
        let router = Router::default().start();
        let mut driver = Driver {
            scenario,
            clock,
            origin: tokio::time::Instant::now(),
            members: Vec::new(),
            by_name: FxHashMap::default(),
            recorder: recorder.clone(),
            watched,
        };
        for member in federation.members {
            let name = member.name().clone();
            let actor = MemberActor::new(member, clock, router.clone().recipient())
                .with_observer(recorder.clone())
                .with_driven_updates()
                .start();
            router.send(Register(name.clone(), actor.clone())).await?;
            driver.members.push(actor.clone());
            driver.by_name.insert(name, actor);
        }
        let mut schedule = schedule;
        let stopped = driver.run(&mut schedule, end, drain).await?;
        // Let every message sent at the last instant be handled.
        settle_instant().await;
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

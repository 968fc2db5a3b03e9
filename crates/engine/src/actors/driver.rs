//! The actor engine's driver: takes every instant in the order of
//! [`mcfed_federation::instant`], sending the driven member actors one call
//! at a time and awaiting each.

use actix::prelude::*;
use mcfed_actors::{
    Apply, AskActivity, Deliver, Drive, EmulatedClock, Inspect, MemberActor, Publish,
};
use mcfed_federation::{Activity, Call, Effects, Member, Quiescence, Rounds, instant};
use mcfed_protocol::{ClusterName, SimTime};
use mcfed_run::probe::{ClusterSnapshot, Snapshot, snapshot};
use mcfed_run::recorder::SharedRecorder;
use mcfed_scenario::Scenario;
use mcfed_scenario::model::Submission;
use rustc_hash::FxHashMap;

use super::{ActorEngineError, Mail, TakeMail};
use crate::submissions::Streams;

/// Something the driver does at a time, in this order within an instant:
/// submit the scenario's submission at this index, give its action at this
/// index, submit the workload's jobs due, have the member at this index
/// publish its counters (once the instant has settled, as in the event
/// loop), take a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Step {
    Submit(usize),
    Action(usize),
    Stream(usize),
    Publish(usize),
    Probe,
}

impl Step {
    /// Whether the step is an input to a member (taken before the instant's
    /// rounds), not a counter update or a probe.
    fn is_input(self) -> bool {
        matches!(self, Step::Submit(_) | Step::Action(_) | Step::Stream(_))
    }
}

/// What the driver does and when: the scenario's submissions, actions
/// and probes, its workloads, and every member's counter updates.
pub(super) struct Schedule {
    /// Submissions, actions and probes, latest first.
    pub(super) steps: Vec<(SimTime, Step)>,
    /// The workloads' traces.
    pub(super) streams: Streams,
    /// Per member, its next update, as its schedule says.
    pub(super) publishes: Vec<Option<SimTime>>,
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
    /// scheduled again with what its member answers, a workload's jobs are
    /// taken by the caller.
    fn take(&mut self, step: Step) {
        match step {
            Step::Publish(index) => self.publishes[index] = None,
            Step::Stream(_) => {}
            _ => {
                self.steps.pop();
            }
        }
    }

    /// Whether inputs are still to come (work, for the drain rule;
    /// counter updates and probes are not).
    fn has_inputs(&self) -> bool {
        self.steps.iter().any(|&(_, step)| step.is_input())
            || (0..self.streams.len()).any(|index| self.streams.peek(index).is_some())
    }
}

/// The running federation, as the driver sees it.
pub(super) struct Driver<'a> {
    scenario: &'a Scenario,
    clock: EmulatedClock,
    origin: tokio::time::Instant,
    /// The member actors, in scenario order.
    pub(super) members: Vec<Addr<MemberActor>>,
    by_name: FxHashMap<ClusterName, usize>,
    mail: Addr<Mail>,
    /// The run's recorder, shared with every member actor.
    recorder: SharedRecorder,
    watched: Vec<mcfed_run::probe::Watched>,
    /// The members touched at the current instant.
    rounds: Rounds,
    /// Per member, when it next needs waking, as it last said.
    wakes: Vec<Option<SimTime>>,
    /// The current instant.
    now: SimTime,
}

impl<'a> Driver<'a> {
    /// A driver of `members` (in scenario order, `by_name` their
    /// positions), whose messages `mail` collects.
    pub(super) fn new(
        scenario: &'a Scenario,
        clock: EmulatedClock,
        members: Vec<Addr<MemberActor>>,
        by_name: FxHashMap<ClusterName, usize>,
        mail: Addr<Mail>,
        recorder: SharedRecorder,
    ) -> Self {
        let watched = scenario
            .clusters
            .iter()
            .map(|spec| mcfed_run::expect::watched(scenario, &spec.config.name))
            .collect();
        let count = members.len();
        Driver {
            scenario,
            clock,
            origin: tokio::time::Instant::now(),
            members,
            by_name,
            mail,
            recorder,
            watched,
            rounds: Rounds::new(count),
            wakes: vec![None; count],
            now: SimTime::ZERO,
        }
    }

    async fn sleep_until(&mut self, at: SimTime) {
        if at > self.now {
            let due = self.origin + self.clock.real_delay(at.saturating_since(SimTime::ZERO));
            tokio::time::sleep_until(due).await;
            self.now = at;
        }
    }

    /// Runs the schedule to `end`; when draining, stops earlier once no
    /// member has work left (see [`mcfed_run::RunOptions::drain`]). The
    /// time it stopped.
    pub(super) async fn run(
        &mut self,
        schedule: &mut Schedule,
        end: SimTime,
        mut drain: Option<Quiescence>,
    ) -> Result<SimTime, ActorEngineError> {
        self.start().await?;
        loop {
            if !self.rounds.is_settled() {
                self.settle().await?;
                continue;
            }
            let step = schedule.peek();
            let wake = self.wakes.iter().flatten().min().copied();
            let next = step.map(|(at, _)| at).into_iter().chain(wake).min();
            let Some(at) = next.map(|at| at.max(self.now)) else {
                return Ok(self.stop(end, drain.is_some()).await);
            };
            if let Some(rule) = drain.as_mut() {
                let activity = self.activity(schedule).await?;
                if rule.drained(self.now, at, activity) {
                    return Ok(self.now);
                }
            }
            if at > end {
                return Ok(self.stop(end, drain.is_some()).await);
            }
            self.sleep_until(at).await;
            self.take_inputs(schedule).await?;
            self.deliver_mail().await?;
            self.wake_due();
            if !self.rounds.is_settled() {
                continue;
            }
            // The instant has settled: its counter updates, then probes.
            match step {
                Some((at, Step::Publish(index))) if at <= self.now => {
                    schedule.take(Step::Publish(index));
                    schedule.publishes[index] = self.members[index].send(Publish).await?;
                    self.deliver_mail().await?;
                }
                Some((at, Step::Probe)) if at <= self.now => {
                    schedule.take(Step::Probe);
                    self.probe().await?;
                }
                _ => {}
            }
        }
    }

    /// Where a run with nothing more to do before `end` stops: where it
    /// is when draining, else at `end`.
    async fn stop(&mut self, end: SimTime, draining: bool) -> SimTime {
        if draining {
            return self.now;
        }
        self.sleep_until(end).await;
        end
    }

    /// Learns when each member first needs waking, and delivers what the
    /// members sent as they started (their first dispatch pass).
    async fn start(&mut self) -> Result<(), ActorEngineError> {
        for (index, member) in self.members.iter().enumerate() {
            self.wakes[index] = member.send(AskActivity).await?.next_wake;
        }
        self.deliver_mail().await
    }

    /// What the federation has left to do: busy while inputs are to come
    /// or a member is to wake, else as its members say.
    async fn activity(&self, schedule: &Schedule) -> Result<Activity, ActorEngineError> {
        if schedule.has_inputs() || self.wakes.iter().any(Option::is_some) {
            return Ok(Activity {
                busy: true,
                holding: false,
            });
        }
        let mut activity = Activity::default();
        for member in &self.members {
            activity = activity.and(member.send(AskActivity).await?.activity);
        }
        Ok(activity)
    }

    /// Hands every input due now to its member, in the schedule's order
    /// (the scenario's submissions, its actions, then each workload's
    /// jobs), before any member steps.
    async fn take_inputs(&mut self, schedule: &mut Schedule) -> Result<(), ActorEngineError> {
        while let Some((at, step)) = schedule.peek() {
            if at > self.now || !step.is_input() {
                break;
            }
            schedule.take(step);
            match step {
                Step::Submit(index) => {
                    let scenario = self.scenario;
                    self.submit(&scenario.submissions[index]).await?;
                }
                Step::Action(index) => self.act(index).await?,
                Step::Stream(index) => {
                    if let Some(submission) = schedule.streams.take(index) {
                        self.submit(&submission).await?;
                    }
                }
                Step::Publish(_) | Step::Probe => {}
            }
        }
        Ok(())
    }

    /// Touches every member whose wake-up is due.
    fn wake_due(&mut self) {
        for (index, wake) in self.wakes.iter_mut().enumerate() {
            if wake.is_some_and(|at| at <= self.now) {
                *wake = None;
                self.rounds.touch(index);
            }
        }
    }

    /// Steps the touched members round by round until the instant has
    /// settled ([`instant::calls`]): what a round sent is delivered after
    /// it and touches its receivers, as does a wake-up that came due again.
    async fn settle(&mut self) -> Result<(), ActorEngineError> {
        let mut round = Vec::new();
        while !self.rounds.is_settled() {
            self.rounds.next_round(&mut round);
            for call in instant::calls(&round) {
                let (index, drive) = match call {
                    Call::Advance(index) => (index, Drive::Advance),
                    Call::Session(index) => (index, Drive::Session),
                };
                self.wakes[index] = self.members[index].send(drive).await?;
            }
            self.wake_due();
            self.deliver_mail().await?;
        }
        Ok(())
    }

    /// Delivers what the members sent, in the order sent, touching the
    /// receivers — and what they sent on taking it, in turn, until nothing
    /// is in flight.
    async fn deliver_mail(&mut self) -> Result<(), ActorEngineError> {
        loop {
            let envelopes = self.mail.send(TakeMail).await?;
            if envelopes.is_empty() {
                return Ok(());
            }
            for envelope in envelopes {
                let Some(&index) = self.by_name.get(&envelope.to) else {
                    tracing::warn!(to = %envelope.to, "message to an unknown cluster dropped");
                    continue;
                };
                self.recorder.lock().message_delivered();
                self.members[index].send(Deliver(envelope)).await?;
                self.rounds.touch(index);
            }
        }
    }

    /// Gives `submission` to its member (a submission to a cluster the run
    /// does not have is refused here); members count and record it.
    async fn submit(&mut self, submission: &Submission) -> Result<(), ActorEngineError> {
        let Some(&index) = self.by_name.get(&submission.cluster) else {
            self.recorder
                .lock()
                .refused_unknown_cluster(&submission.spec.name, &submission.cluster);
            return Ok(());
        };
        let queue = submission.queue.clone();
        let spec = submission.spec.clone();
        let submit = Apply {
            changes: true,
            apply: move |member: &mut Member, now, effects: &mut Effects| {
                // Refusals are noted in the effects and counted there.
                let _ = member.submit_shared(now, &queue, spec, effects);
            },
        };
        self.members[index]
            .send(submit)
            .await?
            .map_err(|_| ActorEngineError::NotDurable)?;
        self.rounds.touch(index);
        Ok(())
    }

    /// Gives `[[action]]` `index` to its cluster's member.
    async fn act(&mut self, index: usize) -> Result<(), ActorEngineError> {
        let action = &self.scenario.actions[index];
        let Some(&member) = self.by_name.get(&action.cluster) else {
            return Ok(());
        };
        let played = action.clone();
        let record = self.members[member]
            .send(Apply {
                changes: true,
                apply: move |member: &mut Member, now, effects: &mut Effects| {
                    crate::actions::play(&played, member, now, effects)
                },
            })
            .await?
            .map_err(|_| ActorEngineError::NotDurable)?;
        self.recorder.lock().action(record);
        self.rounds.touch(member);
        Ok(())
    }

    async fn probe(&mut self) -> Result<(), ActorEngineError> {
        let at = self.now;
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
}

//! The event-loop engine: runs a whole federation in one thread, in
//! emulated time, over federation [`Member`](mcfed_federation::Member)s.
//!
//! Events sit in a binary heap ordered by (time, phase, sequence number), so
//! a run is deterministic, and each instant is taken in the order of
//! [`mcfed_federation::instant`], as the actor engine takes it: the
//! scenario's submissions and actions, then the workloads' jobs, workload
//! by workload; then deliveries (in the order sent) and wake-ups; once none
//! is left at the instant, a round of the touched members
//! (`settle`), which may deliver more messages at the same
//! instant and so call for further rounds; counter snapshots next, so an
//! update reflects everything that happened at its instant; probes that
//! look at the clusters for expectations and `--show` come last. The loop
//! ends at the run's end, or, when
//! draining, once no work is left; it never ends while a touched member
//! has not settled. docs/architecture.md says why this engine, not the
//! actors, runs `mcfed run` by default.
//!
//! With [`RunOptions::chaos`] every message passes through the seeded fault
//! generator of [`mcfed_chaos`]; with [`RunOptions::oracle`] every
//! recorded decision is compared with the one the true counters would have
//! given.

use std::time::Duration;

use mcfed_chaos::{Chaos, ChaosConfig, Fate};
use mcfed_federation::{Activity, Call, Effects, Observer, Quiescence, Rounds, instant};
use mcfed_protocol::{Envelope, Message, SimTime};
use mcfed_run::probe::{Snapshot, snapshot};
use mcfed_run::recorder::Recorder;
use mcfed_run::{RunOptions, RunOutput};
use mcfed_scenario::Scenario;

use crate::federation::Federation;
use crate::heap::{
    Event, EventHeap, EventKind, PHASE_EVENTS, PHASE_PROBE, PHASE_PUBLISH, PHASE_SUBMIT,
};
use crate::output::{EngineError, PROGRESS_EVERY, Progress, recorder_for};
use crate::submissions::Streams;

mod inputs;

/// The event loop over a built federation.
pub struct EventLoop<'a> {
    scenario: &'a Scenario,
    federation: Federation,
    heap: EventHeap,
    /// The workloads being read.
    streams: Streams,
    now: SimTime,
    /// The members touched at this instant, stepped in rounds.
    rounds: Rounds,
    /// The members of the round being stepped (kept for its buffer).
    round: Vec<usize>,
    wake_at: Vec<Option<SimTime>>,
    /// Where members write what they produce; handed to the recorder.
    effects: Box<Effects>,
    /// An emptied box swapped in while `effects` is absorbed.
    spare_effects: Option<Box<Effects>>,
    chaos: Option<Chaos>,
    oracle_seq: u64,
    /// Run until no work is left rather than to a fixed end, by this rule.
    drain: Option<Quiescence>,
    /// How often slot usage is sampled (the shortest update interval), if
    /// it is.
    sample_interval: Option<Duration>,
    /// Counts, metrics and records of the run.
    recorder: Recorder,
    end: SimTime,
    /// Per cluster, the jobs expectations watch.
    watched: Vec<mcfed_run::probe::Watched>,
}

impl<'a> EventLoop<'a> {
    /// Builds the scenario's clusters and schedules its submissions and
    /// counter updates.
    pub fn new(scenario: &'a Scenario, options: &RunOptions) -> Result<Self, EngineError> {
        let mut federation = Federation::build(scenario)?;
        let streams = Streams::open(scenario)?;
        let count = federation.members.len();
        let (probes, end) = options.resolve(scenario);
        let watched = scenario
            .clusters
            .iter()
            .map(|spec| mcfed_run::expect::watched(scenario, &spec.config.name))
            .collect();
        let chaos_config = options.chaos.clone().or_else(|| scenario.chaos.clone());
        let chaos = chaos_config.filter(ChaosConfig::is_active).map(Chaos::new);
        federation.prepare(chaos.as_ref().map(Chaos::config), options.oracle);
        federation.keep_history_for(scenario);
        let recorder = recorder_for(options, scenario, &federation)?;
        let drain = (options.drain || scenario.drain).then(|| Quiescence::of(&federation.members));
        let mut engine = EventLoop {
            scenario,
            heap: EventHeap::default(),
            streams,
            now: SimTime::ZERO,
            rounds: Rounds::new(count),
            round: Vec::with_capacity(count),
            wake_at: vec![None; count],
            effects: Box::default(),
            spare_effects: None,
            chaos,
            oracle_seq: 0,
            drain,
            sample_interval: options.events.then(|| scenario.sample_interval()),
            federation,
            recorder,
            end,
            watched,
        };
        engine.take_start();
        engine.schedule_start(probes);
        Ok(engine)
    }

    /// Schedules the probes, submissions, first counter updates, wake-ups
    /// and outage edges.
    fn schedule_start(&mut self, probes: Vec<SimTime>) {
        for at in probes {
            self.heap.push(at, PHASE_PROBE, EventKind::Probe);
        }
        for (index, submission) in self.scenario.submissions.iter().enumerate() {
            self.heap
                .push(submission.at, PHASE_SUBMIT, EventKind::Submit(index));
        }
        for (index, action) in self.scenario.actions.iter().enumerate() {
            self.heap
                .push(action.at, PHASE_SUBMIT, EventKind::Action(index));
        }
        for index in 0..self.streams.len() {
            self.schedule_stream(index);
        }
        for index in 0..self.federation.members.len() {
            self.schedule_publish(index);
            self.reschedule_wake(index);
        }
        if self.sample_interval.is_some() {
            self.heap
                .push(SimTime::ZERO, PHASE_PUBLISH, EventKind::Sample);
        }
        let edges = self
            .chaos
            .as_ref()
            .map(Chaos::outage_edges)
            .unwrap_or_default();
        for (cluster, at) in edges {
            if let Some(index) = self.federation.position(&cluster) {
                self.heap.push(at, PHASE_EVENTS, EventKind::Wake(index));
            }
        }
    }

    /// Schedules member `index`'s next counter update, when its schedule
    /// has one.
    fn schedule_publish(&mut self, index: usize) {
        if let Some(at) = self.federation.members[index].next_publish() {
            self.heap.push(at, PHASE_PUBLISH, EventKind::Publish(index));
        }
    }

    fn touch(&mut self, index: usize) {
        self.rounds.touch(index);
    }

    fn reschedule_wake(&mut self, index: usize) {
        let next = self.federation.members[index].next_wake(self.now);
        if next != self.wake_at[index] {
            self.wake_at[index] = next;
            if let Some(at) = next {
                self.heap.push(at, PHASE_EVENTS, EventKind::Wake(index));
            }
        }
    }

    fn down_until(&self, index: usize) -> Option<SimTime> {
        self.chaos
            .as_ref()
            .and_then(|chaos| chaos.down_until(self.federation.name(index), self.now))
    }

    /// Runs to the run's end (or `until`, if earlier); when draining, stops
    /// earlier once no work is left.
    pub fn run(self, until: Option<SimTime>) -> RunOutput {
        self.run_observed(until, &mut |_| {})
    }

    /// Runs as [`EventLoop::run`] does, and calls `observe` every
    /// [`PROGRESS_EVERY`] events with the figures so far (a progress bar).
    pub fn run_observed(
        mut self,
        until: Option<SimTime>,
        observe: &mut dyn FnMut(&Progress),
    ) -> RunOutput {
        let end = until.map_or(self.end, |until| until.min(self.end));
        loop {
            let next = self.heap.peek();
            let instant_over = next.is_none_or(|(at, phase)| at > self.now || phase > PHASE_EVENTS);
            if !self.rounds.is_settled() && instant_over {
                self.settle();
                continue;
            }
            let Some((at, _)) = next else { break };
            if at > end || self.drained(at) {
                break;
            }
            let Some((at, event)) = self.heap.pop() else {
                break;
            };
            self.now = at;
            self.recorder.event_handled();
            self.handle(event);
            let stats = self.recorder.stats();
            if stats.events % PROGRESS_EVERY == 0 {
                observe(&Progress {
                    now: self.now,
                    submitted: stats.submitted,
                    finished: stats.finished,
                });
            }
        }
        let stopped = if self.drain.is_some() && self.now < end {
            self.now
        } else {
            end
        };
        let states = self
            .federation
            .members
            .iter()
            .map(mcfed_run::metrics::end_state)
            .collect();
        let mut output = self
            .recorder
            .finish(states, stopped, self.streams.reports());
        output.initial_states = self.federation.initial_states.clone();
        output.snapshots_taken = true;
        output
    }

    /// Whether a draining run is over before the event at `next`, by the
    /// drain rule ([`Quiescence`]): the heap's work (submissions,
    /// deliveries, wake-ups) keeps it busy.
    fn drained(&mut self, next: SimTime) -> bool {
        let Some(rule) = &mut self.drain else {
            return false;
        };
        let activity = if self.heap.has_work() {
            Activity {
                busy: true,
                holding: false,
            }
        } else {
            self.federation.activity(self.now)
        };
        rule.drained(self.now, next, activity)
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Submit(index) => self.submit_scenario(index),
            Event::Stream(index) => self.submit_stream(index),
            Event::Action(index) => self.act(index),
            Event::Deliver(slot) => {
                if let Some(envelope) = self.heap.take_envelope(slot) {
                    self.deliver(envelope);
                }
            }
            Event::Wake(index) => {
                if self.wake_at[index] == Some(self.now) {
                    self.wake_at[index] = None;
                }
                self.touch(index);
            }
            Event::Publish(index) => self.publish(index),
            Event::Sample => self.sample(),
            Event::Probe => self.probe(),
        }
    }

    fn probe(&mut self) {
        let clusters = self
            .federation
            .members
            .iter()
            .zip(&self.watched)
            .map(|(member, watched)| snapshot(member, self.now, watched))
            .collect();
        self.recorder.snapshot(Snapshot {
            time: self.now.as_secs_f64(),
            clusters,
        });
    }

    fn deliver(&mut self, envelope: Envelope) {
        let Some(member_index) = self.federation.position(&envelope.to) else {
            tracing::warn!(to = %envelope.to, "message to an unknown cluster dropped");
            return;
        };
        if let Some(until) = self.down_until(member_index) {
            if matches!(envelope.message, Message::CounterUpdate(_)) {
                self.recorder.update_lost();
            } else {
                self.heap
                    .push(until, PHASE_EVENTS, EventKind::Deliver(envelope));
            }
            return;
        }
        self.recorder.message_delivered();
        self.federation.members[member_index].receive(self.now, envelope, &mut self.effects);
        self.absorb(member_index);
        self.touch(member_index);
    }

    /// Member `index`'s counter update is due: published (or lost, while
    /// it is down), and the next one scheduled.
    fn publish(&mut self, index: usize) {
        if self.down_until(index).is_some() {
            self.federation.members[index].skip_publish(self.now);
        } else {
            self.federation.members[index].publish_due(self.now, &mut self.effects);
            self.absorb(index);
        }
        self.schedule_publish(index);
    }

    /// Steps one round of the touched members ([`instant::calls`]: every
    /// scheduler advances, then every due forwarding session runs, in
    /// cluster order), then schedules their next wake-ups. What they sent
    /// is delivered at this instant, before time moves on, and touches its
    /// receivers for the next round. A member that is down waits.
    fn settle(&mut self) {
        let now = self.now;
        let mut round = std::mem::take(&mut self.round);
        self.rounds.next_round(&mut round);
        round.retain(|&index| match self.down_until(index) {
            Some(until) => {
                self.heap.push(until, PHASE_EVENTS, EventKind::Wake(index));
                false
            }
            None => true,
        });
        for call in instant::calls(&round) {
            match call {
                Call::Advance(index) => {
                    self.federation.members[index].advance(now, &mut self.effects);
                }
                Call::Session(index) => {
                    if !self.federation.members[index].session_due(now) {
                        continue;
                    }
                    self.refresh_oracle(index);
                    self.federation.members[index].session(now, &mut self.effects);
                }
            }
            let (Call::Advance(index) | Call::Session(index)) = call;
            self.absorb(index);
        }
        for &index in &round {
            self.reschedule_wake(index);
        }
        self.round = round;
    }

    /// Feeds the oracle of member `index` with the true counters of every
    /// cluster it sends to.
    fn refresh_oracle(&mut self, index: usize) {
        if !self.federation.members[index].wants_truth() {
            return;
        }
        let receiver = self.federation.name(index).clone();
        for remote in self.federation.members[index].remote_clusters() {
            let Some(remote) = self.federation.position(&remote) else {
                continue;
            };
            self.oracle_seq += 1;
            let truth =
                self.federation.members[remote].true_counters(&receiver, self.oracle_seq, self.now);
            if let Some(truth) = truth {
                self.federation.members[index].refresh_oracle(&truth);
            }
        }
    }

    /// Takes what member `index` produced: hands it to the recorder and
    /// schedules its envelopes.
    fn absorb(&mut self, index: usize) {
        // Swap boxes, not the effects themselves (absorbed several times
        // per job).
        let spare = self.spare_effects.take().unwrap_or_default();
        let mut effects = std::mem::replace(&mut self.effects, spare);
        self.recorder
            .observe(&self.federation.members[index], self.now, &effects);
        if !effects.envelopes.is_empty() {
            self.deliver_out(&mut effects.envelopes);
        }
        effects.clear();
        self.spare_effects = Some(effects);
    }

    /// Schedules delivery of `envelopes`, through the faults if any.
    fn deliver_out(&mut self, envelopes: &mut Vec<Envelope>) {
        let now = self.now;
        for envelope in envelopes.drain(..) {
            let fate = match &mut self.chaos {
                None => {
                    // No faults: delivered at once, without a fate to build.
                    self.heap
                        .push(now, PHASE_EVENTS, EventKind::Deliver(envelope));
                    continue;
                }
                Some(chaos) => {
                    let update = matches!(envelope.message, Message::CounterUpdate(_));
                    chaos.fate(&envelope.from, &envelope.to, update, now)
                }
            };
            match fate {
                Fate::Lost => self.recorder.update_lost(),
                Fate::Deliver(times) => {
                    if let Some((&last, copies)) = times.split_last() {
                        for &at in copies {
                            let copy = EventKind::Deliver(envelope.clone());
                            self.heap.push(at, PHASE_EVENTS, copy);
                        }
                        self.heap
                            .push(last, PHASE_EVENTS, EventKind::Deliver(envelope));
                    }
                }
            }
        }
    }

    fn sample(&mut self) {
        for member in &self.federation.members {
            self.recorder.sample(member, self.now);
        }
        if let Some(interval) = self.sample_interval {
            self.heap
                .push(self.now + interval, PHASE_PUBLISH, EventKind::Sample);
        }
    }
}

/// Runs `scenario` with the event-loop engine.
pub fn run(scenario: &Scenario, options: &RunOptions) -> Result<RunOutput, EngineError> {
    Ok(EventLoop::new(scenario, options)?.run(None))
}

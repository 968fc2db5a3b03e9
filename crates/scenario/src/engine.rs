//! The event-loop engine: runs a whole federation in one thread, in
//! emulated time, over the sans-IO cores.
//!
//! Events sit in a binary heap ordered by (time, phase, sequence number), so
//! a run is deterministic. At each instant, submissions, deliveries and job
//! finishes are handled first (phase 0); then every touched cluster
//! advances (dispatch) and every touched forwarder runs one session, which
//! may deliver more messages at the same instant; counter snapshots are
//! taken next (phase 1), so an update reflects everything that happened at
//! its instant; probes that look at the clusters for expectations and
//! `--show` come last (phase 2). docs/architecture.md says why this engine,
//! not the actors, runs `mcfed run` by default.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Duration;

use mcfed_cluster::Transition;
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::{Envelope, JobEvent, SimTime};

use crate::build::{BuildError, Federation, GroupState, build};
use crate::model::Scenario;
use crate::probe::{PreemptionRecord, Snapshot, snapshot};

/// What a run produced.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    /// Every decision record, in the order decisions were made.
    pub decisions: Vec<DecisionRecord>,
    /// Per cluster, per initial job group, states after the first pass.
    pub initial_states: Vec<Vec<GroupState>>,
    /// The clusters at each probe time, in time order.
    pub snapshots: Vec<Snapshot>,
    /// Every preemption, in the order they happened.
    pub preemptions: Vec<PreemptionRecord>,
    /// Counts of what happened.
    pub stats: RunStats,
}

impl RunOutput {
    /// The snapshot taken at `at`.
    pub fn snapshot_at(&self, at: SimTime) -> Option<&Snapshot> {
        self.snapshots
            .iter()
            .find(|snapshot| snapshot.time == at.as_secs_f64())
    }
}

/// When a run ends and what it looks at on the way.
#[derive(Clone, Debug, Default)]
pub struct RunPlan {
    /// Stop here if earlier than the scenario's end.
    pub until: Option<SimTime>,
    /// Extra times to take snapshots at (besides the expectations'); the
    /// run goes on to the last of them even past the scenario's end.
    pub probes: Vec<SimTime>,
}

impl RunPlan {
    /// Every probe time of `scenario` and this plan, sorted, and the time
    /// the run ends.
    pub fn resolve(&self, scenario: &Scenario) -> (Vec<SimTime>, SimTime) {
        let mut probes = scenario.probe_times();
        probes.extend(self.probes.iter().copied());
        probes.sort_unstable();
        probes.dedup();
        let last_extra = self.probes.iter().copied().max().unwrap_or(SimTime::ZERO);
        let end = scenario.end.max(last_extra);
        let end = self.until.map_or(end, |until| until.min(end));
        probes.retain(|&at| at <= end);
        (probes, end)
    }
}

/// Counts of what happened in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Events handled.
    pub events: u64,
    /// Jobs submitted during the run.
    pub submitted: u64,
    /// Submissions refused.
    pub refused: u64,
    /// Messages delivered between clusters.
    pub messages: u64,
    /// Counter updates sent.
    pub updates: u64,
    /// Jobs started (local and forwarded).
    pub started: u64,
    /// Jobs finished.
    pub finished: u64,
    /// Emulated time at which the run stopped.
    pub end: SimTime,
}

enum EventKind {
    Submit(usize),
    Deliver(Envelope),
    Wake(usize),
    Publish(usize),
    Probe,
}

struct Event {
    at: SimTime,
    phase: u8,
    seq: u64,
    kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    /// Reversed, so the max-heap yields the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.phase, other.seq).cmp(&(self.at, self.phase, self.seq))
    }
}

const PHASE_EVENTS: u8 = 0;
const PHASE_PUBLISH: u8 = 1;
const PHASE_PROBE: u8 = 2;

/// The event loop over a built federation.
pub struct EventLoop<'a> {
    scenario: &'a Scenario,
    federation: Federation,
    heap: BinaryHeap<Event>,
    next_seq: u64,
    now: SimTime,
    dirty: Vec<bool>,
    dirty_list: Vec<usize>,
    wake_at: Vec<Option<SimTime>>,
    out: Vec<Envelope>,
    transitions: Vec<Transition>,
    output: RunOutput,
    end: SimTime,
    /// Per cluster, the jobs expectations watch.
    watched: Vec<Vec<String>>,
}

impl<'a> EventLoop<'a> {
    /// Builds the scenario's clusters and schedules its submissions and
    /// counter updates.
    pub fn new(scenario: &'a Scenario) -> Result<Self, BuildError> {
        Self::with_plan(scenario, &RunPlan::default())
    }

    /// Like [`EventLoop::new`], with the probes and end of `plan`.
    pub fn with_plan(scenario: &'a Scenario, plan: &RunPlan) -> Result<Self, BuildError> {
        let federation = build(scenario)?;
        let count = federation.members.len();
        let (probes, end) = plan.resolve(scenario);
        let watched = scenario
            .clusters
            .iter()
            .map(|spec| scenario.watched_jobs(&spec.config.name))
            .collect();
        let mut engine = EventLoop {
            scenario,
            heap: BinaryHeap::new(),
            next_seq: 0,
            now: SimTime::ZERO,
            dirty: vec![false; count],
            dirty_list: Vec::new(),
            wake_at: vec![None; count],
            out: Vec::new(),
            transitions: Vec::new(),
            output: RunOutput {
                initial_states: federation.initial_states.clone(),
                ..RunOutput::default()
            },
            federation,
            end,
            watched,
        };
        for at in probes {
            engine.push(at, PHASE_PROBE, EventKind::Probe);
        }
        for (index, submission) in scenario.submissions.iter().enumerate() {
            engine.push(submission.at, PHASE_EVENTS, EventKind::Submit(index));
        }
        for index in 0..count {
            let member = &engine.federation.members[index];
            if let (Some(interval), true) = (
                member.node.cluster().update_interval(),
                member.node.has_subscribers(),
            ) {
                engine.push(
                    SimTime::ZERO + interval,
                    PHASE_PUBLISH,
                    EventKind::Publish(index),
                );
            }
            engine.reschedule_wake(index);
        }
        Ok(engine)
    }

    fn push(&mut self, at: SimTime, phase: u8, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Event {
            at,
            phase,
            seq,
            kind,
        });
    }

    fn touch(&mut self, index: usize) {
        if !self.dirty[index] {
            self.dirty[index] = true;
            self.dirty_list.push(index);
        }
    }

    fn reschedule_wake(&mut self, index: usize) {
        let next = self.federation.members[index].node.next_event_time();
        if next != self.wake_at[index] {
            self.wake_at[index] = next;
            if let Some(at) = next {
                self.push(at, PHASE_EVENTS, EventKind::Wake(index));
            }
        }
    }

    /// Runs to the scenario's end (or `until`, if earlier).
    pub fn run(mut self, until: Option<SimTime>) -> RunOutput {
        let end = until.map_or(self.end, |until| until.min(self.end));
        while let Some(top) = self.heap.peek() {
            if !self.dirty_list.is_empty() && (top.at > self.now || top.phase > PHASE_EVENTS) {
                self.settle();
                continue;
            }
            if top.at > end {
                break;
            }
            let Some(event) = self.heap.pop() else { break };
            self.now = event.at;
            self.output.stats.events += 1;
            self.handle(event.kind);
        }
        if !self.dirty_list.is_empty() {
            self.settle();
        }
        self.output.stats.end = end;
        self.output
    }

    fn handle(&mut self, kind: EventKind) {
        let now = self.now;
        match kind {
            EventKind::Submit(index) => {
                let submission = &self.scenario.submissions[index];
                let Some(&member_index) = self.federation.index.get(&submission.cluster) else {
                    return;
                };
                let member = &mut self.federation.members[member_index];
                let result = match (&mut member.forwarder, submission.forwarded) {
                    (Some(forwarder), true) => forwarder
                        .submit(now, &submission.queue, submission.spec.clone())
                        .map(|_| ())
                        .map_err(|error| error.to_string()),
                    _ => member
                        .node
                        .submit(now, &submission.queue, submission.spec.clone())
                        .map(|_| ())
                        .map_err(|error| error.to_string()),
                };
                match result {
                    Ok(()) => self.output.stats.submitted += 1,
                    Err(error) => {
                        self.output.stats.refused += 1;
                        tracing::warn!(job = %submission.spec.name, cluster = %submission.cluster, %error, "submission refused");
                    }
                }
                self.touch(member_index);
            }
            EventKind::Deliver(envelope) => {
                let Some(&member_index) = self.federation.index.get(&envelope.to) else {
                    tracing::warn!(to = %envelope.to, "message to an unknown cluster dropped");
                    return;
                };
                self.output.stats.messages += 1;
                let member = &mut self.federation.members[member_index];
                if envelope.message.is_for_forwarder() {
                    match &mut member.forwarder {
                        Some(forwarder) => forwarder.handle(now, &envelope.from, envelope.message),
                        None => tracing::debug!(to = %envelope.to, "no forwarder for message"),
                    }
                } else {
                    member
                        .node
                        .handle(now, &envelope.from, envelope.message, &mut self.out);
                    self.deliver_out();
                }
                self.touch(member_index);
            }
            EventKind::Wake(index) => {
                if self.wake_at[index] == Some(now) {
                    self.wake_at[index] = None;
                    self.touch(index);
                }
            }
            EventKind::Publish(index) => {
                let member = &mut self.federation.members[index];
                member.node.publish_counters(now, &mut self.out);
                self.output.stats.updates += self.out.len() as u64;
                if let Some(interval) = member.node.cluster().update_interval() {
                    self.push(now + interval, PHASE_PUBLISH, EventKind::Publish(index));
                }
                self.deliver_out();
            }
            EventKind::Probe => {
                let clusters = self
                    .federation
                    .members
                    .iter()
                    .zip(&self.watched)
                    .map(|(member, watched)| snapshot(member.node.cluster(), now, watched))
                    .collect();
                self.output.snapshots.push(Snapshot {
                    time: now.as_secs_f64(),
                    clusters,
                });
            }
        }
    }

    /// Advances every touched cluster and runs every touched forwarder's
    /// session, in cluster order.
    fn settle(&mut self) {
        let now = self.now;
        let mut touched = std::mem::take(&mut self.dirty_list);
        touched.sort_unstable();
        for index in touched {
            self.dirty[index] = false;
            let member = &mut self.federation.members[index];
            self.transitions.clear();
            member
                .node
                .advance(now, &mut self.out, &mut self.transitions);
            let mut preempted = false;
            for transition in &self.transitions {
                match transition.event {
                    JobEvent::Started => self.output.stats.started += 1,
                    JobEvent::Finished => self.output.stats.finished += 1,
                    _ => {}
                }
                preempted |= transition.preempted_by.is_some();
            }
            if preempted {
                let name = member.node.name().clone();
                let notes = member.node.cluster().preemption_notes(&self.transitions);
                self.output
                    .preemptions
                    .extend(notes.iter().map(|note| PreemptionRecord::new(&name, note)));
            }
            if let Some(forwarder) = &mut member.forwarder {
                forwarder.schedule(now, &mut self.out);
                self.output.decisions.extend(forwarder.take_records());
            }
            self.deliver_out();
            self.reschedule_wake(index);
        }
    }

    /// Schedules delivery of everything in `out` (no link delay yet).
    fn deliver_out(&mut self) {
        let at = self.now + Duration::ZERO;
        let mut envelopes = std::mem::take(&mut self.out);
        for envelope in envelopes.drain(..) {
            self.push(at, PHASE_EVENTS, EventKind::Deliver(envelope));
        }
        self.out = envelopes;
    }
}

/// Runs `scenario` with the event-loop engine.
pub fn run(scenario: &Scenario, until: Option<SimTime>) -> Result<RunOutput, BuildError> {
    run_plan(
        scenario,
        &RunPlan {
            until,
            probes: Vec::new(),
        },
    )
}

/// Runs `scenario` with the event-loop engine under `plan`.
pub fn run_plan(scenario: &Scenario, plan: &RunPlan) -> Result<RunOutput, BuildError> {
    Ok(EventLoop::with_plan(scenario, plan)?.run(None))
}

//! The event-loop engine: runs a whole federation in one thread, in
//! emulated time, over the sans-IO cores.
//!
//! Events sit in a binary heap ordered by (time, phase, sequence number), so
//! a run is deterministic. At each instant, submissions, deliveries and job
//! finishes are handled first (phase 0); then every touched cluster
//! advances (dispatch), then every touched forwarder runs one session, which
//! may deliver more messages at the same instant; counter snapshots are
//! taken next (phase 1), so an update reflects everything that happened at
//! its instant; probes that look at the clusters for expectations and
//! `--show` come last (phase 2). docs/architecture.md says why this engine,
//! not the actors, runs `mcfed run` by default.
//!
//! With [`RunOptions::chaos`] every message passes through the seeded fault
//! generator of [`crate::chaos`]; with [`RunOptions::oracle`] every recorded
//! decision is compared with the one the true counters would have given.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Duration;

use mcfed_cluster::Transition;
use mcfed_forwarder::DecisionRecord;
use mcfed_protocol::{ClusterName, Envelope, JobEvent, Message, SimTime};

use crate::build::{BuildError, Federation, GroupState, build};
use crate::chaos::{Chaos, ChaosConfig, Fate};
use crate::model::Scenario;
use crate::probe::{PreemptionRecord, Snapshot, snapshot};
use crate::records::{EventRecord, RecordRef, UsageRecord};

/// What a run produced.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    /// Every decision record, in the order decisions were made.
    pub decisions: Vec<DecisionRecord>,
    /// Job events (with [`RunOptions::events`]).
    pub events: Vec<EventRecord>,
    /// Slot usage samples (with [`RunOptions::events`]).
    pub usage: Vec<UsageRecord>,
    /// The order in which decisions, events and samples happened (with
    /// [`RunOptions::events`]).
    pub order: Vec<RecordRef>,
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

/// How to run a scenario: when it ends, what it looks at on the way, and
/// what it injects and records.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Stop here if earlier than the scenario's end.
    pub until: Option<SimTime>,
    /// Extra times to take snapshots at (besides the expectations'); the
    /// run goes on to the last of them even past the scenario's end.
    pub probes: Vec<SimTime>,
    /// Faults to inject (`None`: the scenario's own `[chaos]`, if any).
    pub chaos: Option<ChaosConfig>,
    /// Compare every decision with the oracle's.
    pub oracle: bool,
    /// Record job events and slot usage.
    pub events: bool,
    /// Count decisions without keeping their records (long replays that
    /// only need the totals; see [`RunStats`]).
    pub count_only: bool,
}

impl RunOptions {
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
    /// Counter updates lost on the way (chaos).
    pub updates_lost: u64,
    /// Counter updates a forwarder ignored as not newer than one applied.
    pub updates_ignored: u64,
    /// Counter updates applied although older than one already applied
    /// (checked independently of the view; must stay zero).
    pub update_regressions: u64,
    /// Samples in which a receive queue held more imported pending jobs than
    /// its IMPT_JOBBKLG (must stay zero).
    pub backlog_overflows: u64,
    /// Forwarding decisions made (recorded ones: a job's first decision and
    /// every change).
    pub decisions: u64,
    /// Decisions that forwarded a job.
    pub forwarded: u64,
    /// Decisions the oracle marked stale.
    pub stale_decisions: u64,
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
    Sample,
    Probe,
}

/// A heap entry: the ordering key and where the event's payload sits. The
/// payload (often a whole job message) stays put in a slab while the heap
/// moves these small entries around.
struct Event {
    at: SimTime,
    phase: u8,
    seq: u64,
    slot: u32,
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

fn secs(time: SimTime) -> f64 {
    time.as_secs_f64()
}

/// The event loop over a built federation.
pub struct EventLoop<'a> {
    scenario: &'a Scenario,
    federation: Federation,
    names: Vec<ClusterName>,
    heap: BinaryHeap<Event>,
    /// Payloads of pending events, by slot.
    slab: Vec<Option<EventKind>>,
    /// Free slots of `slab`.
    free_slots: Vec<u32>,
    next_seq: u64,
    now: SimTime,
    dirty: Vec<bool>,
    dirty_list: Vec<usize>,
    wake_at: Vec<Option<SimTime>>,
    out: Vec<Envelope>,
    transitions: Vec<Transition>,
    chaos: Option<Chaos>,
    oracle_seq: u64,
    events: bool,
    /// Whether to count decisions without rendering them.
    count_only: bool,
    /// How often slot usage is sampled (the shortest update interval).
    sample_interval: Option<Duration>,
    output: RunOutput,
    end: SimTime,
    /// Per cluster, the jobs expectations watch.
    watched: Vec<Vec<String>>,
}

impl<'a> EventLoop<'a> {
    /// Builds the scenario's clusters and schedules its submissions and
    /// counter updates.
    pub fn new(scenario: &'a Scenario, options: &RunOptions) -> Result<Self, BuildError> {
        let mut federation = build(scenario)?;
        let count = federation.members.len();
        let (probes, end) = options.resolve(scenario);
        let watched = scenario
            .clusters
            .iter()
            .map(|spec| scenario.watched_jobs(&spec.config.name))
            .collect();
        let chaos_config = options.chaos.clone().or_else(|| scenario.chaos.clone());
        let chaos = chaos_config.filter(ChaosConfig::is_active).map(Chaos::new);
        if options.oracle {
            for member in &mut federation.members {
                if let Some(forwarder) = &mut member.forwarder {
                    forwarder.enable_oracle();
                }
            }
        }
        let names = federation
            .members
            .iter()
            .map(|member| member.node.name().clone())
            .collect();
        let mut engine = EventLoop {
            scenario,
            names,
            heap: BinaryHeap::new(),
            slab: Vec::new(),
            free_slots: Vec::new(),
            next_seq: 0,
            now: SimTime::ZERO,
            dirty: vec![false; count],
            dirty_list: Vec::new(),
            wake_at: vec![None; count],
            out: Vec::new(),
            transitions: Vec::new(),
            chaos,
            oracle_seq: 0,
            events: options.events,
            count_only: options.count_only,
            sample_interval: None,
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
        let mut shortest_interval: Option<Duration> = None;
        for index in 0..count {
            let member = &engine.federation.members[index];
            let interval = member.node.cluster().update_interval();
            if let (Some(interval), true) = (interval, member.node.has_subscribers()) {
                engine.push(
                    SimTime::ZERO + interval,
                    PHASE_PUBLISH,
                    EventKind::Publish(index),
                );
            }
            if let Some(interval) = interval {
                shortest_interval = Some(shortest_interval.map_or(interval, |s| s.min(interval)));
            }
            engine.reschedule_wake(index);
        }
        if engine.events {
            engine.push(SimTime::ZERO, PHASE_PUBLISH, EventKind::Sample);
            engine.sample_interval = shortest_interval;
        }
        let edges = engine
            .chaos
            .as_ref()
            .map(Chaos::outage_edges)
            .unwrap_or_default();
        for (cluster, at) in edges {
            if let Some(&index) = engine.federation.index.get(&cluster) {
                engine.push(at, PHASE_EVENTS, EventKind::Wake(index));
            }
        }
        Ok(engine)
    }

    fn push(&mut self, at: SimTime, phase: u8, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slab[slot as usize] = Some(kind);
                slot
            }
            None => {
                self.slab.push(Some(kind));
                u32::try_from(self.slab.len() - 1).unwrap_or(u32::MAX)
            }
        };
        self.heap.push(Event {
            at,
            phase,
            seq,
            slot,
        });
    }

    fn touch(&mut self, index: usize) {
        if !self.dirty[index] {
            self.dirty[index] = true;
            self.dirty_list.push(index);
        }
    }

    fn reschedule_wake(&mut self, index: usize) {
        let member = &mut self.federation.members[index];
        let forwarder_next = member
            .forwarder
            .as_ref()
            .and_then(|forwarder| forwarder.next_event_time());
        let next = match (member.node.next_event_time(), forwarder_next) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if next != self.wake_at[index] {
            self.wake_at[index] = next;
            if let Some(at) = next {
                self.push(at, PHASE_EVENTS, EventKind::Wake(index));
            }
        }
    }

    fn down_until(&self, index: usize) -> Option<SimTime> {
        self.chaos
            .as_ref()
            .and_then(|chaos| chaos.down_until(&self.names[index], self.now))
    }

    fn local_time(&self, index: usize) -> SimTime {
        match &self.chaos {
            Some(chaos) => chaos.local_time(&self.names[index], self.now),
            None => self.now,
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
            let kind = self
                .slab
                .get_mut(event.slot as usize)
                .and_then(Option::take);
            self.free_slots.push(event.slot);
            if let Some(kind) = kind {
                self.handle(kind);
            }
        }
        if !self.dirty_list.is_empty() {
            self.settle();
        }
        self.output.stats.end = end;
        self.output
    }

    fn handle(&mut self, kind: EventKind) {
        match kind {
            EventKind::Submit(index) => self.submit(index),
            EventKind::Deliver(envelope) => self.deliver(envelope),
            EventKind::Wake(index) => {
                if self.wake_at[index] == Some(self.now) {
                    self.wake_at[index] = None;
                }
                self.touch(index);
            }
            EventKind::Publish(index) => self.publish(index),
            EventKind::Sample => self.sample(),
            EventKind::Probe => {
                let clusters = self
                    .federation
                    .members
                    .iter()
                    .zip(&self.watched)
                    .map(|(member, watched)| snapshot(member.node.cluster(), self.now, watched))
                    .collect();
                self.output.snapshots.push(Snapshot {
                    time: self.now.as_secs_f64(),
                    clusters,
                });
            }
        }
    }

    fn submit(&mut self, index: usize) {
        let now = self.now;
        let submission = &self.scenario.submissions[index];
        let Some(&member_index) = self.federation.index.get(&submission.cluster) else {
            return;
        };
        if let Some(until) = self.down_until(member_index) {
            // bsub waits for mbatchd to come back.
            self.push(until, PHASE_EVENTS, EventKind::Submit(index));
            return;
        }
        let member = &mut self.federation.members[member_index];
        let result = match (&mut member.forwarder, submission.forwarded) {
            (Some(forwarder), true) => forwarder
                .submit(now, &submission.queue, submission.spec.clone())
                .map_err(|error| error.to_string()),
            _ => member
                .node
                .submit(now, &submission.queue, submission.spec.clone())
                .map(|id| id.0)
                .map_err(|error| error.to_string()),
        };
        match result {
            Ok(id) => {
                self.output.stats.submitted += 1;
                if self.events {
                    let mut event =
                        self.event(member_index, &submission.spec.name, id, "submitted");
                    event.queue = Some(submission.queue.clone());
                    if submission.forwarded {
                        // A job of a send queue is its own source.
                        event.source_cluster = Some(event.cluster.clone());
                        event.source_job_id = Some(id);
                    }
                    self.push_event(event);
                }
            }
            Err(error) => {
                self.output.stats.refused += 1;
                tracing::warn!(job = %submission.spec.name, cluster = %submission.cluster, %error, "submission refused");
            }
        }
        self.touch(member_index);
    }

    fn deliver(&mut self, envelope: Envelope) {
        let Some(&member_index) = self.federation.index.get(&envelope.to) else {
            tracing::warn!(to = %envelope.to, "message to an unknown cluster dropped");
            return;
        };
        let is_update = matches!(envelope.message, Message::CounterUpdate(_));
        if let Some(until) = self.down_until(member_index) {
            if is_update {
                self.output.stats.updates_lost += 1;
            } else {
                self.push(until, PHASE_EVENTS, EventKind::Deliver(envelope));
            }
            return;
        }
        self.output.stats.messages += 1;
        let local = self.local_time(member_index);
        if envelope.message.is_for_forwarder() {
            if self.events {
                self.forwarder_event(member_index, &envelope);
            }
            let member = &mut self.federation.members[member_index];
            let Some(forwarder) = &mut member.forwarder else {
                tracing::debug!(to = %envelope.to, "no forwarder for message");
                return;
            };
            let sender = envelope.from.clone();
            let before = forwarder.view().applied_seq(&sender);
            forwarder.handle(local, &envelope.from, envelope.message);
            if is_update {
                let after = forwarder.view().applied_seq(&sender);
                match (before, after) {
                    (Some(before), Some(after)) if after == before => {
                        self.output.stats.updates_ignored += 1
                    }
                    (Some(before), Some(after)) if after < before => {
                        self.output.stats.update_regressions += 1
                    }
                    _ => {}
                }
            }
        } else {
            let member = &mut self.federation.members[member_index];
            member
                .node
                .handle(self.now, &envelope.from, envelope.message, &mut self.out);
            self.deliver_out();
        }
        self.touch(member_index);
    }

    fn publish(&mut self, index: usize) {
        let interval = self.federation.members[index]
            .node
            .cluster()
            .update_interval();
        if let Some(interval) = interval {
            self.push(
                self.now + interval,
                PHASE_PUBLISH,
                EventKind::Publish(index),
            );
        }
        let overflows = self.federation.members[index]
            .node
            .cluster()
            .backlog_overflows();
        self.output.stats.backlog_overflows += overflows as u64;
        if self.down_until(index).is_some() {
            return;
        }
        let local = self.local_time(index);
        let member = &mut self.federation.members[index];
        member.node.publish_counters(local, &mut self.out);
        self.output.stats.updates += self.out.len() as u64;
        self.deliver_out();
    }

    /// Advances every touched cluster, then runs every touched forwarder's
    /// session, in cluster order. A cluster that is down waits.
    fn settle(&mut self) {
        let now = self.now;
        let mut touched = std::mem::take(&mut self.dirty_list);
        touched.sort_unstable();
        for &index in &touched {
            self.dirty[index] = false;
        }
        touched.retain(|&index| match self.down_until(index) {
            Some(until) => {
                self.push(until, PHASE_EVENTS, EventKind::Wake(index));
                false
            }
            None => true,
        });
        for &index in &touched {
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
            if self.events {
                self.transition_events(index);
            }
            self.deliver_out();
            self.reschedule_wake(index);
        }
        for &index in &touched {
            let local = self.local_time(index);
            let needs_session = self.federation.members[index]
                .forwarder
                .as_ref()
                .is_some_and(|forwarder| forwarder.needs_session_at(local));
            if !needs_session {
                continue;
            }
            self.refresh_oracle(index);
            let local = self.local_time(index);
            if let Some(forwarder) = &mut self.federation.members[index].forwarder {
                forwarder.schedule(local, &mut self.out);
                let entries = forwarder.take_entries();
                let stats = &mut self.output.stats;
                stats.decisions += entries.len() as u64;
                stats.forwarded += entries.iter().filter(|e| e.forwarded()).count() as u64;
                stats.stale_decisions += entries.iter().filter(|e| e.stale()).count() as u64;
                if !self.count_only {
                    let records = entries
                        .iter()
                        .map(|entry| forwarder.render(entry))
                        .collect();
                    self.push_decisions(records);
                }
            }
            self.deliver_out();
        }
    }

    /// Feeds the oracle of forwarder `index` with the true counters of every
    /// cluster it sends to.
    fn refresh_oracle(&mut self, index: usize) {
        let Some(forwarder) = &self.federation.members[index].forwarder else {
            return;
        };
        if !forwarder.has_oracle() {
            return;
        }
        let receiver = self.names[index].clone();
        let remotes: Vec<usize> = forwarder
            .remote_clusters()
            .filter_map(|name| self.federation.index.get(name).copied())
            .collect();
        let mut truths = Vec::with_capacity(remotes.len());
        for remote in remotes {
            self.oracle_seq += 1;
            let local = self.local_time(remote);
            if let Some(truth) = self.federation.members[remote].node.true_counters(
                &receiver,
                self.oracle_seq,
                local,
            ) {
                truths.push(truth);
            }
        }
        if let Some(forwarder) = &mut self.federation.members[index].forwarder {
            for truth in &truths {
                forwarder.refresh_oracle(truth);
            }
        }
    }

    /// Schedules delivery of everything in `out`, through the faults if any.
    fn deliver_out(&mut self) {
        let now = self.now;
        let mut envelopes = std::mem::take(&mut self.out);
        for envelope in envelopes.drain(..) {
            let fate = match &mut self.chaos {
                None => Fate::Deliver(vec![now]),
                Some(chaos) => {
                    let update = matches!(envelope.message, Message::CounterUpdate(_));
                    chaos.fate(&envelope.from, &envelope.to, update, now)
                }
            };
            match fate {
                Fate::Lost => self.output.stats.updates_lost += 1,
                Fate::Deliver(times) => {
                    if let Some((&last, copies)) = times.split_last() {
                        for &at in copies {
                            self.push(at, PHASE_EVENTS, EventKind::Deliver(envelope.clone()));
                        }
                        self.push(last, PHASE_EVENTS, EventKind::Deliver(envelope));
                    }
                }
            }
        }
        self.out = envelopes;
    }

    fn push_event(&mut self, record: EventRecord) {
        self.output
            .order
            .push(RecordRef::Event(self.output.events.len()));
        self.output.events.push(record);
    }

    fn push_decisions(&mut self, records: Vec<DecisionRecord>) {
        if self.events {
            let start = self.output.decisions.len();
            self.output
                .order
                .extend((start..start + records.len()).map(RecordRef::Decision));
        }
        self.output.decisions.extend(records);
    }

    fn event(&self, cluster: usize, job: &str, job_id: u64, event: &str) -> EventRecord {
        EventRecord::new(
            secs(self.now),
            self.names[cluster].as_str(),
            job,
            job_id,
            event,
        )
    }

    /// Events for what a forwarder hears about its jobs.
    fn forwarder_event(&mut self, index: usize, envelope: &Envelope) {
        let (source_job, event, detail) = match &envelope.message {
            Message::JobAccept(accept) => (accept.source_job, "accepted", None),
            Message::JobReject(reject) => (
                reject.source_job,
                "refused",
                Some(reject.reason.to_string()),
            ),
            Message::JobReturn(returned) => (
                returned.source_job,
                "returned",
                Some(returned.reason.clone()),
            ),
            _ => return,
        };
        let name = self.federation.members[index]
            .forwarder
            .as_ref()
            .and_then(|forwarder| forwarder.job(source_job))
            .map(|job| job.spec.name.clone())
            .unwrap_or_default();
        let mut record = self.event(index, &name, source_job, event);
        record.source_cluster = Some(record.cluster.clone());
        record.source_job_id = Some(source_job);
        record.detail = detail.map(|detail| format!("{}: {detail}", envelope.from));
        if event == "accepted" {
            record.detail = Some(envelope.from.to_string());
        }
        self.push_event(record);
    }

    /// Events for the transitions the last advance of cluster `index` made.
    fn transition_events(&mut self, index: usize) {
        let transitions = std::mem::take(&mut self.transitions);
        for transition in &transitions {
            let record = EventRecord::of_transition(self.names[index].as_str(), transition);
            self.push_event(record);
        }
        self.transitions = transitions;
    }

    fn sample(&mut self) {
        for index in 0..self.federation.members.len() {
            let (slots_in_use, total_slots) =
                self.federation.members[index].node.cluster().slot_usage();
            if total_slots == 0 {
                continue;
            }
            self.output
                .order
                .push(RecordRef::Usage(self.output.usage.len()));
            self.output.usage.push(UsageRecord {
                record: "usage".to_owned(),
                time: secs(self.now),
                cluster: self.names[index].to_string(),
                slots_in_use,
                total_slots,
            });
        }
        if let Some(interval) = self.sample_interval {
            self.push(self.now + interval, PHASE_PUBLISH, EventKind::Sample);
        }
    }
}

/// Runs `scenario` with the event-loop engine.
pub fn run(scenario: &Scenario, options: &RunOptions) -> Result<RunOutput, BuildError> {
    Ok(EventLoop::new(scenario, options)?.run(None))
}

//! A journaled federation that crashes: one submission cluster and two
//! execution clusters, driven in emulated time, whose members are killed
//! at random moments and rebuilt from what their journals kept (the
//! records folded into the last snapshot), then reconnected as the
//! transport does (hellos and resumes both ways, which bring syncs). A
//! member that is down sends nothing; what is in flight to it is lost with
//! its connections, and its peers see its link go down. A member may also
//! be cut off from its peers while it keeps running (a partition): both
//! sides see the links go down, and reconnect when it heals.
//!
//! Properties: a journal folds into exactly the live member's state; and
//! every acknowledged job finishes exactly once, wherever the crashes
//! fall.

use std::collections::VecDeque;
use std::time::Duration;

use mcfed_cluster::{ClusterConfig, HostConfig, JobOrigin, QueueConfig, ReceiveFrom};
use mcfed_federation::{
    DurableState, Effects, JournalRecord, Member, MemberSpec, ProcessFacts, SnapshotBuilder,
};
use mcfed_forwarder::{ForwarderConfig, Reachability, ScheduleMode, SendQueueConfig};
use mcfed_protocol::{
    ClusterName, Envelope, Hello, JobEvent, JobSpec, Message, QueueName, Resume, SimTime,
};
use proptest::prelude::*;
use rustc_hash::FxHashMap;

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

const INTERVAL: Duration = Duration::from_secs(30);

fn execution(cluster: &str, hosts: u32) -> ClusterConfig {
    let mut queue = QueueConfig::new(QueueName::new("high").expect("valid"));
    queue.receive_from = Some(ReceiveFrom::Listed(vec![name("C1")]));
    let mut config = ClusterConfig::new(name(cluster));
    config.hosts = (0..hosts)
        .map(|index| HostConfig::new(format!("{cluster}h{index}"), 2))
        .collect();
    config.queues = vec![queue];
    config.update_interval = Some(INTERVAL);
    config
}

fn submission() -> (ClusterConfig, ForwarderConfig) {
    let mut config = ClusterConfig::new(name("C1"));
    config.hosts = vec![HostConfig::new("c1h", 1)];
    config.queues = vec![QueueConfig::new(QueueName::new("send").expect("valid"))];
    config.update_interval = Some(INTERVAL);
    let forwarder = ForwarderConfig {
        cluster: name("C1"),
        mode: ScheduleMode::ResourceOnly,
        send_queues: vec![SendQueueConfig {
            name: QueueName::new("send").expect("valid"),
            send_to: vec![
                "high@C2".parse().expect("valid"),
                "high@C3".parse().expect("valid"),
            ],
            max_rsched_time: None,
            fairshare: false,
            aps_group: None,
        }],
        max_forwards: 1000,
        reachability: Reachability {
            stale_after: vec![(name("C2"), INTERVAL * 5), (name("C3"), INTERVAL * 5)],
            reclaim_after: Some(Duration::from_secs(100)),
        },
    };
    (config, forwarder)
}

/// One process: its member, its journal (a snapshot and the records since),
/// its lineage, and until when it is down.
struct Process {
    member: Member,
    snapshot: DurableState,
    records: Vec<JournalRecord>,
    lineage: u64,
    down_until: Option<SimTime>,
    /// Cut off from its peers (alive) until then.
    cut_until: Option<SimTime>,
    /// Restarted, connecting to its peers until then: it runs, but what it
    /// sends waits and what is sent to it is lost.
    connect_at: Option<SimTime>,
    /// How long its next restart takes to connect.
    connect_delay: Duration,
    /// What it sent while connecting.
    held: Vec<Envelope>,
    /// A snapshot being made a slice at a time, as a process makes it.
    building: Option<SnapshotBuilder>,
}

impl Process {
    fn journal(&mut self) {
        let records = self.member.take_journal();
        if let Some(building) = &mut self.building {
            building.note(&records).expect("the records encode");
        }
        self.records.extend(records);
    }

    /// A compaction as a process makes it: the first call begins a
    /// snapshot and encodes a slice of it; the next (the federation ran
    /// meanwhile) finishes it, which must read back as the member's state
    /// as `Member::durable_state` copies it then, and replaces the journal.
    fn compact_in_slices(&mut self) {
        self.journal();
        match self.building.take() {
            None => {
                // Whole, from the member, it reads back the same too.
                self.compact_through_view();
                let mut building = SnapshotBuilder::begin(&self.member);
                building.advance(&self.member, 1).expect("encodes");
                self.building = Some(building);
            }
            Some(building) => {
                let facts = ProcessFacts {
                    lineage: self.lineage,
                    epoch_unix_ms: 7,
                };
                let bytes = building
                    .finish(&self.member, Some(facts))
                    .expect("the snapshot encodes");
                let mut read: DurableState =
                    postcard::from_bytes(&bytes).expect("the snapshot decodes");
                read.process = None;
                assert_eq!(read, self.member.durable_state(), "the snapshot in slices");
                self.snapshot = read;
                self.records.clear();
            }
        }
    }

    /// The next snapshot as a process writes it: encoded straight from
    /// the member (`Member::snapshot_view`) and read back as a
    /// `DurableState`, which must be the member's state as
    /// `Member::durable_state` copies it.
    fn compact_through_view(&self) {
        let facts = ProcessFacts {
            lineage: self.lineage,
            epoch_unix_ms: 7,
        };
        let bytes = postcard::to_allocvec(&self.member.snapshot_view(Some(facts)))
            .expect("the snapshot encodes");
        let mut read: DurableState = postcard::from_bytes(&bytes).expect("the snapshot decodes");
        assert_eq!(read.process, Some(facts));
        read.process = None;
        assert_eq!(read, self.member.durable_state(), "the snapshot view");
    }

    /// What replaying the journal gives.
    fn replayed(&self) -> DurableState {
        let mut state = self.snapshot.clone();
        for record in self.records.iter().cloned() {
            state.apply(record);
        }
        state
    }
}

struct Federation {
    configs: Vec<(ClusterConfig, Option<ForwarderConfig>, Vec<ClusterName>)>,
    processes: Vec<Process>,
    /// Envelopes in flight, delivered at the next step.
    in_flight: VecDeque<Envelope>,
    now: SimTime,
    next_lineage: u64,
    /// Peers that will notice a dead process's link is down: (when, the
    /// peer, the dead one).
    detections: Vec<(SimTime, usize, usize)>,
    /// Acknowledged jobs of C1.
    acknowledged: Vec<u64>,
    /// Finishes at the execution clusters, by C1's job id.
    finishes: FxHashMap<u64, u32>,
}

impl Federation {
    fn new() -> Self {
        let (c1, forwarder) = submission();
        let configs = vec![
            (c1, Some(forwarder), Vec::new()),
            (execution("C2", 3), None, vec![name("C1")]),
            (execution("C3", 2), None, vec![name("C1")]),
        ];
        let mut federation = Federation {
            configs,
            processes: Vec::new(),
            in_flight: VecDeque::new(),
            now: SimTime::ZERO,
            next_lineage: 1,
            detections: Vec::new(),
            acknowledged: Vec::new(),
            finishes: FxHashMap::default(),
        };
        for index in 0..3 {
            let (config, forwarder, subscribers) = &federation.configs[index];
            let spec = MemberSpec {
                config,
                forwarder: forwarder.as_ref(),
                subscribers,
                collectors: subscribers,
                initial_jobs: &[],
            };
            let (mut member, _) = Member::build(spec).expect("member");
            member.enable_journal();
            let snapshot = member.durable_state();
            let lineage = federation.next_lineage;
            federation.next_lineage += 1;
            federation.processes.push(Process {
                member,
                snapshot,
                records: Vec::new(),
                lineage,
                down_until: None,
                cut_until: None,
                connect_at: None,
                connect_delay: Duration::ZERO,
                held: Vec::new(),
                building: None,
            });
        }
        for index in 0..3 {
            federation.connect(index);
        }
        federation
    }

    fn name(&self, index: usize) -> ClusterName {
        self.configs[index].0.name.clone()
    }

    fn peers(index: usize) -> Vec<usize> {
        if index == 0 { vec![1, 2] } else { vec![0] }
    }

    /// What the transport does when `index` and each peer connect: each
    /// says hello and resumes, both ways; the links are up.
    fn connect(&mut self, index: usize) {
        for peer in Self::peers(index) {
            if !self.reachable(peer) {
                continue;
            }
            for (from, to) in [(index, peer), (peer, index)] {
                let from_name = self.name(from);
                let lineage = self.processes[from].lineage;
                let mut effects = Effects::default();
                let now = self.now;
                let member = &mut self.processes[to].member;
                member.link(now, &from_name, true);
                for message in [
                    Message::Hello(Hello::with_incarnation(from_name.clone(), lineage)),
                    Message::Resume(Resume {
                        lineage,
                        epoch_unix_ms: 0,
                    }),
                ] {
                    member.receive(
                        now,
                        Envelope {
                            from: from_name.clone(),
                            to: member.name().clone(),
                            message,
                        },
                        &mut effects,
                    );
                }
                self.absorb(to, effects);
            }
        }
    }

    /// Journals what `index` produced and sends its envelopes.
    fn absorb(&mut self, index: usize, mut effects: Effects) {
        self.processes[index].journal();

        for transition in &effects.transitions {
            if let (JobEvent::Finished, JobOrigin::Forwarded { source_job, .. }) =
                (transition.event, &transition.origin)
            {
                *self.finishes.entry(*source_job).or_default() += 1;
            }
        }
        if self.processes[index].connect_at.is_some() {
            self.processes[index].held.append(&mut effects.envelopes);
        } else {
            self.in_flight.extend(effects.envelopes.drain(..));
        }
    }

    /// Whether `index` can be reached: up, connected, not cut off.
    fn reachable(&self, index: usize) -> bool {
        let process = &self.processes[index];
        process.down_until.is_none() && process.connect_at.is_none() && process.cut_until.is_none()
    }

    fn submit(&mut self, run_secs: u64) {
        if self.processes[0].down_until.is_some() {
            return;
        }
        let spec = JobSpec::simple("j", "u", Duration::from_secs(run_secs));
        let submitted = self.processes[0]
            .member
            .submit(self.now, "send", spec, &mut Effects::default())
            .expect("accepted");
        // Acknowledged once its record is durable.
        self.processes[0].journal();
        self.acknowledged.push(submitted.job_id);
    }

    /// Kills `index`: it is down for `down_for`; what is in flight to it is
    /// lost; its peers notice its link is down `detect` later (a connection
    /// timing out), unless it is back by then; once restarted it takes
    /// `connect` to reach its peers.
    fn kill(&mut self, index: usize, down_for: Duration, detect: Duration, connect: Duration) {
        if self.processes[index].down_until.is_some() || self.processes[index].cut_until.is_some() {
            return;
        }
        let process = &mut self.processes[index];
        process.down_until = Some(self.now + down_for);
        process.building = None;
        process.connect_at = None;
        process.held.clear();
        process.connect_delay = connect;
        let to = self.name(index);
        self.in_flight.retain(|envelope| envelope.to != to);
        for peer in Self::peers(index) {
            self.detections.push((self.now + detect, peer, index));
        }
    }

    /// The peers that notice a dead link now.
    fn detect(&mut self) {
        let now = self.now;
        let (due, later): (Vec<_>, Vec<_>) =
            self.detections.drain(..).partition(|(at, _, _)| *at <= now);
        self.detections = later;
        for (_, peer, dead) in due {
            let alive_again = self.processes[dead].down_until.is_none()
                && self.processes[dead].connect_at.is_none();
            if alive_again || self.processes[peer].down_until.is_some() {
                continue;
            }
            let name = self.name(dead);
            self.processes[peer].member.link(now, &name, false);
            self.processes[peer].journal();
        }
    }

    /// Cuts `index` off from its peers for `secs`: both sides see the links
    /// go down, and what is in flight between them is lost.
    fn cut(&mut self, index: usize, down_for: Duration) {
        if self.processes[index].down_until.is_some() || self.processes[index].cut_until.is_some() {
            return;
        }
        self.processes[index].cut_until = Some(self.now + down_for);
        let name = self.name(index);
        self.in_flight
            .retain(|envelope| envelope.to != name && envelope.from != name);
        for peer in Self::peers(index) {
            let peer_name = self.name(peer);
            let now = self.now;
            for (at, other) in [(peer, &name), (index, &peer_name)] {
                self.processes[at].member.link(now, other, false);
                self.processes[at].journal();
            }
        }
    }

    /// Whether `index` is cut off from its peers.
    fn is_cut(&self, index: usize) -> bool {
        self.processes[index].cut_until.is_some()
    }

    /// Restarts `index` from its journal and reconnects it.
    fn restart(&mut self, index: usize) {
        let state = self.processes[index].replayed();
        let (config, forwarder, subscribers) = &self.configs[index];
        let spec = MemberSpec {
            config,
            forwarder: forwarder.as_ref(),
            subscribers,
            collectors: subscribers,
            initial_jobs: &[],
        };
        let member = Member::restore(spec, state.clone(), self.now).expect("restored");
        let process = &mut self.processes[index];
        process.member = member;
        process.snapshot = state;
        process.records.clear();
        process.down_until = None;
        process.connect_at = Some(self.now + process.connect_delay);
        // The actor steps at once (jobs whose time came while it was down
        // finish); what it sends waits until it connects.
        self.step_member(index);
    }

    /// `index`, restarted, reaches its peers: each sees its old link go
    /// down and the new one come up (hellos and resumes both ways), then
    /// what it sent meanwhile goes out.
    fn reconnect(&mut self, index: usize) {
        self.processes[index].connect_at = None;
        let name = self.name(index);
        for peer in Self::peers(index) {
            if self.reachable(peer) {
                let now = self.now;
                self.processes[peer].member.link(now, &name, false);
                self.processes[peer].journal();
            }
        }
        self.connect(index);
        let held = std::mem::take(&mut self.processes[index].held);
        self.in_flight.extend(held);
    }

    fn step_member(&mut self, index: usize) {
        if self.processes[index].down_until.is_some() {
            return;
        }
        let mut effects = Effects::default();
        self.processes[index].member.step(self.now, &mut effects);
        self.absorb(index, effects);
    }

    /// One second: restarts due, deliveries, steps, updates.
    fn tick(&mut self) {
        self.now += Duration::from_secs(1);
        for index in 0..3 {
            if self.processes[index]
                .down_until
                .is_some_and(|until| until <= self.now)
            {
                self.restart(index);
            }
            if self.processes[index]
                .connect_at
                .is_some_and(|at| at <= self.now)
            {
                self.reconnect(index);
            }
            if self.processes[index]
                .cut_until
                .is_some_and(|until| until <= self.now)
            {
                self.processes[index].cut_until = None;
                self.connect(index);
            }
        }
        self.detect();
        let deliveries: Vec<Envelope> = self.in_flight.drain(..).collect();
        for envelope in deliveries {
            let Some(index) = (0..3).find(|&i| self.name(i) == envelope.to) else {
                continue;
            };
            let from = (0..3).find(|&i| self.name(i) == envelope.from);
            if !self.reachable(index) || from.is_some_and(|from| self.is_cut(from)) {
                continue;
            }
            let mut effects = Effects::default();
            self.processes[index]
                .member
                .receive(self.now, envelope, &mut effects);
            self.absorb(index, effects);
        }
        for index in 0..3 {
            self.step_member(index);
        }
        if self.now.as_millis() % 30_000 == 0 {
            for index in 1..3 {
                if self.processes[index].down_until.is_some() {
                    continue;
                }
                let mut effects = Effects::default();
                self.processes[index].member.publish(self.now, &mut effects);
                self.absorb(index, effects);
            }
        }
    }

    /// Whether every acknowledged job has finished.
    fn drained(&self) -> bool {
        (0..3).all(|index| self.reachable(index))
            && self.in_flight.is_empty()
            && self
                .acknowledged
                .iter()
                .all(|id| self.finishes.contains_key(id))
    }

    /// Checks that each live process's journal replays to its state (a
    /// forwarded job that finished is kept by the journal until the next
    /// snapshot, though the member forgets it once its submission cluster's
    /// sync no longer lists it).
    fn check_journals(&self) {
        for process in &self.processes {
            if process.down_until.is_some() {
                continue;
            }
            let mut replayed = process.replayed();
            let live = process.member.durable_state();
            replayed
                .finished
                .retain(|key, _| live.finished.contains_key(key));
            assert_eq!(replayed.jobs, live.jobs, "scheduler jobs");
            assert_eq!(replayed.sources, live.sources, "send-queue jobs");
            assert_eq!(replayed.finished, live.finished);
            assert!(replayed.next_job_id >= live.next_job_id);
            assert!(replayed.next_source_id >= live.next_source_id);
            assert_eq!(replayed.update_seq, live.update_seq);
            for (cluster, remote) in &live.remotes {
                let kept = &replayed.remotes[cluster];
                assert!(kept.next_forward_seq >= remote.next_forward_seq);
                assert_eq!(kept.applied_seq, remote.applied_seq);
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Act {
    /// Submit jobs running this long (seconds).
    Submit(u64),
    /// Let time pass (seconds).
    Wait(u64),
    /// Kill a process for this long (seconds); its peers notice after the
    /// second figure, its restart connects after the third.
    Kill(usize, u64, u64, u64),
    /// Cut a process off from its peers for this long (seconds).
    Cut(usize, u64),
    /// Compact a process's journal: its state becomes the snapshot.
    Compact(usize),
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        6 => (20u64..400).prop_map(Act::Submit),
        3 => (1u64..60).prop_map(Act::Wait),
        1 => (0usize..3, 1u64..500, 0u64..300, 0u64..300)
            .prop_map(|(index, secs, detect, connect)| Act::Kill(index, secs, detect, connect)),
        1 => (0usize..3, 1u64..500).prop_map(|(index, secs)| Act::Cut(index, secs)),
        1 => (0usize..3).prop_map(Act::Compact),
    ]
}

proptest! {
    #[test]
    fn every_acknowledged_job_finishes_exactly_once(acts in proptest::collection::vec(act(), 1..120)) {
        let mut federation = Federation::new();
        for act in acts {
            match act {
                Act::Submit(run) => federation.submit(run),
                Act::Wait(secs) => {
                    for _ in 0..secs {
                        federation.tick();
                    }
                }
                Act::Kill(index, secs, detect, connect) => federation.kill(
                    index,
                    Duration::from_secs(secs),
                    Duration::from_secs(detect),
                    Duration::from_secs(connect),
                ),
                Act::Cut(index, secs) => federation.cut(index, Duration::from_secs(secs)),
                Act::Compact(index) => {
                    let process = &mut federation.processes[index];
                    if process.down_until.is_none() {
                        process.compact_in_slices();
                    }
                }
            }
            federation.check_journals();
        }
        // No more crashes: run until every job has finished.
        let mut left = 20_000;
        while !federation.drained() && left > 0 {
            federation.tick();
            left -= 1;
        }
        let missing: Vec<u64> = federation
            .acknowledged
            .iter()
            .copied()
            .filter(|id| !federation.finishes.contains_key(id))
            .collect();
        prop_assert!(missing.is_empty(), "never finished: {missing:?}");
        let twice: Vec<(u64, u32)> = federation
            .finishes
            .iter()
            .filter(|(_, count)| **count > 1)
            .map(|(id, count)| (*id, *count))
            .collect();
        prop_assert!(twice.is_empty(), "finished more than once: {twice:?}");
        let forwarder = federation.processes[0].member.forwarder().expect("forwarder");
        prop_assert_eq!(forwarder.jobs().count(), 0);
    }
}

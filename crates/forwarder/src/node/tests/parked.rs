//! Parked jobs (issue 25, item 2): a job that pended is decided again only
//! when its decision can change, and a job no remote queue can take costs
//! nothing until the federation changes — without changing any decision:
//! a property runs the same inputs through a forwarder that parks and one
//! that decides every waiting job at every session, and compares every
//! reply, message and record.

use std::time::Duration;

use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, GpuSlots, Hello, JobAccept, JobAction, JobChanges,
    JobEvent, JobReject, JobReturn, JobSpec, JobStatus, Message, QueueCounters, QueueFacts,
    QueueName, RejectReason, SimTime,
};
use proptest::prelude::*;

use super::name;
use crate::mode::ScheduleMode;
use crate::node::{ForwarderConfig, ForwarderNode, Reachability, SendQueueConfig};
use crate::record::OutcomeKind;

fn at(secs: u64) -> SimTime {
    SimTime::from_secs(secs)
}

fn send_queue(queue: &str, send_to: &[&str], fairshare: bool, aps: bool) -> SendQueueConfig {
    SendQueueConfig {
        name: QueueName::new(queue).expect("valid"),
        send_to: send_to
            .iter()
            .map(|at| at.parse().expect("valid"))
            .collect(),
        max_rsched_time: None,
        fairshare,
        aps_group: aps.then(|| QueueName::new(queue).expect("valid")),
    }
}

/// C1 sends from `send` to high@C2 and high@C3 under `mode`.
fn two_queue_forwarder(mode: &str) -> ForwarderNode {
    ForwarderNode::new(ForwarderConfig {
        cluster: name("C1"),
        mode: mode.parse::<ScheduleMode>().expect("valid"),
        send_queues: vec![send_queue("send", &["high@C2", "high@C3"], false, false)],
        max_forwards: 3,
        reachability: Default::default(),
    })
}

/// Counters of `high@sender`: `total` slots, `available` free, nothing
/// more reachable by preemption.
fn counters(sender: &str, seq: u64, total: u32, available: u32) -> Message {
    Message::CounterUpdate(CounterUpdate {
        sender: name(sender),
        seq,
        taken_at: at(seq * 30),
        queues: vec![QueueCounters {
            cluster: name(sender),
            queue: QueueName::new("high").expect("valid"),
            priority: 40,
            total_slots: total,
            available_slots: available,
            running_slots: total - available,
            pending_slots: 0,
            preemptable_available_slots: available,
            lowest_preemptable_priority: None,
            impt_jobbklg: None,
            imported_pending_jobs: 0,
            resources: Vec::new(),
            slot_group: 0,
            gpu_slots: Default::default(),
            gpu_free_slots: Default::default(),
        }],
        forwards_received: Vec::new(),
    })
}

fn wide(name: &str, slots: u32) -> JobSpec {
    JobSpec {
        slots,
        ..JobSpec::simple(name, "u", Duration::from_secs(60))
    }
}

fn forwards(out: &[Envelope]) -> Vec<u64> {
    out.iter()
        .filter_map(|envelope| match &envelope.message {
            Message::JobForward(forward) => Some(forward.source_job),
            _ => None,
        })
        .collect()
}

#[test]
fn a_job_no_queue_can_take_is_decided_once_until_the_federation_changes() {
    let mut node = two_queue_forwarder("COUNT_PREEMPTABLE");
    node.handle(at(30), &name("C2"), counters("C2", 1, 8, 8));
    node.handle(at(30), &name("C3"), counters("C3", 1, 8, 8));
    let ids: Vec<u64> = (0..100)
        .map(|i| {
            node.submit(at(30), "send", wide(&format!("w{i}"), 16))
                .expect("submit")
        })
        .collect();
    let mut out = Vec::new();
    node.schedule(at(30), &mut out);
    assert!(forwards(&out).is_empty());
    let records = node.take_records();
    assert_eq!(records.len(), 100, "each job's first decision is recorded");
    assert!(
        records[0]
            .reason
            .starts_with("no remote queue can take the job as the federation stands"),
        "{}",
        records[0].reason
    );
    assert!(
        records[0]
            .reason
            .contains("the queue has 8 slots in all; the job needs 16")
    );
    assert!(node.job(ids[0]).is_some_and(|job| job.fits_nowhere()));
    assert_eq!(
        node.decisions_computed(),
        1,
        "one decision serves the shape"
    );
    assert_eq!(node.parked_jobs(), 100);
    // The workload moves: updates change every figure but the slots in all.
    for seq in 2..50 {
        let free = u32::try_from(seq % 8).expect("small");
        node.handle(at(seq * 30), &name("C2"), counters("C2", seq, 8, free));
        node.schedule(at(seq * 30), &mut out);
    }
    assert!(forwards(&out).is_empty());
    assert!(node.take_records().is_empty());
    assert_eq!(node.decisions_computed(), 1, "nothing is decided again");
    // C3 grows to 16 slots: the jobs fit there now, and go in order.
    node.handle(at(1_500), &name("C3"), counters("C3", 2, 16, 16));
    node.schedule(at(1_500), &mut out);
    assert_eq!(forwards(&out), ids);
    assert_eq!(node.parked_jobs(), 0);
    assert_eq!(node.waiting_jobs(), 0);
}

#[test]
fn a_parked_group_costs_one_decision_per_session() {
    let mut node = two_queue_forwarder("COUNT_PREEMPTABLE PENDING_WHEN_NOSLOTS");
    node.handle(at(30), &name("C2"), counters("C2", 1, 8, 0));
    node.handle(at(30), &name("C3"), counters("C3", 1, 8, 0));
    let ids: Vec<u64> = (0..50)
        .map(|i| {
            node.submit(at(30), "send", wide(&format!("j{i}"), 1))
                .expect("submit")
        })
        .collect();
    let mut out = Vec::new();
    node.schedule(at(30), &mut out);
    assert_eq!(node.take_records().len(), 50);
    assert_eq!(node.parked_jobs(), 50);
    let before = node.decisions_computed();
    for seq in 2..12 {
        // Pending figures move; still no slot anywhere.
        node.handle(at(seq * 30), &name("C2"), counters("C2", seq, 8, 0));
        let Message::CounterUpdate(mut update) = counters("C3", seq, 8, 0) else {
            unreachable!()
        };
        update.queues[0].pending_slots = u32::try_from(seq).expect("small");
        node.handle(at(seq * 30), &name("C3"), Message::CounterUpdate(update));
        node.schedule(at(seq * 30), &mut out);
    }
    assert_eq!(
        node.decisions_computed() - before,
        10,
        "one decision per session for the 50 jobs"
    );
    assert!(node.take_records().is_empty());
    // Three slots free up at C2: the three oldest go, the rest stay parked
    // with nothing new to record.
    node.handle(at(400), &name("C2"), counters("C2", 20, 8, 3));
    out.clear();
    node.schedule(at(400), &mut out);
    assert_eq!(forwards(&out), ids[..3].to_vec());
    let records = node.take_records();
    assert_eq!(records.len(), 3);
    assert!(records.iter().all(|r| r.outcome == OutcomeKind::Forwarded));
    assert_eq!(node.parked_jobs(), 47);
}

#[test]
fn a_parked_job_modified_or_switched_is_decided_again_in_its_place() {
    let mut node = ForwarderNode::new(ForwarderConfig {
        cluster: name("C1"),
        mode: ScheduleMode::ResourceOnly,
        send_queues: vec![
            send_queue("send", &["high@C2"], false, false),
            send_queue("other", &["high@C3"], false, false),
        ],
        max_forwards: 3,
        reachability: Default::default(),
    });
    node.handle(at(30), &name("C2"), counters("C2", 1, 8, 8));
    node.handle(at(30), &name("C3"), counters("C3", 1, 32, 32));
    let first = node.submit(at(30), "send", wide("a", 16)).expect("submit");
    let second = node.submit(at(30), "send", wide("b", 16)).expect("submit");
    let mut out = Vec::new();
    node.schedule(at(30), &mut out);
    assert_eq!(node.parked_jobs(), 2);
    let modify = JobAction::Modify(JobChanges {
        slots: Some(4),
        ..JobChanges::default()
    });
    node.control(at(40), second, &modify, &mut out)
        .expect("modified");
    node.control(
        at(40),
        first,
        &JobAction::Switch(QueueName::new("other").expect("valid")),
        &mut out,
    )
    .expect("switched");
    assert_eq!(node.parked_jobs(), 0);
    node.schedule(at(40), &mut out);
    assert_eq!(forwards(&out), vec![first, second]);
}

#[test]
fn an_unreachable_cluster_changes_a_parked_jobs_reason() {
    let mut node = two_queue_forwarder("RESOURCE_ONLY");
    node.handle(at(30), &name("C2"), counters("C2", 1, 8, 8));
    node.handle(at(30), &name("C3"), counters("C3", 1, 8, 8));
    let id = node.submit(at(30), "send", wide("w", 16)).expect("submit");
    let mut out = Vec::new();
    node.schedule(at(30), &mut out);
    node.take_records();
    node.link(&name("C3"), false, at(60));
    node.handle(at(60), &name("C2"), counters("C2", 2, 8, 4));
    node.schedule(at(60), &mut out);
    let records = node.take_records();
    assert_eq!(records.len(), 1);
    assert!(records[0].reason.starts_with("remote cluster unreachable"));
    assert!(!node.job(id).is_some_and(|job| job.fits_nowhere()));
}

// The property: parking changes no decision.

/// Counters of one queue, as generated.
#[derive(Clone, Debug)]
struct Figures {
    total: u32,
    available: u32,
    preemptable_extra: u32,
    pending: u32,
    backlog: Option<u32>,
    imported: u32,
    resource: u8,
    /// GPUs on every host of the queue (0: none).
    gpus: u32,
}

#[derive(Clone, Debug)]
enum Op {
    Submit {
        queue: u8,
        slots: u32,
        resource: u8,
        gpus: u32,
    },
    Update {
        cluster: u8,
        figures: Vec<Figures>,
    },
    Hello {
        cluster: u8,
        totals: Vec<u32>,
    },
    Answer {
        pick: usize,
        how: u8,
    },
    Link {
        cluster: u8,
        up: bool,
    },
    Control {
        pick: usize,
        what: u8,
        slots: u32,
    },
    Schedule {
        advance: u64,
    },
}

const CLUSTERS: [&str; 3] = ["C2", "C3", "C4"];
const RESOURCES: [&str; 3] = ["", "gpu", "bigmem"];

/// The receive queues of each remote cluster.
fn queues_of(cluster: &str) -> &'static [&'static str] {
    match cluster {
        "C3" => &["q", "r"],
        _ => &["q"],
    }
}

fn property_forwarder(mode: ScheduleMode) -> ForwarderNode {
    ForwarderNode::new(ForwarderConfig {
        cluster: name("C1"),
        mode,
        send_queues: vec![
            send_queue("a", &["q@C2", "q@C3", "r@C3"], false, false),
            send_queue("b", &["r@C3", "q@C4"], false, false),
            send_queue("f", &["q@C2", "q@C4"], true, false),
            send_queue("p", &["q@C3", "q@C4"], false, true),
        ],
        max_forwards: 3,
        reachability: Reachability {
            stale_after: vec![(name("C4"), Duration::from_secs(90))],
            reclaim_after: Some(Duration::from_secs(120)),
        },
    })
}

fn figures() -> impl Strategy<Value = Figures> {
    (
        prop_oneof![Just(4u32), Just(8), Just(12)],
        0u32..=12,
        0u32..=4,
        0u32..20,
        proptest::option::of(0u32..3),
        0u32..4,
        (0u8..3, 0u32..3),
    )
        .prop_map(
            |(
                total,
                available,
                preemptable_extra,
                pending,
                backlog,
                imported,
                (resource, gpus),
            )| {
                Figures {
                    total,
                    available: available.min(total),
                    preemptable_extra,
                    pending,
                    backlog,
                    imported,
                    resource,
                    gpus,
                }
            },
        )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..4, 1u32..=12, 0u8..3, prop_oneof![3 => Just(0u32), 1 => 1u32..3])
            .prop_map(|(queue, slots, resource, gpus)| Op::Submit { queue, slots, resource, gpus }),
        3 => (0u8..3, proptest::collection::vec(figures(), 2))
            .prop_map(|(cluster, figures)| Op::Update { cluster, figures }),
        1 => (0u8..3, proptest::collection::vec(prop_oneof![Just(4u32), Just(8), Just(12)], 2))
            .prop_map(|(cluster, totals)| Op::Hello { cluster, totals }),
        3 => (0usize..64, 0u8..6).prop_map(|(pick, how)| Op::Answer { pick, how }),
        1 => (0u8..3, any::<bool>()).prop_map(|(cluster, up)| Op::Link { cluster, up }),
        1 => (0usize..64, 0u8..5, 1u32..=12)
            .prop_map(|(pick, what, slots)| Op::Control { pick, what, slots }),
        4 => (0u64..60).prop_map(|advance| Op::Schedule { advance }),
    ]
}

/// What the inputs are made from: the forwards seen, the jobs submitted.
#[derive(Default)]
struct World {
    now: u64,
    seq: [u64; 3],
    jobs: Vec<u64>,
    /// Forwards seen: (cluster, source job, forward seq, id there once
    /// accepted).
    forwards: Vec<(ClusterName, u64, u64, Option<u64>)>,
    next_dest: u64,
}

impl World {
    fn input(&mut self, op: &Op) -> Option<(ClusterName, Message)> {
        match op {
            Op::Update { cluster, figures } => {
                let sender = CLUSTERS[usize::from(*cluster)];
                self.seq[usize::from(*cluster)] += 1;
                let queues = queues_of(sender)
                    .iter()
                    .zip(figures)
                    .map(|(queue, f)| QueueCounters {
                        cluster: name(sender),
                        queue: QueueName::new(queue).expect("valid"),
                        priority: 40,
                        total_slots: f.total,
                        available_slots: f.available,
                        running_slots: f.total - f.available,
                        pending_slots: f.pending,
                        preemptable_available_slots: (f.available + f.preemptable_extra)
                            .min(f.total),
                        lowest_preemptable_priority: (f.preemptable_extra > 0).then_some(20),
                        impt_jobbklg: f.backlog,
                        imported_pending_jobs: f.imported,
                        resources: [RESOURCES[usize::from(f.resource)]]
                            .iter()
                            .filter(|r| !r.is_empty())
                            .map(|r| (*r).to_owned())
                            .collect(),
                        slot_group: 0,
                        gpu_slots: GpuSlots::from_hosts([(f.gpus, f.total)]),
                        gpu_free_slots: GpuSlots::from_hosts([(f.gpus, f.available)]),
                    })
                    .collect();
                Some((
                    name(sender),
                    Message::CounterUpdate(CounterUpdate {
                        sender: name(sender),
                        seq: self.seq[usize::from(*cluster)],
                        taken_at: at(self.now),
                        queues,
                        forwards_received: Vec::new(),
                    }),
                ))
            }
            Op::Hello { cluster, totals } => {
                let sender = CLUSTERS[usize::from(*cluster)];
                let facts = queues_of(sender)
                    .iter()
                    .zip(totals)
                    .map(|(queue, &total)| QueueFacts {
                        queue: QueueName::new(queue).expect("valid"),
                        priority: 40,
                        total_slots: total,
                        impt_jobbklg: None,
                        resources: Vec::new(),
                        slot_group: 0,
                        gpu_slots: Default::default(),
                    })
                    .collect();
                Some((
                    name(sender),
                    Message::Hello(Hello::new(name(sender)).with_queues(facts)),
                ))
            }
            Op::Answer { pick, how } => self.answer(*pick, *how),
            _ => None,
        }
    }

    fn answer(&mut self, pick: usize, how: u8) -> Option<(ClusterName, Message)> {
        if self.forwards.is_empty() {
            return None;
        }
        let index = pick % self.forwards.len();
        let (cluster, source_job, forward_seq, dest) = self.forwards[index].clone();
        let message = match (how, dest) {
            (0, _) | (3.., None) => {
                self.next_dest += 1;
                self.forwards[index].3 = Some(self.next_dest);
                Message::JobAccept(JobAccept {
                    forward_seq,
                    source_job,
                    dest_job: self.next_dest,
                })
            }
            (1 | 2, _) => {
                self.forwards.remove(index);
                Message::JobReject(JobReject {
                    forward_seq,
                    source_job,
                    reason: if how == 1 {
                        RejectReason::BacklogFull { limit: 1 }
                    } else {
                        RejectReason::NotAllowed
                    },
                })
            }
            (3, Some(dest_job)) => Message::JobStatus(JobStatus {
                source_job,
                dest_job,
                event: JobEvent::Started,
                at: at(self.now),
            }),
            (4, Some(dest_job)) => {
                self.forwards.remove(index);
                Message::JobStatus(JobStatus {
                    source_job,
                    dest_job,
                    event: JobEvent::Finished,
                    at: at(self.now),
                })
            }
            (_, Some(dest_job)) => {
                self.forwards.remove(index);
                Message::JobReturn(JobReturn {
                    source_job,
                    dest_job,
                    reason: "returned".to_owned(),
                })
            }
        };
        Some((cluster, message))
    }

    fn saw(&mut self, out: &[Envelope]) {
        for envelope in out {
            if let Message::JobForward(forward) = &envelope.message {
                self.forwards.push((
                    envelope.to.clone(),
                    forward.source_job,
                    forward.forward_seq,
                    None,
                ));
            }
        }
    }
}

/// Every job's state, in id order.
fn states(node: &ForwarderNode) -> Vec<String> {
    let mut jobs: Vec<String> = node
        .jobs()
        .map(|job| format!("{} {:?} {}", job.id, job.state, job.forwards))
        .collect();
    jobs.sort();
    jobs
}

fn control(what: u8, slots: u32) -> JobAction {
    match what {
        0 => JobAction::Kill,
        1 => JobAction::Stop,
        2 => JobAction::Resume,
        3 => JobAction::Switch(
            QueueName::new(if slots % 2 == 0 { "a" } else { "b" }).expect("valid"),
        ),
        _ => JobAction::Modify(JobChanges {
            slots: Some(slots),
            ..JobChanges::default()
        }),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn parking_changes_no_decision(
        mode in 0usize..10,
        ops in proptest::collection::vec(op(), 1..150),
    ) {
        let mode = ScheduleMode::all()[mode];
        let mut parking = property_forwarder(mode);
        let mut plain = property_forwarder(mode);
        plain.parking = false;
        let mut world = World::default();
        for op in &ops {
            let now = at(world.now);
            match op {
                Op::Submit { queue, slots, resource, gpus } => {
                    let queue = ["a", "b", "f", "p"][usize::from(*queue)];
                    let mut spec = wide(&format!("j{}", world.jobs.len()), *slots);
                    spec.user = ["u1", "u2"][world.jobs.len() % 2].into();
                    spec.gpus = *gpus;
                    if *resource > 0 {
                        spec.resources = vec![RESOURCES[usize::from(*resource)].to_owned()];
                    }
                    let id = parking.submit(now, queue, spec.clone());
                    prop_assert_eq!(&id, &plain.submit(now, queue, spec));
                    world.jobs.extend(id.ok());
                }
                Op::Link { cluster, up } => {
                    let cluster = name(CLUSTERS[usize::from(*cluster)]);
                    parking.link(&cluster, *up, now);
                    plain.link(&cluster, *up, now);
                }
                Op::Control { pick, what, slots } => {
                    if world.jobs.is_empty() {
                        continue;
                    }
                    let id = world.jobs[pick % world.jobs.len()];
                    let action = control(*what, *slots);
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    let done = parking.control(now, id, &action, &mut a);
                    prop_assert_eq!(&done, &plain.control(now, id, &action, &mut b));
                    prop_assert_eq!(a, b);
                }
                Op::Schedule { advance } => {
                    world.now += advance;
                    let now = at(world.now);
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    parking.schedule(now, &mut a);
                    plain.schedule(now, &mut b);
                    prop_assert_eq!(&a, &b);
                    world.saw(&a);
                }
                Op::Update { .. } | Op::Hello { .. } | Op::Answer { .. } => {
                    let Some((from, message)) = world.input(op) else {
                        continue;
                    };
                    let handled = parking.handle(now, &from, message.clone());
                    prop_assert_eq!(handled, plain.handle(now, &from, message));
                }
            }
            prop_assert_eq!(parking.take_records(), plain.take_records());
            prop_assert_eq!(states(&parking), states(&plain));
            prop_assert_eq!(parking.waiting_jobs(), plain.waiting_jobs());
            prop_assert_eq!(parking.needs_session(), plain.needs_session());
        }
        prop_assert!(parking.decisions_computed() <= plain.decisions_computed());
    }
}

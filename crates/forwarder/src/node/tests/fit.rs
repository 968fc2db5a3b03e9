//! What a job can use at a remote queue (issue 27): GPUs filter and score
//! queues as slots do (item 5), a queue that refused a job waits for its
//! next update before it is tried again for it (item 5), and a queue whose
//! preemptable slots the local increments used up has no victim left
//! (item 7).

use std::time::Duration;

use mcfed_protocol::{
    CounterUpdate, Envelope, GpuSlots, JobReject, JobSpec, Message, QueueCounters, QueueName,
    RejectReason, SimTime,
};

use super::name;
use crate::mode::ScheduleMode;
use crate::node::{ForwarderConfig, ForwarderNode, SendQueueConfig};
use crate::record::OutcomeKind;

fn at(secs: u64) -> SimTime {
    SimTime::from_secs(secs)
}

/// C1 sends from `send` to high@C2 and high@C3 under `mode`.
fn forwarder(mode: &str) -> ForwarderNode {
    ForwarderNode::new(ForwarderConfig {
        cluster: name("C1"),
        mode: mode.parse::<ScheduleMode>().expect("valid"),
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
        max_forwards: 8,
        reachability: Default::default(),
    })
}

/// Counters of `high@sender`: 8 slots, `available` free, `preemptable`
/// reachable (free ones included) with victims of `victim`'s priority.
fn counters(sender: &str, available: u32, preemptable: u32, victim: Option<u32>) -> QueueCounters {
    QueueCounters {
        cluster: name(sender),
        queue: QueueName::new("high").expect("valid"),
        priority: 40,
        total_slots: 8,
        available_slots: available,
        running_slots: 8 - available,
        pending_slots: 0,
        preemptable_available_slots: preemptable,
        lowest_preemptable_priority: victim,
        impt_jobbklg: None,
        imported_pending_jobs: 0,
        resources: Vec::new(),
        slot_group: 0,
        gpu_slots: GpuSlots::default(),
        gpu_free_slots: GpuSlots::default(),
    }
}

fn update(sender: &str, seq: u64, queue: QueueCounters) -> Message {
    Message::CounterUpdate(CounterUpdate {
        sender: name(sender),
        seq,
        taken_at: at(seq * 30),
        queues: vec![queue],
        forwards_received: Vec::new(),
    })
}

fn job(name: &str, slots: u32, gpus: u32) -> JobSpec {
    JobSpec {
        slots,
        gpus,
        ..JobSpec::simple(name, "u", Duration::from_secs(60))
    }
}

/// Where each forward of `out` went: (job, cluster).
fn forwards(out: &[Envelope]) -> Vec<(u64, String)> {
    out.iter()
        .filter_map(|envelope| match &envelope.message {
            Message::JobForward(forward) => Some((forward.source_job, envelope.to.to_string())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_gpu_job_goes_where_hosts_have_its_gpus_free() {
    let mut node = forwarder("COUNT_PREEMPTABLE");
    // C2: 8 free slots, no GPU. C3: 2 free slots on a host with 1 free
    // GPU (of 2), 8 slots on hosts with 2 GPUs.
    node.handle(
        at(30),
        &name("C2"),
        update("C2", 1, counters("C2", 8, 8, None)),
    );
    let mut c3 = counters("C3", 2, 2, None);
    c3.gpu_slots = GpuSlots::from_hosts([(2, 8)]);
    c3.gpu_free_slots = GpuSlots::from_hosts([(1, 2)]);
    node.handle(at(30), &name("C3"), update("C3", 1, c3));
    let gpu = node
        .submit(at(30), "send", job("gpu", 1, 1))
        .expect("submit");
    let plain = node
        .submit(at(30), "send", job("plain", 1, 0))
        .expect("submit");
    let wide = node
        .submit(at(30), "send", job("wide", 1, 3))
        .expect("submit");
    let mut out = Vec::new();
    node.schedule(at(30), &mut out);
    assert_eq!(
        forwards(&out),
        vec![(gpu, "C3".to_owned()), (plain, "C2".to_owned())],
        "the GPU job skips C2; the plain one takes C2's free slots"
    );
    let records = node.take_records();
    assert!(
        records[0].candidates[0]
            .why
            .contains("hosts with the GPUs the job asks for on each host have 0 slots")
    );
    // No host anywhere has 3 GPUs: that job fits nowhere.
    assert!(node.job(wide).is_some_and(|job| job.fits_nowhere()));
    assert!(
        records[2]
            .reason
            .starts_with("no remote queue can take the job")
    );
}

#[test]
fn busy_gpus_are_no_free_slots_for_a_gpu_job() {
    let mut node = forwarder("COUNT_PREEMPTABLE");
    // C2: 6 free slots, but its GPUs are all busy; C3: 1 free slot with a
    // free GPU.
    let mut c2 = counters("C2", 6, 6, None);
    c2.gpu_slots = GpuSlots::from_hosts([(1, 8)]);
    node.handle(at(30), &name("C2"), update("C2", 1, c2));
    let mut c3 = counters("C3", 1, 1, None);
    c3.gpu_slots = GpuSlots::from_hosts([(1, 8)]);
    c3.gpu_free_slots = GpuSlots::from_hosts([(1, 1)]);
    node.handle(at(30), &name("C3"), update("C3", 1, c3));
    let id = node
        .submit(at(30), "send", job("gpu", 1, 1))
        .expect("submit");
    let mut out = Vec::new();
    node.schedule(at(30), &mut out);
    assert_eq!(forwards(&out), vec![(id, "C3".to_owned())]);
    let record = &node.take_records()[0];
    assert_eq!(record.tier.as_deref(), Some("free slots"));
    assert_eq!(record.candidates[0].available, Some(0));
}

fn refuse(node: &mut ForwarderNode, from: &str, id: u64, forward_seq: u64) {
    node.handle(
        at(40),
        &name(from),
        Message::JobReject(JobReject {
            forward_seq,
            source_job: id,
            reason: RejectReason::NotAllowed,
        }),
    );
}

#[test]
fn a_queue_that_refused_a_job_waits_for_its_next_update() {
    let mut node = forwarder("RESOURCE_ONLY");
    node.handle(
        at(30),
        &name("C2"),
        update("C2", 1, counters("C2", 8, 8, None)),
    );
    node.handle(
        at(30),
        &name("C3"),
        update("C3", 1, counters("C3", 4, 4, None)),
    );
    let id = node.submit(at(30), "send", job("j", 1, 0)).expect("submit");
    let mut out = Vec::new();
    node.schedule(at(30), &mut out);
    assert_eq!(forwards(&out), vec![(id, "C2".to_owned())]);
    // C2 refuses: the job goes to C3, not straight back to C2.
    refuse(&mut node, "C2", id, 1);
    out.clear();
    node.schedule(at(40), &mut out);
    assert_eq!(forwards(&out), vec![(id, "C3".to_owned())]);
    // C3 refuses too: the job pends, both queues out until they speak.
    refuse(&mut node, "C3", id, 1);
    out.clear();
    node.schedule(at(40), &mut out);
    assert!(forwards(&out).is_empty());
    let records = node.take_records();
    let last = records.last().expect("a record");
    assert_eq!(last.outcome, OutcomeKind::Pending);
    assert!(
        last.candidates
            .iter()
            .all(|c| c.why.starts_with("it refused the job"))
    );
    // C3's next update, the same figures: C3 may be tried again.
    node.handle(
        at(60),
        &name("C3"),
        update("C3", 2, counters("C3", 4, 4, None)),
    );
    assert!(node.needs_session());
    out.clear();
    node.schedule(at(60), &mut out);
    assert_eq!(forwards(&out), vec![(id, "C3".to_owned())]);
}

#[test]
fn a_queue_with_its_preemptable_slots_used_up_has_no_victim() {
    // C2: 2 slots to preempt from a queue of priority 10; C3: 1 slot to
    // preempt from one of priority 20. j1 and j2 take C2's two; j3 (2
    // slots) fits neither even after preemption, and only C3 can still
    // preempt anything.
    let mut node = forwarder("COUNT_PREEMPTABLE PREEMPTABLE_QUEUE_PRIORITY");
    node.handle(
        at(30),
        &name("C2"),
        update("C2", 1, counters("C2", 0, 2, Some(10))),
    );
    node.handle(
        at(30),
        &name("C3"),
        update("C3", 1, counters("C3", 0, 1, Some(20))),
    );
    let j1 = node
        .submit(at(30), "send", job("j1", 1, 0))
        .expect("submit");
    let j2 = node
        .submit(at(30), "send", job("j2", 1, 0))
        .expect("submit");
    let j3 = node
        .submit(at(30), "send", job("j3", 2, 0))
        .expect("submit");
    let mut out = Vec::new();
    node.schedule(at(30), &mut out);
    assert_eq!(
        forwards(&out),
        vec![
            (j1, "C2".to_owned()),
            (j2, "C2".to_owned()),
            (j3, "C3".to_owned())
        ]
    );
    let records = node.take_records();
    let c2 = &records[2].candidates[0];
    assert_eq!(
        (c2.preemptable_available, c2.victim_priority),
        (Some(0), None)
    );
}

//! A send queue with APS_PRIORITY (and the send queues of its
//! QUEUE_GROUP): waiting jobs are decided in the order of their APS values,
//! in the places the group's jobs take in submission order; records cite
//! the value; `bmod -aps` values set here order them; forwarded jobs carry
//! their JPRIORITY.

use std::time::Duration;

use mcfed_protocol::{
    ApsChange, ApsNumber, JobAction, JobChanges, JobOptions, JobSpec, Message, QueueName, SimTime,
};

use super::{name, update};
use crate::mode::ScheduleMode;
use crate::node::{
    ApsQuery, ApsValue, Controlled, ForwarderConfig, ForwarderNode, SendOrder, SendQueueConfig,
    SubmissionOrder,
};

/// APS = the job's `-sp` (WEIGHT[[JPRIORITY, 1]] with no escalation), a
/// system value as it is, an ADMIN value added; JPRIORITY carried is `-sp`
/// plus a minute's worth of pending per point.
struct SpOrder;

impl SendOrder for SpOrder {
    fn priority(&self, _: &QueueName, _: &str, _: u32) -> Option<f64> {
        None
    }

    fn aps_value(&self, job: &ApsQuery<'_>) -> Option<ApsValue> {
        let sp = f64::from(job.spec.user_priority().unwrap_or(50));
        Some(match job.set {
            Some(ApsChange::System(value)) => ApsValue::System(value.0),
            Some(ApsChange::Admin(value)) => ApsValue::Calculated(sp + value.0),
            _ => ApsValue::Calculated(sp),
        })
    }

    fn job_priority(&self, spec: &JobSpec, pended: Duration) -> Option<u32> {
        let minutes = u32::try_from(pended.as_secs() / 60).unwrap_or(u32::MAX);
        Some(spec.user_priority().unwrap_or(50).saturating_add(minutes))
    }
}

fn send_queue(name: &str, aps_group: Option<&str>) -> SendQueueConfig {
    SendQueueConfig {
        name: QueueName::new(name).expect("valid"),
        send_to: vec!["high@C2".parse().expect("valid")],
        max_rsched_time: None,
        fairshare: false,
        aps_group: aps_group.map(|group| QueueName::new(group).expect("valid")),
    }
}

fn aps_forwarder(send_queues: Vec<SendQueueConfig>) -> ForwarderNode {
    ForwarderNode::new(ForwarderConfig {
        cluster: name("C1"),
        mode: "COUNT_PREEMPTABLE PENDING_WHEN_NOSLOTS"
            .parse::<ScheduleMode>()
            .expect("valid"),
        send_queues,
        max_forwards: 3,
        reachability: Default::default(),
    })
}

fn job(name: &str, sp: Option<u32>) -> JobSpec {
    let mut spec = JobSpec::simple(name, "alice", Duration::from_secs(600));
    spec.set_options(JobOptions {
        user_priority: sp,
        ..JobOptions::default()
    });
    spec
}

fn at(secs: u64) -> SimTime {
    SimTime::from_secs(secs)
}

/// The names of the jobs forwarded in `out`, in order.
fn forwarded(out: &[mcfed_protocol::Envelope]) -> Vec<String> {
    out.iter()
        .filter_map(|envelope| match &envelope.message {
            Message::JobForward(forward) => Some(forward.spec.name.to_string()),
            _ => None,
        })
        .collect()
}

/// Submits `jobs` (name, `-sp`, queue) at one second apart, from 1s.
fn submit_all(node: &mut ForwarderNode, jobs: &[(&str, Option<u32>, &str)]) -> Vec<u64> {
    jobs.iter()
        .zip(1..)
        .map(|(&(name, sp, queue), secs)| {
            node.submit(at(secs), queue, job(name, sp)).expect("submit")
        })
        .collect()
}

#[test]
fn the_highest_aps_value_goes_first_where_fcfs_would_send_another() {
    let mut node = aps_forwarder(vec![send_queue("send", Some("send"))]);
    node.handle(at(10), &name("C2"), update("C2", 1, 1));
    submit_all(
        &mut node,
        &[
            ("low", Some(10), "send"),
            ("default", None, "send"),
            ("high", Some(90), "send"),
        ],
    );
    let mut out = Vec::new();
    node.schedule_with(at(10), &mut out, &SpOrder);
    assert_eq!(
        forwarded(&out),
        vec!["high"],
        "one free slot: the best value"
    );
    let records = node.take_records();
    let first = &records[0];
    assert_eq!(first.job, "high");
    assert_eq!(first.aps_value, Some(90.0));
    assert_eq!(first.aps_kind.as_deref(), Some("calculated"));
    assert_eq!(first.aps_ahead_of, Some(2));
    assert!(
        first
            .reason
            .ends_with("[APS value 90.00 put it ahead of 2 earlier submissions]"),
        "{}",
        first.reason
    );
    let default = records
        .iter()
        .find(|r| r.job == "default")
        .expect("decided");
    assert_eq!(default.aps_value, Some(50.0));
    assert_eq!(default.aps_ahead_of, Some(1), "low was still waiting");
    let low = records.iter().find(|r| r.job == "low").expect("decided");
    assert!(
        low.reason
            .ends_with("[APS value 10.00; no earlier submission was waiting]")
    );
    // Without a scheduler to ask, the same queue goes first come, first
    // served and the records cite no value.
    let mut plain = aps_forwarder(vec![send_queue("send", Some("send"))]);
    plain.handle(at(10), &name("C2"), update("C2", 1, 1));
    submit_all(
        &mut plain,
        &[
            ("low", Some(10), "send"),
            ("default", None, "send"),
            ("high", Some(90), "send"),
        ],
    );
    let mut out = Vec::new();
    plain.schedule_with(at(10), &mut out, &SubmissionOrder);
    assert_eq!(forwarded(&out), vec!["low"]);
    assert!(plain.take_records().iter().all(|r| r.aps_value.is_none()));
}

#[test]
fn ties_go_to_the_earlier_submission_and_plain_queues_keep_their_places() {
    // `plain` has no APS: its jobs keep their places (the 2nd and 4th
    // decided); the APS queue's places (1st, 3rd) go by value.
    let mut node = aps_forwarder(vec![
        send_queue("send", Some("send")),
        send_queue("plain", None),
    ]);
    node.handle(at(10), &name("C2"), update("C2", 1, 10));
    submit_all(
        &mut node,
        &[
            ("tie-a", Some(40), "send"),
            ("p1", Some(99), "plain"),
            ("tie-b", Some(40), "send"),
            ("p2", Some(1), "plain"),
            ("best", Some(70), "send"),
        ],
    );
    let mut out = Vec::new();
    node.schedule_with(at(10), &mut out, &SpOrder);
    assert_eq!(forwarded(&out), vec!["best", "p1", "tie-a", "p2", "tie-b"]);
    let records = node.take_records();
    let p1 = records.iter().find(|r| r.job == "p1").expect("decided");
    assert_eq!(p1.aps_value, None, "not an APS send queue");
    assert!(!p1.reason.contains("APS"));
}

#[test]
fn a_queue_group_orders_its_send_queues_together() {
    let mut node = aps_forwarder(vec![
        send_queue("send", Some("send")),
        send_queue("member", Some("send")),
    ]);
    node.handle(at(10), &name("C2"), update("C2", 1, 10));
    let ids = submit_all(
        &mut node,
        &[
            ("s-low", Some(20), "send"),
            ("m-high", Some(80), "member"),
            ("s-mid", Some(50), "send"),
        ],
    );
    assert_eq!(
        node.waiting_order("member", at(10), &SpOrder),
        Some(vec![ids[1], ids[2], ids[0]]),
        "the group's order, whichever queue is asked"
    );
    let mut out = Vec::new();
    node.schedule_with(at(10), &mut out, &SpOrder);
    assert_eq!(forwarded(&out), vec!["m-high", "s-mid", "s-low"]);
}

#[test]
fn bmod_aps_values_set_here_order_the_waiting_jobs() {
    let mut node = aps_forwarder(vec![
        send_queue("send", Some("send")),
        send_queue("plain", None),
    ]);
    let ids = submit_all(
        &mut node,
        &[
            ("a", Some(60), "send"),
            ("b", Some(10), "send"),
            ("c", Some(30), "send"),
            ("p", None, "plain"),
        ],
    );
    let aps = |change| {
        JobAction::Modify(JobChanges {
            aps: Some(change),
            ..JobChanges::default()
        })
    };
    let mut out = Vec::new();
    let system = aps(ApsChange::System(ApsNumber(5.0)));
    assert!(matches!(
        node.control(at(5), ids[1], &system, &mut out),
        Ok(Controlled::Here(_))
    ));
    let admin = aps(ApsChange::Admin(ApsNumber(40.0)));
    assert!(node.control(at(5), ids[2], &admin, &mut out).is_ok());
    assert!(
        node.control(at(5), ids[3], &admin, &mut out)
            .is_err_and(|why| why.contains("no APS_PRIORITY")),
        "a send queue without APS takes no value"
    );
    // b: system 5 before every calculated value; c: 30 + 40 = 70; a: 60.
    assert_eq!(
        node.waiting_order("send", at(6), &SpOrder),
        Some(vec![ids[1], ids[2], ids[0]])
    );
    // The value is journaled with the job.
    let image = node.job_image(ids[1]).expect("image");
    assert_eq!(image.aps, Some(ApsChange::System(ApsNumber(5.0))));
    assert!(
        node.control(at(7), ids[1], &aps(ApsChange::Clear), &mut out)
            .is_ok()
    );
    assert_eq!(node.job(ids[1]).and_then(|job| job.aps), None);
    assert_eq!(
        node.waiting_order("send", at(8), &SpOrder),
        Some(vec![ids[2], ids[0], ids[1]]),
        "-apsn: b is back to its calculated value"
    );
    node.handle(at(10), &name("C2"), update("C2", 1, 1));
    node.schedule_with(at(10), &mut out, &SpOrder);
    assert_eq!(forwarded(&out), vec!["c"], "one free slot");
    let records = node.take_records();
    assert_eq!(records[0].aps_value, Some(70.0));
}

#[test]
fn a_forwarded_job_carries_its_jpriority() {
    let mut node = aps_forwarder(vec![send_queue("plain", None)]);
    node.handle(at(0), &name("C2"), update("C2", 1, 5));
    node.submit(at(0), "plain", job("j", Some(20)))
        .expect("submit");
    let mut out = Vec::new();
    node.schedule_with(at(180), &mut out, &SpOrder);
    let carried = out.iter().find_map(|envelope| match &envelope.message {
        Message::JobForward(forward) => Some(forward.spec.carried_job_priority()),
        _ => None,
    });
    assert_eq!(carried, Some(Some(23)), "-sp 20 escalated over 3 minutes");
    assert_eq!(
        node.jobs()
            .next()
            .and_then(|job| job.spec.carried_job_priority()),
        None,
        "the job here keeps its own spec"
    );
    let mut plain = aps_forwarder(vec![send_queue("plain", None)]);
    plain.handle(at(0), &name("C2"), update("C2", 1, 5));
    plain
        .submit(at(0), "plain", job("j", Some(20)))
        .expect("submit");
    let mut out = Vec::new();
    plain.schedule(at(180), &mut out);
    assert!(out.iter().all(|envelope| match &envelope.message {
        Message::JobForward(forward) => forward.spec.carried_job_priority().is_none(),
        _ => true,
    }));
}

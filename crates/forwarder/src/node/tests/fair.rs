//! A FAIRSHARE send queue: waiting jobs go in the order of their users'
//! dynamic priorities, which count the slots forwarded and not finished.

use std::time::Duration;

use mcfed_protocol::{JobSpec, Message, QueueName, SimTime};

use super::{name, update};
use crate::mode::ScheduleMode;
use crate::node::{ForwarderConfig, ForwarderNode, SendOrder, SendQueueConfig};

/// Every user has one share, RUN_JOB_FACTOR 3 and FWD_JOB_FACTOR 1:
/// 1 / (3 + 1 + fwd_job_slots).
struct OneShareEach;

impl SendOrder for OneShareEach {
    fn priority(&self, _: &QueueName, _: &str, fwd_job_slots: u32) -> Option<f64> {
        Some(1.0 / (4.0 + f64::from(fwd_job_slots)))
    }
}

fn fair_forwarder() -> ForwarderNode {
    ForwarderNode::new(ForwarderConfig {
        cluster: name("C1"),
        mode: "COUNT_PREEMPTABLE PENDING_WHEN_NOSLOTS"
            .parse::<ScheduleMode>()
            .expect("valid"),
        send_queues: vec![SendQueueConfig {
            name: QueueName::new("send").expect("valid"),
            send_to: vec!["high@C2".parse().expect("valid")],
            max_rsched_time: None,
            fairshare: true,
            aps_group: None,
        }],
        max_forwards: 3,
        reachability: Default::default(),
    })
}

fn job(user: &str, name: &str) -> JobSpec {
    JobSpec::simple(name, user, Duration::from_secs(600))
}

#[test]
fn forwarded_slots_lower_a_users_turn() {
    let mut node = fair_forwarder();
    let now = SimTime::from_secs(30);
    node.handle(now, &name("C2"), update("C2", 1, 2));
    let a1 = node
        .submit(now, "send", job("alice", "a1"))
        .expect("submit");
    let a2 = node
        .submit(now, "send", job("alice", "a2"))
        .expect("submit");
    let b1 = node.submit(now, "send", job("bob", "b1")).expect("submit");
    let mut out = Vec::new();
    node.schedule_with(now, &mut out, &OneShareEach);
    let forwarded: Vec<u64> = out
        .iter()
        .filter_map(|envelope| match &envelope.message {
            Message::JobForward(forward) => Some(forward.source_job),
            _ => None,
        })
        .collect();
    // alice and bob tie at 1/4, alice's job is earlier; then bob's 1/4
    // beats alice's 1/5; then C2 is full and a2 waits.
    assert_eq!(forwarded, vec![a1, b1]);
    assert_eq!(node.forwarded_slots(0, "alice"), 1);
    assert_eq!(node.forwarded_slots(0, "bob"), 1);
    assert!(
        node.job(a2)
            .is_some_and(|job| job.state == super::SourceState::Waiting)
    );
    // In plain submission order a2 would have gone before b1.
    let mut plain = fair_forwarder();
    plain.handle(now, &name("C2"), update("C2", 1, 2));
    for (user, name) in [("alice", "a1"), ("alice", "a2"), ("bob", "b1")] {
        plain.submit(now, "send", job(user, name)).expect("submit");
    }
    let mut out = Vec::new();
    plain.schedule(now, &mut out);
    let sent: Vec<String> = out
        .iter()
        .filter_map(|envelope| match &envelope.message {
            Message::JobForward(forward) => Some(forward.spec.name.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(sent, vec!["a1", "a2"]);
}

//! The cluster's endpoint between processes: recalls, syncs with the
//! submission cluster, and a submission cluster that restarts.

use std::time::Duration;

use mcfed_cluster::{
    Cluster, ClusterConfig, ClusterNode, HostConfig, JobState, QueueConfig, ReceiveFrom,
};
use mcfed_protocol::{
    ClusterName, Envelope, HeldJob, Hello, JobEvent, JobForward, JobRecall, JobSpec, JobSync,
    Message, QueueName, SimTime,
};

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

/// C2 with one 1-slot host and a queue receiving from C1.
fn node() -> ClusterNode {
    let mut queue = QueueConfig::new(QueueName::new("high").expect("valid"));
    queue.receive_from = Some(ReceiveFrom::Listed(vec![name("C1")]));
    let mut config = ClusterConfig::new(name("C2"));
    config.hosts = vec![HostConfig::new("h", 1)];
    config.queues = vec![queue];
    config.update_interval = Some(Duration::from_secs(30));
    let cluster = Cluster::new(config).expect("cluster");
    ClusterNode::new(cluster, [name("C1")])
}

fn forward(node: &mut ClusterNode, source_job: u64, seq: u64) -> u64 {
    let mut out = Vec::new();
    node.handle(
        SimTime::ZERO,
        &name("C1"),
        Message::JobForward(JobForward {
            forward_seq: seq,
            source_job,
            queue: QueueName::new("high").expect("valid"),
            spec: JobSpec::simple("j", "u", Duration::from_secs(600)),
            submitted_at: SimTime::ZERO,
            attempt: 0,
        }),
        &mut out,
    );
    node.advance(SimTime::ZERO, &mut Vec::new(), &mut Vec::new());
    match &out[0].message {
        Message::JobAccept(accept) => accept.dest_job,
        other => panic!("not accepted: {other:?}"),
    }
}

fn kinds(out: &[Envelope]) -> Vec<&'static str> {
    out.iter().map(|envelope| envelope.message.kind()).collect()
}

#[test]
fn a_recall_returns_a_pending_job_and_leaves_a_running_one() {
    let mut node = node();
    let running = forward(&mut node, 1, 1);
    let pending = forward(&mut node, 2, 2);
    let state = |node: &ClusterNode, id: u64| {
        node.cluster()
            .jobs()
            .find(|job| job.id.0 == id)
            .map(|job| job.state)
    };
    assert_eq!(state(&node, running), Some(JobState::Running));
    assert_eq!(state(&node, pending), Some(JobState::Pending));
    let mut out = Vec::new();
    for (source_job, dest_job) in [(1, running), (2, pending)] {
        node.handle(
            SimTime::from_secs(200),
            &name("C1"),
            Message::JobRecall(JobRecall {
                source_job,
                dest_job,
                reason: "too long".into(),
            }),
            &mut out,
        );
    }
    assert_eq!(kinds(&out), vec!["job-return"]);
    assert_eq!(state(&node, pending), None, "the pending job left");
    assert_eq!(state(&node, running), Some(JobState::Running));
    assert_eq!(
        node.cluster()
            .queue_counters(0, SimTime::ZERO)
            .imported_pending_jobs,
        0
    );
}

#[test]
fn a_sync_reports_lost_jobs_confirms_held_ones_and_withdraws_the_rest() {
    let mut node = node();
    let held = forward(&mut node, 1, 1);
    let unlisted = forward(&mut node, 2, 2);
    let mut out = Vec::new();
    node.handle(
        SimTime::from_secs(10),
        &name("C1"),
        Message::JobSync(JobSync {
            jobs: vec![
                HeldJob {
                    source_job: 1,
                    forward_seq: 1,
                },
                HeldJob {
                    source_job: 3,
                    forward_seq: 3,
                },
            ],
        }),
        &mut out,
    );
    assert_eq!(kinds(&out), vec!["job-accept", "job-status", "job-lost"]);
    match &out[1].message {
        Message::JobStatus(status) => {
            assert_eq!((status.dest_job, status.event), (held, JobEvent::Started));
        }
        other => panic!("{other:?}"),
    }
    match &out[2].message {
        Message::JobLost(lost) => assert_eq!((lost.source_job, lost.forward_seq), (3, 3)),
        other => panic!("{other:?}"),
    }
    assert!(node.cluster().jobs().all(|job| job.id.0 != unlisted));
    assert_eq!(node.forwarded_job(&name("C1"), 2), None);
}

#[test]
fn a_restarted_submission_cluster_loses_its_earlier_jobs() {
    let mut node = node();
    let mut out = Vec::new();
    let hello = |incarnation| Message::Hello(Hello::with_incarnation(name("C1"), incarnation));
    node.handle(SimTime::ZERO, &name("C1"), hello(1), &mut out);
    forward(&mut node, 1, 1);
    node.handle(SimTime::ZERO, &name("C1"), hello(1), &mut out);
    assert_eq!(node.cluster().jobs().count(), 1, "same run: kept");
    node.handle(SimTime::ZERO, &name("C1"), hello(2), &mut out);
    assert_eq!(node.cluster().jobs().count(), 0, "new run: withdrawn");
    assert!(out.is_empty());
    // Its forwards are numbered from 1 again and reflected from scratch.
    forward(&mut node, 1, 1);
    node.publish_counters(SimTime::from_secs(30), SimTime::from_secs(30), &mut out);
    match &out[0].message {
        Message::CounterUpdate(update) => assert_eq!(update.last_forward_from(&name("C1")), 1),
        other => panic!("{other:?}"),
    }
}

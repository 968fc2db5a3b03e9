//! The cluster's endpoint between processes: recalls, syncs with the
//! submission cluster, withdrawals, a submission cluster that restarts, the
//! jobs held back while out of step with it, and what a journal restores.

use std::time::Duration;

use mcfed_cluster::{
    Cluster, ClusterConfig, ClusterNode, HostConfig, JobState, QueueConfig, ReceiveFrom,
};
use mcfed_cluster::{ImageState, RestoredNode};
use mcfed_protocol::{
    ClusterName, Envelope, HeldJob, JobEvent, JobForward, JobRecall, JobSpec, JobSync, JobWithdraw,
    Message, QueueName, Resume, SimTime,
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
            send_queue: mcfed_protocol::QueueName::new("send").expect("a queue name"),
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
fn a_submission_cluster_that_lost_its_state_loses_its_earlier_jobs() {
    let mut node = node();
    let mut out = Vec::new();
    let resume = |lineage| {
        Message::Resume(Resume {
            lineage,
            epoch_unix_ms: 0,
        })
    };
    node.handle(SimTime::ZERO, &name("C1"), resume(1), &mut out);
    forward(&mut node, 1, 1);
    node.handle(SimTime::ZERO, &name("C1"), resume(1), &mut out);
    assert_eq!(
        node.cluster().jobs().count(),
        1,
        "same lineage (a restart from its journal, or a reconnection): kept"
    );
    node.handle(SimTime::ZERO, &name("C1"), resume(2), &mut out);
    assert_eq!(node.cluster().jobs().count(), 0, "new lineage: withdrawn");
    assert!(out.is_empty());
    // Its forwards are numbered from 1 again and reflected from scratch.
    forward(&mut node, 1, 1);
    node.publish_counters(SimTime::from_secs(30), SimTime::from_secs(30), &mut out);
    match &out[0].message {
        Message::CounterUpdate(update) => assert_eq!(update.last_forward_from(&name("C1")), 1),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_submission_cluster_that_lost_its_state_loses_its_parked_jobs_with_a_change_noted() {
    let mut node = node();
    let mut out = Vec::new();
    let resume = |lineage| {
        Message::Resume(Resume {
            lineage,
            epoch_unix_ms: 0,
        })
    };
    node.handle(SimTime::ZERO, &name("C1"), resume(1), &mut out);
    let running = forward(&mut node, 1, 1);
    let parked = [forward(&mut node, 2, 2), forward(&mut node, 3, 3)];
    node.track_changes();
    node.link(&name("C1"), false);
    assert_eq!(node.parked_jobs().count(), 2);
    assert!(node.take_changes().is_empty(), "parking writes nothing");
    node.handle(SimTime::ZERO, &name("C1"), resume(2), &mut out);
    assert_eq!(node.parked_jobs().count(), 0, "parked jobs withdrawn");
    let mut changed: Vec<u64> = node.take_changes().iter().map(|id| id.0).collect();
    changed.sort_unstable();
    assert_eq!(
        changed,
        vec![running, parked[0], parked[1]],
        "each noted for a journal"
    );
    for id in [running, parked[0], parked[1]] {
        assert!(
            node.job_image(mcfed_cluster::JobId(id)).is_none(),
            "job {id} gone"
        );
    }
}

#[test]
fn a_parked_job_is_found_by_id_and_one_recalled_leaves_the_others_in_order() {
    let mut node = node();
    forward(&mut node, 1, 1);
    let parked: Vec<u64> = (2..=5).map(|n| forward(&mut node, n, n)).collect();
    node.link(&name("C1"), false);
    let order: Vec<u64> = node.parked_jobs().map(|image| image.id).collect();
    for id in &parked {
        let job = mcfed_cluster::JobId(*id);
        assert!(node.is_parked(&name("C1"), job));
        assert_eq!(node.job_image(job).map(|image| image.id), Some(*id));
    }
    // C1 recalls the first job parked: it is returned.
    let recalled = order[0];
    let source_job = (2..=5)
        .zip(&parked)
        .find(|(_, id)| **id == recalled)
        .map(|(source_job, _)| source_job)
        .expect("parked");
    let mut out = Vec::new();
    node.handle(
        SimTime::from_secs(5),
        &name("C1"),
        Message::JobRecall(JobRecall {
            source_job,
            dest_job: recalled,
            reason: "recalled".into(),
        }),
        &mut out,
    );
    assert_eq!(kinds(&out), vec!["job-return"]);
    assert!(!node.is_parked(&name("C1"), mcfed_cluster::JobId(recalled)));
    let left: Vec<u64> = node.parked_jobs().map(|image| image.id).collect();
    let expected = order[1..].to_vec();
    assert_eq!(left, expected, "the others, in the order parked");
}

fn sync(node: &mut ClusterNode, held: &[(u64, u64)]) -> Vec<Envelope> {
    let mut out = Vec::new();
    node.handle(
        SimTime::from_secs(100),
        &name("C1"),
        Message::JobSync(JobSync {
            jobs: held
                .iter()
                .map(|&(source_job, forward_seq)| HeldJob {
                    source_job,
                    forward_seq,
                })
                .collect(),
        }),
        &mut out,
    );
    out
}

fn state_of(node: &ClusterNode, id: u64) -> Option<JobState> {
    node.cluster()
        .jobs()
        .find(|job| job.id.0 == id)
        .map(|job| job.state)
}

#[test]
fn out_of_step_jobs_neither_start_nor_end_until_the_next_sync() {
    let mut node = node();
    let running = forward(&mut node, 1, 1);
    let pending = forward(&mut node, 2, 2);
    let withdrawn = forward(&mut node, 3, 3);
    node.link(&name("C1"), false);
    assert!(node.is_out_of_step(&name("C1")));
    assert_eq!(
        state_of(&node, running),
        Some(JobState::Running),
        "running jobs keep running"
    );
    assert_eq!(state_of(&node, pending), None, "pending jobs are parked");
    assert_eq!(node.parked_jobs().count(), 2);
    // The running job's time is up, but it cannot end: C1 may have decided
    // it again elsewhere.
    let mut transitions = Vec::new();
    node.advance(SimTime::from_secs(900), &mut Vec::new(), &mut transitions);
    assert!(transitions.is_empty(), "{transitions:?}");
    assert_eq!(state_of(&node, running), Some(JobState::Running));
    // The sync lists jobs 1 and 2: job 1 ends (at the time it was due),
    // job 2 comes back with its id and starts, job 3 is withdrawn.
    let out = sync(&mut node, &[(1, 1), (2, 2)]);
    assert!(!node.is_out_of_step(&name("C1")));
    assert_eq!(state_of(&node, pending), Some(JobState::Pending));
    assert_eq!(state_of(&node, withdrawn), None);
    assert_eq!(node.forwarded_job(&name("C1"), 3), None);
    assert_eq!(
        kinds(&out),
        vec!["job-accept", "job-status", "job-accept"],
        "job 1: accepted and running; job 2: accepted"
    );
    node.advance(SimTime::from_secs(901), &mut Vec::new(), &mut transitions);
    let events: Vec<_> = transitions
        .iter()
        .map(|t| (t.job.0, t.event, t.at))
        .collect();
    assert_eq!(
        events,
        vec![
            (running, JobEvent::Finished, SimTime::from_secs(600)),
            (pending, JobEvent::Started, SimTime::from_secs(901)),
        ]
    );
    // A sync that no longer lists the finished job lets it be forgotten.
    sync(&mut node, &[(1, 1), (2, 2)]);
    assert_eq!(node.finished_forwards().count(), 1);
    sync(&mut node, &[(2, 2)]);
    assert!(node.finished_forwards().next().is_none());
}

#[test]
fn a_sync_withdraws_a_running_job_it_does_not_list_before_it_can_end() {
    let mut node = node();
    let running = forward(&mut node, 1, 1);
    node.link(&name("C1"), false);
    node.advance(SimTime::from_secs(900), &mut Vec::new(), &mut Vec::new());
    // C1 took the job back while C2 was unreachable: its sync does not
    // list it, so it never ends here.
    sync(&mut node, &[]);
    assert_eq!(state_of(&node, running), None);
    let mut transitions = Vec::new();
    node.advance(SimTime::from_secs(901), &mut Vec::new(), &mut transitions);
    assert!(transitions.is_empty());
    assert!(node.finished_forwards().next().is_none());
}

#[test]
fn a_withdrawal_takes_a_job_away_whatever_its_state_and_refuses_a_late_forward() {
    let mut node = node();
    let running = forward(&mut node, 1, 1);
    let withdraw = |source_job, forward_seq| {
        Message::JobWithdraw(JobWithdraw {
            source_job,
            forward_seq,
            pending_only: false,
            reason: "another copy won".into(),
        })
    };
    let mut out = Vec::new();
    node.handle(SimTime::from_secs(5), &name("C1"), withdraw(1, 7), &mut out);
    assert_eq!(
        state_of(&node, running),
        Some(JobState::Running),
        "another forward: kept"
    );
    node.handle(SimTime::from_secs(5), &name("C1"), withdraw(1, 1), &mut out);
    assert_eq!(state_of(&node, running), None, "a running copy is killed");
    // Withdrawn before it arrives: the forward is dropped when it does.
    node.handle(SimTime::from_secs(5), &name("C1"), withdraw(2, 2), &mut out);
    node.handle(
        SimTime::from_secs(6),
        &name("C1"),
        Message::JobForward(JobForward {
            forward_seq: 2,
            source_job: 2,
            queue: QueueName::new("high").expect("valid"),
            send_queue: mcfed_protocol::QueueName::new("send").expect("a queue name"),
            spec: JobSpec::simple("j", "u", Duration::from_secs(600)),
            submitted_at: SimTime::ZERO,
            attempt: 0,
        }),
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(node.cluster().jobs().count(), 0);
}

#[test]
fn a_restored_node_holds_its_jobs_under_their_ids_and_numbers_on() {
    let mut node = node();
    let running = forward(&mut node, 1, 1);
    let pending = forward(&mut node, 2, 2);
    let mut out = Vec::new();
    node.publish_counters(SimTime::from_secs(30), SimTime::from_secs(30), &mut out);
    let images: Vec<_> = [running, pending]
        .iter()
        .map(|&id| {
            let image = node
                .cluster()
                .job_image(mcfed_cluster::JobId(id))
                .expect("image");
            let (_, source_job) = image.forwarded_from.clone().expect("forwarded");
            let seq = node.forward_seq_of(&name("C1"), source_job);
            (image, seq)
        })
        .collect();
    assert_eq!(images[0].0.state, ImageState::Running);
    let mut restored = self::node();
    let report = restored.restore(RestoredNode {
        jobs: images,
        finished: Vec::new(),
        update_seq: node.update_seq(),
        next_job_id: node.cluster().next_job_id(),
        lineages: Vec::new(),
    });
    assert_eq!((report.restored, report.refused.len()), (2, 0));
    assert_eq!(state_of(&restored, running), Some(JobState::Running));
    assert_eq!(state_of(&restored, pending), Some(JobState::Pending));
    restored.cluster().audit().expect("books agree");
    // The running job ends when it would have; then the pending one starts.
    let mut transitions = Vec::new();
    restored.advance(SimTime::from_secs(600), &mut Vec::new(), &mut transitions);
    let events: Vec<_> = transitions.iter().map(|t| (t.job.0, t.event)).collect();
    assert_eq!(
        events,
        vec![(running, JobEvent::Finished), (pending, JobEvent::Started)]
    );
    // Counter updates number on, and reflect the forwards received.
    let mut out = Vec::new();
    restored.publish_counters(SimTime::from_secs(630), SimTime::from_secs(630), &mut out);
    match &out[0].message {
        Message::CounterUpdate(update) => {
            assert_eq!(update.seq, 2);
            assert_eq!(update.last_forward_from(&name("C1")), 2);
        }
        other => panic!("{other:?}"),
    }
    // A new job gets a new id.
    let next = forward(&mut restored, 3, 3);
    assert!(next > pending);
}

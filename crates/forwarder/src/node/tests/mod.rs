//! Unit tests of the submission node: sessions, hellos and restarts,
//! recalls, and which messages about a job are believed; `handled` checks
//! what [`ForwarderNode::handle`] says each message changed.

mod aps;
mod control;
mod fair;
mod fit;
mod handled;
mod parked;
mod reach;

use std::time::Duration;

use mcfed_protocol::{
    ClusterName, CounterUpdate, Envelope, HeldJob, Hello, JobAccept, JobEvent, JobLost, JobRecall,
    JobReject, JobReturn, JobSpec, JobStatus, JobSync, Message, QueueCounters, QueueName,
    RejectReason, Resume, SimTime,
};

use super::{ForwarderConfig, ForwarderNode, SendQueueConfig, SourceState};
use crate::mode::ScheduleMode;
fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

fn forwarder(max_rsched_time: Option<Duration>) -> ForwarderNode {
    ForwarderNode::new(config(max_rsched_time))
}

fn config(max_rsched_time: Option<Duration>) -> ForwarderConfig {
    ForwarderConfig {
        cluster: name("C1"),
        mode: ScheduleMode::ResourceOnly,
        send_queues: vec![SendQueueConfig {
            name: QueueName::new("send").expect("valid"),
            send_to: vec![
                "high@C2".parse().expect("valid"),
                "high@C3".parse().expect("valid"),
            ],
            max_rsched_time,
            fairshare: false,
            aps_group: None,
        }],
        max_forwards: 3,
        reachability: Default::default(),
    }
}

fn update(sender: &str, seq: u64, available: u32) -> Message {
    Message::CounterUpdate(CounterUpdate {
        sender: name(sender),
        seq,
        taken_at: SimTime::from_secs(seq * 30),
        queues: vec![QueueCounters {
            cluster: name(sender),
            queue: QueueName::new("high").expect("valid"),
            priority: 40,
            total_slots: 10,
            available_slots: available,
            running_slots: 10 - available,
            pending_slots: 0,
            preemptable_available_slots: available,
            lowest_preemptable_priority: None,
            impt_jobbklg: Some(50),
            imported_pending_jobs: 0,
            resources: Vec::new(),
            slot_group: 0,
            gpu_slots: Default::default(),
            gpu_free_slots: Default::default(),
        }],
        forwards_received: Vec::new(),
    })
}

/// A forwarder with counters from C2 (5 free) and C3 (2 free) and one job
/// forwarded to C2 (forward 1), not answered yet.
fn with_job_forwarded_to_c2(max_rsched_time: Option<Duration>) -> (ForwarderNode, u64) {
    let mut node = forwarder(max_rsched_time);
    let now = SimTime::from_secs(30);
    node.handle(now, &name("C2"), update("C2", 1, 5));
    node.handle(now, &name("C3"), update("C3", 1, 2));
    let id = node
        .submit(
            now,
            "send",
            JobSpec::simple("j", "u", Duration::from_secs(60)),
        )
        .expect("submit");
    let mut out = Vec::new();
    node.schedule(now, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to, "C2");
    (node, id)
}

/// The same, with the job accepted at C2 as job 77.
fn with_job_at_c2(max_rsched_time: Option<Duration>) -> (ForwarderNode, u64) {
    let (mut node, id) = with_job_forwarded_to_c2(max_rsched_time);
    node.handle(
        SimTime::from_secs(30),
        &name("C2"),
        Message::JobAccept(JobAccept {
            forward_seq: 1,
            source_job: id,
            dest_job: 77,
        }),
    );
    node.take_records();
    (node, id)
}

#[test]
fn a_hello_brings_a_sync_listing_the_jobs_there() {
    let (mut node, id) = with_job_at_c2(None);
    let hello = Message::Hello(Hello::with_incarnation(name("C2"), 5));
    node.handle(SimTime::from_secs(40), &name("C2"), hello);
    assert!(node.needs_session());
    let mut out = Vec::new();
    node.schedule(SimTime::from_secs(40), &mut out);
    assert_eq!(
        out[0].message,
        Message::JobSync(JobSync {
            jobs: vec![HeldJob {
                source_job: id,
                forward_seq: 1
            }]
        })
    );
    // C3 holds nothing from C1.
    node.handle(
        SimTime::from_secs(40),
        &name("C3"),
        Message::Hello(Hello::with_incarnation(name("C3"), 9)),
    );
    out.clear();
    node.schedule(SimTime::from_secs(40), &mut out);
    assert_eq!(out[0].message, Message::JobSync(JobSync { jobs: vec![] }));
}

fn resume(lineage: u64) -> Message {
    Message::Resume(Resume {
        lineage,
        epoch_unix_ms: 0,
    })
}

#[test]
fn a_cluster_that_lost_its_state_is_unknown_until_its_update_and_its_lost_jobs_come_back() {
    let (mut node, id) = with_job_at_c2(None);
    let now = SimTime::from_secs(40);
    node.handle(now, &name("C2"), resume(5));
    let c2 = node
        .view()
        .queue_id(&"high@C2".parse().expect("valid"))
        .expect("queue");
    assert!(
        node.view().figures(c2).is_some(),
        "first resume: nothing to forget"
    );
    node.handle(now, &name("C2"), resume(5));
    assert!(
        node.view().figures(c2).is_some(),
        "the same lineage (a restart from its journal): kept"
    );
    node.handle(now, &name("C2"), resume(6));
    assert!(
        node.view().figures(c2).is_none(),
        "a new lineage is unknown"
    );
    // Its first update (sequence numbers start again) is applied.
    node.handle(now, &name("C2"), update("C2", 1, 5));
    assert!(node.view().figures(c2).is_some());
    // A loss from the wrong cluster, or for another forward, is ignored.
    let lost = |forward_seq| {
        Message::JobLost(JobLost {
            source_job: id,
            forward_seq,
            reason: "restarted".into(),
        })
    };
    node.handle(now, &name("C3"), lost(1));
    node.handle(now, &name("C2"), lost(2));
    assert!(matches!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Accepted { .. })
    ));
    node.handle(now, &name("C2"), lost(1));
    assert_eq!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Waiting)
    );
    let mut out = Vec::new();
    node.schedule(now, &mut out);
    let records = node.take_records();
    assert_eq!(records.len(), 1);
    assert!(
        records[0]
            .note
            .as_deref()
            .is_some_and(|note| note.starts_with("lost by high@C2")),
        "{:?}",
        records[0].note
    );
    assert_eq!(records[0].forwarded_before, vec!["high@C2".to_owned()]);
    assert_eq!(records[0].attempt, 1);
}

/// A restarted execution cluster holds none of the jobs forwarded to
/// its previous incarnation: the oracle must not keep counting them, or
/// it would judge the next decisions on phantom slots.
#[test]
fn the_oracle_forgets_the_forwards_a_restarted_cluster_lost() {
    let truth = |sender: &str, seq: u64, available: u32| {
        let Message::CounterUpdate(truth) = update(sender, seq, available) else {
            panic!("an update");
        };
        truth
    };
    let mut node = forwarder(None);
    node.enable_oracle();
    let now = SimTime::from_secs(30);
    node.handle(now, &name("C2"), update("C2", 1, 1));
    node.handle(now, &name("C3"), update("C3", 1, 1));
    node.refresh_oracle(&truth("C2", 1, 1));
    node.refresh_oracle(&truth("C3", 1, 1));
    node.handle(now, &name("C2"), resume(5));
    let id = node
        .submit(
            now,
            "send",
            JobSpec::simple("j", "u", Duration::from_secs(60)),
        )
        .expect("submit");
    let mut out = Vec::new();
    node.schedule(now, &mut out);
    assert!(
        out.iter()
            .any(|envelope| envelope.to == "C2"
                && matches!(envelope.message, Message::JobForward(_)))
    );
    // C2 restarts: the job is lost, its slot free again; C2 and C3 tie
    // and C2 comes first in SNDJOBS_TO, unless a phantom forward still
    // weighs on it.
    let later = SimTime::from_secs(40);
    node.handle(later, &name("C2"), resume(6));
    node.handle(later, &name("C2"), update("C2", 1, 1));
    node.handle(
        later,
        &name("C2"),
        Message::JobLost(JobLost {
            source_job: id,
            forward_seq: 1,
            reason: "restarted".into(),
        }),
    );
    node.refresh_oracle(&truth("C2", 2, 1));
    node.refresh_oracle(&truth("C3", 2, 1));
    node.take_records();
    out.clear();
    node.schedule(later, &mut out);
    let records = node.take_records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].target.as_deref(), Some("high@C2"));
    let oracle = records[0].oracle.as_ref().expect("judged");
    assert_eq!(oracle.target.as_deref(), Some("high@C2"));
    assert!(!oracle.stale, "{oracle:?}");
}

#[test]
fn a_job_pending_remotely_past_max_rsched_time_is_recalled_once() {
    let (mut node, id) = with_job_at_c2(Some(Duration::from_secs(120)));
    assert_eq!(node.next_event_time(), Some(SimTime::from_secs(150)));
    let mut out = Vec::new();
    node.schedule(SimTime::from_secs(149), &mut out);
    assert!(out.is_empty());
    node.schedule(SimTime::from_secs(150), &mut out);
    assert_eq!(
        out,
        vec![Envelope {
            from: name("C1"),
            to: name("C2"),
            message: Message::JobRecall(JobRecall {
                source_job: id,
                dest_job: 77,
                reason: "recalled after pending there longer than MAX_RSCHED_TIME (2m)".into(),
            }),
        }]
    );
    out.clear();
    node.schedule(SimTime::from_secs(200), &mut out);
    assert!(out.is_empty(), "recalled once");
    assert_eq!(node.next_event_time(), None);
    // The return brings it back to be decided again.
    node.handle(
        SimTime::from_secs(151),
        &name("C2"),
        Message::JobReturn(JobReturn {
            source_job: id,
            dest_job: 77,
            reason: "recalled".into(),
        }),
    );
    assert_eq!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Waiting)
    );
}

#[test]
fn a_job_that_started_is_not_recalled() {
    let (mut node, id) = with_job_at_c2(Some(Duration::from_secs(120)));
    node.handle(
        SimTime::from_secs(60),
        &name("C2"),
        Message::JobStatus(JobStatus {
            source_job: id,
            dest_job: 77,
            event: JobEvent::Started,
            at: SimTime::from_secs(60),
        }),
    );
    let mut out = Vec::new();
    node.schedule(SimTime::from_secs(500), &mut out);
    assert!(out.is_empty());
}

#[test]
fn messages_about_a_job_from_another_cluster_are_ignored() {
    let (mut node, id) = with_job_at_c2(None);
    let now = SimTime::from_secs(40);
    node.handle(
        now,
        &name("C3"),
        Message::JobReject(JobReject {
            forward_seq: 1,
            source_job: id,
            reason: RejectReason::UnknownQueue,
        }),
    );
    node.handle(
        now,
        &name("C3"),
        Message::JobStatus(JobStatus {
            source_job: id,
            dest_job: 77,
            event: JobEvent::Finished,
            at: now,
        }),
    );
    node.handle(
        now,
        &name("C2"),
        Message::JobReturn(JobReturn {
            source_job: id,
            dest_job: 78,
            reason: "not this one".into(),
        }),
    );
    assert!(matches!(
        node.job(id).map(|job| job.state),
        Some(SourceState::Accepted { dest_job: 77, .. })
    ));
    // A counter update under another name is ignored too.
    node.handle(now, &name("C3"), update("C2", 9, 0));
    assert_eq!(node.view().applied_seq(&name("C2")), Some(1));
}

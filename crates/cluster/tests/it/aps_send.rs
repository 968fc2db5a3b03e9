//! Absolute priority scheduling at the submission side: the APS value of
//! a job waiting in a send queue is the value the same job would have
//! pending in a local queue with the same settings (one formula), a
//! QUEUE_GROUP's send queues are valued by their parent's APS_PRIORITY,
//! `bmod -aps` values apply, and a forwarded job carries its JPRIORITY.

use std::time::Duration;

use mcfed_cluster::{
    ApsPriority, ApsSet, ApsShown, ApsTerm, Cluster, ClusterConfig, HostConfig, JobOrigin,
    QueueConfig, WaitingJob,
};
use mcfed_protocol::{ApsChange, ApsNumber, ClusterName, JobOptions, JobSpec, QueueName, SimTime};

const APS: &str = "WEIGHT[[RSRC, 2] [PROC, 10] [MEM, 0.01] [JPRIORITY, 1] [QPRIORITY, 10]] \
                   LIMIT[[PROC, 30]] GRACE_PERIOD[[QPRIORITY, 10m]]";

fn minutes(n: u64) -> Duration {
    Duration::from_secs(n * 60)
}

fn queue(name: &str, priority: u32, aps: Option<&str>, send: bool) -> QueueConfig {
    let mut queue = QueueConfig::new(QueueName::new(name).expect("valid"));
    queue.priority = priority;
    queue.aps_priority = aps.map(|text| text.parse::<ApsPriority>().expect("valid"));
    if send {
        queue.send_to = vec!["normal@C2".parse().expect("valid")];
    }
    queue
}

fn cluster(queues: Vec<QueueConfig>, max_user_priority: Option<u32>) -> Cluster {
    let mut config = ClusterConfig::new(ClusterName::new("C1").expect("valid"));
    config.hosts = vec![HostConfig::new("h1", 4)];
    config.queues = queues;
    config.params.max_user_priority = max_user_priority;
    Cluster::new(config).expect("valid")
}

fn spec(slots: u32, mem: u64, priority: Option<u32>) -> JobSpec {
    let mut spec = JobSpec::simple("j", "alice", minutes(10));
    spec.slots = slots;
    spec.set_options(JobOptions {
        user_priority: priority,
        mem_request_mb: Some(mem),
        ..JobOptions::default()
    });
    spec
}

fn waiting(spec: &JobSpec, pended: Duration, set: Option<ApsSet>) -> WaitingJob<'_> {
    WaitingJob {
        id: 99,
        spec,
        pended,
        fs: None,
        set,
    }
}

#[test]
fn a_waiting_job_has_the_value_it_would_have_pending_in_a_local_queue() {
    let mut c = cluster(
        vec![
            queue("busy", 50, None, false),
            queue("local", 20, Some(APS), false),
            queue("send", 20, Some(APS), true),
        ],
        Some(100),
    );
    // The host's slots are taken, so the local job pends.
    c.submit(SimTime::ZERO, "busy", spec(4, 0, None), JobOrigin::Local)
        .expect("accepted");
    let mut transitions = Vec::new();
    c.advance(SimTime::ZERO, &mut transitions);
    let job = spec(4, 2000, Some(50));
    let local = c
        .submit(SimTime::ZERO, "local", job.clone(), JobOrigin::Local)
        .expect("accepted");
    c.advance(SimTime::ZERO, &mut transitions);
    for at in [5, 10, 30] {
        let now = SimTime::ZERO + minutes(at);
        let here = c.aps_entry(local, now).expect("pending");
        let there = c
            .send_queue_aps("send", &waiting(&job, minutes(at), None))
            .expect("an APS send queue");
        assert_eq!(here.shown, there.shown, "after {at} minutes");
        assert_eq!(here.breakdown, there.breakdown, "after {at} minutes");
        assert_eq!(here.jpriority, there.jpriority);
    }
    // The worked example of docs/scheduling.md: 150 before QPRIORITY's
    // grace period, 350 after.
    let before = c.send_queue_aps("send", &waiting(&job, minutes(9), None));
    assert_eq!(
        before.map(|entry| entry.shown),
        Some(ApsShown::Calculated(150.0))
    );
    let after = c.send_queue_aps("send", &waiting(&job, minutes(10), None));
    assert_eq!(
        after.map(|entry| entry.shown),
        Some(ApsShown::Calculated(350.0))
    );
    // Queues that are no APS send queue give no value.
    for name in ["local", "busy", "nowhere"] {
        assert!(
            c.send_queue_aps(name, &waiting(&job, minutes(1), None))
                .is_none(),
            "{name}"
        );
    }
}

#[test]
fn a_queue_group_values_its_send_queues_by_the_parents_weights_and_their_own_priority() {
    let mut parent = queue(
        "send",
        10,
        Some("WEIGHT[[JPRIORITY, 1] [QPRIORITY, 2]]"),
        true,
    );
    parent.queue_group = vec![QueueName::new("member").expect("valid")];
    let c = cluster(vec![parent, queue("member", 40, None, true)], Some(100));
    let job = spec(1, 0, Some(30));
    let value = |queue: &str| {
        c.send_queue_aps(queue, &waiting(&job, minutes(1), None))
            .map(|entry| entry.shown)
    };
    assert_eq!(value("send"), Some(ApsShown::Calculated(30.0 + 20.0)));
    assert_eq!(value("member"), Some(ApsShown::Calculated(30.0 + 80.0)));
}

#[test]
fn system_and_admin_values_apply_and_fs_counts_only_where_weighed() {
    let mut fair = queue("send", 10, Some("WEIGHT[[FS, 100] [JPRIORITY, 1]]"), true);
    fair.fairshare = Some("USER_SHARES[[alice, 1]]".parse().expect("valid"));
    let c = cluster(vec![fair], Some(100));
    let job = spec(1, 0, Some(7));
    let value = |fs: Option<f64>, set: Option<ApsSet>| {
        let mut job = waiting(&job, minutes(1), set);
        job.fs = fs;
        c.send_queue_aps("send", &job).map(|entry| entry.shown)
    };
    assert_eq!(value(Some(0.5), None), Some(ApsShown::Calculated(57.0)));
    assert_eq!(
        value(None, None),
        Some(ApsShown::Calculated(7.0)),
        "no shares"
    );
    assert_eq!(
        value(Some(0.5), Some(ApsSet::Admin(-3.0))),
        Some(ApsShown::Calculated(54.0))
    );
    assert_eq!(
        value(Some(0.5), Some(ApsSet::System(2.0))),
        Some(ApsShown::System(2.0))
    );
    let jpriority_only = cluster(
        vec![queue("send", 10, Some("WEIGHT[[JPRIORITY, 1]]"), true)],
        Some(100),
    );
    let mut ignored = waiting(&job, minutes(1), None);
    ignored.fs = Some(0.5);
    let entry = jpriority_only
        .send_queue_aps("send", &ignored)
        .expect("valued");
    assert_eq!(entry.shown, ApsShown::Calculated(7.0));
    assert_eq!(
        entry.breakdown.map(|b| b.terms[ApsTerm::Fs.index()]),
        Some(0.0)
    );
}

#[test]
fn a_forwarded_job_carries_its_escalated_jpriority() {
    let mut config = ClusterConfig::new(ClusterName::new("C1").expect("valid"));
    config.hosts = vec![HostConfig::new("h1", 4)];
    config.queues = vec![queue("send", 10, None, true)];
    config.params.max_user_priority = Some(100);
    config.params.job_priority_over_time = Some("3/10".parse().expect("valid"));
    let c = Cluster::new(config).expect("valid");
    assert_eq!(
        c.forwarded_job_priority(&spec(1, 0, Some(20)), minutes(25)),
        Some(26)
    );
    assert_eq!(
        c.forwarded_job_priority(&spec(1, 0, None), minutes(0)),
        Some(50)
    );
    let off = cluster(vec![queue("send", 10, None, true)], None);
    assert_eq!(
        off.forwarded_job_priority(&spec(1, 0, None), minutes(25)),
        None,
        "no MAX_USER_PRIORITY: jobs have no priority to carry"
    );
}

#[test]
fn bmod_aps_is_checked_as_for_a_pending_job_of_the_queue() {
    let c = cluster(
        vec![
            queue("send", 10, Some("WEIGHT[[JPRIORITY, 1]]"), true),
            queue("plain", 10, None, true),
        ],
        Some(100),
    );
    let system = |value| ApsChange::System(ApsNumber(value));
    assert!(c.check_queue_aps_change("send", system(5.0)).is_ok());
    assert!(c.check_queue_aps_change("send", ApsChange::Clear).is_ok());
    let refusal = |queue: &str, change| {
        c.check_queue_aps_change(queue, change)
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default()
    };
    assert!(refusal("plain", system(5.0)).contains("queue `plain` has no APS_PRIORITY"));
    assert!(refusal("send", system(0.0)).contains("cannot be zero"));
    assert!(refusal("send", system(2_000_000.0)).contains("at most 1000000"));
    assert!(refusal("nowhere", system(5.0)).contains("no queue named"));
}

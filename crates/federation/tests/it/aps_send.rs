//! A send queue with APS_PRIORITY at the member: `bmod -aps` on a job
//! waiting there is checked by the scheduler (which holds the queue's
//! APS_PRIORITY) and orders the next session; the value is journaled and
//! comes back with a restored member.

use std::time::Duration;

use mcfed_cluster::{ApsPriority, ApsShown, ClusterConfig, HostConfig, QueueConfig};
use mcfed_federation::{ControlRefused, DurableState, Effects, JobRef, Member, MemberSpec};
use mcfed_forwarder::{ForwarderConfig, ScheduleMode, SendQueueConfig};
use mcfed_protocol::{
    ApsChange, ApsNumber, ClusterName, JobAction, JobChanges, JobOptions, JobSpec, QueueName,
    SimTime,
};

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

fn queue(text: &str) -> QueueName {
    QueueName::new(text).expect("valid")
}

/// C1: send queue `send` (APS = JPRIORITY) and `plain` (no APS), both to
/// `high@C2`, which it never meets: its jobs wait.
fn configs() -> (ClusterConfig, ForwarderConfig) {
    let mut config = ClusterConfig::new(name("C1"));
    config.hosts = vec![HostConfig::new("a1", 1)];
    let send_queue = |text: &str, aps: Option<&str>| {
        let mut send = QueueConfig::new(queue(text));
        send.send_to = vec!["high@C2".parse().expect("valid")];
        send.aps_priority = aps.map(|aps| aps.parse::<ApsPriority>().expect("valid"));
        send
    };
    config.queues = vec![
        send_queue("send", Some("WEIGHT[[JPRIORITY, 1]]")),
        send_queue("plain", None),
    ];
    config.params.max_user_priority = Some(100);
    let forwarder = ForwarderConfig {
        cluster: name("C1"),
        mode: ScheduleMode::ResourceOnly,
        send_queues: ["send", "plain"]
            .into_iter()
            .map(|text| SendQueueConfig {
                name: queue(text),
                send_to: vec!["high@C2".parse().expect("valid")],
                max_rsched_time: None,
                fairshare: false,
                aps_group: (text == "send").then(|| queue("send")),
            })
            .collect(),
        max_forwards: 3,
        reachability: Default::default(),
    };
    (config, forwarder)
}

fn spec<'a>(config: &'a ClusterConfig, forwarder: &'a ForwarderConfig) -> MemberSpec<'a> {
    MemberSpec {
        config,
        forwarder: Some(forwarder),
        subscribers: &[],
        collectors: &[],
        initial_jobs: &[],
    }
}

fn job(text: &str, priority: u32) -> JobSpec {
    let mut spec = JobSpec::simple(text, "alice", Duration::from_secs(600));
    spec.set_options(JobOptions {
        user_priority: Some(priority),
        ..JobOptions::default()
    });
    spec
}

fn bmod_aps(change: ApsChange) -> JobAction {
    JobAction::Modify(JobChanges {
        aps: Some(change),
        ..JobChanges::default()
    })
}

#[test]
fn bmod_aps_orders_a_send_queue_and_survives_a_restart() {
    let (config, forwarder) = configs();
    let (mut member, _) = Member::build(spec(&config, &forwarder)).expect("builds");
    member.enable_journal();
    let snapshot = member.durable_state();
    let now = SimTime::from_secs(60);
    let low = member
        .submit(now, "send", job("low", 10), &mut Effects::default())
        .expect("submitted")
        .job_id;
    let high = member
        .submit(now, "send", job("high", 90), &mut Effects::default())
        .expect("submitted")
        .job_id;
    let plain = member
        .submit(now, "plain", job("p", 50), &mut Effects::default())
        .expect("submitted")
        .job_id;
    assert_eq!(member.forwarding_order("send", now), Some(vec![high, low]));
    assert_eq!(member.forwarding_order("plain", now), Some(vec![plain]));
    assert_eq!(
        member.send_queue_aps(high, now).map(|entry| entry.shown),
        Some(ApsShown::Calculated(90.0))
    );
    assert!(member.send_queue_aps(plain, now).is_none(), "no APS queue");

    let mut effects = Effects::default();
    let refused = |outcome: Result<_, ControlRefused>| match outcome {
        Err(ControlRefused::Refused { reason, .. }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let zero = member.control(
        now,
        &JobRef::Id(low),
        &bmod_aps(ApsChange::System(ApsNumber(0.0))),
        &mut effects,
    );
    assert!(refused(zero).contains("cannot be zero"));
    let on_plain = member.control(
        now,
        &JobRef::Id(plain),
        &bmod_aps(ApsChange::Admin(ApsNumber(5.0))),
        &mut effects,
    );
    assert!(refused(on_plain).contains("queue `plain` has no APS_PRIORITY"));
    member
        .control(
            now,
            &JobRef::Id(low),
            &bmod_aps(ApsChange::System(ApsNumber(3.0))),
            &mut effects,
        )
        .expect("accepted");
    assert_eq!(member.forwarding_order("send", now), Some(vec![low, high]));
    assert_eq!(
        member.send_queue_aps(low, now).map(|entry| entry.shown),
        Some(ApsShown::System(3.0))
    );

    // What the journal kept (a command's changes are written with the
    // step that follows it, as a process acknowledges it) brings the value
    // back.
    member.step(now, &mut effects);
    let mut state: DurableState = snapshot;
    for record in member.take_journal() {
        state.apply(record);
    }
    let restored = Member::restore(spec(&config, &forwarder), state, now).expect("restores");
    assert_eq!(
        restored.forwarding_order("send", now),
        Some(vec![low, high])
    );
    assert_eq!(
        restored.send_queue_aps(low, now).map(|entry| entry.shown),
        Some(ApsShown::System(3.0))
    );
}

//! The member the `admin` target applies requests to, as a cluster
//! process does ([`mcfed_admin::apply`]): a cluster of the test federation
//! with a local queue, a send queue to Cluster2 and an advance
//! reservation, keeping its history and a journal, holding a few jobs.

use std::time::Duration;

use mcfed_admin::{AdminRequest, Applied};
use mcfed_cluster::{AdvanceReservationConfig, ClusterConfig, HostConfig, QueueConfig};
use mcfed_federation::{Effects, Member, MemberSpec};
use mcfed_forwarder::{ForwarderConfig, Reachability, ScheduleMode, SendQueueConfig};
use mcfed_protocol::{ClusterName, JobSpec, QueueName, SimTime};

/// Requests applied from one input, at most (each a postcard value after
/// the one before).
const REQUESTS_PER_INPUT: usize = 8;

/// Wakes a member is given after the requests (each at the time it asks).
const WAKES_PER_INPUT: usize = 8;

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("a valid cluster name")
}

/// A cluster with a local queue, a send queue to Cluster2 and an advance
/// reservation, keeping its history and a journal (Cluster1 of the test
/// federation).
pub fn member() -> Member {
    let mut config = ClusterConfig::new(name("Cluster1"));
    config.hosts = vec![HostConfig::new("h1", 4)];
    config.queues = vec![
        QueueConfig::new(QueueName::new("normal").expect("valid")),
        QueueConfig::new(QueueName::new("send").expect("valid")),
    ];
    config.advance_reservations = vec![AdvanceReservationConfig {
        name: "night".to_owned(),
        hosts: vec!["h1".to_owned()],
        slots: Some(2),
        start: SimTime::from_secs(0),
        end: SimTime::from_secs(3600),
        users: vec!["alice".to_owned()],
        open: false,
    }];
    let forwarder = ForwarderConfig {
        cluster: name("Cluster1"),
        mode: ScheduleMode::ResourceOnly,
        send_queues: vec![SendQueueConfig {
            name: QueueName::new("send").expect("valid"),
            send_to: vec!["high@Cluster2".parse().expect("valid")],
            max_rsched_time: None,
            fairshare: false,
            aps_group: None,
        }],
        max_forwards: 10,
        reachability: Reachability {
            stale_after: vec![(name("Cluster2"), Duration::from_secs(150))],
            reclaim_after: None,
        },
    };
    let spec = MemberSpec {
        config: &config,
        forwarder: Some(&forwarder),
        subscribers: &[],
        collectors: &[],
        initial_jobs: &[],
    };
    let (mut member, _) = Member::build(spec).expect("the test member builds");
    member.keep_history(Duration::from_secs(3600));
    member.enable_journal();
    member
}

/// [`member`] holding jobs: two running, one pending, one in the send
/// queue, one finished (so every admin request has something to show).
fn member_with_jobs() -> Member {
    let mut member = member();
    let mut effects = Effects::default();
    for (n, queue) in ["normal", "normal", "normal", "send", "normal"]
        .into_iter()
        .enumerate()
    {
        let run = Duration::from_secs(if n == 4 { 1 } else { 600 });
        let mut spec = JobSpec::simple(format!("job{n}"), "alice", run);
        spec.slots = 2;
        let _ = member.submit(SimTime::from_secs(10), queue, spec, &mut effects);
    }
    member.step(SimTime::from_secs(10), &mut effects);
    member.step(SimTime::from_secs(20), &mut effects);
    member.take_journal();
    member
}

/// Applies the admin requests `data` holds, one after the other, to a
/// member holding jobs, as a cluster process does: each answer encoded,
/// what changed journaled, then the member woken when it asks.
pub(crate) fn apply_requests(mut data: &[u8]) {
    let mut member = member_with_jobs();
    let mut now = SimTime::from_secs(20);
    let mut effects = Effects::default();
    for _ in 0..REQUESTS_PER_INPUT {
        let Ok((request, rest)) = postcard::take_from_bytes::<AdminRequest>(data) else {
            break;
        };
        data = rest;
        if let Applied::Answer(answer) = mcfed_admin::apply(request, &mut member, now, &mut effects)
        {
            // An answer too big to encode is refused, not a panic.
            let _ = mcfed_admin::encode(&answer);
        }
        member.take_journal();
        effects.clear();
    }
    for _ in 0..WAKES_PER_INPUT {
        let Some(at) = member.next_wake(now) else {
            break;
        };
        now = now.max(at);
        member.step(now, &mut effects);
        member.take_journal();
        effects.clear();
    }
}

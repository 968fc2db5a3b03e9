//! Job slot limits (UJOB_LIMIT, HJOB_LIMIT, MAX_JOBS, JL/P, JL/U) and their pending reasons.

use super::*;

#[test]
fn ujob_limit_holds_back_one_user_only() {
    let mut q = queue("q", 10);
    q.user_job_limit = Some(2);
    let mut c = cluster(hosts(1, 8), vec![q]);
    let alice: Vec<JobId> = (0..3)
        .map(|_| submit(&mut c, "q", "alice", 1, 60))
        .collect();
    let bob = submit(&mut c, "q", "bob", 1, 60);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, alice[1]), Some(JobState::Running));
    assert_eq!(reason(&c, alice[2]), PendingReason::UserQueueJobLimit);
    assert_eq!(state(&c, bob), Some(JobState::Running));
}

#[test]
fn hjob_limit_spreads_a_queue_over_hosts() {
    let mut q = queue("q", 10);
    q.host_job_limit = Some(1);
    let mut c = cluster(hosts(2, 4), vec![q]);
    let jobs: Vec<JobId> = (0..3).map(|_| submit(&mut c, "q", "u", 1, 60)).collect();
    advance(&mut c, SimTime::ZERO);
    let hosts: Vec<usize> = jobs[..2]
        .iter()
        .map(|&id| c.job(id).expect("runs").placement[0].host)
        .collect();
    assert_ne!(hosts[0], hosts[1]);
    assert_eq!(reason(&c, jobs[2]), PendingReason::HostQueueJobLimit);
}

#[test]
fn user_and_group_limits_hold_jobs_with_their_reasons() {
    let group = UserGroupConfig {
        name: "team".into(),
        members: vec!["alice".into(), "bob".into()],
        user_shares: None,
    };
    let mut c = with_users(
        hosts(1, 10),
        vec![queue("q", 10)],
        vec![
            limit("alice", Some(1), None),
            limit("team", Some(3), None),
            limit("default", Some(5), None),
        ],
        vec![group],
        "",
    );
    let a = [
        submit(&mut c, "q", "alice", 1, 60),
        submit(&mut c, "q", "alice", 1, 60),
    ];
    let b: Vec<JobId> = (0..3).map(|_| submit(&mut c, "q", "bob", 1, 60)).collect();
    let carol: Vec<JobId> = (0..6)
        .map(|_| submit(&mut c, "q", "carol", 1, 60))
        .collect();
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, a[0]), Some(JobState::Running));
    assert_eq!(reason(&c, a[1]), PendingReason::UserJobLimit);
    assert_eq!(state(&c, b[1]), Some(JobState::Running));
    assert_eq!(reason(&c, b[2]), PendingReason::UserGroupJobLimit);
    assert_eq!(state(&c, carol[4]), Some(JobState::Running));
    assert_eq!(
        reason(&c, carol[5]),
        PendingReason::UserJobLimit,
        "default: 5"
    );
}

#[test]
fn per_processor_and_per_host_user_limits() {
    let mut host = HostConfig::new("h1", 8);
    host.processors = Some(4);
    host.user_slot_limit = Some(3);
    let mut c = with_users(
        vec![host],
        vec![queue("q", 10)],
        vec![limit("alice", None, Some(0.5))],
        vec![],
        "",
    );
    let alice: Vec<JobId> = (0..3)
        .map(|_| submit(&mut c, "q", "alice", 1, 60))
        .collect();
    let bob: Vec<JobId> = (0..4).map(|_| submit(&mut c, "q", "bob", 1, 60)).collect();
    advance(&mut c, SimTime::ZERO);
    // JL/P 0.5 on 4 processors: 2 for alice; JL/U 3 for bob.
    assert_eq!(state(&c, alice[1]), Some(JobState::Running));
    assert_eq!(reason(&c, alice[2]), PendingReason::UserProcessorLimit);
    assert_eq!(state(&c, bob[2]), Some(JobState::Running));
    assert_eq!(reason(&c, bob[3]), PendingReason::HostUserLimit);
}

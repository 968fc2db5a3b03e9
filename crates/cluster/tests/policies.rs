//! The scheduling policies of seeds 000 (queue-based fairshare), 002
//! (user-based fairshare), 003 (preemption and job slot counting) and the
//! limits, each against a small cluster. Every test audits the cluster's
//! books after every step.

use std::sync::Arc;
use std::time::Duration;

use mcfed_cluster::fairshare::{AdjustmentInput, FairshareAdjustment};
use mcfed_cluster::{
    Cluster, ClusterConfig, ConfigLocation, HostConfig, HostSelection, JobId, JobOrigin, JobState,
    PendingReason, QueueConfig, SlotPoolConfig, SubmitError, Transition, UserGroupConfig,
    UserLimitConfig,
};
use mcfed_protocol::{
    ClusterName, JobEvent, JobForward, JobSpec, QueueName, RejectReason, SimTime,
};

fn name(text: &str) -> QueueName {
    QueueName::new(text).expect("valid")
}

fn hosts(count: usize, slots: u32) -> Vec<HostConfig> {
    (1..=count)
        .map(|n| HostConfig::new(format!("h{n}"), slots))
        .collect()
}

fn queue(text: &str, priority: u32) -> QueueConfig {
    let mut queue = QueueConfig::new(name(text));
    queue.priority = priority;
    queue
}

fn pooled(text: &str, priority: u32, pool: &str, share: u32) -> QueueConfig {
    let mut queue = queue(text, priority);
    queue.slot_pool = Some(SlotPoolConfig {
        pool: pool.into(),
        share,
        max_slots: None,
        use_priority: None,
    });
    queue
}

fn config(hosts: Vec<HostConfig>, queues: Vec<QueueConfig>) -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("C").expect("valid"));
    config.hosts = hosts;
    config.queues = queues;
    config
}

fn cluster(hosts: Vec<HostConfig>, queues: Vec<QueueConfig>) -> Cluster {
    Cluster::new(config(hosts, queues)).expect("valid configuration")
}

fn minutes(m: u64) -> SimTime {
    SimTime::from_secs(m * 60)
}

fn spec(user: &str, slots: u32, run_minutes: u64) -> JobSpec {
    let mut spec = JobSpec::simple("j", user, Duration::from_secs(run_minutes * 60));
    spec.slots = slots;
    spec
}

fn submit_at(cluster: &mut Cluster, at: SimTime, queue: &str, spec: JobSpec) -> JobId {
    cluster
        .submit(at, queue, spec, JobOrigin::Local)
        .expect("accepted")
}

fn submit(cluster: &mut Cluster, queue: &str, user: &str, slots: u32, run_minutes: u64) -> JobId {
    submit_at(
        cluster,
        SimTime::ZERO,
        queue,
        spec(user, slots, run_minutes),
    )
}

fn advance(cluster: &mut Cluster, at: SimTime) -> Vec<Transition> {
    let mut transitions = Vec::new();
    cluster.advance(at, &mut transitions);
    cluster.audit().expect("consistent books");
    transitions
}

fn state(cluster: &Cluster, id: JobId) -> Option<JobState> {
    cluster.job(id).map(|job| job.state)
}

fn running_slots(cluster: &Cluster, queue: &str) -> u32 {
    let index = cluster.queue_index(queue).expect("queue");
    cluster.queue_slot_usage(index).0
}

fn reason(cluster: &Cluster, id: JobId) -> PendingReason {
    cluster.pending_reason(cluster.job(id).expect("pending job"))
}

fn preempted(transitions: &[Transition], victim: JobId) -> Option<(JobEvent, JobId)> {
    transitions
        .iter()
        .find(|t| t.job == victim && t.preempted_by.is_some())
        .and_then(|t| t.preempted_by.map(|by| (t.event, by)))
}

// ---------------------------------------------------------------------------
// Queue-based fairshare (seed 000)

#[test]
fn pool_divides_twelve_slots_six_four_two() {
    let mut c = cluster(
        hosts(2, 6),
        vec![
            pooled("queue1", 50, "poolA", 50),
            pooled("queue2", 48, "poolA", 30),
            pooled("queue3", 46, "poolA", 20),
        ],
    );
    for q in ["queue1", "queue2", "queue3"] {
        for _ in 0..20 {
            submit(&mut c, q, "u", 1, 60);
        }
    }
    advance(&mut c, SimTime::ZERO);
    assert_eq!(
        ["queue1", "queue2", "queue3"].map(|q| running_slots(&c, q)),
        [6, 4, 2]
    );
    let report = c.report(SimTime::ZERO);
    let deserved: Vec<u32> = report
        .queues
        .iter()
        .map(|q| q.slot_pool.as_ref().expect("pool").deserved_slots)
        .collect();
    assert_eq!(deserved, vec![6, 4, 2]);
    assert_eq!(
        report.queues[0].slot_pool.as_ref().map(|p| p.pool_slots),
        Some(12)
    );
}

#[test]
fn an_idle_pool_queue_leaves_its_slots_to_the_others() {
    let mut c = cluster(
        hosts(3, 5),
        vec![
            pooled("roma", 50, "pool", 50),
            pooled("verona", 48, "pool", 30),
            pooled("genova", 48, "pool", 20),
        ],
    );
    for _ in 0..30 {
        submit(&mut c, "roma", "u", 1, 60);
        submit(&mut c, "genova", "u", 1, 60);
    }
    advance(&mut c, SimTime::ZERO);
    // 15 slots: 8 + 3, then the 4 left go 2 + 1, then the last 1 to roma.
    assert_eq!(running_slots(&c, "roma"), 11);
    assert_eq!(running_slots(&c, "genova"), 4);
}

#[test]
fn a_queue_above_its_share_starts_nothing_until_it_is_below() {
    let mut c = cluster(
        hosts(1, 4),
        vec![pooled("a", 10, "p", 50), pooled("b", 10, "p", 50)],
    );
    let a: Vec<JobId> = (0..4).map(|_| submit(&mut c, "a", "u", 1, 10)).collect();
    advance(&mut c, SimTime::ZERO);
    assert_eq!(running_slots(&c, "a"), 4, "alone, a uses the whole pool");
    let b: Vec<JobId> = (0..4)
        .map(|_| submit_at(&mut c, minutes(1), "b", spec("u", 1, 10)))
        .collect();
    let more = submit_at(&mut c, minutes(1), "a", spec("u", 1, 10));
    advance(&mut c, minutes(1));
    // No preemption in pools: b waits for a's jobs to end.
    assert!(b.iter().all(|&id| state(&c, id) == Some(JobState::Pending)));
    assert_eq!(reason(&c, more), PendingReason::PoolShareUsed);
    advance(&mut c, minutes(10));
    assert!(a.iter().all(|&id| state(&c, id).is_none()));
    assert_eq!(running_slots(&c, "a"), 1);
    assert_eq!(running_slots(&c, "b"), 3);
}

#[test]
fn pool_configuration_errors_and_warnings() {
    // A pool queue cannot be preemptive or preemptable.
    let mut preemptive = pooled("a", 10, "p", 50);
    preemptive.preemption = "PREEMPTIVE".parse().expect("valid");
    let error = Cluster::new(config(
        hosts(1, 2),
        vec![pooled("b", 5, "p", 50), preemptive],
    ))
    .expect_err("pool queues cannot preempt");
    assert_eq!(
        error.location,
        ConfigLocation::Queue {
            index: 1,
            field: "PREEMPTION"
        }
    );
    // Every queue of a pool uses the same hosts.
    let mut elsewhere = pooled("b", 5, "p", 50);
    elsewhere.hosts = HostSelection::Listed(vec!["h1".into()]);
    let error = Cluster::new(config(
        hosts(2, 2),
        vec![pooled("a", 10, "p", 50), elsewhere],
    ))
    .expect_err("same hosts");
    assert_eq!(
        error.location,
        ConfigLocation::Queue {
            index: 1,
            field: "HOSTS"
        }
    );
    // SLOT_SHARE is a percentage.
    let error =
        Cluster::new(config(hosts(1, 2), vec![pooled("a", 10, "p", 0)])).expect_err("share 0");
    assert_eq!(
        error.location,
        ConfigLocation::Queue {
            index: 0,
            field: "SLOT_SHARE"
        }
    );
    // SLOT_RESERVE in a pool queue is only a warning.
    let mut reserving = pooled("a", 10, "p", 50);
    reserving.slot_reserve = Some(5);
    let c = cluster(hosts(1, 2), vec![reserving]);
    assert_eq!(c.warnings().len(), 1);
    assert_eq!(
        c.warnings()[0].location,
        ConfigLocation::Queue {
            index: 0,
            field: "SLOT_RESERVE"
        }
    );
}

#[test]
fn max_slots_in_pool_caps_the_pool() {
    let mut first = pooled("a", 10, "p", 50);
    if let Some(pool) = &mut first.slot_pool {
        pool.max_slots = Some(6);
    }
    let mut c = cluster(hosts(2, 6), vec![first, pooled("b", 10, "p", 50)]);
    for _ in 0..10 {
        submit(&mut c, "a", "u", 1, 60);
        submit(&mut c, "b", "u", 1, 60);
    }
    advance(&mut c, SimTime::ZERO);
    assert_eq!((running_slots(&c, "a"), running_slots(&c, "b")), (3, 3));
}

// ---------------------------------------------------------------------------
// User-based fairshare (seed 002)

fn fairshare_queue(text: &str, shares: &str) -> QueueConfig {
    let mut queue = queue(text, 10);
    queue.fairshare = Some(shares.parse().expect("valid USER_SHARES"));
    queue
}

#[test]
fn fairshare_dispatches_by_dynamic_priority() {
    let mut c = cluster(
        hosts(1, 3),
        vec![fairshare_queue("fs", "USER_SHARES[[alice, 10] [bob, 1]]")],
    );
    // bob submits first, but alice's priority is ten times his.
    let bob: Vec<JobId> = (0..3).map(|_| submit(&mut c, "fs", "bob", 1, 60)).collect();
    let alice: Vec<JobId> = (0..3)
        .map(|_| submit(&mut c, "fs", "alice", 1, 60))
        .collect();
    advance(&mut c, SimTime::ZERO);
    // alice: 10/3, then 10/6 = 1.67, then 10/9 = 1.11: all above bob's 1/3.
    assert!(
        alice
            .iter()
            .all(|&id| state(&c, id) == Some(JobState::Running))
    );
    assert!(
        bob.iter()
            .all(|&id| state(&c, id) == Some(JobState::Pending))
    );
    let fs = c.queue_index("fs").expect("queue");
    let priority = c
        .dynamic_priority_of(fs, "alice", SimTime::ZERO)
        .expect("alice has shares");
    assert!((priority - 10.0 / 12.0).abs() < 1e-9, "{priority}");
}

#[test]
fn fairshare_priority_changes_as_jobs_start_and_finish() {
    let mut c = cluster(
        hosts(1, 1),
        vec![fairshare_queue("fs", "USER_SHARES[[alice, 2] [bob, 1]]")],
    );
    let a1 = submit(&mut c, "fs", "alice", 1, 10);
    let a2 = submit(&mut c, "fs", "alice", 1, 10);
    let b1 = submit(&mut c, "fs", "bob", 1, 10);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, a1), Some(JobState::Running));
    let fs = c.queue_index("fs").expect("queue");
    let before = c
        .dynamic_priority_of(fs, "alice", minutes(5))
        .expect("shares");
    // 5 minutes on: run time and CPU time lower alice's priority.
    let idle = 2.0 / 6.0;
    assert!(before < idle, "{before}");
    // At 10m a1 ends: alice's priority rises at once (only the decayed CPU
    // time stays), yet 2/(3 + cpu*0.7) is still above bob's 1/3: a2 goes
    // before b1.
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, a2), Some(JobState::Running));
    assert_eq!(state(&c, b1), Some(JobState::Pending));
    // At 20m alice has used 20 CPU minutes: 2/(3 + 0.7*cpu) ... vs bob 1/3.
    advance(&mut c, minutes(20));
    assert_eq!(state(&c, b1), Some(JobState::Running));
}

#[test]
fn users_without_shares_cannot_use_a_fairshare_queue() {
    let mut c = cluster(
        hosts(1, 1),
        vec![fairshare_queue("fs", "USER_SHARES[[alice, 1]]")],
    );
    assert_eq!(
        c.submit(SimTime::ZERO, "fs", spec("mallory", 1, 1), JobOrigin::Local),
        Err(SubmitError::CannotRun(RejectReason::NoShares {
            user: "mallory".into()
        }))
    );
    let mut with_default = cluster(
        hosts(1, 1),
        vec![fairshare_queue(
            "fs",
            "USER_SHARES[[alice, 1] [default, 3]]",
        )],
    );
    let id = submit(&mut with_default, "fs", "mallory", 1, 1);
    advance(&mut with_default, SimTime::ZERO);
    assert_eq!(state(&with_default, id), Some(JobState::Running));
    let fs = with_default.queue_index("fs").expect("queue");
    let report = with_default.queue_report(fs, SimTime::ZERO);
    let table = report.fairshare.expect("fairshare table");
    let mallory = table
        .users
        .iter()
        .find(|row| row.user == "mallory")
        .expect("a row for mallory");
    assert_eq!((mallory.shares, mallory.started), (3, 1));
    assert!(
        table.users.iter().any(|row| row.user == "alice"),
        "named users are listed"
    );
}

/// A custom plug-in through the trait: a fixed adjustment per slot.
#[derive(Debug)]
struct PerSlot(f64);

impl FairshareAdjustment for PerSlot {
    fn adjustment(&self, input: &AdjustmentInput) -> f64 {
        self.0 * input.used_slots
    }
}

#[test]
fn a_custom_adjustment_plugin_weighs_in() {
    let mut fs = fairshare_queue("fs", "USER_SHARES[[alice, 1]]");
    fs.fairshare_factors.fairshare_adjustment = Some(2.0);
    let mut c = cluster(hosts(1, 2), vec![fs]);
    c.set_fairshare_adjustment(Arc::new(PerSlot(5.0)));
    submit(&mut c, "fs", "alice", 1, 60);
    advance(&mut c, SimTime::ZERO);
    let index = c.queue_index("fs").expect("queue");
    // 1 / ((1 + 1) * 3 + 5 * 1 * 2) = 1/16.
    let priority = c
        .dynamic_priority_of(index, "alice", SimTime::ZERO)
        .expect("shares");
    assert!((priority - 1.0 / 16.0).abs() < 1e-9, "{priority}");
    let report = c.queue_report(index, SimTime::ZERO);
    let row = &report.fairshare.expect("table").users[0];
    assert!((row.adjust - 5.0).abs() < 1e-9);
}

// ---------------------------------------------------------------------------
// Limits and pending reasons

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

fn with_users(
    hosts: Vec<HostConfig>,
    queues: Vec<QueueConfig>,
    users: Vec<UserLimitConfig>,
    groups: Vec<UserGroupConfig>,
    preempt_for: &str,
) -> Cluster {
    let mut config = config(hosts, queues);
    config.users = users;
    config.user_groups = groups;
    config.params.preempt_for = preempt_for.parse().expect("valid PREEMPT_FOR");
    Cluster::new(config).expect("valid")
}

fn limit(name: &str, max_jobs: Option<u32>, per_processor: Option<f64>) -> UserLimitConfig {
    UserLimitConfig {
        name: name.into(),
        max_jobs,
        slots_per_processor: per_processor,
    }
}

#[test]
fn user_and_group_limits_hold_jobs_with_their_reasons() {
    let group = UserGroupConfig {
        name: "team".into(),
        members: vec!["alice".into(), "bob".into()],
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

// ---------------------------------------------------------------------------
// Preemption (seed 003)

fn preemptive(text: &str, priority: u32) -> QueueConfig {
    let mut q = queue(text, priority);
    q.preemption = "PREEMPTIVE".parse().expect("valid");
    q
}

/// Seed 003's second table: a user's MAX_JOBS ignores suspended jobs once
/// preemption is enabled, so suspending the user's own lower job lets the
/// preemptive job start.
#[test]
fn preemption_frees_a_users_max_jobs() {
    let mut c = with_users(
        hosts(1, 8),
        vec![preemptive("high", 90), queue("low", 10)],
        vec![limit("alice", Some(2), None)],
        vec![],
        "",
    );
    let low = [
        submit(&mut c, "low", "alice", 1, 60),
        submit(&mut c, "low", "alice", 1, 60),
    ];
    let bob = submit(&mut c, "low", "bob", 1, 60);
    advance(&mut c, SimTime::ZERO);
    let high = submit_at(&mut c, minutes(1), "high", spec("alice", 1, 60));
    let transitions = advance(&mut c, minutes(1));
    assert_eq!(state(&c, high), Some(JobState::Running));
    // Only alice's own job helps, the newest first; bob's is left alone.
    assert_eq!(
        preempted(&transitions, low[1]),
        Some((JobEvent::Suspended, high))
    );
    assert_eq!(state(&c, low[0]), Some(JobState::Running));
    assert_eq!(state(&c, bob), Some(JobState::Running));
}

/// The rows of the second table for JL/P, group MAX_JOBS and JL/U: without
/// the PREEMPT_FOR keyword suspended jobs still count and the preemptive
/// job cannot start; with it, it can.
#[test]
fn preempt_for_decides_whether_suspending_helps() {
    let group = || UserGroupConfig {
        name: "team".into(),
        members: vec!["alice".into(), "bob".into()],
    };
    let host = || {
        let mut host = HostConfig::new("h1", 8);
        host.processors = Some(4);
        host
    };
    let jlu_host = || {
        let mut host = HostConfig::new("h1", 8);
        host.user_slot_limit = Some(2);
        host
    };
    type Case = (
        &'static str,
        Vec<UserLimitConfig>,
        Vec<UserGroupConfig>,
        HostConfig,
        &'static str,
        PendingReason,
    );
    let cases: Vec<Case> = vec![
        (
            "USER_JLP",
            vec![limit("alice", None, Some(0.5))],
            vec![],
            host(),
            "alice",
            PendingReason::UserProcessorLimit,
        ),
        (
            "GROUP_MAX",
            vec![limit("team", Some(2), None)],
            vec![group()],
            host(),
            "bob",
            PendingReason::UserGroupJobLimit,
        ),
        (
            "GROUP_JLP",
            vec![limit("team", None, Some(0.5))],
            vec![group()],
            host(),
            "bob",
            PendingReason::UserGroupProcessorLimit,
        ),
        (
            "HOST_JLU",
            vec![],
            vec![],
            jlu_host(),
            "alice",
            PendingReason::HostUserLimit,
        ),
    ];
    for (keyword, users, groups, host, submitter, blocked) in cases {
        for with_keyword in [false, true] {
            let mut c = with_users(
                vec![host.clone()],
                vec![preemptive("high", 90), queue("low", 10)],
                users.clone(),
                groups.clone(),
                if with_keyword { keyword } else { "" },
            );
            let low_users = if groups.is_empty() {
                ["alice", "alice"]
            } else {
                ["alice", "bob"]
            };
            for user in low_users {
                submit(&mut c, "low", user, 1, 60);
            }
            advance(&mut c, SimTime::ZERO);
            let high = submit_at(&mut c, minutes(1), "high", spec(submitter, 1, 60));
            let transitions = advance(&mut c, minutes(1));
            if with_keyword {
                assert_eq!(state(&c, high), Some(JobState::Running), "{keyword}");
                assert_eq!(
                    transitions
                        .iter()
                        .filter(|t| t.event == JobEvent::Suspended)
                        .count(),
                    1,
                    "{keyword}: one victim"
                );
            } else {
                assert_eq!(reason(&c, high), blocked, "{keyword} not set");
                assert!(
                    transitions.iter().all(|t| t.preempted_by.is_none()),
                    "{keyword} not set: nothing is preempted in vain"
                );
            }
        }
    }
}

#[test]
fn queue_limits_count_suspended_jobs() {
    let mut low = queue("low", 10);
    low.job_limit = Some(2);
    low.hosts = HostSelection::Listed(vec!["h1".into()]);
    let mut high = queue("high", 90);
    high.preemption = "PREEMPTIVE[low]".parse().expect("valid");
    let mut c = cluster(hosts(2, 2), vec![high, low]);
    let lows: Vec<JobId> = (0..3).map(|_| submit(&mut c, "low", "u", 1, 60)).collect();
    advance(&mut c, SimTime::ZERO);
    let urgent = submit_at(&mut c, minutes(1), "high", spec("u", 2, 60));
    let transitions = advance(&mut c, minutes(1));
    // urgent needs 2: h2's 2 free slots suffice, nothing is preempted.
    assert!(transitions.iter().all(|t| t.preempted_by.is_none()));
    assert_eq!(state(&c, urgent), Some(JobState::Running));
    let second = submit_at(&mut c, minutes(2), "high", spec("u", 1, 60));
    let transitions = advance(&mut c, minutes(2));
    assert_eq!(
        preempted(&transitions, lows[1]).map(|(_, by)| by),
        Some(second)
    );
    // low holds 1 running + 1 suspended = its QJOB_LIMIT of 2: the queue
    // limit counts the suspended job, so the third job is held by it.
    let low = c.queue_index("low").expect("queue");
    assert_eq!(c.queue_slot_usage(low), (1, 1, 1));
    assert_eq!(reason(&c, lows[2]), PendingReason::QueueJobLimit);
}

#[test]
fn terminate_when_preempt_requeues_the_victim() {
    let mut low = queue("low", 10);
    low.terminate_when_preempt = true;
    let mut c = cluster(hosts(1, 1), vec![preemptive("high", 90), low]);
    let victim = submit(&mut c, "low", "u", 1, 60);
    advance(&mut c, SimTime::ZERO);
    let high = submit_at(&mut c, minutes(20), "high", spec("u", 1, 30));
    let transitions = advance(&mut c, minutes(20));
    assert_eq!(
        preempted(&transitions, victim),
        Some((JobEvent::Requeued, high))
    );
    assert_eq!(state(&c, victim), Some(JobState::Pending));
    advance(&mut c, minutes(50));
    let job = c.job(victim).expect("rerun");
    assert_eq!(job.state, JobState::Running);
    assert_eq!(job.finish_time(), Some(minutes(110)), "it starts over");
}

#[test]
fn no_preempt_guards_protect_victims() {
    let mut params_run = config(hosts(1, 2), vec![preemptive("high", 90), queue("low", 10)]);
    params_run.params.preempt_guards.run_time = Some("30m".parse().expect("valid"));
    let mut c = Cluster::new(params_run).expect("valid");
    let old = submit(&mut c, "low", "u", 1, 600);
    advance(&mut c, SimTime::ZERO);
    let recent = submit_at(&mut c, minutes(40), "low", spec("u", 1, 600));
    advance(&mut c, minutes(40));
    let high = [
        submit_at(&mut c, minutes(45), "high", spec("u", 1, 60)),
        submit_at(&mut c, minutes(45), "high", spec("u", 1, 60)),
    ];
    let transitions = advance(&mut c, minutes(45));
    assert_eq!(
        preempted(&transitions, recent).map(|(_, by)| by),
        Some(high[0])
    );
    assert_eq!(
        preempted(&transitions, old),
        None,
        "ran 45 minutes: protected"
    );
    assert_eq!(reason(&c, high[1]), PendingReason::NotEnoughSlots);
}

/// X ran 40 minutes before a suspension and resumed at 50m; Y started at
/// 30m. At 60m X is the most recently (re)started job, but Y has run for
/// less time (30 minutes against X's 50).
#[test]
fn least_run_time_picks_the_shortest_running_job() {
    for least_run_time in [false, true] {
        let mut h1 = HostConfig::new("h1", 1);
        h1.resources = vec!["a".into()];
        let mut config = config(
            vec![h1, HostConfig::new("h2", 1)],
            vec![preemptive("high", 90), queue("low", 10)],
        );
        if least_run_time {
            config.params.preempt_for = "LEAST_RUN_TIME".parse().expect("valid");
        }
        let mut c = Cluster::new(config).expect("valid");
        let x = submit(&mut c, "low", "u", 1, 600);
        advance(&mut c, SimTime::ZERO);
        let y = submit_at(&mut c, minutes(30), "low", spec("u", 1, 600));
        advance(&mut c, minutes(30));
        let mut on_h1 = spec("u", 1, 10);
        on_h1.resources = vec!["a".into()];
        submit_at(&mut c, minutes(40), "high", on_h1);
        let transitions = advance(&mut c, minutes(40));
        assert!(preempted(&transitions, x).is_some());
        advance(&mut c, minutes(50));
        assert_eq!(state(&c, x), Some(JobState::Running), "x resumed");
        let urgent = submit_at(&mut c, minutes(60), "high", spec("u", 1, 10));
        let transitions = advance(&mut c, minutes(60));
        let expected = if least_run_time { y } else { x };
        assert_eq!(
            preempted(&transitions, expected).map(|(_, by)| by),
            Some(urgent),
            "LEAST_RUN_TIME: {least_run_time}"
        );
    }
}

// ---------------------------------------------------------------------------
// Slot reservation, backfill and their preemption

#[test]
fn reservation_holds_free_slots_and_backfill_uses_them() {
    let mut reserving = queue("r", 80);
    reserving.slot_reserve = Some(120);
    let mut backfill = queue("b", 50);
    backfill.backfill = true;
    let plain = queue("plain", 40);
    let mut c = cluster(hosts(1, 4), vec![reserving, backfill, plain]);
    let mut small = spec("u", 2, 60);
    small.run_limit = Some(Duration::from_secs(3600));
    submit_at(&mut c, SimTime::ZERO, "r", small);
    advance(&mut c, SimTime::ZERO);
    let big = submit_at(&mut c, minutes(1), "r", spec("u", 4, 60));
    // A plain job may not take the reserved slots.
    let blocked = submit_at(&mut c, minutes(1), "plain", spec("u", 1, 10));
    advance(&mut c, minutes(1));
    assert_eq!(reason(&c, big), PendingReason::NotEnoughSlots);
    assert_eq!(reason(&c, blocked), PendingReason::SlotsReserved);
    let index = c.queue_index("r").expect("queue");
    assert_eq!(c.queue_report(index, minutes(1)).rsv, 2);
    // A backfill job that ends before 1h may; one that would not, may not.
    let mut fits = spec("u", 2, 20);
    fits.run_limit = Some(Duration::from_secs(30 * 60));
    let fits = submit_at(&mut c, minutes(2), "b", fits);
    let mut too_long = spec("u", 1, 20);
    too_long.run_limit = Some(Duration::from_secs(90 * 60));
    let too_long = submit_at(&mut c, minutes(2), "b", too_long);
    advance(&mut c, minutes(2));
    assert_eq!(state(&c, fits), Some(JobState::Running));
    assert_eq!(reason(&c, too_long), PendingReason::SlotsReserved);
    assert_eq!(state(&c, blocked), Some(JobState::Pending));
    assert_eq!(
        c.queue_report(index, minutes(2)).rsv,
        0,
        "the backfill job took them"
    );
    // At 1h the small job ends and the big one starts on time.
    advance(&mut c, minutes(60));
    assert_eq!(state(&c, big), Some(JobState::Running));
}

#[test]
fn reservations_expire() {
    let mut reserving = queue("r", 80);
    reserving.slot_reserve = Some(5);
    let mut c = cluster(hosts(1, 4), vec![reserving, queue("plain", 40)]);
    submit(&mut c, "r", "u", 2, 600);
    advance(&mut c, SimTime::ZERO);
    submit_at(&mut c, minutes(1), "r", spec("u", 4, 60));
    let plain = submit_at(&mut c, minutes(1), "plain", spec("u", 1, 60));
    advance(&mut c, minutes(1));
    assert_eq!(reason(&c, plain), PendingReason::SlotsReserved);
    // Five cycles of MBD_SLEEP_TIME (60s) later, the reservation is gone.
    assert_eq!(c.next_event_time(), Some(minutes(6)));
    advance(&mut c, minutes(6));
    assert_eq!(state(&c, plain), Some(JobState::Running));
}

#[test]
fn backfill_jobs_are_preempted_only_with_preempt_jobtype_backfill() {
    for preempt_backfill in [false, true] {
        let mut backfill = queue("b", 50);
        backfill.backfill = true;
        backfill.preemption = "PREEMPTABLE".parse().expect("valid");
        let mut reserving = queue("r", 80);
        reserving.slot_reserve = Some(10);
        let mut config = config(hosts(1, 1), vec![reserving, preemptive("p", 75), backfill]);
        config.params.preempt_backfill = preempt_backfill;
        let mut c = Cluster::new(config).expect("valid");
        // The seed's warning: p may delay r's reserved jobs.
        assert_eq!(
            c.warnings().iter().any(|w| w.location
                == ConfigLocation::Queue {
                    index: 1,
                    field: "PREEMPTION"
                }),
            preempt_backfill
        );
        let victim = submit(&mut c, "b", "u", 1, 60);
        advance(&mut c, SimTime::ZERO);
        let urgent = submit_at(&mut c, minutes(1), "p", spec("u", 1, 60));
        let transitions = advance(&mut c, minutes(1));
        assert_eq!(
            preempted(&transitions, victim).is_some(),
            preempt_backfill,
            "PREEMPT_JOBTYPE=BACKFILL: {preempt_backfill}"
        );
        assert_eq!(
            state(&c, urgent),
            Some(if preempt_backfill {
                JobState::Running
            } else {
                JobState::Pending
            })
        );
    }
}

// ---------------------------------------------------------------------------
// Jobs leaving

#[test]
fn removing_jobs_keeps_the_books() {
    let mut c = cluster(
        hosts(2, 2),
        vec![
            preemptive("high", 90),
            fairshare_queue("low", "USER_SHARES[[default, 1]]"),
        ],
    );
    let low: Vec<JobId> = (0..5).map(|_| submit(&mut c, "low", "u", 1, 60)).collect();
    advance(&mut c, SimTime::ZERO);
    let high = submit_at(&mut c, minutes(1), "high", spec("v", 1, 60));
    advance(&mut c, minutes(1));
    let suspended = low
        .iter()
        .copied()
        .find(|&id| state(&c, id) == Some(JobState::Suspended))
        .expect("one low job suspended");
    for id in [suspended, low[4], high] {
        assert!(c.remove_job(id).is_some());
        c.audit().expect("consistent books after removal");
    }
    advance(&mut c, minutes(2));
}

#[test]
fn forwarded_jobs_from_users_without_shares_are_refused() {
    let mut fs = fairshare_queue("fs", "USER_SHARES[[alice, 1]]");
    fs.receive_from = Some(mcfed_cluster::ReceiveFrom::All);
    let mut c = cluster(hosts(1, 1), vec![fs]);
    let forward = JobForward {
        forward_seq: 1,
        source_job: 7,
        queue: name("fs"),
        spec: spec("mallory", 1, 10),
        submitted_at: SimTime::ZERO,
        attempt: 0,
    };
    let from = ClusterName::new("C1").expect("valid");
    assert_eq!(
        c.receive_forward(SimTime::ZERO, &from, &forward),
        Err(RejectReason::NoShares {
            user: "mallory".into()
        })
    );
}

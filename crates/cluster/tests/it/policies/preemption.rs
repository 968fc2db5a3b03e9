//! Preemption (seed 003): victims, PREEMPT_FOR, slot counting, TERMINATE_WHEN, NO_PREEMPT_* guards.

use super::*;

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
        user_shares: None,
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

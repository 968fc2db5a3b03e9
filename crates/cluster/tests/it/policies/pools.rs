//! Queue-based fairshare (seed 000): slot pools, deserved slots, MAX_SLOTS_IN_POOL.

use super::*;

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

/// Seed 000: "Job limits and host limits are enforced by the scheduler.
/// ... The remaining ... job slots are redistributed among other queues
/// belonging to the same pool" — HJOB_LIMIT, UJOB_LIMIT and a user's
/// MAX_JOBS as well as QJOB_LIMIT (issue 27 item 1,
/// `scenarios/fairshare/pool-host-user-limits-remainder.toml`). One host of
/// 20 slots, two queues at 50/50 with plenty of work: the limited one runs
/// what its limit lets it, the other the rest.
#[test]
fn host_and_user_limits_leave_their_share_to_the_pool() {
    type Limit = fn(&mut QueueConfig, &mut ClusterConfig);
    let cases: [(&str, Limit, u32); 3] = [
        ("HJOB_LIMIT 4", |q, _| q.host_job_limit = Some(4), 4),
        // Two users, three slots each.
        ("UJOB_LIMIT 3", |q, _| q.user_job_limit = Some(3), 6),
        // alice may hold 5 slots, bob has no limit but submits 2 jobs.
        (
            "MAX_JOBS 5",
            |_, c| c.users = vec![limit("alice", Some(5), None)],
            7,
        ),
    ];
    for (what, set_limit, limited) in cases {
        let mut first = pooled("first", 50, "pool", 50);
        let second = pooled("second", 50, "pool", 50);
        let mut config = config(hosts(1, 20), Vec::new());
        set_limit(&mut first, &mut config);
        config.queues = vec![first, second];
        let mut c = Cluster::new(config).expect("valid");
        for n in 0..30 {
            submit(&mut c, "first", "alice", 1, 60);
            if n < 2 || what != "MAX_JOBS 5" {
                submit(&mut c, "first", "bob", 1, 60);
            }
            submit(&mut c, "second", "carol", 1, 60);
        }
        advance(&mut c, SimTime::ZERO);
        assert_eq!(running_slots(&c, "first"), limited, "{what}");
        assert_eq!(running_slots(&c, "second"), 20 - limited, "{what}");
        assert_eq!(c.audit(), Ok(()));
    }
}

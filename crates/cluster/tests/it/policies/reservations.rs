//! Slot reservation, backfill, and their preemption.

use super::*;

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

/// Seed 001, Resource reservation: "The APS value does not affect current
/// resource reservation policy" — nor does a higher `-sp`: a job submitted
/// after a wide job reserved, that the queue's order puts ahead of it and
/// that cannot backfill, does not take the reserved slots (issue 27 item
/// 3, `scenarios/aps/reservation-held-against-higher-aps.toml`).
#[test]
fn a_later_job_ahead_in_the_order_does_not_take_reserved_slots() {
    for aps in [false, true] {
        let mut normal = queue("normal", 10);
        normal.slot_reserve = Some(100);
        if aps {
            normal.aps_priority = Some("WEIGHT[[JPRIORITY, 1]]".parse().expect("valid"));
        }
        let mut config = config(hosts(1, 4), vec![normal]);
        config.params.max_user_priority = Some(100);
        let mut c = Cluster::new(config).expect("valid");
        let with_priority = |mut spec: JobSpec, priority: u32| {
            spec.set_options(mcfed_protocol::JobOptions {
                user_priority: Some(priority),
                ..Default::default()
            });
            spec
        };
        for _ in 0..2 {
            let mut running = with_priority(spec("u", 1, 10), 50);
            running.run_limit = Some(Duration::from_secs(600));
            submit_at(&mut c, SimTime::ZERO, "normal", running);
        }
        let wide = submit_at(
            &mut c,
            SimTime::ZERO,
            "normal",
            with_priority(spec("u", 4, 10), 50),
        );
        advance(&mut c, SimTime::ZERO);
        assert_eq!(reason(&c, wide), PendingReason::NotEnoughSlots);
        let late = submit_at(
            &mut c,
            minutes(1),
            "normal",
            with_priority(spec("u", 1, 30), 90),
        );
        advance(&mut c, minutes(1));
        assert_eq!(reason(&c, late), PendingReason::SlotsReserved, "APS: {aps}");
        advance(&mut c, minutes(10));
        assert_eq!(state(&c, wide), Some(JobState::Running), "APS: {aps}");
        assert_eq!(state(&c, late), Some(JobState::Pending));
        advance(&mut c, minutes(20));
        assert_eq!(state(&c, late), Some(JobState::Running));
        assert_eq!(c.audit(), Ok(()));
    }
}

/// `bhosts` RSV (issue 27 item 10): the free slots a reservation holds, host
/// by host, the hosts with most free slots first; they add up to the
/// queue's RSV, and drop to nothing when the job starts.
#[test]
fn reserved_slots_are_shown_host_by_host() {
    let mut reserving = queue("r", 80);
    reserving.slot_reserve = Some(100);
    let mut c = cluster(hosts(2, 2), vec![reserving]);
    let mut small = spec("u", 1, 10);
    small.run_limit = Some(Duration::from_secs(600));
    submit_at(&mut c, SimTime::ZERO, "r", small);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(c.reserved_slots_by_host(), vec![0, 0], "no reservation yet");
    let big = submit_at(&mut c, minutes(1), "r", spec("u", 4, 60));
    advance(&mut c, minutes(1));
    assert_eq!(reason(&c, big), PendingReason::NotEnoughSlots);
    // The small job took one slot of h0: h1's two free slots first, then
    // h0's one.
    assert_eq!(c.reserved_slots_by_host(), vec![1, 2]);
    let index = c.queue_index("r").expect("queue");
    assert_eq!(c.queue_report(index, minutes(1)).rsv, 3);
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, big), Some(JobState::Running));
    assert_eq!(c.reserved_slots_by_host(), vec![0, 0]);
}

/// One 8-slot host, a pool of `a` and `b` at 50/50: `a` reserves slots
/// and backfills, `b` runs 4 two-hour jobs and has 4 more pending. `a`
/// runs four jobs with run limits of 10, 20, 30 and 40 minutes.
fn pool_with_reserving_queue(max_slots: Option<u32>) -> Cluster {
    let mut a = pooled("a", 20, "pool", 50);
    a.slot_reserve = Some(100);
    a.backfill = true;
    if let Some(pool) = &mut a.slot_pool {
        pool.max_slots = max_slots;
    }
    let mut c = cluster(hosts(1, 8), vec![a, pooled("b", 20, "pool", 50)]);
    for _ in 0..8 {
        submit(&mut c, "b", "u", 1, 120);
    }
    for minutes in [10, 20, 30, 40] {
        let mut job = spec("u", 1, minutes);
        job.run_limit = Some(Duration::from_secs(minutes * 60));
        submit_at(&mut c, SimTime::ZERO, "a", job);
    }
    advance(&mut c, SimTime::ZERO);
    c
}

/// Issue 27 item 2 (seed 000: "When MAX_SLOTS_IN_POOL, SLOT_RESERVE, and
/// BACKFILL are defined (in lsb.queues) for the same queue, jobs in the
/// queue cannot backfill using slots reserved by other jobs in the same
/// queue"): a wide job its queue's share holds back reserves, so the
/// slots its queue's jobs free stay free for it, even for a later job
/// short enough to backfill; the other pool queue keeps its share.
#[test]
fn a_pool_queues_wide_job_held_by_its_share_reserves_it() {
    let mut c = pool_with_reserving_queue(Some(8));
    let wide = submit_at(&mut c, minutes(1), "a", spec("u", 4, 30));
    advance(&mut c, minutes(1));
    assert_eq!(reason(&c, wide), PendingReason::PoolShareUsed);
    let mut short = spec("u", 1, 5);
    short.run_limit = Some(Duration::from_secs(300));
    let short = submit_at(&mut c, minutes(2), "a", short);
    advance(&mut c, minutes(2));
    advance(&mut c, minutes(10));
    assert_eq!(reason(&c, short), PendingReason::SlotsReserved);
    assert_eq!(c.reserved_slots_by_host(), vec![1]);
    let a = c.queue_index("a").expect("queue");
    assert_eq!(c.queue_report(a, minutes(10)).rsv, 1);
    assert_eq!([running_slots(&c, "a"), running_slots(&c, "b")], [3, 4]);
    advance(&mut c, minutes(30));
    assert_eq!(c.reserved_slots_by_host(), vec![3]);
    assert_eq!(running_slots(&c, "b"), 4, "b keeps its share, no more");
    advance(&mut c, minutes(40));
    assert_eq!(state(&c, wide), Some(JobState::Running));
    assert_eq!(state(&c, short), Some(JobState::Pending));
    assert_eq!(c.reserved_slots_by_host(), vec![0]);
}

/// Without MAX_SLOTS_IN_POOL the queue's own jobs may backfill its share
/// reservation: one whose run limit ends before the wide job's predicted
/// start (40m, when the last of the queue's running jobs reaches its run
/// limit) runs in a freed slot; one without a run limit does not.
#[test]
fn without_max_slots_in_pool_a_short_job_backfills_the_share_reservation() {
    let mut c = pool_with_reserving_queue(None);
    let wide = submit_at(&mut c, minutes(1), "a", spec("u", 4, 30));
    advance(&mut c, minutes(1));
    let unlimited = submit_at(&mut c, minutes(2), "a", spec("u", 1, 5));
    let mut short = spec("u", 1, 5);
    short.run_limit = Some(Duration::from_secs(300));
    let short = submit_at(&mut c, minutes(2), "a", short);
    advance(&mut c, minutes(2));
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, short), Some(JobState::Running), "it backfills");
    assert_eq!(reason(&c, unlimited), PendingReason::SlotsReserved);
    advance(&mut c, minutes(15));
    advance(&mut c, minutes(40));
    assert_eq!(state(&c, wide), Some(JobState::Running));
}

/// A job that can never fit in its queue (HJOB_LIMIT 1 on the one 2-slot
/// host, for a 2-slot job) does not reserve: its reservation would hold
/// the free slots from everyone, lapse and be made again for ever, and
/// the cluster would never run out of wake-ups.
#[test]
fn a_job_that_never_fits_does_not_reserve() {
    let mut reserving = queue("r", 80);
    reserving.slot_reserve = Some(3);
    reserving.host_job_limit = Some(1);
    let mut c = cluster(hosts(1, 2), vec![reserving, queue("other", 10)]);
    let wide = submit(&mut c, "r", "u", 2, 10);
    advance(&mut c, SimTime::ZERO);
    assert_eq!(reason(&c, wide), PendingReason::NotEnoughSlots);
    assert_eq!(c.reserved_slots_by_host(), vec![0]);
    assert_eq!(c.next_event_time(), None, "no reservation to expire");
    let other = submit_at(&mut c, minutes(1), "other", spec("u", 1, 10));
    advance(&mut c, minutes(1));
    assert_eq!(state(&c, other), Some(JobState::Running));
}

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

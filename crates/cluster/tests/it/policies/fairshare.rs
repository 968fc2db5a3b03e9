//! User-based fairshare (seed 002): dynamic priorities, shares, the adjustment plug-in.

use super::*;

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

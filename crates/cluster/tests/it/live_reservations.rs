//! Reservations made and deleted at a running cluster (`brsvadd`,
//! `brsvdel`; issue 27 item 8): the refusals an LSF administrator expects,
//! the policies that bind users other than the administrator, the jobs of
//! a deleted reservation (running ones detached, pending ones pending),
//! and what a journal keeps of them.

use mcfed_cluster::advance::policy::ReservationPolicyConfig;
use mcfed_cluster::{
    AdvanceReservationConfig, Cluster, JobState, LiveReservations, PendingReason, ReservationError,
};
use mcfed_protocol::SimTime;

use super::advance_reservations::{advance, config, job, maint, minutes, reason, state, submit};

/// A reservation of `slots` slots of `hosts` from `start` to `end`
/// minutes, for alice.
fn rsv(
    name: &str,
    hosts: &[&str],
    slots: Option<u32>,
    start: u64,
    end: u64,
) -> AdvanceReservationConfig {
    AdvanceReservationConfig {
        name: name.into(),
        hosts: hosts.iter().map(|host| (*host).to_owned()).collect(),
        slots,
        start: minutes(start),
        end: minutes(end),
        users: vec!["alice".into()],
        open: false,
    }
}

#[test]
fn brsvadd_refuses_what_an_lsf_administrator_expects() {
    let mut c = Cluster::new(config(vec![maint()])).expect("valid");
    advance(&mut c, minutes(10));
    let refused = |c: &mut Cluster, config| {
        c.add_reservation(minutes(10), config, None)
            .expect_err("refused")
    };
    assert_eq!(
        refused(&mut c, maint()),
        ReservationError::NameUsed("maint".into())
    );
    assert!(matches!(
        refused(&mut c, rsv("x", &["h9"], None, 20, 30)),
        ReservationError::Invalid { field: "-m", .. }
    ));
    assert!(matches!(
        refused(&mut c, rsv("x", &["h2"], None, 30, 30)),
        ReservationError::Invalid { field: "-e", .. }
    ));
    assert!(matches!(
        refused(&mut c, rsv("x", &["h2"], Some(5), 20, 30)),
        ReservationError::Invalid { field: "-n", .. }
    ));
    assert!(matches!(
        refused(&mut c, rsv("x", &["h2"], None, 5, 30)),
        ReservationError::Past { .. }
    ));
    let mut bad_user = rsv("x", &["h2"], None, 20, 30);
    bad_user.users = vec!["al ice".into()];
    assert!(matches!(
        refused(&mut c, bad_user),
        ReservationError::Invalid { field: "-u", .. }
    ));
    // maint holds all 4 slots of h1 from 60m to 120m: 1 more slot of h1
    // in 100m-130m overlaps it; 5 slots of h1 and h2 in 90m-100m do too
    // (h2 has only 4 beside maint).
    let error = refused(&mut c, rsv("x", &["h1"], Some(1), 100, 130));
    assert!(
        error.to_string().starts_with("Reservation overlaps"),
        "{error}"
    );
    assert!(error.to_string().contains("maint"), "{error}");
    assert!(matches!(
        refused(&mut c, rsv("x", &["h1", "h2"], Some(5), 90, 100)),
        ReservationError::Overlaps { .. }
    ));
    // Before maint starts, or beside it on h2, it fits.
    c.add_reservation(minutes(10), rsv("early", &["h1"], None, 20, 60), None)
        .expect("ends as maint starts");
    c.add_reservation(
        minutes(10),
        rsv("beside", &["h1", "h2"], Some(4), 90, 100),
        None,
    )
    .expect("h2 gives its 4");
    // Now h2 is taken from 90m to 100m: another slot of h2 at 95m is not.
    assert!(matches!(
        refused(&mut c, rsv("y", &["h2"], Some(1), 95, 99)),
        ReservationError::Overlaps { .. }
    ));
    let names: Vec<String> = c
        .advance_reservations(minutes(10))
        .into_iter()
        .map(|report| report.name)
        .collect();
    assert_eq!(names, ["maint", "early", "beside"]);
}

#[test]
fn an_added_reservation_holds_its_slots_and_runs_its_jobs() {
    let mut c = Cluster::new(config(Vec::new())).expect("valid");
    advance(&mut c, SimTime::ZERO);
    c.add_reservation(minutes(5), rsv("now", &["h1"], None, 5, 65), None)
        .expect("added");
    let mine = submit(&mut c, minutes(5), job("alice", 2, 30, None, Some("now")));
    let other = submit(&mut c, minutes(5), job("bob", 6, 30, None, None));
    advance(&mut c, minutes(5));
    assert_eq!(state(&c, mine), Some(JobState::Running));
    // h1's 2 other slots are held: bob's 6 do not fit on h2's 4.
    assert_eq!(state(&c, other), Some(JobState::Pending));
    assert_eq!(reason(&c, other), PendingReason::AdvanceReserved);
}

#[test]
fn brsvdel_detaches_running_jobs_and_leaves_pending_ones_pending() {
    let mut c = Cluster::new(config(vec![maint()])).expect("valid");
    let running = submit(
        &mut c,
        minutes(60),
        job("alice", 4, 100, None, Some("maint")),
    );
    let waiting = submit(
        &mut c,
        minutes(60),
        job("alice", 1, 10, None, Some("maint")),
    );
    let bob = submit(&mut c, minutes(60), job("bob", 2, 100, None, None));
    advance(&mut c, minutes(60));
    assert_eq!(state(&c, running), Some(JobState::Running));
    assert_eq!(state(&c, waiting), Some(JobState::Pending));
    assert_eq!(
        reason(&c, waiting),
        PendingReason::AdvanceReservationUnavailable
    );
    c.track_changes();
    let deleted = c
        .delete_reservation(minutes(70), "maint", None)
        .expect("deleted");
    assert_eq!(deleted.detached, vec![running]);
    assert_eq!(deleted.pending, 1);
    assert!(
        c.take_changes().contains(&running),
        "the detached job is journaled"
    );
    advance(&mut c, minutes(70));
    // At maint's end (120m) a closed reservation would have killed it: a
    // detached job runs on to its end (160m).
    advance(&mut c, minutes(130));
    assert_eq!(state(&c, running), Some(JobState::Running));
    assert!(c.job(running).expect("a job").spec.resources.is_empty());
    assert_eq!(
        reason(&c, waiting),
        PendingReason::AdvanceReservationMissing
    );
    assert_eq!(state(&c, bob), Some(JobState::Running));
    assert_eq!(
        c.delete_reservation(minutes(130), "maint", None),
        Err(ReservationError::NotFound("maint".into()))
    );
    assert_eq!(
        c.live_reservations(),
        LiveReservations {
            added: Vec::new(),
            deleted: vec!["maint".into()]
        }
    );
}

#[test]
fn a_users_brsvadd_needs_a_policy_and_deletes_only_their_own() {
    let mut config = config(Vec::new());
    config.reservation_policies = vec![ReservationPolicyConfig {
        name: "day".into(),
        users: vec!["alice".into()],
        hosts: vec!["h2".into()],
        windows: vec!["8:00-18:00".parse().expect("a window")],
    }];
    let mut c = Cluster::new(config).expect("valid");
    let nine = 9 * 60;
    let refused = c
        .add_reservation(
            SimTime::ZERO,
            rsv("a", &["h2"], None, nine, nine + 60),
            Some("bob"),
        )
        .expect_err("bob is in no policy");
    assert!(matches!(refused, ReservationError::NotPermitted { .. }));
    assert!(
        refused.to_string().contains("User <bob> is not allowed"),
        "{refused}"
    );
    for (hosts, start, end) in [(["h1"], nine, nine + 60), (["h2"], 7 * 60, nine)] {
        assert!(matches!(
            c.add_reservation(
                SimTime::ZERO,
                rsv("a", &hosts, None, start, end),
                Some("alice")
            ),
            Err(ReservationError::NotPermitted { .. })
        ));
    }
    c.add_reservation(
        SimTime::ZERO,
        rsv("a", &["h2"], None, nine, nine + 60),
        Some("alice"),
    )
    .expect("within the policy");
    // The administrator is bound by no policy.
    c.add_reservation(SimTime::ZERO, rsv("b", &["h1"], None, 60, 120), None)
        .expect("the administrator's");
    assert!(matches!(
        c.delete_reservation(SimTime::ZERO, "b", Some("alice")),
        Err(ReservationError::NotCreator { .. })
    ));
    assert!(matches!(
        c.delete_reservation(SimTime::ZERO, "a", Some("bob")),
        Err(ReservationError::NotCreator { .. })
    ));
    c.delete_reservation(SimTime::ZERO, "a", Some("alice"))
        .expect("her own");
}

#[test]
fn restoring_the_live_reservations_gives_the_same_reservations() {
    let mut c = Cluster::new(config(vec![maint()])).expect("valid");
    c.add_reservation(
        SimTime::ZERO,
        rsv("x", &["h2"], Some(2), 10, 20),
        Some("alice"),
    )
    .expect_err("no policy: refused");
    c.add_reservation(SimTime::ZERO, rsv("x", &["h2"], Some(2), 10, 20), None)
        .expect("added");
    c.delete_reservation(SimTime::ZERO, "maint", None)
        .expect("deleted");
    let live = c.live_reservations();
    let mut restored = Cluster::new(config(vec![maint()])).expect("valid");
    assert!(restored.restore_reservations(live).is_empty());
    assert_eq!(
        restored.advance_reservations(SimTime::ZERO),
        c.advance_reservations(SimTime::ZERO)
    );
    // Folding the same commands gives the same record.
    let mut folded = LiveReservations::default();
    folded.add(rsv("x", &["h2"], Some(2), 10, 20), None);
    folded.add(rsv("gone", &["h2"], Some(2), 30, 40), None);
    folded.delete("gone");
    folded.delete("maint");
    assert_eq!(folded, c.live_reservations());
}

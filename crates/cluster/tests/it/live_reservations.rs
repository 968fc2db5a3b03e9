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
    c.add_reservation(SimTime::ZERO, rsv("gone", &["h2"], Some(2), 30, 40), None)
        .expect("added");
    c.delete_reservation(SimTime::ZERO, "gone", None)
        .expect("deleted");
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

/// A pending job naming a reservation made and deleted live still pends
/// after a restart, when the restored cluster has no reservation left at
/// all (the restore must remember that one was deleted).
#[test]
fn a_restored_cluster_keeps_the_jobs_of_a_deleted_live_reservation_pending() {
    let mut c = Cluster::new(config(Vec::new())).expect("valid");
    c.add_reservation(SimTime::ZERO, rsv("gone", &["h1"], None, 10, 60), None)
        .expect("added");
    let waiting = submit(
        &mut c,
        SimTime::ZERO,
        job("alice", 1, 10, None, Some("gone")),
    );
    c.delete_reservation(minutes(1), "gone", None)
        .expect("deleted");
    advance(&mut c, minutes(20));
    assert_eq!(
        reason(&c, waiting),
        PendingReason::AdvanceReservationMissing
    );
    let image = c.job_image(waiting).expect("an image");
    let mut restored = Cluster::new(config(Vec::new())).expect("valid");
    assert!(
        restored
            .restore_reservations(c.live_reservations())
            .is_empty()
    );
    restored.restore_jobs([image]);
    advance(&mut restored, minutes(20));
    assert_eq!(state(&restored, waiting), Some(JobState::Pending));
    assert_eq!(
        reason(&restored, waiting),
        PendingReason::AdvanceReservationMissing
    );
}

/// One step of a generated run.
#[derive(Clone, Debug)]
enum Step {
    /// brsvadd: hosts (bit 0: h1, bit 1: h2), slots, start offset and
    /// length (minutes from now), by a user or the administrator.
    Add {
        hosts: u8,
        slots: u32,
        offset: u64,
        length: u64,
        by_user: bool,
    },
    /// brsvdel of the reservation made `index`-th (modulo those made).
    Delete { index: usize },
    /// A job of `slots` slots, run `run` minutes, naming reservation
    /// `index` (modulo those made) or none.
    Submit {
        slots: u32,
        run: u64,
        index: Option<usize>,
    },
    /// Time goes on `minutes`.
    Wait { minutes: u64 },
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        (1u8..4, 1u32..6, 0u64..60, 1u64..90, any::<bool>()).prop_map(
            |(hosts, slots, offset, length, by_user)| Step::Add {
                hosts,
                slots,
                offset,
                length,
                by_user
            }
        ),
        (0usize..8).prop_map(|index| Step::Delete { index }),
        (1u32..5, 1u64..120, proptest::option::of(0usize..8))
            .prop_map(|(slots, run, index)| Step::Submit { slots, run, index }),
        (1u64..40).prop_map(|minutes| Step::Wait { minutes }),
    ]
}

/// Whether, at every start of a reservation, the reservations active then
/// fit their hosts' slots (h1 and h2: 4 each) — checked by brute force
/// over the host sets, independently of the cluster's maximum flow.
fn all_fit(reports: &[mcfed_cluster::AdvanceReservationReport]) -> bool {
    reports.iter().all(|at| {
        let active: Vec<_> = reports
            .iter()
            .filter(|other| other.start <= at.start && at.start < other.end)
            .collect();
        // Hall's condition: every set of hosts holds the slots of the
        // reservations confined to it.
        [vec!["h1"], vec!["h2"], vec!["h1", "h2"]]
            .iter()
            .all(|set| {
                let confined: u32 = active
                    .iter()
                    .filter(|rsv| rsv.hosts.iter().all(|host| set.contains(&host.as_str())))
                    .map(|rsv| rsv.slots)
                    .sum();
                confined <= 4 * set.len() as u32
            })
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 64,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Any run of brsvadd, brsvdel, submissions and time: the books agree,
    /// the reservations accepted never overcommit their hosts, and a
    /// cluster restored from what a journal keeps has the same
    /// reservations.
    #[test]
    fn live_reservations_keep_the_books_and_survive_a_restore(
        steps in proptest::collection::vec(step(), 1..40)
    ) {
        let policy = ReservationPolicyConfig {
            name: "any".into(),
            users: vec!["alice".into()],
            hosts: vec!["h2".into()],
            windows: Vec::new(),
        };
        let mut configured = config(Vec::new());
        configured.reservation_policies = vec![policy];
        let mut c = Cluster::new(configured.clone()).expect("valid");
        let mut now = SimTime::ZERO;
        let mut made: Vec<String> = Vec::new();
        for (n, step) in steps.into_iter().enumerate() {
            match step {
                Step::Add { hosts, slots, offset, length, by_user } => {
                    let names: Vec<&str> = [(1, "h1"), (2, "h2")]
                        .iter()
                        .filter(|(bit, _)| hosts & bit != 0)
                        .map(|(_, host)| *host)
                        .collect();
                    let start = now.as_millis() / 60_000 + offset;
                    let mut config = rsv(&format!("r{n}"), &names, Some(slots), start, start + length);
                    config.users = vec!["alice".into(), "bob".into()];
                    let by = by_user.then_some("alice");
                    if c.add_reservation(now, config, by).is_ok() {
                        made.push(format!("r{n}"));
                    }
                }
                Step::Delete { index } if !made.is_empty() => {
                    let name = made[index % made.len()].clone();
                    let _ = c.delete_reservation(now, &name, None);
                }
                Step::Delete { .. } => {}
                Step::Submit { slots, run, index } => {
                    let name = index.filter(|_| !made.is_empty()).map(|i| made[i % made.len()].clone());
                    let spec = job("alice", slots, run, None, name.as_deref());
                    let _ = c.submit(now, "normal", spec, mcfed_cluster::JobOrigin::Local);
                }
                Step::Wait { minutes } => now += std::time::Duration::from_secs(minutes * 60),
            }
            advance(&mut c, now);
            let reports = c.advance_reservations(now);
            proptest::prop_assert!(all_fit(&reports), "{reports:?}");
        }
        let mut restored = Cluster::new(configured).expect("valid");
        proptest::prop_assert!(restored.restore_reservations(c.live_reservations()).is_empty());
        let names = |c: &Cluster| -> Vec<(String, SimTime, SimTime, u32)> {
            c.advance_reservations(now)
                .into_iter()
                .map(|r| (r.name, r.start, r.end, r.slots))
                .collect()
        };
        proptest::prop_assert_eq!(names(&restored), names(&c));
    }
}

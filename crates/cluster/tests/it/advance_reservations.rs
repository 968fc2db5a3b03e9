//! Advance reservations (issue 27 item 8): a reservation's slots are kept
//! from other jobs while it is active, and from jobs that would still run
//! at its start before then (backfill may use them); its jobs run only
//! while it is active, within its slots; the counters leave an active
//! reservation's slots out of the available ones (seed 004), an inactive
//! one's in; at its end a closed reservation kills its jobs, an open one
//! leaves them running.

use std::time::Duration;

use mcfed_cluster::{
    AdvanceReservationConfig, Cluster, ClusterConfig, ConfigLocation, HostConfig, JobId, JobOrigin,
    JobState, PendingReason, QueueConfig, ReceiveFrom, SubmitError,
};
use mcfed_protocol::{ClusterName, JobAction, JobEvent, JobSpec, QueueName, RejectReason, SimTime};

pub(crate) fn minutes(n: u64) -> SimTime {
    SimTime::from_secs(n * 60)
}

/// `maint`: alice's, all 4 slots of h1, from 60m to 120m.
pub(crate) fn maint() -> AdvanceReservationConfig {
    AdvanceReservationConfig {
        name: "maint".into(),
        hosts: vec!["h1".into()],
        slots: None,
        start: minutes(60),
        end: minutes(120),
        users: vec!["alice".into()],
        open: false,
    }
}

pub(crate) fn config(reservations: Vec<AdvanceReservationConfig>) -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("C").expect("valid"));
    config.hosts = vec![HostConfig::new("h1", 4), HostConfig::new("h2", 4)];
    let mut normal = QueueConfig::new(QueueName::new("normal").expect("valid"));
    normal.receive_from = Some(ReceiveFrom::All);
    config.queues = vec![normal];
    config.advance_reservations = reservations;
    config
}

pub(crate) fn job(
    user: &str,
    slots: u32,
    run: u64,
    limit: Option<u64>,
    rsv: Option<&str>,
) -> JobSpec {
    let mut spec = JobSpec::simple("j", user, Duration::from_secs(run * 60));
    spec.slots = slots;
    spec.run_limit = limit.map(|minutes| Duration::from_secs(minutes * 60));
    if let Some(name) = rsv {
        spec.resources = vec![mcfed_cluster::advance::reservation_word(name)];
    }
    spec
}

pub(crate) fn submit(c: &mut Cluster, at: SimTime, spec: JobSpec) -> JobId {
    c.submit(at, "normal", spec, JobOrigin::Local)
        .expect("accepted")
}

pub(crate) fn advance(c: &mut Cluster, at: SimTime) {
    let mut transitions = Vec::new();
    c.advance(at, &mut transitions);
    c.audit().expect("books agree");
}

pub(crate) fn state(c: &Cluster, id: JobId) -> Option<JobState> {
    c.job(id).map(|job| job.state)
}

pub(crate) fn reason(c: &Cluster, id: JobId) -> PendingReason {
    c.pending_reason(c.job(id).expect("a job"))
}

#[test]
fn before_its_start_only_jobs_that_end_in_time_use_its_slots() {
    let mut c = Cluster::new(config(vec![maint()])).expect("valid");
    // h2 is taken by a long job; h1's 4 slots are maint's from 60m.
    let long = submit(&mut c, SimTime::ZERO, job("bob", 4, 300, None, None));
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, long), Some(JobState::Running));
    let short = submit(&mut c, minutes(1), job("bob", 2, 30, Some(40), None));
    let late = submit(&mut c, minutes(1), job("bob", 2, 30, Some(90), None));
    let open = submit(&mut c, minutes(1), job("bob", 1, 30, None, None));
    let mine = submit(&mut c, minutes(1), job("alice", 4, 30, None, Some("maint")));
    advance(&mut c, minutes(1));
    assert_eq!(state(&c, short), Some(JobState::Running), "ends at 41m");
    assert_eq!(reason(&c, late), PendingReason::AdvanceReserved);
    assert_eq!(reason(&c, open), PendingReason::AdvanceReserved);
    assert_eq!(
        reason(&c, mine),
        PendingReason::AdvanceReservationUnavailable
    );
    // Inactive: the counters still count h1's free slots.
    assert_eq!(c.queue_counters(0, minutes(1)).available_slots, 2);
    assert_eq!(c.next_event_time(), Some(minutes(31)), "short ends first");
    advance(&mut c, minutes(31));
    assert_eq!(c.next_event_time(), Some(minutes(60)), "maint starts");
    advance(&mut c, minutes(60));
    assert_eq!(state(&c, mine), Some(JobState::Running));
    assert_eq!(c.job(mine).expect("runs").placement[0].host, 0);
    assert_eq!(reason(&c, open), PendingReason::AdvanceReserved);
    let report = c.advance_reservations(minutes(60));
    assert_eq!(
        (report[0].active, report[0].used, report[0].slots),
        (true, 4, 4)
    );
}

#[test]
fn an_active_reservations_free_slots_are_left_out_of_the_counters() {
    let open = AdvanceReservationConfig {
        open: true,
        ..maint()
    };
    let mut c = Cluster::new(config(vec![open])).expect("valid");
    advance(&mut c, SimTime::ZERO);
    assert_eq!(c.queue_counters(0, SimTime::ZERO).available_slots, 8);
    advance(&mut c, minutes(60));
    let counters = c.queue_counters(0, minutes(60));
    assert_eq!(counters.available_slots, 4, "h1's 4 are maint's");
    assert_eq!(counters.total_slots, 8);
    // Its own job takes 1: 3 are still held.
    let mine = submit(
        &mut c,
        minutes(61),
        job("alice", 1, 120, None, Some("maint")),
    );
    let other = submit(&mut c, minutes(61), job("bob", 5, 30, None, None));
    advance(&mut c, minutes(61));
    assert_eq!(state(&c, mine), Some(JobState::Running));
    assert_eq!(reason(&c, other), PendingReason::AdvanceReserved);
    assert_eq!(c.queue_counters(0, minutes(61)).available_slots, 4);
    // At its end the slots are everyone's: `other` runs.
    advance(&mut c, minutes(120));
    assert_eq!(state(&c, other), Some(JobState::Running));
    assert_eq!(
        state(&c, mine),
        Some(JobState::Running),
        "open: kept running"
    );
    assert_eq!(c.queue_counters(0, minutes(120)).available_slots, 2);
}

#[test]
fn a_reservations_jobs_stay_within_its_slots_and_users() {
    let mut half = maint();
    half.slots = Some(2);
    half.start = SimTime::ZERO;
    let mut c = Cluster::new(config(vec![half])).expect("valid");
    let first = submit(
        &mut c,
        SimTime::ZERO,
        job("alice", 2, 30, None, Some("maint")),
    );
    let second = submit(
        &mut c,
        SimTime::ZERO,
        job("alice", 1, 30, None, Some("maint")),
    );
    let other = submit(&mut c, SimTime::ZERO, job("bob", 6, 30, None, None));
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, first), Some(JobState::Running));
    assert_eq!(
        reason(&c, second),
        PendingReason::AdvanceReservationUnavailable
    );
    assert_eq!(
        state(&c, other),
        Some(JobState::Running),
        "h1's other 2 and h2"
    );
    assert_eq!(
        c.submit(
            SimTime::ZERO,
            "normal",
            job("bob", 1, 1, None, Some("maint")),
            JobOrigin::Local
        ),
        Err(SubmitError::CannotRun(RejectReason::MissingResource(
            "rsv==maint".into()
        ))),
        "bob is not one of its users"
    );
    assert!(
        c.submit(
            SimTime::ZERO,
            "normal",
            job("alice", 1, 1, None, Some("nosuch")),
            JobOrigin::Local
        )
        .is_err()
    );
}

#[test]
fn bad_reservations_are_refused_with_their_field() {
    let refused = |change: fn(&mut AdvanceReservationConfig)| {
        let mut reservation = maint();
        change(&mut reservation);
        Cluster::new(config(vec![reservation]))
            .expect_err("refused")
            .location
    };
    let at = |field| ConfigLocation::Reservation { index: 0, field };
    assert_eq!(refused(|r| r.hosts = vec!["h9".into()]), at("hosts"));
    assert_eq!(refused(|r| r.slots = Some(5)), at("slots"));
    assert_eq!(refused(|r| r.end = r.start), at("end"));
    assert_eq!(refused(|r| r.users.clear()), at("users"));
    assert_eq!(refused(|r| r.name = "a b".into()), at("name"));
}

/// brsvadd without `-o` makes a closed reservation: at its end, its jobs
/// still running or suspended are killed (EXIT, as `bkill`), at the end's
/// instant; its pending jobs keep pending, and a job running outside it is
/// left alone.
#[test]
fn a_closed_reservation_kills_its_jobs_at_its_end() {
    let mut c = Cluster::new(config(vec![maint()])).expect("valid");
    let running = submit(
        &mut c,
        minutes(60),
        job("alice", 2, 120, None, Some("maint")),
    );
    let stopped = submit(
        &mut c,
        minutes(60),
        job("alice", 1, 120, None, Some("maint")),
    );
    let waiting = submit(
        &mut c,
        minutes(60),
        job("alice", 4, 10, None, Some("maint")),
    );
    let outside = submit(&mut c, minutes(60), job("bob", 4, 300, None, None));
    advance(&mut c, minutes(60));
    let mut transitions = Vec::new();
    c.control(
        minutes(61),
        stopped,
        &mcfed_protocol::JobAction::Stop,
        &mut transitions,
    )
    .expect("bstop");
    assert_eq!(state(&c, running), Some(JobState::Running));
    assert_eq!(state(&c, stopped), Some(JobState::UserSuspended));
    assert_eq!(state(&c, waiting), Some(JobState::Pending));
    assert_eq!(state(&c, outside), Some(JobState::Running));
    assert_eq!(c.next_event_time(), Some(minutes(120)), "maint ends");
    let mut transitions = Vec::new();
    c.advance(minutes(120), &mut transitions);
    c.audit().expect("books agree");
    let killed: Vec<(JobId, mcfed_protocol::JobEvent, SimTime)> = transitions
        .iter()
        .filter(|t| t.event.ends_job())
        .map(|t| (t.job, t.event, t.at))
        .collect();
    // Its own reason, not bkill's: bhist, bjobs -l and lsb.acct tell it.
    let ended = mcfed_protocol::JobEvent::ReservationEnded;
    assert_eq!(
        killed,
        vec![
            (running, ended, minutes(120)),
            (stopped, ended, minutes(120))
        ]
    );
    assert_eq!(state(&c, running), None, "killed jobs leave the table");
    assert_eq!(state(&c, stopped), None);
    assert_eq!(state(&c, waiting), Some(JobState::Pending));
    assert_eq!(
        reason(&c, waiting),
        PendingReason::AdvanceReservationUnavailable
    );
    assert_eq!(state(&c, outside), Some(JobState::Running));
    assert_eq!(c.queue_counters(0, minutes(120)).available_slots, 4);
}

/// A send queue's job never runs on this cluster's hosts, and no other
/// cluster knows this cluster's reservations: a job naming one there is
/// refused at `bsub` with the reason, not left pending for ever.
#[test]
fn a_job_naming_a_reservation_is_not_forwarded() {
    let c = Cluster::new(config(vec![maint()])).expect("valid");
    let refused = c
        .check_not_forwarding_reservation("send", &job("alice", 1, 10, None, Some("maint")))
        .expect_err("refused");
    assert_eq!(
        refused,
        SubmitError::ReservationForwarded {
            reservation: "maint".into(),
            queue: "send".into(),
        }
    );
    assert!(
        refused
            .to_string()
            .contains("submit to a queue of this cluster")
    );
    assert_eq!(
        c.check_not_forwarding_reservation("send", &job("alice", 1, 10, None, None)),
        Ok(())
    );
    assert_eq!(
        c.check_not_forwarding_reservation("send", &job("alice", 1, 10, None, Some("nope"))),
        Err(SubmitError::CannotRun(RejectReason::MissingResource(
            "rsv==nope".into()
        )))
    );
}

/// A job suspended by preemption before a reservation starts does not
/// resume into the slots the reservation holds once active: it waits for
/// its end.
///
/// h1 (4 slots); `half` holds 2 of them for alice from 30m to 120m.
/// 0m: bob's `victim` (4 slots, run limit 25m: it ends before 30m, so it
/// may use half's slots) runs in `low`. 10m: carol's `urgent` (2 slots,
/// 60m, no run limit) in the preemptive `high` suspends it and runs on the
/// 2 slots half does not hold. 70m: `urgent` ends; 4 slots are free but
/// half, active, holds 2: `victim` stays suspended (before, it resumed on
/// all 4). 120m: half ends and `victim` resumes.
#[test]
fn a_suspended_job_does_not_resume_into_an_active_reservation() {
    let half = AdvanceReservationConfig {
        name: "half".into(),
        hosts: vec!["h1".into()],
        slots: Some(2),
        start: minutes(30),
        end: minutes(120),
        users: vec!["alice".into()],
        open: false,
    };
    let mut config = ClusterConfig::new(ClusterName::new("C").expect("valid"));
    config.hosts = vec![HostConfig::new("h1", 4)];
    let mut high = QueueConfig::new(QueueName::new("high").expect("valid"));
    high.priority = 50;
    high.preemption = "PREEMPTIVE".parse().expect("valid");
    let mut low = QueueConfig::new(QueueName::new("low").expect("valid"));
    low.priority = 10;
    low.preemption = "PREEMPTABLE".parse().expect("valid");
    config.queues = vec![high, low];
    config.advance_reservations = vec![half];
    let mut c = Cluster::new(config).expect("valid");
    let victim = c
        .submit(
            SimTime::ZERO,
            "low",
            job("bob", 4, 100, Some(25), None),
            JobOrigin::Local,
        )
        .expect("accepted");
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, victim), Some(JobState::Running));
    let urgent = c
        .submit(
            minutes(10),
            "high",
            job("carol", 2, 60, None, None),
            JobOrigin::Local,
        )
        .expect("accepted");
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, urgent), Some(JobState::Running));
    assert_eq!(state(&c, victim), Some(JobState::Suspended));
    advance(&mut c, minutes(70));
    assert_eq!(state(&c, urgent), None, "done");
    assert_eq!(
        state(&c, victim),
        Some(JobState::Suspended),
        "half holds 2 of the 4 free slots"
    );
    advance(&mut c, minutes(120));
    assert_eq!(state(&c, victim), Some(JobState::Running));
}

/// `bresume` of a job stopped before a reservation's start does not run it
/// on in the slots the reservation holds once active: it goes to SSUSP,
/// saying why, and the scheduler resumes it at the reservation's end.
///
/// 0m: bob's `long` (4 slots, no run limit) takes h2; bob's `stopped` (4
/// slots, run limit 50m: it ends before maint's start at 60m) takes h1.
/// 10m: `bstop`. 70m: `bresume` while maint holds all of h1: SSUSP (before,
/// it ran again at once inside maint). 120m: maint ends and it resumes.
#[test]
fn bresume_inside_an_active_reservation_suspends_until_it_fits() {
    let mut c = Cluster::new(config(vec![maint()])).expect("valid");
    let long = submit(&mut c, SimTime::ZERO, job("bob", 4, 300, None, None));
    let stopped = submit(&mut c, SimTime::ZERO, job("bob", 4, 100, Some(50), None));
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, long), Some(JobState::Running));
    assert_eq!(state(&c, stopped), Some(JobState::Running));
    let mut transitions = Vec::new();
    c.control(minutes(10), stopped, &JobAction::Stop, &mut transitions)
        .expect("stopped");
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, stopped), Some(JobState::UserSuspended));
    advance(&mut c, minutes(60));
    c.control(minutes(70), stopped, &JobAction::Resume, &mut transitions)
        .expect("resumed");
    assert_eq!(
        transitions.last().map(|t| t.event),
        Some(JobEvent::Suspended)
    );
    advance(&mut c, minutes(70));
    assert_eq!(
        state(&c, stopped),
        Some(JobState::Suspended),
        "maint holds all of h1"
    );
    let job = c.job(stopped).expect("a job");
    assert_eq!(c.suspend_reason(job), Some(PendingReason::AdvanceReserved));
    advance(&mut c, minutes(120));
    assert_eq!(state(&c, stopped), Some(JobState::Running));
    assert_eq!(c.suspend_reason(c.job(stopped).expect("a job")), None);
}

/// A slot pool's total leaves out the free slots an active reservation
/// holds, as the counters do: two pool queues at 50/50 on h1 and h2 (4
/// slots each) while `maint` holds h1 share the 4 slots of h2, 2 each
/// (before, the total was 8, each queue deserved 4, and the first took
/// all 4 of h2).
#[test]
fn a_pools_total_leaves_out_an_active_reservations_slots() {
    let mut config = config(vec![maint()]);
    config.queues = ["one", "two"]
        .into_iter()
        .map(|name| {
            let mut queue = QueueConfig::new(QueueName::new(name).expect("valid"));
            queue.slot_pool = Some(mcfed_cluster::SlotPoolConfig {
                pool: "p".into(),
                share: 50,
                max_slots: None,
                use_priority: None,
            });
            queue
        })
        .collect();
    let mut c = Cluster::new(config).expect("valid");
    for queue in ["one", "two"] {
        for _ in 0..6 {
            c.submit(
                minutes(60),
                queue,
                job("bob", 1, 30, None, None),
                JobOrigin::Local,
            )
            .expect("accepted");
        }
    }
    advance(&mut c, minutes(60));
    let report = c.report(minutes(60));
    let figures: Vec<(u32, u32, u32)> = report
        .queues
        .iter()
        .map(|queue| {
            let pool = queue.slot_pool.as_ref().expect("pool");
            (pool.pool_slots, pool.deserved_slots, queue.run)
        })
        .collect();
    assert_eq!(figures, vec![(4, 2, 2), (4, 2, 2)]);
}

/// A slot reservation's predicted start leaves out the slots an upcoming
/// advance reservation will hold then: `wide` (8 slots, run limit 1h)
/// could start at 30m when `long` ends, but maint (h1, 60m to 120m) would
/// start before it ends, so it starts at 120m; `fill` (run limit 50m) ends
/// by then and backfills at 2m. Before, the prediction said 30m and
/// `fill` pended until `wide` had run (3h).
#[test]
fn a_slot_reservations_prediction_leaves_out_an_upcoming_reservation() {
    let mut config = config(vec![maint()]);
    config.queues[0].slot_reserve = Some(1000);
    config.queues[0].backfill = true;
    let mut c = Cluster::new(config).expect("valid");
    let long = submit(&mut c, SimTime::ZERO, job("bob", 4, 30, Some(30), None));
    advance(&mut c, SimTime::ZERO);
    assert_eq!(state(&c, long), Some(JobState::Running));
    let wide = submit(&mut c, minutes(1), job("bob", 8, 60, Some(60), None));
    advance(&mut c, minutes(1));
    let fill = submit(&mut c, minutes(2), job("carol", 2, 50, Some(50), None));
    advance(&mut c, minutes(2));
    assert_eq!(state(&c, wide), Some(JobState::Pending));
    assert_eq!(state(&c, fill), Some(JobState::Running), "ends by 120m");
    for at in [30, 52, 60] {
        advance(&mut c, minutes(at));
        assert_eq!(state(&c, wide), Some(JobState::Pending), "at {at}m");
    }
    assert_eq!(state(&c, fill), None, "done at 52m");
    advance(&mut c, minutes(120));
    assert_eq!(state(&c, wide), Some(JobState::Running));
}

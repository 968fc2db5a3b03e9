//! Advance reservations among the other rules (issue 27 Deliver): small
//! generated clusters with advance reservations — active from the start,
//! upcoming, closed and open, limited to some users, with and without jobs
//! of their own, overlapping on hosts — alongside SLOT_RESERVE queues with
//! wide jobs, BACKFILL queues and run limits, a slot pool, QJOB_LIMIT, an
//! lsb.resources Limit, APS and user priorities, with `bkill`, `bstop` and
//! `bresume` in between. After every step, whatever the plan:
//!
//! - **(a)** no job outside an active advance reservation runs in the
//!   slots it holds: for every set of active reservations, their hosts'
//!   slots less the running slots there of jobs belonging to none of them
//!   are at least the slots they reserve (checked on every set, so that
//!   it does not depend on where the scheduler lays the held slots). This
//!   covers jobs `bresume` runs again after a `bstop`: one that would run
//!   in a reservation's slots goes to SSUSP until it fits, as in LSF
//!   (found by this property);
//! - **(b)** a job naming a reservation runs (or is suspended) only from
//!   its start, and a closed one's jobs are gone by its end;
//! - **(c)** a job that starts while an earlier-submitted job of its queue
//!   holds a slot reservation (one held before and after the step, so it
//!   held at the start) is a backfill job: its queue has BACKFILL, it
//!   has a run limit, and the run limit ends by the reserving job's
//!   predicted start. This is what `Cluster::binding_reservations` lets
//!   through (docs/scheduling.md, "Slot reservation, backfill"); the
//!   prediction this checks against is the one after the step, which
//!   a backfill job cannot move (its slots are back by then) and nothing
//!   at the same instant moves earlier;
//! - **(d)** the books audit (`Cluster::audit`) passes;
//! - **(e)** the indexed pass and the plain walk (`Cluster::scan_every_job`)
//!   make the same transitions and give the same reasons (the
//!   indexed_dispatch property has one fixed reservation; these vary).
//!
//! Plans whose reservations over-commit their hosts at some time (LSF's
//! brsvadd refuses those) are left out. `PROPTEST_CASES` sets the case
//! count.

use std::time::Duration;

use mcfed_cluster::{
    AdvanceReservationConfig, ApsPriority, ApsTerm, Cluster, ClusterConfig, Consumers, HostConfig,
    JobId, JobOrigin, JobState, LimitConfig, QueueConfig, SlotPoolConfig, SlotReservationView,
    Transition,
};
use mcfed_protocol::{ClusterName, JobAction, JobEvent, JobOptions, JobSpec, QueueName, SimTime};
use proptest::prelude::*;

use crate::twins::{Checks, Submission, Twins, drive};

const USERS: [&str; 3] = ["ann", "ben", "cat"];

#[derive(Clone, Debug)]
struct QueuePlan {
    priority: u32,
    reserve: Option<u32>,
    backfill: bool,
    job_limit: Option<u32>,
    aps: bool,
    pool: bool,
}

#[derive(Clone, Debug)]
struct RsvPlan {
    /// Bits over the hosts (modulo their count; never none).
    hosts: u8,
    /// Of their slots, in eighths (8 or more: all).
    eighths: u32,
    /// Minutes; 0: active from the start.
    start: u64,
    length: u64,
    /// Bits over `USERS`; 0: `all`.
    users: u8,
    open: bool,
}

#[derive(Clone, Debug)]
struct JobPlan {
    at: u64,
    queue: usize,
    user: usize,
    width: u32,
    run: u64,
    /// Minutes past the run time (may be negative: killed at its limit).
    limit: Option<i64>,
    /// The reservation it names (modulo their count).
    rsv: Option<usize>,
    priority: Option<u32>,
}

#[derive(Clone, Debug)]
struct Plan {
    hosts: Vec<u32>,
    queues: Vec<QueuePlan>,
    rsvs: Vec<RsvPlan>,
    /// A per-user lsb.resources slot Limit.
    per_user: bool,
    jobs: Vec<JobPlan>,
    /// (minute, nth job submitted so far, what: kill, stop, resume).
    acts: Vec<(u64, usize, u8)>,
}

fn queue() -> impl Strategy<Value = QueuePlan> {
    (
        1u32..4,
        prop::option::weighted(0.6, 1u32..5),
        prop::bool::weighted(0.6),
        prop::option::weighted(0.2, 2u32..8),
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.25),
    )
        .prop_map(
            |(priority, reserve, backfill, job_limit, aps, pool)| QueuePlan {
                priority,
                reserve,
                backfill,
                job_limit,
                aps,
                pool,
            },
        )
}

fn rsv() -> impl Strategy<Value = RsvPlan> {
    (
        1u8..=255,
        1u32..12,
        prop::sample::select(vec![0u64, 0, 5, 20, 40, 70]),
        10u64..90,
        prop::sample::select(vec![0u8, 0, 1, 2, 3, 5]),
        any::<bool>(),
    )
        .prop_map(|(hosts, eighths, start, length, users, open)| RsvPlan {
            hosts,
            eighths,
            start,
            length,
            users,
            open,
        })
}

fn job(queues: usize) -> impl Strategy<Value = JobPlan> {
    (
        (0u64..150, 0..queues, 0..USERS.len()),
        prop::sample::select(vec![1u32, 1, 1, 2, 3, 4, 6, 8]),
        1u64..50,
        prop::option::weighted(0.7, -3i64..15),
        prop::option::weighted(0.3, 0usize..3),
        prop::option::weighted(0.3, 1u32..10),
    )
        .prop_map(
            |((at, queue, user), width, run, limit, rsv, priority)| JobPlan {
                at,
                queue,
                user,
                width,
                run,
                limit,
                rsv,
                priority,
            },
        )
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        prop::collection::vec(1u32..5, 2..6),
        prop::collection::vec(queue(), 1..4),
        prop::collection::vec(rsv(), 0..4),
        any::<bool>(),
    )
        .prop_flat_map(|(hosts, queues, rsvs, per_user)| {
            let count = queues.len();
            (
                Just(hosts),
                Just(queues),
                Just(rsvs),
                Just(per_user),
                prop::collection::vec(job(count), 5..80),
                prop::collection::vec((0u64..150, any::<usize>(), 0u8..3), 0..6),
            )
        })
        .prop_map(|(hosts, queues, rsvs, per_user, jobs, acts)| Plan {
            hosts,
            queues,
            rsvs,
            per_user,
            jobs,
            acts,
        })
        .prop_filter("reservations within their hosts", |plan| {
            !overcommitted(&reservations(plan), &plan.hosts)
        })
}

fn minute(at: u64) -> SimTime {
    SimTime::from(Duration::from_secs(at * 60))
}

fn host_name(index: usize) -> String {
    format!("h{index}")
}

fn queue_name(index: usize) -> QueueName {
    QueueName::new(&format!("q{index}")).expect("valid")
}

/// The plan's advance reservations, resolved against its hosts.
fn reservations(plan: &Plan) -> Vec<AdvanceReservationConfig> {
    plan.rsvs
        .iter()
        .enumerate()
        .map(|(index, rsv)| {
            let hosts: Vec<usize> = (0..plan.hosts.len())
                .filter(|&host| rsv.hosts & (1 << (host % 8)) != 0)
                .collect();
            let hosts = if hosts.is_empty() { vec![0] } else { hosts };
            let capacity: u32 = hosts.iter().map(|&host| plan.hosts[host]).sum();
            let users: Vec<String> = if rsv.users == 0 {
                vec!["all".into()]
            } else {
                (0..USERS.len())
                    .filter(|&user| rsv.users & (1 << user) != 0)
                    .map(|user| USERS[user].to_owned())
                    .collect()
            };
            AdvanceReservationConfig {
                name: format!("r{index}"),
                hosts: hosts.iter().map(|&host| host_name(host)).collect(),
                slots: (rsv.eighths < 8).then(|| (capacity * rsv.eighths / 8).max(1)),
                start: minute(rsv.start),
                end: minute(rsv.start + rsv.length),
                users,
                open: rsv.open,
            }
        })
        .collect()
}

/// The slots each of `rsvs` reserves and its hosts (indices).
fn claims(rsvs: &[AdvanceReservationConfig], hosts: &[u32]) -> Vec<(u32, Vec<usize>)> {
    rsvs.iter()
        .map(|rsv| {
            let indices: Vec<usize> = rsv
                .hosts
                .iter()
                .map(|name| name[1..].parse().expect("h<n>"))
                .collect();
            let capacity = indices.iter().map(|&host| hosts[host]).sum();
            (rsv.slots.unwrap_or(capacity), indices)
        })
        .collect()
}

/// Whether some reservations overlapping in time reserve more slots than
/// their hosts have (intervals that overlap pairwise share an instant).
fn overcommitted(rsvs: &[AdvanceReservationConfig], hosts: &[u32]) -> bool {
    let claims = claims(rsvs, hosts);
    (1u32..1 << rsvs.len()).any(|set| {
        let members: Vec<usize> = (0..rsvs.len()).filter(|&i| set & (1 << i) != 0).collect();
        let overlap = members.iter().all(|&a| {
            members
                .iter()
                .all(|&b| rsvs[a].start < rsvs[b].end && rsvs[b].start < rsvs[a].end)
        });
        overlap && demand_exceeds(&claims, &members, hosts, |_| 0)
    })
}

/// Whether reservations `members` reserve more slots than their hosts have
/// beyond `taken(host)`.
fn demand_exceeds(
    claims: &[(u32, Vec<usize>)],
    members: &[usize],
    hosts: &[u32],
    taken: impl Fn(usize) -> u32,
) -> bool {
    let mut union: Vec<usize> = members
        .iter()
        .flat_map(|&i| claims[i].1.iter().copied())
        .collect();
    union.sort_unstable();
    union.dedup();
    let room: u32 = union
        .iter()
        .map(|&host| hosts[host].saturating_sub(taken(host)))
        .sum();
    let demand: u32 = members.iter().map(|&i| claims[i].0).sum();
    demand > room
}

fn config(plan: &Plan) -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("R").expect("valid"));
    config.hosts = plan
        .hosts
        .iter()
        .enumerate()
        .map(|(index, &slots)| HostConfig::new(host_name(index), slots))
        .collect();
    config.queues = plan
        .queues
        .iter()
        .enumerate()
        .map(|(index, spec)| {
            let mut queue = QueueConfig::new(queue_name(index));
            queue.priority = spec.priority;
            queue.slot_reserve = spec.reserve;
            queue.backfill = spec.backfill;
            queue.job_limit = spec.job_limit;
            if spec.aps && !spec.pool {
                let mut aps = ApsPriority::default();
                aps.weight[ApsTerm::Proc as usize] = Some(1.0);
                aps.weight[ApsTerm::JPriority as usize] = Some(2.0);
                queue.aps_priority = Some(aps);
            }
            if spec.pool {
                queue.slot_pool = Some(SlotPoolConfig {
                    pool: "p".into(),
                    share: [50, 30, 20][index % 3],
                    max_slots: None,
                    use_priority: None,
                });
            }
            queue
        })
        .collect();
    if plan.per_user {
        config.limits.push(LimitConfig {
            name: "per-user".into(),
            per_user: Some(Consumers::from_words(&["all".to_owned()])),
            slots: Some(5),
            ..LimitConfig::default()
        });
    }
    config.params.max_user_priority = Some(10);
    config.advance_reservations = reservations(plan);
    config
}

fn spec(plan: &Plan, job: &JobPlan, number: usize) -> JobSpec {
    let mut spec = JobSpec::simple(
        format!("j{number}"),
        USERS[job.user],
        Duration::from_secs(job.run * 60),
    );
    spec.slots = job.width;
    if let Some(extra) = job.limit {
        let limit = (job.run as i64 + extra).max(1) as u64;
        spec.run_limit = Some(Duration::from_secs(limit * 60));
    }
    if let (Some(rsv), false) = (job.rsv, plan.rsvs.is_empty()) {
        spec.resources = vec![mcfed_cluster::advance::reservation_word(&format!(
            "r{}",
            rsv % plan.rsvs.len()
        ))];
    }
    if let Some(priority) = job.priority {
        spec.set_options(JobOptions {
            user_priority: Some(priority),
            ..JobOptions::default()
        });
    }
    spec
}

/// The reservation a job names, by index.
fn named(job: &mcfed_cluster::Job) -> Option<usize> {
    job.spec
        .resources
        .iter()
        .find_map(|word| mcfed_cluster::advance::reservation_named(word))
        .map(|name| name[1..].parse().expect("r<n>"))
}

/// (a) and (b) at `now`.
fn reservations_hold(
    cluster: &Cluster,
    rsvs: &[AdvanceReservationConfig],
    hosts: &[u32],
    now: SimTime,
) -> Result<(), TestCaseError> {
    let claims = claims(rsvs, hosts);
    let active: Vec<usize> = (0..rsvs.len())
        .filter(|&i| rsvs[i].start <= now && now < rsvs[i].end)
        .collect();
    for set in 1u32..1 << active.len() {
        let members: Vec<usize> = (0..active.len())
            .filter(|&i| set & (1 << i) != 0)
            .map(|i| active[i])
            .collect();
        let mut outside = vec![0u32; hosts.len()];
        for job in cluster.jobs().filter(|job| job.state == JobState::Running) {
            if named(job).is_some_and(|rsv| members.contains(&rsv)) {
                continue;
            }
            for place in &job.placement {
                outside[place.host] += place.slots;
            }
        }
        prop_assert!(
            !demand_exceeds(&claims, &members, hosts, |host| outside[host]),
            "at {}: jobs outside reservations {:?} run in their slots (outside jobs' slots by host {:?})",
            now,
            members,
            outside
        );
    }
    for job in cluster.jobs() {
        let Some(rsv) = named(job) else { continue };
        let placed = matches!(
            job.state,
            JobState::Running | JobState::Suspended | JobState::UserSuspended
        );
        if placed {
            prop_assert!(
                rsvs[rsv].start <= now,
                "at {}: job {} of r{} placed before its start",
                now,
                job.id,
                rsv
            );
            prop_assert!(
                rsvs[rsv].open || now < rsvs[rsv].end,
                "at {}: job {} of closed r{} still placed after its end",
                now,
                job.id,
                rsv
            );
        }
    }
    Ok(())
}

/// (c): every job started in the step just made, against the slot
/// reservations held `before` it and `after` it.
fn backfills_end_in_time(
    cluster: &Cluster,
    plan: &Plan,
    before: &[SlotReservationView],
    transitions: &[Transition],
    now: SimTime,
) -> Result<(), TestCaseError> {
    let after = cluster.slot_reservations();
    let held: Vec<&SlotReservationView> = after.iter().filter(|r| before.contains(r)).collect();
    for started in transitions.iter().filter(|t| t.event == JobEvent::Started) {
        let Some(job) = cluster.job(started.job) else {
            continue;
        };
        for reservation in held
            .iter()
            .filter(|r| r.queue == job.queue && r.job < job.id)
        {
            let limit = job.spec.run_limit;
            prop_assert!(
                plan.queues[job.queue].backfill
                    && limit
                        .zip(reservation.predicted_start)
                        .is_some_and(|(limit, start)| job.running_since + limit <= start),
                "at {}: job {} (run limit {:?}) started in the slots job {} reserves \
                 (predicted start {:?})",
                now,
                job.id,
                limit,
                reservation.job,
                reservation.predicted_start
            );
        }
    }
    Ok(())
}

/// Every job's state and, pending, its reason.
fn reasons(cluster: &Cluster) -> Vec<(JobId, JobState, &'static str)> {
    let mut all: Vec<_> = cluster
        .jobs()
        .map(|job| (job.id, job.state, cluster.pending_reason(job).describe()))
        .collect();
    all.sort_by_key(|entry| entry.0);
    all
}

/// What a run reached: jobs started, backfills checked under a held
/// slot reservation, and steps with an active advance reservation.
#[derive(Debug, Default)]
struct Reached {
    started: usize,
    under_reservation: usize,
    active_steps: usize,
}

/// What this property checks around the shared steps: (a) to (e), and
/// what a run reached.
struct Interplay<'a> {
    plan: &'a Plan,
    rsvs: Vec<AdvanceReservationConfig>,
    /// The slot reservations held before the step's pass.
    before: Vec<SlotReservationView>,
    reached: Reached,
}

impl Checks<(usize, u8)> for Interplay<'_> {
    fn act(&mut self, twins: &mut Twins, &(n, what): &(usize, u8)) -> Result<(), TestCaseError> {
        if twins.submitted.is_empty() {
            return Ok(());
        }
        let id = twins.submitted[n % twins.submitted.len()];
        let action =
            [JobAction::Kill, JobAction::Stop, JobAction::Resume][usize::from(what)].clone();
        let (mut ta, mut tb) = (Vec::new(), Vec::new());
        let a = twins.indexed.control(twins.now, id, &action, &mut ta);
        let b = twins.plain.control(twins.now, id, &action, &mut tb);
        prop_assert_eq!(a.is_ok(), b.is_ok());
        prop_assert_eq!(&ta, &tb);
        Ok(())
    }

    fn before_pass(&mut self, twins: &Twins) -> Result<(), TestCaseError> {
        self.before = twins.indexed.slot_reservations();
        Ok(())
    }

    fn after_pass(
        &mut self,
        twins: &Twins,
        transitions: &[Transition],
    ) -> Result<(), TestCaseError> {
        let (cluster, plain, now) = (&twins.indexed, &twins.plain, twins.now);
        prop_assert_eq!(reasons(cluster), reasons(plain), "(e) reasons at {}", now);
        prop_assert_eq!(cluster.audit(), Ok(()), "(d) books at {}", now);
        prop_assert_eq!(plain.audit(), Ok(()), "(d) plain books at {}", now);
        reservations_hold(cluster, &self.rsvs, &self.plan.hosts, now)?;
        backfills_end_in_time(cluster, self.plan, &self.before, transitions, now)?;
        let started = || transitions.iter().filter(|t| t.event == JobEvent::Started);
        self.reached.started += started().count();
        self.reached.under_reservation += started()
            .filter(|t| {
                cluster.job(t.job).is_some_and(|job| {
                    self.before
                        .iter()
                        .any(|r| r.queue == job.queue && r.job < job.id)
                })
            })
            .count();
        if self
            .rsvs
            .iter()
            .any(|rsv| rsv.start <= now && now < rsv.end)
        {
            self.reached.active_steps += 1;
        }
        Ok(())
    }
}

fn run(plan: &Plan) -> Result<Reached, TestCaseError> {
    let mut jobs = plan.jobs.clone();
    jobs.sort_by_key(|job| job.at);
    let submissions: Vec<Submission> = jobs
        .iter()
        .enumerate()
        .map(|(number, job)| Submission {
            at: minute(job.at),
            queue: queue_name(job.queue),
            spec: spec(plan, job, number),
        })
        .collect();
    let mut acts: Vec<(SimTime, (usize, u8))> = plan
        .acts
        .iter()
        .map(|&(at, n, what)| (minute(at), (n, what)))
        .collect();
    acts.sort_by_key(|act| act.0);
    let mut checks = Interplay {
        plan,
        rsvs: reservations(plan),
        before: Vec::new(),
        reached: Reached::default(),
    };
    drive(config(plan), &submissions, &acts, 3_000, &mut checks)?;
    Ok(checks.reached)
}

fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases(96))]

    #[test]
    fn advance_reservations_hold_among_the_other_rules(plan in plan()) {
        run(&plan)?;
    }
}

/// The generated plans reach what the property is about: active advance
/// reservations, and jobs started while a slot reservation is held.
#[test]
fn the_plans_reach_reservations_and_backfill() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut total = Reached::default();
    for _ in 0..24 {
        let plan = plan().new_tree(&mut runner).expect("a plan").current();
        let reached = run(&plan).expect("invariants hold");
        total.started += reached.started;
        total.under_reservation += reached.under_reservation;
        total.active_steps += reached.active_steps;
    }
    assert!(
        total.started > 0 && total.under_reservation > 0 && total.active_steps > 0,
        "{total:?}"
    );
}

/// A reservation of the written-out cases below, every user's: `slots`
/// of `hosts` over `minutes`.
fn written_out(
    name: &str,
    hosts: &[&str],
    slots: u32,
    minutes: std::ops::Range<u64>,
    open: bool,
) -> AdvanceReservationConfig {
    AdvanceReservationConfig {
        name: name.into(),
        hosts: hosts.iter().map(|&host| host.to_owned()).collect(),
        slots: Some(slots),
        start: minute(minutes.start),
        end: minute(minutes.end),
        users: vec!["all".into()],
        open,
    }
}

/// The first case the property found (its seed is in
/// `tests/proptest-regressions/reservation_interplay.txt`), written out:
/// `r0` reserves 2 slots of `h0` and `h1` from 40m, `r1` 1 slot of `h0`
/// from the start. Laying each reservation in turn on its hosts with the
/// most free slots first put all of `r0`'s on `h0` (a tie, broken by
/// order), so `r1` held nothing and jobs without a run limit took both
/// slots of `h1`: at 40m the two reservations had 2 slots for their 3.
/// The held slots are now moved along augmenting paths when the greedy
/// laying leaves a reservation short (`r0` gives up a slot of `h0` to `r1`
/// and holds one of `h1` instead), and of four one-slot jobs only one
/// starts.
#[test]
fn overlapping_reservations_hold_all_their_slots() {
    let mut config = ClusterConfig::new(ClusterName::new("R").expect("valid"));
    config.hosts = vec![HostConfig::new("h0", 2), HostConfig::new("h1", 2)];
    config.queues = vec![QueueConfig::new(queue_name(0))];
    let reservation = |name, hosts, slots, start| written_out(name, hosts, slots, start..90, false);
    config.advance_reservations = vec![
        reservation("r0", &["h0", "h1"], 2, 40),
        reservation("r1", &["h0"], 1, 0),
    ];
    let mut cluster = Cluster::new(config).expect("valid configuration");
    for number in 0..4 {
        let spec = JobSpec::simple(format!("j{number}"), "ann", Duration::from_secs(3600 * 2));
        cluster
            .submit(SimTime::ZERO, "q0", spec, JobOrigin::Local)
            .expect("accepted");
    }
    let mut transitions = Vec::new();
    cluster.advance(SimTime::ZERO, &mut transitions);
    let running: Vec<_> = cluster
        .jobs()
        .filter(|job| job.state == JobState::Running)
        .map(|job| job.placement.clone())
        .collect();
    assert_eq!(running.len(), 1, "{running:?}");
}

/// The second case the property found (seed saved with the first),
/// written out: `r1`, active from the start, may use 1 slot of `h0` and
/// `h1`; `r0` reserves both slots of `h0` from 20m. A job of `r1` without
/// a run limit was laid out against the reservations active then only, so
/// it took a slot of `h0`, which `r0` holds from 20m. A reservation's own
/// jobs now leave out, as every other job does, the slots an upcoming
/// reservation will hold while they still run: it starts on `h1`.
#[test]
fn a_reservation_job_leaves_an_upcoming_reservation_its_slots() {
    let mut config = ClusterConfig::new(ClusterName::new("R").expect("valid"));
    config.hosts = vec![HostConfig::new("h0", 2), HostConfig::new("h1", 2)];
    config.queues = vec![QueueConfig::new(queue_name(0))];
    let reservation = |name, hosts, slots, start| written_out(name, hosts, slots, start..90, true);
    config.advance_reservations = vec![
        reservation("r0", &["h0"], 2, 20),
        reservation("r1", &["h0", "h1"], 1, 0),
    ];
    let mut cluster = Cluster::new(config).expect("valid configuration");
    let mut spec = JobSpec::simple("own", "ann", Duration::from_secs(3600 * 2));
    spec.resources = vec![mcfed_cluster::advance::reservation_word("r1")];
    let id = cluster
        .submit(SimTime::ZERO, "q0", spec, JobOrigin::Local)
        .expect("accepted");
    let mut transitions = Vec::new();
    cluster.advance(SimTime::ZERO, &mut transitions);
    let job = cluster.job(id).expect("running");
    assert_eq!(job.state, JobState::Running);
    assert_eq!(job.placement[0].host, 1, "{:?}", job.placement);
}

/// The third case the property found (seed saved with the others),
/// written out: `r0` reserves all 5 slots of `h0` and `h2` from 40m;
/// `r1`, active from the start, 1 slot of any host. `r1`'s own job (a
/// 3-minute run limit) ran on `h2`, so `r1` held nothing, and at 1m a
/// 2-slot job without a run limit took `h1`: from 40m the two
/// reservations had 5 slots for their 6. A reservation's own jobs' slots
/// now count as its own when the held slots are laid, so `r1` holds a
/// slot of `h1` and the 2-slot job pends.
#[test]
fn a_reservation_keeps_its_claim_while_its_own_job_runs() {
    let mut config = ClusterConfig::new(ClusterName::new("R").expect("valid"));
    config.hosts = vec![
        HostConfig::new("h0", 1),
        HostConfig::new("h1", 2),
        HostConfig::new("h2", 4),
    ];
    config.queues = vec![QueueConfig::new(queue_name(0))];
    let reservation =
        |name, hosts, slots, start| written_out(name, hosts, slots, start..100, false);
    config.advance_reservations = vec![
        reservation("r0", &["h0", "h2"], 5, 40),
        reservation("r1", &["h0", "h1", "h2"], 1, 0),
    ];
    let mut cluster = Cluster::new(config).expect("valid configuration");
    let mut own = JobSpec::simple("own", "ann", Duration::from_secs(120));
    own.run_limit = Some(Duration::from_secs(180));
    own.resources = vec![mcfed_cluster::advance::reservation_word("r1")];
    cluster
        .submit(SimTime::ZERO, "q0", own, JobOrigin::Local)
        .expect("accepted");
    let mut transitions = Vec::new();
    cluster.advance(SimTime::ZERO, &mut transitions);
    let mut wide = JobSpec::simple("wide", "ben", Duration::from_secs(3600));
    wide.slots = 2;
    let wide = cluster
        .submit(minute(1), "q0", wide, JobOrigin::Local)
        .expect("accepted");
    cluster.advance(minute(1), &mut transitions);
    assert_eq!(
        cluster.job(wide).map(|job| job.state),
        Some(JobState::Pending)
    );
}

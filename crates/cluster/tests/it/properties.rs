//! Property tests over random clusters and random job streams: whatever the
//! configuration (pools, fairshare, preemption, limits, guards, slot
//! reservation and backfill, in pools too) and
//! whatever arrives when,
//!
//! - no host ever runs more slots than its MXJ;
//! - every job is in exactly one state, and moves between states only as a
//!   job can (pending -> running -> suspended/pending/done ...), and the
//!   cluster's own lists agree (`Cluster::audit`), GPUs in use included
//!   (never more than a host has);
//! - a pool never hands out more slots than it has, nor runs more than
//!   MAX_SLOTS_IN_POOL;
//! - a preemption never picks a victim the configuration protects: the
//!   preemptor's queue may preempt the victim's, the victim's queue is in no
//!   pool, not a backfill queue (unless PREEMPT_JOBTYPE=BACKFILL), and
//!   NO_PREEMPT_RUN_TIME / NO_PREEMPT_FINISH_TIME do not cover the victim.

use std::collections::HashMap;
use std::time::Duration;

use mcfed_cluster::preemption::{QueueFacts, can_preempt};
use mcfed_cluster::{
    Cluster, ClusterConfig, Consumers, HostConfig, JobId, JobOrigin, JobState, LimitConfig,
    PreemptGuard, PreemptGuards, QueueConfig, SlotPoolConfig, Transition, UserGroupConfig,
    UserLimitConfig, UserShares,
};
use mcfed_protocol::{ClusterName, JobEvent, JobSpec, QueueName, SimTime};
use proptest::prelude::*;

/// What kind of queue to make.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Plain,
    Preemptive,
    Preemptable,
    Both,
    Pool(u32),
    Fairshare,
}

#[derive(Clone, Debug)]
struct QueueSetup {
    priority: u32,
    kind: Kind,
    job_limit: Option<u32>,
    user_job_limit: Option<u32>,
    host_job_limit: Option<u32>,
    terminate: bool,
    backfill: bool,
    /// SLOT_RESERVE (in a pool queue too, where LSF warns).
    reserve: bool,
    run_time_guard: Option<u64>,
}

#[derive(Clone, Debug)]
struct Setup {
    hosts: Vec<(u32, bool, Option<u32>)>,
    queues: Vec<QueueSetup>,
    max_jobs: Option<u32>,
    preempt_for: u8,
    preempt_backfill: bool,
    finish_guard: Option<u64>,
    max_slots_in_pool: Option<u32>,
}

#[derive(Clone, Debug)]
struct JobPlan {
    at_minute: u64,
    queue: usize,
    user: usize,
    slots: u32,
    run_minutes: u64,
    run_limit: bool,
    special: bool,
}

const USERS: [&str; 3] = ["alice", "bob", "carol"];

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Plain),
        Just(Kind::Preemptive),
        Just(Kind::Preemptable),
        Just(Kind::Both),
        (10u32..=60).prop_map(Kind::Pool),
        Just(Kind::Fairshare),
    ]
}

fn queue_setup() -> impl Strategy<Value = QueueSetup> {
    (
        1u32..100,
        kind(),
        prop::option::weighted(0.2, 1u32..6),
        prop::option::weighted(0.2, 1u32..4),
        prop::option::weighted(0.2, 1u32..3),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.3),
        prop::option::weighted(0.3, 5u64..40),
    )
        .prop_map(
            |(
                priority,
                kind,
                job_limit,
                user_job_limit,
                host_job_limit,
                terminate,
                backfill,
                reserve,
                guard,
            )| {
                QueueSetup {
                    priority,
                    kind,
                    job_limit,
                    user_job_limit,
                    host_job_limit,
                    terminate,
                    backfill,
                    reserve,
                    run_time_guard: guard,
                }
            },
        )
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop::collection::vec(
            (1u32..6, any::<bool>(), prop::option::weighted(0.2, 1u32..3)),
            1..5,
        ),
        prop::collection::vec(queue_setup(), 1..6),
        prop::option::weighted(0.3, 1u32..5),
        any::<u8>(),
        any::<bool>(),
        prop::option::weighted(0.3, 5u64..30),
        prop::option::weighted(0.3, 1u32..8),
    )
        .prop_map(
            |(
                hosts,
                queues,
                max_jobs,
                preempt_for,
                preempt_backfill,
                finish_guard,
                max_slots_in_pool,
            )| Setup {
                hosts,
                queues,
                max_jobs,
                preempt_for,
                preempt_backfill,
                finish_guard,
                max_slots_in_pool,
            },
        )
}

fn jobs(queues: usize) -> impl Strategy<Value = Vec<JobPlan>> {
    prop::collection::vec(
        (
            0u64..180,
            0..queues,
            0..USERS.len(),
            1u32..4,
            1u64..90,
            any::<bool>(),
            prop::bool::weighted(0.15),
        )
            .prop_map(
                |(at_minute, queue, user, slots, run_minutes, run_limit, special)| JobPlan {
                    at_minute,
                    queue,
                    user,
                    slots,
                    run_minutes,
                    run_limit,
                    special,
                },
            ),
        1..60,
    )
}

fn build(setup: &Setup) -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("P").expect("valid"));
    config.hosts = setup
        .hosts
        .iter()
        .enumerate()
        .map(|(index, &(slots, special, jlu))| {
            let mut host = HostConfig::new(format!("h{index}"), slots);
            if special {
                host.resources = vec!["special".into()];
                host.gpus = 2;
            }
            host.user_slot_limit = jlu;
            host.memory_mb = 4096;
            host
        })
        .collect();
    let mut first_pool = true;
    config.queues = setup
        .queues
        .iter()
        .enumerate()
        .map(|(index, plan)| {
            let mut queue = QueueConfig::new(QueueName::new(&format!("q{index}")).expect("valid"));
            queue.priority = plan.priority;
            queue.job_limit = plan.job_limit;
            queue.user_job_limit = plan.user_job_limit;
            queue.host_job_limit = plan.host_job_limit;
            queue.terminate_when_preempt = plan.terminate;
            queue.backfill = plan.backfill;
            queue.slot_reserve = plan.reserve.then_some(3);
            queue.preempt_guards.run_time = plan
                .run_time_guard
                .map(|minutes| PreemptGuard::Time(Duration::from_secs(minutes * 60)));
            match plan.kind {
                Kind::Plain => {}
                Kind::Preemptive => queue.preemption = "PREEMPTIVE".parse().expect("valid"),
                Kind::Preemptable => queue.preemption = "PREEMPTABLE".parse().expect("valid"),
                Kind::Both => {
                    queue.preemption = "PREEMPTIVE PREEMPTABLE".parse().expect("valid");
                }
                Kind::Pool(share) => {
                    queue.slot_pool = Some(SlotPoolConfig {
                        pool: "pool".into(),
                        share,
                        max_slots: if first_pool {
                            setup.max_slots_in_pool
                        } else {
                            None
                        },
                        use_priority: Some(share % 2 == 0),
                    });
                    first_pool = false;
                }
                Kind::Fairshare => {
                    // Flat shares, or a group (alice and bob) with its own
                    // share tree beside every other user.
                    let shares = if plan.priority % 2 == 0 {
                        "USER_SHARES[[alice, 5] [default, 2]]"
                    } else {
                        "USER_SHARES[[team, 5] [default, 2]]"
                    };
                    queue.fairshare = Some(shares.parse().expect("valid"));
                }
            }
            queue
        })
        .collect();
    config.user_groups = vec![UserGroupConfig {
        name: "team".into(),
        members: vec!["alice".into(), "bob".into()],
        user_shares: Some(UserShares::parse_list("([alice, 2] [others, 1])").expect("valid")),
    }];
    if let Some(max_jobs) = setup.max_jobs {
        config.users = vec![UserLimitConfig {
            name: "alice".into(),
            max_jobs: Some(max_jobs),
            slots_per_processor: None,
        }];
    }
    let keywords = [
        "GROUP_JLP",
        "GROUP_MAX",
        "HOST_JLU",
        "USER_JLP",
        "LEAST_RUN_TIME",
    ];
    let preempt_for: Vec<&str> = keywords
        .iter()
        .enumerate()
        .filter(|(bit, _)| setup.preempt_for & (1 << bit) != 0)
        .map(|(_, word)| *word)
        .collect();
    config.params.preempt_for = preempt_for.join(" ").parse().expect("valid");
    // Spare bits of the same byte add lsb.resources Limit sections: a
    // user limit, a queue-level one, and one over a host.
    let words =
        |text: &str| Consumers::from_words(&text.split(' ').map(str::to_owned).collect::<Vec<_>>());
    if setup.preempt_for & 32 != 0 {
        config.limits.push(LimitConfig {
            name: "alice".into(),
            per_user: Some(words("alice")),
            slots: Some(2),
            ..LimitConfig::default()
        });
    }
    if setup.preempt_for & 64 != 0 {
        config.limits.push(LimitConfig {
            name: "queue".into(),
            queues: Some(words("q0")),
            jobs: Some(2),
            ..LimitConfig::default()
        });
    }
    if setup.preempt_for & 128 != 0 {
        config.limits.push(LimitConfig {
            name: "host".into(),
            hosts: Some(words("h0")),
            per_user: Some(words("all ~carol")),
            slots: Some(2),
            ..LimitConfig::default()
        });
    }
    config.params.preempt_backfill = setup.preempt_backfill;
    config.params.preempt_guards.finish_time = setup
        .finish_guard
        .map(|minutes| PreemptGuard::Time(Duration::from_secs(minutes * 60)));
    config
}

/// What the test knows of each job from the transitions alone.
#[derive(Clone, Debug)]
struct Model {
    state: JobState,
    queue: usize,
    /// Run time before the current run.
    ran: Duration,
    running_since: SimTime,
    run_limit: Option<Duration>,
    run_time: Duration,
}

fn expect_state(model: &Model, allowed: &[JobState], event: JobEvent) -> Result<(), TestCaseError> {
    prop_assert!(
        allowed.contains(&model.state),
        "{event:?} from {:?}",
        model.state
    );
    Ok(())
}

fn check_transitions(
    config: &ClusterConfig,
    models: &mut HashMap<JobId, Model>,
    transitions: &[Transition],
) -> Result<(), TestCaseError> {
    fn facts(queue: &QueueConfig) -> QueueFacts<'_> {
        QueueFacts {
            name: &queue.name,
            priority: queue.priority,
            preemption: &queue.preemption,
        }
    }
    for transition in transitions {
        let at = transition.at;
        // The preemption checks use the victim's state before this event.
        if let Some(by) = transition.preempted_by {
            let victim = models.get(&transition.job).expect("known victim").clone();
            let preemptor = models.get(&by).expect("known preemptor");
            let (v, p) = (
                &config.queues[victim.queue],
                &config.queues[preemptor.queue],
            );
            prop_assert!(
                can_preempt(facts(p), facts(v)),
                "{} may not preempt {}",
                p.name,
                v.name
            );
            prop_assert!(v.slot_pool.is_none(), "pool queue {} preempted", v.name);
            prop_assert!(
                !v.backfill || config.params.preempt_backfill,
                "backfill queue {} preempted without PREEMPT_JOBTYPE=BACKFILL",
                v.name
            );
            prop_assert_eq!(victim.state, JobState::Running);
            let ran = victim.ran + at.saturating_since(victim.running_since);
            let guards: PreemptGuards = v.preempt_guards.over(&config.params.preempt_guards);
            prop_assert!(
                guards.protection(ran, victim.run_limit).is_none(),
                "a protected victim was preempted (ran {ran:?}, limit {:?})",
                victim.run_limit
            );
        }
        let model = models.get_mut(&transition.job).expect("known job");
        match transition.event {
            JobEvent::Started => {
                expect_state(model, &[JobState::Pending], transition.event)?;
                model.state = JobState::Running;
                model.running_since = at;
            }
            JobEvent::Resumed => {
                expect_state(model, &[JobState::Suspended], transition.event)?;
                model.state = JobState::Running;
                model.running_since = at;
            }
            JobEvent::Suspended => {
                expect_state(model, &[JobState::Running], transition.event)?;
                model.ran += at.saturating_since(model.running_since);
                model.state = JobState::Suspended;
            }
            JobEvent::Requeued => {
                expect_state(model, &[JobState::Running], transition.event)?;
                model.ran = Duration::ZERO;
                model.state = JobState::Pending;
            }
            JobEvent::Finished => {
                expect_state(model, &[JobState::Running], transition.event)?;
                let ran = model.ran + at.saturating_since(model.running_since);
                prop_assert_eq!(ran, model.run_time, "done after its run time");
                prop_assert!(model.run_limit.is_none_or(|limit| limit >= ran));
                model.state = JobState::Done;
            }
            JobEvent::RunLimit => {
                expect_state(model, &[JobState::Running], transition.event)?;
                let ran = model.ran + at.saturating_since(model.running_since);
                prop_assert_eq!(Some(ran), model.run_limit, "killed at its run limit");
                prop_assert!(ran < model.run_time, "before its run time");
                model.state = JobState::Done;
            }
            // Job control commands and advance reservations; this test
            // gives none.
            JobEvent::Killed
            | JobEvent::ReservationEnded
            | JobEvent::Stopped
            | JobEvent::Held
            | JobEvent::Released
            | JobEvent::Switched
            | JobEvent::Modified
            | JobEvent::Migrated
            | JobEvent::Rerun
            | JobEvent::Resized
            | JobEvent::Waiting
            | JobEvent::Pended => {
                return Err(TestCaseError::fail(format!(
                    "{:?} without a command, a host failure or a chunk",
                    transition.event
                )));
            }
        }
    }
    Ok(())
}

fn check_cluster(
    cluster: &Cluster,
    config: &ClusterConfig,
    models: &HashMap<JobId, Model>,
    now: SimTime,
) -> Result<(), TestCaseError> {
    if let Err(problem) = cluster.audit() {
        return Err(TestCaseError::fail(problem));
    }
    for (index, host) in config.hosts.iter().enumerate() {
        prop_assert!(cluster.host_used_slots(index) <= host.max_slots);
    }
    for (&id, model) in models {
        let actual = cluster.job(id).map_or(JobState::Done, |job| job.state);
        prop_assert_eq!(actual, model.state, "job {}", id);
    }
    let report = cluster.report(now);
    let pool_queues: Vec<_> = report
        .queues
        .iter()
        .filter_map(|q| q.slot_pool.as_ref().map(|p| (q, p)))
        .collect();
    if let Some((_, pool)) = pool_queues.first() {
        let deserved: u64 = pool_queues
            .iter()
            .map(|(_, p)| u64::from(p.deserved_slots))
            .sum();
        prop_assert!(
            deserved <= u64::from(pool.pool_slots),
            "pool hands out {deserved} of {}",
            pool.pool_slots
        );
        if let Some(max) = pool.max_slots_in_pool {
            let running: u32 = pool_queues.iter().map(|(q, _)| q.run).sum();
            prop_assert!(
                running <= max,
                "pool runs {running} over MAX_SLOTS_IN_POOL {max}"
            );
        }
    }
    Ok(())
}

fn run(setup: Setup, plans: Vec<JobPlan>) -> Result<(), TestCaseError> {
    let config = build(&setup);
    let Ok(mut cluster) = Cluster::new(config.clone()) else {
        // Only configurations LSF refuses (none should be generated).
        return Err(TestCaseError::fail("generated configuration refused"));
    };
    let mut plans: Vec<JobPlan> = plans
        .into_iter()
        .filter(|plan| plan.queue < config.queues.len())
        .collect();
    plans.sort_by_key(|plan| plan.at_minute);
    let reserving = config
        .queues
        .iter()
        .any(|queue| queue.slot_reserve.is_some());
    let mut models: HashMap<JobId, Model> = HashMap::new();
    let mut next = 0;
    let mut transitions = Vec::new();
    let mut now = SimTime::ZERO;
    loop {
        let next_submit = plans
            .get(next)
            .map(|plan| SimTime::from_secs(plan.at_minute * 60));
        let next_event = cluster.next_event_time();
        let Some(at) = [next_submit, next_event].into_iter().flatten().min() else {
            break;
        };
        prop_assert!(at >= now, "time goes forward");
        now = at;
        while let Some(plan) = plans
            .get(next)
            .filter(|plan| plan.at_minute * 60 == now.as_millis() / 1000)
        {
            next += 1;
            let run_time = Duration::from_secs(plan.run_minutes * 60);
            let mut spec = JobSpec::simple("j", USERS[plan.user], run_time);
            spec.slots = plan.slots;
            // Some run limits end jobs early (an odd run time gets half of
            // it as its limit): the job is killed there, TERM_RUNLIMIT.
            spec.run_limit = plan.run_limit.then_some(if plan.run_minutes % 2 == 1 {
                (run_time / 2).max(Duration::from_secs(60))
            } else {
                run_time + Duration::from_secs(600)
            });
            spec.cpu_utilisation = 0.5;
            spec.memory_mb = 512;
            if plan.special {
                spec.resources = vec!["special".into()];
                spec.gpus = 1 + (plan.slots % 2);
            }
            let queue = config.queues[plan.queue].name.to_string();
            if let Ok(id) = cluster.submit(now, &queue, spec.clone(), JobOrigin::Local) {
                models.insert(
                    id,
                    Model {
                        state: JobState::Pending,
                        queue: plan.queue,
                        ran: Duration::ZERO,
                        running_since: now,
                        run_limit: spec.run_limit,
                        run_time,
                    },
                );
            }
        }
        transitions.clear();
        cluster.advance(now, &mut transitions);
        check_transitions(&config, &mut models, &transitions)?;
        check_cluster(&cluster, &config, &models, now)?;
        if now >= SimTime::from_secs(100 * 3600) && reserving {
            // A job that a limit keeps from ever fitting (an lsb.resources
            // Limit, say) reserves, lapses and reserves again for ever:
            // the run may not end, but nothing may be left running.
            prop_assert!(
                cluster.jobs().all(|job| job.state == JobState::Pending),
                "only jobs that never fit are left"
            );
            break;
        }
        prop_assert!(now < SimTime::from_secs(100 * 3600), "the run ends");
    }
    // Everything eventually finishes: nothing is left pending forever with
    // free resources... at least every job has left or is accounted for.
    check_cluster(&cluster, &config, &models, now)?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_clusters_keep_every_invariant(
        (setup, plans) in setup().prop_flat_map(|setup| {
            let queues = setup.queues.len();
            (Just(setup), jobs(queues))
        })
    ) {
        run(setup, plans)?;
    }
}

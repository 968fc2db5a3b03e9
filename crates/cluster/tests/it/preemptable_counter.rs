//! The counters' preemptable available slots keep their promise (seed 004:
//! "the number of slots the queue can access through preemption"): on
//! random clusters with preemption, QJOB_LIMITs, HJOB_LIMITs, UJOB_LIMITs,
//! lsb.users' `default` MAX_JOBS (issue 27, item 6), NO_PREEMPT_RUN_TIME
//! and NO_PREEMPT_FINISH_TIME guards (on run limits and run-time
//! estimates), TERMINATE_WHEN=PREEMPT and slot reservations (SLOT_RESERVE),
//! when a queue's counter says N and a job of a new user needing N slots or
//! fewer arrives in it, the cluster's own dispatch starts it — on free slots
//! and the slots its preemption frees.
//!
//! The generated clusters leave out what the counter does not claim to
//! cover: slot pools, fairshare, named users' limits, lsb.resources.

use std::time::Duration;

use mcfed_cluster::{
    Cluster, ClusterConfig, HostConfig, JobOrigin, PreemptGuard, PreemptGuards, QueueConfig,
    ReceiveFrom, UserLimitConfig,
};
use mcfed_protocol::{ClusterName, JobEvent, JobSpec, QueueName, SimTime};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct QueueSetup {
    priority: u32,
    /// 0 plain, 1 PREEMPTIVE, 2 PREEMPTABLE, 3 both.
    preemption: u8,
    job_limit: Option<u32>,
    terminate: bool,
    run_time_guard: Option<u64>,
    finish_guard: Option<PreemptGuard>,
    host_job_limit: Option<u32>,
    user_job_limit: Option<u32>,
    slot_reserve: bool,
}

#[derive(Clone, Debug)]
struct JobPlan {
    queue: usize,
    slots: u32,
    /// 0: none, 1: a run limit, 2: a run-time estimate, 3: both.
    duration: u8,
    minutes: u64,
    late: bool,
}

#[derive(Clone, Debug)]
struct Setup {
    hosts: Vec<u32>,
    queues: Vec<QueueSetup>,
    jobs: Vec<JobPlan>,
    later_minutes: u64,
    /// lsb.users' `default` MAX_JOBS.
    default_max_jobs: Option<u32>,
}

fn guard() -> impl Strategy<Value = Option<PreemptGuard>> {
    prop_oneof![
        Just(None),
        (5u64..90).prop_map(|m| Some(PreemptGuard::Time(Duration::from_secs(m * 60)))),
        (10u32..90).prop_map(|p| Some(PreemptGuard::PercentOfRunLimit(p))),
    ]
}

fn queue_setup() -> impl Strategy<Value = QueueSetup> {
    (
        1u32..100,
        0u8..4,
        prop::option::weighted(0.3, 1u32..12),
        prop::bool::weighted(0.2),
        prop::option::weighted(0.3, 5u64..90),
        guard(),
        (
            prop::option::weighted(0.25, 1u32..6),
            prop::option::weighted(0.25, 1u32..10),
            prop::bool::weighted(0.3),
        ),
    )
        .prop_map(
            |(
                priority,
                preemption,
                job_limit,
                terminate,
                run_time_guard,
                finish_guard,
                (host_job_limit, user_job_limit, slot_reserve),
            )| {
                QueueSetup {
                    priority,
                    preemption,
                    job_limit,
                    terminate,
                    run_time_guard,
                    finish_guard,
                    host_job_limit,
                    user_job_limit,
                    slot_reserve,
                }
            },
        )
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop::collection::vec(1u32..=8, 1..=4),
        prop::collection::vec(queue_setup(), 2..=4),
    )
        .prop_flat_map(|(hosts, queues)| {
            let widest = hosts.iter().copied().max().unwrap_or(1);
            let queue_count = queues.len();
            let job = (
                0..queue_count,
                1..=widest,
                0u8..4,
                30u64..240,
                any::<bool>(),
            )
                .prop_map(|(queue, slots, duration, minutes, late)| JobPlan {
                    queue,
                    slots,
                    duration,
                    minutes,
                    late,
                });
            (
                Just(hosts),
                Just(queues),
                prop::collection::vec(job, 1..30),
                1u64..120,
                prop::option::weighted(0.2, 1u32..12),
            )
        })
        .prop_map(
            |(hosts, queues, jobs, later_minutes, default_max_jobs)| Setup {
                hosts,
                queues,
                jobs,
                later_minutes,
                default_max_jobs,
            },
        )
}

fn build(setup: &Setup) -> Cluster {
    let mut config = ClusterConfig::new(ClusterName::new("C").expect("valid"));
    config.hosts = setup
        .hosts
        .iter()
        .enumerate()
        .map(|(index, &mxj)| HostConfig::new(format!("h{index}"), mxj))
        .collect();
    config.queues = setup
        .queues
        .iter()
        .enumerate()
        .map(|(index, q)| {
            let mut queue = QueueConfig::new(QueueName::new(&format!("q{index}")).expect("valid"));
            queue.priority = q.priority;
            queue.preemption = match q.preemption {
                1 => "PREEMPTIVE",
                2 => "PREEMPTABLE",
                3 => "PREEMPTIVE PREEMPTABLE",
                _ => "",
            }
            .parse()
            .expect("valid PREEMPTION");
            queue.job_limit = q.job_limit;
            queue.terminate_when_preempt = q.terminate;
            queue.preempt_guards = PreemptGuards {
                run_time: q
                    .run_time_guard
                    .map(|m| PreemptGuard::Time(Duration::from_secs(m * 60))),
                finish_time: q.finish_guard,
            };
            queue.receive_from = Some(ReceiveFrom::All);
            queue.host_job_limit = q.host_job_limit;
            queue.user_job_limit = q.user_job_limit;
            queue.slot_reserve = q.slot_reserve.then_some(5);
            queue
        })
        .collect();
    if let Some(max_jobs) = setup.default_max_jobs {
        config.users.push(UserLimitConfig {
            name: "default".to_owned(),
            max_jobs: Some(max_jobs),
            slots_per_processor: None,
        });
    }
    Cluster::new(config).expect("valid configuration")
}

fn spec(name: String, user: &str, plan: &JobPlan) -> JobSpec {
    let mut spec = JobSpec::simple(name, user, Duration::from_secs(20 * 3600));
    spec.slots = plan.slots;
    let duration = Duration::from_secs(plan.minutes * 60);
    if plan.duration & 1 != 0 {
        spec.run_limit = Some(duration);
    }
    if plan.duration & 2 != 0 {
        spec.run_estimate = Some(duration / 2);
    }
    spec
}

/// The cluster at the later time, settled: jobs present from time zero,
/// more submitted later (which runs a pass then).
fn settled(setup: &Setup) -> (Cluster, SimTime) {
    let mut cluster = build(setup);
    let later = SimTime::from_secs(setup.later_minutes * 60);
    for (index, plan) in setup.jobs.iter().enumerate() {
        if !plan.late {
            let queue = format!("q{}", plan.queue);
            let _ = cluster.submit(
                SimTime::ZERO,
                &queue,
                spec(format!("j{index}"), "alice", plan),
                JobOrigin::Local,
            );
        }
    }
    cluster.advance(SimTime::ZERO, &mut Vec::new());
    for (index, plan) in setup.jobs.iter().enumerate() {
        if plan.late {
            let queue = format!("q{}", plan.queue);
            let _ = cluster.submit(
                later,
                &queue,
                spec(format!("j{index}"), "bob", plan),
                JobOrigin::Local,
            );
        }
    }
    // One job at the later time whatever the plan, so a pass runs then.
    let _ = cluster.submit(
        later,
        "q0",
        JobSpec::simple("tick", "bob", Duration::from_secs(1)),
        JobOrigin::Local,
    );
    cluster.advance(later, &mut Vec::new());
    (cluster, later)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_job_within_the_preemptable_counter_starts(setup in setup()) {
        let (cluster, now) = settled(&setup);
        for queue in 0..setup.queues.len() {
            let counters = cluster.queue_counters(queue, now);
            let reach = counters.preemptable_available_slots;
            for slots in [1, reach] {
                if slots == 0 || reach == 0 {
                    continue;
                }
                let mut trial = cluster.clone();
                let mut job = JobSpec::simple("newcomer", "carol", Duration::from_secs(3600));
                job.slots = slots;
                let id = trial
                    .submit(now, &format!("q{queue}"), job, JobOrigin::Local)
                    .expect("fits the queue's hosts");
                let mut transitions = Vec::new();
                trial.advance(now, &mut transitions);
                // It starts; a higher queue's pending job may then preempt
                // it in turn, which is not the counter's business.
                let started = transitions
                    .iter()
                    .any(|t| t.job == id && t.event == JobEvent::Started);
                prop_assert!(
                    started,
                    "q{} says {} preemptable available slots ({:?}); a {}-slot job did not start: {:?}",
                    queue,
                    reach,
                    counters,
                    slots,
                    trial.job(id).map(|job| job.state)
                );
                trial.audit().map_err(TestCaseError::fail)?;
            }
        }
    }
}

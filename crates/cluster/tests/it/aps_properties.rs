//! Properties of absolute priority scheduling: the formula is monotone in
//! each factor with a positive weight and in each positive weight, keeps
//! every term within its limit and the whole within ±1,000,000, and counts
//! nothing before its grace period; and random clusters with APS groups,
//! chunks, rerunnable queues and resizable jobs under random commands
//! (bmod -aps, bmig, brequeue, bresize release, host failures) keep their
//! books and still run every job.

use std::time::Duration;

use mcfed_cluster::aps::{ApsInputs, aps_value};
use mcfed_cluster::{
    APS_MAX, ApsPriority, ApsTerm, Cluster, ClusterConfig, HostConfig, HostEvent, HostSelection,
    JobId, JobOrigin, QueueConfig,
};
use mcfed_protocol::{
    ApsChange, ApsNumber, ClusterName, JobAction, JobChanges, JobOptions, JobSpec, QueueName,
    SimTime, SlotRelease,
};
use proptest::prelude::*;

/// A random APS_PRIORITY: each term weighted (positive) or not, some
/// limited, some with a grace period.
fn priority() -> impl Strategy<Value = ApsPriority> {
    let term = (
        prop::option::of(0.1f64..100.0),
        prop::option::of(1.0f64..10_000.0),
        prop::option::of(1u64..7200),
    );
    proptest::collection::vec(term, 8).prop_filter_map("some weight", |terms| {
        let mut aps = ApsPriority::default();
        for (index, (weight, limit, grace)) in terms.into_iter().enumerate() {
            aps.weight[index] = weight;
            if weight.is_some() {
                aps.limit[index] = limit;
                aps.grace[index] = grace.map(Duration::from_secs);
            }
        }
        aps.weight.iter().any(Option::is_some).then_some(aps)
    })
}

fn inputs() -> impl Strategy<Value = ApsInputs> {
    (
        prop::option::of(0.0f64..100.0),
        (1.0f64..64.0, 0.0f64..65_536.0, 0.0f64..65_536.0),
        (0.0f64..100.0, 1.0f64..100.0),
        0u64..10_000,
        -100.0f64..100.0,
    )
        .prop_map(
            |(fs, (proc, mem, swap), (jpriority, qpriority), pended, admin)| ApsInputs {
                fs,
                proc,
                mem,
                swap,
                jpriority,
                qpriority,
                pended: Duration::from_secs(pended),
                admin,
            },
        )
}

/// `inputs` with the figure of `term` raised by `by`.
fn raised(inputs: ApsInputs, term: ApsTerm, by: f64) -> ApsInputs {
    let mut up = inputs;
    match term {
        ApsTerm::Fs => up.fs = up.fs.map(|fs| fs + by),
        ApsTerm::Proc => up.proc += by,
        ApsTerm::Mem => up.mem += by,
        ApsTerm::Swap => up.swap += by,
        ApsTerm::JPriority => up.jpriority += by,
        ApsTerm::QPriority => up.qpriority += by,
        ApsTerm::Rsrc | ApsTerm::Work => {}
    }
    up
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Raising a figure never lowers the value when every weight is
    /// positive; raising a positive weight never lowers it when every
    /// figure is at least 0.
    #[test]
    fn monotone_in_each_positive_weight(
        aps in priority(),
        inputs in inputs(),
        term in 0usize..8,
        by in 0.0f64..1000.0,
    ) {
        let term = ApsTerm::ALL[term];
        let resolved = aps.resolve();
        let before = aps_value(&resolved, &inputs).value;
        let after = aps_value(&resolved, &raised(inputs, term, by)).value;
        prop_assert!(after >= before - 1e-9, "{term:?} +{by}: {before} -> {after}");
        let mut heavier = aps.clone();
        if let Some(weight) = heavier.weight[term.index()].as_mut() {
            *weight += by;
        }
        let heavy = aps_value(&heavier.resolve(), &inputs).value;
        prop_assert!(heavy >= before - 1e-9, "weight of {term:?} +{by}: {before} -> {heavy}");
    }

    /// Every term stays within its limit, the value within ±1,000,000, and
    /// a term counts nothing before its grace period ends.
    #[test]
    fn limits_and_grace_periods_hold(aps in priority(), inputs in inputs()) {
        let resolved = aps.resolve();
        let breakdown = aps_value(&resolved, &inputs);
        for term in ApsTerm::ALL {
            let index = term.index();
            prop_assert!(breakdown.terms[index].abs() <= resolved.limit[index] + 1e-9, "{term:?}");
            if inputs.pended < resolved.grace[index] {
                prop_assert_eq!(breakdown.terms[index], 0.0, "{:?} in its grace period", term);
            }
        }
        prop_assert!(breakdown.value.abs() <= APS_MAX);
        let sum: f64 = ApsTerm::FACTORS.iter().map(|f| breakdown.terms[f.index()]).sum();
        prop_assert!((breakdown.value - (sum + inputs.admin).clamp(-APS_MAX, APS_MAX)).abs() < 1e-6);
    }
}

/// One step of the random cluster test.
#[derive(Clone, Debug)]
enum Step {
    Submit {
        queue: u8,
        slots: u32,
        max: u32,
        run: u64,
        priority: u32,
        count: u8,
    },
    Control {
        job: usize,
        action: u8,
    },
    Host {
        fail: bool,
    },
    Advance {
        minutes: u64,
    },
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => (0u8..3, 1u32..=2, 0u32..=3, 1u64..=30, 1u32..=4, 1u8..=3).prop_map(
            |(queue, slots, max, run, priority, count)| Step::Submit {
                queue,
                slots,
                max,
                run,
                priority: priority * 20,
                count,
            }
        ),
        3 => (0usize..14, 0u8..8).prop_map(|(job, action)| Step::Control { job, action }),
        1 => any::<bool>().prop_map(|fail| Step::Host { fail }),
        2 => (0u64..=15).prop_map(|minutes| Step::Advance { minutes }),
    ];
    proptest::collection::vec(step, 1..70)
}

fn action(code: u8) -> JobAction {
    let modify = |aps| {
        JobAction::Modify(JobChanges {
            aps: Some(aps),
            ..JobChanges::default()
        })
    };
    match code {
        0 => JobAction::Kill,
        1 => JobAction::Requeue,
        2 => JobAction::Migrate,
        3 => modify(ApsChange::System(ApsNumber(7.0))),
        4 => modify(ApsChange::Admin(ApsNumber(-30.0))),
        5 => modify(ApsChange::Clear),
        6 => JobAction::Release(SlotRelease::All),
        _ => JobAction::Stop,
    }
}

/// Hosts h1 (2 slots) and h2 (3); `aps` (APS, chunks of 3, rerunnable,
/// fairshare) with `member` in its QUEUE_GROUP, and `plain` on h2 only.
fn cluster() -> Cluster {
    let mut config = ClusterConfig::new(ClusterName::new("C1").expect("valid"));
    config.hosts = vec![HostConfig::new("h1", 2), HostConfig::new("h2", 3)];
    let mut aps = QueueConfig::new(QueueName::new("aps").expect("valid"));
    aps.priority = 20;
    aps.aps_priority = Some(
        "WEIGHT[[FS, 10] [PROC, 1] [JPRIORITY, 1] [QPRIORITY, 2]] GRACE_PERIOD[[PROC, 5m]]"
            .parse()
            .expect("valid"),
    );
    aps.fairshare = Some("USER_SHARES[[default, 1]]".parse().expect("valid"));
    aps.queue_group = vec![QueueName::new("member").expect("valid")];
    aps.chunk_job_size = Some(3);
    aps.rerunnable = true;
    let mut member = QueueConfig::new(QueueName::new("member").expect("valid"));
    member.priority = 10;
    member.rerunnable = true;
    let mut plain = QueueConfig::new(QueueName::new("plain").expect("valid"));
    plain.priority = 5;
    plain.hosts = HostSelection::Listed(vec!["h2".into()]);
    config.queues = vec![aps, member, plain];
    config.params.max_user_priority = Some(100);
    config.params.job_priority_over_time = Some("1/60".parse().expect("valid"));
    Cluster::new(config).expect("valid configuration")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever comes, the books agree after every step, and once every
    /// stopped job is resumed and the host is back, every job that was not
    /// killed runs to its end.
    #[test]
    fn random_aps_clusters_keep_their_books_and_run_every_job(steps in steps()) {
        let mut c = cluster();
        let mut jobs: Vec<JobId> = Vec::new();
        let mut now = SimTime::ZERO;
        let mut ended = 0usize;
        let mut down = false;
        for step in steps {
            let mut made = Vec::new();
            match step {
                Step::Submit { queue, slots, max, run, priority, count } => {
                    let name = ["aps", "member", "plain"][queue as usize];
                    let user = if run % 2 == 0 { "alice" } else { "bob" };
                    for _ in 0..count {
                        let mut spec = JobSpec::simple("j", user, Duration::from_secs(run * 60));
                        spec.slots = slots;
                        spec.set_options(JobOptions {
                            user_priority: Some(priority),
                            max_slots: (max > 0).then_some(slots + max),
                            auto_resize: max > 1,
                            mem_request_mb: Some(u64::from(priority) * 10),
                            ..JobOptions::default()
                        });
                        if let Ok(id) = c.submit(now, name, spec, JobOrigin::Local) {
                            jobs.push(id);
                        }
                    }
                }
                Step::Control { job, action: code } => {
                    if let Some(&id) = jobs.get(job) {
                        let _ = c.control(now, id, &action(code), &mut made);
                    }
                }
                Step::Host { fail } => {
                    let event = if fail { HostEvent::Fail } else { HostEvent::Recover };
                    if c.host_event(now, "h1", event, &mut made).is_ok() {
                        down = fail;
                    }
                }
                Step::Advance { minutes } => now += Duration::from_secs(minutes * 60),
            }
            ended += made.iter().filter(|t| t.event.ends_job()).count();
            prop_assert!(c.audit().is_ok(), "{:?}", c.audit());
            let mut made = Vec::new();
            c.advance(now, &mut made);
            ended += made.iter().filter(|t| t.event.ends_job()).count();
            prop_assert!(c.audit().is_ok(), "{:?}", c.audit());
            for entry in c.aps_listing(now) {
                prop_assert!(entry.shown.value().is_none_or(|v| v.abs() <= APS_MAX));
            }
        }
        let mut made = Vec::new();
        if down {
            c.host_event(now, "h1", HostEvent::Recover, &mut made).expect("back");
        }
        for &id in &jobs {
            let _ = c.control(now, id, &JobAction::Resume, &mut made);
            prop_assert!(c.audit().is_ok(), "{:?}", c.audit());
        }
        ended += made.iter().filter(|t| t.event.ends_job()).count();
        while let Some(at) = c.next_event_time().or(c.needs_dispatch().then_some(now)) {
            now = now.max(at);
            let mut made = Vec::new();
            c.advance(now, &mut made);
            ended += made.iter().filter(|t| t.event.ends_job()).count();
            prop_assert!(c.audit().is_ok(), "{:?}", c.audit());
        }
        prop_assert_eq!(c.jobs().count(), 0, "every job ran");
        prop_assert_eq!(ended, jobs.len());
        prop_assert_eq!(c.finished_jobs() + c.exited_jobs(), jobs.len() as u64);
    }
}

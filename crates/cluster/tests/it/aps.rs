//! Absolute priority scheduling on the cluster core: APS_PRIORITY's
//! refusals, the order it gives pending jobs (system values, ADMIN, ties,
//! QUEUE_GROUP), what requeue resets and rerun and migration keep, chunk
//! jobs and resize requests, each checked against the jobs that run and a
//! full audit of the books.

use std::time::Duration;

use mcfed_cluster::{
    ApsPriority, ApsShown, Cluster, ClusterConfig, HostConfig, HostEvent, JobId, JobOrigin,
    JobState, QueueConfig, Transition,
};
use mcfed_protocol::{
    ApsChange, ApsNumber, ClusterName, JobAction, JobChanges, JobOptions, JobSpec, QueueName,
    SimTime, SlotRelease,
};

fn minutes(n: u64) -> SimTime {
    SimTime::from_secs(n * 60)
}

fn queue(name: &str, priority: u32, aps: Option<&str>) -> QueueConfig {
    let mut queue = QueueConfig::new(QueueName::new(name).expect("valid"));
    queue.priority = priority;
    queue.aps_priority = aps.map(|text| text.parse::<ApsPriority>().expect("valid APS_PRIORITY"));
    queue
}

fn config(hosts: &[(&str, u32)], queues: Vec<QueueConfig>) -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("C1").expect("valid"));
    config.hosts = hosts
        .iter()
        .map(|&(name, slots)| HostConfig::new(name, slots))
        .collect();
    config.queues = queues;
    config.params.max_user_priority = Some(100);
    config
}

struct Job<'a> {
    name: &'a str,
    user: &'a str,
    queue: &'a str,
    run: u64,
    priority: Option<u32>,
    slots: u32,
}

fn job<'a>(name: &'a str, queue: &'a str) -> Job<'a> {
    Job {
        name,
        user: "alice",
        queue,
        run: 10,
        priority: None,
        slots: 1,
    }
}

fn submit(cluster: &mut Cluster, at: SimTime, job: Job<'_>) -> JobId {
    let mut spec = JobSpec::simple(job.name, job.user, Duration::from_secs(job.run * 60));
    spec.slots = job.slots;
    spec.set_options(JobOptions {
        user_priority: job.priority,
        ..JobOptions::default()
    });
    cluster
        .submit(at, job.queue, spec, JobOrigin::Local)
        .expect("accepted")
}

fn advance(cluster: &mut Cluster, at: SimTime) -> Vec<Transition> {
    let mut transitions = Vec::new();
    cluster.advance(at, &mut transitions);
    cluster.audit().expect("books agree");
    transitions
}

fn control(cluster: &mut Cluster, at: SimTime, id: JobId, action: JobAction) -> Result<(), String> {
    let mut transitions = Vec::new();
    let result = cluster.control(at, id, &action, &mut transitions);
    cluster.audit().expect("books agree");
    result.map_err(|error| error.to_string())
}

fn aps(change: ApsChange) -> JobAction {
    JobAction::Modify(JobChanges {
        aps: Some(change),
        ..JobChanges::default()
    })
}

fn state(cluster: &Cluster, id: JobId) -> Option<JobState> {
    cluster.job(id).map(|job| job.state)
}

fn order(cluster: &Cluster, queue: &str, at: SimTime) -> Vec<JobId> {
    let index = cluster.queue_index(queue).expect("queue");
    cluster.dispatch_order(index, at).expect("an order")
}

#[test]
fn refused_configurations_say_why() {
    let cases: Vec<(QueueConfig, &str, &str)> = vec![
        (
            {
                let mut q = queue("normal", 10, Some("WEIGHT[[JPRIORITY, 1]]"));
                q.dispatch_order_queue = true;
                q
            },
            "DISPATCH_ORDER",
            "APS_PRIORITY cannot be used with DISPATCH_ORDER=QUEUE",
        ),
        (
            {
                let mut q = queue("normal", 10, Some("WEIGHT[[JPRIORITY, 1]]"));
                q.fairshare_queues = vec![QueueName::new("short").expect("valid")];
                q
            },
            "FAIRSHARE_QUEUES",
            "cannot be used with cross-queue fairshare (FAIRSHARE_QUEUES)",
        ),
        (
            {
                let mut q = queue("normal", 10, Some("WEIGHT[[JPRIORITY, 1]]"));
                q.slot_pool = Some(mcfed_cluster::SlotPoolConfig {
                    pool: "p".into(),
                    share: 50,
                    max_slots: None,
                    use_priority: None,
                });
                q
            },
            "APS_PRIORITY",
            "cannot be used with queue-based fairshare (SLOT_POOL/SLOT_SHARE)",
        ),
        (
            {
                let mut q = queue("normal", 10, None);
                q.queue_group = vec![QueueName::new("short").expect("valid")];
                q
            },
            "QUEUE_GROUP",
            "has a QUEUE_GROUP but no APS_PRIORITY",
        ),
    ];
    for (first, field, message) in cases {
        let error = Cluster::new(config(&[("h1", 2)], vec![first, queue("short", 5, None)]))
            .expect_err("refused");
        assert!(error.message.contains(message), "{error}");
        assert_eq!(
            error.location,
            mcfed_cluster::ConfigLocation::Queue { index: 0, field }
        );
    }
}

#[test]
fn apsn_values_parse_or_are_refused() {
    for (text, message) in [
        ("WEIGHT[[JPRIORITY, 0]]", "zero is not allowed"),
        (
            "WEIGHT[[JPRIORITY, 1]] LIMIT[[JPRIORITY, -2]]",
            "must be positive",
        ),
        (
            "WEIGHT[[JPRIORITY, 1]] GRACE_PERIOD[[JPRIORITY, 0m]]",
            "zero is not allowed",
        ),
        ("WEIGHT[[ADMIN, 1]]", "ADMIN takes no WEIGHT"),
        ("WEIGHT[[CPU, 1]]", "unknown factor `CPU`"),
        ("WEIGHT[[MEM, 2000000]]", "at most 1000000"),
        (
            "WEIGHT[[MEM, 1]] LIMIT[[PROC, 3]]",
            "which no WEIGHT counts",
        ),
        ("LIMIT[[PROC, 3]]", "needs a WEIGHT"),
        (
            "WEIGHT[[MEM, 1]] WEIGHT[[PROC, 1]]",
            "WEIGHT is given twice",
        ),
    ] {
        let error = text.parse::<ApsPriority>().expect_err(text);
        assert!(error.to_string().contains(message), "{text}: {error}");
    }
    let parsed: ApsPriority = "WEIGHT [[RSRC, 1] [JPRIORITY, 1] [QPRIORITY, 10]] GRACE_PERIOD[[MEM,10h] [JPRIORITY, 10m] [QPRIORITY,10s] [RSRC, 10]]"
        .parse()
        .expect("LSF's example grace periods");
    assert_eq!(
        parsed.grace[mcfed_cluster::ApsTerm::Rsrc.index()],
        Some(Duration::from_secs(36_000))
    );
    assert_eq!(
        parsed.to_string(),
        "WEIGHT[[RSRC, 1] [JPRIORITY, 1] [QPRIORITY, 10]] GRACE_PERIOD[[RSRC, 10h] [MEM, 10h] [JPRIORITY, 10m] [QPRIORITY, 10s]]"
    );
}

/// One host slot, three jobs pending behind a running one: the APS queue
/// orders them by JPRIORITY, not by arrival.
#[test]
fn aps_overrides_first_come_first_served() {
    let mut c = Cluster::new(config(
        &[("h1", 1)],
        vec![queue("normal", 10, Some("WEIGHT[[JPRIORITY, 1]]"))],
    ))
    .expect("valid");
    let first = submit(&mut c, minutes(0), job("first", "normal"));
    advance(&mut c, minutes(0));
    let low = submit(
        &mut c,
        minutes(1),
        Job {
            priority: Some(10),
            ..job("low", "normal")
        },
    );
    let high = submit(
        &mut c,
        minutes(2),
        Job {
            priority: Some(90),
            ..job("high", "normal")
        },
    );
    let mid = submit(&mut c, minutes(3), job("mid", "normal"));
    advance(&mut c, minutes(3));
    assert_eq!(order(&c, "normal", minutes(3)), vec![high, mid, low]);
    let entry = c.aps_entry(high, minutes(3)).expect("pending");
    assert_eq!(entry.shown, ApsShown::Calculated(90.0));
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, first), None, "done");
    assert_eq!(state(&c, high), Some(JobState::Running));
}

#[test]
fn system_values_go_first_and_requeue_resets_them() {
    let mut c = Cluster::new(config(
        &[("h1", 1)],
        vec![queue("normal", 10, Some("WEIGHT[[JPRIORITY, 1]]"))],
    ))
    .expect("valid");
    let runner = submit(&mut c, minutes(0), job("runner", "normal"));
    advance(&mut c, minutes(0));
    let a = submit(
        &mut c,
        minutes(1),
        Job {
            priority: Some(90),
            ..job("a", "normal")
        },
    );
    let b = submit(
        &mut c,
        minutes(1),
        Job {
            priority: Some(5),
            ..job("b", "normal")
        },
    );
    let d = submit(
        &mut c,
        minutes(1),
        Job {
            priority: Some(5),
            ..job("d", "normal")
        },
    );
    control(
        &mut c,
        minutes(2),
        b,
        aps(ApsChange::System(ApsNumber(1.0))),
    )
    .expect("set");
    control(
        &mut c,
        minutes(2),
        d,
        aps(ApsChange::Admin(ApsNumber(100.0))),
    )
    .expect("set");
    assert_eq!(order(&c, "normal", minutes(2)), vec![b, d, a]);
    assert_eq!(
        c.aps_entry(b, minutes(2)).map(|e| e.shown),
        Some(ApsShown::System(1.0))
    );
    assert_eq!(
        c.aps_entry(d, minutes(2)).map(|e| e.shown),
        Some(ApsShown::Calculated(105.0))
    );
    // Zero and too large are refused; -apsn removes.
    assert!(control(&mut c, minutes(2), a, aps(ApsChange::Admin(ApsNumber(0.0)))).is_err());
    assert!(
        control(
            &mut c,
            minutes(2),
            a,
            aps(ApsChange::System(ApsNumber(2e6)))
        )
        .is_err()
    );
    assert!(
        control(
            &mut c,
            minutes(2),
            runner,
            aps(ApsChange::Admin(ApsNumber(1.0)))
        )
        .is_err()
    );
    control(&mut c, minutes(3), d, aps(ApsChange::Clear)).expect("cleared");
    assert_eq!(order(&c, "normal", minutes(3)), vec![b, a, d]);
    // b runs next; a brequeue of it resets its system value.
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, b), Some(JobState::Running));
    control(&mut c, minutes(11), b, JobAction::Requeue).expect("requeued");
    let entry = c.aps_entry(b, minutes(11)).expect("pending again");
    assert_eq!(entry.shown, ApsShown::Calculated(5.0), "system value reset");
}

#[test]
fn escalation_counts_pending_time_and_rerun_keeps_it() {
    let mut conf = config(
        &[("h1", 1), ("h2", 1)],
        vec![{
            let mut q = queue("normal", 10, Some("WEIGHT[[JPRIORITY, 1]]"));
            q.rerunnable = true;
            q.hosts = mcfed_cluster::HostSelection::Listed(vec!["h1".into()]);
            q
        }],
    );
    conf.params.job_priority_over_time = Some("3/10".parse().expect("valid"));
    let mut c = Cluster::new(conf).expect("valid");
    let runner = submit(
        &mut c,
        minutes(0),
        Job {
            run: 60,
            ..job("runner", "normal")
        },
    );
    advance(&mut c, minutes(0));
    let waiter = submit(
        &mut c,
        minutes(0),
        Job {
            priority: Some(10),
            ..job("waiter", "normal")
        },
    );
    advance(&mut c, minutes(25));
    assert_eq!(
        c.job_priority(c.job(waiter).expect("job"), minutes(25)),
        16,
        "two steps of 3"
    );
    // The runner pended 0 minutes; its host fails at 30m: it reruns, keeps
    // its place (first in), and its priority goes on from what it had.
    let mut made = Vec::new();
    c.host_event(minutes(30), "h1", HostEvent::Fail, &mut made)
        .expect("fails");
    c.audit().expect("books agree");
    assert_eq!(state(&c, runner), Some(JobState::Pending));
    assert_eq!(
        c.job(runner).expect("job").pended(minutes(40)),
        Duration::from_secs(600)
    );
    assert_eq!(c.job_priority(c.job(waiter).expect("job"), minutes(40)), 22);
    // At 41m the runner has pended 11 minutes (50 + 3 = 53), the waiter
    // 41 (10 + 4 × 3 = 22): the runner goes first when h1 is back.
    c.host_event(minutes(41), "h1", HostEvent::Recover, &mut made)
        .expect("back");
    advance(&mut c, minutes(41));
    assert_eq!(state(&c, runner), Some(JobState::Running));
    assert_eq!(state(&c, waiter), Some(JobState::Pending));
}

/// QUEUE_GROUP: the jobs of `normal` (APS) and `short` are ordered
/// together by `normal`'s formula, QPRIORITY weighing each job's own
/// queue's priority.
#[test]
fn queue_group_orders_several_queues_together() {
    let mut normal = queue("normal", 30, Some("WEIGHT[[JPRIORITY, 1] [QPRIORITY, 10]]"));
    normal.queue_group = vec![QueueName::new("short").expect("valid")];
    let mut c =
        Cluster::new(config(&[("h1", 1)], vec![normal, queue("short", 20, None)])).expect("valid");
    submit(&mut c, minutes(0), job("runner", "normal"));
    advance(&mut c, minutes(0));
    // normal: 50 + 300 = 350; short with -sp 100: 100 + 200 = 300; short
    // default: 250.
    let n = submit(&mut c, minutes(1), job("n", "normal"));
    let s_high = submit(
        &mut c,
        minutes(1),
        Job {
            priority: Some(100),
            ..job("s-high", "short")
        },
    );
    let s = submit(&mut c, minutes(1), job("s", "short"));
    assert_eq!(order(&c, "normal", minutes(1)), vec![n, s_high, s]);
    assert_eq!(
        order(&c, "short", minutes(1)),
        vec![n, s_high, s],
        "one group, one order"
    );
    control(
        &mut c,
        minutes(2),
        s,
        aps(ApsChange::Admin(ApsNumber(101.0))),
    )
    .expect("set");
    assert_eq!(order(&c, "normal", minutes(2)), vec![s, n, s_high]);
    advance(&mut c, minutes(10));
    assert_eq!(
        state(&c, s),
        Some(JobState::Running),
        "a short job, first by APS"
    );
}

/// bmig: a migrated job goes before every pending job (even a system
/// value) and keeps its priority; with LSB_REQUEUE_TO_BOTTOM and
/// LSB_MIG2PEND it competes by APS value.
#[test]
fn migrated_jobs_go_first_unless_requeued_to_the_bottom() {
    for to_bottom in [false, true] {
        let mut normal = queue("normal", 10, Some("WEIGHT[[JPRIORITY, 1]]"));
        normal.rerunnable = true;
        let mut conf = config(&[("h1", 1)], vec![normal, queue("plain", 5, None)]);
        conf.params.requeue_to_bottom = to_bottom;
        conf.params.mig2pend = to_bottom;
        let mut c = Cluster::new(conf).expect("valid");
        let mover = submit(
            &mut c,
            minutes(0),
            Job {
                priority: Some(20),
                ..job("mover", "normal")
            },
        );
        advance(&mut c, minutes(0));
        let high = submit(
            &mut c,
            minutes(1),
            Job {
                priority: Some(90),
                ..job("high", "normal")
            },
        );
        let system = submit(&mut c, minutes(1), job("system", "normal"));
        control(
            &mut c,
            minutes(1),
            system,
            aps(ApsChange::System(ApsNumber(5.0))),
        )
        .expect("set");
        control(&mut c, minutes(2), mover, JobAction::Migrate).expect("migrated");
        let entry = c.aps_entry(mover, minutes(2)).expect("pending");
        assert_eq!(entry.migrated, !to_bottom);
        assert_eq!(entry.shown, ApsShown::Calculated(20.0), "priority kept");
        let expected = if to_bottom {
            vec![system, high, mover]
        } else {
            vec![mover, system, high]
        };
        assert_eq!(
            order(&c, "normal", minutes(2)),
            expected,
            "to_bottom {to_bottom}"
        );
    }
    // Not RERUNNABLE: refused.
    let mut c = Cluster::new(config(
        &[("h1", 1)],
        vec![queue("normal", 10, Some("WEIGHT[[JPRIORITY, 1]]"))],
    ))
    .expect("valid");
    let j = submit(&mut c, minutes(0), job("j", "normal"));
    advance(&mut c, minutes(0));
    let refused = control(&mut c, minutes(1), j, JobAction::Migrate).expect_err("refused");
    assert!(refused.contains("not RERUNNABLE"), "{refused}");
}

/// CHUNK_JOB_SIZE: the first job is picked by APS, the rest by APS among
/// alike jobs; they run one after another on one slot.
#[test]
fn chunks_run_one_after_another_on_one_slot() {
    let mut normal = queue("normal", 10, Some("WEIGHT[[JPRIORITY, 1]]"));
    normal.chunk_job_size = Some(3);
    let mut c = Cluster::new(config(&[("h1", 1)], vec![normal])).expect("valid");
    let a = submit(
        &mut c,
        minutes(0),
        Job {
            priority: Some(10),
            ..job("a", "normal")
        },
    );
    let b = submit(
        &mut c,
        minutes(0),
        Job {
            priority: Some(60),
            ..job("b", "normal")
        },
    );
    let d = submit(
        &mut c,
        minutes(0),
        Job {
            priority: Some(60),
            ..job("d", "normal")
        },
    );
    let e = submit(
        &mut c,
        minutes(0),
        Job {
            priority: Some(60),
            ..job("e", "normal")
        },
    );
    let f = submit(
        &mut c,
        minutes(0),
        Job {
            priority: Some(60),
            user: "bob",
            ..job("f", "normal")
        },
    );
    advance(&mut c, minutes(0));
    // b starts (first by APS, earliest of the 60s); d and e join it (same
    // user and priority); a (another priority) and f (another user) do not.
    assert_eq!(state(&c, b), Some(JobState::Running));
    assert_eq!(state(&c, d), Some(JobState::ChunkWaiting));
    assert_eq!(state(&c, e), Some(JobState::ChunkWaiting));
    assert_eq!(state(&c, a), Some(JobState::Pending));
    assert_eq!(state(&c, f), Some(JobState::Pending));
    advance(&mut c, minutes(10));
    assert_eq!(state(&c, d), Some(JobState::Running));
    assert_eq!(state(&c, e), Some(JobState::ChunkWaiting));
    // Killing the waiting job leaves the chunk; the running one's finish
    // frees the slot for the next chunk.
    control(&mut c, minutes(11), e, JobAction::Kill).expect("killed");
    advance(&mut c, minutes(20));
    assert_eq!(state(&c, d), None, "done");
    assert_eq!(
        state(&c, f),
        Some(JobState::Running),
        "f (60) before a (10)"
    );
    assert_eq!(state(&c, a), Some(JobState::Pending));
}

/// A resizable job's request grows it when slots free up, and `bresize
/// release` shrinks it; its user's dynamic priority follows its slots.
#[test]
fn resize_requests_grow_and_release_shrinks() {
    let mut normal = queue("normal", 10, Some("WEIGHT[[FS, 1] [PROC, 1]]"));
    normal.fairshare = Some("USER_SHARES[[alice, 10] [bob, 10]]".parse().expect("valid"));
    let mut c = Cluster::new(config(&[("h1", 4)], vec![normal])).expect("valid");
    let blocker = submit(
        &mut c,
        minutes(0),
        Job {
            slots: 2,
            ..job("blocker", "normal")
        },
    );
    advance(&mut c, minutes(0));
    let mut spec = JobSpec::simple("grow", "alice", Duration::from_secs(3600));
    spec.slots = 1;
    spec.set_options(JobOptions {
        max_slots: Some(4),
        auto_resize: true,
        ..JobOptions::default()
    });
    let grow = c
        .submit(minutes(0), "normal", spec, JobOrigin::Local)
        .expect("accepted");
    advance(&mut c, minutes(0));
    // 2 + 1 on 4 slots: it starts with as many as are free, up to its
    // max, and asks for the rest.
    assert_eq!(c.job(grow).map(|j| j.spec.slots), Some(2));
    let normal = c.queue_index("normal").expect("queue");
    let before = c
        .dynamic_priority_of(normal, "alice", minutes(1))
        .expect("priority");
    let entry = c.aps_entry(grow, minutes(1)).expect("a pending request");
    assert!(entry.resize);
    advance(&mut c, minutes(10));
    assert_eq!(
        c.job(grow).map(|j| j.spec.slots),
        Some(4),
        "grew when the blocker ended"
    );
    let grown = c
        .dynamic_priority_of(normal, "alice", minutes(10))
        .expect("priority");
    assert!(
        grown < before,
        "{grown} < {before}: growing lowers the user's priority"
    );
    let refused = control(
        &mut c,
        minutes(11),
        blocker,
        JobAction::Release(SlotRelease::All),
    );
    assert!(refused.is_err(), "the blocker has finished");
    control(
        &mut c,
        minutes(11),
        grow,
        JobAction::Release(SlotRelease::All),
    )
    .expect("released");
    assert_eq!(c.job(grow).map(|j| j.spec.slots), Some(1));
    let released = c
        .dynamic_priority_of(normal, "alice", minutes(11))
        .expect("priority");
    assert!(
        released > grown,
        "{released} > {grown}: releasing raises it"
    );
    assert!(
        c.aps_entry(grow, minutes(11)).is_none(),
        "no request after a release"
    );
    // It runs out its time from where it was.
    let done = advance(&mut c, minutes(60));
    assert!(
        done.iter()
            .any(|t| t.job == grow && t.event == mcfed_protocol::JobEvent::Finished)
    );
}

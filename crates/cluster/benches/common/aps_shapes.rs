//! The clusters of the APS benchmarks (`benches/aps.rs`) and of the
//! instruction-count example (`examples/aps_pass.rs`), written once.

use std::time::Duration;

use mcfed_cluster::{
    ApsPriority, Cluster, ClusterConfig, HostConfig, HostSelection, JobOrigin, QueueConfig,
    SlotPoolConfig,
};
use mcfed_protocol::{ClusterName, JobOptions, JobSpec, QueueName, SimTime};

/// The pending jobs of the big cluster.
pub(crate) const PENDING_JOBS: usize = 100_000;
const USERS: usize = 1_000;

fn queue(name: &str, priority: u32, aps: Option<&str>) -> QueueConfig {
    let mut queue = QueueConfig::new(QueueName::new(name).expect("valid"));
    queue.priority = priority;
    queue.aps_priority = aps.map(|text| text.parse::<ApsPriority>().expect("valid"));
    queue
}

fn config(hosts: usize) -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("bench").expect("valid"));
    config.hosts = (0..hosts)
        .map(|n| HostConfig::new(format!("host{n:04}"), 32))
        .collect();
    config.params.max_user_priority = Some(100);
    config.params.job_priority_over_time = Some("1/10".parse().expect("valid"));
    config
}

/// USER_SHARES naming `named` users (1 to 5 shares) and `default`.
fn shares(named: usize) -> String {
    let users: Vec<String> = (0..named)
        .map(|user| format!("[user{user:04}, {}]", 1 + user % 5))
        .collect();
    format!("USER_SHARES[{} [default, 1]]", users.join(" "))
}

/// `dispatch_cycle`'s cluster, with APS on its queues outside the pools
/// when `aps`.
pub(crate) fn big_cluster(aps: bool) -> Cluster {
    let mut config = config(5_000);
    let half = |range: std::ops::Range<usize>| range.map(|n| format!("host{n:04}")).collect();
    let mut queues = Vec::new();
    for (pool, hosts, base) in [
        ("poolA", half(0..2_500), 80),
        ("poolB", half(2_500..5_000), 40),
    ] {
        for (index, share) in [50, 30, 20].into_iter().enumerate() {
            let mut q = queue(&format!("{pool}-q{index}"), base - index as u32, None);
            q.hosts = HostSelection::Listed(Vec::clone(&hosts));
            q.slot_pool = Some(SlotPoolConfig {
                pool: pool.into(),
                share,
                max_slots: None,
                use_priority: None,
            });
            queues.push(q);
        }
    }
    let fair_aps = aps.then_some("WEIGHT[[FS, 1000] [JPRIORITY, 1] [PROC, 2] [MEM, 0.01]]");
    for index in 0..6 {
        let mut q = queue(&format!("fairshare{index}"), 60 - index, fair_aps);
        q.fairshare = Some(shares(20).parse().expect("valid USER_SHARES"));
        queues.push(q);
    }
    let fcfs_aps = aps.then_some("WEIGHT[[JPRIORITY, 1] [QPRIORITY, 10] [PROC, 2] [MEM, 0.01]]");
    for index in 0..8 {
        let mut q = queue(&format!("fcfs{index}"), 30 - index, fcfs_aps);
        match index {
            0 | 1 => q.preemption = "PREEMPTIVE PREEMPTABLE".parse().expect("valid"),
            2 => q.user_job_limit = Some(50),
            3 => q.job_limit = Some(5_000),
            _ => {}
        }
        queues.push(q);
    }
    config.queues = queues;
    Cluster::new(config).expect("valid configuration")
}

/// Job `n` of `users` users: mostly one slot, some 2 or 4, a `-sp`, a
/// memory request, a run time of `run`.
fn spec(n: usize, users: usize, run: Duration) -> JobSpec {
    let mut spec = JobSpec::simple(
        format!("job{n}"),
        format!("user{:04}", (n * 7) % users),
        run,
    );
    spec.slots = match n % 10 {
        0 => 4,
        1 | 2 => 2,
        _ => 1,
    };
    spec.cpu_utilisation = 0.8;
    spec.memory_mb = 1024;
    spec.set_options(JobOptions {
        user_priority: Some(1 + (n as u32 * 37) % 100),
        mem_request_mb: Some(256 * (1 + n as u64 % 16)),
        swap_request_mb: Some(128 * (n as u64 % 4)),
        ..JobOptions::default()
    });
    spec
}

fn submit(cluster: &mut Cluster, queue: &str, spec: JobSpec) {
    cluster
        .submit(SimTime::ZERO, queue, spec, JobOrigin::Local)
        .expect("accepted");
}

/// The deep queue's three kinds.
pub(crate) const DEEP: &[&str] = &["fcfs", "fairshare", "aps"];

/// A full cluster of 1,024 slots with 10,000 jobs pending in `deep`;
/// the job that ends first ends at 60 s.
pub(crate) fn deep_cluster(kind: &str) -> Cluster {
    let mut config = config(32);
    let aps = (kind == "aps").then_some(
        "WEIGHT[[FS, 1000] [JPRIORITY, 1] [PROC, 2] [MEM, 0.01] [SWAP, 0.01]] GRACE_PERIOD[[SWAP, 10m]]",
    );
    let mut deep = queue("deep", 30, aps);
    if kind != "fcfs" {
        deep.fairshare = Some(shares(50).parse().expect("valid USER_SHARES"));
    }
    config.queues = vec![deep];
    let mut cluster = Cluster::new(config).expect("valid configuration");
    let one_slot = |cluster: &mut Cluster, n: usize, run: u64| {
        let mut job = spec(n, 200, Duration::from_secs(run));
        job.slots = 1;
        submit(cluster, "deep", job);
    };
    // The running jobs first, job 0 ending at 60 s; then the pending ones.
    for n in 0..1_024 {
        one_slot(&mut cluster, n, if n == 0 { 60 } else { 3_600 });
    }
    let mut transitions = Vec::new();
    cluster.advance(SimTime::ZERO, &mut transitions);
    assert_eq!(transitions.len(), 1_024, "the cluster is full");
    for n in 1_024..11_024 {
        one_slot(&mut cluster, n, 3_600 + n as u64 % 600);
    }
    transitions.clear();
    cluster.advance(SimTime::ZERO, &mut transitions);
    assert!(transitions.is_empty(), "nothing starts: no slot is free");
    let mut after = cluster.clone();
    after.advance(SimTime::from_secs(60), &mut transitions);
    assert_eq!(transitions.len(), 2, "one job ends, one starts");
    cluster
}

/// The big cluster with its 100,000 jobs pending.
pub(crate) fn loaded_big_cluster(aps: bool) -> Cluster {
    let mut full = big_cluster(aps);
    let queues: Vec<String> = full.queue_configs().map(|q| q.name.to_string()).collect();
    for n in 0..PENDING_JOBS {
        let run = Duration::from_secs(600 + (n as u64 % 3600));
        submit(&mut full, &queues[n % queues.len()], spec(n, USERS, run));
    }
    full
}

//! Benchmark of one full scheduling cycle of a large cluster: 5,000 hosts
//! with 32 slots each (160,000 slots), 20 queues (6 in two slot pools, 6
//! with user-based fairshare, 8 first come first served, two of them
//! preemptive and preemptable), 1,000 users and 100,000 pending jobs.
//!
//! Run: `cargo bench -p mcfed-cluster --bench dispatch`.
//!
//! - `dispatch_cycle`: one `Cluster::advance` over the 100,000 pending jobs:
//!   every job gets a decision (it starts, or pends with a reason). Target
//!   (one core): >= 200,000 decisions/s.
//! - `submit_pending_jobs`: submitting the 100,000 jobs. divan's allocation
//!   profiler (a counting global allocator) gives the bytes they take:
//!   (alloc + grow - dealloc - shrink) / 100,000 is the memory per pending
//!   job. Target: <= 512 bytes.
//!
//! Results are in docs/performance.md.

use std::time::Duration;

use divan::{AllocProfiler, Bencher, black_box};
use mcfed_cluster::{
    Cluster, ClusterConfig, HostConfig, HostSelection, JobOrigin, QueueConfig, SlotPoolConfig,
};
use mcfed_protocol::{ClusterName, JobSpec, QueueName, SimTime};

#[global_allocator]
static ALLOCATOR: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

const HOSTS: usize = 5_000;
const SLOTS_PER_HOST: u32 = 32;
const USERS: usize = 1_000;
const PENDING_JOBS: usize = 100_000;

fn queue(name: &str, priority: u32) -> QueueConfig {
    let mut queue = QueueConfig::new(QueueName::new(name).expect("valid"));
    queue.priority = priority;
    queue
}

/// The cluster, with no job yet.
fn empty_cluster() -> Cluster {
    let mut config = ClusterConfig::new(ClusterName::new("bench").expect("valid"));
    config.hosts = (0..HOSTS)
        .map(|n| HostConfig::new(format!("host{n:04}"), SLOTS_PER_HOST))
        .collect();
    let first_half: Vec<String> = (0..HOSTS / 2).map(|n| format!("host{n:04}")).collect();
    let second_half: Vec<String> = (HOSTS / 2..HOSTS).map(|n| format!("host{n:04}")).collect();
    let mut queues = Vec::new();
    // Two slot pools of three queues each, on half the hosts each.
    for (pool, hosts, base) in [("poolA", &first_half, 80), ("poolB", &second_half, 40)] {
        for (index, share) in [50, 30, 20].into_iter().enumerate() {
            let mut q = queue(&format!("{pool}-q{index}"), base - index as u32);
            q.hosts = HostSelection::Listed(hosts.clone());
            q.slot_pool = Some(SlotPoolConfig {
                pool: pool.into(),
                share,
                max_slots: None,
                use_priority: None,
            });
            queues.push(q);
        }
    }
    // Six fairshare queues over all hosts.
    let named: Vec<String> = (0..20)
        .map(|user| format!("[user{user:04}, {}]", 1 + user % 5))
        .collect();
    let shares = format!("USER_SHARES[{} [default, 1]]", named.join(" "));
    for index in 0..6 {
        let mut q = queue(&format!("fairshare{index}"), 60 - index);
        q.fairshare = Some(shares.parse().expect("valid USER_SHARES"));
        queues.push(q);
    }
    // Eight FCFS queues; two preemptive and preemptable, two with limits.
    for index in 0..8 {
        let mut q = queue(&format!("fcfs{index}"), 30 - index);
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

/// The jobs: spread over the queues and users, mostly 1 slot, some 2 or 4.
fn jobs() -> Vec<(String, JobSpec)> {
    let queues: Vec<String> = empty_cluster()
        .queue_configs()
        .map(|queue| queue.name.to_string())
        .collect();
    (0..PENDING_JOBS)
        .map(|n| {
            let mut spec = JobSpec::simple(
                format!("job{n}"),
                format!("user{:04}", (n * 7) % USERS),
                Duration::from_secs(600 + (n as u64 % 3600)),
            );
            spec.slots = match n % 10 {
                0 => 4,
                1 | 2 => 2,
                _ => 1,
            };
            spec.cpu_utilisation = 0.8;
            spec.memory_mb = 1024;
            (queues[n % queues.len()].clone(), spec)
        })
        .collect()
}

fn submit_all(cluster: &mut Cluster, jobs: &[(String, JobSpec)]) {
    for (queue, spec) in jobs {
        cluster
            .submit(SimTime::ZERO, queue, spec.clone(), JobOrigin::Local)
            .expect("accepted");
    }
}

/// One dispatch pass over 100,000 pending jobs.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn dispatch_cycle(bencher: Bencher) {
    let mut full = empty_cluster();
    submit_all(&mut full, &jobs());
    bencher
        .counter(divan::counter::ItemsCount::new(PENDING_JOBS))
        .with_inputs(|| (full.clone(), Vec::with_capacity(PENDING_JOBS)))
        .bench_local_values(|(mut cluster, mut transitions)| {
            cluster.advance(SimTime::ZERO, &mut transitions);
            black_box(transitions.len());
            (cluster, transitions)
        });
}

/// Submitting 100,000 jobs to an empty cluster: the allocation profile
/// gives the memory per pending job.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn submit_pending_jobs(bencher: Bencher) {
    let empty = empty_cluster();
    let jobs = jobs();
    bencher
        .counter(divan::counter::ItemsCount::new(PENDING_JOBS))
        .with_inputs(|| empty.clone())
        .bench_local_values(|mut cluster| {
            submit_all(&mut cluster, &jobs);
            cluster
        });
}

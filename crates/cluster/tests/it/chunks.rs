//! Chunk jobs (CHUNK_JOB_SIZE, seed 001 "Chunk jobs"): the jobs of a chunk
//! share the whole resource requirement — the boolean resources they
//! select, in any order, and what their `rusage` asks for.

use std::time::Duration;

use mcfed_cluster::{
    Cluster, ClusterConfig, HostConfig, JobId, JobOrigin, JobState, QueueConfig, Transition,
};
use mcfed_protocol::{ClusterName, JobOptions, JobSpec, QueueName, SimTime};

fn minutes(n: u64) -> SimTime {
    SimTime::from(Duration::from_secs(n * 60))
}

fn cluster() -> Cluster {
    let mut config = ClusterConfig::new(ClusterName::new("C1").expect("valid"));
    let mut host = HostConfig::new("h1", 1);
    host.resources = vec!["fast".into(), "linux".into()];
    config.hosts = vec![host];
    let mut queue = QueueConfig::new(QueueName::new("normal").expect("valid"));
    queue.chunk_job_size = Some(4);
    config.queues = vec![queue];
    Cluster::new(config).expect("valid")
}

/// A ten-minute job of alice selecting `resources`, asking `mem` and
/// `swap` MB through rusage.
fn submit(
    c: &mut Cluster,
    name: &str,
    resources: &[&str],
    mem: Option<u64>,
    swap: Option<u64>,
) -> JobId {
    let mut spec = JobSpec::simple(name, "alice", Duration::from_secs(600));
    spec.resources = resources.iter().map(|r| (*r).to_owned()).collect();
    if mem.is_some() || swap.is_some() {
        spec.set_options(JobOptions {
            mem_request_mb: mem,
            swap_request_mb: swap,
            ..JobOptions::default()
        });
    }
    c.submit(minutes(0), "normal", spec, JobOrigin::Local)
        .expect("submitted")
}

fn state(c: &Cluster, id: JobId) -> Option<JobState> {
    c.job(id).map(|job| job.state)
}

#[test]
fn a_chunk_takes_only_jobs_of_the_same_whole_requirement() {
    let mut c = cluster();
    let runner = submit(&mut c, "runner", &["linux", "fast"], None, None);
    let with_mem = submit(&mut c, "with-mem", &["linux", "fast"], Some(1000), None);
    let reordered = submit(&mut c, "reordered", &["fast", "linux"], None, None);
    let with_swap = submit(&mut c, "with-swap", &["fast", "linux"], None, Some(500));
    let fewer = submit(&mut c, "fewer", &["linux"], None, None);
    let alike = submit(&mut c, "alike", &["linux", "fast", "linux"], None, None);
    let mut transitions: Vec<Transition> = Vec::new();
    c.advance(minutes(0), &mut transitions);
    assert_eq!(state(&c, runner), Some(JobState::Running));
    // The same set of boolean resources, whatever the order or repeats,
    // and no rusage: in the chunk.
    assert_eq!(state(&c, reordered), Some(JobState::ChunkWaiting));
    assert_eq!(state(&c, alike), Some(JobState::ChunkWaiting));
    // rusage[mem], rusage[swp] or another select: not.
    assert_eq!(state(&c, with_mem), Some(JobState::Pending));
    assert_eq!(state(&c, with_swap), Some(JobState::Pending));
    assert_eq!(state(&c, fewer), Some(JobState::Pending));
    c.advance(minutes(30), &mut transitions);
    // The chunk ran runner, reordered, alike (0-30m); with-mem is next in
    // order and starts a chunk of its own requirement.
    assert_eq!(state(&c, with_mem), Some(JobState::Running));
    assert_eq!(state(&c, with_swap), Some(JobState::Pending));
    assert_eq!(c.audit(), Ok(()));
}

/// A chunk's running job stopped by `bstop` keeps its slot (USUSP); killed
/// then, the next job of its chunk runs on that slot, as after a running
/// job's kill (the waiting jobs were left in no chunk before; found by
/// tests/aps_properties.rs).
#[test]
fn killing_a_stopped_chunk_runner_runs_the_next_job_of_its_chunk() {
    let mut c = cluster();
    let runner = submit(&mut c, "runner", &[], None, None);
    let next = submit(&mut c, "next", &[], None, None);
    let last = submit(&mut c, "last", &[], None, None);
    let mut transitions: Vec<Transition> = Vec::new();
    c.advance(minutes(0), &mut transitions);
    assert_eq!(state(&c, next), Some(JobState::ChunkWaiting));
    c.control(
        minutes(1),
        runner,
        &mcfed_protocol::JobAction::Stop,
        &mut transitions,
    )
    .expect("stopped");
    assert_eq!(state(&c, runner), Some(JobState::UserSuspended));
    assert_eq!(state(&c, next), Some(JobState::ChunkWaiting));
    c.control(
        minutes(2),
        runner,
        &mcfed_protocol::JobAction::Kill,
        &mut transitions,
    )
    .expect("killed");
    assert_eq!(state(&c, next), Some(JobState::Running));
    assert_eq!(state(&c, last), Some(JobState::ChunkWaiting));
    assert_eq!(c.audit(), Ok(()));
    c.advance(minutes(12), &mut transitions);
    assert_eq!(state(&c, last), Some(JobState::Running));
    assert_eq!(c.audit(), Ok(()));
}

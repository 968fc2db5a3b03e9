//! The scheduling policies of seeds 000 (queue-based fairshare), 002
//! (user-based fairshare), 003 (preemption and job slot counting) and the
//! limits, each against a small cluster. Every test audits the cluster's
//! books after every step. The helpers here build the clusters; each
//! policy's tests are in a module of their own.

use std::sync::Arc;
use std::time::Duration;

use mcfed_cluster::fairshare::{AdjustmentInput, FairshareAdjustment};
use mcfed_cluster::{
    Cluster, ClusterConfig, ConfigLocation, HostConfig, HostSelection, JobId, JobOrigin, JobState,
    PendingReason, QueueConfig, SlotPoolConfig, SubmitError, Transition, UserGroupConfig,
    UserLimitConfig,
};
use mcfed_protocol::{
    ClusterName, JobEvent, JobForward, JobSpec, QueueName, RejectReason, SimTime,
};

fn name(text: &str) -> QueueName {
    QueueName::new(text).expect("valid")
}

fn hosts(count: usize, slots: u32) -> Vec<HostConfig> {
    (1..=count)
        .map(|n| HostConfig::new(format!("h{n}"), slots))
        .collect()
}

fn queue(text: &str, priority: u32) -> QueueConfig {
    let mut queue = QueueConfig::new(name(text));
    queue.priority = priority;
    queue
}

fn pooled(text: &str, priority: u32, pool: &str, share: u32) -> QueueConfig {
    let mut queue = queue(text, priority);
    queue.slot_pool = Some(SlotPoolConfig {
        pool: pool.into(),
        share,
        max_slots: None,
        use_priority: None,
    });
    queue
}

fn config(hosts: Vec<HostConfig>, queues: Vec<QueueConfig>) -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("C").expect("valid"));
    config.hosts = hosts;
    config.queues = queues;
    config
}

fn cluster(hosts: Vec<HostConfig>, queues: Vec<QueueConfig>) -> Cluster {
    Cluster::new(config(hosts, queues)).expect("valid configuration")
}

fn minutes(m: u64) -> SimTime {
    SimTime::from_secs(m * 60)
}

fn spec(user: &str, slots: u32, run_minutes: u64) -> JobSpec {
    let mut spec = JobSpec::simple("j", user, Duration::from_secs(run_minutes * 60));
    spec.slots = slots;
    spec
}

fn submit_at(cluster: &mut Cluster, at: SimTime, queue: &str, spec: JobSpec) -> JobId {
    cluster
        .submit(at, queue, spec, JobOrigin::Local)
        .expect("accepted")
}

fn submit(cluster: &mut Cluster, queue: &str, user: &str, slots: u32, run_minutes: u64) -> JobId {
    submit_at(
        cluster,
        SimTime::ZERO,
        queue,
        spec(user, slots, run_minutes),
    )
}

fn advance(cluster: &mut Cluster, at: SimTime) -> Vec<Transition> {
    let mut transitions = Vec::new();
    cluster.advance(at, &mut transitions);
    cluster.audit().expect("consistent books");
    transitions
}

fn state(cluster: &Cluster, id: JobId) -> Option<JobState> {
    cluster.job(id).map(|job| job.state)
}

fn running_slots(cluster: &Cluster, queue: &str) -> u32 {
    let index = cluster.queue_index(queue).expect("queue");
    cluster.queue_slot_usage(index).0
}

fn reason(cluster: &Cluster, id: JobId) -> PendingReason {
    cluster.pending_reason(cluster.job(id).expect("pending job"))
}

fn preempted(transitions: &[Transition], victim: JobId) -> Option<(JobEvent, JobId)> {
    transitions
        .iter()
        .find(|t| t.job == victim && t.preempted_by.is_some())
        .and_then(|t| t.preempted_by.map(|by| (t.event, by)))
}

mod fairshare;
mod leaving;
mod limits;
mod pools;
mod preemption;
mod reservations;

fn fairshare_queue(text: &str, shares: &str) -> QueueConfig {
    let mut queue = queue(text, 10);
    queue.fairshare = Some(shares.parse().expect("valid USER_SHARES"));
    queue
}

fn with_users(
    hosts: Vec<HostConfig>,
    queues: Vec<QueueConfig>,
    users: Vec<UserLimitConfig>,
    groups: Vec<UserGroupConfig>,
    preempt_for: &str,
) -> Cluster {
    let mut config = config(hosts, queues);
    config.users = users;
    config.user_groups = groups;
    config.params.preempt_for = preempt_for.parse().expect("valid PREEMPT_FOR");
    Cluster::new(config).expect("valid")
}

fn limit(name: &str, max_jobs: Option<u32>, per_processor: Option<f64>) -> UserLimitConfig {
    UserLimitConfig {
        name: name.into(),
        max_jobs,
        slots_per_processor: per_processor,
    }
}

fn preemptive(text: &str, priority: u32) -> QueueConfig {
    let mut q = queue(text, priority);
    q.preemption = "PREEMPTIVE".parse().expect("valid");
    q
}

//! What the federation's cost examples share: a one-slot cluster holding
//! N jobs of 100 hours (one running, the rest pending: the held-jobs
//! benchmark's shape, built in-process).

// Each example uses a part of it.
#![allow(dead_code)]

use std::time::Duration;

use mcfed_cluster::{ClusterConfig, HostConfig, QueueConfig};
use mcfed_federation::{Effects, Member, MemberSpec};
use mcfed_protocol::{ClusterName, JobSpec, QueueName, SimTime};

/// The cluster: `Held`, one one-slot host, queue `normal`.
pub(crate) fn config() -> ClusterConfig {
    let mut config = ClusterConfig::new(ClusterName::new("Held").expect("valid"));
    config.hosts = vec![HostConfig::new("h", 1)];
    config.queues = vec![QueueConfig::new(QueueName::new("normal").expect("valid"))];
    config
}

/// A member of `config` alone: no forwarder, no peers, no jobs.
pub(crate) fn spec(config: &ClusterConfig) -> MemberSpec<'_> {
    MemberSpec {
        config,
        forwarder: None,
        subscribers: &[],
        collectors: &[],
        initial_jobs: &[],
    }
}

/// A member of `config` holding `jobs` jobs of 100 hours; `journaled`:
/// keeping its history and a journal (taken as it grows, as a cluster
/// process writes it), as a cluster process with `--state` does.
pub(crate) fn held(config: &ClusterConfig, jobs: usize, journaled: bool) -> Member {
    let (mut member, _) = Member::build(spec(config)).expect("builds");
    if journaled {
        member.keep_history(Duration::from_secs(3600));
        member.enable_journal();
    }
    let mut effects = Effects::default();
    for n in 0..jobs {
        let job = JobSpec::simple(format!("held{n}"), "root", Duration::from_secs(360_000));
        member
            .submit(SimTime::ZERO, "normal", job, &mut effects)
            .expect("accepted");
        if n % 10_000 == 0 {
            member.step(SimTime::ZERO, &mut effects);
            effects.clear();
            member.take_journal();
        }
    }
    member.step(SimTime::ZERO, &mut effects);
    member.take_journal();
    member
}

//! A validated scenario: typed configurations ready to build clusters from,
//! the submissions in time order, and the expectations to check.

use std::time::Duration;

use mcfed_cluster::ClusterConfig;
use mcfed_forwarder::ForwarderConfig;
use mcfed_protocol::{ClusterName, SimTime};

use crate::locate::Problem;

/// A scenario ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its title.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Seed for anything random.
    pub seed: u64,
    /// When the run stops (when it does not drain).
    pub end: SimTime,
    /// Whether the run goes on until nothing is left to do (`end =
    /// "drain"`, the default with a workload).
    pub drain: bool,
    /// The clusters.
    pub clusters: Vec<ClusterSpec>,
    /// Submissions during the run, in time order.
    pub submissions: Vec<Submission>,
    /// Workloads read from trace files during the run (`[[workload]]`).
    pub workloads: Vec<mcfed_trace::WorkloadSpec>,
    /// Job control commands given during the run (`[[action]]`), in time
    /// order.
    pub actions: Vec<Action>,
    /// Expected outcomes.
    pub expectations: Vec<Expectation>,
    /// Faults to inject (`[chaos]`), if any.
    pub chaos: Option<mcfed_chaos::ChaosConfig>,
    /// Settings the clusters accept with a warning, located in the file.
    pub warnings: Vec<Problem>,
    /// What it holds once built, and about how much memory that takes.
    pub footprint: crate::validate::Footprint,
}

impl Scenario {
    /// The longest counter update interval of the federation (zero when no
    /// cluster sends counters): a draining run waits that long for a
    /// forwarder holding jobs before it counts the run as drained.
    pub fn longest_update_interval(&self) -> Duration {
        self.clusters
            .iter()
            .filter_map(|spec| spec.config.update_interval)
            .max()
            .unwrap_or_default()
    }

    /// How often slot usage is sampled: the shortest update interval of
    /// the federation, or [`crate::validate::QUIET_INTERVAL`] when no
    /// cluster sends counters.
    pub fn sample_interval(&self) -> Duration {
        self.clusters
            .iter()
            .filter_map(|spec| spec.config.update_interval)
            .min()
            .unwrap_or(crate::validate::QUIET_INTERVAL)
    }

    /// Whether runs of this scenario should compare decisions with the
    /// oracle: it has a `[chaos]` table, or expects something of stale
    /// decisions.
    pub fn wants_oracle(&self) -> bool {
        self.chaos.is_some()
            || self.expectations.iter().any(|expectation| {
                matches!(
                    &expectation.kind,
                    ExpectKind::Metric(bounds) if bounds.metric == Metric::StaleDecisions
                )
            })
    }

    /// The times at which expectations look at the clusters, sorted, without
    /// repeats.
    pub fn probe_times(&self) -> Vec<SimTime> {
        let mut times: Vec<SimTime> = self
            .expectations
            .iter()
            .filter_map(|expectation| expectation.kind.at())
            .collect();
        times.sort_unstable();
        times.dedup();
        times
    }
}

/// One cluster of a scenario.
#[derive(Clone, Debug)]
pub struct ClusterSpec {
    /// Hosts, queues and MC_PLUGIN_UPDATE_INTERVAL.
    pub config: ClusterConfig,
    /// Its submission side, when it has send queues.
    pub forwarder: Option<ForwarderConfig>,
    /// Submission clusters that forward to it.
    pub subscribers: Vec<ClusterName>,
    /// Those of them that collect its counters (their
    /// MC_PLUGIN_SCHEDULE_ENHANCE is set).
    pub collectors: Vec<ClusterName>,
    /// Jobs present at start.
    pub initial_jobs: Vec<InitialJobs>,
    /// Where its process listens (`host:port`), if the scenario says.
    pub address: Option<String>,
}

pub use mcfed_federation::InitialJobs;

impl ClusterSpec {
    /// What its federation member is built from, owned (a cluster
    /// process keeps it).
    pub fn member_config(&self) -> mcfed_federation::MemberConfig {
        mcfed_federation::MemberConfig {
            cluster: self.config.clone(),
            forwarder: self.forwarder.clone(),
            subscribers: self.subscribers.clone(),
            collectors: self.collectors.clone(),
        }
    }

    /// What its federation member is built from.
    pub fn member_spec(&self) -> mcfed_federation::MemberSpec<'_> {
        mcfed_federation::MemberSpec {
            config: &self.config,
            forwarder: self.forwarder.as_ref(),
            subscribers: &self.subscribers,
            collectors: &self.collectors,
            initial_jobs: &self.initial_jobs,
        }
    }
}

/// A job control command, or a host failure, given during the run
/// (`[[action]]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// When.
    pub at: SimTime,
    /// At which cluster.
    pub cluster: ClusterName,
    /// The job, by name; for a host action, the host.
    pub job: String,
    /// What is asked.
    pub action: ActionKind,
    /// Where it was written (`action[0]`).
    pub origin: String,
}

/// What an `[[action]]` asks.
#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    /// A job control command on the job [`Action::job`] names.
    Job(mcfed_protocol::JobAction),
    /// Host [`Action::job`] fails or recovers.
    Host(mcfed_cluster::HostEvent),
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActionKind::Job(action) => action.fmt(f),
            ActionKind::Host(event) => event.fmt(f),
        }
    }
}

pub use mcfed_trace::Submission;

// The expectations' types are `crate::expect`'s, one file per kind.
pub use crate::expect::{ExpectKind, Expectation, Metric, QueueFigures};

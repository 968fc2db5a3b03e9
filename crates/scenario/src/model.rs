//! A validated scenario: typed configurations ready to build clusters from,
//! the submissions in time order, and the expectations to check.

use mcfed_cluster::{ClusterConfig, JobState};
use mcfed_forwarder::ForwarderConfig;
use mcfed_protocol::{ClusterName, JobSpec, QueueRef, SimTime};

/// A scenario ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its title.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Seed for anything random.
    pub seed: u64,
    /// When the run stops.
    pub end: SimTime,
    /// The clusters.
    pub clusters: Vec<ClusterSpec>,
    /// Submissions during the run, in time order.
    pub submissions: Vec<Submission>,
    /// Expected outcomes.
    pub expectations: Vec<Expectation>,
}

/// One cluster of a scenario.
#[derive(Clone, Debug)]
pub struct ClusterSpec {
    /// Hosts, queues and MC_PLUGIN_UPDATE_INTERVAL.
    pub config: ClusterConfig,
    /// Its submission side, when it has send queues.
    pub forwarder: Option<ForwarderConfig>,
    /// Submission clusters that collect its counters.
    pub subscribers: Vec<ClusterName>,
    /// Jobs present at start.
    pub initial_jobs: Vec<InitialJobs>,
    /// Where its process listens (`host:port`), if the scenario says.
    pub address: Option<String>,
}

/// A group of alike jobs present at start.
#[derive(Clone, Debug)]
pub struct InitialJobs {
    /// The queue.
    pub queue: String,
    /// The jobs.
    pub jobs: Vec<JobSpec>,
}

/// A job submitted during the run.
#[derive(Clone, Debug)]
pub struct Submission {
    /// When.
    pub at: SimTime,
    /// To which cluster.
    pub cluster: ClusterName,
    /// To which queue.
    pub queue: String,
    /// Whether the queue is a send queue (the job goes to the forwarder).
    pub forwarded: bool,
    /// The job.
    pub spec: JobSpec,
}

/// What an expectation checks.
#[derive(Clone, Debug, PartialEq)]
pub enum ExpectKind {
    /// The job's first forward goes to `target`.
    ForwardedTo {
        /// The job's name.
        job: String,
        /// The expected `queue@cluster`.
        target: QueueRef,
    },
    /// The job's first decision leaves it pending at its submission cluster.
    Pends {
        /// The job's name.
        job: String,
    },
    /// After the first dispatch pass, the jobs of an initial group are all in
    /// `state`.
    InitialState {
        /// The cluster.
        cluster: ClusterName,
        /// Index of the group in the cluster's initial jobs.
        group: usize,
        /// The expected state.
        state: JobState,
    },
}

/// An expected outcome, with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// What it checks.
    pub kind: ExpectKind,
    /// If set, the decision's reason must contain this.
    pub reason_contains: Option<String>,
    /// Where it was written (`expect[2]`, `cluster[1].job[0].state`).
    pub origin: String,
}

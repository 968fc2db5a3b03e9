//! Building a member at time zero: its scheduler with the jobs present at
//! start submitted and dispatched, and its forwarder.

use mcfed_cluster::{Cluster, ClusterConfig, ClusterNode, JobId, JobState};
use mcfed_forwarder::{ForwarderConfig, ForwarderNode};
use mcfed_protocol::{ClusterName, Hello, JobSpec, SimTime};

use crate::effects::SubmissionNote;
use crate::member::{Member, Route, Submitted};

/// Why a member could not be built (a scenario's validation normally
/// catches all of these first).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The cluster's configuration was refused.
    #[error("cluster `{cluster}`: {source}")]
    Config {
        /// The cluster.
        cluster: ClusterName,
        /// Why.
        #[source]
        source: mcfed_cluster::ConfigError,
    },
    /// A job present at start was refused.
    #[error("cluster `{cluster}`: job `{job}` present at start: {source}")]
    InitialJob {
        /// The cluster.
        cluster: ClusterName,
        /// The job.
        job: String,
        /// Why.
        #[source]
        source: mcfed_cluster::SubmitError,
    },
}

/// A group of alike jobs present at start.
#[derive(Clone, Debug)]
pub struct InitialJobs {
    /// The queue.
    pub queue: String,
    /// The jobs.
    pub jobs: Vec<JobSpec>,
}

/// Everything a member is built from.
#[derive(Clone, Copy, Debug)]
pub struct MemberSpec<'a> {
    /// Hosts, queues and MC_PLUGIN_UPDATE_INTERVAL.
    pub config: &'a ClusterConfig,
    /// Its submission side, when it has send queues.
    pub forwarder: Option<&'a ForwarderConfig>,
    /// Submission clusters that forward to it.
    pub subscribers: &'a [ClusterName],
    /// Those of them that collect its counters (their
    /// MC_PLUGIN_SCHEDULE_ENHANCE is set).
    pub collectors: &'a [ClusterName],
    /// Jobs present at start.
    pub initial_jobs: &'a [InitialJobs],
}

/// What a member was built from, kept for what it says about itself
/// (`bqueues`' MAX_RSCHED_TIME, `bparams`, `bclusters`): its cluster's
/// configuration, its forwarder's, and the submission clusters that send
/// to it and collect its counters.
#[derive(Clone, Debug)]
pub struct MemberConfig {
    /// Hosts, queues, lsb.params.
    pub cluster: ClusterConfig,
    /// Its submission side, when it has send queues.
    pub forwarder: Option<ForwarderConfig>,
    /// Submission clusters that forward to it.
    pub subscribers: Vec<ClusterName>,
    /// Those of them that collect its counters.
    pub collectors: Vec<ClusterName>,
}

impl MemberConfig {
    /// The spec of a member built from this configuration with
    /// `initial_jobs` present at start.
    pub fn spec<'a>(&'a self, initial_jobs: &'a [InitialJobs]) -> MemberSpec<'a> {
        MemberSpec {
            config: &self.cluster,
            forwarder: self.forwarder.as_ref(),
            subscribers: &self.subscribers,
            collectors: &self.collectors,
            initial_jobs,
        }
    }
}

impl MemberSpec<'_> {
    /// Where a job submitted to `queue` goes: to the forwarder for a send
    /// queue, to the scheduler otherwise (what [`Member::route`] says of the
    /// built member).
    pub fn route(&self, queue: &str) -> Route {
        let send = self
            .forwarder
            .is_some_and(|forwarder| forwarder.send_queues.iter().any(|q| q.name == queue));
        if send { Route::Forward } else { Route::Local }
    }
}

/// The states of an initial job group after the first dispatch pass.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GroupState {
    /// Jobs running.
    pub running: usize,
    /// Jobs pending.
    pub pending: usize,
    /// Jobs in another state.
    pub other: usize,
}

impl GroupState {
    /// How many are in `state`.
    pub fn count(&self, state: JobState) -> usize {
        match state {
            JobState::Running => self.running,
            JobState::Pending => self.pending,
            _ => self.other,
        }
    }

    /// Jobs in the group.
    pub fn total(&self) -> usize {
        self.running + self.pending + self.other
    }

    fn of(node: &ClusterNode, ids: &[JobId]) -> GroupState {
        let mut state = GroupState::default();
        for id in ids {
            match node.cluster().job(*id).map(|job| job.state) {
                Some(JobState::Running) => state.running += 1,
                Some(JobState::Pending) => state.pending += 1,
                _ => state.other += 1,
            }
        }
        state
    }
}

impl Member {
    /// Builds a member at time zero, as every driver starts it: its
    /// scheduler with the jobs present at start submitted and dispatched,
    /// its forwarder, and the states of its initial job groups.
    pub fn build(spec: MemberSpec<'_>) -> Result<(Member, Vec<GroupState>), BuildError> {
        let name = spec.config.name.clone();
        let cluster = Cluster::new(spec.config.clone()).map_err(|source| BuildError::Config {
            cluster: name.clone(),
            source,
        })?;
        let mut node = ClusterNode::new(cluster, spec.subscribers.iter().cloned())
            .collected_by(spec.collectors);
        let mut groups: Vec<Vec<JobId>> = Vec::with_capacity(spec.initial_jobs.len());
        let mut submissions = Vec::new();
        for group in spec.initial_jobs {
            let mut ids = Vec::with_capacity(group.jobs.len());
            let queue: std::sync::Arc<str> = group.queue.as_str().into();
            for job in &group.jobs {
                let id = node
                    .submit(SimTime::ZERO, &group.queue, job.clone())
                    .map_err(|source| BuildError::InitialJob {
                        cluster: name.clone(),
                        job: job.name.to_string(),
                        source,
                    })?;
                submissions.push(SubmissionNote {
                    name: std::sync::Arc::clone(&job.name),
                    queue: std::sync::Arc::clone(&queue),
                    bundled: true,
                    outcome: Ok(Submitted {
                        job_id: id.0,
                        forwarded: false,
                    }),
                });
                ids.push(id);
            }
            groups.push(ids);
        }
        let mut start = Vec::new();
        node.advance(SimTime::ZERO, &mut Vec::new(), &mut start);
        let states = groups
            .iter()
            .map(|ids| GroupState::of(&node, ids))
            .collect();
        let forwarder = spec.forwarder.cloned().map(ForwarderNode::new);
        let mut member = Member::new(node, forwarder);
        member.bundled = groups.iter().map(|ids| ids.len() as u64).sum();
        member.start = start;
        member.start_submissions = submissions;
        member.config = Some(std::sync::Arc::new(MemberConfig {
            cluster: spec.config.clone(),
            forwarder: spec.forwarder.cloned(),
            subscribers: spec.subscribers.to_vec(),
            collectors: spec.collectors.to_vec(),
        }));
        Ok((member, states))
    }
}

/// Connects in-process `members` at time zero: every submission cluster
/// meets each execution cluster it sends to ([`Member::meet`]), learning
/// the static facts of its receive queues as a cluster process learns
/// them from a hello.
pub fn connect_in_process(members: &mut [Member]) {
    let hellos: Vec<Hello> = members.iter().map(Member::hello).collect();
    for member in members.iter_mut() {
        let remotes = member.remote_clusters();
        for hello in &hellos {
            if remotes.contains(&hello.cluster) {
                member.meet(SimTime::ZERO, &hello.cluster, hello);
            }
        }
    }
}

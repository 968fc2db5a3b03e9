//! Building a scenario's clusters: one [`ClusterNode`] per cluster and one
//! [`ForwarderNode`] per submission cluster, with the jobs present at start
//! submitted and dispatched at time zero. Both engines start from this.

use mcfed_cluster::{Cluster, ClusterNode, JobId, JobState, SubmitError};
use mcfed_forwarder::ForwarderNode;
use mcfed_protocol::{ClusterName, SimTime};
use rustc_hash::FxHashMap;

use crate::model::{ClusterSpec, Scenario};

/// Why a scenario's clusters could not be built (validation normally
/// catches all of these first).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A cluster's configuration was refused.
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
        source: SubmitError,
    },
}

/// One cluster of a built federation.
#[derive(Debug)]
pub struct Member {
    /// The execution side.
    pub node: ClusterNode,
    /// The submission side, for clusters with send queues.
    pub forwarder: Option<ForwarderNode>,
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
}

/// Every cluster of a scenario, ready to run.
#[derive(Debug)]
pub struct Federation {
    /// The clusters, in scenario order.
    pub members: Vec<Member>,
    /// Index of each cluster by name.
    pub index: FxHashMap<ClusterName, usize>,
    /// Per cluster, per initial group, the states after the first pass.
    pub initial_states: Vec<Vec<GroupState>>,
}

/// Builds the federation of `scenario` at time zero.
pub fn build(scenario: &Scenario) -> Result<Federation, BuildError> {
    let mut members = Vec::with_capacity(scenario.clusters.len());
    let mut index = FxHashMap::default();
    let mut initial_states = Vec::with_capacity(scenario.clusters.len());
    for spec in &scenario.clusters {
        let (member, states) = build_member(spec)?;
        index.insert(spec.config.name.clone(), members.len());
        members.push(member);
        initial_states.push(states);
    }
    Ok(Federation {
        members,
        index,
        initial_states,
    })
}

/// Builds one cluster of a scenario at time zero, as a cluster process
/// does: its node with the jobs present at start submitted and dispatched,
/// its forwarder, and the states of its initial job groups.
pub fn build_member(spec: &ClusterSpec) -> Result<(Member, Vec<GroupState>), BuildError> {
    let name = spec.config.name.clone();
    let cluster = Cluster::new(spec.config.clone()).map_err(|source| BuildError::Config {
        cluster: name.clone(),
        source,
    })?;
    let mut node = ClusterNode::new(cluster, spec.subscribers.iter().cloned());
    let mut groups: Vec<Vec<JobId>> = Vec::new();
    for group in &spec.initial_jobs {
        let mut ids = Vec::with_capacity(group.jobs.len());
        for job in &group.jobs {
            let id = node
                .submit(SimTime::ZERO, &group.queue, job.clone())
                .map_err(|source| BuildError::InitialJob {
                    cluster: name.clone(),
                    job: job.name.to_string(),
                    source,
                })?;
            ids.push(id);
        }
        groups.push(ids);
    }
    node.advance(SimTime::ZERO, &mut Vec::new(), &mut Vec::new());
    let states = groups
        .iter()
        .map(|ids| {
            let mut state = GroupState::default();
            for id in ids {
                match node.cluster().job(*id).map(|job| job.state) {
                    Some(JobState::Running) => state.running += 1,
                    Some(JobState::Pending) => state.pending += 1,
                    _ => state.other += 1,
                }
            }
            state
        })
        .collect();
    let forwarder = spec.forwarder.clone().map(ForwarderNode::new);
    Ok((Member { node, forwarder }, states))
}

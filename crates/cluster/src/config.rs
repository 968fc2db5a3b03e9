//! A cluster's configuration: hosts (lsb.hosts), queues (lsb.queues) and the
//! MultiCluster parameters of its queues, already typed.
//!
//! Reading files is not done here: the scenario layer turns TOML into these
//! structs, and [`crate::Cluster::new`] checks them. A [`ConfigError`] names
//! the host or queue and the parameter at fault so the scenario layer can
//! point at the line.

use std::time::Duration;

use mcfed_protocol::{ClusterName, QueueName, QueueRef};

use crate::preemption::Preemption;

/// Default IMPT_JOBBKLG: how many imported jobs may pend in a receive queue.
pub const DEFAULT_IMPT_JOBBKLG: u32 = 50;

/// Default queue PRIORITY in LSF.
pub const DEFAULT_PRIORITY: u32 = 1;

/// One host (lsb.hosts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostConfig {
    /// The host's name, unique in the cluster.
    pub name: String,
    /// MXJ: job slots on the host.
    pub max_slots: u32,
    /// Boolean resources the host has.
    pub resources: Vec<String>,
    /// Closed by the administrator: its slots do not count and no job starts
    /// on it.
    pub closed: bool,
}

/// Which hosts a queue dispatches to (HOSTS).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum HostSelection {
    /// Every host of the cluster (`all`).
    #[default]
    All,
    /// The named hosts.
    Listed(Vec<String>),
}

/// Clusters a receive queue accepts forwarded jobs from (RCVJOBS_FROM).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReceiveFrom {
    /// `allclusters`.
    All,
    /// The named clusters.
    Listed(Vec<ClusterName>),
}

impl ReceiveFrom {
    /// Whether jobs from `cluster` are accepted.
    pub fn accepts(&self, cluster: &ClusterName) -> bool {
        match self {
            ReceiveFrom::All => true,
            ReceiveFrom::Listed(clusters) => clusters.contains(cluster),
        }
    }
}

/// One queue (lsb.queues).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueConfig {
    /// The queue's name, unique in the cluster.
    pub name: QueueName,
    /// PRIORITY: higher dispatches first.
    pub priority: u32,
    /// HOSTS.
    pub hosts: HostSelection,
    /// PREEMPTION.
    pub preemption: Preemption,
    /// QJOB_LIMIT: slots the queue's running and suspended jobs may hold.
    pub job_limit: Option<u32>,
    /// RCVJOBS_FROM: makes the queue a receive queue.
    pub receive_from: Option<ReceiveFrom>,
    /// IMPT_JOBBKLG for a receive queue (`None` is `infinit`).
    pub impt_jobbklg: Option<u32>,
    /// SNDJOBS_TO: makes the queue a send queue, in the order written.
    pub send_to: Vec<QueueRef>,
}

impl QueueConfig {
    /// A queue named `name` with LSF's defaults: priority 1, all hosts, no
    /// preemption, no limits, neither sending nor receiving.
    pub fn new(name: QueueName) -> Self {
        QueueConfig {
            name,
            priority: DEFAULT_PRIORITY,
            hosts: HostSelection::All,
            preemption: Preemption::default(),
            job_limit: None,
            receive_from: None,
            impt_jobbklg: Some(DEFAULT_IMPT_JOBBKLG),
            send_to: Vec::new(),
        }
    }
}

/// A whole cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterConfig {
    /// The cluster's name.
    pub name: ClusterName,
    /// Its hosts.
    pub hosts: Vec<HostConfig>,
    /// Its queues.
    pub queues: Vec<QueueConfig>,
    /// MC_PLUGIN_UPDATE_INTERVAL: how often it sends counters to the
    /// submission clusters that forward to it (`None`: never).
    pub update_interval: Option<Duration>,
}

/// Where in a cluster's configuration a problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigLocation {
    /// A cluster-wide parameter.
    Cluster {
        /// The parameter's name.
        field: &'static str,
    },
    /// A parameter of the host at this index in [`ClusterConfig::hosts`].
    Host {
        /// Index of the host.
        index: usize,
        /// The parameter's name.
        field: &'static str,
    },
    /// A parameter of the queue at this index in [`ClusterConfig::queues`].
    Queue {
        /// Index of the queue.
        index: usize,
        /// The parameter's name.
        field: &'static str,
    },
}

/// A configuration the cluster refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    /// Where the problem is.
    pub location: ConfigLocation,
    /// What is wrong, in an administrator's words.
    pub message: String,
}

impl ConfigError {
    pub(crate) fn queue(index: usize, field: &'static str, message: impl Into<String>) -> Self {
        ConfigError {
            location: ConfigLocation::Queue { index, field },
            message: message.into(),
        }
    }

    pub(crate) fn host(index: usize, field: &'static str, message: impl Into<String>) -> Self {
        ConfigError {
            location: ConfigLocation::Host { index, field },
            message: message.into(),
        }
    }
}

//! One mcfed cluster: its scheduler core and the shells around it.
//!
//! - [`Cluster`] (in `scheduler`) is the sans-IO scheduling core: hosts,
//!   queues, jobs, dispatch, preemption, and the counters it publishes.
//! - [`ClusterNode`] (in `node`) is the cluster's protocol endpoint, still
//!   sans-IO: it takes forwarded jobs, answers them, reports job state to
//!   submission clusters and takes counter snapshots.
//! - [`ClusterActor`] (in `actor`) is the actix actor around a node.

pub mod actor;
pub mod config;
mod counters;
mod hostset;
pub mod job;
pub mod node;
pub mod preemption;
pub mod scheduler;

pub use actor::ClusterActor;
pub use config::{
    ClusterConfig, ConfigError, ConfigLocation, DEFAULT_IMPT_JOBBKLG, DEFAULT_PRIORITY, HostConfig,
    HostSelection, QueueConfig, ReceiveFrom,
};
pub use job::{Job, JobId, JobOrigin, JobState, PendingReason, Placement};
pub use node::ClusterNode;
pub use preemption::{Preemption, PreemptionParseError};
pub use scheduler::{Cluster, SubmitError, Transition};

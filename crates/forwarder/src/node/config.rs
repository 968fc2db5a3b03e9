//! The submission side's configuration (send queues, mode, MAX_FORWARDS)
//! and why a job could not be submitted.

use std::time::Duration;

use mcfed_protocol::{ClusterName, QueueName, QueueRef};

use crate::mode::ScheduleMode;

/// Default cap on how many times one job is forwarded before it is left
/// pending at the submission cluster (mcfed's own parameter, MAX_FORWARDS).
pub const DEFAULT_MAX_FORWARDS: u32 = 8;

/// A send queue: a local queue with SNDJOBS_TO.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendQueueConfig {
    /// The local queue's name.
    pub name: QueueName,
    /// SNDJOBS_TO, in order.
    pub send_to: Vec<QueueRef>,
    /// MAX_RSCHED_TIME: how long a job forwarded from this queue may pend at
    /// the execution cluster before it is recalled (`None`: never).
    pub max_rsched_time: Option<Duration>,
    /// The queue has FAIRSHARE: its waiting jobs are decided in the order
    /// of their users' dynamic priorities, which count the slots of each
    /// user's jobs forwarded and not finished (seed 002's fwd_job_slots).
    pub fairshare: bool,
    /// APS_PRIORITY: the send queue whose APS_PRIORITY orders this one's
    /// waiting jobs — itself, or the send queue whose QUEUE_GROUP names it
    /// (`None`: no APS). Its waiting jobs are decided in the order of
    /// their APS values, which the scheduler computes
    /// ([`crate::SendOrder::aps_value`]).
    pub aps_group: Option<QueueName>,
}

/// The submission side's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwarderConfig {
    /// The submission cluster.
    pub cluster: ClusterName,
    /// MC_PLUGIN_SCHEDULE_ENHANCE.
    pub mode: ScheduleMode,
    /// Its send queues.
    pub send_queues: Vec<SendQueueConfig>,
    /// How many times one job may be forwarded (MAX_FORWARDS).
    pub max_forwards: u32,
    /// When a remote cluster counts as unreachable, and when its jobs that
    /// have not started come back.
    pub reachability: Reachability,
}

/// When a remote cluster counts as unreachable, and what becomes of the
/// jobs forwarded there (mcfed's own parameters; LSF shows such jobs'
/// pending reason as PEND_JOB_RCLUS_UNREACH and running ones as UNKWN).
///
/// A remote cluster is *unreachable* while its link is known to be down,
/// or once its last counter update is older than its `stale_after` (for a
/// cluster that has sent none, counted from when the forwarder started or
/// was restored). Its queues are then no candidates. Once it has been
/// unreachable for `reclaim_after`, the jobs forwarded there that had not
/// started come back and are decided again; running ones are shown UNKWN
/// until it is heard from again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reachability {
    /// Per remote cluster, how old its last counter update may grow
    /// (MC_UNREACHABLE_UPDATES times its MC_PLUGIN_UPDATE_INTERVAL). A
    /// cluster not listed goes unreachable only with its link.
    pub stale_after: Vec<(ClusterName, Duration)>,
    /// How long a cluster stays unreachable before its jobs that have not
    /// started come back (MC_RECLAIM_TIME); `None`: never.
    pub reclaim_after: Option<Duration>,
}

/// MC_UNREACHABLE_UPDATES's default: a remote cluster whose last counter
/// update is older than this many of its update intervals is unreachable.
pub const DEFAULT_UNREACHABLE_UPDATES: u32 = 5;

/// MC_RECLAIM_TIME's default: how long a remote cluster stays unreachable
/// before the jobs forwarded there that had not started come back.
pub const DEFAULT_RECLAIM_TIME: Duration = Duration::from_secs(600);

/// Why a job could not be submitted to a send queue.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ForwardSubmitError {
    /// The queue is not a send queue of this cluster.
    #[error("`{0}` is not a send queue of this cluster")]
    NotASendQueue(String),
    /// The job asks for no slots.
    #[error("a job needs at least one slot")]
    NoSlots,
}

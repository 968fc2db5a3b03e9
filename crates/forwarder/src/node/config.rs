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
}

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

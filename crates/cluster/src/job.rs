//! Jobs as one cluster sees them: their state, where they run, and where
//! they came from.

use std::fmt;
use std::time::Duration;

use mcfed_protocol::{ClusterName, JobSpec, SimTime};

/// A job's id within its cluster (1, 2, 3, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u64);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Index of a queue in its cluster's configuration.
pub type QueueIndex = usize;
/// Index of a host in its cluster's configuration.
pub type HostIndex = usize;

/// Where a job came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOrigin {
    /// Submitted to this cluster.
    Local,
    /// Forwarded by a submission cluster.
    Forwarded {
        /// The submission cluster.
        from: ClusterName,
        /// The job's id there.
        source_job: u64,
    },
}

/// A job's state (as `bjobs` shows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    /// PEND: waiting to be dispatched.
    Pending,
    /// RUN.
    Running,
    /// SSUSP: suspended by preemption; keeps its hosts.
    Suspended,
    /// DONE.
    Done,
}

impl JobState {
    /// LSF's short name.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Pending => "PEND",
            JobState::Running => "RUN",
            JobState::Suspended => "SSUSP",
            JobState::Done => "DONE",
        }
    }
}

/// Why a pending job has not started, in LSF's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PendingReason {
    /// Not looked at by a dispatch pass yet.
    #[default]
    NewJob,
    /// The queue's QJOB_LIMIT is reached.
    QueueJobLimit,
    /// Not enough free slots on the queue's hosts.
    NotEnoughSlots,
    /// No host of the queue has the resources the job needs.
    NoHostWithResources,
}

impl PendingReason {
    /// The reason as `bjobs -p` would print it.
    pub fn describe(self) -> &'static str {
        match self {
            PendingReason::NewJob => "New job is waiting for scheduling",
            PendingReason::QueueJobLimit => "The queue has reached its job slot limit",
            PendingReason::NotEnoughSlots => "Not enough job slots on the queue's hosts",
            PendingReason::NoHostWithResources => "No host meets the job's resource requirements",
        }
    }
}

/// Slots a job holds on one host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The host.
    pub host: HostIndex,
    /// Slots on it.
    pub slots: u32,
}

/// One job in a cluster.
#[derive(Clone, Debug)]
pub struct Job {
    /// The job's id in this cluster.
    pub id: JobId,
    /// The queue it is in.
    pub queue: QueueIndex,
    /// What it asks for.
    pub spec: JobSpec,
    /// Where it came from.
    pub origin: JobOrigin,
    /// Its state.
    pub state: JobState,
    /// When it entered this cluster.
    pub submitted_at: SimTime,
    /// When it first started, if it has.
    pub started_at: Option<SimTime>,
    /// Run time still to go.
    pub remaining: Duration,
    /// When it last started or resumed (meaningful while running).
    pub running_since: SimTime,
    /// Where it runs or, when suspended, where it will resume.
    pub placement: Vec<Placement>,
    /// Why it pended when a dispatch pass last looked at it; read it with
    /// [`crate::Cluster::pending_reason`], which also covers jobs a pass
    /// did not reach.
    pub(crate) pending_reason: PendingReason,
    /// The dispatch pass that set `pending_reason`.
    pub(crate) reason_pass: u64,
    /// Order of arrival in its queue (first come, first served).
    pub(crate) arrival: u64,
    /// Bumped whenever the job stops running, so stale finish events are
    /// recognised.
    pub(crate) run_epoch: u32,
}

impl Job {
    /// The emulated time at which the job will finish if it keeps running.
    pub fn finish_time(&self) -> Option<SimTime> {
        (self.state == JobState::Running).then(|| self.running_since + self.remaining)
    }
}

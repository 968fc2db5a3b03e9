//! A job submitted to one of this cluster's send queues, and where it
//! stands ([`SourceState`]).

use mcfed_protocol::{ApsChange, JobSpec, SimTime};

use super::parked::Shape;
use crate::policy::{JobRequest, PendReason};
use crate::view::RemoteQueueId;

/// Where a job submitted here stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceState {
    /// Pending at the submission cluster.
    Waiting,
    /// Sent; no answer yet.
    Forwarded {
        /// The receive queue.
        to: RemoteQueueId,
        /// The forward's sequence number.
        forward_seq: u64,
    },
    /// Taken by the execution cluster, not started.
    Accepted {
        /// The receive queue.
        to: RemoteQueueId,
        /// Its id there.
        dest_job: u64,
    },
    /// Running remotely.
    Running {
        /// The receive queue.
        to: RemoteQueueId,
        /// Its id there.
        dest_job: u64,
    },
    /// Suspended remotely.
    Suspended {
        /// The receive queue.
        to: RemoteQueueId,
        /// Its id there.
        dest_job: u64,
    },
    /// Finished remotely.
    Done,
    /// Forwarded MAX_FORWARDS times; left pending here.
    GaveUp,
    /// Held here by `bstop` (PSUSP): not decided until `bresume`.
    Held,
    /// Stopped remotely by `bstop` (USUSP).
    Stopped {
        /// The receive queue.
        to: RemoteQueueId,
        /// Its id there.
        dest_job: u64,
    },
    /// Held remotely by `bstop` while pending there (PSUSP).
    HeldThere {
        /// The receive queue.
        to: RemoteQueueId,
        /// Its id there.
        dest_job: u64,
    },
}

impl SourceState {
    /// LSF's short name of the state, as `bjobs` shows it at the
    /// submission cluster.
    pub fn as_str(&self) -> &'static str {
        match self {
            SourceState::Running { .. } => "RUN",
            SourceState::Suspended { .. } => "SSUSP",
            SourceState::Stopped { .. } => "USUSP",
            SourceState::Held | SourceState::HeldThere { .. } => "PSUSP",
            SourceState::Done => "DONE",
            SourceState::Waiting
            | SourceState::GaveUp
            | SourceState::Forwarded { .. }
            | SourceState::Accepted { .. } => "PEND",
        }
    }
}

/// A job submitted to one of this cluster's send queues.
#[derive(Clone, Debug)]
pub struct SourceJob {
    /// Its id here.
    pub id: u64,
    /// What it asks for.
    pub spec: JobSpec,
    /// Index of its send queue.
    pub(super) send_queue: usize,
    pub(super) request: JobRequest,
    /// When it was submitted.
    pub submitted_at: SimTime,
    /// Where it stands.
    pub state: SourceState,
    /// How many times it has been forwarded.
    pub forwards: u32,
    /// Why it is being decided again, if it is.
    pub(super) note: Option<String>,
    /// The pend reason last recorded, to record only changes.
    pub(super) last_pend: Option<PendReason>,
    /// Whether it waits parked (in the group of its shape and `last_pend`).
    pub(super) parked: bool,
    /// Queues that refused it, with their cluster's generation then: each
    /// is left out of its decisions until that cluster's next update
    /// (`request.refused` lists the ones still standing).
    pub(super) refusals: Vec<(RemoteQueueId, u64)>,
    pub(super) waiting_key: u64,
    /// The sequence number of its current forward.
    pub(super) forward_seq: u64,
    /// When it was last forwarded.
    pub forwarded_at: SimTime,
    /// Whether its current forward has been recalled.
    pub(super) recalled: bool,
    /// The queues it was forwarded to, in order.
    pub previous_targets: Vec<RemoteQueueId>,
    /// A copy left at a cluster that was unreachable when the job was
    /// taken back, until it is known whether that copy started.
    pub left_behind: Option<LeftBehind>,
    /// The system or ADMIN value `bmod -aps` gave it while it waited here
    /// (never [`ApsChange::Clear`]): its send queue's APS order reads it;
    /// it does not travel with the job.
    pub aps: Option<ApsChange>,
}

/// A copy of a job left at a remote queue whose cluster was unreachable
/// when the job was taken back to be decided again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeftBehind {
    /// The queue.
    pub queue: RemoteQueueId,
    /// The forward that sent it there.
    pub forward_seq: u64,
    /// Its id there, if it had been accepted.
    pub dest_job: Option<u64>,
}

impl SourceJob {
    /// The remote queue the job is at (forwarded, accepted, running or
    /// suspended there), if any.
    pub fn remote_queue(&self) -> Option<RemoteQueueId> {
        match self.state {
            SourceState::Forwarded { to, .. }
            | SourceState::Accepted { to, .. }
            | SourceState::Running { to, .. }
            | SourceState::Suspended { to, .. }
            | SourceState::Stopped { to, .. }
            | SourceState::HeldThere { to, .. } => Some(to),
            SourceState::Waiting | SourceState::Done | SourceState::GaveUp | SourceState::Held => {
                None
            }
        }
    }

    /// The job's id at the execution cluster, once it has been accepted.
    pub fn dest_job(&self) -> Option<u64> {
        match self.state {
            SourceState::Accepted { dest_job, .. }
            | SourceState::Running { dest_job, .. }
            | SourceState::Suspended { dest_job, .. }
            | SourceState::Stopped { dest_job, .. }
            | SourceState::HeldThere { dest_job, .. } => Some(dest_job),
            _ => None,
        }
    }

    /// The send queue's index in the forwarder.
    pub fn send_queue_index(&self) -> usize {
        self.send_queue
    }

    /// Its shape, as the policy sees it.
    pub(super) fn shape(&self) -> Shape {
        (self.send_queue, self.request.clone())
    }

    /// The reason of its parked group: its last pend reason.
    pub(super) fn parked_reason(&self) -> PendReason {
        self.last_pend.clone().unwrap_or(PendReason::NoRemoteQueues)
    }

    /// Whether it waits here because no remote queue can ever take it as
    /// the federation stands (its last decision said so:
    /// [`PendReason::NoQueueCanTake`]).
    pub fn fits_nowhere(&self) -> bool {
        self.state == SourceState::Waiting && self.last_pend == Some(PendReason::NoQueueCanTake)
    }

    /// Why a job waiting at its submission cluster waits, as `bjobs -p`
    /// and a run's summary say it.
    pub fn waiting_reason(&self) -> &'static str {
        if self.fits_nowhere() {
            "No remote queue can take the job as the federation stands (too few slots in all, a resource or GPUs no eligible queue has)"
        } else {
            "Waiting at the submission cluster for a remote queue"
        }
    }
}

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
    /// USUSP: stopped by `bstop` while running; keeps its slots and hosts
    /// until `bresume`, `brequeue` or `bkill`.
    UserSuspended,
    /// PSUSP: held by `bstop` while pending; not dispatched until
    /// `bresume`.
    PendingSuspended,
    /// EXIT: killed (`bkill`).
    Exited,
    /// WAIT: dispatched into a chunk (CHUNK_JOB_SIZE); it runs on its
    /// chunk's slot once the jobs ahead of it in the chunk have run.
    ChunkWaiting,
}

impl JobState {
    /// LSF's short name.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Pending => "PEND",
            JobState::Running => "RUN",
            JobState::Suspended => "SSUSP",
            JobState::Done => "DONE",
            JobState::UserSuspended => "USUSP",
            JobState::PendingSuspended => "PSUSP",
            JobState::Exited => "EXIT",
            JobState::ChunkWaiting => "WAIT",
        }
    }

    /// The state LSF's short name `text` stands for.
    pub fn from_lsf(text: &str) -> Option<JobState> {
        [
            JobState::Pending,
            JobState::Running,
            JobState::Suspended,
            JobState::Done,
            JobState::UserSuspended,
            JobState::PendingSuspended,
            JobState::Exited,
            JobState::ChunkWaiting,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }

    /// Whether the job holds slots on its hosts' queues (RUN, SSUSP,
    /// USUSP).
    pub fn is_placed(self) -> bool {
        matches!(
            self,
            JobState::Running | JobState::Suspended | JobState::UserSuspended
        )
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
    /// The user's UJOB_LIMIT in the queue is reached.
    UserQueueJobLimit,
    /// The queue's HJOB_LIMIT is reached on the hosts with free slots.
    HostQueueJobLimit,
    /// The user's MAX_JOBS (lsb.users) is reached.
    UserJobLimit,
    /// The MAX_JOBS of one of the user's groups is reached.
    UserGroupJobLimit,
    /// The user's JL/P is reached on the hosts with free slots.
    UserProcessorLimit,
    /// The JL/P of one of the user's groups is reached on the hosts with
    /// free slots.
    UserGroupProcessorLimit,
    /// The hosts' JL/U is reached for the user on the hosts with free slots.
    HostUserLimit,
    /// The queue runs as many slots as it deserves in its slot pool.
    PoolShareUsed,
    /// The free slots are reserved for another job (SLOT_RESERVE).
    SlotsReserved,
    /// Not enough free slots on the queue's hosts.
    NotEnoughSlots,
    /// The hosts with free slots have too few free GPUs for the job.
    NotEnoughGpus,
    /// A Limit section of lsb.resources leaves no room for the job.
    ResourceLimit,
    /// No host of the queue has the resources the job needs.
    NoHostWithResources,
    /// The free slots are held by an advance reservation (`brsvadd`).
    AdvanceReserved,
    /// The advance reservation the job names is not active, or has no
    /// slot left for it.
    AdvanceReservationUnavailable,
    /// The advance reservation the job names does not exist: `brsvdel`
    /// deleted it (LSF leaves such jobs pending).
    AdvanceReservationMissing,
}

impl PendingReason {
    /// The reason as `bjobs -p` would print it.
    pub fn describe(self) -> &'static str {
        match self {
            PendingReason::NewJob => "New job is waiting for scheduling",
            PendingReason::QueueJobLimit => "The queue has reached its job slot limit",
            PendingReason::UserQueueJobLimit => {
                "The user has reached the per-user job slot limit of the queue"
            }
            PendingReason::HostQueueJobLimit => {
                "The queue's per-host job slot limit is reached on the hosts with free slots"
            }
            PendingReason::UserJobLimit => "The user has reached his/her job slot limit",
            PendingReason::UserGroupJobLimit => {
                "One of the user's groups has reached its job slot limit"
            }
            PendingReason::UserProcessorLimit => {
                "The user has reached the per-processor job slot limit of the hosts"
            }
            PendingReason::UserGroupProcessorLimit => {
                "One of the user's groups has reached its per-processor job slot limit"
            }
            PendingReason::HostUserLimit => {
                "The user has reached the per-user job slot limit of the hosts"
            }
            PendingReason::PoolShareUsed => {
                "The queue has used its share of the slot pool (queue-based fairshare)"
            }
            PendingReason::SlotsReserved => "The free job slots are reserved for another job",
            PendingReason::NotEnoughSlots => "Not enough job slots on the queue's hosts",
            PendingReason::NotEnoughGpus => {
                "Not enough free GPUs on the queue's hosts with free slots"
            }
            PendingReason::ResourceLimit => {
                "The job slot or job limit of a resource limit (lsb.resources) is reached"
            }
            PendingReason::NoHostWithResources => "No host meets the job's resource requirements",
            PendingReason::AdvanceReserved => {
                "The free job slots are held by an advance reservation"
            }
            PendingReason::AdvanceReservationUnavailable => {
                "The advance reservation the job names is not active, or has no free slot for it"
            }
            PendingReason::AdvanceReservationMissing => {
                "The advance reservation the job names has been deleted"
            }
        }
    }
}

/// A job's place in its queue's order: jobs of higher user priority come
/// first, then earlier arrivals. `priority` is the job's effective priority
/// (0 without MAX_USER_PRIORITY), `seq` its arrival number (below 2^48).
pub(crate) fn order_key(priority: u32, seq: u64) -> u64 {
    let rank = u64::from(u16::MAX) - u64::from(priority.min(u32::from(u16::MAX)));
    (rank << 48) | (seq & ARRIVAL_MASK)
}

/// The arrival number within an [`order_key`].
pub(crate) const ARRIVAL_MASK: u64 = (1 << 48) - 1;

/// Index of a user in its cluster (users are numbered as they first submit).
pub type UserId = u32;

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
    /// Its user, as numbered by the cluster.
    pub(crate) user: UserId,
    /// Its state.
    pub state: JobState,
    /// When it entered this cluster.
    pub submitted_at: SimTime,
    /// When it was first submitted anywhere: for a job forwarded here, at
    /// its submission cluster; otherwise `submitted_at`.
    pub first_submitted_at: SimTime,
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
    /// Its bucket in its queue's pending jobs, while it pends
    /// (`scheduler::pending`).
    pub(crate) bucket: u32,
    /// Its place in its queue's order: user priority first (`bsub -sp`,
    /// higher first), then arrival (first come, first served). See
    /// [`order_key`].
    pub(crate) arrival: u64,
    /// When it last entered its queue's pending list: its submission, or
    /// its last requeue (a requeued job is a new submission for the
    /// queue's order).
    pub queued_at: SimTime,
    /// Bumped whenever the job stops running, so stale finish events are
    /// recognised.
    pub(crate) run_epoch: u32,
    /// Set while a USUSP job was suspended by preemption when `bstop`
    /// stopped it: its preemptor holds its hosts' slots, and `bresume`
    /// makes it SSUSP again rather than running.
    pub(crate) stopped_while_suspended: bool,
    /// The job's pending clock, in ms (absolute priority scheduling's grace
    /// periods and JOB_PRIORITY_OVER_TIME read it through
    /// [`Job::pended`]): while the job pends, when its pending time began
    /// counting (now − the time pended); otherwise the time it has pended.
    /// It starts again at zero with a submission or a requeue, and carries
    /// on through a rerun, a migration or a hold.
    pub(crate) pend_clock: u64,
    /// Absolute priority scheduling's values set for the job (`bmod -aps`)
    /// and whether it was migrated; `None` for most jobs.
    pub(crate) aps: Option<Box<JobAps>>,
}

/// A job's absolute priority scheduling state beyond what its spec says.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobAps {
    /// `bmod -aps`: a system or an admin value.
    pub set: Option<ApsSet>,
    /// Migrated (`bmig`) and not started since: scheduled before the
    /// pending jobs of its queue (unless LSB_REQUEUE_TO_BOTTOM and
    /// LSB_MIG2PEND are both set).
    pub migrated: bool,
}

/// A value `bmod -aps` set for a job.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ApsSet {
    /// `system=V`: ahead of every calculated value.
    System(f64),
    /// `admin=V`: added to the calculated value.
    Admin(f64),
}

impl Job {
    /// The job leaves its hosts to pend again and run from the start
    /// (requeued, migrated, rerun, or terminated by preemption): its
    /// placement, run and pending reason start over.
    pub(crate) fn unplace(&mut self) {
        self.state = JobState::Pending;
        self.remaining = self.spec.run_time;
        self.run_epoch += 1;
        self.placement.clear();
        self.pending_reason = PendingReason::NewJob;
        self.reason_pass = 0;
        self.stopped_while_suspended = false;
    }

    /// The emulated time at which the job will end if it keeps running:
    /// when its run time is done, or its run limit reached, whichever is
    /// first.
    pub fn finish_time(&self) -> Option<SimTime> {
        (self.state == JobState::Running).then(|| self.running_since + self.time_to_end())
    }

    /// How long the job runs from its last start or resumption until it
    /// ends: the rest of its run time, cut at its run limit (LSF kills a
    /// job that reaches its RUNLIMIT).
    pub fn time_to_end(&self) -> Duration {
        match self.spec.run_limit {
            Some(limit) => self.remaining.min(limit.saturating_sub(self.ran_before())),
            None => self.remaining,
        }
    }

    /// How long the job ran before it last started or resumed (suspended
    /// periods excluded).
    pub fn ran_before(&self) -> Duration {
        self.spec.run_time.saturating_sub(self.remaining)
    }

    /// How long the job is expected to run in all: its run-time estimate
    /// (`bsub -We`, or its queue's RUNTIME) when it has one, else its run
    /// limit (`bsub -W`, or its queue's RUNLIMIT). NO_PREEMPT_FINISH_TIME
    /// and the percentages of the NO_PREEMPT_* guards read it (seed 003:
    /// "a job that has a run limit or a run time specified").
    pub fn expected_duration(&self) -> Option<Duration> {
        self.spec.run_estimate.or(self.spec.run_limit)
    }

    /// How long the job has pended by `now`, for absolute priority
    /// scheduling's grace periods and JOB_PRIORITY_OVER_TIME: its PEND time
    /// since its submission or last requeue (held, running and waiting
    /// periods excluded; a rerun or a migration keeps what it had).
    pub fn pended(&self, now: SimTime) -> Duration {
        let millis = if self.state == JobState::Pending {
            now.as_millis().saturating_sub(self.pend_clock)
        } else {
            self.pend_clock
        };
        Duration::from_millis(millis)
    }

    /// The system or admin value `bmod -aps` set, if any.
    pub fn aps_set(&self) -> Option<ApsSet> {
        self.aps.as_ref().and_then(|aps| aps.set)
    }

    /// Whether the job was migrated and has not started since.
    pub fn migrated(&self) -> bool {
        self.aps.as_ref().is_some_and(|aps| aps.migrated)
    }

    /// How long the job has run by `now`, suspended periods excluded.
    pub fn run_time_at(&self, now: SimTime) -> Duration {
        match self.state {
            JobState::Running => self.ran_before() + now.saturating_since(self.running_since),
            _ => self.ran_before(),
        }
    }
}

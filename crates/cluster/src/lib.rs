//! One mcfed cluster: its sans-IO scheduler core and protocol endpoint.
//!
//! - [`Cluster`] is the sans-IO scheduling core: hosts, queues, users,
//!   jobs, dispatch under every limit, queue-based fairshare pools
//!   ([`pool`]), user-based fairshare ([`fairshare`]), preemption
//!   ([`preemption`], [`limits`]), slot reservation and backfill, and the
//!   counters it publishes. Its state is kept in books, one per concern
//!   (`scheduler` and its submodules); the pass is in `dispatch`, slot
//!   reservation in `reservations`, victim choice in `victims`, building
//!   and checking a cluster from its configuration in `setup`.
//! - [`ClusterNode`] (in `endpoint`) is the cluster's protocol endpoint, still
//!   sans-IO: it takes forwarded jobs, answers them, reports job state to
//!   submission clusters and takes counter snapshots.
//! - [`inspect`] turns a cluster's queues into what `bqueues -l` shows.
//! - [`aps`] is absolute priority scheduling (seed 001): APS_PRIORITY,
//!   the formula, and the order it gives a queue's pending jobs.

pub mod advance;
pub mod aps;
mod audit;
mod chunks;
pub mod config;
mod counters;
mod dispatch;
pub mod endpoint;
pub mod fairshare;
pub mod host_types;
mod hostset;
pub mod inspect;
pub mod job;
pub mod limits;
pub mod pool;
pub mod preemption;
mod reservations;
pub mod scheduler;
mod setup;
mod victims;

pub use advance::live::{Deleted, LiveReservations, ReservationError};
pub use advance::policy::{ReservationPolicyConfig, TimeWindow};
pub use advance::{AdvanceReservationConfig, AdvanceReservationReport};
pub use aps::{
    APS_MAX, ApsBreakdown, ApsEntry, ApsInputs, ApsParseError, ApsPriority, ApsShown, ApsTerm,
    ResolvedAps, WaitingJob,
};
pub use config::{
    ClusterConfig, ConfigError, ConfigLocation, ConfigWarning, Consumers, DEFAULT_CLEAN_PERIOD,
    DEFAULT_IMPT_JOBBKLG, DEFAULT_PRIORITY, DEFAULT_SLEEP_TIME, HostConfig, HostSelection,
    LimitConfig, MAX_GPUS, MaxReserveTime, PriorityEscalation, QueueConfig, ReceiveFrom,
    SchedulingParams, SlotPoolConfig, UserGroupConfig, UserLimitConfig,
};
pub use endpoint::{ClusterNode, FinishedForward, RestoredNode};
pub use fairshare::{
    AdjustmentPlugin, FairshareAdjustment, FairshareFactors, FairshareOverrides, MemoryAdjustment,
    UserShares,
};
pub use inspect::{ClusterReport, FairshareReport, PoolReport, QueueReport, UserShareReport};
pub use job::{ApsSet, Job, JobAps, JobId, JobOrigin, JobState, PendingReason, Placement};
pub use preemption::{PreemptFor, PreemptGuard, PreemptGuards, Preemption, PreemptionParseError};
pub use reservations::SlotReservationView;
pub use scheduler::{
    Cluster, ControlError, HostEvent, ImageState, JobImage, PreemptionNote, RestoreReport,
    SubmitError, Transition,
};

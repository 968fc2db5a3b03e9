//! One cluster's scheduler, sans-IO: hosts, queues, users and jobs, and the
//! bookkeeping every policy reads. The dispatch pass itself is in
//! `dispatch` (queue order, fairshare, pools, limits, placement),
//! reservations in `reservations` and the choice of preemption victims in
//! `victims`.
//!
//! Nothing here reads a clock, opens a socket or spawns a thread: every
//! method that depends on time takes `now`. Engines (the in-process event
//! loop, the actix actor, a live process) call [`Cluster::advance`] whenever
//! emulated time moves or something arrives, and read the counters with
//! [`Cluster::queue_counters`].
//!
//! The [`Cluster`] keeps its state in books, one per concern, each with the
//! methods that keep it consistent: the host book (`hosts`), the queue book
//! with the slot pools (`queues`), the user book (`users`), the per-host
//! tallies of the host-level limits (`tallies`), the preemption tallies
//! (`victim_slots`), the fairshare adjustment's inputs (`adjustment`) and
//! the job book (`jobs`). Every change of a job's hold on slots goes through
//! one function, `Cluster::account` (in `accounting`), which has each book
//! follow; a job's life (`lifecycle`) calls it around each step.

mod accounting;
mod adjustment;
mod control;
mod host_failure;
mod hosts;
mod jobs;
mod lifecycle;
mod limit_book;
mod pending;
mod queries;
mod queues;
mod resize;
mod restore;
mod tallies;
mod users;
mod victim_slots;

use std::time::Duration;

use mcfed_protocol::{
    ClusterName, JobEvent, JobForward, JobSpec, QueueName, RejectReason, SimTime,
};

pub(crate) use adjustment::Adjustment;
pub use control::ControlError;
pub use host_failure::HostEvent;
pub(crate) use hosts::{Host, HostBook};
pub(crate) use jobs::{JobBook, Leaving};
pub(crate) use limit_book::{Limit, LimitBook, LimitKey};
pub(crate) use pending::{BucketIndex, PendingJobs};
pub(crate) use queues::{Pool, Queue, QueueBook, QueueFairshare, Stop, victim_key};
pub use restore::{ImageState, JobImage, RestoreReport};
pub(crate) use tallies::{HostTallies, Tracking};
pub(crate) use users::{Group, UserBook, UserLimits};
pub(crate) use victim_slots::VictimSlots;

use crate::config::{ClusterConfig, ConfigError, ConfigWarning};
use crate::job::{JobId, JobOrigin, QueueIndex};
use crate::preemption::PreemptFor;
use crate::reservations::Reservation;

/// Dispatch passes one [`Cluster::advance`] may run at one instant.
const MAX_PASSES_PER_INSTANT: usize = 64;

/// Something that happened to a job during [`Cluster::advance`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The job.
    pub job: JobId,
    /// What happened.
    pub event: JobEvent,
    /// When.
    pub at: SimTime,
    /// Where the job came from.
    pub origin: JobOrigin,
    /// For a job suspended or requeued by preemption, the job that
    /// preempted it.
    pub preempted_by: Option<JobId>,
    /// The job's name (shared with its spec).
    pub name: std::sync::Arc<str>,
    /// The job's queue.
    pub queue: QueueName,
    /// When the job arrived in this cluster.
    pub submitted_at: SimTime,
    /// When it was first submitted anywhere (for a forwarded job, at its
    /// submission cluster).
    pub first_submitted_at: SimTime,
    /// When it last started, if it has (for a `Started` transition: `at`).
    pub started_at: Option<SimTime>,
    /// The slots it asked for.
    pub slots: u32,
    /// For a `Started` transition: whether it is the job's first start
    /// (not a restart after a requeue).
    pub first_start: bool,
}

/// A preemption, with the names of the jobs involved, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreemptionNote {
    /// When.
    pub at: SimTime,
    /// The preempted job.
    pub victim: JobId,
    /// Its name.
    pub victim_name: String,
    /// The job that preempted it.
    pub preemptor: JobId,
    /// Its name.
    pub preemptor_name: String,
    /// Whether the victim was terminated and requeued (TERMINATE_WHEN=PREEMPT)
    /// rather than suspended.
    pub requeued: bool,
}

/// Why a job could not be submitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The queue does not exist.
    #[error("no queue named `{0}`")]
    UnknownQueue(String),
    /// The job asks for no slots.
    #[error("a job needs at least one slot")]
    NoSlots,
    /// The job can never run in the queue.
    #[error("{0}")]
    CannotRun(RejectReason),
    /// The job's user priority (`-sp`) is not allowed.
    #[error("{0}")]
    UserPriority(String),
    /// The job names an advance reservation but its queue forwards it.
    #[error(
        "advance reservation `{reservation}` is this cluster's own, and queue `{queue}` forwards its jobs to other clusters, where it cannot be used: submit to a queue of this cluster"
    )]
    ReservationForwarded {
        /// The reservation it names.
        reservation: String,
        /// Its send queue.
        queue: String,
    },
}

/// Cluster-wide policy, resolved from lsb.params.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Policy {
    /// Some queue is PREEMPTIVE or PREEMPTABLE.
    pub(crate) preemption_enabled: bool,
    pub(crate) preempt_for: PreemptFor,
    /// HIST_HOURS of lsb.params (pool usage decays with it).
    pub(crate) hist_hours: f64,
    /// MBD_SLEEP_TIME.
    pub(crate) sleep_time: Duration,
    /// MC_PLUGIN_UPDATE_INTERVAL.
    pub(crate) update_interval: Option<Duration>,
    /// MAX_USER_PRIORITY.
    pub(crate) max_user_priority: Option<u32>,
    /// JOB_PRIORITY_OVER_TIME.
    pub(crate) priority_over_time: Option<crate::config::PriorityEscalation>,
    /// LSB_REQUEUE_TO_BOTTOM.
    pub(crate) requeue_to_bottom: bool,
    /// LSB_MIG2PEND.
    pub(crate) mig2pend: bool,
}

/// Where the cluster is in time and in its dispatch passes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cycle {
    /// The latest time the cluster was given.
    pub(crate) now: SimTime,
    /// A dispatch pass is due (something arrived or was freed).
    pub(crate) dirty: bool,
    /// Dispatch passes run so far.
    pub(crate) pass: u64,
    /// Set when a pass started or resumed a job that a higher queue may
    /// preempt (a queue served earlier in the pass may now find a victim),
    /// or a preemption left free slots (a queue served earlier may use
    /// them): another pass runs at the same instant.
    pub(crate) pass_again: bool,
    /// Bumped whenever a job's hold on slots or the slot reservations
    /// change: a failure seen before stands for the jobs of its bucket
    /// only while this stays the same (`dispatch::order::arrival`).
    pub(crate) version: u64,
}

/// One cluster's scheduling state.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub(crate) name: ClusterName,
    /// Cluster-wide policy (lsb.params).
    pub(crate) policy: Policy,
    /// Settings LSF accepts with a warning.
    pub(crate) warnings: Vec<ConfigWarning>,
    /// Hosts, their used slots and jobs, and the host sets' free-slot
    /// indexes.
    pub(crate) hosts: HostBook,
    /// Queues with their jobs and tallies, slot pools, and the orders the
    /// queues are served in.
    pub(crate) queues: QueueBook,
    /// Users, user groups, their lsb.users limits and cluster-wide slots.
    pub(crate) users: UserBook,
    /// Slots per host of each user, group and queue (JL/U, JL/P,
    /// HJOB_LIMIT).
    pub(crate) tallies: HostTallies,
    /// Slots each queue could preempt, per victim queue.
    pub(crate) victim_slots: VictimSlots,
    /// lsb.resources' Limit sections and what each instance holds.
    pub(crate) limit_book: LimitBook,
    /// The fairshare adjustment plug-in and its cluster-wide inputs.
    pub(crate) adjustment: Adjustment,
    /// Jobs not finished, their numbering and their finish events.
    pub(crate) jobs: JobBook,
    /// Slot reservations in force (SLOT_RESERVE).
    pub(crate) reservations: Vec<Reservation>,
    /// Advance reservations (`brsvadd`), and the latest time their starts
    /// and ends were taken in.
    pub(crate) advance: Vec<crate::advance::AdvanceReservation>,
    pub(crate) advance_seen: SimTime,
    /// Advance reservation policies, and the configured reservations
    /// `brsvdel` deleted.
    pub(crate) advance_live: crate::advance::live::LiveBook,
    /// Chunks of jobs (CHUNK_JOB_SIZE): each running job's waiting jobs.
    pub(crate) chunks: crate::chunks::ChunkBook,
    /// The latest time, and the state of the dispatch passes.
    pub(crate) cycle: Cycle,
    /// Jobs that arrived or were taken out, for a journal (`None`: not
    /// tracked).
    pub(crate) changes: Option<Vec<JobId>>,
    /// Running jobs whose end is held back ([`Cluster::hold_end`]).
    pub(crate) held_ends: rustc_hash::FxHashSet<JobId>,
    /// Dispatch tries every pending job of a first-come-first-served
    /// queue ([`Cluster::scan_every_job`]).
    pub(crate) scan_every_job: bool,
    /// Vectors a first-come-first-served turn reuses.
    pub(crate) walk_buffers: crate::dispatch::WalkBuffers,
}

impl Cluster {
    /// Builds a cluster from its configuration, checking it. Settings LSF
    /// accepts with a warning are kept in [`Cluster::warnings`].
    pub fn new(config: ClusterConfig) -> Result<Cluster, ConfigError> {
        crate::setup::build(config)
    }

    /// Checks that `spec` could ever run in queue `queue`.
    pub(crate) fn check_runnable(
        &self,
        index: QueueIndex,
        spec: &JobSpec,
    ) -> Result<(), RejectReason> {
        let queue = &self.queues[index];
        if let Some(missing) = spec.resources.iter().find(|resource| {
            match crate::advance::reservation_named(resource) {
                Some(_) => !self.reservation_reachable(
                    resource,
                    &self.hosts.set(queue.host_set).members,
                    &spec.user,
                ),
                None => queue.resources.binary_search(resource).is_err(),
            }
        }) {
            return Err(RejectReason::MissingResource(missing.clone()));
        }
        if u64::from(spec.slots) > queue.configured_slots {
            return Err(RejectReason::TooManySlots {
                asked: spec.slots,
                total: u32::try_from(queue.configured_slots).unwrap_or(u32::MAX),
            });
        }
        if !spec.resources.is_empty() {
            let qualified: u64 = self
                .hosts
                .set(queue.host_set)
                .members
                .iter()
                .map(|&host| &self.hosts[host])
                .filter(|host| host.has_resources(&spec.resources))
                .map(|host| u64::from(host.config.max_slots))
                .sum();
            if qualified < u64::from(spec.slots) {
                return Err(RejectReason::NotEnoughQualifiedSlots {
                    asked: spec.slots,
                    qualified: u32::try_from(qualified).unwrap_or(u32::MAX),
                });
            }
        }
        if spec.gpus > 0 {
            let qualified: u64 = self
                .hosts
                .set(queue.host_set)
                .members
                .iter()
                .map(|&host| &self.hosts[host].config)
                .filter(|host| host.gpus >= spec.gpus)
                .map(|host| u64::from(host.max_slots))
                .sum();
            if qualified < u64::from(spec.slots) {
                return Err(RejectReason::NotEnoughGpus {
                    asked: spec.gpus,
                    qualified: u32::try_from(qualified).unwrap_or(u32::MAX),
                });
            }
        }
        self.shares_check(index, &spec.user)
    }

    /// Whether `user` may submit to `queue` under its FAIRSHARE ("only
    /// users with share assignments can submit jobs to the queue"): the
    /// check a send queue's submissions get too, as its jobs never reach
    /// this scheduler.
    pub fn check_shares(&self, queue: &str, user: &str) -> Result<(), SubmitError> {
        // A queue this scheduler does not know has no FAIRSHARE here.
        let Some(index) = self.queue_index(queue) else {
            return Ok(());
        };
        self.shares_check(index, user)
            .map_err(SubmitError::CannotRun)
    }

    /// `NoShares` when the queue at `index` has FAIRSHARE and `user` no
    /// share account in it.
    fn shares_check(&self, index: QueueIndex, user: &str) -> Result<(), RejectReason> {
        match &self.queues[index].fairshare {
            Some(fairshare)
                if fairshare
                    .tree
                    .leaf_shares(user, self.users.directory())
                    .is_none() =>
            {
                Err(RejectReason::NoShares {
                    user: user.to_owned(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Submits a job to `queue` at `now`. It pends until the next
    /// [`Cluster::advance`].
    pub fn submit(
        &mut self,
        now: SimTime,
        queue: &str,
        spec: JobSpec,
        origin: JobOrigin,
    ) -> Result<JobId, SubmitError> {
        let queue_index = self
            .queue_index(queue)
            .ok_or_else(|| SubmitError::UnknownQueue(queue.to_owned()))?;
        if spec.slots == 0 {
            return Err(SubmitError::NoSlots);
        }
        if let Some(priority) = spec.user_priority() {
            self.check_user_priority(priority)
                .map_err(SubmitError::UserPriority)?;
        }
        self.check_runnable(queue_index, &spec)
            .map_err(SubmitError::CannotRun)?;
        Ok(self.enqueue(now, queue_index, spec, origin, now))
    }

    /// Whether `priority` is a user priority jobs may ask for here: 1 to
    /// MAX_USER_PRIORITY, which must be set.
    pub fn check_user_priority(&self, priority: u32) -> Result<(), String> {
        match self.policy.max_user_priority {
            None => Err(
                "user-assigned job priorities (-sp) need MAX_USER_PRIORITY in lsb.params".into(),
            ),
            Some(max) if priority == 0 || priority > max => Err(format!(
                "a job priority is between 1 and MAX_USER_PRIORITY ({max}), not {priority}"
            )),
            Some(_) => Ok(()),
        }
    }

    /// The priority `spec` is ordered by in its queue: the JPRIORITY it
    /// was forwarded with, else its `-sp` value (capped at
    /// MAX_USER_PRIORITY) or half of MAX_USER_PRIORITY; 0 for every job
    /// when MAX_USER_PRIORITY is not set and none was forwarded with one.
    pub(crate) fn effective_priority(&self, spec: &JobSpec) -> u32 {
        if let Some(carried) = spec.carried_job_priority() {
            return carried;
        }
        self.policy.max_user_priority.map_or(0, |max| {
            spec.user_priority()
                .map_or(max / 2, |priority| priority.min(max))
        })
    }

    /// Takes a job forwarded by `from`, or says why not: the queue must
    /// receive from `from` (RCVJOBS_FROM), take it under IMPT_JOBBKLG (room
    /// in its backlog, or the job starts at once:
    /// [`mcfed_protocol::takes_import`], the rule the sender applies too),
    /// and be able to run the job at all.
    pub fn receive_forward(
        &mut self,
        now: SimTime,
        from: &ClusterName,
        forward: &JobForward,
    ) -> Result<JobId, RejectReason> {
        let queue_index = self
            .queue_index(forward.queue.as_str())
            .ok_or(RejectReason::UnknownQueue)?;
        let queue = &self.queues[queue_index];
        match &queue.config.receive_from {
            Some(receive_from) if receive_from.accepts(from) => {}
            _ => return Err(RejectReason::NotAllowed),
        }
        let limit = queue.config.impt_jobbklg;
        let backlog_full = !mcfed_protocol::takes_import(queue.imported_pending_jobs, limit, false);
        if backlog_full && !self.takes_import(queue_index, forward.spec.slots, now) {
            return Err(RejectReason::BacklogFull {
                limit: limit.unwrap_or(u32::MAX),
            });
        }
        forward
            .spec
            .check_bounds()
            .map_err(RejectReason::OutOfBounds)?;
        let queue = &self.queues[queue_index];
        if forward.spec.slots == 0 {
            return Err(RejectReason::TooManySlots {
                asked: 0,
                total: u32::try_from(queue.configured_slots).unwrap_or(u32::MAX),
            });
        }
        self.check_runnable(queue_index, &forward.spec)?;
        if backlog_full {
            // Taken to start at once: its slots are promised until the
            // next pass, so a second forward does not count them again.
            self.queues[queue_index].promised_slots += forward.spec.slots;
        }
        let origin = JobOrigin::Forwarded {
            from: from.clone(),
            source_job: forward.source_job,
        };
        Ok(self.enqueue(
            now,
            queue_index,
            forward.spec.clone(),
            origin,
            forward.submitted_at,
        ))
    }

    /// When the cluster next needs [`Cluster::advance`] on its own (the next
    /// job to finish, or a slot reservation to expire), or `None`.
    pub fn next_event_time(&mut self) -> Option<SimTime> {
        // Asked after every step: a cluster without slot or advance
        // reservations (most) looks at its next finish alone.
        let mut next = self.jobs.next_finish();
        let earlier = |next: Option<SimTime>, other: Option<SimTime>| match (next, other) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if !self.reservations.is_empty() {
            let expiry = self
                .reservations
                .iter()
                .map(|reservation| reservation.expires_at)
                .min();
            next = earlier(next, expiry);
        }
        if !self.advance.is_empty() {
            next = earlier(next, self.next_reservation_boundary(self.cycle.now));
        }
        next
    }

    /// Whether a dispatch pass is due (something arrived or was freed).
    pub fn needs_dispatch(&self) -> bool {
        self.cycle.dirty
    }

    /// Moves the cluster to `now`: finishes the jobs whose run time is over,
    /// ends expired slot reservations, then runs dispatch passes while
    /// anything changed. Appends what happened to `transitions`.
    pub fn advance(&mut self, now: SimTime, transitions: &mut Vec<Transition>) {
        self.cycle.now = self.cycle.now.max(now);
        // Preemption chains are finite (a queue only preempts lower ones),
        // so passes settle; the cap only guards against a bug looping.
        let mut passes = 0;
        loop {
            while let Some((at, job)) = self.jobs.pop_finish_due(now) {
                if !self.held_ends.is_empty() && self.held_ends.contains(&job) {
                    continue;
                }
                self.finish(job, at, transitions);
            }
            self.expire_reservations(now);
            if !self.advance.is_empty() {
                self.close_reservations(now, transitions);
                self.cross_reservation_boundaries(now);
            }
            if !self.cycle.dirty {
                break;
            }
            self.cycle.dirty = false;
            self.cycle.pass_again = false;
            self.dispatch(now, transitions);
            passes += 1;
            if self.cycle.pass_again {
                if passes < MAX_PASSES_PER_INSTANT {
                    self.cycle.dirty = true;
                } else {
                    tracing::warn!(cluster = %self.name, %now, "dispatch did not settle; deferring");
                }
            }
        }
    }
}

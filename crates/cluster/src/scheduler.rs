//! One cluster's scheduler, sans-IO: hosts, queues, users and jobs, and the
//! bookkeeping every policy reads. The dispatch pass itself is in
//! `dispatch` (queue order, fairshare, pools, limits, reservations) and the
//! choice of preemption victims in `victims`.
//!
//! Nothing here reads a clock, opens a socket or spawns a thread: every
//! method that depends on time takes `now`. Engines (the in-process event
//! loop, the actix actor, a live process) call [`Cluster::advance`] whenever
//! emulated time moves or something arrives, and read the counters with
//! [`Cluster::queue_counters`].
//!
//! Every change of a job's hold on slots goes through one function,
//! `Cluster::account`, which moves the job between holding nothing, running
//! and suspended and updates every tally that depends on it: hosts' used
//! slots and the free-slot indexes, queue, user, group and per-host counts
//! for the limits, fairshare accounts, pool usage, and the tallies of slots
//! other queues could preempt. Slot accounting follows seed
//! `003_f223f39848659bbb.txt` (see `limits`): a suspended job does not count
//! against its hosts' MXJ, so the preempting job can use the slots, but it
//! keeps counting against its queue's limits.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;
use std::time::Duration;

use mcfed_protocol::{
    ClusterName, JobEvent, JobForward, JobSpec, QueueName, RejectReason, SimTime,
};
use rustc_hash::FxHashMap;

use crate::config::{ClusterConfig, ConfigError, ConfigWarning, HostConfig, QueueConfig};
use crate::fairshare::{
    DecayingTotal, FairshareAdjustment, FairshareFactors, JobUse, ShareAccount, UserShares,
};
use crate::hostset::HostSet;
use crate::job::{
    HostIndex, Job, JobId, JobOrigin, JobState, PendingReason, Placement, QueueIndex, UserId,
};
use crate::limits::Held;
use crate::preemption::{PreemptFor, PreemptGuards};

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
}

/// A host and its jobs.
#[derive(Clone, Debug)]
pub(crate) struct Host {
    pub(crate) config: HostConfig,
    /// Slots counted against MXJ (running jobs' slots).
    pub(crate) used: u32,
    /// Jobs placed on the host, running or suspended.
    pub(crate) jobs: Vec<JobId>,
    /// Host sets the host belongs to.
    pub(crate) host_sets: Vec<usize>,
}

impl Host {
    pub(crate) fn free(&self) -> u32 {
        if self.config.closed {
            0
        } else {
            self.config.max_slots.saturating_sub(self.used)
        }
    }

    pub(crate) fn has_resources(&self, resources: &[String]) -> bool {
        resources
            .iter()
            .all(|resource| self.config.resources.contains(resource))
    }

    /// Running slots over MXJ, as an integer ratio (0 to 1,000,000).
    pub(crate) fn load(&self) -> u64 {
        u64::from(self.used) * 1_000_000 / u64::from(self.config.max_slots.max(1))
    }
}

/// How a job holds slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holding {
    /// Pending, finished, or terminated: no slots.
    Nothing,
    /// Running on its placement.
    Running,
    /// Suspended: keeps its placement but not its hosts' MXJ.
    Suspended,
}

/// One user's figures in one queue.
#[derive(Clone, Debug, Default)]
pub(crate) struct QueueUser {
    /// Slots of the user's running and suspended jobs in the queue
    /// (UJOB_LIMIT).
    pub(crate) held: u32,
    /// Fairshare account (fairshare queues only).
    pub(crate) account: ShareAccount,
    /// Pending jobs by arrival (fairshare queues only).
    pub(crate) pending: BTreeMap<u64, JobId>,
    /// Pass in which the dispatch stopped looking at the user's jobs, and
    /// why (fairshare queues only).
    pub(crate) stopped: Option<(u64, PendingReason)>,
}

/// A fairshare queue's shares and resolved factors.
#[derive(Clone, Debug)]
pub(crate) struct QueueFairshare {
    pub(crate) shares: UserShares,
    pub(crate) factors: FairshareFactors,
}

/// Where the last pass stopped looking at a queue's pending jobs: every job
/// it did not look at shares the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stop {
    pub(crate) reason: PendingReason,
}

/// A queue and its jobs.
#[derive(Clone, Debug)]
pub(crate) struct Queue {
    pub(crate) config: QueueConfig,
    pub(crate) host_set: usize,
    /// Pending jobs by arrival order.
    pub(crate) pending: BTreeMap<u64, JobId>,
    /// Suspended jobs by arrival order.
    pub(crate) suspended: BTreeMap<u64, JobId>,
    /// Running jobs, most preferred victim first (kept only for queues that
    /// other queues may preempt); equal keys put the newest job first.
    pub(crate) running_order: BTreeSet<(Reverse<i64>, Reverse<JobId>)>,
    pub(crate) running_slots: u32,
    pub(crate) suspended_slots: u32,
    pub(crate) pending_slots: u32,
    pub(crate) imported_pending_jobs: u32,
    /// Where the last dispatch pass stopped looking at this queue.
    pub(crate) stopped: Option<Stop>,
    /// Queues this one may preempt, most preferred victim first.
    pub(crate) victims: Vec<QueueIndex>,
    /// Queues that may preempt this one.
    pub(crate) preemptors: Vec<QueueIndex>,
    /// Boolean resources offered by the queue's hosts, sorted.
    pub(crate) resources: Vec<String>,
    /// Total slots on all the queue's hosts, open or closed.
    pub(crate) configured_slots: u64,
    /// Per-user figures.
    pub(crate) users: FxHashMap<UserId, QueueUser>,
    /// User-based fairshare, if configured.
    pub(crate) fairshare: Option<QueueFairshare>,
    /// The queue's slot pool.
    pub(crate) pool: Option<usize>,
    /// Slots it deserves in its pool as of the last pass (pool queues).
    pub(crate) deserved: u32,
    /// Decayed slot-hours used (pool queues).
    pub(crate) usage: DecayingTotal,
    /// NO_PREEMPT_* protecting its running jobs.
    pub(crate) guards: PreemptGuards,
    /// A job whose reservation expired, and the last pass in which it may
    /// not reserve again.
    pub(crate) reserve_cooldown: Option<(JobId, u64)>,
}

impl Queue {
    /// Slots the queue's running and suspended jobs hold.
    pub(crate) fn held(&self) -> u32 {
        self.running_slots + self.suspended_slots
    }

    /// The SLOT_SHARE of a pool queue.
    pub(crate) fn share(&self) -> u32 {
        self.config.slot_pool.as_ref().map_or(0, |pool| pool.share)
    }
}

/// A user as the cluster knows it.
#[derive(Clone, Debug)]
pub(crate) struct User {
    pub(crate) name: String,
    /// User groups it belongs to.
    pub(crate) groups: Vec<usize>,
    /// MAX_JOBS (own entry, else `default`).
    pub(crate) max_jobs: Option<u32>,
    /// JL/P (own entry, else `default`).
    pub(crate) slots_per_processor: Option<f64>,
    /// Slots of its jobs, cluster-wide.
    pub(crate) held: Held,
}

/// A user group.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub(crate) name: String,
    pub(crate) members: Vec<String>,
    pub(crate) max_jobs: Option<u32>,
    pub(crate) slots_per_processor: Option<f64>,
    pub(crate) held: Held,
}

/// A queue-based fairshare slot pool.
#[derive(Clone, Debug)]
pub(crate) struct Pool {
    pub(crate) name: String,
    /// Member queues, in configuration order.
    pub(crate) queues: Vec<QueueIndex>,
    pub(crate) host_set: usize,
    pub(crate) max_slots: Option<u32>,
    pub(crate) use_priority: bool,
    /// The pool's total as of the last pass.
    pub(crate) total: u32,
    /// Slots its queues' jobs run on now.
    pub(crate) running: u32,
}

/// A pending job holding the free slots of its hosts (SLOT_RESERVE).
#[derive(Clone, Debug)]
pub(crate) struct Reservation {
    pub(crate) job: JobId,
    pub(crate) queue: QueueIndex,
    pub(crate) arrival: u64,
    pub(crate) host_set: usize,
    pub(crate) slots: u32,
    pub(crate) expires_at: SimTime,
    /// When the job could start as running jobs reach their run limits, as
    /// of the current pass (`None`: cannot tell, some job has no limit).
    pub(crate) predicted_start: Option<SimTime>,
}

/// Which per-host tallies some limit needs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tracking {
    /// JL/U or a user's JL/P is configured.
    pub(crate) host_user: bool,
    /// A group's JL/P is configured.
    pub(crate) host_group: bool,
    /// HJOB_LIMIT is configured.
    pub(crate) host_queue: bool,
}

impl Tracking {
    pub(crate) fn any_host_limit(&self) -> bool {
        self.host_user || self.host_group || self.host_queue
    }
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
}

/// One cluster's scheduling state.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub(crate) name: ClusterName,
    pub(crate) hosts: Vec<Host>,
    pub(crate) queues: Vec<Queue>,
    /// Queue indices by PRIORITY, highest first (configuration order breaks
    /// ties).
    pub(crate) queue_order: Vec<QueueIndex>,
    /// The order of the current pass (pools reorder equal priorities).
    pub(crate) dispatch_order: Vec<QueueIndex>,
    /// Position of each queue in `dispatch_order`.
    pub(crate) order_position: Vec<usize>,
    pub(crate) queue_by_name: FxHashMap<QueueName, QueueIndex>,
    pub(crate) host_sets: Vec<HostSet>,
    /// `victim_slots[p * queues + v]`: slots held by running jobs of queue
    /// `v` on the open hosts of queue `p`, for pairs where `p` may preempt
    /// `v`.
    pub(crate) victim_slots: Vec<u64>,
    pub(crate) jobs: FxHashMap<JobId, Job>,
    next_job_id: u64,
    next_arrival: u64,
    finish_events: BinaryHeap<Reverse<(SimTime, JobId, u32)>>,
    pub(crate) dirty: bool,
    /// Dispatch passes run so far.
    pub(crate) pass: u64,
    /// Set when a pass started or resumed a job that a higher queue may
    /// preempt: a queue served earlier in the pass may now find a victim, so
    /// another pass runs at the same instant.
    pub(crate) new_victims: bool,
    finished_jobs: u64,
    update_interval: Option<Duration>,
    /// The latest time the cluster was given.
    now: SimTime,
    pub(crate) users: Vec<User>,
    user_by_name: FxHashMap<String, UserId>,
    pub(crate) groups: Vec<Group>,
    /// lsb.users limits of named users, and of `default`.
    user_limits: FxHashMap<String, (Option<u32>, Option<f64>)>,
    default_limits: (Option<u32>, Option<f64>),
    pub(crate) tracking: Tracking,
    pub(crate) host_user_held: FxHashMap<(HostIndex, UserId), Held>,
    pub(crate) host_group_held: FxHashMap<(HostIndex, usize), Held>,
    pub(crate) host_queue_held: FxHashMap<(HostIndex, QueueIndex), u32>,
    pub(crate) pools: Vec<Pool>,
    pub(crate) policy: Policy,
    pub(crate) adjustment: Option<Arc<dyn FairshareAdjustment>>,
    /// Memory of running jobs, MB.
    pub(crate) memory_in_use_mb: u64,
    /// Host memory per slot, MB (for the adjustment plug-in).
    pub(crate) slot_memory_mb: f64,
    pub(crate) reservations: Vec<Reservation>,
    warnings: Vec<ConfigWarning>,
}

impl Cluster {
    /// Builds a cluster from its configuration, checking it. Settings LSF
    /// accepts with a warning are kept in [`Cluster::warnings`].
    pub fn new(config: ClusterConfig) -> Result<Cluster, ConfigError> {
        crate::setup::build(config)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        name: ClusterName,
        hosts: Vec<Host>,
        queues: Vec<Queue>,
        host_sets: Vec<HostSet>,
        groups: Vec<Group>,
        user_limits: FxHashMap<String, (Option<u32>, Option<f64>)>,
        default_limits: (Option<u32>, Option<f64>),
        pools: Vec<Pool>,
        policy: Policy,
        tracking: Tracking,
        adjustment: Option<Arc<dyn FairshareAdjustment>>,
        update_interval: Option<Duration>,
        warnings: Vec<ConfigWarning>,
    ) -> Cluster {
        let queue_count = queues.len();
        let mut queue_order: Vec<QueueIndex> = (0..queue_count).collect();
        queue_order.sort_by_key(|&q| (Reverse(queues[q].config.priority), q));
        let mut order_position = vec![0; queue_count];
        for (position, &queue) in queue_order.iter().enumerate() {
            order_position[queue] = position;
        }
        let queue_by_name = queues
            .iter()
            .enumerate()
            .map(|(index, queue)| (queue.config.name.clone(), index))
            .collect();
        let open_slots: u64 = hosts
            .iter()
            .map(|host| u64::from(host.config.max_slots))
            .sum();
        let memory: u64 = hosts.iter().map(|host| host.config.memory_mb).sum();
        let slot_memory_mb = if open_slots == 0 {
            0.0
        } else {
            memory as f64 / open_slots as f64
        };
        Cluster {
            name,
            hosts,
            queues,
            dispatch_order: queue_order.clone(),
            queue_order,
            order_position,
            queue_by_name,
            host_sets,
            victim_slots: vec![0; queue_count * queue_count],
            jobs: FxHashMap::default(),
            next_job_id: 1,
            next_arrival: 0,
            finish_events: BinaryHeap::new(),
            dirty: false,
            pass: 0,
            new_victims: false,
            finished_jobs: 0,
            update_interval,
            now: SimTime::ZERO,
            users: Vec::new(),
            user_by_name: FxHashMap::default(),
            groups,
            user_limits,
            default_limits,
            tracking,
            host_user_held: FxHashMap::default(),
            host_group_held: FxHashMap::default(),
            host_queue_held: FxHashMap::default(),
            pools,
            policy,
            adjustment,
            memory_in_use_mb: 0,
            slot_memory_mb,
            reservations: Vec::new(),
            warnings,
        }
    }

    /// The cluster's name.
    pub fn name(&self) -> &ClusterName {
        &self.name
    }

    /// Settings LSF accepts but warns about (a SLOT_RESERVE in a pool queue,
    /// a preemptive queue that can preempt backfill jobs, ...).
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// MC_PLUGIN_UPDATE_INTERVAL, if set.
    pub fn update_interval(&self) -> Option<Duration> {
        self.update_interval
    }

    /// Installs a fairshare adjustment plug-in in place of the configured
    /// one (its weight is still FAIRSHARE_ADJUSTMENT_FACTOR).
    pub fn set_fairshare_adjustment(&mut self, plugin: Arc<dyn FairshareAdjustment>) {
        self.adjustment = Some(plugin);
    }

    /// The index of the queue named `name`.
    pub fn queue_index(&self, name: &str) -> Option<QueueIndex> {
        self.queue_by_name.get(name).copied()
    }

    /// The number of queues.
    pub fn queue_count(&self) -> usize {
        self.queues.len()
    }

    /// The configuration of the queue at `index`.
    pub fn queue_config(&self, index: QueueIndex) -> &QueueConfig {
        &self.queues[index].config
    }

    /// Every queue's configuration, in configuration order.
    pub fn queue_configs(&self) -> impl Iterator<Item = &QueueConfig> {
        self.queues.iter().map(|queue| &queue.config)
    }

    /// Every host's configuration, in configuration order (a host's index
    /// is its place here).
    pub fn host_configs(&self) -> impl Iterator<Item = &HostConfig> {
        self.hosts.iter().map(|host| &host.config)
    }

    /// The job with id `id`, unless it has finished.
    pub fn job(&self, id: JobId) -> Option<&Job> {
        self.jobs.get(&id)
    }

    /// Every job that has not finished, in no particular order.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values()
    }

    /// The name of a job's user.
    pub fn user_name<'a>(&'a self, job: &'a Job) -> &'a str {
        self.users
            .get(job.user as usize)
            .map_or(&*job.spec.user, |user| user.name.as_str())
    }

    /// How many jobs have finished.
    pub fn finished_jobs(&self) -> u64 {
        self.finished_jobs
    }

    /// The name of the host at `index`.
    pub fn host_name(&self, index: HostIndex) -> &str {
        &self.hosts[index].config.name
    }

    /// Slots used by running jobs on the host at `index` (never more than
    /// its MXJ).
    pub fn host_used_slots(&self, index: HostIndex) -> u32 {
        self.hosts[index].used
    }

    /// Whether some queue is PREEMPTIVE or PREEMPTABLE.
    pub fn preemption_enabled(&self) -> bool {
        self.policy.preemption_enabled
    }

    /// Checks that `spec` could ever run in queue `queue`.
    fn check_runnable(&self, queue: QueueIndex, spec: &JobSpec) -> Result<(), RejectReason> {
        let queue = &self.queues[queue];
        if let Some(missing) = spec
            .resources
            .iter()
            .find(|resource| queue.resources.binary_search(resource).is_err())
        {
            return Err(RejectReason::MissingResource(missing.clone()));
        }
        if u64::from(spec.slots) > queue.configured_slots {
            return Err(RejectReason::TooManySlots {
                asked: spec.slots,
                total: u32::try_from(queue.configured_slots).unwrap_or(u32::MAX),
            });
        }
        if !spec.resources.is_empty() {
            let qualified: u64 = self.host_sets[queue.host_set]
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
        if let Some(fairshare) = &queue.fairshare {
            if fairshare.shares.shares_of(&spec.user).is_none() {
                return Err(RejectReason::NoShares {
                    user: spec.user.to_string(),
                });
            }
        }
        Ok(())
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
        self.check_runnable(queue_index, &spec)
            .map_err(SubmitError::CannotRun)?;
        Ok(self.enqueue(now, queue_index, spec, origin))
    }

    /// Takes a job forwarded by `from`, or says why not: the queue must
    /// receive from `from` (RCVJOBS_FROM), have room under IMPT_JOBBKLG, and
    /// be able to run the job at all.
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
        if let Some(limit) = queue.config.impt_jobbklg {
            if queue.imported_pending_jobs >= limit {
                return Err(RejectReason::BacklogFull { limit });
            }
        }
        if forward.spec.slots == 0 {
            return Err(RejectReason::TooManySlots {
                asked: 0,
                total: u32::try_from(queue.configured_slots).unwrap_or(u32::MAX),
            });
        }
        self.check_runnable(queue_index, &forward.spec)?;
        let origin = JobOrigin::Forwarded {
            from: from.clone(),
            source_job: forward.source_job,
        };
        Ok(self.enqueue(now, queue_index, forward.spec.clone(), origin))
    }

    /// The cluster's number for user `name`, numbering it on first sight.
    fn intern_user(&mut self, name: &str) -> UserId {
        if let Some(&id) = self.user_by_name.get(name) {
            return id;
        }
        let id = UserId::try_from(self.users.len()).unwrap_or(UserId::MAX);
        let (max_jobs, slots_per_processor) = self
            .user_limits
            .get(name)
            .copied()
            .unwrap_or(self.default_limits);
        let groups = self
            .groups
            .iter()
            .enumerate()
            .filter(|(_, group)| group.members.iter().any(|member| member == name))
            .map(|(index, _)| index)
            .collect();
        self.users.push(User {
            name: name.to_owned(),
            groups,
            max_jobs,
            slots_per_processor,
            held: Held::default(),
        });
        self.user_by_name.insert(name.to_owned(), id);
        id
    }

    /// The queue's figures for `user`, created on first use (with the
    /// user's shares in a fairshare queue).
    pub(crate) fn queue_user(&mut self, queue: QueueIndex, user: UserId) -> &mut QueueUser {
        let name = &self.users[user as usize].name;
        let Queue {
            users, fairshare, ..
        } = &mut self.queues[queue];
        users.entry(user).or_insert_with(|| {
            let shares = fairshare
                .as_ref()
                .and_then(|fairshare| fairshare.shares.shares_of(name))
                .unwrap_or(0);
            QueueUser {
                account: ShareAccount::new(shares),
                ..QueueUser::default()
            }
        })
    }

    fn enqueue(
        &mut self,
        now: SimTime,
        queue: QueueIndex,
        spec: JobSpec,
        origin: JobOrigin,
    ) -> JobId {
        self.now = self.now.max(now);
        let id = JobId(self.next_job_id);
        self.next_job_id += 1;
        let arrival = self.next_arrival;
        self.next_arrival += 1;
        let user = self.intern_user(&spec.user);
        let remaining = spec.run_time;
        self.jobs.insert(
            id,
            Job {
                id,
                queue,
                spec,
                origin,
                user,
                state: JobState::Pending,
                submitted_at: now,
                started_at: None,
                remaining,
                running_since: now,
                placement: Vec::new(),
                pending_reason: PendingReason::NewJob,
                reason_pass: 0,
                arrival,
                run_epoch: 0,
            },
        );
        self.add_pending(id);
        self.dirty = true;
        id
    }

    /// Puts pending job `id` in its queue's pending lists.
    fn add_pending(&mut self, id: JobId) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let (queue_index, arrival, slots, user) =
            (job.queue, job.arrival, job.spec.slots, job.user);
        let forwarded = matches!(job.origin, JobOrigin::Forwarded { .. });
        let fairshare = self.queues[queue_index].fairshare.is_some();
        let queue = &mut self.queues[queue_index];
        queue.pending.insert(arrival, id);
        queue.pending_slots += slots;
        if forwarded {
            queue.imported_pending_jobs += 1;
        }
        if fairshare {
            self.queue_user(queue_index, user)
                .pending
                .insert(arrival, id);
        }
    }

    /// Takes pending job `id` out of its queue's pending lists.
    fn remove_pending(&mut self, id: JobId) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let queue = &mut self.queues[job.queue];
        queue.pending.remove(&job.arrival);
        queue.pending_slots -= job.spec.slots;
        if matches!(job.origin, JobOrigin::Forwarded { .. }) {
            queue.imported_pending_jobs -= 1;
        }
        if queue.fairshare.is_some() {
            if let Some(user) = queue.users.get_mut(&job.user) {
                user.pending.remove(&job.arrival);
            }
        }
    }

    /// When the cluster next needs [`Cluster::advance`] on its own (the next
    /// job to finish, or a slot reservation to expire), or `None`.
    pub fn next_event_time(&mut self) -> Option<SimTime> {
        let mut next = None;
        while let Some(Reverse((at, job, epoch))) = self.finish_events.peek().copied() {
            if self.is_current_finish(job, epoch) {
                next = Some(at);
                break;
            }
            self.finish_events.pop();
        }
        let expiry = self
            .reservations
            .iter()
            .map(|reservation| reservation.expires_at)
            .min();
        match (next, expiry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether a dispatch pass is due (something arrived or was freed).
    pub fn needs_dispatch(&self) -> bool {
        self.dirty
    }

    fn is_current_finish(&self, job: JobId, epoch: u32) -> bool {
        self.jobs
            .get(&job)
            .is_some_and(|job| job.state == JobState::Running && job.run_epoch == epoch)
    }

    /// Moves the cluster to `now`: finishes the jobs whose run time is over,
    /// ends expired slot reservations, then runs dispatch passes while
    /// anything changed. Appends what happened to `transitions`.
    pub fn advance(&mut self, now: SimTime, transitions: &mut Vec<Transition>) {
        self.now = self.now.max(now);
        // Preemption chains are finite (a queue only preempts lower ones),
        // so passes settle; the cap only guards against a bug looping.
        let mut passes = 0;
        loop {
            while let Some(Reverse((at, job, epoch))) = self.finish_events.peek().copied() {
                if at > now {
                    break;
                }
                self.finish_events.pop();
                if self.is_current_finish(job, epoch) {
                    self.finish(job, at, transitions);
                }
            }
            self.expire_reservations(now);
            if !self.dirty {
                break;
            }
            self.dirty = false;
            self.new_victims = false;
            self.dispatch(now, transitions);
            passes += 1;
            if self.new_victims {
                if passes < MAX_PASSES_PER_INSTANT {
                    self.dirty = true;
                } else {
                    tracing::warn!(cluster = %self.name, %now, "dispatch did not settle; deferring");
                }
            }
        }
    }

    fn expire_reservations(&mut self, now: SimTime) {
        if self.reservations.iter().all(|r| r.expires_at > now) {
            return;
        }
        let pass = self.pass;
        let mut kept = Vec::with_capacity(self.reservations.len());
        for reservation in std::mem::take(&mut self.reservations) {
            if reservation.expires_at <= now {
                tracing::debug!(cluster = %self.name, job = %reservation.job, "slot reservation expired");
                // It may not reserve again in the next scheduling session.
                self.queues[reservation.queue].reserve_cooldown = Some((reservation.job, pass + 1));
                self.dirty = true;
            } else {
                kept.push(reservation);
            }
        }
        self.reservations = kept;
    }

    pub(crate) fn drop_reservation_of(&mut self, id: JobId) {
        self.reservations
            .retain(|reservation| reservation.job != id);
    }

    /// Moves job `id` from holding `from` to holding `to` at `now`, updating
    /// every tally that depends on it (see the module documentation). The
    /// job's own fields are not touched: the callers set its state, times and
    /// placement around this.
    pub(crate) fn account(&mut self, id: JobId, from: Holding, to: Holding, now: SimTime) {
        if from == to {
            return;
        }
        let Cluster {
            jobs,
            hosts,
            queues,
            host_sets,
            pools,
            users,
            groups,
            tracking,
            host_user_held,
            host_group_held,
            host_queue_held,
            victim_slots,
            memory_in_use_mb,
            policy,
            ..
        } = self;
        let Some(job) = jobs.get(&id) else {
            return;
        };
        let running = |holding: Holding| i64::from(holding == Holding::Running);
        let suspended = |holding: Holding| i64::from(holding == Holding::Suspended);
        let holds = |holding: Holding| i64::from(holding != Holding::Nothing);
        let run_delta = running(to) - running(from);
        let suspend_delta = suspended(to) - suspended(from);
        let held_delta = holds(to) - holds(from);
        let apply = |value: &mut u32, delta: i64, amount: u32| {
            if delta > 0 {
                *value += amount;
            } else if delta < 0 {
                *value -= amount;
            }
        };
        let apply_held = |held: &mut Held, amount: u32| {
            apply(&mut held.running, run_delta, amount);
            apply(&mut held.suspended, suspend_delta, amount);
        };
        let slots = job.spec.slots;
        let user_id = job.user;
        let user = &mut users[user_id as usize];

        for place in &job.placement {
            let host = &mut hosts[place.host];
            if run_delta != 0 {
                let old = host.free();
                apply(&mut host.used, run_delta, place.slots);
                let new = host.free();
                if !host.config.closed {
                    for &set in &host.host_sets {
                        host_sets[set].update_free(place.host, old, new);
                    }
                }
            }
            if held_delta > 0 {
                host.jobs.push(id);
            } else if held_delta < 0 {
                host.jobs.retain(|&other| other != id);
            }
            if tracking.host_user {
                let held = host_user_held.entry((place.host, user_id)).or_default();
                apply_held(held, place.slots);
                if held.is_empty() {
                    host_user_held.remove(&(place.host, user_id));
                }
            }
            if tracking.host_group {
                for &group in &user.groups {
                    let held = host_group_held.entry((place.host, group)).or_default();
                    apply_held(held, place.slots);
                    if held.is_empty() {
                        host_group_held.remove(&(place.host, group));
                    }
                }
            }
            if tracking.host_queue {
                let held = host_queue_held.entry((place.host, job.queue)).or_default();
                apply(held, held_delta, place.slots);
                if *held == 0 {
                    host_queue_held.remove(&(place.host, job.queue));
                }
            }
        }

        apply_held(&mut user.held, slots);
        for &group in &user.groups {
            apply_held(&mut groups[group].held, slots);
        }
        if run_delta > 0 {
            *memory_in_use_mb += job.spec.memory_mb;
        } else if run_delta < 0 {
            *memory_in_use_mb -= job.spec.memory_mb;
        }

        let queue_count = queues.len();
        let queue = &mut queues[job.queue];
        apply(&mut queue.running_slots, run_delta, slots);
        apply(&mut queue.suspended_slots, suspend_delta, slots);
        if suspend_delta > 0 {
            queue.suspended.insert(job.arrival, id);
        } else if suspend_delta < 0 {
            queue.suspended.remove(&job.arrival);
        }
        if run_delta != 0 && !queue.preemptors.is_empty() {
            let key = victim_key(job, policy.preempt_for.least_run_time);
            if run_delta > 0 {
                queue.running_order.insert((Reverse(key), Reverse(id)));
            } else {
                queue.running_order.remove(&(Reverse(key), Reverse(id)));
            }
        }
        let hist_hours = queue
            .fairshare
            .as_ref()
            .map(|fairshare| fairshare.factors.hist_hours);
        let queue_user = queue.users.entry(user_id).or_default();
        apply(&mut queue_user.held, held_delta, slots);
        if let (Some(hist_hours), true) = (hist_hours, run_delta != 0) {
            let used = JobUse {
                slots,
                cpu_utilisation: job.spec.cpu_utilisation,
                memory_mb: job.spec.memory_mb,
                running_since: job.running_since,
                ran_before: job.ran_before(),
            };
            if run_delta > 0 {
                queue_user.account.job_runs(&used, hist_hours);
            } else {
                queue_user.account.job_stops(now, &used, hist_hours);
            }
        }
        if let (Some(pool), true) = (queue.pool, run_delta != 0) {
            queue.usage.add_rate(
                now,
                (run_delta * i64::from(slots)) as f64,
                policy.hist_hours,
            );
            apply(&mut pools[pool].running, run_delta, slots);
        }

        if run_delta != 0 {
            for &preemptor in &queues[job.queue].preemptors {
                let set = &host_sets[queues[preemptor].host_set];
                let reachable: u32 = job
                    .placement
                    .iter()
                    .filter(|place| set.contains(place.host) && !hosts[place.host].config.closed)
                    .map(|place| place.slots)
                    .sum();
                let tally = &mut victim_slots[preemptor * queue_count + job.queue];
                if run_delta > 0 {
                    *tally += u64::from(reachable);
                } else {
                    *tally -= u64::from(reachable);
                }
            }
        }
    }

    pub(crate) fn start(
        &mut self,
        id: JobId,
        placement: Vec<Placement>,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        self.remove_pending(id);
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.state = JobState::Running;
        job.started_at = Some(now);
        job.running_since = now;
        job.placement = placement;
        let finish = (now + job.remaining, id, job.run_epoch);
        let origin = job.origin.clone();
        let queue = job.queue;
        let name = job.spec.name.clone();
        self.account(id, Holding::Nothing, Holding::Running, now);
        if !self.queues[queue].preemptors.is_empty() {
            self.new_victims = true;
        }
        if !self.reservations.is_empty() {
            self.drop_reservation_of(id);
        }
        self.finish_events.push(Reverse(finish));
        transitions.push(Transition {
            job: id,
            event: JobEvent::Started,
            at: now,
            origin,
            preempted_by: None,
            name,
            queue: self.queues[queue].config.name.clone(),
        });
    }

    /// Completes the suspension of a victim whose slots were already
    /// accounted as suspended.
    pub(crate) fn finish_suspension(
        &mut self,
        id: JobId,
        by: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.remaining = job
            .remaining
            .saturating_sub(now.saturating_since(job.running_since));
        job.state = JobState::Suspended;
        job.run_epoch += 1;
        transitions.push(Transition {
            job: id,
            event: JobEvent::Suspended,
            at: now,
            origin: job.origin.clone(),
            preempted_by: Some(by),
            name: job.spec.name.clone(),
            queue: self.queues[job.queue].config.name.clone(),
        });
    }

    /// Completes the termination of a victim (TERMINATE_WHEN=PREEMPT) whose
    /// slots were already released: it is requeued, to run again from the
    /// start, ahead of the jobs that arrived after it.
    pub(crate) fn finish_termination(
        &mut self,
        id: JobId,
        by: JobId,
        now: SimTime,
        transitions: &mut Vec<Transition>,
    ) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.remaining = job.spec.run_time;
        job.state = JobState::Pending;
        job.run_epoch += 1;
        job.placement.clear();
        job.pending_reason = PendingReason::NewJob;
        job.reason_pass = 0;
        let origin = job.origin.clone();
        let name = job.spec.name.clone();
        let queue = self.queues[job.queue].config.name.clone();
        self.add_pending(id);
        self.dirty = true;
        transitions.push(Transition {
            job: id,
            event: JobEvent::Requeued,
            at: now,
            origin,
            preempted_by: Some(by),
            name,
            queue,
        });
    }

    pub(crate) fn resume(&mut self, id: JobId, now: SimTime, transitions: &mut Vec<Transition>) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.state = JobState::Running;
        job.running_since = now;
        let finish = (now + job.remaining, id, job.run_epoch);
        let origin = job.origin.clone();
        let queue = job.queue;
        let name = job.spec.name.clone();
        self.account(id, Holding::Suspended, Holding::Running, now);
        if !self.queues[queue].preemptors.is_empty() {
            self.new_victims = true;
        }
        self.finish_events.push(Reverse(finish));
        transitions.push(Transition {
            job: id,
            event: JobEvent::Resumed,
            at: now,
            origin,
            preempted_by: None,
            name,
            queue: self.queues[queue].config.name.clone(),
        });
    }

    fn finish(&mut self, id: JobId, at: SimTime, transitions: &mut Vec<Transition>) {
        self.account(id, Holding::Running, Holding::Nothing, at);
        let Some(mut job) = self.jobs.remove(&id) else {
            return;
        };
        job.state = JobState::Done;
        self.finished_jobs += 1;
        self.dirty = true;
        transitions.push(Transition {
            job: id,
            event: JobEvent::Finished,
            at,
            origin: job.origin,
            preempted_by: None,
            name: job.spec.name,
            queue: self.queues[job.queue].config.name.clone(),
        });
    }

    /// Takes job `id` out of the cluster, whatever its state, and returns it
    /// (`bkill`; used when a submission cluster recalls or withdraws a job
    /// it forwarded). A pending job leaves its queue; a running or suspended
    /// one frees its slots. No transition is reported; a dispatch pass is
    /// due. Its use counts in fairshare up to the latest time the cluster
    /// was given.
    pub fn remove_job(&mut self, id: JobId) -> Option<Job> {
        let now = self.now;
        let state = self.jobs.get(&id)?.state;
        match state {
            JobState::Pending => self.remove_pending(id),
            JobState::Running => self.account(id, Holding::Running, Holding::Nothing, now),
            JobState::Suspended => self.account(id, Holding::Suspended, Holding::Nothing, now),
            JobState::Done => {}
        }
        self.drop_reservation_of(id);
        self.dirty = true;
        self.jobs.remove(&id)
    }

    /// The preemptions among `transitions` (as just returned by
    /// [`Cluster::advance`]), with the jobs' names.
    pub fn preemption_notes(&self, transitions: &[Transition]) -> Vec<PreemptionNote> {
        let name = |id: JobId| {
            self.jobs
                .get(&id)
                .map_or_else(|| format!("job {id}"), |job| job.spec.name.to_string())
        };
        transitions
            .iter()
            .filter_map(|transition| {
                let preemptor = transition.preempted_by?;
                Some(PreemptionNote {
                    at: transition.at,
                    victim: transition.job,
                    victim_name: name(transition.job),
                    preemptor,
                    preemptor_name: name(preemptor),
                    requeued: transition.event == JobEvent::Requeued,
                })
            })
            .collect()
    }

    /// The fairshare account of `user` (by name) in queue `queue`, if the
    /// user has used the queue.
    pub(crate) fn account_of(&self, queue: QueueIndex, user: &str) -> Option<&QueueUser> {
        let id = self.user_by_name.get(user)?;
        self.queues[queue].users.get(id)
    }

    /// Checks that every index and tally agrees with the jobs themselves,
    /// and that no host runs more than its MXJ. For tests and debugging;
    /// O(jobs + hosts + queues).
    pub fn audit(&self) -> Result<(), String> {
        crate::audit::audit(self)
    }
}

/// The key ordering a queue's running jobs as preemption victims: most
/// recently started first, or (PREEMPT_FOR=LEAST_RUN_TIME) shortest run
/// time first. Both are fixed while the job runs.
pub(crate) fn victim_key(job: &Job, least_run_time: bool) -> i64 {
    let since = i64::try_from(job.running_since.as_millis()).unwrap_or(i64::MAX);
    if least_run_time {
        since - i64::try_from(job.ran_before().as_millis()).unwrap_or(i64::MAX)
    } else {
        since
    }
}

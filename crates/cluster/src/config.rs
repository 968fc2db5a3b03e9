//! A cluster's configuration: hosts (lsb.hosts), queues (lsb.queues), users
//! and user groups (lsb.users), the cluster-wide scheduling parameters
//! (lsb.params) and the MultiCluster parameters of its queues, already typed.
//!
//! Reading files is not done here: the scenario layer turns TOML into these
//! structs, and [`crate::Cluster::new`] checks them. A [`ConfigError`] names
//! the host, queue, user or parameter at fault so the scenario layer can
//! point at the line; a [`ConfigWarning`] does the same for settings LSF
//! accepts but advises against.

use std::time::Duration;

use mcfed_protocol::{ClusterName, QueueName, QueueRef};

use crate::aps::ApsPriority;
use crate::fairshare::{AdjustmentPlugin, FairshareOverrides, UserShares};
use crate::preemption::{PreemptFor, PreemptGuards, Preemption};

/// Default IMPT_JOBBKLG: how many imported jobs may pend in a receive queue.
pub const DEFAULT_IMPT_JOBBKLG: u32 = 50;

/// The most GPUs a host may have, and a job may ask for on each host.
pub const MAX_GPUS: u32 = 1024;

/// Default queue PRIORITY in LSF.
pub const DEFAULT_PRIORITY: u32 = 1;

/// Default MBD_SLEEP_TIME: the length of one scheduling cycle, the unit of
/// SLOT_RESERVE's MAX_RESERVE_TIME.
pub const DEFAULT_SLEEP_TIME: Duration = Duration::from_secs(60);

/// One host (lsb.hosts).
#[derive(Clone, Debug, PartialEq)]
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
    /// Processors (ncpus), the unit of the per-processor limits (JL/P);
    /// `None` counts one processor per slot.
    pub processors: Option<u32>,
    /// JL/U: slots each user may hold on the host.
    pub user_slot_limit: Option<u32>,
    /// Memory of the host in MB (maxmem), for the fairshare adjustment
    /// plug-in's memory per slot.
    pub memory_mb: u64,
    /// GPUs on the host (ngpus); a running job holds its GPUs per host
    /// exclusively.
    pub gpus: u32,
    /// Its host type (lsf.cluster's `type`), which `select[type==X]` asks
    /// for ([`crate::host_types`]).
    pub host_type: Option<String>,
    /// Its host model (lsf.cluster's `model`), which `select[model==X]`
    /// asks for.
    pub model: Option<String>,
}

impl HostConfig {
    /// An open host named `name` with `max_slots` slots and nothing else.
    pub fn new(name: impl Into<String>, max_slots: u32) -> Self {
        HostConfig {
            name: name.into(),
            max_slots,
            resources: Vec::new(),
            closed: false,
            processors: None,
            user_slot_limit: None,
            memory_mb: 0,
            gpus: 0,
            host_type: None,
            model: None,
        }
    }

    /// Processors used by per-processor limits.
    pub fn processor_count(&self) -> u32 {
        self.processors.unwrap_or(self.max_slots)
    }
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

/// A queue's membership of a queue-based fairshare slot pool (seed
/// `000_36a42b5a2a658b91.txt`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotPoolConfig {
    /// SLOT_POOL: the pool's name.
    pub pool: String,
    /// SLOT_SHARE: the queue's share of the pool's slots, in percent (1 to
    /// 100).
    pub share: u32,
    /// MAX_SLOTS_IN_POOL: a cap on the pool's slots. LSF reads it from the
    /// first queue of the pool; later queues' values are ignored (with a
    /// warning when they differ).
    pub max_slots: Option<u32>,
    /// USE_PRIORITY_IN_POOL: after every queue has had its turn, hand the
    /// pool's unused slots to its pending jobs in job order across the
    /// pool's queues. Read from the first queue of the pool, like
    /// `max_slots`.
    pub use_priority: Option<bool>,
}

/// SLOT_RESERVE's value, `MAX_RESERVE_TIME[n]`: how many scheduling
/// cycles (MBD_SLEEP_TIME) a job may hold reserved slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxReserveTime(pub u32);

/// Why a SLOT_RESERVE value does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected MAX_RESERVE_TIME[n] with n a number of scheduling cycles of at least 1, not `{0}`"
)]
pub struct MaxReserveTimeParseError(pub String);

impl std::str::FromStr for MaxReserveTime {
    type Err = MaxReserveTimeParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.trim()
            .strip_prefix("MAX_RESERVE_TIME[")
            .and_then(|rest| rest.strip_suffix(']'))
            .and_then(|number| number.trim().parse::<u32>().ok())
            .filter(|&cycles| cycles > 0)
            .map(MaxReserveTime)
            .ok_or_else(|| MaxReserveTimeParseError(text.to_owned()))
    }
}

/// One queue (lsb.queues).
#[derive(Clone, Debug, PartialEq)]
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
    /// UJOB_LIMIT: slots each user's running and suspended jobs may hold in
    /// the queue.
    pub user_job_limit: Option<u32>,
    /// HJOB_LIMIT: slots the queue's running and suspended jobs may hold on
    /// one host.
    pub host_job_limit: Option<u32>,
    /// SLOT_POOL and its companions: queue-based fairshare.
    pub slot_pool: Option<SlotPoolConfig>,
    /// FAIRSHARE=USER_SHARES[...]: user-based fairshare in this queue.
    pub fairshare: Option<UserShares>,
    /// The queue's own dynamic-priority factors; unset ones come from the
    /// cluster's lsb.params.
    pub fairshare_factors: FairshareOverrides,
    /// SLOT_RESERVE=MAX_RESERVE_TIME\[n\]: a parallel job that cannot start
    /// holds the free slots of its hosts for up to `n` scheduling cycles.
    pub slot_reserve: Option<u32>,
    /// BACKFILL: the queue's jobs with a run limit may use slots reserved by
    /// other jobs when they finish before the reserving job could start.
    pub backfill: bool,
    /// TERMINATE_WHEN=PREEMPT: preempted jobs of this queue are terminated
    /// and requeued rather than suspended.
    pub terminate_when_preempt: bool,
    /// NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME for the queue's jobs
    /// (unset ones come from lsb.params).
    pub preempt_guards: PreemptGuards,
    /// RUNLIMIT: the run limit of the queue's jobs that give none (`bsub
    /// -W`); the committed run time of fairshare and backfill read it.
    pub run_limit: Option<Duration>,
    /// RUNTIME: the run-time estimate of the queue's jobs that give none
    /// (`bsub -We`); NO_PREEMPT_FINISH_TIME reads it before the run limit.
    pub run_estimate: Option<Duration>,
    /// RCVJOBS_FROM: makes the queue a receive queue.
    pub receive_from: Option<ReceiveFrom>,
    /// IMPT_JOBBKLG for a receive queue (`None` is `infinit`).
    pub impt_jobbklg: Option<u32>,
    /// SNDJOBS_TO: makes the queue a send queue, in the order written.
    pub send_to: Vec<QueueRef>,
    /// APS_PRIORITY: absolute priority scheduling orders the queue's
    /// pending jobs (and those of its QUEUE_GROUP) by their APS values.
    pub aps_priority: Option<ApsPriority>,
    /// QUEUE_GROUP (an APS queue only): the queues whose pending jobs are
    /// ordered together with this queue's, by this queue's APS_PRIORITY.
    pub queue_group: Vec<QueueName>,
    /// CHUNK_JOB_SIZE: up to this many one-slot jobs are dispatched
    /// together to one slot and run one after another (1 or unset: no
    /// chunks).
    pub chunk_job_size: Option<u32>,
    /// RERUNNABLE: a job whose host fails runs again from the start
    /// (otherwise it exits); `bmig` needs it.
    pub rerunnable: bool,
    /// DISPATCH_ORDER=QUEUE (cross-queue fairshare's switch; it cannot be
    /// used with APS).
    pub dispatch_order_queue: bool,
    /// FAIRSHARE_QUEUES: cross-queue fairshare, obsolete since LSF 7.0
    /// (QUEUE_GROUP replaces it) and not modelled: refused.
    pub fairshare_queues: Vec<QueueName>,
}

impl QueueConfig {
    /// A queue named `name` with LSF's defaults: priority 1, all hosts, no
    /// preemption, no limits, first come first served, neither sending nor
    /// receiving.
    pub fn new(name: QueueName) -> Self {
        QueueConfig {
            name,
            priority: DEFAULT_PRIORITY,
            hosts: HostSelection::All,
            preemption: Preemption::default(),
            job_limit: None,
            user_job_limit: None,
            host_job_limit: None,
            slot_pool: None,
            fairshare: None,
            fairshare_factors: FairshareOverrides::default(),
            slot_reserve: None,
            backfill: false,
            terminate_when_preempt: false,
            preempt_guards: PreemptGuards::default(),
            run_limit: None,
            run_estimate: None,
            receive_from: None,
            impt_jobbklg: Some(DEFAULT_IMPT_JOBBKLG),
            send_to: Vec::new(),
            aps_priority: None,
            queue_group: Vec::new(),
            chunk_job_size: None,
            rerunnable: false,
            dispatch_order_queue: false,
            fairshare_queues: Vec::new(),
        }
    }
}

/// Job slot limits of one user, one user group, or every user not named
/// (`default`): one line of lsb.users' User section.
#[derive(Clone, Debug, PartialEq)]
pub struct UserLimitConfig {
    /// A user name, a user group name, or `default`.
    pub name: String,
    /// MAX_JOBS: slots the user (or the group as a whole) may use in the
    /// cluster.
    pub max_jobs: Option<u32>,
    /// JL/P: slots the user (or group) may use per processor of a host,
    /// rounded up per host (0.5 on a 4-processor host allows 2).
    pub slots_per_processor: Option<f64>,
}

/// The name lsb.users uses for the limits of every user not named.
pub const DEFAULT_USER: &str = "default";

/// A user group (lsb.users' UserGroup section).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserGroupConfig {
    /// The group's name.
    pub name: String,
    /// GROUP_MEMBER: the users and user groups in it (`all`: every user).
    pub members: Vec<String>,
    /// USER_SHARES: the group's share tree (hierarchical fairshare: how a
    /// queue's shares for the group, collectively, divide among its
    /// members), if any.
    pub user_shares: Option<UserShares>,
}

/// The consumers of one kind a Limit section names (USERS, QUEUES, HOSTS
/// or their PER_ forms): `all`, names, and `~name` exclusions. User names
/// may be user groups (their members, through subgroups).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Consumers {
    /// `all`.
    pub all: bool,
    /// The names listed.
    pub names: Vec<String>,
    /// The names excluded (`~name`).
    pub excluded: Vec<String>,
}

impl Consumers {
    /// The consumers of a word list (`all ~alice`, `normal short`).
    pub fn from_words(words: &[String]) -> Consumers {
        let mut consumers = Consumers::default();
        for word in words {
            if word == "all" {
                consumers.all = true;
            } else if let Some(excluded) = word.strip_prefix('~') {
                consumers.excluded.push(excluded.to_owned());
            } else {
                consumers.names.push(word.clone());
            }
        }
        consumers
    }

    /// Whether `name` (or, through `is_member`, a group it is in) is
    /// among them.
    pub fn matches(&self, name: &str, is_member: impl Fn(&str) -> bool) -> bool {
        let listed = |list: &[String]| list.iter().any(|entry| entry == name || is_member(entry));
        (self.all || listed(&self.names)) && !listed(&self.excluded)
    }
}

/// One Limit section of lsb.resources: at most SLOTS slots and JOBS jobs
/// for the jobs its consumers name — together (USERS, QUEUES, HOSTS) or
/// each apart (PER_USER, PER_QUEUE, PER_HOST). A kind left out covers
/// every consumer of that kind, together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LimitConfig {
    /// NAME.
    pub name: String,
    /// USERS.
    pub users: Option<Consumers>,
    /// PER_USER.
    pub per_user: Option<Consumers>,
    /// QUEUES.
    pub queues: Option<Consumers>,
    /// PER_QUEUE.
    pub per_queue: Option<Consumers>,
    /// HOSTS.
    pub hosts: Option<Consumers>,
    /// PER_HOST.
    pub per_host: Option<Consumers>,
    /// SLOTS.
    pub slots: Option<u32>,
    /// JOBS.
    pub jobs: Option<u32>,
}

/// The cluster-wide scheduling parameters of lsb.params.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SchedulingParams {
    /// The dynamic-priority factors and HIST_HOURS; unset ones take the seed's
    /// defaults.
    pub fairshare_factors: FairshareOverrides,
    /// The fairshare adjustment plug-in (`libfairshareadjust`), if any.
    pub fairshare_adjustment: AdjustmentPlugin,
    /// PREEMPT_FOR.
    pub preempt_for: PreemptFor,
    /// PREEMPT_JOBTYPE=BACKFILL: jobs of backfill queues may be preempted.
    pub preempt_backfill: bool,
    /// NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME for every queue that
    /// sets none.
    pub preempt_guards: PreemptGuards,
    /// MBD_SLEEP_TIME (default [`DEFAULT_SLEEP_TIME`]).
    pub sleep_time: Option<Duration>,
    /// MAX_USER_PRIORITY: enables user-assigned job priorities (`bsub -sp`,
    /// 1 to this value; a job without one gets half of it). Pending jobs of
    /// a queue go in order of priority, then of arrival.
    pub max_user_priority: Option<u32>,
    /// CLEAN_PERIOD: how long finished jobs (DONE, EXIT) are kept for
    /// `bjobs -a`, `bhist` and `bacct` (default [`DEFAULT_CLEAN_PERIOD`]).
    /// The scheduler itself drops a job when it finishes; the federation
    /// member keeps its history.
    pub clean_period: Option<Duration>,
    /// JOB_PRIORITY_OVER_TIME: pending jobs' priorities (JPRIORITY) grow
    /// by an increment every interval (needs MAX_USER_PRIORITY).
    pub job_priority_over_time: Option<PriorityEscalation>,
    /// LSB_REQUEUE_TO_BOTTOM (lsf.conf): requeued and migrated jobs go to
    /// the bottom of their queue.
    pub requeue_to_bottom: bool,
    /// LSB_MIG2PEND (lsf.conf): migrated jobs pend again; with
    /// LSB_REQUEUE_TO_BOTTOM, they compete with pending jobs by APS value
    /// instead of going first.
    pub mig2pend: bool,
}

/// JOB_PRIORITY_OVER_TIME=increment/interval: every `interval` a job
/// pends, its priority grows by `increment`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PriorityEscalation {
    /// How much the priority grows each interval.
    pub increment: u32,
    /// The interval (LSF counts it in minutes).
    pub interval: Duration,
}

/// Why a JOB_PRIORITY_OVER_TIME value does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected increment/interval (two positive whole numbers, the interval in minutes), not `{0}`"
)]
pub struct PriorityEscalationParseError(pub String);

impl std::str::FromStr for PriorityEscalation {
    type Err = PriorityEscalationParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = || PriorityEscalationParseError(text.to_owned());
        let (increment, interval) = text.trim().split_once('/').ok_or_else(fail)?;
        let increment: u32 = increment.trim().parse().map_err(|_| fail())?;
        let minutes: u32 = interval.trim().parse().map_err(|_| fail())?;
        if increment == 0 || minutes == 0 {
            return Err(fail());
        }
        Ok(PriorityEscalation {
            increment,
            interval: Duration::from_secs(u64::from(minutes) * 60),
        })
    }
}

impl std::fmt::Display for PriorityEscalation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.increment, self.interval.as_secs() / 60)
    }
}

/// Default CLEAN_PERIOD: one hour.
pub const DEFAULT_CLEAN_PERIOD: Duration = Duration::from_secs(3600);

/// The largest MAX_USER_PRIORITY mcfed takes.
pub const MAX_MAX_USER_PRIORITY: u32 = u16::MAX as u32;

/// A whole cluster.
#[derive(Clone, Debug, PartialEq)]
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
    /// lsb.params.
    pub params: SchedulingParams,
    /// lsb.users' User section.
    pub users: Vec<UserLimitConfig>,
    /// lsb.users' UserGroup section.
    pub user_groups: Vec<UserGroupConfig>,
    /// lsb.resources' Limit sections.
    pub limits: Vec<LimitConfig>,
    /// Advance reservations (`brsvadd`).
    pub advance_reservations: Vec<crate::advance::AdvanceReservationConfig>,
    /// lsb.resources' ResourceReservation sections: who besides the
    /// administrator may make reservations (`brsvadd`), where and when.
    pub reservation_policies: Vec<crate::advance::policy::ReservationPolicyConfig>,
}

impl ClusterConfig {
    /// A cluster named `name` with no hosts, queues or users and default
    /// parameters.
    pub fn new(name: ClusterName) -> Self {
        ClusterConfig {
            name,
            hosts: Vec::new(),
            queues: Vec::new(),
            update_interval: None,
            params: SchedulingParams::default(),
            users: Vec::new(),
            user_groups: Vec::new(),
            limits: Vec::new(),
            advance_reservations: Vec::new(),
            reservation_policies: Vec::new(),
        }
    }
}

/// Where in a cluster's configuration a problem is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigLocation {
    /// A cluster-wide parameter (lsb.params).
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
    /// A parameter of the user entry at this index in
    /// [`ClusterConfig::users`].
    User {
        /// Index of the entry.
        index: usize,
        /// The parameter's name.
        field: &'static str,
    },
    /// A parameter of the group at this index in
    /// [`ClusterConfig::user_groups`].
    UserGroup {
        /// Index of the group.
        index: usize,
        /// The parameter's name.
        field: &'static str,
    },
    /// A parameter of the Limit section at this index in
    /// [`ClusterConfig::limits`].
    Limit {
        /// Index of the section.
        index: usize,
        /// The parameter's name.
        field: &'static str,
    },
    /// A parameter of the advance reservation at this index in
    /// [`ClusterConfig::advance_reservations`].
    Reservation {
        /// Index of the reservation.
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

/// A configuration the cluster accepts but LSF warns about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning {
    /// Where the setting is.
    pub location: ConfigLocation,
    /// What may go wrong, in an administrator's words.
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

    pub(crate) fn user(index: usize, field: &'static str, message: impl Into<String>) -> Self {
        ConfigError {
            location: ConfigLocation::User { index, field },
            message: message.into(),
        }
    }

    pub(crate) fn user_group(
        index: usize,
        field: &'static str,
        message: impl Into<String>,
    ) -> Self {
        ConfigError {
            location: ConfigLocation::UserGroup { index, field },
            message: message.into(),
        }
    }
}

impl ConfigError {
    pub(crate) fn limit(index: usize, field: &'static str, message: impl Into<String>) -> Self {
        ConfigError {
            location: ConfigLocation::Limit { index, field },
            message: message.into(),
        }
    }
}

impl ConfigWarning {
    pub(crate) fn queue(index: usize, field: &'static str, message: impl Into<String>) -> Self {
        ConfigWarning {
            location: ConfigLocation::Queue { index, field },
            message: message.into(),
        }
    }
}
